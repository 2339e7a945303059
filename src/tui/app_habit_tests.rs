//! Tests of the app state machine for the habits of issue 29: `!cmd` shell mode (the
//! `$` prompt, the op sent, Esc interrupting it), Esc Esc rewinding (the picker, the
//! question about files taking only y/n, the message back in the composer).

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, CellHistory};
use super::test_support::{catalog_with_skill, drawn, session_info};
use crate::protocol::{Event, Op, RewindPoint, TurnOutcome, UndoOutcome, Usage};

struct Harness {
    app: App,
    now: Instant,
    _dir: tempfile::TempDir,
}

impl Harness {
    fn new() -> Harness {
        let (dir, catalog) = catalog_with_skill();
        Harness {
            app: App::new(&session_info(catalog), CellHistory::Transcript),
            now: Instant::now(),
            _dir: dir,
        }
    }

    fn key(&mut self, code: KeyCode) {
        self.app.on_key(KeyEvent::from(code), self.now);
    }

    fn typ(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn event(&mut self, event: Event) {
        self.app.on_event(event, self.now);
    }

    fn ops(&mut self) -> Vec<Op> {
        self.app.take_ops()
    }

    fn screen(&mut self) -> String {
        let now = self.now;
        drawn(80, 24, |f| {
            let area = f.area();
            let _ = self.app.render(area, f.buffer_mut(), now);
        })
    }

    /// A turn for `text` that starts and completes.
    fn turn(&mut self, text: &str) {
        self.event(Event::TurnStarted { text: text.into() });
        self.event(Event::TurnComplete {
            outcome: TurnOutcome::Completed,
            final_text: String::new().into(),
            usage: Usage::default(),
            requests: 1,
        });
    }
}

#[test]
fn a_bang_draft_shows_the_dollar_prompt_and_is_sent_as_a_shell_op_that_esc_interrupts() {
    let mut h = Harness::new();
    h.typ("!ls -la");
    let screen = h.screen();
    assert!(screen.contains("$ !ls -la"), "{screen}");
    h.key(KeyCode::Enter);
    assert_eq!(
        h.ops(),
        [Op::Shell {
            command: "ls -la".into()
        }]
    );
    h.event(Event::TurnStarted {
        text: "!ls -la".into(),
    });
    h.key(KeyCode::Esc);
    assert_eq!(h.ops(), [Op::Interrupt]);
    // A bare `!` sends nothing.
    h.turn("!ls -la");
    h.typ("!");
    h.key(KeyCode::Enter);
    assert!(h.ops().is_empty());
    assert!(h.screen().contains("runs a shell command"));
}

fn points() -> Vec<RewindPoint> {
    vec![
        RewindPoint {
            turn: 1,
            text: "first message".into(),
            files: vec!["a.txt".into(), "b.txt".into()],
        },
        RewindPoint {
            turn: 2,
            text: "second message".into(),
            files: Vec::new(),
        },
    ]
}

#[test]
fn esc_twice_on_an_idle_empty_composer_lists_the_rewind_points() {
    let mut h = Harness::new();
    h.key(KeyCode::Esc);
    assert!(h.ops().is_empty());
    assert!(h.screen().contains("press Esc again to rewind"));
    h.key(KeyCode::Esc);
    assert_eq!(h.ops(), [Op::ListRewindPoints]);
    // Another key between two Escs starts over; a draft or a running turn never arms it.
    h.key(KeyCode::Esc);
    h.typ("x");
    h.key(KeyCode::Backspace);
    h.key(KeyCode::Esc);
    assert!(h.ops().is_empty());
    h.typ("draft");
    h.key(KeyCode::Esc);
    h.key(KeyCode::Esc);
    assert!(h.ops().is_empty());
}

#[test]
fn the_picker_asks_before_files_change_takes_only_y_or_n_and_refills_the_composer() {
    let mut h = Harness::new();
    h.turn("first message");
    h.turn("second message");
    h.event(Event::RewindPoints { points: points() });
    let screen = h.screen();
    assert!(screen.contains("Rewind to an earlier message"), "{screen}");
    assert!(screen.contains("› second message"), "{screen}");
    assert!(screen.contains("first message  · 2 files"), "{screen}");
    h.key(KeyCode::Down);
    h.key(KeyCode::Enter);
    let screen = h.screen();
    assert!(
        screen.contains("Rewinding puts back 2 file(s) changed since that message: a.txt, b.txt"),
        "{screen}"
    );
    // Typed-ahead text is no answer and reaches nothing.
    h.typ("/approvals bogus");
    h.key(KeyCode::Enter);
    assert!(h.ops().is_empty());
    h.key(KeyCode::Char('y'));
    assert_eq!(h.ops(), [Op::Rewind { turn: 1 }]);
    h.event(Event::Rewound {
        turn: 1,
        text: "first message".into(),
        files: vec![UndoOutcome::Restored {
            restored: vec!["a.txt".into()],
            removed: vec!["b.txt".into()],
            removed_folders: Vec::new(),
        }],
    });
    assert_eq!(h.app.draft(), "first message");
    let screen = h.screen();
    assert!(screen.contains("Rewound the conversation"), "{screen}");
    assert!(screen.contains("put back 1 file(s): a.txt"), "{screen}");
}

#[test]
fn no_earlier_message_says_so() {
    let mut h = Harness::new();
    h.event(Event::RewindPoints { points: Vec::new() });
    assert!(h.screen().contains("No earlier message to rewind to"));
}

#[test]
fn the_full_auto_question_takes_only_y_or_n_and_typed_ahead_text_goes_nowhere() {
    use crate::protocol::ApprovalMode;
    let mut h = Harness::new();
    h.typ("/approvals full-auto");
    h.key(KeyCode::Enter);
    assert!(h.ops().is_empty(), "full-auto waits for a yes");
    // Typed quickly after it: none of it answers, none of it becomes a draft or a prompt.
    h.typ("/approvals bogus");
    h.key(KeyCode::Enter);
    assert!(h.ops().is_empty());
    assert_eq!(h.app.draft(), "");
    assert!(h.screen().contains("Full-auto?"));
    h.key(KeyCode::Char('n'));
    assert!(h.ops().is_empty());
    assert!(h.screen().contains("Approval mode kept"));
    h.typ("/approvals full-auto");
    h.key(KeyCode::Enter);
    h.key(KeyCode::Char('y'));
    assert_eq!(
        h.ops(),
        [Op::SetApprovalMode {
            mode: ApprovalMode::FullAuto
        }]
    );
}

#[test]
fn an_always_answer_says_which_rule_was_added_and_where() {
    use crate::protocol::Source;
    let mut h = Harness::new();
    h.event(Event::RuleAdded {
        rule: "bash(cargo test:*)".into(),
        source: Source::Session,
    });
    h.event(Event::RuleAdded {
        rule: "bash(make:*)".into(),
        source: Source::Project {
            path: "/p/.harness9/permissions.toml".into(),
        },
    });
    let screen = h.screen();
    assert!(
        screen.contains("Added the rule `allow bash(cargo test:*)` for this session."),
        "{screen}"
    );
    assert!(
        screen.contains("Added the rule `allow bash(make:*)` to /p/.harness9/permissions.toml"),
        "{screen}"
    );
}

#[test]
fn the_failed_turn_note_follows_the_error_it_explains() {
    let mut h = Harness::new();
    h.event(Event::TurnStarted { text: "go".into() });
    // The agent sends the note first; it is shown after the error it explains.
    h.event(Event::TurnLeftOut {
        messages: 1,
        saved: true,
    });
    h.event(Event::TurnComplete {
        outcome: TurnOutcome::Failed {
            kind: crate::protocol::ErrorKind::BadRequest,
            message: "mock error 400".into(),
        },
        final_text: String::new().into(),
        usage: Usage::default(),
        requests: 1,
    });
    let screen = h.screen().replace('\n', " ");
    let error = screen.find("mock error 400").expect(&screen);
    let note = screen
        .find("this turn failed, so its 1 message")
        .expect(&screen);
    assert!(error < note, "{screen}");
}

/// Whether the `@` picker is drawn (any of its status lines).
fn picker_shown(screen: &str) -> bool {
    [
        "indexing the project",
        "searching…",
        "no file matches",
        "tab inserts",
    ]
    .iter()
    .any(|s| screen.contains(s))
}

#[test]
fn a_recalled_message_with_a_mention_opens_no_picker_but_typing_at_does() {
    let mut h = Harness::new();
    h.typ("look at @src/main.rs");
    assert!(picker_shown(&h.screen()), "typing @ opens it");
    h.key(KeyCode::Esc);
    h.key(KeyCode::Enter);
    h.ops();
    h.turn("look at @src/main.rs");
    h.key(KeyCode::Up);
    assert_eq!(h.app.draft(), "look at @src/main.rs");
    let screen = h.screen();
    assert!(!picker_shown(&screen), "{screen}");
    // Editing on in the recalled draft still opens nothing; a new `@` does.
    h.typ(" and @");
    assert!(picker_shown(&h.screen()));
}
