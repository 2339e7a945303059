//! The plan the user can see, through the real binary: `update_plan` sends a `plan`
//! event in stream-json, the REPL prints it, a resumed session shows it again, and it
//! is not offered when the context window is under 16k tokens.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::support::*;

fn update_plan_reply() -> Reply {
    tool_reply(
        "p1",
        "update_plan",
        &json!({"items": [
            {"step": "read the parser", "status": "done"},
            {"step": "add a cache", "status": "in_progress"},
            {"step": "test it", "status": "pending"}
        ], "explanation": "parser read"})
        .to_string(),
    )
}

#[test]
fn stream_json_sends_the_plan_and_a_resumed_session_shows_it_again() {
    let server = MockServer::start(vec![update_plan_reply(), answer("working")]);
    let dirs = Dirs::new();
    let out = server.run(&dirs, &["-p", "go", "--output-format", "stream-json"]);
    assert_exit(&out, 0);
    let events = json_lines(&out.stdout);
    let plan = events
        .iter()
        .find(|e| e["type"] == "plan")
        .expect("a plan event");
    assert_eq!(
        plan,
        &json!({"type": "plan", "items": [
            {"step": "read the parser", "status": "done"},
            {"step": "add a cache", "status": "in_progress"},
            {"step": "test it", "status": "pending"}
        ], "explanation": "parser read"})
    );
    server.push(answer("again"));
    let out = server.run(
        &dirs,
        &["-c", "-p", "more", "--output-format", "stream-json"],
    );
    assert_exit(&out, 0);
    let events = json_lines(&out.stdout);
    let types = event_types(&events);
    let resumed = types.iter().position(|t| *t == "session_resumed").unwrap();
    let shown = types
        .iter()
        .position(|t| *t == "plan")
        .expect("the saved plan is shown");
    assert!(shown > resumed && shown < types.iter().position(|t| *t == "turn_started").unwrap());
    assert_eq!(events[shown]["items"][1]["status"], "in_progress");
}

#[test]
fn the_repl_prints_the_plan() {
    let server = MockServer::start(vec![update_plan_reply(), answer("working")]);
    let dirs = Dirs::new();
    let out = run_fed(&mut server.binary(&dirs), b"go\n");
    assert_exit(&out, 0);
    assert_has(
        &stdout_text(&out),
        &[
            "Plan (1/3 done)",
            "  [x] read the parser",
            "  [>] add a cache",
            "  [ ] test it",
            "  (parser read)",
        ],
    );
}

#[test]
fn a_small_window_leaves_update_plan_out() {
    for (window, offered) in [(8_000, false), (16_000, true)] {
        let server = MockServer::start(vec![answer("hi")]);
        let dirs = Dirs::with_config(&format!("context_window = {window}\n"));
        let out = server.run(&dirs, &["-p", "hi"]);
        assert_exit(&out, 0);
        let names = server.chat_requests()[0].tool_names();
        assert_eq!(
            names.contains(&"update_plan".to_string()),
            offered,
            "{window}: {names:?}"
        );
        assert!(names.contains(&"bash".to_string()));
    }
}
