//! `harness9 acp` driven over pipes as an editor drives it: `initialize`, `session/new`
//! in the project, a `session/prompt` whose model reads a file (the tool call and its
//! update stream as `session/update` notifications, the prompt ends with `end_turn`), a
//! second prompt cancelled mid-answer (`cancelled`), and hostile input (not JSON,
//! unknown methods, a line over the cap, a wrong directory) answered with JSON-RPC
//! errors while the server goes on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

pub(super) const DEADLINE: Duration = Duration::from_secs(30);

/// A running `harness9 acp` with its pipes.
pub(super) struct Acp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Acp {
    pub(super) fn start(server: &MockServer, dirs: &Dirs) -> Acp {
        Acp::spawn(server.binary(dirs).arg("acp"))
    }

    /// Starts `command` (a `harness9 acp`) with its pipes.
    pub(super) fn spawn(command: &mut std::process::Command) -> Acp {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Acp {
            child,
            stdin,
            lines,
        }
    }

    pub(super) fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(super) fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    pub(super) fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// Every line up to and including the answer to request `id`.
    pub(super) fn until_answer(&mut self, id: u64) -> (Vec<Value>, Value) {
        let deadline = Instant::now() + DEADLINE;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {id}; saw {before:#?}"));
            if line.get("id") == Some(&json!(id)) && line.get("method").is_none() {
                return (before, line);
            }
            before.push(line);
        }
    }

    /// Lines until one satisfies `done` (returned too).
    pub(super) fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + DEADLINE;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("never came; saw {seen:#?}"));
            let stop = done(&line);
            seen.push(line);
            if stop {
                return seen;
            }
        }
    }

    /// Closes stdin and waits for the exit status.
    pub(super) fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "harness9 acp did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn initialize(acp: &mut Acp) -> Value {
    acp.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    acp.until_answer(1).1
}

pub(super) fn new_session(acp: &mut Acp, dirs: &Dirs) -> String {
    acp.request(
        2,
        "session/new",
        json!({"cwd": dirs.project(), "mcpServers": []}),
    );
    let (_, answer) = acp.until_answer(2);
    answer["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {answer}"))
        .to_string()
}

pub(super) fn updates<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["method"] == "session/update")
        .map(|l| &l["params"]["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

#[test]
fn an_editor_initializes_prompts_through_a_tool_call_and_cancels() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    dirs.project_file("notes.txt", "the secret word is gazpacho\n");
    server.push(tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#));
    server.push(answer("The word is gazpacho."));
    let mut acp = Acp::start(&server, &dirs);

    let init = initialize(&mut acp);
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    assert_eq!(init["result"]["agentInfo"]["name"], "harness9", "{init}");
    let session = new_session(&mut acp, &dirs);

    acp.request(
        3,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "what is the word?"}]}),
    );
    let (lines, answer) = acp.until_answer(3);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let calls = updates(&lines, "tool_call");
    assert_eq!(calls.len(), 1, "{lines:#?}");
    assert_eq!(calls[0]["toolCallId"], "c1");
    assert_eq!(calls[0]["kind"], "read");
    let ends = updates(&lines, "tool_call_update");
    assert_eq!(ends.len(), 1, "{lines:#?}");
    assert_eq!(ends[0]["toolCallId"], "c1");
    assert_eq!(ends[0]["status"], "completed", "{lines:#?}");
    let said: String = updates(&lines, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(said, "The word is gazpacho.");
    // The model really got the file through the tool.
    let requests = server.chat_requests();
    assert!(
        requests[1].tool_result("c1").contains("gazpacho"),
        "{:?}",
        requests[1].tool_results()
    );

    // A second prompt whose answer stalls after its first piece: cancelled.
    server.push(sse(vec![text("Thinking about it")]).stall_after(1));
    acp.request(
        4,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}),
    );
    acp.until(|l| {
        l["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            && l["params"]["update"]["content"]["text"] == "Thinking about it"
    });
    acp.send(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (_, answer) = acp.until_answer(4);
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");

    let status = acp.close();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn hostile_input_gets_json_rpc_errors_and_the_server_goes_on() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut acp = Acp::start(&server, &dirs);

    acp.send_raw(b"{this is not json");
    let (_, bad) = acp.until_answer_null();
    assert_eq!(bad["error"]["code"], -32700, "{bad}");
    acp.send_raw(&[0xff, 0xfe, b'{']);
    let (_, bad) = acp.until_answer_null();
    assert_eq!(bad["error"]["code"], -32700, "{bad}");
    // A line over the 16 MiB cap is skipped whole, never held.
    let mut huge =
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":\"".to_vec();
    huge.resize(17 * 1024 * 1024, b'a');
    acp.send_raw(&huge);
    let (_, bad) = acp.until_answer_null();
    assert_eq!(bad["error"]["code"], -32600, "{bad}");
    acp.request(5, "fs/delete_everything", json!({}));
    let (_, bad) = acp.until_answer(5);
    assert_eq!(bad["error"]["code"], -32601, "{bad}");
    acp.request(6, "session/new", json!({"cwd": 7}));
    let (_, bad) = acp.until_answer(6);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // A relative or missing directory is refused.
    for (id, cwd) in [(61, json!("project")), (62, json!("./")), (63, json!(""))] {
        acp.request(id, "session/new", json!({"cwd": cwd, "mcpServers": []}));
        let (_, bad) = acp.until_answer(id);
        assert_eq!(bad["error"]["code"], -32602, "{cwd}: {bad}");
    }
    acp.request(
        7,
        "session/new",
        json!({"cwd": elsewhere.path().join("missing"), "mcpServers": []}),
    );
    let (_, bad) = acp.until_answer(7);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    acp.request(
        8,
        "session/prompt",
        json!({"sessionId": "nobody", "prompt": [{"type": "text", "text": "hi"}]}),
    );
    let (_, bad) = acp.until_answer(8);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // An unknown notification gets no answer; the next request is still served.
    acp.send(json!({"jsonrpc": "2.0", "method": "whatever"}));
    let init = initialize(&mut acp);
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    let session = new_session(&mut acp, &dirs);
    assert!(!session.is_empty());
    // A second session in the same directory is another session...
    acp.request(
        10,
        "session/new",
        json!({"cwd": dirs.project(), "mcpServers": []}),
    );
    let (_, second) = acp.until_answer(10);
    let second = second["result"]["sessionId"].as_str().unwrap().to_string();
    assert_ne!(second, session);
    // ...but one in another directory is not: the sandbox is this process's.
    acp.request(
        11,
        "session/new",
        json!({"cwd": elsewhere.path(), "mcpServers": []}),
    );
    let (_, bad) = acp.until_answer(11);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("start another harness9 acp"),
        "{bad}"
    );
    assert_eq!(server.chat_requests().len(), 0);
    assert_eq!(acp.close().code(), Some(0));
}

impl Acp {
    /// The next error answer with a `null` id (to a message whose id could not be read).
    pub(super) fn until_answer_null(&mut self) -> (Vec<Value>, Value) {
        let mut lines = self.until(|l| l.get("id") == Some(&Value::Null));
        let last = lines.pop().unwrap();
        (lines, last)
    }
}

/// Runs one prompt whose model calls `bash` with `command`, answering the permission
/// request with `option` (the request is checked on the way); returns the prompt's
/// lines and its answer.
fn prompt_answering_permission(
    acp: &mut Acp,
    session: &str,
    id: u64,
    option: &str,
) -> (Vec<Value>, Value) {
    acp.request(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "make it"}]}),
    );
    let lines = acp.until(|l| l["method"] == "session/request_permission");
    let ask = lines.last().unwrap();
    assert_eq!(ask["params"]["sessionId"], session, "{ask}");
    let title = ask["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("touch made.txt"), "{ask}");
    let options: Vec<&str> = ask["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "allow_session", "reject"]);
    let asked = ask["id"].clone();
    acp.send(json!({
        "jsonrpc": "2.0",
        "id": asked,
        "result": {"outcome": {"outcome": "selected", "optionId": option}},
    }));
    acp.until_answer(id)
}

#[test]
fn a_call_that_needs_approval_is_asked_of_the_editor_and_its_answer_decides() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    server.push(bash_reply("c1", "touch made.txt"));
    server.push(answer("refused"));
    server.push(bash_reply("c2", "touch made.txt"));
    server.push(answer("refused again"));
    server.push(bash_reply("c3", "touch made.txt"));
    server.push(answer("made"));
    let mut acp = Acp::start(&server, &dirs);
    initialize(&mut acp);
    let session = new_session(&mut acp, &dirs);
    let made = dirs.project().join("made.txt");

    // Rejected: the command never runs.
    let (lines, reply) = prompt_answering_permission(&mut acp, &session, 3, "reject");
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    assert!(!made.exists(), "a rejected command ran");
    let ends = updates(&lines, "tool_call_update");
    assert_eq!(ends.len(), 1, "{lines:#?}");
    assert_eq!(ends[0]["status"], "failed", "{lines:#?}");

    // An option id that is not offered is a rejection too.
    let (_, reply) = prompt_answering_permission(&mut acp, &session, 4, "allow_forever");
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    assert!(!made.exists(), "an unknown option approved the command");

    // Allowed once: it runs.
    let (lines, reply) = prompt_answering_permission(&mut acp, &session, 5, "allow_once");
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    assert!(
        made.exists(),
        "the approved command did not run: {lines:#?}"
    );
    assert_eq!(acp.close().code(), Some(0));
}
