//! Artifacts through the real binary: a skill run saves an output as an artifact in a
//! `-p` run, `harness9 artifacts list|get` show it, and the next run, resuming the
//! session with `-c`, reads it back as an `artifact://` input — the artifact survived
//! the end of the process and the resume. A name the session never saved is a usage
//! error naming what it has.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::*;

fn skill_run_call(args: serde_json::Value) -> Reply {
    sse(vec![
        tool_call(0, "c1", "skill_run", &args.to_string()),
        finish("tool_calls"),
    ])
}

#[test]
fn an_artifact_saved_in_one_run_is_read_back_after_a_resume() {
    let dirs = Dirs::new();
    project_skill(dirs.project(), "plotter", "Makes charts", "Body\n");
    let server = MockServer::start(vec![
        skill_run_call(serde_json::json!({
            "skill": "plotter",
            "command": "printf 'v1 chart' > \"$OUTPUT_DIR/chart.txt\"",
            "outputs": {"globs": ["out/*"], "save": true}
        })),
        sse(vec![text("saved"), finish("stop")]),
        skill_run_call(serde_json::json!({
            "skill": "plotter",
            "command": "cat \"$WORK_DIR/inputs/chart.txt\"",
            "inputs": [{"from": "artifact://chart.txt"}]
        })),
        sse(vec![text("read"), finish("stop")]),
    ]);
    let run = |args: &[&str]| server.run(&dirs, args);
    let first = run(&["-p", "make a chart", "--approval-mode", "full-auto"]);
    assert_exit(&first, 0);
    let saved = server.chat_requests()[1].tool_results().join("\n");
    assert!(
        saved.contains(r#""artifact_files":[{"name":"chart.txt","version":1}]"#),
        "{saved}"
    );

    let list = run(&["artifacts", "list", "--json"]);
    assert_exit(&list, 0);
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(listed[0]["name"], "chart.txt");
    assert_eq!(listed[0]["version"], 1);
    let got = run(&["artifacts", "get", "chart.txt@1"]);
    assert_exit(&got, 0);
    assert_eq!(got.stdout, b"v1 chart");

    let second = run(&["-c", "-p", "use the chart", "--approval-mode", "full-auto"]);
    assert_exit(&second, 0);
    let read = server.chat_requests()[3].tool_results().join("\n");
    assert!(read.contains(r#""stdout":"v1 chart""#), "{read}");

    let missing = run(&["artifacts", "get", "nope.txt"]);
    assert_eq!(missing.status.code(), Some(2), "{missing:?}");
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("no artifact nope.txt in this session (saved: chart.txt)"),
        "{err}"
    );
}
