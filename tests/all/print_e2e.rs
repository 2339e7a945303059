//! Print mode (`-p`) end to end: the real binary against the scripted server, checked by
//! its stdout, stderr, exit code and the requests it made.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use std::process::{Command, Output, Stdio};

use crate::support::*;
use serde_json::Value;

/// A home (its config.toml holding `max_retries = 1` unless the test sets it) and a
/// project, for runs of the binary pointed at the server by its flags.
struct Run {
    dirs: Dirs,
}

impl Run {
    fn new(config: &str) -> Run {
        let dirs = Dirs::with_config(&if config.contains("max_retries") {
            config.to_string()
        } else {
            format!("max_retries = 1\n{config}")
        });
        Run { dirs }
    }

    fn command(&self, server: &MockServer, args: &[&str]) -> Command {
        let mut cmd = self
            .dirs
            .command(&["--base-url", &server.url(), "--model", "mock-model"]);
        cmd.args(args).env("OPENAI_API_KEY", "test-key");
        cmd
    }

    fn run(&self, server: &MockServer, args: &[&str]) -> Output {
        self.command(server, args).output().unwrap()
    }

    fn path(&self, p: &str) -> std::path::PathBuf {
        self.dirs.project().join(p)
    }
}

fn text_of(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[test]
fn answer_on_stdout_and_exit_zero() {
    let server = MockServer::start(vec![sse(vec![
        text("Hello "),
        text("there"),
        finish("stop"),
    ])]);
    let run = Run::new("");
    let out = run.run(&server, &["-p", "say hello"]);
    assert_exit(&out, 0);
    assert_eq!(text_of(&out.stdout), "Hello there\n");
}

#[test]
fn piped_stdin_is_appended_as_context() {
    let server = MockServer::start(vec![]);
    let run = Run::new("");
    let mut child = run
        .command(&server, &["-p", "review this"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"diff --git a/x b/x\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    let user = server.chat_requests()[0].message_text(1);
    assert_eq!(user, "review this\n\n<stdin>\ndiff --git a/x b/x\n</stdin>");
}

#[test]
fn reads_edits_and_answers_with_auto_edit() {
    let run = Run::new("");
    std::fs::write(run.path("main.rs"), "fn main() { println!(\"helo\"); }\n").unwrap();
    let server = MockServer::start(vec![
        tool_reply("r", "read_file", r#"{"path":"main.rs"}"#),
        tool_reply(
            "e",
            "edit_file",
            r#"{"path":"main.rs","old_string":"helo","new_string":"hello"}"#,
        ),
        answer("Fixed the typo."),
    ]);
    let out = run.run(
        &server,
        &[
            "-p",
            "read main.rs and fix the typo",
            "--approval-mode",
            "auto-edit",
            "-v",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(text_of(&out.stdout), "Fixed the typo.\n");
    assert_eq!(
        std::fs::read_to_string(run.path("main.rs")).unwrap(),
        "fn main() { println!(\"hello\"); }\n"
    );
    let err = text_of(&out.stderr);
    assert_has(&err, &["→ read_file main.rs", "→ edit_file"]);
}

#[test]
fn never_waits_for_approval() {
    let run = Run::new("");
    let server = MockServer::start(vec![
        tool_reply("b", "bash", r#"{"command":"touch made-it"}"#),
        answer("I could not run it."),
    ]);
    let out = run.run(&server, &["-p", "run it"]);
    assert_exit(&out, 0);
    assert!(!run.path("made-it").exists());
    let err = text_of(&out.stderr);
    assert_has(&err, &["harness9: denied bash", "full-auto"]);
}

#[test]
fn server_errors_after_retries_exit_4_and_name_the_endpoint() {
    let run = Run::new("");
    let err500 = || http_error(500).body(r#"{"error":{"message":"upstream exploded"}}"#);
    let server = MockServer::start(vec![err500(), err500(), err500()]);
    let out = run.run(&server, &["-p", "hi"]);
    assert_exit(&out, 4);
    let err = text_of(&out.stderr);
    assert_has(&err, &["500", &server.url()]);
    assert_eq!(
        server.chat_requests().len(),
        2,
        "one attempt plus max_retries = 1"
    );
}

#[test]
fn auth_errors_exit_3_without_retrying() {
    let run = Run::new("");
    let server = MockServer::start(vec![
        http_error(401).body(r#"{"error":{"message":"invalid api key"}}"#),
    ]);
    let out = run.run(&server, &["-p", "hi", "--output-format", "json"]);
    assert_exit(&out, 3);
    let v: Value = serde_json::from_str(text_of(&out.stdout).trim()).unwrap();
    assert_eq!(v["is_error"], true);
    assert_eq!(v["error"]["kind"], "auth");
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn max_turns_exits_5() {
    let run = Run::new("");
    let again = || tool_reply("l", "list", "{}");
    let server = MockServer::start(vec![again(), again()]);
    let out = run.run(&server, &["-p", "loop", "--max-turns", "1"]);
    assert_exit(&out, 5);
    assert!(text_of(&out.stderr).contains("--max-turns"));
}

#[test]
fn stalled_stream_times_out_and_exits_4() {
    let run = Run::new("max_retries = 0\n");
    let server = MockServer::start(vec![answer("partial").stall_after(1)]);
    let mut cmd = run.command(&server, &["-p", "hi", "--output-format", "json"]);
    let out = cmd.env("HARNESS9_IDLE_TIMEOUT_MS", "300").output().unwrap();
    assert_exit(&out, 4);
    let v: Value = serde_json::from_str(text_of(&out.stdout).trim()).unwrap();
    assert_eq!(v["error"]["kind"], "timeout");
}

#[test]
fn json_and_stream_json_follow_the_documented_schema() {
    let run = Run::new("");
    let server = MockServer::start(vec![
        tool_reply("l", "list", "{}"),
        sse(vec![text("ok"), usage(50, 3), finish("stop")]),
    ]);
    let out = run.run(&server, &["-p", "go", "--output-format", "json"]);
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), 1);
    let v: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["schema_version"], 3);
    assert_eq!(v["result"], "ok");
    assert_eq!(v["turns"], 2);
    assert_eq!(v["error"], Value::Null);

    let server = MockServer::start(vec![sse(vec![text("o"), text("k"), finish("stop")])]);
    let out = run.run(&server, &["-p", "go", "--output-format", "stream-json"]);
    let events = json_lines(&out.stdout);
    assert_eq!(events[0]["type"], "start");
    assert_eq!(events[0]["schema_version"], 3);
    let types = event_types(&events);
    for t in [
        "session_configured",
        "turn_started",
        "text_delta",
        "turn_complete",
        "result",
    ] {
        assert!(types.contains(&t), "{t} missing from {types:?}");
    }
    assert_eq!(
        events.iter().rev().find(|e| e["type"] == "result").unwrap()["result"],
        "ok"
    );
    // Consumers read the last line: it is the result, with the session's total.
    let last = events.last().unwrap();
    assert_eq!(last["type"], "result", "{types:?}");
    assert!(last["session_usage"]["input_tokens"].is_u64(), "{last}");
    assert!(!types.contains(&"shutdown_complete"), "{types:?}");
}

#[test]
fn stream_json_starts_with_start_even_before_skill_warnings() {
    let run = Run::new("");
    // Two broken skills: their warnings are the first things harness9 has to say.
    for name in ["broken-a", "broken-b"] {
        write(
            &run.path(&format!(".agents/skills/{name}/SKILL.md")),
            "---\nname: [unclosed\n---\nbody\n",
        );
    }
    let server = MockServer::start(vec![answer("ok")]);
    let out = run.run(&server, &["-p", "go", "--output-format", "stream-json"]);
    let events = json_lines(&out.stdout);
    // Byte for byte, so that `head -1 | grep '"type":"start"'` works too: every
    // line names its type first.
    assert_eq!(
        text_of(&out.stdout).lines().next(),
        Some(r#"{"type":"start","schema_version":3}"#)
    );
    assert!(
        text_of(&out.stdout)
            .lines()
            .all(|l| l.starts_with(r#"{"type":""#))
    );
    assert!(
        events.iter().filter(|e| e["type"] == "warning").count() >= 2,
        "{events:?}"
    );
    assert_eq!(events.last().unwrap()["type"], "result");
}

/// `harness9 ARGS --output-format stream-json`, which must fail as a usage error before
/// any turn: exit 2 with the events start, error and result; returns the output and
/// the events.
fn usage_failure_events(run: &Run, server: &MockServer, args: &[&str]) -> (Output, Vec<Value>) {
    let args = [args, &["--output-format", "stream-json"]].concat();
    let out = run.run(server, &args);
    assert_exit(&out, 2);
    let events = json_lines(&out.stdout);
    assert_eq!(event_types(&events), ["start", "error", "result"]);
    assert_eq!(events[2]["error"]["kind"], "usage");
    (out, events)
}

#[test]
fn an_unusable_prompt_still_gives_start_error_and_result() {
    let run = Run::new("");
    let server = MockServer::start(vec![]);
    let (_, events) = usage_failure_events(&run, &server, &["-p", "/nope"]);
    assert_eq!(events[2]["is_error"], true);
    assert!(
        events[2]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/nope"),
        "{events:?}"
    );

    let out = run.run(&server, &["-p", "/nope", "--output-format", "json"]);
    assert_exit(&out, 2);
    let events = json_lines(&out.stdout);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["error"]["kind"], "usage");
    assert!(server.chat_requests().is_empty());
}

#[test]
fn a_bad_config_is_a_result_in_the_json_formats() {
    let run = Run::new("modle = \"typo\"\n");
    let server = MockServer::start(vec![]);
    let (out, _) = usage_failure_events(&run, &server, &["-p", "hi"]);
    assert!(text_of(&out.stderr).contains("config.toml"));
    // Text output keeps stdout empty.
    let out = run.run(&server, &["-p", "hi"]);
    assert_exit(&out, 2);
    assert!(out.stdout.is_empty());
}

#[test]
fn an_empty_p_or_a_dash_takes_the_prompt_from_stdin() {
    let run = Run::new("");
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    for (arg, answer) in [("", "one\n"), ("-", "two\n")] {
        let child = spawn_fed(&mut run.command(&server, &["-p", arg]), b"the prompt\n");
        let out = wait_with_deadline(child, std::time::Duration::from_secs(30));
        assert_exit(&out, 0);
        assert_eq!(text_of(&out.stdout), answer);
    }
    for request in server.chat_requests() {
        let messages = request.messages();
        let user = messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(user, "the prompt", "stdin is the whole prompt, not context");
    }
    // An empty -p with nothing piped is still an error.
    let out = run.run(&server, &["-p", ""]);
    assert_exit(&out, 2);
    assert!(text_of(&out.stderr).contains("empty"));
}

#[test]
fn retries_are_on_stderr_only_with_verbose() {
    let run = Run::new("max_retries = 1\n");
    for (flags, shown) in [(&["-p", "hi"][..], false), (&["-p", "hi", "-v"][..], true)] {
        let server = MockServer::start(vec![
            http_error(503).body(r#"{"error":{"message":"busy"}}"#),
            answer("ok"),
        ]);
        let out = run.run(&server, flags);
        assert_exit(&out, 0);
        assert_eq!(
            text_of(&out.stderr).contains("retrying"),
            shown,
            "{flags:?}: {}",
            text_of(&out.stderr)
        );
    }
}

#[test]
fn a_reader_that_closes_stdout_ends_the_run_quietly() {
    let run = Run::new("");
    // Far more than a pipe holds, so the answer cannot be written before the reader
    // has gone.
    let long: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    let server = MockServer::start(vec![answer(&long)]);
    let child = run
        .command(&server, &["-p", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (first, out) = first_line_then_close(child, std::time::Duration::from_secs(30));
    assert_eq!(first, "line 0\n");
    assert_exit(&out, 0);
    assert_eq!(
        text_of(&out.stderr),
        "",
        "nothing to say about a closed pipe"
    );
}

#[test]
fn skill_slash_command_with_p() {
    let run = Run::new("");
    skill(
        &run.path("skills"),
        "greet",
        "Greets",
        "",
        "Greet $ARGUMENTS warmly.\n",
    );
    let server = MockServer::start(vec![]);
    let out = run.run(&server, &["-p", "/greet the team"]);
    assert_exit(&out, 0);
    let user = server.chat_requests()[0].message_text(1);
    assert_eq!(user, "Greet the team warmly.");
    let out = run.run(&server, &["-p", "/nosuch thing"]);
    assert_exit(&out, 2);
}

#[test]
fn no_endpoint_exits_2_and_says_what_to_set() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness9"))
        .args(["-p", "hi"])
        .current_dir(home.path())
        .env_clear()
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    if out.status.code() == Some(0) {
        // A local Ollama answered on 127.0.0.1:11434; nothing to check here.
        return;
    }
    assert_exit(&out, 2);
    let err = text_of(&out.stderr);
    assert_has(&err, &["OPENAI_API_KEY", "--base-url"]);
}

#[test]
fn skills_list_takes_setting_flags_after_the_subcommand_and_stops_quietly_for_head() {
    let run = Run::new("");
    let root = run.path("many");
    // Far more output than a pipe holds.
    for i in 0..400 {
        let description = format!("Use for task {i}: {}", "words ".repeat(40));
        skill(&root, &format!("skill-{i:03}"), &description, "", "body\n");
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.args(["skills", "list", "--json", "--skills-dir"])
        .arg(&root)
        .args(["--skills-dir", "/nonexistent/skills", "-C"])
        .arg(run.dirs.project())
        .env_clear()
        .env("HOME", run.dirs.home())
        .env("HARNESS9_HOME", run.dirs.home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (first, out) =
        first_line_then_close(cmd.spawn().unwrap(), std::time::Duration::from_secs(30));
    assert!(!first.trim().is_empty(), "{first}");
    let stderr = text_of(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(
        stderr.contains("/nonexistent/skills (--skills-dir) does not exist"),
        "{stderr}"
    );
}

#[test]
fn a_harness9_home_that_is_a_file_is_named() {
    let run = Run::new("");
    let file = run.path("home-file");
    std::fs::write(&file, "").unwrap();
    let server = MockServer::start(vec![]);
    let out = run
        .command(&server, &["-p", "hi"])
        .env("HARNESS9_HOME", &file)
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let stderr = text_of(&out.stderr);
    assert!(stderr.contains("HARNESS9_HOME"), "{stderr}");
    assert_eq!(stderr.matches("not a directory").count(), 1, "{stderr}");
}

#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_harness9_home_is_said_once_and_the_run_goes_on() {
    let run = Run::new("");
    let server = MockServer::start(vec![answer("ok")]);
    // Nobody, not even root, can create a directory in /proc.
    let out = run
        .command(&server, &["-p", "hi"])
        .env("HARNESS9_HOME", "/proc/harness9-e2e-home")
        .output()
        .unwrap();
    let stderr = text_of(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text_of(&out.stdout), "ok\n");
    assert_eq!(
        stderr
            .matches("history, logs and caches are not saved")
            .count(),
        1,
        "{stderr}"
    );
}

#[test]
fn a_priced_model_reports_its_cost_in_the_result_and_with_verbose() {
    let run = Run::new("[prices.\"mock\"]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n");
    let server = MockServer::start(vec![
        sse(vec![
            text("hi"),
            usage_cached(1_000, 100, 400),
            finish("stop"),
        ]),
        sse(vec![
            text("hi"),
            usage_cached(1_000, 100, 400),
            finish("stop"),
        ]),
    ]);
    let out = run.run(&server, &["-p", "hi", "--output-format", "json"]);
    assert_exit(&out, 0);
    let v: Value = serde_json::from_str(text_of(&out.stdout).trim()).unwrap();
    // 600 fresh at $2/M + 400 cached at $0.5/M + 100 out at $8/M = $0.0022.
    assert_eq!(v["session_usage"]["cost_usd"], 0.0022, "{v}");
    let out = run.run(&server, &["-p", "hi", "-v"]);
    assert!(
        text_of(&out.stderr).contains("tokens: 1000 in, 100 out, $0.0022"),
        "{}",
        text_of(&out.stderr)
    );
    // Without a price there is no cost at all, not a cost of zero.
    let unpriced = Run::new("");
    let server = MockServer::start(vec![sse(vec![text("hi"), usage(10, 1), finish("stop")])]);
    let out = unpriced.run(&server, &["-p", "hi", "--output-format", "json"]);
    let v: Value = serde_json::from_str(text_of(&out.stdout).trim()).unwrap();
    assert!(v["session_usage"].get("cost_usd").is_none(), "{v}");
}
