//! Plan mode through the real binary (`-p --approval-mode plan`): commands run in a
//! sandbox that writes nothing (or not at all where there is none), only the plan file
//! is written, a link at or above it redirects nothing, and only the plan's tools are
//! offered.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use serde_json::json;

use crate::support::*;

/// The plan file the model was told of in the first user message.
pub(crate) fn told_plan_file(request: &RecordedRequest) -> PathBuf {
    let text = request
        .messages()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default();
    let start = text
        .find("the plan file ")
        .expect("the model is told the plan file")
        + 14;
    let rest = &text[start..];
    PathBuf::from(&rest[..rest.find(": write").expect("the path ends")])
}

/// A model that makes the calls `steps` builds from the plan file it was told of, one
/// per request, then answers "done".
pub(crate) fn scripted(
    server: &MockServer,
    steps: impl Fn(&Path) -> Vec<(String, serde_json::Value)> + Send + Sync + 'static,
) {
    let steps = Arc::new(steps);
    server.respond_with(move |request| {
        let plan = told_plan_file(request);
        let done = request.tool_results().len();
        let calls = steps(&plan);
        Some(match calls.get(done) {
            Some((name, args)) => tool_reply(&format!("c{done}"), name, &args.to_string()),
            None => answer("done"),
        })
    });
}

fn run_plan(server: &MockServer, dirs: &Dirs, env: &[(&str, &str)]) -> Output {
    let mut cmd = server.binary(dirs);
    cmd.args([
        "-p",
        "plan it",
        "--approval-mode",
        "plan",
        "--output-format",
        "stream-json",
    ]);
    for (name, value) in env {
        cmd.env(name, value);
    }
    run_fed(&mut cmd, b"")
}

fn results(server: &MockServer) -> Vec<String> {
    server
        .chat_requests()
        .last()
        .map(RecordedRequest::tool_results)
        .unwrap_or_default()
}

#[test]
fn in_plan_mode_commands_write_nothing_and_only_the_plan_file_is_written() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    dirs.project_file("src/lib.rs", "fn main() {}\n");
    scripted(&server, |plan| {
        vec![
            (
                "bash".into(),
                json!({"command": "touch x; echo made > src/b; cat src/lib.rs"}),
            ),
            (
                "write_file".into(),
                json!({"path": "src/a", "content": "no"}),
            ),
            (
                "edit_file".into(),
                json!({"path": "src/lib.rs", "old_string": "main", "new_string": "x"}),
            ),
            (
                "write_file".into(),
                json!({"path": plan, "content": "1. add a cache\n"}),
            ),
        ]
    });
    let out = run_plan(&server, &dirs, &[]);
    assert_exit(&out, 0);
    let project = std::fs::canonicalize(dirs.project()).unwrap();
    let results = results(&server);
    assert_has(&results[0], &["Read-only file system", "fn main() {}"]);
    assert!(!project.join("x").exists(), "bash wrote nothing");
    assert!(!project.join("src/b").exists());
    for denied in &results[1..3] {
        assert_has(
            denied,
            &["Denied in plan mode", "plan mode writes only the plan file"],
        );
    }
    assert!(!project.join("src/a").exists());
    assert_eq!(
        std::fs::read_to_string(project.join("src/lib.rs")).unwrap(),
        "fn main() {}\n"
    );
    let plan = told_plan_file(&server.chat_requests()[0]);
    assert!(
        plan.starts_with(project.join(".harness9/plans")),
        "{}",
        plan.display()
    );
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "1. add a cache\n");
    // stream-json says the mode and the plan file; only plan mode's tools were offered.
    let events = json_lines(&out.stdout);
    let configured = events
        .iter()
        .find(|e| e["type"] == "session_configured")
        .unwrap();
    assert_eq!(configured["approval_mode"], "plan");
    assert_eq!(configured["plan_file"], plan.display().to_string());
    let denied: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "auto_denied")
        .collect();
    assert_eq!(denied.len(), 2);
    assert_eq!(denied[0]["reason"]["kind"], "plan_mode");
    let offered = server.chat_requests()[0].tool_names();
    for name in [
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "list",
        "grep",
        "bash",
    ] {
        assert!(offered.contains(&name.to_string()), "{offered:?}");
    }
}

/// A link where the plans folder would be, or at the plan file itself, redirects no
/// write: the plan goes to `$HARNESS9_HOME/plans`, and nothing lands where a link points.
#[test]
fn a_link_at_or_above_the_plan_file_redirects_nothing() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dirs.project().join(".harness9")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dirs.project().join(".harness9/plans")).unwrap();
    scripted(&server, |plan| {
        let name = plan.file_name().unwrap().to_string_lossy().into_owned();
        vec![
            // Through the link, by its written path: refused.
            (
                "write_file".into(),
                json!({"path": format!(".harness9/plans/{name}"), "content": "a"}),
            ),
            // A link the model cannot make (bash writes nothing) is not needed: the real
            // plan file takes the plan.
            (
                "write_file".into(),
                json!({"path": plan, "content": "the plan\n"}),
            ),
        ]
    });
    let out = run_plan(&server, &dirs, &[]);
    assert_exit(&out, 0);
    let plan = told_plan_file(&server.chat_requests()[0]);
    let home = std::fs::canonicalize(dirs.home()).unwrap();
    assert!(plan.starts_with(home.join("plans")), "{}", plan.display());
    assert_has(&results(&server)[0], &["Denied in plan mode"]);
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing went through the link"
    );
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "the plan\n");
}

/// A link planted at the plan file itself (by another process: the model's commands
/// cannot write) makes the edit refused, and its target stays untouched.
#[test]
fn a_link_planted_at_the_plan_file_is_refused() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim");
    write(&target, "keep\n");
    let planted = Arc::new(std::sync::Mutex::new(false));
    {
        let planted = planted.clone();
        let target = target.clone();
        scripted(&server, move |plan| {
            // Before the model's call is judged, a link stands where the plan file goes.
            let mut done = planted.lock().unwrap();
            if !*done {
                std::fs::create_dir_all(plan.parent().unwrap()).unwrap();
                std::os::unix::fs::symlink(&target, plan).unwrap();
                *done = true;
            }
            vec![(
                "write_file".into(),
                json!({"path": plan, "content": "overwritten\n"}),
            )]
        });
    }
    let out = run_plan(&server, &dirs, &[]);
    assert_exit(&out, 0);
    assert_has(&results(&server)[0], &["Denied in plan mode"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
}

/// Where no sandbox can be had, plan mode refuses commands, saying why: never unconfined.
#[test]
fn without_a_sandbox_plan_mode_refuses_commands() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    scripted(&server, |_| {
        vec![("bash".into(), json!({"command": "touch x"}))]
    });
    for env in [
        &[("HARNESS9_SANDBOX_UNAVAILABLE", "1")][..],
        &[("HARNESS9_SANDBOX", "off")][..],
    ] {
        let out = run_plan(&server, &dirs, env);
        assert_exit(&out, 0);
        if env[0].0 == "HARNESS9_SANDBOX_UNAVAILABLE" {
            assert_has(
                &results(&server)[0],
                &[
                    "plan mode runs commands only inside the read-only sandbox",
                    "not run",
                ],
            );
        } else {
            // `--sandbox off` does not widen plan mode: its own read-only sandbox holds.
            assert_has(&results(&server)[0], &["Read-only file system"]);
        }
        assert!(!dirs.project().join("x").exists());
    }
}

/// Headless: the run ends after `exit_plan` with the plan as its result (exit 0), and
/// never leaves plan mode by itself: no mode change, nothing written but the plan.
#[test]
fn headless_exit_plan_ends_the_run_with_the_plan() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    scripted(&server, |plan| {
        vec![
            (
                "write_file".into(),
                json!({"path": plan, "content": "1. read\n2. change\n"}),
            ),
            ("exit_plan".into(), json!({})),
            // Never reached: the run is over.
            (
                "write_file".into(),
                json!({"path": "src/a", "content": "no"}),
            ),
        ]
    });
    let out = run_plan(&server, &dirs, &[]);
    assert_exit(&out, 0);
    let events = json_lines(&out.stdout);
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["result"], "1. read\n2. change\n");
    assert_eq!(result["is_error"], false);
    assert!(!events.iter().any(|e| e["type"] == "approval_mode_changed"));
    assert_eq!(
        server.chat_requests().len(),
        2,
        "no request after exit_plan"
    );
    assert!(!dirs.project().join("src/a").exists());
    // exit_plan is offered in plan mode only.
    assert!(
        server.chat_requests()[0]
            .tool_names()
            .contains(&"exit_plan".to_string())
    );
}

/// Text output: the plan is what `-p` prints.
#[test]
fn headless_text_output_prints_the_plan() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    scripted(&server, |plan| {
        vec![
            (
                "write_file".into(),
                json!({"path": plan, "content": "PLAN-TEXT-41\n"}),
            ),
            ("exit_plan".into(), json!({})),
        ]
    });
    let out = run_fed(
        server
            .binary(&dirs)
            .args(["-p", "plan it", "--approval-mode", "plan", "--raw"]),
        b"",
    );
    assert_exit(&out, 0);
    assert_eq!(
        stdout_text(&out).matches("PLAN-TEXT-41").count(),
        1,
        "{}",
        stdout_text(&out)
    );
}

/// Outside plan mode neither plan mode's tools (exit_plan) nor its note are sent: the
/// request is what it was, with update_plan's (and web_fetch's) schema added.
#[test]
fn outside_plan_mode_the_request_carries_no_plan_tools() {
    let server = MockServer::start(vec![answer("hi")]);
    let dirs = Dirs::new();
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_exit(&out, 0);
    let request = &server.chat_requests()[0];
    assert_eq!(
        request.tool_names(),
        [
            "read_file",
            "view_image",
            "write_file",
            "edit_file",
            "glob",
            "list",
            "grep",
            "bash",
            "web_fetch",
            "update_plan"
        ]
    );
    assert_eq!(request.last_user_text(), "hi");
}

mod interactive {
    use harness9::protocol::{ApprovalDecision, ApprovalMode, ApprovalRequestKind, Event};
    use serde_json::json;

    use super::{scripted, told_plan_file};
    use crate::support::*;

    /// Approving `exit_plan` switches to the chosen mode, in which the edit plan mode
    /// refused now runs; keeping on planning sends the feedback and stays in plan mode.
    #[tokio::test]
    async fn approving_the_plan_switches_the_mode_and_feedback_keeps_planning() {
        let server = MockServer::start(vec![]);
        let dir = tempfile::tempdir().unwrap();
        scripted(&server, |plan| {
            vec![
                (
                    "write_file".into(),
                    json!({"path": plan, "content": "1. write src/a\n"}),
                ),
                ("exit_plan".into(), json!({})),
                ("exit_plan".into(), json!({})),
                (
                    "write_file".into(),
                    json!({"path": "src/a", "content": "done\n"}),
                ),
            ]
        });
        let mut s = SessionBuilder::new(&server, dir.path())
            .approval_mode(ApprovalMode::Plan)
            .approver(harness9::agent::Approver::Frontend)
            .start();
        s.send("plan it");
        let first = s.next_approval().await;
        let ApprovalRequestKind::Plan { text, .. } = &first.request else {
            panic!("{first:?}")
        };
        assert_eq!(text, "1. write src/a\n");
        s.decide(
            first.call_id,
            ApprovalDecision::Deny {
                reason: Some("add tests".into()),
            },
        );
        let second = s.next_approval().await;
        s.decide(
            second.call_id,
            ApprovalDecision::ApprovePlan {
                mode: ApprovalMode::AutoEdit,
            },
        );
        let changed = s
            .until(|e| matches!(e, Event::ApprovalModeChanged { .. }))
            .await;
        assert_eq!(
            changed,
            Event::ApprovalModeChanged {
                mode: ApprovalMode::AutoEdit
            }
        );
        let (_, answer) = s.until_complete().await;
        assert_eq!(answer, "done");
        let requests = server.chat_requests();
        let results = requests.last().unwrap().tool_results();
        assert!(results[1].contains("plan mode stays on") && results[1].contains("add tests"));
        assert!(
            results[2].contains("The user approved the plan"),
            "{}",
            results[2]
        );
        assert!(results[2].contains("Plan mode is off"), "{}", results[2]);
        assert!(!results[3].contains("Denied"), "{}", results[3]);
        let plan = told_plan_file(&requests[0]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("src/a")).unwrap(),
            "done\n"
        );
        assert!(plan.exists());
        // Once approved, the requests offer every tool again, and exit_plan no more.
        assert!(
            !requests
                .last()
                .unwrap()
                .tool_names()
                .contains(&"exit_plan".to_string())
        );
    }
}

/// The REPL in a pipe: `/plan TASK` enters plan mode and sends the task; nobody can
/// approve there, so the turn ends with the plan printed, and the next line is still
/// planned (the mode did not widen).
#[test]
fn the_repl_enters_plan_mode_with_slash_plan_and_prints_the_plan() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    scripted(&server, |plan| {
        vec![
            (
                "write_file".into(),
                json!({"path": plan, "content": "REPL-PLAN-7\n"}),
            ),
            ("exit_plan".into(), json!({})),
            (
                "write_file".into(),
                json!({"path": "src/a", "content": "no"}),
            ),
        ]
    });
    let out = run_fed(&mut server.binary(&dirs), b"/plan add a cache\nnow do it\n");
    assert_exit(&out, 0);
    assert_has(&stdout_text(&out), &["REPL-PLAN-7"]);
    let requests = server.chat_requests();
    assert!(requests[0].last_user_text().ends_with("add a cache"));
    assert!(requests[0].last_user_text().contains("Plan mode is on"));
    // The second line: still plan mode, so the edit is refused.
    assert_has(
        &requests.last().unwrap().tool_results().join("\n"),
        &["Denied in plan mode"],
    );
    assert!(!dirs.project().join("src/a").exists());
}
