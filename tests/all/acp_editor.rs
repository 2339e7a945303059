//! `harness9 acp` as an editor sees it, driven over pipes against the scripted server:
//! tool calls with their kind and `locations`, a file change as a `diff` content (path,
//! old text, new text), a command's output streamed as `tool_call_update`s while it
//! runs; the editor's `fs/read_text_file` and `fs/write_text_file` used when it offers
//! them (its unsaved text read, edits written through it, every judgment made first);
//! and `session/cancel` while a permission request waits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

const DEADLINE: Duration = Duration::from_secs(30);

/// A running `harness9 acp` with its pipes.
struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Editor {
    fn start(server: &MockServer, dirs: &Dirs) -> Editor {
        let mut child = server
            .binary(dirs)
            .arg("acp")
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
        Editor {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(message.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// Answers the agent's request `asked` with `result`.
    fn answer(&mut self, asked: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": result}));
    }

    /// Lines until one satisfies `done` (returned last).
    fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
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

    /// Lines up to the answer to our request `id`, which is returned apart.
    fn until_answer(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut lines =
            self.until(|l| l.get("id") == Some(&json!(id)) && l.get("method").is_none());
        let answer = lines.pop().unwrap();
        (lines, answer)
    }

    /// Lines up to the agent's next request of `method`, which is returned apart.
    fn until_asked(&mut self, method: &str) -> (Vec<Value>, Value) {
        let mut lines = self.until(|l| l["method"] == method && l.get("id").is_some());
        let asked = lines.pop().unwrap();
        (lines, asked)
    }

    fn initialize(&mut self, client_capabilities: Value) {
        self.request(
            1,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": client_capabilities}),
        );
        let (_, answer) = self.until_answer(1);
        assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
    }

    fn new_session(&mut self, dirs: &Dirs) -> String {
        self.request(
            2,
            "session/new",
            json!({"cwd": dirs.project(), "mcpServers": []}),
        );
        let (_, answer) = self.until_answer(2);
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string()
    }

    fn prompt(&mut self, id: u64, session: &str, text: &str) {
        self.request(
            id,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
    }

    /// Closes stdin and waits for the exit status.
    fn close(mut self) -> std::process::ExitStatus {
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

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn allow_once() -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
}

/// The `session/update`s of `kind` among `lines`.
fn updates<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["method"] == "session/update")
        .map(|l| &l["params"]["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The updates of call `id` among `lines`.
fn of_call<'a>(lines: &'a [Value], id: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["method"] == "session/update")
        .map(|l| &l["params"]["update"])
        .filter(|u| u["toolCallId"] == id)
        .collect()
}

fn real(path: &Path) -> String {
    path.canonicalize().unwrap().display().to_string()
}

#[test]
fn tool_calls_show_their_kind_locations_diff_and_streamed_output() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    dirs.project_file("a.txt", "one\ntwo\nthree\n");
    server.push(tool_reply(
        "r1",
        "read_file",
        r#"{"path":"a.txt","offset":2}"#,
    ));
    server.push(tool_reply(
        "e1",
        "edit_file",
        r#"{"path":"a.txt","old_string":"two","new_string":"TWO"}"#,
    ));
    // Prints a line, then waits (up to its own deadline) for the editor to have seen it.
    server.push(bash_reply(
        "b1",
        "echo first; for i in $(seq 600); do [ -e go ] && break; sleep 0.05; done; echo second",
    ));
    server.push(answer("done"));
    let mut editor = Editor::start(&server, &dirs);
    editor.initialize(json!({}));
    let session = editor.new_session(&dirs);
    let file = real(&dirs.project().join("a.txt"));

    editor.prompt(3, &session, "change it");
    let (lines, asked) = editor.until_asked("session/request_permission");
    let read = of_call(&lines, "r1");
    assert_eq!(read[0]["sessionUpdate"], "tool_call", "{lines:#?}");
    assert_eq!(read[0]["kind"], "read");
    assert_eq!(read[0]["locations"], json!([{"path": file, "line": 2}]));
    assert_eq!(read.last().unwrap()["status"], "completed", "{lines:#?}");
    assert_eq!(asked["params"]["toolCall"]["toolCallId"], "e1", "{asked}");
    // The editor is asked with the file and the edit's diff in view.
    let asked_call = &asked["params"]["toolCall"];
    assert_eq!(asked_call["locations"], json!([{"path": file}]), "{asked}");
    let shown = asked_call["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        shown.starts_with("```diff\n") && shown.contains("-two\n+TWO"),
        "{asked}"
    );
    editor.answer(&asked, allow_once());

    let (lines, asked) = editor.until_asked("session/request_permission");
    let edit = of_call(&lines, "e1");
    assert_eq!(edit[0]["kind"], "edit", "{lines:#?}");
    assert_eq!(edit[0]["locations"][0]["path"], file);
    let end = edit.last().unwrap();
    assert_eq!(end["status"], "completed", "{lines:#?}");
    let diff = end["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff content: {end:#}"));
    assert_eq!(diff["path"], file);
    assert_eq!(diff["oldText"], "one\ntwo\nthree\n");
    assert_eq!(diff["newText"], "one\nTWO\nthree\n");
    assert_eq!(end["locations"], json!([{"path": file, "line": 2}]));
    assert_eq!(asked["params"]["toolCall"]["toolCallId"], "b1", "{asked}");
    editor.answer(&asked, allow_once());

    // The command's first line is shown while it runs (it waits for `go`).
    let text_of = |u: &Value| {
        u["content"][0]["content"]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let lines = editor.until(|l| {
        let u = &l["params"]["update"];
        u["toolCallId"] == "b1"
            && u["sessionUpdate"] == "tool_call_update"
            && text_of(u).contains("first")
    });
    let running = of_call(&lines, "b1");
    assert_eq!(running[0]["kind"], "execute", "{lines:#?}");
    let streamed = running.last().unwrap();
    assert!(
        streamed.get("status").is_none_or(|s| s != "completed"),
        "{streamed:#}"
    );
    assert!(text_of(streamed).starts_with("```"), "{streamed:#}");
    assert!(!text_of(streamed).contains("second"), "{streamed:#}");
    std::fs::write(dirs.project().join("go"), "").unwrap();

    let (lines, reply) = editor.until_answer(3);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    let end = of_call(&lines, "b1").pop().unwrap().clone();
    assert_eq!(end["status"], "completed", "{lines:#?}");
    let all: String = end["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["content"]["text"].as_str().unwrap_or(""))
        .collect();
    assert!(all.contains("first\nsecond"), "{end:#}");
    assert_eq!(
        std::fs::read_to_string(dirs.project().join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    assert_eq!(editor.close().code(), Some(0));
}

/// Lines up to the agent's next request (of any method), which is returned apart.
fn next_request(editor: &mut Editor, seen: &mut Vec<Value>) -> Value {
    let mut lines = editor.until(|l| l.get("method").is_some() && l.get("id").is_some());
    let asked = lines.pop().unwrap();
    seen.extend(lines);
    seen.push(asked.clone());
    asked
}

#[test]
fn the_editors_buffers_are_read_and_written_through_it_after_every_judgment() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    dirs.project_file("a.txt", "saved text\n");
    dirs.project_file(".env", "TOKEN=hunter2\n");
    std::os::unix::fs::symlink("a.txt", dirs.project().join("alias.txt")).unwrap();
    server.push(tool_reply("r1", "read_file", r#"{"path":"alias.txt"}"#));
    server.push(tool_reply(
        "e1",
        "edit_file",
        r#"{"path":"a.txt","old_string":"unsaved","new_string":"edited"}"#,
    ));
    server.push(tool_reply("s1", "read_file", r#"{"path":".env"}"#));
    server.push(tool_reply(
        "w1",
        "write_file",
        r#"{"path":"b.txt","content":"new\n"}"#,
    ));
    server.push(answer("done"));
    let mut editor = Editor::start(&server, &dirs);
    editor.initialize(json!({"fs": {"readTextFile": true, "writeTextFile": true}}));
    let session = editor.new_session(&dirs);
    let a = real(&dirs.project().join("a.txt"));
    let mut seen = Vec::new();

    editor.prompt(3, &session, "go");
    // The link is resolved before the editor is asked: it is asked for a.txt itself.
    let read = next_request(&mut editor, &mut seen);
    assert_eq!(read["method"], "fs/read_text_file", "{read}");
    assert_eq!(read["params"]["sessionId"], session);
    assert_eq!(read["params"]["path"], a);
    editor.answer(&read, json!({"content": "unsaved text\n"}));

    // The edit is approved first, then reads the buffer and writes through the editor.
    let ask = next_request(&mut editor, &mut seen);
    assert_eq!(ask["method"], "session/request_permission", "{ask}");
    assert_eq!(ask["params"]["toolCall"]["toolCallId"], "e1");
    editor.answer(&ask, allow_once());
    let read = next_request(&mut editor, &mut seen);
    assert_eq!(read["method"], "fs/read_text_file", "{read}");
    editor.answer(&read, json!({"content": "unsaved text\n"}));
    let write = next_request(&mut editor, &mut seen);
    assert_eq!(write["method"], "fs/write_text_file", "{write}");
    assert_eq!(write["params"]["path"], a);
    assert_eq!(write["params"]["content"], "edited text\n");
    editor.answer(&write, Value::Null);

    // A secret file is asked about first; refused, the editor is never asked for it.
    let ask = next_request(&mut editor, &mut seen);
    assert_eq!(ask["method"], "session/request_permission", "{ask}");
    assert_eq!(ask["params"]["toolCall"]["toolCallId"], "s1");
    editor.answer(
        &ask,
        json!({"outcome": {"outcome": "selected", "optionId": "reject"}}),
    );

    // A write the editor refuses is a failed call, and nothing is written.
    let ask = next_request(&mut editor, &mut seen);
    assert_eq!(ask["params"]["toolCall"]["toolCallId"], "w1", "{ask}");
    editor.answer(&ask, allow_once());
    let write = next_request(&mut editor, &mut seen);
    assert_eq!(write["method"], "fs/write_text_file", "{write}");
    editor.send(json!({
        "jsonrpc": "2.0",
        "id": write["id"],
        "error": {"code": -32603, "message": "the buffer is read-only"},
    }));

    let (lines, reply) = editor.until_answer(3);
    seen.extend(lines);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    let fs_paths: Vec<&str> = seen
        .iter()
        .filter(|l| l["method"].as_str().is_some_and(|m| m.starts_with("fs/")))
        .map(|l| l["params"]["path"].as_str().unwrap())
        .collect();
    let b = format!("{}/b.txt", real(dirs.project()));
    assert_eq!(fs_paths, [a.as_str(), &a, &a, &b]);
    // The model saw the editor's unsaved text, never the secret.
    let requests = server.chat_requests();
    assert!(
        requests[1].tool_result("r1").contains("unsaved text"),
        "{:?}",
        requests[1].tool_results()
    );
    assert!(
        !requests[3]
            .tool_results()
            .iter()
            .any(|r| r.contains("hunter2"))
    );
    assert!(
        requests[4]
            .tool_result("w1")
            .contains("the buffer is read-only"),
        "{:?}",
        requests[4].tool_results()
    );
    // The edit is on disk too (undo's pictures and commands see it); the refused write is not.
    assert_eq!(
        std::fs::read_to_string(dirs.project().join("a.txt")).unwrap(),
        "edited text\n"
    );
    assert!(!dirs.project().join("b.txt").exists());
    let edit_end = of_call(&seen, "e1").pop().unwrap().clone();
    assert_eq!(edit_end["status"], "completed", "{edit_end:#}");
    let failed = of_call(&seen, "w1").pop().unwrap().clone();
    assert_eq!(failed["status"], "failed", "{failed:#}");
    assert_eq!(updates(&seen, "tool_call").len(), 3, "{seen:#?}");
    assert_eq!(editor.close().code(), Some(0));
}

#[test]
fn a_cancel_while_a_permission_waits_runs_nothing_and_ends_cancelled() {
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    server.push(bash_reply("c1", "touch cancelled.txt"));
    let mut editor = Editor::start(&server, &dirs);
    editor.initialize(json!({}));
    let session = editor.new_session(&dirs);

    editor.prompt(3, &session, "make it");
    let (_, ask) = editor.until_asked("session/request_permission");
    // The cancel and, right behind it, an approval of the request it closed: the
    // request is answered cancelled by the cancel, so the approval finds nothing.
    editor.send(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    editor.answer(&ask, allow_once());
    let (lines, reply) = editor.until_answer(3);
    assert_eq!(reply["result"]["stopReason"], "cancelled", "{reply}");
    // The client's own answer after the cancel (cancelled, as ACP says) changes nothing.
    editor.answer(&ask, json!({"outcome": {"outcome": "cancelled"}}));
    let end = of_call(&lines, "c1");
    assert!(end.iter().all(|u| u["status"] != "completed"), "{lines:#?}");
    // The session goes on: a next prompt is answered (nothing else was running).
    server.push(answer("still here"));
    editor.prompt(4, &session, "hello");
    let (_, reply) = editor.until_answer(4);
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    assert!(!dirs.project().join("cancelled.txt").exists());
    assert_eq!(
        server.chat_requests().len(),
        2,
        "the cancelled turn asked the model again"
    );
    assert_eq!(editor.close().code(), Some(0));
}
