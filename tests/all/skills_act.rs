//! Skills that act, end to end through the agent: `/name` invocations with inline shell
//! (on, off, failing, never for remote roots) and forked skills (a sub-agent with its own
//! conversation, limited to the skill's allowed tools, whose final answer alone returns).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::support::*;
use harness9::protocol::ApprovalMode;
use harness9::protocol::{ErrorKind, Event, Op, TurnOutcome};
use serde_json::Value;

/// A skill in `{root}/skills/{name}` described as "The {name} skill".
fn write_skill(root: &Path, name: &str, extra: &str, body: &str) {
    skill(
        &root.join("skills"),
        name,
        &format!("The {name} skill"),
        extra,
        body,
    );
}

/// A project folder holding the skill `name` (see [`write_skill`]).
fn project_with_skill(name: &str, extra: &str, body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), name, extra, body);
    dir
}

/// A session in `workdir` with `max_retries = 0` and this approval mode.
fn start(server: &MockServer, workdir: &Path, mode: ApprovalMode) -> Session {
    SessionBuilder::new(server, workdir)
        .config_toml("max_retries = 0\n")
        .approval_mode(mode)
        .start()
}

fn user_messages(request: &RecordedRequest) -> Vec<String> {
    request
        .messages()
        .into_iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn inline_shell_runs_in_full_auto() {
    let dir = project_with_skill("status", "", "State: !`cat marker.txt`\nTask: $ARGUMENTS\n");
    std::fs::write(dir.path().join("marker.txt"), "from the project\n").unwrap();
    let server = MockServer::start(vec![]);
    let mut s = start(&server, dir.path(), ApprovalMode::FullAuto);
    let (outcome, _) = s.invoke("status", "check it").await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let users = user_messages(&server.chat_requests()[0]);
    assert_eq!(users, ["State: from the project\nTask: check it"]);
}

#[tokio::test]
async fn inline_shell_is_a_notice_when_the_mode_does_not_allow_commands() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    write_skill(
        dir.path(),
        "status",
        "",
        &format!("State: !`touch {}`\n", marker.display()),
    );
    let server = MockServer::start(vec![]);
    let mut s = start(&server, dir.path(), ApprovalMode::Suggest);
    let (outcome, _) = s.invoke("status", "").await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(!marker.exists(), "the command must not run in suggest mode");
    let users = user_messages(&server.chat_requests()[0]);
    assert!(
        users[0].contains("not run: approval mode suggest does not allow commands"),
        "{users:?}"
    );
}

#[tokio::test]
async fn a_failing_inline_command_aborts_the_invocation() {
    let dir = project_with_skill("broken", "", "Data: !`exit 7`\n");
    let server = MockServer::start(vec![]);
    let mut s = start(&server, dir.path(), ApprovalMode::FullAuto);
    let (outcome, _) = s.invoke("broken", "").await;
    let TurnOutcome::Failed { kind, message } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(kind, ErrorKind::Skill);
    assert_has(&message, &["exit 7", "exit code 7"]);
    assert!(
        server.chat_requests().is_empty(),
        "nothing is sent to the model"
    );
}

#[tokio::test]
async fn a_forked_skill_runs_in_a_sub_agent_and_only_its_answer_returns() {
    let dir = project_with_skill(
        "research",
        "context: fork\nallowed-tools: Read, Grep\n",
        "You are a researcher. Answer from the files.\n",
    );
    std::fs::write(dir.path().join("notes.txt"), "the secret is 42\n").unwrap();
    let server = MockServer::start(vec![
        // The sub-agent reads a file, then tries bash (not allowed), then answers.
        tool_reply("r", "read_file", r#"{"path":"notes.txt"}"#),
        tool_reply("b", "bash", r#"{"command":"echo escape"}"#),
        answer("The secret is 42."),
        // Then the main conversation goes on.
        answer("Noted."),
    ]);
    let mut s = start(&server, dir.path(), ApprovalMode::FullAuto);
    let (outcome, answer) = s.invoke("research", "what is the secret?").await;
    assert_eq!(
        (outcome, answer.as_str()),
        (TurnOutcome::Completed, "The secret is 42.")
    );

    let reqs = server.chat_requests();
    let sub = reqs[0].messages();
    assert_eq!(sub[0]["role"], "system");
    assert_eq!(
        sub[0]["content"],
        "You are a researcher. Answer from the files."
    );
    assert_eq!(sub[1]["content"], "what is the secret?");
    assert_eq!(reqs[0].tool_names(), ["read_file", "grep"]);
    let refused: Vec<Value> = reqs[2]
        .messages()
        .into_iter()
        .filter(|m| m["tool_call_id"] == "b")
        .collect();
    assert!(
        refused[0]["content"]
            .as_str()
            .unwrap()
            .contains("unknown tool 'bash'")
    );

    // The sub-agent's events are wrapped; the main conversation only gets the answer.
    assert!(s.events.iter().any(|e| matches!(e,
        Event::SubAgent { skill, event, .. } if skill == "research" && matches!(event.event(), Event::ToolCallBegin { name, .. } if name == "read_file"))));
    s.op(Op::typed("thanks"));
    s.until_complete().await;
    let main = server.chat_requests()[3].messages();
    let roles: Vec<&str> = main.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(main[1]["content"], "/research what is the secret?");
    assert_eq!(main[2]["content"], "The secret is 42.");
    assert!(
        !main[0]["content"]
            .as_str()
            .unwrap()
            .contains("You are a researcher")
    );
}

#[tokio::test]
async fn the_model_can_run_a_forked_skill_and_gets_only_its_answer() {
    let dir = project_with_skill(
        "summarize",
        "context: fork\n",
        "Summarize what you are given in one line.\n",
    );
    write_skill(dir.path(), "other", "context: fork\n", "Never reached.\n");
    let server = MockServer::start(vec![
        // Main conversation: the model runs the forked skill.
        tool_reply(
            "u1",
            "use_skill",
            r#"{"skill_name":"summarize","args":"a long text"}"#,
        ),
        // The sub-agent tries to fork again (use_skill is not among its tools), then answers.
        use_skill_reply("n", "other"),
        answer("A short summary."),
        // Main conversation again.
        answer("Here it is."),
    ]);
    let mut s = start(&server, dir.path(), ApprovalMode::Suggest);
    s.op(Op::typed("summarize it"));
    let (outcome, answer) = s.until_complete().await;
    assert_eq!(
        (outcome, answer.as_str()),
        (TurnOutcome::Completed, "Here it is.")
    );
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(
        reqs[1].messages()[0]["content"],
        "Summarize what you are given in one line."
    );
    assert_eq!(reqs[1].messages()[1]["content"], "a long text");
    let sub_tools = reqs[1].tool_names();
    assert!(
        !sub_tools.contains(&"use_skill".to_string()),
        "{sub_tools:?}"
    );
    assert!(
        reqs[2]
            .tool_result("n")
            .contains("unknown tool 'use_skill'")
    );
    let result = reqs[3]
        .messages()
        .into_iter()
        .find(|m| m["tool_call_id"] == "u1")
        .unwrap();
    let result = result["content"].as_str().unwrap();
    assert!(
        result.contains("A short summary.") && !result.contains("Summarize what"),
        "{result}"
    );
    // The main conversation never saw the sub-agent's own messages.
    assert_eq!(
        reqs[3].messages().len(),
        4,
        "system, user, assistant call, tool result"
    );
}

#[tokio::test]
async fn use_skill_expands_inline_commands_in_full_auto() {
    let dir = project_with_skill("branch", "", "Current branch: !`echo main-branch`\n");
    let server = MockServer::start(vec![use_skill_reply("u", "branch"), answer("ok")]);
    let mut s = start(&server, dir.path(), ApprovalMode::FullAuto);
    s.op(Op::typed("go"));
    s.until_complete().await;
    let result = server.chat_requests()[1]
        .messages()
        .into_iter()
        .find(|m| m["tool_call_id"] == "u")
        .unwrap();
    let content = result["content"].as_str().unwrap();
    assert!(content.contains("Current branch: main-branch"), "{content}");
}

#[tokio::test]
async fn a_slash_invoked_skill_brings_its_bundled_tools() {
    let dir = project_with_skill("stamp", "", "Use the stamp tool.\n");
    std::fs::write(
        dir.path().join("skills/stamp/tools.json"),
        r#"[{"name":"stamp_file","description":"Stamps a file","parameters":{"type":"object","properties":{}},"command":"cat"}]"#,
    )
    .unwrap();
    let server = MockServer::start(vec![]);
    let mut s = start(&server, dir.path(), ApprovalMode::Suggest);
    s.invoke("stamp", "").await;
    let names = server.chat_requests()[0].tool_names();
    assert!(names.contains(&"stamp_file".to_string()), "{names:?}");
}

#[tokio::test]
async fn a_broken_tools_json_is_a_warning_for_the_user_and_the_body_still_loads() {
    let dir = project_with_skill("broken-tools", "", "Body still loads.\n");
    std::fs::write(
        dir.path().join("skills/broken-tools/tools.json"),
        "[{not json",
    )
    .unwrap();
    let server = MockServer::start(vec![use_skill_reply("u", "broken-tools"), answer("ok")]);
    let mut s = start(&server, dir.path(), ApprovalMode::Suggest);
    s.op(Op::typed("go"));
    s.until_complete().await;
    let warning = s.events.iter().find_map(|e| match e {
        Event::Warning { message } => Some(message.clone()),
        _ => None,
    });
    let warning = warning.expect("a warning event");
    assert_has(&warning, &["broken-tools", "tools.json"]);
    let result = server.chat_requests()[1]
        .messages()
        .into_iter()
        .find(|m| m["tool_call_id"] == "u")
        .unwrap();
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("Body still loads.")
    );
}
