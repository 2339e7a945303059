//! Reasoning effort end to end: the real binary against the scripted server, the effort
//! set in config.toml, by `--effort` and by `/effort` in the middle of a piped session,
//! each request's body read back; the `effort_changed` stream-json event; a resumed
//! session keeping the effort; and no effort key at all with the default config.

// Test helpers outside #[test] functions fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

use crate::support::{Dirs, MockServer, answer, json_lines, run_fed};

/// The keys any effort dialect may add to a request body.
const EFFORT_KEYS: [&str; 5] = [
    "reasoning_effort",
    "reasoning",
    "chat_template_kwargs",
    "think",
    "thinking",
];

/// Runs the binary in `dirs` against `server` with `args`, `stdin` piped in; asserts
/// exit 0 and returns stdout and stderr.
fn pipe(server: &MockServer, dirs: &Dirs, args: &[&str], stdin: &str) -> (String, String) {
    let mut cmd = server.binary(dirs);
    cmd.args(args);
    let out = run_fed(&mut cmd, stdin.as_bytes());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    (stdout, stderr)
}

fn effort_fields(body: &Value) -> Vec<(&'static str, Value)> {
    EFFORT_KEYS
        .iter()
        .filter_map(|k| body.get(*k).map(|v| (*k, v.clone())))
        .collect()
}

#[test]
fn effort_is_sent_from_config_switched_mid_session_and_kept_on_resume() {
    let server = MockServer::start(vec![
        answer("one"),
        answer("two"),
        answer("three"),
        answer("four"),
        answer("five"),
    ]);
    let dirs = Dirs::with_config("reasoning_effort = \"low\"\n");
    let (stdout, stderr) = pipe(
        &server,
        &dirs,
        &["--output-format", "stream-json"],
        "a\n/effort high\n/status\nb\n/effort off\nc\n",
    );
    let sent: Vec<_> = server
        .chat_requests()
        .iter()
        .map(|r| effort_fields(&r.body))
        .collect();
    assert_eq!(
        sent,
        vec![
            vec![("reasoning_effort", Value::from("low"))],
            vec![("reasoning_effort", Value::from("high"))],
            vec![("reasoning_effort", Value::from("none"))],
        ]
    );
    let events = json_lines(&stdout);
    let changes: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "effort_changed")
        .map(|e| &e["effort"])
        .collect();
    assert_eq!(
        changes,
        [&Value::from("high"), &Value::from("off")],
        "{stdout}"
    );
    let status_line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("effort "))
        .unwrap_or_default();
    assert_eq!(
        status_line.split_whitespace().collect::<Vec<_>>(),
        ["effort", "high"],
        "/status names the effort: {stderr}"
    );

    // The saved session keeps the last effort: `-c` sends "none" again …
    pipe(&server, &dirs, &["-c"], "d\n");
    assert_eq!(
        effort_fields(&server.chat_requests()[3].body),
        vec![("reasoning_effort", Value::from("none"))]
    );
    // … unless --effort says otherwise.
    pipe(&server, &dirs, &["-c", "--effort", "medium"], "e\n");
    assert_eq!(
        effort_fields(&server.chat_requests()[4].body),
        vec![("reasoning_effort", Value::from("medium"))]
    );
}

#[test]
fn the_dialect_follows_the_model_and_the_default_sends_no_effort_key() {
    let server = MockServer::start(vec![answer("one"), answer("two"), answer("three")]);
    let dirs = Dirs::new();
    // The default config: no key a strict server could refuse.
    pipe(&server, &dirs, &["-p", "hi"], "");
    let body = &server.chat_requests()[0].body;
    assert!(effort_fields(body).is_empty(), "{body}");
    // A Qwen3 model on a local server: its chat template's switch.
    pipe(
        &server,
        &dirs,
        &["-p", "hi", "--model", "Qwen/Qwen3-8B", "--effort", "off"],
        "",
    );
    assert_eq!(
        effort_fields(&server.chat_requests()[1].body),
        vec![(
            "chat_template_kwargs",
            serde_json::json!({"enable_thinking": false})
        )]
    );
    // A dialect set in config.toml wins over what the URL and model say.
    let dirs = Dirs::with_config("reasoning_effort = \"high\"\neffort_dialect = \"openrouter\"\n");
    pipe(&server, &dirs, &["-p", "hi"], "");
    assert_eq!(
        effort_fields(&server.chat_requests()[2].body),
        vec![("reasoning", serde_json::json!({"effort": "high"}))]
    );
}
