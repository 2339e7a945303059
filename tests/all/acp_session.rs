//! `harness9 acp`'s sessions driven over pipes as an editor drives them: the editor's
//! `cwd` is the session's project (not the directory the process started in), the
//! editor's MCP servers are used beside the configured ones.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::acp::{Acp, initialize};
use crate::support::*;

/// `harness9 acp` started in `started_in`, not in the project.
fn start_in(server: &MockServer, dirs: &Dirs, started_in: &std::path::Path) -> Acp {
    Acp::spawn(server.binary(dirs).arg("acp").current_dir(started_in))
}

/// Opens a session in `cwd` with `servers`; its id.
fn open(acp: &mut Acp, id: u64, cwd: &std::path::Path, servers: Value) -> String {
    acp.request(
        id,
        "session/new",
        json!({"cwd": cwd, "mcpServers": servers}),
    );
    let (_, answer) = acp.until_answer(id);
    answer["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {answer}"))
        .to_string()
}

fn prompt(acp: &mut Acp, id: u64, session: &str, text: &str) {
    acp.request(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    );
}

#[test]
fn the_editors_cwd_is_the_project_whatever_directory_harness9_started_in() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    dirs.project_file("notes.txt", "the project's word is gazpacho\n");
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("notes.txt"), "the wrong word\n").unwrap();
    server.push(tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#));
    server.push(answer("gazpacho"));
    let mut acp = start_in(&server, &dirs, elsewhere.path());
    let init = initialize(&mut acp);
    assert_eq!(
        init["result"]["agentCapabilities"]["mcpCapabilities"]["http"], true,
        "{init}"
    );
    let session = open(&mut acp, 2, dirs.project(), json!([]));
    prompt(&mut acp, 3, &session, "read notes.txt");
    let (_, reply) = acp.until_answer(3);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    let result = server.chat_requests()[1].tool_result("c1");
    assert!(result.contains("gazpacho"), "{result}");
    assert!(!result.contains("wrong"), "{result}");
    // The project's instructions reached the model too: the prompt names the project.
    let system = server.chat_requests()[0].message_text(0);
    assert!(
        system.contains(&dirs.project().display().to_string()),
        "{system}"
    );
    assert_eq!(acp.close().code(), Some(0));
}

#[test]
fn an_mcp_server_the_editor_gives_is_used_beside_the_configured_ones() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    server.push(use_skill_reply("c1", "mcp:editorfx"));
    server.push(tool_reply("c2", "mcp__editorfx__echo", r#"{"text":"hi"}"#));
    server.push(answer("done"));
    let mut acp = Acp::start(&server, &dirs);
    initialize(&mut acp);
    let fixture = mcp_fixture();
    let session = open(
        &mut acp,
        2,
        dirs.project(),
        json!([{"name": "editorfx", "command": fixture, "args": [], "env": []}]),
    );
    prompt(&mut acp, 3, &session, "echo hi");
    // Calling an MCP tool asks, as any server's would.
    let lines = acp.until(|l| l["method"] == "session/request_permission");
    let ask = lines.last().unwrap();
    assert!(
        ask["params"]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("mcp__editorfx__echo"),
        "{ask}"
    );
    acp.send(json!({
        "jsonrpc": "2.0",
        "id": ask["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    }));
    let (_, reply) = acp.until_answer(3);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    let requests = server.chat_requests();
    assert_eq!(requests[2].tool_result("c2"), "echo: hi");
    // The server was in the index the model saw from the start.
    assert!(
        requests[0].message_text(0).contains("mcp:editorfx"),
        "{}",
        requests[0].message_text(0)
    );
    assert_eq!(acp.close().code(), Some(0));
}

#[test]
fn a_saved_session_is_loaded_replayed_then_continued() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    server.push(tool_reply(
        "p1",
        "update_plan",
        &json!({"items": [{"step": "remember", "status": "in_progress"}]}).to_string(),
    ));
    server.push(tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#));
    server.push(answer("noted: gazpacho"));
    dirs.project_file("notes.txt", "gazpacho\n");
    let mut acp = Acp::start(&server, &dirs);
    let init = initialize(&mut acp);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    let session = open(&mut acp, 2, dirs.project(), json!([]));
    prompt(&mut acp, 3, &session, "remember the word");
    acp.until_answer(3);
    assert_eq!(acp.close().code(), Some(0));

    // Another process loads it: the history first, then the answer, then more.
    server.push(answer("it was gazpacho"));
    let mut acp = Acp::start(&server, &dirs);
    initialize(&mut acp);
    acp.request(
        4,
        "session/load",
        json!({"sessionId": session, "cwd": dirs.project(), "mcpServers": []}),
    );
    let (lines, reply) = acp.until_answer(4);
    assert!(reply.get("error").is_none(), "{reply}");
    let replayed: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["method"] == "session/update" && l["params"]["sessionId"] == session)
        .map(|l| {
            let u = &l["params"]["update"];
            let text = u["content"]["text"]
                .as_str()
                .or(u["title"].as_str())
                .or(u["entries"][0]["content"].as_str())
                .unwrap_or_default();
            (
                u["sessionUpdate"].as_str().unwrap().to_string(),
                text.to_string(),
            )
        })
        .collect();
    let kinds: Vec<&str> = replayed.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call",
            "agent_message_chunk"
        ],
        "{lines:#?}"
    );
    assert_eq!(replayed[0].1, "remember the word");
    assert!(replayed[1].1.starts_with("update_plan"), "{replayed:?}");
    assert!(replayed[2].1.starts_with("read_file"), "{replayed:?}");
    assert_eq!(replayed[3].1, "noted: gazpacho");
    // The saved plan is shown again too.
    let plan = acp.until(|l| l["params"]["update"]["sessionUpdate"] == "plan");
    let plan = &plan.last().unwrap()["params"]["update"]["entries"][0];
    assert_eq!(plan["content"], "remember", "{plan}");

    prompt(&mut acp, 5, &session, "which word was it?");
    let (_, reply) = acp.until_answer(5);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    // The model got the earlier conversation with the new message.
    let last = server.chat_requests().pop().unwrap();
    let body = last.body.to_string();
    assert!(body.contains("remember the word"), "{body}");
    assert!(body.contains("noted: gazpacho"), "{body}");
    assert!(body.contains("which word was it?"), "{body}");

    // A session that does not exist is refused, and nothing is replayed.
    acp.request(
        6,
        "session/load",
        json!({"sessionId": "no-such-session", "cwd": dirs.project(), "mcpServers": []}),
    );
    let (lines, bad) = acp.until_answer(6);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(lines.is_empty(), "{lines:#?}");
    assert_eq!(acp.close().code(), Some(0));
}

#[test]
fn without_an_endpoint_a_session_is_refused_with_what_to_set() {
    let dirs = Dirs::new();
    let mut acp = Acp::spawn(
        harness9_cli(dirs.home(), dirs.project())
            .arg("acp")
            .current_dir(dirs.project()),
    );
    let init = initialize(&mut acp);
    assert_eq!(init["result"]["authMethods"], json!([]), "{init}");
    acp.request(
        2,
        "session/new",
        json!({"cwd": dirs.project(), "mcpServers": []}),
    );
    let (_, bad) = acp.until_answer(2);
    assert_eq!(bad["error"]["code"], -32000, "{bad}");
    let message = bad["error"]["message"].as_str().unwrap();
    assert!(message.contains("OPENAI_API_KEY"), "{message}");
    acp.request(3, "authenticate", json!({"methodId": "anything"}));
    let (_, bad) = acp.until_answer(3);
    let message = bad["error"]["message"].as_str().unwrap();
    assert!(message.contains("OPENAI_API_KEY"), "{bad}");
    assert_eq!(acp.close().code(), Some(0));
}

/// The ids of the modes a `session/new` answer offers, and the one in force.
fn modes_of(answer: &Value) -> (Vec<String>, String) {
    let modes = &answer["result"]["modes"];
    let ids = modes["availableModes"]
        .as_array()
        .unwrap_or_else(|| panic!("no modes: {answer}"))
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    (ids, modes["currentModeId"].as_str().unwrap().to_string())
}

#[test]
fn set_mode_changes_what_asks() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    let write = |id: &str, name: &str| {
        tool_reply(
            id,
            "write_file",
            &json!({"path": name, "content": "x\n"}).to_string(),
        )
    };
    server.push(write("c1", "first.txt"));
    server.push(answer("refused"));
    server.push(write("c2", "second.txt"));
    server.push(answer("written"));
    let mut acp = Acp::start(&server, &dirs);
    initialize(&mut acp);
    acp.request(
        2,
        "session/new",
        json!({"cwd": dirs.project(), "mcpServers": []}),
    );
    let (_, opened) = acp.until_answer(2);
    let (ids, current) = modes_of(&opened);
    assert_eq!(ids, ["suggest", "auto-edit", "full-auto", "plan"]);
    assert_eq!(current, "suggest");
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();

    // In suggest, an edit asks (and is rejected here).
    prompt(&mut acp, 3, &session, "write first");
    let lines = acp.until(|l| l["method"] == "session/request_permission");
    let ask = lines.last().unwrap();
    acp.send(json!({
        "jsonrpc": "2.0",
        "id": ask["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "reject"}},
    }));
    acp.until_answer(3);
    assert!(!dirs.project().join("first.txt").exists());

    // An unknown mode is refused; auto-edit is taken and said.
    acp.request(
        4,
        "session/set_mode",
        json!({"sessionId": session, "modeId": "yolo"}),
    );
    let (_, bad) = acp.until_answer(4);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    acp.request(
        5,
        "session/set_mode",
        json!({"sessionId": session, "modeId": "auto-edit"}),
    );
    let (_, set) = acp.until_answer(5);
    assert!(set.get("error").is_none(), "{set}");
    acp.until(|l| {
        l["params"]["update"]["sessionUpdate"] == "current_mode_update"
            && l["params"]["update"]["currentModeId"] == "auto-edit"
    });

    // Now the same edit runs without asking.
    prompt(&mut acp, 6, &session, "write second");
    let (lines, reply) = acp.until_answer(6);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    assert!(
        !lines
            .iter()
            .any(|l| l["method"] == "session/request_permission"),
        "{lines:#?}"
    );
    assert!(dirs.project().join("second.txt").is_file());
    assert_eq!(acp.close().code(), Some(0));
}

#[test]
fn a_plan_is_approved_over_request_permission_with_the_mode_to_carry_it_out() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    super::plan_mode::scripted(&server, |plan| {
        vec![
            (
                "write_file".into(),
                json!({"path": plan, "content": "1. write src/a\n"}),
            ),
            ("exit_plan".into(), json!({})),
            (
                "write_file".into(),
                json!({"path": "src/a", "content": "done\n"}),
            ),
        ]
    });
    let mut acp = Acp::spawn(
        server
            .binary(&dirs)
            .args(["acp", "--approval-mode", "plan"]),
    );
    initialize(&mut acp);
    acp.request(
        2,
        "session/new",
        json!({"cwd": dirs.project(), "mcpServers": []}),
    );
    let (_, opened) = acp.until_answer(2);
    assert_eq!(modes_of(&opened).1, "plan");
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    prompt(&mut acp, 3, &session, "plan it");
    let lines = acp.until(|l| l["method"] == "session/request_permission");
    let ask = lines.last().unwrap();
    assert_eq!(ask["params"]["toolCall"]["kind"], "switch_mode", "{ask}");
    assert_eq!(
        ask["params"]["toolCall"]["content"][0]["content"]["text"], "1. write src/a\n",
        "{ask}"
    );
    let options: Vec<&str> = ask["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        [
            "plan_auto_edit",
            "plan_full_auto",
            "plan_suggest",
            "keep_planning"
        ]
    );
    acp.send(json!({
        "jsonrpc": "2.0",
        "id": ask["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "plan_auto_edit"}},
    }));
    let (lines, reply) = acp.until_answer(3);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    assert!(
        lines.iter().any(|l| {
            l["params"]["update"]["sessionUpdate"] == "current_mode_update"
                && l["params"]["update"]["currentModeId"] == "auto-edit"
        }),
        "{lines:#?}"
    );
    // Carried out in auto-edit: the edit ran without asking.
    assert_eq!(
        std::fs::read_to_string(dirs.project().join("src/a")).unwrap(),
        "done\n"
    );
    assert_eq!(acp.close().code(), Some(0));
}

#[test]
fn skills_arrive_as_commands_and_a_slash_prompt_runs_as_typed() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    skill(
        &dirs.project().join("skills"),
        "greet",
        "Greet someone",
        "argument-hint: \"[name]\"\n",
        "Greet $ARGUMENTS like a pirate.\n",
    );
    server.push(answer("Ahoy, Ann"));
    let mut acp = Acp::start(&server, &dirs);
    initialize(&mut acp);
    let session = open(&mut acp, 2, dirs.project(), json!([]));
    let lines =
        acp.until(|l| l["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let offered = &lines.last().unwrap()["params"];
    assert_eq!(offered["sessionId"], session);
    let commands = offered["update"]["availableCommands"].as_array().unwrap();
    let greet = commands
        .iter()
        .find(|c| c["name"] == "greet")
        .unwrap_or_else(|| panic!("{commands:#?}"));
    assert_eq!(greet["description"], "Greet someone");
    assert_eq!(greet["input"]["hint"], "[name]");
    for builtin in ["init", "plan", "compact", "clear", "status"] {
        assert!(
            commands.iter().any(|c| c["name"] == builtin),
            "{builtin}: {commands:#?}"
        );
    }
    assert!(
        !commands.iter().any(|c| c["name"] == "help"),
        "{commands:#?}"
    );

    // `/greet Ann` runs the skill as typed `/greet Ann` would.
    prompt(&mut acp, 3, &session, "/greet Ann");
    let (_, reply) = acp.until_answer(3);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    let sent = server.chat_requests()[0].message_text(1);
    assert!(sent.contains("Greet Ann like a pirate."), "{sent}");

    // `/status` answers as the agent's message, with no model request.
    prompt(&mut acp, 4, &session, "/status");
    let (lines, reply) = acp.until_answer(4);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    let said: String = lines
        .iter()
        .filter(|l| l["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|l| l["params"]["update"]["content"]["text"].as_str().unwrap())
        .collect();
    assert!(
        said.contains("approvals") || said.contains("model"),
        "{said}"
    );
    // A built-in that needs a terminal is refused.
    prompt(&mut acp, 5, &session, "/help");
    let (_, bad) = acp.until_answer(5);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(server.chat_requests().len(), 1);
    assert_eq!(acp.close().code(), Some(0));
}

#[test]
fn update_plan_arrives_as_a_plan_update() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    server.push(tool_reply(
        "p1",
        "update_plan",
        &json!({"items": [
            {"step": "read the parser", "status": "done"},
            {"step": "add a cache", "status": "in_progress"},
            {"step": "test it", "status": "pending"}
        ]})
        .to_string(),
    ));
    server.push(answer("working"));
    let mut acp = Acp::start(&server, &dirs);
    initialize(&mut acp);
    let session = open(&mut acp, 2, dirs.project(), json!([]));
    prompt(&mut acp, 3, &session, "plan a cache");
    let (lines, reply) = acp.until_answer(3);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    let plans: Vec<&Value> = lines
        .iter()
        .filter(|l| l["params"]["update"]["sessionUpdate"] == "plan")
        .map(|l| &l["params"]["update"]["entries"])
        .collect();
    assert_eq!(plans.len(), 1, "{lines:#?}");
    let entries: Vec<(&str, &str)> = plans[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("read the parser", "completed"),
            ("add a cache", "in_progress"),
            ("test it", "pending")
        ]
    );
    assert_eq!(acp.close().code(), Some(0));
}
