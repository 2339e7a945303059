//! Prompt caching end to end: the real binary against the scripted server. Breakpoints
//! with `prompt_cache = "explicit"` on every request of a session, the system prompt's
//! bytes the same in each; a recorded usage body with cache reads and writes shown as a
//! hit with the right cost (`/usage`, the `result` event); and, with the default config,
//! a strict server sees no key it does not know.

// Test helpers outside #[test] functions fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::support::{
    Dirs, MockServer, answer, chunk, finish, json_lines, run_fed, sse, text, tool_reply,
};

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

/// The first message of a request body exactly as its bytes were sent.
fn system_bytes(raw_body: &str) -> &str {
    let messages = raw_body.split_once(r#""messages":["#).unwrap().1;
    let end = messages.find(r#"},{"role":"#).unwrap();
    &messages[..=end]
}

/// The indices of the messages that carry a `cache_control` breakpoint.
fn breakpoints(body: &Value) -> Vec<usize> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m["content"].as_array().is_some_and(|parts| {
                parts
                    .iter()
                    .any(|p| p["cache_control"]["type"] == "ephemeral")
            })
        })
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn every_request_carries_breakpoints_and_the_same_system_prompt_bytes() {
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#),
        answer("read it"),
        answer("second"),
    ]);
    let dirs = Dirs::with_config("prompt_cache = \"explicit\"\n");
    dirs.project_file("notes.txt", "some notes\n");
    pipe(&server, &dirs, &[], "read notes.txt\nand now?\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    let first = system_bytes(&requests[0].raw_body);
    assert!(
        first.contains(r#""cache_control":{"type":"ephemeral"}"#),
        "{first}"
    );
    for r in &requests {
        // The system prompt's bytes never change within the session.
        assert_eq!(system_bytes(&r.raw_body), first);
        let marks = breakpoints(&r.body);
        assert!(marks.len() <= 4, "{marks:?}");
        assert_eq!(marks[0], 0, "the system prompt carries one");
        // The newest message always carries one.
        assert_eq!(*marks.last().unwrap(), r.messages().len() - 1, "{marks:?}");
    }
    // The second request: system, the user's message, the tool result (the assistant
    // message had only tool calls, and no text to carry a marker).
    assert_eq!(breakpoints(&requests[1].body), vec![0, 1, 3]);
    let second = &requests[1].messages();
    assert_eq!(second[2]["content"], "");
    let result = second[3]["content"][0]["text"].as_str().unwrap();
    assert!(result.contains("some notes"), "{result}");
    // The third: at most four, the newest ones.
    assert_eq!(breakpoints(&requests[2].body), vec![0, 3, 4, 5]);
}

#[test]
fn a_recorded_usage_with_cache_reads_and_writes_is_a_hit_at_the_cached_prices() {
    // OpenRouter's usage for an Anthropic route: 10000 prompt tokens, 8000 of them read
    // from the cache and 1000 written to it.
    let usage = chunk(json!({
        "id": "gen-1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 10000, "completion_tokens": 100, "total_tokens": 10100,
                  "cost": 0.0107, "cache_discount": 0.0216,
                  "prompt_tokens_details": {"cached_tokens": 8000, "cache_write_tokens": 1000}},
    }));
    let server = MockServer::start(vec![
        sse(vec![text("hello"), finish("stop"), usage.clone()]),
        sse(vec![text("again"), finish("stop"), usage]),
    ]);
    let dirs = Dirs::with_config(
        "[prices.\"m\"]\ninput = 3.0\noutput = 15.0\ncached_input = 0.3\ncache_write = 3.75\n",
    );
    let (stdout, _) = pipe(
        &server,
        &dirs,
        &["-p", "hi", "--output-format", "stream-json"],
        "",
    );
    let events = json_lines(&stdout);
    let result = events.iter().find(|e| e["type"] == "result").unwrap();
    // 1000 fresh at $3, 8000 read at $0.30, 1000 written at $3.75, 100 out at $15 per
    // million: 3000 + 2400 + 3750 + 1500 micro-dollars.
    assert_eq!(result["usage"]["cost_usd"], json!(0.01065), "{result}");
    assert_eq!(result["usage"]["cached_input_tokens"], 8000);
    assert_eq!(result["usage"]["cache_write_tokens"], 1000);
    assert_eq!(result["cache_hit_percent"], 80);
    assert_eq!(result["session_cache_hit_percent"], 80);
    // Pipe mode's /usage says it too.
    let (stdout, stderr) = pipe(&server, &dirs, &[], "hi\n/usage\n");
    let shown = format!("{stdout}{stderr}");
    assert!(
        shown.contains("prompt cache: 80% hit (8000 read, 1000 written)"),
        "{shown}"
    );
    assert!(shown.contains("cost this session: $0.0106"), "{shown}");
}

#[test]
fn a_strict_server_sees_no_unknown_key_with_the_default_config() {
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#),
        answer("done"),
    ]);
    let dirs = Dirs::new();
    dirs.project_file("notes.txt", "some notes\n");
    pipe(&server, &dirs, &["-p", "read notes.txt"], "");
    let known_top = [
        "model",
        "messages",
        "tools",
        "stream",
        "stream_options",
        "tool_choice",
    ];
    let known_message = ["role", "content", "tool_calls", "tool_call_id"];
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        for key in r.body.as_object().unwrap().keys() {
            assert!(
                known_top.contains(&key.as_str()),
                "unknown key {key}: {}",
                r.raw_body
            );
        }
        for m in r.messages() {
            for key in m.as_object().unwrap().keys() {
                assert!(
                    known_message.contains(&key.as_str()),
                    "unknown key {key}: {m}"
                );
            }
            assert!(m["content"].is_string(), "content as parts: {m}");
        }
        assert!(!r.raw_body.contains("cache_control"));
    }
}
