//! The GitHub Action's step logic (scripts/action-run.sh, run by action.yml) run here
//! as GitHub would run it: inputs as environment variables, a fake `GITHUB_OUTPUT`
//! file, a fake `gh` on PATH that records the comment it was asked to make, the real
//! binary against the scripted server. Its outputs (result, exit code, cost, session
//! export) and its exit code are harness9's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::*;

/// The outputs in a `GITHUB_OUTPUT` file: `key=value` lines and `key<<DELIM` blocks.
fn outputs(file: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(file).expect("the outputs were written");
    let mut found = HashMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((key, delimiter)) = line.split_once("<<") {
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
            found.insert(key.to_string(), value.join("\n"));
        } else if let Some((key, value)) = line.split_once('=') {
            found.insert(key.to_string(), value.to_string());
        }
    }
    found
}

/// Runs the action's script in `dirs` against `server` with these inputs; a fake `gh`
/// writes what it was asked into `gh.log` in the home.
fn run_action(server: &MockServer, dirs: &Dirs, inputs: &[(&str, &str)]) -> Output {
    let fake_bin = dirs.home().join("fake-bin");
    write(
        &fake_bin.join("gh"),
        "#!/bin/sh\nlog=\"$HARNESS9_HOME/gh.log\"\necho \"args: $*\" >> \"$log\"\n\
         echo \"token: $GH_TOKEN\" >> \"$log\"\ncat \"$5\" >> \"$log\"\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake_bin.join("gh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action-run.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script)
        .current_dir(dirs.project())
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                fake_bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", dirs.home())
        .env("HARNESS9_HOME", dirs.home())
        .env("OPENAI_API_KEY", "k")
        .env("OPENAI_BASE_URL", server.url())
        .env("HARNESS9_MODEL", "m")
        .env("H9_BINARY", env!("CARGO_BIN_EXE_harness9"))
        .env("H9_OUT_DIR", dirs.home().join("out"))
        .env("GITHUB_OUTPUT", dirs.home().join("github_output"));
    for (name, value) in inputs {
        cmd.env(name, value);
    }
    output_of(&mut cmd)
}

#[test]
fn the_action_runs_a_prompt_and_exposes_result_cost_and_session_and_comments() {
    let server = MockServer::start(vec![answer("All *good*:\nline two")]);
    let dirs = Dirs::with_config("[prices.m]\ninput = 1.0\noutput = 1.0\n");
    let out = run_action(
        &server,
        &dirs,
        &[
            ("H9_PROMPT", "review this"),
            ("H9_ALLOW", "bash(cargo test:*)\nread(**)"),
            ("H9_APPEND_SYSTEM_PROMPT", "Be brief."),
            ("H9_COMMENT", "true"),
            ("H9_PR_NUMBER", "7"),
            ("H9_GITHUB_TOKEN", "tok-123"),
        ],
    );
    assert_exit(&out, 0);
    let found = outputs(&dirs.home().join("github_output"));
    assert_eq!(found["exit_code"], "0");
    assert_eq!(found["is_error"], "false");
    assert_eq!(found["result"], "All *good*:\nline two");
    assert!(found["cost_usd"].parse::<f64>().is_ok(), "{found:?}");
    assert!(!found["session_id"].is_empty());
    let export = std::fs::read_to_string(&found["session_export"]).expect("an export");
    assert_has(&export, &["review this", "line two"]);
    let sent = &server.chat_requests()[0];
    assert_has(&sent.message_text(0), &["Be brief."]);
    let gh = std::fs::read_to_string(dirs.home().join("gh.log")).expect("gh was run");
    assert_has(
        &gh,
        &[
            "args: pr comment 7 --body-file",
            "token: tok-123",
            "finished",
            "line two",
        ],
    );
}

#[test]
fn the_action_passes_on_a_limits_exit_code_and_a_skill_runs_as_a_slash_command() {
    let server = MockServer::start(vec![answer("partial").stall_after(1)]);
    let dirs = Dirs::new();
    project_skill(
        dirs.project(),
        "triage",
        "Triage issues",
        "Triage the issue.",
    );
    let out = run_action(
        &server,
        &dirs,
        &[
            ("H9_SKILL", "triage"),
            ("H9_SKILL_ARGS", "#12"),
            ("H9_TIMEOUT", "1s"),
            ("H9_COMMENT", "true"),
            ("H9_PR_NUMBER", "9"),
        ],
    );
    assert_exit(&out, 6);
    let found = outputs(&dirs.home().join("github_output"));
    assert_eq!(found["exit_code"], "6");
    assert_eq!(found["is_error"], "true");
    assert_eq!(found["error_kind"], "time_limit");
    assert_has(
        &server.chat_requests()[0].last_user_text(),
        &["Triage the issue.", "#12"],
    );
    let gh = std::fs::read_to_string(dirs.home().join("gh.log")).unwrap();
    assert_has(&gh, &["pr comment 9", "exit code 6 (time_limit)"]);
}

#[test]
fn the_action_without_a_prompt_or_skill_is_a_usage_error_and_comments_nothing() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    let out = run_action(
        &server,
        &dirs,
        &[("H9_COMMENT", "true"), ("H9_PR_NUMBER", "3")],
    );
    assert_exit(&out, 2);
    assert_eq!(
        outputs(&dirs.home().join("github_output"))["exit_code"],
        "2"
    );
    assert!(!dirs.home().join("gh.log").exists());
    assert!(server.requests().is_empty());
}
