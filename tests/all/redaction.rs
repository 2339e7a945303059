//! Secret values never shown or saved through the paths a provider, the model or a
//! command can put them on: a provider's error body that echoes the key (in
//! `Authorization` or a custom `auth_header`) or a configured header value, in a
//! failed HTTP answer and in an error event inside a stream, is printed and saved with
//! the values replaced; the key, header values and the environment's secrets are
//! replaced in everything saved in session files — the model's text, a file it read, a
//! command's output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;

use crate::support::*;

const KEY: &str = "sk-test-REDACTkeyABCDEFGHIJKLMNOP";
const HEADER: &str = "org-header-SECRET-42";
const ENV_SECRET: &str = "tok-env-SECRET-0123456789";

/// Every session file's text under `home`.
fn saved_sessions(home: &Path) -> String {
    let mut text = String::new();
    let mut dirs = vec![home.join("sessions")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    text
}

fn assert_absent(what: &str, text: &str) {
    for secret in [KEY, HEADER, ENV_SECRET] {
        assert!(!text.contains(secret), "{secret} in {what}: {text}");
    }
}

fn configure(home: &Path, auth_header: Option<&str>) {
    let auth = auth_header
        .map(|h| format!("auth_header = \"{h}\"\n"))
        .unwrap_or_default();
    write(
        &home.join("config.toml"),
        &format!("{auth}[headers]\nX-Org = \"{HEADER}\"\n"),
    );
}

/// Runs `-p` (text, then json) against `reply` and returns stdout + stderr; the session
/// files are checked too.
fn run_failing(reply: Reply, auth_header: Option<&str>, format: &str) -> String {
    let dirs = Dirs::new();
    configure(dirs.home(), auth_header);
    let server = MockServer::start(vec![reply]);
    let out = server
        .binary(&dirs)
        .env("OPENAI_API_KEY", KEY)
        .args(["-p", "hi", "--output-format", format])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let requests = server.chat_requests();
    // The request really carried what the body echoes.
    let sent = match auth_header {
        Some(name) => requests[0].header(name).map(str::to_string),
        None => requests[0].header("authorization").map(str::to_string),
    };
    assert!(
        sent.is_some_and(|v| v.contains(KEY)),
        "the key was not sent"
    );
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_absent("the session file", &saved_sessions(dirs.home()));
    assert!(
        !saved_sessions(dirs.home()).is_empty(),
        "no session was saved"
    );
    shown
}

/// What a reflecting server answers: the headers it got, in its own words.
fn echo(auth: &str) -> String {
    format!("invalid request; you sent {auth} and x-org: {HEADER} (x-org={HEADER})")
}

#[test]
fn an_error_body_echoing_the_headers_is_shown_and_saved_without_them() {
    let cases = [
        (None, format!("authorization: Bearer {KEY}")),
        (Some("api-key"), format!("api-key: {KEY}")),
        (Some("X-Custom-Auth"), format!("x-custom-auth={KEY}")),
    ];
    let mut tried = 0;
    for (auth_header, auth) in &cases {
        for format in ["text", "json"] {
            let body = serde_json::json!({"error": {"message": echo(auth), "type": "invalid"}});
            let shown = run_failing(http_error(400).json_body(body), *auth_header, format);
            assert_absent(&format!("the output ({auth_header:?}, {format})"), &shown);
            assert!(shown.contains("[api key]"), "{shown}");
            assert!(shown.contains("[header value]"), "{shown}");
            tried += 1;
        }
    }
    // An error event inside a 200 stream, the same words.
    let shown = run_failing(
        sse(vec![stream_error(&echo(&format!("Bearer {KEY}")))]),
        None,
        "text",
    );
    assert_absent("a stream's error event", &shown);
    tried += 1;
    assert_eq!(tried, 7);
}

#[test]
fn what_the_model_and_commands_print_is_saved_without_secrets() {
    let dirs = Dirs::new();
    configure(dirs.home(), None);
    dirs.project_file(
        "found.txt",
        &format!("key={KEY}\nheader={HEADER}\ntoken={ENV_SECRET}\n"),
    );
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "c1", "read_file", r#"{"path":"found.txt"}"#),
            tool_call(1, "c2", "bash", r#"{"command":"cat found.txt; echo done"}"#),
            finish("tool_calls"),
        ]),
        sse(vec![
            text(&format!("The key is {KEY}, the header {HEADER}, ")),
            text(&format!("the token {ENV_SECRET}.")),
            finish("stop"),
        ]),
    ]);
    let out = server
        .binary(&dirs)
        .env("OPENAI_API_KEY", KEY)
        .env("MY_SERVICE_TOKEN", ENV_SECRET)
        .args(["-p", "find the key", "--approval-mode", "full-auto"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    // The model really got the file and the command's output.
    let results = server.chat_requests()[1].tool_results();
    assert!(results.iter().all(|r| r.contains(KEY)), "{results:?}");
    let saved = saved_sessions(dirs.home());
    assert_absent("the session file", &saved);
    assert!(saved.matches("[redacted]").count() >= 9, "{saved}");
    // Every line still parses, and a resumed session reads it.
    for line in saved.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    let id = saved
        .lines()
        .next()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|h| h["id"].as_str().map(str::to_string))
        .unwrap();
    let shown = server
        .binary(&dirs)
        .args(["sessions", "show", &id])
        .output()
        .unwrap();
    assert_exit(&shown, 0);
    assert_absent("sessions show", &String::from_utf8_lossy(&shown.stdout));
    assert!(String::from_utf8_lossy(&shown.stdout).contains("The key is [redacted]"));
}

/// A long answer (written to the session file in parts, not as one line in memory)
/// that holds the secrets, one of them cut between two streamed deltas, is saved
/// without them, and its line still parses.
#[test]
fn a_long_answer_is_saved_without_secrets() {
    let dirs = Dirs::new();
    configure(dirs.home(), None);
    let filler = "lorem ipsum dolor sit amet ".repeat(80);
    let mut events: Vec<Ev> = Vec::new();
    for i in 0..150 {
        let delta = match i {
            50 => format!("{filler}{}", &KEY[..10]),
            51 => format!("{}{filler}", &KEY[10..]),
            90 => format!("{filler} the header {HEADER} "),
            _ => filler.clone(),
        };
        events.push(text(&delta));
    }
    events.push(text(&format!(" and the token {ENV_SECRET}")));
    events.push(finish("stop"));
    let server = MockServer::start(vec![sse(events)]);
    let out = server
        .binary(&dirs)
        .env("OPENAI_API_KEY", KEY)
        .env("MY_SERVICE_TOKEN", ENV_SECRET)
        .args(["-p", "say it"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    // The answer really was long and really held the key.
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.len() > 250_000 && shown.contains(KEY),
        "{}",
        shown.len()
    );
    let saved = saved_sessions(dirs.home());
    assert_absent("the session file", &saved);
    let answer = saved
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find_map(|r| {
            (r["message"]["role"] == "assistant").then(|| r["message"]["content"].clone())
        })
        .unwrap();
    let answer = answer.as_str().unwrap();
    assert_eq!(
        answer.matches("[redacted]").count(),
        3,
        "key, header, token"
    );
    assert_eq!(
        answer.len(),
        shown.trim_end().len() - KEY.len() - HEADER.len() - ENV_SECRET.len()
            + 3 * "[redacted]".len()
    );
}
