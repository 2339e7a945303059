//! Tests of the resume picker in the app state machine: saved sessions listed, chosen,
//! fitted to small terminals, and what goes straight to the agent.

use super::*;

fn saved(id: &str, minutes: u64, turns: u64, prompt: &str) -> SessionListing {
    SessionListing {
        id: id.into(),
        // 2026-11-23 17:35 UTC, plus some minutes.
        modified_ms: 1_795_455_301_000 + minutes * 60_000,
        turns,
        model: "gpt-4o".into(),
        first_prompt: Some(prompt.into()),
    }
}

fn two_sessions() -> Event {
    Event::SessionList {
        sessions: vec![
            saved("20261123-190000-0b1c2d", 90, 1, "explain the parser"),
            saved(
                "20261123-173501-a3f9c2",
                0,
                3,
                "fix the failing test in crate foo",
            ),
        ],
    }
}

fn resumed() -> Event {
    Event::SessionResumed(Box::new(ResumedSession {
        id: "20261123-173501-a3f9c2".into(),
        model: "gpt-4o".into(),
        turns: 3,
        loaded_skills: Vec::new(),
        history: vec![
            HistoryItem::User {
                text: "fix the failing test in crate foo".into(),
            },
            HistoryItem::ToolCall {
                name: "bash".into(),
                arguments: "{\"command\":\"cargo test\"}".into(),
            },
            HistoryItem::Assistant {
                text: "The test expected **3**; it is fixed.".into(),
            },
        ],
        notes: vec!["the system prompt was rebuilt and differs".into()],
    }))
}

#[test]
fn resume_picker_lists_sessions_and_resumes_the_chosen_one() {
    let mut h = Harness::new();
    h.submit("/resume");
    assert_eq!(h.ops(), vec![Op::ListSessions]);
    h.event(two_sessions());
    assert_snapshot!("picker", h.screen(70, 12));
    // Keys go to the picker, not the composer.
    h.typ("x");
    h.key(KeyCode::Down);
    assert_eq!(h.app.draft(), "");
    h.key(KeyCode::Enter);
    assert_eq!(
        h.ops(),
        vec![Op::Resume {
            id: "20261123-173501-a3f9c2".into()
        }]
    );
    h.event(Event::Usage {
        turn: Usage::default(),
        session: Usage::default(),
        context_tokens: Some(900),
    });
    h.event(resumed());
    assert_eq!(h.app.status().model, "gpt-4o");
    assert_eq!(h.app.status().context_tokens, 0, "a new context");
    let screen = h.screen(70, 20);
    assert_shows(
        &screen,
        &[
            "› fix the failing test in crate foo",
            "The test expected 3; it is fixed.",
        ],
    );
    assert_snapshot!("resumed", screen);
    // The composer is back.
    h.submit("go on");
    assert_eq!(h.ops(), sent("go on"));
}

#[test]
fn the_picker_fits_small_terminals_and_closes_without_resuming() {
    let mut h = Harness::new();
    h.app.start(StartView::ResumePicker);
    assert_eq!(h.ops(), vec![Op::ListSessions], "asked for at start");
    h.event(two_sessions());
    let small = h.screen(40, 6);
    assert!(small.contains("› 2026-11-23 19:05"), "{small}");
    assert!(small.contains("ready"), "the status line stays: {small}");
    assert_snapshot!("picker_small", small);
    // Resized to a very short terminal: the selection still shows.
    let tiny = h.screen(40, 3);
    assert!(tiny.contains("› 2026-11-23 19:05"), "{tiny}");
    h.key(KeyCode::Esc);
    assert!(h.ops().is_empty(), "Esc resumes nothing");
    assert!(!h.screen(40, 6).contains("2026-11-23"), "closed");
    // Ctrl+C closes it too, and the next Ctrl+C does not exit at once.
    h.event(two_sessions());
    h.ctrl('c');
    assert!(!h.screen(40, 6).contains("2026-11-23"), "closed");
    assert!(h.ops().is_empty());
}

#[test]
fn no_saved_sessions_is_a_notice_and_ids_and_exports_go_straight_to_the_agent() {
    let mut h = Harness::new();
    h.event(Event::SessionList {
        sessions: Vec::new(),
    });
    assert!(
        h.screen(70, 8)
            .contains("No other saved sessions for this project."),
    );
    h.submit("/resume 20261123-17");
    assert_eq!(
        h.ops(),
        vec![Op::Resume {
            id: "20261123-17".into()
        }]
    );
    h.submit("/export json out/session.json");
    assert_eq!(
        h.ops(),
        vec![Op::Export {
            format: ExportFormat::Json,
            path: Some(PathBuf::from("out/session.json")),
        }]
    );
    h.event(Event::Exported {
        path: PathBuf::from("/work/demo/out/session.json"),
    });
    h.submit("/export pdf");
    assert!(h.ops().is_empty());
    let screen = h.screen(70, 16);
    assert_shows(
        &screen,
        &[
            "Exported the session to /work/demo/out/session.json.",
            "unknown export format `pdf`",
        ],
    );
}
