//! The CI contracts through the real binary (docs/CI.md): `--allow` / `--deny` for one
//! run (the same precedence as config.toml's rules: a deny wins wherever either came
//! from; a bad rule is a usage error naming it, exit 2), `--append-system-prompt` (after
//! the instruction files, the same bytes in every request of the run), `--timeout`
//! (exit 6, `time_limit`: the turn stopped, its command killed, the session saved) and
//! `--max-cost` (exit 7, `cost_limit`: nothing more run once the spend passed it; a
//! model without a price refused before anything is sent, exit 2), `--output-schema`
//! (the answer's JSON value in `structured_output`; one repair; exit 8 after it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::*;

/// One `-p` run in `dirs` (plus `args`) in which the model makes one bash call; the
/// output and what the model got back.
fn one_bash_call(dirs: &Dirs, command: &str, args: &[&str]) -> (Output, String) {
    MockServer::start(vec![]).one_bash_call(dirs.home(), dirs.project(), command, args, &[])
}

#[test]
fn an_allow_rule_on_the_command_line_runs_what_suggest_mode_would_deny() {
    let dirs = Dirs::new();
    let marker = dirs.project().join("made");
    let (out, tool) = one_bash_call(&dirs, "touch made", &[]);
    assert_exit(&out, 0);
    assert!(!marker.exists(), "suggest mode alone denies it: {tool}");
    let (out, tool) = one_bash_call(&dirs, "touch made", &["--allow", "bash(touch:*)"]);
    assert_exit(&out, 0);
    assert!(marker.exists(), "{tool}");
    // Only what the rule names: another command is still denied.
    let other = dirs.project().join("other");
    let (_, tool) = one_bash_call(&dirs, "mkdir other", &["--allow", "bash(touch:*)"]);
    assert!(!other.exists(), "{tool}");
}

#[test]
fn a_deny_rule_on_the_command_line_wins_over_every_allow() {
    // config.toml allows every command, the run allows it too: the run's deny wins.
    let dirs = Dirs::with_config("[permissions]\nallow = [\"bash\"]\n");
    let marker = dirs.project().join("made");
    let args = [
        "--approval-mode",
        "full-auto",
        "--allow",
        "bash",
        "--deny",
        "bash(touch:*)",
    ];
    let (out, tool) = one_bash_call(&dirs, "echo hi && touch made", &args);
    assert_exit(&out, 0);
    assert!(!marker.exists(), "{tool}");
    assert_has(&tool, &["deny bash(touch:*)", "the command line"]);
    let stderr = stderr_text(&out);
    assert_has(&stderr, &["denied bash", "bash(touch:*)"]);
}

#[test]
fn a_deny_rule_in_config_wins_over_an_allow_rule_on_the_command_line() {
    let dirs = Dirs::with_config("[permissions]\ndeny = [\"bash(touch:*)\"]\n");
    let marker = dirs.project().join("made");
    let (_, tool) = one_bash_call(&dirs, "touch made", &["--allow", "bash(touch:*)"]);
    assert!(!marker.exists(), "{tool}");
    assert_has(&tool, &["deny bash(touch:*)"]);
}

#[test]
fn a_command_line_deny_is_reported_with_its_source_in_stream_json() {
    let dirs = Dirs::new();
    let args = [
        "--approval-mode",
        "full-auto",
        "--deny",
        "bash",
        "--output-format",
        "stream-json",
    ];
    let (out, _) = one_bash_call(&dirs, "true", &args);
    assert_exit(&out, 0);
    let events = json_lines(&out.stdout);
    let denied = events
        .iter()
        .find(|e| e["type"] == "auto_denied")
        .expect("the call is refused");
    assert_eq!(denied["reason"]["kind"], "rule");
    assert_eq!(denied["reason"]["rule"], "bash");
    assert_eq!(denied["reason"]["source"]["kind"], "command_line");
}

#[test]
fn a_bad_rule_is_a_usage_error_naming_it_before_anything_is_sent() {
    let server = MockServer::start(vec![answer("never")]);
    let dirs = Dirs::new();
    for (flag, rule) in [("--allow", "bash("), ("--deny", "read(**/[)")] {
        let out = server.run(&dirs, &["-p", "go", flag, rule]);
        assert_exit(&out, 2);
        assert_has(&stderr_text(&out), &[flag, rule]);
        let out = server.run(&dirs, &["-p", "go", flag, rule, "--output-format", "json"]);
        assert_exit(&out, 2);
        let result = json_lines(&out.stdout).pop().expect("one result");
        assert_eq!(result["error"]["kind"], "usage");
        assert_has(result["error"]["message"].as_str().unwrap(), &[flag, rule]);
    }
    assert!(server.requests().is_empty(), "nothing may be sent");
}

#[test]
fn appended_text_follows_the_instructions_and_stays_the_same_in_every_request() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    dirs.project_file("AGENTS.md", "Use tabs.\n");
    server.push(tool_reply("c1", "list", "{}"));
    server.push(answer("fini"));
    let out = server.run(
        &dirs,
        &[
            "-p",
            "go",
            "--append-system-prompt",
            "@notes.md Answer in French.",
        ],
    );
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].message_text(0);
    let tabs = first.find("Use tabs.").expect("the instructions are there");
    let appended = first
        .find("@notes.md Answer in French.")
        .expect("the text is there as written");
    assert!(tabs < appended, "{first}");
    assert_eq!(first, requests[1].message_text(0), "the prefix is stable");
}

/// The last JSON line of a run's stdout: its `result`.
fn result_of(out: &Output) -> serde_json::Value {
    json_lines(&out.stdout).pop().expect("a result line")
}

/// Waits (at most 30 s) until process `pid` is gone; false if it never went.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn the_time_limit_stops_a_running_command_and_saves_the_session() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    // The command says who it is, then would run for a minute.
    server.push(bash_reply("c1", "echo $$ > pid; exec sleep 60"));
    server.push(answer("never asked for"));
    let started = Instant::now();
    let out = server.run(
        &dirs,
        &[
            "-p",
            "go",
            "--approval-mode",
            "full-auto",
            "--sandbox",
            "off",
            "--timeout",
            "2s",
            "--output-format",
            "json",
        ],
    );
    assert_exit(&out, 6);
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "not the minute"
    );
    let result = result_of(&out);
    assert_eq!(result["is_error"], true);
    assert_eq!(result["error"]["kind"], "time_limit");
    assert_has(
        result["error"]["message"].as_str().unwrap(),
        &["--timeout 2s"],
    );
    let pid: u32 = std::fs::read_to_string(dirs.project().join("pid"))
        .expect("the command ran")
        .trim()
        .parse()
        .unwrap();
    assert!(gone(pid), "the command was killed");
    assert_eq!(
        server.chat_requests().len(),
        1,
        "nothing asked after the limit"
    );
    let listed = dirs.run(&["sessions", "list", "--json"]);
    let sessions: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        sessions.as_array().map(Vec::len),
        Some(1),
        "the session was saved"
    );
    let id = sessions[0]["id"].as_str().expect("a session id");
    let export = stdout_text(&dirs.run(&["sessions", "export", id]));
    // The model would be told why its command stopped, and the turn's end is noted.
    assert_has(
        &export,
        &["Stopped: stopped at the run's time limit", "Limit reached:"],
    );
}

#[test]
fn the_time_limit_stops_a_model_that_stalls_and_says_so_in_stream_json() {
    let server = MockServer::start(vec![answer("partial answer").stall_after(1)]);
    let dirs = Dirs::new();
    let out = server.run(
        &dirs,
        &[
            "-p",
            "go",
            "--timeout",
            "1s",
            "--output-format",
            "stream-json",
        ],
    );
    assert_exit(&out, 6);
    let events = json_lines(&out.stdout);
    let complete = events
        .iter()
        .find(|e| e["type"] == "turn_complete")
        .expect("the turn ends");
    assert_eq!(complete["outcome"]["status"], "limit_reached");
    assert_eq!(complete["outcome"]["limit"]["kind"], "time");
    assert_eq!(complete["outcome"]["limit"]["timeout_ms"], 1000);
    assert_eq!(events.last().unwrap()["error"]["kind"], "time_limit");
    // Text output: the reason on stderr.
    let server = MockServer::start(vec![answer("partial").stall_after(1)]);
    let out = server.run(&dirs, &["-p", "go", "--timeout", "500ms"]);
    assert_exit(&out, 6);
    assert_has(
        &stderr_text(&out),
        &["error: stopped at the run's time limit"],
    );
}

/// config.toml pricing model `m` at $1000 per million tokens either way: a request of
/// 1000 input and 100 output tokens costs $1.10.
const PRICED: &str = "[prices.m]\ninput = 1000.0\noutput = 1000.0\n";

/// A reply with a bash call and usage worth $1.10.
fn costly_call(id: &str, command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    sse(vec![
        tool_call(0, id, "bash", &args),
        finish("tool_calls"),
        usage(1000, 100),
    ])
}

#[test]
fn the_cost_limit_stops_the_run_once_the_spend_passes_it() {
    let server = MockServer::start(vec![
        costly_call("c1", "touch first"),
        costly_call("c2", "touch second"),
        answer("never asked for"),
    ]);
    let dirs = Dirs::with_config(PRICED);
    let out = server.run(
        &dirs,
        &[
            "-p",
            "go",
            "--approval-mode",
            "full-auto",
            "--max-cost",
            "2",
            "--output-format",
            "json",
        ],
    );
    assert_exit(&out, 7);
    assert!(dirs.project().join("first").exists(), "$1.10 is within $2");
    assert!(
        !dirs.project().join("second").exists(),
        "$2.20 is not: the call it asked for is not run"
    );
    assert_eq!(server.chat_requests().len(), 2);
    let result = result_of(&out);
    assert_eq!(result["error"]["kind"], "cost_limit");
    assert_has(
        result["error"]["message"].as_str().unwrap(),
        &["--max-cost 2", "$2.20 spent"],
    );
    assert!((result["usage"]["cost_usd"].as_f64().unwrap() - 2.2).abs() < 1e-9);
}

#[test]
fn a_cost_limit_without_a_price_is_refused_before_anything_is_sent() {
    let server = MockServer::start(vec![answer("never")]);
    let dirs = Dirs::new();
    let out = server.run(
        &dirs,
        &["-p", "go", "--max-cost", "1", "--output-format", "json"],
    );
    assert_exit(&out, 2);
    assert_has(
        &stderr_text(&out),
        &["--max-cost", "model `m` has no price"],
    );
    assert_eq!(result_of(&out)["error"]["kind"], "usage");
    assert!(server.requests().is_empty());
    // Values that are no limit are the parser's usage errors.
    for (flag, value) in [
        ("--max-cost", "0"),
        ("--timeout", "soon"),
        ("--timeout", "0s"),
    ] {
        let out = server.run(&dirs, &["-p", "go", flag, value]);
        assert_exit(&out, 2);
        assert_has(&stderr_text(&out), &[value]);
    }
}

/// The schema the tests hold answers to: `{"verdict": "pass"|"fail"}`, nothing else.
const VERDICT: &str = r#"{"type": "object",
  "properties": {"verdict": {"enum": ["pass", "fail"]}},
  "required": ["verdict"], "additionalProperties": false}"#;

/// `-p go --output-schema verdict.json` (plus `args`) in `dirs`.
fn with_schema(server: &MockServer, dirs: &Dirs, args: &[&str]) -> Output {
    dirs.home_file("verdict.json", VERDICT);
    let schema = dirs.home().join("verdict.json");
    let mut all = vec!["-p", "go", "--output-schema", schema.to_str().unwrap()];
    all.extend_from_slice(args);
    server.run(dirs, &all)
}

#[test]
fn a_valid_answer_is_the_result_and_its_value_the_structured_output() {
    let server = MockServer::start(vec![answer("{ \"verdict\": \"pass\" }")]);
    let dirs = Dirs::new();
    let out = with_schema(&server, &dirs, &["--output-format", "json"]);
    assert_exit(&out, 0);
    let result = result_of(&out);
    assert_eq!(
        result["structured_output"],
        serde_json::json!({"verdict": "pass"})
    );
    assert_eq!(result["result"], "{\"verdict\":\"pass\"}");
    assert_eq!(server.chat_requests().len(), 1);
    // Text output: the JSON itself on stdout, nothing rendered away.
    server.push(answer("{\"verdict\": \"fail\"}"));
    let out = with_schema(&server, &dirs, &[]);
    assert_exit(&out, 0);
    assert_eq!(stdout_text(&out), "{\"verdict\":\"fail\"}\n");
    // Without the flag there is no such field.
    server.push(answer("{\"verdict\": \"pass\"}"));
    let out = server.run(&dirs, &["-p", "go", "--output-format", "json"]);
    assert!(result_of(&out).get("structured_output").is_none());
}

#[test]
fn an_invalid_answer_is_sent_back_once_with_what_is_wrong() {
    let server = MockServer::start(vec![
        answer("The verdict is: pass"),
        answer("```json\n{\"verdict\": \"fail\"}\n```"),
    ]);
    let dirs = Dirs::new();
    let out = with_schema(&server, &dirs, &["--output-format", "stream-json"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let repair = requests[1].last_user_text();
    assert_has(&repair, &["not a JSON value", "\"verdict\"", "JSON Schema"]);
    let events = json_lines(&out.stdout);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "warning" && e["message"].as_str().unwrap().contains("repair"))
    );
    let result = events.last().unwrap();
    assert_eq!(result["structured_output"]["verdict"], "fail");
}

#[test]
fn an_answer_still_invalid_after_the_repair_fails_with_its_own_kind() {
    let server = MockServer::start(vec![
        answer("{\"verdict\": \"maybe\"}"),
        answer("{\"verdict\": \"perhaps\"}"),
        answer("never asked for"),
    ]);
    let dirs = Dirs::new();
    let out = with_schema(&server, &dirs, &["--output-format", "json"]);
    assert_exit(&out, 8);
    assert_eq!(server.chat_requests().len(), 2, "one repair, no more");
    let result = result_of(&out);
    assert_eq!(result["error"]["kind"], "output_schema");
    assert_has(
        result["error"]["message"].as_str().unwrap(),
        &["does not match the schema"],
    );
    assert!(result.get("structured_output").is_none());
}

#[test]
fn a_schema_that_cannot_be_used_is_a_usage_error_before_anything_is_sent() {
    let server = MockServer::start(vec![answer("never")]);
    let dirs = Dirs::new();
    dirs.home_file("broken.json", "{ not json");
    dirs.home_file("outside.json", r#"{"$ref": "file:///etc/passwd"}"#);
    for (name, words) in [
        ("missing.json", "cannot read it"),
        ("broken.json", "not JSON"),
        ("outside.json", "not a usable JSON Schema"),
    ] {
        let path = dirs.home().join(name);
        let out = server.run(
            &dirs,
            &["-p", "go", "--output-schema", path.to_str().unwrap()],
        );
        assert_exit(&out, 2);
        assert_has(&stderr_text(&out), &["--output-schema", words]);
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_provider_that_takes_structured_output_is_asked_for_the_schema() {
    let server = MockServer::start(vec![answer("{\"verdict\": \"pass\"}")]);
    let dirs = Dirs::with_config("structured_output = \"json-schema\"\n");
    let out = with_schema(&server, &dirs, &["--output-format", "json"]);
    assert_exit(&out, 0);
    let sent = &server.chat_requests()[0].body;
    assert_eq!(sent["response_format"]["type"], "json_schema");
    let expected: serde_json::Value = serde_json::from_str(VERDICT).unwrap();
    assert_eq!(sent["response_format"]["json_schema"]["schema"], expected);
    // By default the server is not asked (harness9 checks the answer alone).
    server.push(answer("{\"verdict\": \"pass\"}"));
    let plain = Dirs::new();
    let out = with_schema(&server, &plain, &[]);
    assert_exit(&out, 0);
    assert!(
        server.chat_requests()[1]
            .body
            .get("response_format")
            .is_none()
    );
}
