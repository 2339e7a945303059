//! The CI contracts through the real binary (docs/CI.md): `--allow` / `--deny` for one
//! run (the same precedence as config.toml's rules: a deny wins wherever either came
//! from; a bad rule is a usage error naming it, exit 2), `--append-system-prompt` (after
//! the instruction files, the same bytes in every request of the run).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

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
