//! Tests of the app state machine with no terminal and no agent: events and keys in,
//! ops and screens (TestBackend snapshots) out.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;

use super::StartView;
use super::app::{Action, App, CellHistory, Lifecycle};
use super::test_support::{catalog_with_skill, complete, drawn, session_info, skill_list};
use crate::protocol::{
    ApprovalDecision, ApprovalRequestKind, ErrorKind, Event, ExportFormat, HistoryItem, Invocation,
    Op, ResumedSession, SessionListing, ToolStatus, TurnOutcome, Usage,
};
use crate::skills::Catalog;

#[path = "app_resume_tests.rs"]
mod resume;

#[path = "app_hooks_tests.rs"]
mod hooks;
#[path = "app_image_tests.rs"]
mod images;
#[path = "app_plan_tests.rs"]
mod plan;

struct Harness {
    app: App,
    now: Instant,
    _dir: Option<tempfile::TempDir>,
}

impl Harness {
    fn new() -> Harness {
        let (dir, catalog) = catalog_with_skill();
        Harness::with(session_info(catalog), Some(dir))
    }

    fn with(info: crate::agent::SessionInfo, dir: Option<tempfile::TempDir>) -> Harness {
        Harness {
            // Alternate-screen mode keeps the transcript, so a snapshot shows it all.
            app: App::new(&info, CellHistory::Transcript),
            now: Instant::now(),
            _dir: dir,
        }
    }

    fn key(&mut self, code: KeyCode) -> Action {
        self.app.on_key(KeyEvent::from(code), self.now)
    }

    fn ctrl(&mut self, c: char) -> Action {
        self.app.on_key(
            KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
            self.now,
        )
    }

    fn typ(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// Types `text` and presses Enter.
    fn submit(&mut self, text: &str) -> Action {
        self.typ(text);
        self.key(KeyCode::Enter)
    }

    fn event(&mut self, event: Event) {
        self.app.on_event(event, self.now);
    }

    fn ops(&mut self) -> Vec<Op> {
        self.app.take_ops()
    }

    fn screen(&mut self, width: u16, height: u16) -> String {
        let now = self.now;
        drawn(width, height, |f| {
            let area = f.area();
            if let Some(p) = self.app.render(area, f.buffer_mut(), now) {
                f.set_cursor_position(p);
            }
        })
    }
}

/// Checks that the screen shows each of `parts`.
fn assert_shows(screen: &str, parts: &[&str]) {
    for part in parts {
        assert!(screen.contains(part), "{part:?} in\n{screen}");
    }
}

/// The ops of a prompt sent as typed.
fn sent(text: &str) -> Vec<Op> {
    vec![Op::UserInput {
        images: Vec::new(),
        text: text.into(),
        origin: crate::protocol::InputOrigin::Typed,
        piped: None,
    }]
}

fn text(s: &str) -> Event {
    Event::TextDelta { text: s.into() }
}

#[test]
fn prompt_streams_and_commits_whole_lines() {
    let mut h = Harness::new();
    h.submit("explain main.go");
    assert_eq!(h.ops(), sent("explain main.go"));
    h.event(Event::TurnStarted {
        text: "explain main.go".into(),
    });
    h.event(Event::RequestStarted { request: 1 });
    h.event(text("It prints **hello**.\n\n```go\nfunc main() {\n"));
    h.event(text("\tfmt.Println(\"hello\")\n}\n``"));
    h.event(Event::Usage {
        turn: Usage::default(),
        session: Usage {
            input_tokens: 1200,
            output_tokens: 80,
            ..Usage::default()
        },
        context_tokens: Some(1200),
    });
    h.now += Duration::from_secs(3);
    assert_snapshot!("streaming", h.screen(70, 16));
    h.event(text("`\n\nDone."));
    h.event(complete());
    assert_snapshot!("streamed", h.screen(70, 16));
}

#[test]
fn skill_invocation_sends_the_skill_and_shows_what_was_typed() {
    let mut h = Harness::new();
    h.submit("/go-refactor clean main.go");
    let ops = h.ops();
    let [Op::Invoke(Invocation::Skill { name, args })] = ops.as_slice() else {
        panic!("{ops:?}")
    };
    assert_eq!(
        (name.as_str(), args.as_str()),
        ("go-refactor", "clean main.go")
    );
    // The agent expands the skill and reports the expanded text; the screen keeps
    // showing what the user typed.
    h.event(Event::TurnStarted {
        text: "Refactor: clean main.go".into(),
    });
    let screen = h.screen(60, 8);
    assert!(screen.contains("› /go-refactor clean main.go"), "{screen}");
    assert!(!screen.contains("Refactor:"), "{screen}");
}

#[test]
fn builtins_become_ops_or_local_views() {
    let mut h = Harness::new();
    h.submit("/clear");
    assert_eq!(h.ops(), vec![Op::NewConversation]);
    h.submit("/model gpt-x");
    assert_eq!(
        h.ops(),
        vec![Op::SetModel {
            model: "gpt-x".into()
        }]
    );
    h.event(Event::ModelChanged {
        model: "gpt-x".into(),
    });
    let (_dir, catalog) = catalog_with_skill();
    for cmd in ["/help", "/skills", "/usage", "/model"] {
        h.submit(cmd);
        if cmd == "/skills" {
            // The agent answers with the listing.
            assert_eq!(h.ops(), vec![Op::ListSkills]);
            h.event(skill_list(&catalog));
        } else if cmd == "/model" {
            // The agent asks every provider and answers with what each lists.
            assert_eq!(h.ops(), vec![Op::ListModels]);
            h.event(Event::ModelList(crate::protocol::ModelList {
                current: "gpt-x".into(),
                providers: vec![crate::protocol::ProviderModels {
                    name: "default".into(),
                    listing: crate::protocol::ModelListing::Listed {
                        models: vec!["gpt-x".into(), "gpt-y".into()],
                    },
                }],
            }));
        } else {
            assert!(h.ops().is_empty(), "{cmd} is local");
        }
    }
    // Tall enough for every view the loop above opened (one line per built-in).
    let screen = h.screen(100, 96);
    assert_shows(
        &screen,
        &[
            "Commands",
            "/go-refactor [goal] [file] ok (project)",
            "index:",
            "Usage this session",
            "model: gpt-x",
            "default (2 models):",
            "  gpt-y",
        ],
    );
    h.submit("/nosuch");
    let screen = h.screen(100, 60);
    assert!(screen.contains("unknown command `/nosuch`"), "{screen}");
}

#[test]
fn effort_is_shown_set_and_announced() {
    use crate::protocol::Effort;
    let mut h = Harness::new();
    h.submit("/effort");
    assert!(h.ops().is_empty(), "/effort alone is local");
    h.submit("/effort high");
    assert_eq!(
        h.ops(),
        vec![Op::SetEffort {
            effort: Effort::High
        }]
    );
    h.event(Event::EffortChanged {
        effort: Effort::High,
    });
    h.submit("/effort");
    h.submit("/effort max");
    assert!(h.ops().is_empty(), "an unknown level sends nothing");
    let screen = h.screen(100, 30);
    assert_shows(
        &screen,
        &[
            "Reasoning effort: not set (the server's default)",
            "Reasoning effort set to high.",
            "Reasoning effort: high. Set it with",
            "unknown effort `max`; usage: /effort low|medium|high|off",
        ],
    );
}

#[test]
fn exit_command_shuts_down_and_waits_for_the_agent() {
    let mut h = Harness::new();
    h.submit("/exit");
    assert_eq!(h.ops(), vec![Op::Shutdown]);
    assert_eq!(h.app.lifecycle(), Lifecycle::ShuttingDown);
    let usage = Usage {
        input_tokens: 5,
        ..Usage::default()
    };
    h.event(Event::ShutdownComplete { usage });
    assert_eq!(h.app.lifecycle(), Lifecycle::Finished(usage));
}

#[test]
fn slash_popup_filters_and_completes() {
    let mut h = Harness::new();
    h.typ("/go");
    assert_snapshot!("popup", h.screen(70, 8));
    h.key(KeyCode::Tab);
    assert_eq!(h.app.draft(), "/go-refactor ");
    h.typ("x");
    let screen = h.screen(70, 8);
    assert!(
        !screen.contains("Refactor Go code"),
        "popup closes on arguments"
    );
    h.ctrl('c');
    h.submit("/he");
    let screen = h.screen(70, 100);
    assert!(
        screen.contains("Commands"),
        "Enter completes and runs /help: {screen}"
    );
}

#[test]
fn approval_overlay_answers_and_denies_with_reason() {
    let mut h = Harness::new();
    h.submit("rename x");
    h.ops();
    h.event(Event::TurnStarted {
        text: "rename x".into(),
    });
    h.event(Event::ApprovalRequest(crate::protocol::ApprovalAsk {
        call_id: "call_1".into(),
        name: "edit_file".into(),
        request: ApprovalRequestKind::Edit {
            path: PathBuf::from("main.go"),
            via: None,
            diff: Some(
                "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-var x = 1\n+var count = 1\n".into(),
            ),
            location: crate::protocol::Location::Inside,
        },
        because: None,
        offer: crate::protocol::Offer::Rules {
            rules: vec!["edit(**)".into()],
        },
    }));
    assert_snapshot!("approval", h.screen(70, 16));
    h.typ("a");
    assert_eq!(
        h.ops(),
        vec![Op::Approval {
            call_id: "call_1".into(),
            decision: ApprovalDecision::ApproveForSession
        }]
    );
    h.event(Event::ApprovalRequest(crate::protocol::ApprovalAsk {
        call_id: "call_2".into(),
        name: "bash".into(),
        request: ApprovalRequestKind::Command {
            command: "rm -rf build".into(),
            cwd: PathBuf::from("/work/demo"),
        },
        because: Some(crate::protocol::AskBecause::Destructive {
            what: "`rm -r build` deletes a directory tree for good".into(),
            exact_rule: "bash(rm -rf build)".into(),
        }),
        offer: crate::protocol::Offer::Rules {
            rules: vec!["bash(rm -rf build)".into()],
        },
    }));
    h.submit("nkeep it");
    assert_eq!(
        h.ops(),
        vec![Op::Approval {
            call_id: "call_2".into(),
            decision: ApprovalDecision::Deny {
                reason: Some("keep it".into())
            }
        }]
    );
}

#[test]
fn shift_tab_cycles_the_approval_mode_and_asks_before_full_auto() {
    // suggest → auto-edit → full-auto (asked) → plan → suggest.
    use crate::protocol::ApprovalMode;
    let set = |mode| vec![Op::SetApprovalMode { mode }];
    let asks = |h: &mut Harness| {
        h.screen(120, 8)
            .contains("Full-auto? Edits and commands run unasked")
    };
    let mut h = Harness::new();
    h.key(KeyCode::BackTab);
    assert_eq!(h.ops(), set(ApprovalMode::AutoEdit));
    h.event(Event::ApprovalModeChanged {
        mode: ApprovalMode::AutoEdit,
    });
    assert!(
        h.screen(100, 8).contains("auto-edit ·"),
        "the status line names the mode"
    );
    h.key(KeyCode::BackTab);
    assert!(h.ops().is_empty(), "full-auto waits for a yes");
    assert!(asks(&mut h));
    h.key(KeyCode::Char('n'));
    assert!(h.ops().is_empty());
    assert!(!asks(&mut h));
    h.key(KeyCode::BackTab);
    h.key(KeyCode::Char('y'));
    assert_eq!(h.ops(), set(ApprovalMode::FullAuto));
    h.event(Event::ApprovalModeChanged {
        mode: ApprovalMode::FullAuto,
    });
    h.key(KeyCode::BackTab);
    assert_eq!(h.ops(), set(ApprovalMode::Plan));
    h.event(Event::ApprovalModeChanged {
        mode: ApprovalMode::Plan,
    });
    assert!(
        h.screen(100, 8).contains("plan ·"),
        "the status line names plan mode"
    );
    h.key(KeyCode::BackTab);
    assert_eq!(h.ops(), set(ApprovalMode::Suggest));
}

#[test]
fn esc_at_an_approval_interrupts_before_it_denies() {
    let mut h = Harness::new();
    h.event(Event::TurnStarted { text: "go".into() });
    h.event(Event::ApprovalRequest(crate::protocol::ApprovalAsk {
        call_id: "call_1".into(),
        name: "bash".into(),
        request: ApprovalRequestKind::Command {
            command: "make".into(),
            cwd: PathBuf::from("/work/demo"),
        },
        because: None,
        offer: crate::protocol::Offer::Rules {
            rules: vec!["bash(make:*)".into()],
        },
    }));
    h.key(KeyCode::Esc);
    let ops = h.ops();
    assert_eq!(ops.first(), Some(&Op::Interrupt), "{ops:?}");
    assert!(matches!(
        ops.get(1),
        Some(Op::Approval {
            decision: ApprovalDecision::Deny { .. },
            ..
        })
    ));
}

#[test]
fn tool_calls_run_live_then_commit_with_diff() {
    let mut h = Harness::new();
    h.event(Event::TurnStarted { text: "go".into() });
    h.event(Event::ToolCallBegin {
        call_id: "c1".into(),
        name: "bash".into(),
        summary: "go test ./...".into(),
        locations: Vec::new(),
    });
    h.event(Event::ToolOutputDelta {
        call_id: "c1".into(),
        text: "=== RUN TestMain\n".into(),
    });
    assert_snapshot!("tool_running_screen", h.screen(60, 10));
    h.event(Event::ToolCallEnd {
        call_id: "c1".into(),
        name: "bash".into(),
        status: ToolStatus::Error,
        summary: "exit status 1\nFAIL main_test.go:12".into(),
        diff: None,
        change: None,
    });
    h.event(Event::ToolCallBegin {
        call_id: "c2".into(),
        name: "edit_file".into(),
        summary: "main.go".into(),
        locations: Vec::new(),
    });
    h.event(Event::ToolCallEnd {
        call_id: "c2".into(),
        name: "edit_file".into(),
        status: ToolStatus::Ok,
        summary: "edited main.go".into(),
        diff: Some("@@ -1 +1 @@\n-a\n+b\n".into()),
        change: None,
    });
    h.event(Event::TurnComplete {
        outcome: TurnOutcome::Failed {
            kind: ErrorKind::RateLimit,
            message: "rate limited by the provider; wait and retry".into(),
        },
        final_text: Default::default(),
        usage: Usage::default(),
        requests: 2,
    });
    assert_snapshot!("tools_done_screen", h.screen(60, 16));
}

#[test]
fn clearing_a_draft_then_interrupting_the_turn_never_quits() {
    let mut h = Harness::new();
    h.typ("half a thought");
    h.ctrl('c');
    assert_eq!(h.app.draft(), "");
    h.submit("run it");
    h.ops();
    h.event(Event::TurnStarted {
        text: "run it".into(),
    });
    h.now += Duration::from_millis(900);
    h.ctrl('c');
    assert_eq!(
        h.ops(),
        vec![Op::Interrupt],
        "the second press stops the stream"
    );
    // A press within the window after a key in between is a first press too.
    h.event(Event::TurnComplete {
        outcome: TurnOutcome::Interrupted,
        final_text: Default::default(),
        usage: Usage::default(),
        requests: 1,
    });
    h.ctrl('c');
    h.typ("x");
    h.key(KeyCode::Backspace);
    h.ctrl('c');
    assert!(
        h.ops().is_empty(),
        "no exit: a key came between the presses"
    );
}

#[test]
fn esc_interrupts_and_ctrl_c_twice_exits() {
    let mut h = Harness::new();
    h.key(KeyCode::Esc);
    assert!(h.ops().is_empty(), "nothing to interrupt");
    h.submit("work");
    h.ops();
    h.event(Event::TurnStarted {
        text: "work".into(),
    });
    h.key(KeyCode::Esc);
    assert_eq!(h.ops(), vec![Op::Interrupt]);
    h.event(Event::TurnComplete {
        outcome: TurnOutcome::Interrupted,
        final_text: Default::default(),
        usage: Usage::default(),
        requests: 1,
    });
    h.typ("draft");
    h.ctrl('c');
    assert_eq!(h.app.draft(), "", "first Ctrl+C clears the draft");
    assert!(
        !h.screen(60, 6).contains("press Ctrl+C again to exit"),
        "clearing a draft does not arm the exit"
    );
    h.ctrl('c');
    assert!(h.screen(60, 6).contains("press Ctrl+C again to exit"));
    h.now += Duration::from_secs(5);
    h.app.tick(h.now);
    h.ctrl('c');
    assert!(h.ops().is_empty(), "too slow: not a double press");
    h.now += Duration::from_millis(300);
    h.ctrl('c');
    assert_eq!(h.ops(), vec![Op::Shutdown]);
}

#[test]
fn ctrl_d_on_empty_composer_exits_and_ctrl_g_asks_for_the_editor() {
    let mut h = Harness::new();
    assert_eq!(h.ctrl('g'), Action::OpenEditor);
    h.typ("ab");
    h.key(KeyCode::Left);
    h.ctrl('d');
    assert_eq!(h.app.draft(), "a", "Ctrl+D deletes when there is text");
    h.ctrl('u');
    h.ctrl('d');
    assert_eq!(h.ops(), vec![Op::Shutdown]);
}

#[test]
fn paste_is_one_input_and_queued_inputs_show() {
    let mut h = Harness::new();
    h.event(Event::TurnStarted {
        text: "first".into(),
    });
    h.app.on_paste("line one\nline two\nline three");
    assert!(h.ops().is_empty(), "a paste never sends");
    h.key(KeyCode::Enter);
    assert_eq!(h.ops(), sent("line one\nline two\nline three"));
    let screen = h.screen(60, 8);
    assert!(screen.contains("↳ queued: line one"), "{screen}");
}

#[test]
fn startup_warnings_and_retries_are_shown() {
    let mut info = session_info(Catalog::empty());
    info.startup_warnings = vec!["skills/bad/SKILL.md: missing `description`".into()];
    let mut h = Harness::with(info, None);
    h.event(Event::TurnStarted { text: "x".into() });
    h.event(text("partial"));
    h.event(Event::Retrying {
        attempt: 2,
        delay_ms: 1500,
        reason: "server error 502".into(),
    });
    let screen = h.screen(70, 10);
    assert_shows(
        &screen,
        &[
            "⚠ skills/bad/SKILL.md: missing `description`",
            "server error 502; retrying (attempt 2) in 1.5s",
        ],
    );
    assert!(!screen.contains("partial"), "{screen}");
}

#[test]
fn frame_cost_does_not_depend_on_session_length() {
    // A long session has as much on screen as a short one: the live area is the same
    // size, and in inline mode nothing else is drawn.
    let info = session_info(Catalog::empty());
    let mut short = App::new(&info, CellHistory::Scrollback);
    let mut long = App::new(&info, CellHistory::Scrollback);
    let now = Instant::now();
    for i in 0..2000 {
        long.on_event(
            Event::TurnStarted {
                text: format!("q{i}"),
            },
            now,
        );
        long.on_event(text("an answer line\nanother\n"), now);
        long.on_event(complete(), now);
    }
    let _ = long.take_lines();
    let _ = short.take_lines();
    assert_eq!(
        short.desired_height(80, 40, now),
        long.desired_height(80, 40, now)
    );
}

#[test]
fn a_forked_skills_usage_keeps_the_context_meter() {
    let mut h = Harness::new();
    let usage = |input_tokens| Usage {
        input_tokens,
        ..Usage::default()
    };
    h.event(Event::Usage {
        turn: usage(1200),
        session: usage(1200),
        context_tokens: Some(1200),
    });
    // A sub-agent's usage counts towards the session but says nothing about how full
    // the main conversation's context is.
    h.event(Event::Usage {
        turn: usage(5000),
        session: usage(6200),
        context_tokens: None,
    });
    assert_eq!(h.app.status().context_tokens, 1200);
    assert_eq!(h.app.status().usage.input_tokens, 6200);
}

/// Draws until `want` shows (the file index works on its own threads), with a deadline.
fn screen_showing(h: &mut Harness, want: &str, width: u16, height: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        h.app.on_wake();
        let screen = h.screen(width, height);
        if screen.contains(want) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "never showed {want:?}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn at_opens_the_file_picker_and_tab_inserts_the_path() {
    let project = tempfile::tempdir().unwrap();
    for f in [
        "src/tui/composer.rs",
        "src/main.rs",
        "my notes/plan.md",
        "ignored/x.rs",
    ] {
        let p = project.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }
    std::fs::write(project.path().join(".gitignore"), "ignored/\n").unwrap();
    let mut info = session_info(Catalog::empty());
    info.workdir = project.path().to_path_buf();
    let mut h = Harness::with(info, None);
    h.typ("look at @comp");
    let screen = screen_showing(&mut h, "1 of ", 60, 5);
    assert_snapshot!("mention_picker", screen);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.draft(), "look at @src/tui/composer.rs ");
    assert!(
        !h.screen(60, 10).contains("tab inserts"),
        "the picker closed"
    );
    // A folder keeps the picker open on its contents; a path with a space is quoted.
    h.typ("and @my");
    // The matcher answers each keystroke in turn: wait until the list for "my" (not an
    // earlier one for "m" that also shows the folder) leads with it.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        h.app.on_wake();
        let screen = h.screen(60, 10);
        let first_row = screen
            .lines()
            .skip_while(|l| !l.contains("› "))
            .nth(1)
            .unwrap_or_default()
            .to_string();
        if first_row
            .trim_start_matches('"')
            .trim_start()
            .starts_with("my notes/")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never led with my notes/:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    h.key(KeyCode::Tab);
    assert_eq!(
        h.app.draft(),
        "look at @src/tui/composer.rs and @\"my notes/\" "
    );
    // Esc closes the picker for that word only; typing on does not reopen it.
    h.typ("@main");
    screen_showing(&mut h, "src/main.rs", 60, 10);
    h.key(KeyCode::Esc);
    h.typ(".rs");
    assert!(!h.screen(60, 10).contains("tab inserts"));
    assert!(h.ops().is_empty(), "Esc on the picker does not interrupt");
    // Enter sends the draft as typed (the agent attaches the files).
    h.key(KeyCode::Enter);
    assert_eq!(
        h.ops(),
        sent("look at @src/tui/composer.rs and @\"my notes/\" @main.rs")
    );
}

#[test]
fn at_inside_a_word_or_escaped_opens_no_picker() {
    let mut h = Harness::new();
    h.typ("mail me@example.com or \\@x");
    let screen = h.screen(60, 8);
    assert!(!screen.contains("indexing"), "{screen}");
}

#[test]
fn a_large_paste_collapses_in_the_draft_and_is_sent_in_full() {
    let mut h = Harness::new();
    let body: String = (1..=300).map(|i| format!("log line {i}\n")).collect();
    h.typ("why does this fail? ");
    h.app.on_paste(&body);
    h.typ(" thanks");
    assert_snapshot!("collapsed_paste", h.screen(60, 4));
    h.key(KeyCode::Enter);
    assert_eq!(h.ops(), sent(&format!("why does this fail? {body} thanks")));
    // The conversation shows the placeholder, not 300 lines.
    h.event(Event::TurnStarted {
        text: format!("why does this fail? {body} thanks"),
    });
    let screen = h.screen(60, 12);
    assert!(
        screen.contains("why does this fail? [pasted 300 lines] thanks"),
        "{screen}"
    );
    assert!(!screen.contains("log line 7"), "{screen}");
}

#[test]
fn ctrl_r_searches_the_history_and_takes_the_match_into_the_draft() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("history"),
        "#V2\nrun the tests\nfix the flaky test in ci\nexplain main.rs\n",
    )
    .unwrap();
    let mut info = session_info(Catalog::empty());
    info.home = home.path().to_path_buf();
    let mut h = Harness::with(info, None);
    h.typ("draft");
    h.ctrl('r');
    h.typ("test");
    assert_snapshot!("history_search", h.screen(60, 4));
    h.ctrl('r');
    assert!(h.screen(60, 4).contains("run the tests"));
    // Esc leaves the draft as it was; Ctrl+C closes the search without exiting.
    h.key(KeyCode::Esc);
    assert_eq!(h.app.draft(), "draft");
    h.ctrl('r');
    h.ctrl('c');
    assert_eq!(h.app.draft(), "draft");
    assert!(!h.screen(60, 4).contains("press Ctrl+C again"));
    // Enter takes the match into the draft (not sent yet).
    h.ctrl('r');
    h.typ("main");
    h.key(KeyCode::Enter);
    assert_eq!(h.app.draft(), "explain main.rs");
    assert!(h.ops().is_empty());
    h.key(KeyCode::Enter);
    assert_eq!(h.ops(), sent("explain main.rs"));
}

#[test]
fn reloaded_skills_are_announced_and_counted() {
    let mut h = Harness::new();
    h.event(Event::SkillsReloaded {
        changes: crate::protocol::SkillChanges {
            added: vec![("gamma".into(), "Brand new".into())],
            changed: vec![],
            removed: vec!["beta".into()],
        },
        skills: 7,
        warnings: vec!["/s/bad/SKILL.md: no frontmatter".into()],
        trigger: crate::protocol::ReloadTrigger::BeforeTurn,
    });
    // Nothing changed before a turn: nothing said; asked: the count.
    h.event(Event::SkillsReloaded {
        changes: Default::default(),
        skills: 7,
        warnings: vec![],
        trigger: crate::protocol::ReloadTrigger::BeforeTurn,
    });
    h.submit("/skills reload");
    assert_eq!(h.ops(), vec![Op::ReloadSkills]);
    h.event(Event::SkillsReloaded {
        changes: Default::default(),
        skills: 7,
        warnings: vec![],
        trigger: crate::protocol::ReloadTrigger::Asked,
    });
    assert_eq!(h.app.status().skills, 7);
    let screen = h.screen(100, 14);
    assert_shows(
        &screen,
        &[
            "/s/bad/SKILL.md: no frontmatter",
            "Skills changed: + gamma, − beta (now 7 skills)",
            "Skills are up to date (7 skills).",
        ],
    );
}

#[test]
fn mcp_listing_and_new_slash_commands_come_from_the_agent() {
    use crate::protocol::{
        McpHealth, McpPromptCommand, McpServerEntry, McpServerName, McpUse, SlashCommands,
    };
    let mut h = Harness::new();
    h.submit("/mcp");
    assert_eq!(h.ops(), vec![Op::ListMcpServers], "/mcp asks the agent");
    h.event(Event::McpServerList {
        servers: vec![McpServerEntry {
            name: "mcp:fx".into(),
            state: "failed: it stopped".into(),
            health: McpHealth::Failed,
            detail: "fx-server (user config)".into(),
            prompts: vec!["/fx:greet <name>".into()],
        }],
    });
    let screen = h.screen(80, 20);
    assert_shows(
        &screen,
        &[
            "MCP servers (1)",
            "mcp:fx  failed: it stopped",
            "prompts: /fx:greet <name>",
        ],
    );
    // A prompt the server's start taught the agent is offered once the agent says so.
    h.typ("/fx:");
    assert!(!h.screen(80, 20).contains("MCP Say hello"));
    h.ctrl('c');
    let (_dir, catalog) = catalog_with_skill();
    h.event(Event::SlashCommands(SlashCommands {
        mcp_servers: vec![McpServerName {
            name: "fx".into(),
            usable: McpUse::Usable,
        }],
        mcp_prompts: vec![McpPromptCommand {
            server: "fx".into(),
            name: "greet".into(),
            description: "Say hello".into(),
            arguments: Vec::new(),
        }],
        ..super::test_support::commands(&catalog)
    }));
    h.typ("/fx:");
    assert_shows(&h.screen(80, 20), &["/fx:greet", "MCP Say hello"]);
}

#[test]
fn plugins_listing_comes_from_the_agent_with_each_plugins_standing() {
    use crate::protocol::{PluginContributions, PluginEntry, PluginListing, PluginStanding};
    let mut h = Harness::new();
    h.submit("/plugins");
    assert_eq!(h.ops(), vec![Op::ListPlugins], "/plugins asks the agent");
    h.event(Event::PluginList(PluginListing {
        plugins: vec![
            PluginEntry {
                name: "commit-commands".into(),
                version: Some("1.0.0".into()),
                standing: PluginStanding::Trusted,
                contributes: PluginContributions {
                    commands: 3,
                    ..Default::default()
                },
            },
            PluginEntry {
                name: "guard".into(),
                version: None,
                standing: PluginStanding::ChangedSinceTrust,
                contributes: PluginContributions {
                    hooks: 1,
                    ..Default::default()
                },
            },
        ],
    }));
    let screen = h.screen(100, 20);
    assert_shows(
        &screen,
        &[
            "Plugins",
            "commit-commands 1.0.0 — trusted, loaded: 3 commands",
            "guard — changed since trusted, nothing loaded",
        ],
    );
}

#[test]
fn agents_side_by_side_show_their_steps_in_their_own_cells() {
    let mut h = Harness::new();
    for (id, task) in [("c1", "one"), ("c2", "two")] {
        h.event(Event::ToolCallBegin {
            call_id: id.into(),
            name: "agent".into(),
            summary: format!("explore: {task}"),
            locations: Vec::new(),
        });
    }
    let step = |id: &str, pattern: &str| Event::SubAgent {
        parent_call_id: Some(id.into()),
        skill: "explore".into(),
        event: crate::protocol::SubAgentEvent::new(Event::ToolCallBegin {
            call_id: "s".into(),
            name: "grep".into(),
            summary: pattern.into(),
            locations: Vec::new(),
        })
        .unwrap(),
    };
    h.event(step("c2", "pattern-two"));
    h.event(step("c1", "pattern-one"));
    let screen = h.screen(80, 24);
    let lines: Vec<&str> = screen.lines().collect();
    let at = |s: &str| {
        lines
            .iter()
            .position(|l| l.contains(s))
            .unwrap_or_else(|| panic!("{s} not shown:\n{screen}"))
    };
    assert!(at("explore: one") < at("pattern-one"), "{screen}");
    assert!(at("pattern-one") < at("explore: two"), "{screen}");
    assert!(at("explore: two") < at("pattern-two"), "{screen}");
    assert!(!screen.contains("is working"), "{screen}");
}
