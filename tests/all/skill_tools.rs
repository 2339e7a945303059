//! A skill's bundled tools end to end: a real session against the scripted server. The
//! model loads a skill that has a `tools.json`, the next request lists its tool, the
//! model calls it (full-auto approval) and gets the command's output, then unloads the
//! skill and the tool leaves the list; the system prompt stays byte-identical.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;

use crate::support::*;
use harness9::protocol::ApprovalMode;
use harness9::protocol::{Op, TurnOutcome};
use serde_json::Value;

fn last_tool_result(request: &RecordedRequest) -> String {
    let msgs = request.messages();
    let m: &Value = msgs.iter().rev().find(|m| m["role"] == "tool").unwrap();
    m["content"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_skill_tool_joins_after_use_skill_runs_and_leaves_after_unload_skill() {
    let project = tempfile::tempdir().unwrap();
    let calc = project_skill(project.path(), "calc", "Adds numbers", "Call calc_add.\n");
    let script = calc.join("scripts/add.sh");
    write(
        &script,
        "#!/bin/sh\nread -r args\necho \"calc got $args in $(basename \"$PWD\")\"\n",
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(
        &calc.join("tools.json"),
        r#"[{"name": "calc_add", "description": "Add two numbers.", "command": "scripts/add.sh",
             "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}]"#,
    );

    let server = MockServer::start(vec![
        use_skill_reply("c1", "calc"),
        tool_reply("c2", "calc_add", r#"{"a":2,"b":3}"#),
        tool_reply("c3", "unload_skill", r#"{"skill_name":"calc"}"#),
        answer("done"),
    ]);

    let mut s = SessionBuilder::new(&server, project.path())
        .approval_mode(ApprovalMode::FullAuto)
        .start();
    let (outcome, _) = s.turn("add 2 and 3").await;
    assert!(matches!(outcome, TurnOutcome::Completed), "{outcome:?}");

    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 4);
    // 1: before use_skill, no calc_add; 2: after it, calc_add is last; 3: still there
    // (the call); 4: after unload_skill, gone.
    let before = reqs[0].tool_names();
    assert!(before.contains(&"use_skill".to_string()), "{before:?}");
    assert!(before.contains(&"unload_skill".to_string()), "{before:?}");
    assert!(!before.contains(&"calc_add".to_string()));
    let after_load = reqs[1].tool_names();
    assert_eq!(after_load.last().unwrap(), "calc_add");
    assert_eq!(&after_load[..after_load.len() - 1], &before[..]);
    let spec = reqs[1].body["tools"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(spec["function"]["description"], "Add two numbers.");
    assert_eq!(
        spec["function"]["parameters"]["required"],
        serde_json::json!(["a", "b"])
    );
    let loaded = last_tool_result(&reqs[1]);
    assert!(
        loaded.contains("<skill-loaded name=\"calc\">\nCall calc_add.\n</skill-loaded>")
            && loaded.contains("Tools added by this skill")
            && loaded.contains("calc_add"),
        "{loaded}"
    );
    assert!(reqs[2].tool_names().contains(&"calc_add".to_string()));
    assert_eq!(
        last_tool_result(&reqs[2]),
        "calc got {\"a\":2,\"b\":3} in calc\n"
    );
    assert_eq!(reqs[3].tool_names(), before);
    assert!(
        last_tool_result(&reqs[3])
            .starts_with("Unloaded skill \"calc\". Removed its tools: calc_add"),
        "{}",
        last_tool_result(&reqs[3])
    );

    let system = reqs[0].message_text(0);
    assert!(system.contains("- calc: Adds numbers"), "{system}");
    for r in &reqs {
        assert_eq!(r.message_text(0), system);
    }
    s.op(Op::Shutdown);
}
