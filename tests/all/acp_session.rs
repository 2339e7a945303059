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
