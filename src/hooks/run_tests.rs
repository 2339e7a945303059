//! Tests of running hooks: the fail-closed matrix (missing script, crash, timeout, bad
//! JSON, exit 1 against exit 2, guard and not), JSON answers, stdin, the environment,
//! caps and parallel runs, with scripts written by the tests.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::exec::Confinement;

/// A case of the matrix: its name, the command, and the failure it must end in.
type Case<'a> = (&'a str, &'a str, fn(&Failure) -> bool);

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes an executable script `name` with `body` after a bash shebang.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn ctx(&self) -> RunContext {
        RunContext {
            project_dir: self.path().to_path_buf(),
            cwd: self.path().to_path_buf(),
            confinement: Confinement::Unconfined,
        }
    }
}

fn hook(command: &str, on_error: OnError, timeout: Duration) -> Hook {
    Hook {
        command: command.to_string(),
        timeout,
        on_error,
        origin: Origin {
            kind: OriginKind::UserConfig,
            path: PathBuf::from("/home/u/.harness9/config.toml"),
        },
        plugin_root: None,
        pinned: Vec::new(),
    }
}

fn bash_input(cwd: &Path) -> HookInput {
    HookInput::tool(
        Event::PreToolUse,
        "session-1",
        "",
        cwd.to_path_buf(),
        "bash",
        &json!({"command": "rm -rf build"}),
        None,
    )
}

async fn run_hooks(fixture: &Fixture, hooks: &[Hook]) -> Report {
    let selected: Vec<Selected<'_>> = hooks
        .iter()
        .map(|hook| Selected { hook, broken: None })
        .collect();
    run_event(
        &selected,
        &bash_input(fixture.path()),
        &fixture.ctx(),
        &CancellationToken::new(),
    )
    .await
}

async fn run_single(fixture: &Fixture, command: &str, on_error: OnError) -> HookRun {
    let hooks = [hook(command, on_error, Duration::from_secs(20))];
    let mut report = run_hooks(fixture, &hooks).await;
    report.runs.remove(0)
}

/// Every way a hook can fail to answer: a guard denies, a plain hook does not.
#[tokio::test]
async fn the_fail_closed_matrix() {
    let f = Fixture::new();
    let missing = f.path().join("not-there.sh").display().to_string();
    let crash = f.script("crash.sh", "kill -SEGV $$").display().to_string();
    let exit1 = f
        .script("exit1.sh", "echo broke >&2; exit 1")
        .display()
        .to_string();
    let bad_json = f
        .script("bad.sh", "echo '{\"decision\": '")
        .display()
        .to_string();
    let wrong_value = f
        .script(
            "wrong.sh",
            r#"echo '{"hookSpecificOutput": {"permissionDecision": "maybe"}}'"#,
        )
        .display()
        .to_string();
    let not_executable = f.path().join("plain.sh");
    std::fs::write(&not_executable, "exit 0\n").unwrap();
    let not_executable = not_executable.display().to_string();
    let cases: [Case<'_>; 6] = [
        ("missing", &missing, |f| {
            matches!(f, Failure::Exited { code: 127, .. })
        }),
        ("crash", &crash, |f| {
            matches!(f, Failure::Signalled { signal: 11 })
        }),
        (
            "exit 1",
            &exit1,
            |f| matches!(f, Failure::Exited { code: 1, stderr } if stderr.contains("broke")),
        ),
        ("bad json", &bad_json, |f| {
            matches!(f, Failure::BadJson { .. })
        }),
        ("wrong value", &wrong_value, |f| {
            matches!(f, Failure::BadJson { .. })
        }),
        ("not executable", &not_executable, |f| {
            matches!(f, Failure::Exited { code: 126, .. })
        }),
    ];
    for (name, command, expected) in cases {
        let guard = run_single(&f, command, OnError::Deny).await;
        let Outcome::GuardFailed { failure } = &guard.outcome else {
            panic!("{name}: a guard must fail closed, got {:?}", guard.outcome);
        };
        assert!(expected(failure), "{name}: {failure:?}");
        let report = Report { runs: vec![guard] };
        let Verdict::Deny { reason, .. } = report.verdict() else {
            panic!("{name}: a failed guard denies");
        };
        assert!(reason.contains("could not answer"), "{name}: {reason}");

        let plain = run_single(&f, command, OnError::Continue).await;
        let Outcome::Failed { failure } = &plain.outcome else {
            panic!("{name}: {:?}", plain.outcome);
        };
        assert!(expected(failure), "{name}: {failure:?}");
        let report = Report { runs: vec![plain] };
        assert_eq!(report.verdict(), Verdict::NoDecision, "{name}");
    }
}

#[tokio::test]
async fn a_timeout_stops_the_hook_and_a_guard_denies() {
    let f = Fixture::new();
    let slow = f.script("slow.sh", "exec sleep 30").display().to_string();
    for on_error in [OnError::Deny, OnError::Continue] {
        let hooks = [hook(&slow, on_error, Duration::from_millis(300))];
        let report = run_hooks(&f, &hooks).await;
        let run = &report.runs[0];
        assert!(run.elapsed < Duration::from_secs(20), "{:?}", run.elapsed);
        let failure = match (&run.outcome, on_error) {
            (Outcome::GuardFailed { failure }, OnError::Deny) => failure,
            (Outcome::Failed { failure }, OnError::Continue) => failure,
            (other, _) => panic!("{on_error:?}: {other:?}"),
        };
        assert!(matches!(failure, Failure::TimedOut { .. }), "{failure:?}");
    }
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_for_guard_and_plain_hooks_alike() {
    let f = Fixture::new();
    let block = f
        .script("block.sh", "echo 'rm -rf is not allowed here' >&2; exit 2")
        .display()
        .to_string();
    for on_error in [OnError::Deny, OnError::Continue] {
        let run = run_single(&f, &block, on_error).await;
        assert_eq!(
            run.outcome,
            Outcome::Blocked {
                reason: "rm -rf is not allowed here\n".into()
            }
        );
        let report = Report { runs: vec![run] };
        assert_eq!(
            report.verdict(),
            Verdict::Deny {
                command: block.clone(),
                reason: "rm -rf is not allowed here".into()
            }
        );
    }
}

#[tokio::test]
async fn json_answers_are_read_as_claude_code_writes_them() {
    let f = Fixture::new();
    let cases: &[(&str, Verdict)] = &[
        (
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}"#,
            Verdict::Deny {
                command: String::new(),
                reason: "no".into(),
            },
        ),
        (
            r#"{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}"#,
            Verdict::Ask {
                reason: Some("check".into()),
            },
        ),
        (
            r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#,
            Verdict::Allow { reason: None },
        ),
        (
            r#"{"decision": "block", "reason": "legacy"}"#,
            Verdict::Deny {
                command: String::new(),
                reason: "legacy".into(),
            },
        ),
        (
            r#"{"decision": "approve"}"#,
            Verdict::Allow { reason: None },
        ),
        (
            r#"{"suppressOutput": true, "unknown": 1}"#,
            Verdict::NoDecision,
        ),
        // PermissionRequest's answer.
        (
            r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}"#,
            Verdict::Allow { reason: None },
        ),
        (
            r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "not on Fridays"}}}"#,
            Verdict::Deny {
                command: String::new(),
                reason: "not on Fridays".into(),
            },
        ),
    ];
    for (index, (stdout, expected)) in cases.iter().enumerate() {
        let script = f.script(
            &format!("a{index}.sh"),
            &format!("cat <<'EOF'\n{stdout}\nEOF"),
        );
        let command = script.display().to_string();
        let run = run_single(&f, &command, OnError::Deny).await;
        assert!(
            matches!(run.outcome, Outcome::Answered { .. }),
            "{stdout}: {:?}",
            run.outcome
        );
        let verdict = Report { runs: vec![run] }.verdict();
        let expected = match expected {
            Verdict::Deny { reason, .. } => Verdict::Deny {
                command,
                reason: reason.clone(),
            },
            other => other.clone(),
        };
        assert_eq!(verdict, expected, "{stdout}");
    }
}

#[tokio::test]
async fn context_updated_input_system_message_and_stop_are_kept() {
    let f = Fixture::new();
    let script = f.script(
        "all.sh",
        r#"cat <<'EOF'
{"continue": false, "stopReason": "enough", "systemMessage": "note for the user",
 "hookSpecificOutput": {"permissionDecision": "allow",
   "updatedInput": {"command": "rm -rf ./build"}, "additionalContext": "build is generated"}}
EOF"#,
    );
    let plain = f.script("plain.sh", "echo 'plain words'");
    let hooks = [
        hook(
            &script.display().to_string(),
            OnError::Continue,
            Duration::from_secs(20),
        ),
        hook(
            &plain.display().to_string(),
            OnError::Continue,
            Duration::from_secs(20),
        ),
    ];
    let report = run_hooks(&f, &hooks).await;
    assert_eq!(
        report.updated_input(),
        Some(&json!({"command": "rm -rf ./build"}))
    );
    assert_eq!(report.additional_context(), ["build is generated"]);
    assert_eq!(report.stop(), Some(Some("enough")));
    let Outcome::Answered { answer } = &report.runs[0].outcome else {
        panic!("{:?}", report.runs[0]);
    };
    assert_eq!(answer.system_message.as_deref(), Some("note for the user"));
    let Outcome::Answered { answer } = &report.runs[1].outcome else {
        panic!("{:?}", report.runs[1]);
    };
    assert_eq!(answer.plain_text.as_deref(), Some("plain words"));
}

#[tokio::test]
async fn the_hook_reads_the_event_json_and_the_project_variables() {
    let f = Fixture::new();
    let out = f.path().join("seen.json");
    let env_out = f.path().join("env.txt");
    let script = f.script(
        "seen.sh",
        &format!(
            "cat > '{}'\nprintf '%s\\n%s\\n' \"$HARNESS9_PROJECT_DIR\" \"$CLAUDE_PROJECT_DIR\" > '{}'",
            out.display(),
            env_out.display()
        ),
    );
    run_single(&f, &script.display().to_string(), OnError::Continue).await;
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(seen["hook_event_name"], json!("PreToolUse"));
    assert_eq!(seen["tool_name"], json!("Bash"));
    assert_eq!(seen["tool_input"]["command"], json!("rm -rf build"));
    assert_eq!(seen["session_id"], json!("session-1"));
    let project = f.path().display().to_string();
    assert_eq!(
        std::fs::read_to_string(&env_out).unwrap(),
        format!("{project}\n{project}\n")
    );
}

#[tokio::test]
async fn output_is_capped_and_a_guard_whose_json_was_cut_denies() {
    let f = Fixture::new();
    let flood = f
        .script("flood.sh", "head -c 3000000 /dev/zero | tr '\\0' 'a'")
        .display()
        .to_string();
    let run = run_single(&f, &flood, OnError::Continue).await;
    let Outcome::Answered { answer } = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    assert!(answer.plain_text.as_ref().unwrap().len() <= run::MAX_STDOUT_BYTES);
    let big_json = f
        .script(
            "bigjson.sh",
            "printf '{\"additionalContext\": \"'; head -c 3000000 /dev/zero | tr '\\0' 'a'; printf '\"}'",
        )
        .display()
        .to_string();
    let run = run_single(&f, &big_json, OnError::Deny).await;
    assert!(
        matches!(
            run.outcome,
            Outcome::GuardFailed {
                failure: Failure::BadJson { .. }
            }
        ),
        "{:?}",
        run.outcome
    );
}

/// Two hooks that each wait for the other's mark can only both finish if they run at
/// the same time.
#[tokio::test]
async fn hooks_of_one_firing_run_in_parallel_and_report_in_order() {
    let f = Fixture::new();
    let a = f.path().join("a.mark");
    let b = f.path().join("b.mark");
    let wait_for = |mine: &Path, other: &Path, name: &str| {
        f.script(
            name,
            &format!(
                "touch '{}'\nwhile [ ! -e '{}' ]; do sleep 0.02; done\necho {name}",
                mine.display(),
                other.display()
            ),
        )
        .display()
        .to_string()
    };
    let first = wait_for(&a, &b, "first");
    let second = wait_for(&b, &a, "second");
    let hooks = [
        hook(&first, OnError::Deny, Duration::from_secs(20)),
        hook(&second, OnError::Deny, Duration::from_secs(20)),
    ];
    let report = run_hooks(&f, &hooks).await;
    let texts: Vec<Option<&str>> = report
        .runs
        .iter()
        .map(|r| match &r.outcome {
            Outcome::Answered { answer } => answer.plain_text.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(texts, [Some("first"), Some("second")]);
}

#[tokio::test]
async fn a_guard_under_a_broken_matcher_denies_without_running() {
    let f = Fixture::new();
    let ran = f.path().join("ran");
    let guard = hook(
        &format!("touch '{}'", ran.display()),
        OnError::Deny,
        Duration::from_secs(20),
    );
    let selected = [Selected {
        hook: &guard,
        broken: Some("the matcher is not a valid regular expression"),
    }];
    let report = run_event(
        &selected,
        &bash_input(f.path()),
        &f.ctx(),
        &CancellationToken::new(),
    )
    .await;
    assert!(matches!(report.verdict(), Verdict::Deny { .. }));
    assert!(!ran.exists());
}

#[tokio::test]
async fn a_deny_wins_over_an_ask_and_an_allow_whatever_the_order() {
    let f = Fixture::new();
    let allow = f.script("allow.sh", r#"echo '{"permissionDecision": "allow"}'"#);
    let ask = f.script("ask.sh", r#"echo '{"permissionDecision": "ask"}'"#);
    let deny = f.script("deny.sh", "exit 2");
    let all = |names: [&PathBuf; 3]| {
        names.map(|p| {
            hook(
                &p.display().to_string(),
                OnError::Continue,
                Duration::from_secs(20),
            )
        })
    };
    let report = run_hooks(&f, &all([&allow, &ask, &deny])).await;
    assert!(matches!(report.verdict(), Verdict::Deny { .. }));
    let report = run_hooks(&f, &all([&allow, &ask, &allow])).await;
    assert!(matches!(report.verdict(), Verdict::Ask { .. }));
}
