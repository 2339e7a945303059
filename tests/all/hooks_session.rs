//! The session events' hooks through the real binary: SessionStart's output reaches the
//! model with the first message while the system prompt stays byte-identical;
//! SessionEnd runs when the session ends and a hook that hangs is stopped after the
//! bounded wait; `/compact` fires PreCompact, PostCompact and SessionStart `compact`
//! with Claude Code's fields; `/clear` fires SessionEnd `clear` and SessionStart
//! `clear`; an approval question fires Notification `permission_prompt`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// config.toml with one hook running `command` for each of `events` (`(event,
/// matcher)`).
fn config(events: &[(&str, Option<&str>)], command: &str) -> String {
    let mut toml = String::new();
    for (event, matcher) in events {
        toml.push_str(&format!("[[hooks.{event}]]\n"));
        if let Some(m) = matcher {
            toml.push_str(&format!("matcher = \"{m}\"\n"));
        }
        toml.push_str(&format!(
            "[[hooks.{event}.hooks]]\ntype = \"command\"\ncommand = '''{command}'''\n"
        ));
    }
    toml
}

/// Every hook's stdin appended to `events.jsonl` in the project, one line each.
const LOG: &str =
    r#"cat >> "$CLAUDE_PROJECT_DIR/events.jsonl"; echo >> "$CLAUDE_PROJECT_DIR/events.jsonl""#;

fn logged(dirs: &Dirs) -> Vec<Value> {
    let text = std::fs::read_to_string(dirs.project().join("events.jsonl")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn names_and(events: &[Value], field: &str) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["hook_event_name"].as_str().unwrap().to_string(),
                e[field].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

#[test]
fn session_start_context_reaches_the_first_message_and_not_the_system_prompt() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![answer("plain"), answer("hooked")]);
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_exit(&out, 0);
    dirs.home_file(
        "config.toml",
        &format!(
            "{}{}",
            config(
                &[("SessionStart", Some("startup"))],
                &format!("{LOG}; echo PROJECT-FACT-42"),
            ),
            config(
                &[("SessionStart", None)],
                r#"cat > /dev/null; echo '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "FROM-JSON-7"}}'"#,
            )
        ),
    );
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let (plain, hooked) = (&requests[0], &requests[1]);
    assert_eq!(
        plain.message_text(0),
        hooked.message_text(0),
        "the system prompt is byte-identical with SessionStart hooks"
    );
    assert!(!hooked.message_text(0).contains("PROJECT-FACT-42"));
    let first = hooked.message_text(1);
    assert_has(
        &first,
        &["PROJECT-FACT-42", "FROM-JSON-7", "SessionStart", "hi"],
    );
    assert!(!plain.message_text(1).contains("SessionStart"));
    let events = logged(&dirs);
    assert_eq!(
        names_and(&events, "source"),
        [("SessionStart".to_string(), "startup".to_string())]
    );
    assert!(
        events[0]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
}

#[test]
fn session_end_runs_at_the_end_and_a_hanging_one_is_stopped() {
    let dirs = Dirs::new();
    dirs.home_file("config.toml", &config(&[("SessionEnd", None)], LOG));
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_exit(&out, 0);
    assert_eq!(
        names_and(&logged(&dirs), "reason"),
        [("SessionEnd".to_string(), "other".to_string())]
    );

    dirs.home_file(
        "config.toml",
        &config(&[("SessionEnd", None)], "cat > /dev/null; sleep 600"),
    );
    let started = Instant::now();
    let child = spawn_fed(server.binary(&dirs).args(["-p", "hi"]), b"");
    let out = wait_with_deadline(child, Duration::from_secs(60));
    assert_exit(&out, 0);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_has(
        &stderr_text(&out),
        &["SessionEnd hooks still ran after 5 s", "stopped"],
    );
}

#[test]
fn compact_and_clear_fire_their_events_with_claude_codes_fields() {
    let dirs = Dirs::new();
    dirs.home_file(
        "config.toml",
        &config(
            &[
                ("PreCompact", Some("manual")),
                ("PostCompact", Some("manual")),
                ("SessionStart", None),
                ("SessionEnd", None),
                // Not fired: the compaction is manual.
                ("PreCompact", Some("auto")),
            ],
            LOG,
        ),
    );
    let long = "A long answer to summarize later. ".repeat(200);
    let server = MockServer::start(vec![answer(&long), answer("SHORT SUMMARY")]);
    let child = spawn_fed(
        &mut server.binary(&dirs),
        b"hello\n/compact keep the parser in view\n/clear\n",
    );
    let out = wait_with_deadline(child, Duration::from_secs(60));
    assert_exit(&out, 0);
    let events = logged(&dirs);
    let seen: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            let name = e["hook_event_name"].as_str().unwrap().to_string();
            let what = ["source", "trigger", "reason"]
                .iter()
                .find_map(|f| e[*f].as_str())
                .unwrap_or("-")
                .to_string();
            (name, what)
        })
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        seen,
        [
            pair("SessionStart", "startup"),
            pair("PreCompact", "manual"),
            pair("PostCompact", "manual"),
            pair("SessionStart", "compact"),
            pair("SessionEnd", "clear"),
            pair("SessionStart", "clear"),
            pair("SessionEnd", "other"),
        ],
        "{}",
        stderr_text(&out)
    );
    assert_eq!(events[1]["custom_instructions"], "keep the parser in view");
}

#[test]
fn an_approval_question_fires_notification_permission_prompt() {
    let dirs = Dirs::new();
    dirs.home_file(
        "config.toml",
        &config(&[("Notification", Some("permission_prompt"))], LOG),
    );
    let server = MockServer::start(vec![bash_reply("c1", "echo asked"), answer("done")]);
    let cmd = harness9_pty_command(&server.url(), dirs.home(), dirs.project(), &["--no-tui"]);
    let mut term = Terminal::spawn(cmd, (30, 100), 200, |_, _, _| {});
    term.wait_for_text("Ctrl-D to quit");
    term.send("run it\r");
    term.wait_for_text("allow?");
    let deadline = Instant::now() + Duration::from_secs(30);
    while logged(&dirs).is_empty() {
        assert!(Instant::now() < deadline, "no Notification hook ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    let events = logged(&dirs);
    assert_eq!(
        names_and(&events, "notification_type"),
        [("Notification".to_string(), "permission_prompt".to_string())]
    );
    assert_has(
        events[0]["message"].as_str().unwrap(),
        &["permission", "bash"],
    );
    term.send("n\r");
    term.wait_for_text("done");
    term.send("\x04");
    assert!(term.wait_exit().success());
}
