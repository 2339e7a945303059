//! A scripted loopback HTTP/1.1 server that plays an OpenAI-compatible Chat Completions
//! endpoint for tests, with a small DSL that reads like a spec:
//!
//! ```ignore
//! let server = MockServer::start(vec![
//!     sse(vec![text("Hel"), text("lo"), usage(10, 2), finish("stop")]),
//!     sse(vec![tool_call(0, "call_1", "read_file", r#"{"path":"a"}"#).split_args(3),
//!              finish("tool_calls")]),
//!     http_error(429).header("Retry-After", "1"),
//!     sse(vec![text("partial"), finish("stop")]).cut_after(1),
//! ]);
//! let base_url = server.url(); // http://127.0.0.1:PORT/v1
//! ```
//!
//! Every request to `.../chat/completions` (or `.../responses`, the Responses wire, whose
//! replies `responses` builds) takes the next reply of an ordered queue
//! (`push` adds more while it runs), unless a responder set with `respond_with` answers
//! it from what it holds (a model with a small window: [`context_refusal`]); when the
//! queue is empty it answers "done" so that a binary under test never hangs. Other paths get a 404. Every request is recorded. The
//! server runs on its own thread with its own runtime, so it works from `#[test]` and
//! `#[tokio::test]` alike, and stays up until the `MockServer` is dropped.
//!
//! Beside the server, each in a module of its own: `binary` (the real binary, one way
//! for every test: [`Dirs`], subcommands through [`harness9_cli`] and [`Dirs::run`],
//! runs against the server through [`MockServer::harness9`], one tool call, every kind
//! of skill child, exit and output checks), `session` ([`SessionBuilder`] and
//! [`Session`]: a real session through the library, driven with `Op`s), `pty` (the
//! binary in a pseudo-terminal), `users` (root or an unprivileged user), `mcp` (the MCP
//! fixture server) and `fixture` (files and skills on disk, children fed and waited for
//! with a deadline). The replies most tests script have short forms: [`answer`],
//! [`tool_reply`], [`bash_reply`] and [`use_skill_reply`].

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

mod binary;
mod fixture;
mod json_lines;
mod mcp;
mod pty;
mod responses;
mod session;
mod users;

#[allow(unused_imports)]
pub use binary::*;
pub use fixture::*;
#[allow(unused_imports)]
pub use json_lines::*;
#[allow(unused_imports)]
pub use mcp::*;
#[allow(unused_imports)]
pub use pty::*;
#[allow(unused_imports)]
pub use responses::*;
// benches/e2e.rs includes this file too and drives the binary, not a session.
#[allow(unused_imports)]
pub use session::*;
#[allow(unused_imports)]
pub use users::*;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------------------
// Stream items
// ---------------------------------------------------------------------------------------

/// One item of a scripted event stream; most become one `data:` event.
#[derive(Debug, Clone)]
pub struct Ev(EvKind);

#[derive(Debug, Clone)]
enum EvKind {
    Frames(Vec<Vec<u8>>),
    ToolCall {
        index: Option<u32>,
        id: Option<String>,
        name: String,
        args: String,
        piece: Option<usize>,
    },
}

fn data_frame(value: &Value) -> Vec<u8> {
    format!("data: {value}\n\n").into_bytes()
}

fn chunk_with(choice_delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
        "model": "mock",
        "choices": [{"index": 0, "delta": choice_delta, "finish_reason": finish}],
    })
}

/// An answer-text delta.
pub fn text(s: &str) -> Ev {
    Ev(EvKind::Frames(vec![data_frame(&chunk_with(
        json!({"content": s}),
        None,
    ))]))
}

/// A reasoning delta in `reasoning_content` (DeepSeek, vLLM).
pub fn reasoning(s: &str) -> Ev {
    Ev(EvKind::Frames(vec![data_frame(&chunk_with(
        json!({"reasoning_content": s}),
        None,
    ))]))
}

/// A reasoning delta in `reasoning` (OpenRouter, Ollama).
pub fn reasoning_field(s: &str) -> Ev {
    Ev(EvKind::Frames(vec![data_frame(&chunk_with(
        json!({"reasoning": s}),
        None,
    ))]))
}

/// A whole tool call at `index` in one chunk; see [`Ev::split_args`] and [`Ev::no_id`].
pub fn tool_call(index: u32, id: &str, name: &str, args: &str) -> Ev {
    Ev(EvKind::ToolCall {
        index: Some(index),
        id: Some(id.to_string()),
        name: name.to_string(),
        args: args.to_string(),
        piece: None,
    })
}

/// A tool call whose deltas carry no `index` (only the id).
pub fn tool_call_no_index(id: &str, name: &str, args: &str) -> Ev {
    Ev(EvKind::ToolCall {
        index: None,
        id: Some(id.to_string()),
        name: name.to_string(),
        args: args.to_string(),
        piece: None,
    })
}

/// A chunk with only a finish_reason ("stop", "tool_calls", "length", anything).
pub fn finish(reason: &str) -> Ev {
    Ev(EvKind::Frames(vec![data_frame(&chunk_with(
        json!({}),
        Some(reason),
    ))]))
}

/// A usage chunk (empty choices), as `stream_options.include_usage` produces.
pub fn usage(prompt_tokens: u64, completion_tokens: u64) -> Ev {
    usage_cached(prompt_tokens, completion_tokens, 0)
}

/// A usage chunk with `prompt_tokens_details.cached_tokens`.
pub fn usage_cached(prompt_tokens: u64, completion_tokens: u64, cached_tokens: u64) -> Ev {
    chunk(json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": cached_tokens}},
    }))
}

/// An error object inside the stream: `{"error": {"message", "type": "server_error"}}`.
pub fn stream_error(message: &str) -> Ev {
    error_object(json!({"message": message, "type": "server_error"}))
}

/// `{"error": value}` as a stream event.
pub fn error_object(value: Value) -> Ev {
    chunk(json!({ "error": value }))
}

/// Any JSON value as one `data:` event.
pub fn chunk(value: Value) -> Ev {
    Ev(EvKind::Frames(vec![data_frame(&value)]))
}

/// Bytes written verbatim (no `data:` framing added).
pub fn raw(bytes: impl Into<Vec<u8>>) -> Ev {
    Ev(EvKind::Frames(vec![bytes.into()]))
}

/// A `: comment` keep-alive.
pub fn comment(s: &str) -> Ev {
    raw(format!(": {s}\n\n"))
}

/// `data: [DONE]` (added at the end of every [`sse`] reply unless `without_done`).
pub fn done() -> Ev {
    raw("data: [DONE]\n\n")
}

impl Ev {
    /// For a tool call: send the name first, then the arguments in pieces of at most
    /// `bytes` bytes (split on character boundaries), one chunk each.
    pub fn split_args(mut self, bytes: usize) -> Ev {
        if let EvKind::ToolCall { piece, .. } = &mut self.0 {
            *piece = Some(bytes.max(1));
        }
        self
    }

    /// For a tool call: send no id, so the client has to make one up.
    pub fn no_id(mut self) -> Ev {
        if let EvKind::ToolCall { id, .. } = &mut self.0 {
            *id = None;
        }
        self
    }

    fn into_frames(self) -> Vec<Vec<u8>> {
        match self.0 {
            EvKind::Frames(frames) => frames,
            EvKind::ToolCall {
                index,
                id,
                name,
                args,
                piece,
            } => {
                let call = |first: bool, args: &str| {
                    let mut c = serde_json::Map::new();
                    if let Some(i) = index {
                        c.insert("index".into(), json!(i));
                    }
                    if let Some(id) = &id
                        && (first || index.is_none())
                    {
                        c.insert("id".into(), json!(id));
                    }
                    if first {
                        c.insert("type".into(), json!("function"));
                        c.insert("function".into(), json!({"name": name, "arguments": args}));
                    } else {
                        c.insert("function".into(), json!({ "arguments": args }));
                    }
                    data_frame(&chunk_with(json!({"tool_calls": [Value::Object(c)]}), None))
                };
                match piece {
                    None => vec![call(true, &args)],
                    Some(n) => {
                        let mut frames = vec![call(true, "")];
                        frames.extend(split_chars(&args, n).iter().map(|p| call(false, p)));
                        frames
                    }
                }
            }
        }
    }
}

/// Splits `s` into pieces of at most `n` bytes (more when one character is longer).
pub fn split_chars(s: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        if !cur.is_empty() && cur.len() + ch.len_utf8() > n {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(ch);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Chunked,
    CloseDelimited,
    ContentLength,
}

/// One scripted HTTP answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    frames: Vec<Vec<u8>>,
    framing: Framing,
    delay_headers: Duration,
    delay_frames: Duration,
    cut_after: Option<usize>,
    stall_after: Option<usize>,
    piece: Option<usize>,
}

/// A reply in which the model makes one tool call, `name` with the JSON text `args`.
pub fn tool_reply(id: &str, name: &str, args: &str) -> Reply {
    sse(vec![tool_call(0, id, name, args), finish("tool_calls")])
}

/// A reply in which the model runs `command` with the `bash` tool.
pub fn bash_reply(id: &str, command: &str) -> Reply {
    tool_reply(id, "bash", &json!({ "command": command }).to_string())
}

/// A reply in which the model loads the skill `name` with the `use_skill` tool.
pub fn use_skill_reply(id: &str, name: &str) -> Reply {
    tool_reply(id, "use_skill", &json!({ "skill_name": name }).to_string())
}

/// A reply in which the model answers `s` and stops.
pub fn answer(s: &str) -> Reply {
    sse(vec![text(s), finish("stop")])
}

/// A 200 event stream of these items, then `data: [DONE]`.
pub fn sse(items: Vec<Ev>) -> Reply {
    let mut frames: Vec<Vec<u8>> = items.into_iter().flat_map(Ev::into_frames).collect();
    frames.extend(done().into_frames());
    Reply {
        status: 200,
        headers: vec![
            ("Content-Type".into(), "text/event-stream".into()),
            ("Cache-Control".into(), "no-cache".into()),
        ],
        frames,
        framing: Framing::Chunked,
        delay_headers: Duration::ZERO,
        delay_frames: Duration::ZERO,
        cut_after: None,
        stall_after: None,
        piece: None,
    }
}

/// An HTTP error with a JSON error body `{"error":{"message":"mock error STATUS",...}}`;
/// change it with [`Reply::body`] or [`Reply::json_body`].
pub fn http_error(status: u16) -> Reply {
    json_reply(json!({"error": {
        "message": format!("mock error {status}"), "type": "mock_error", "code": null}}))
    .status(status)
}

/// A 200 `application/json` body (a non-streaming answer, or anything else).
pub fn json_reply(value: Value) -> Reply {
    Reply {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        frames: vec![value.to_string().into_bytes()],
        framing: Framing::ContentLength,
        delay_headers: Duration::ZERO,
        delay_frames: Duration::ZERO,
        cut_after: None,
        stall_after: None,
        piece: None,
    }
}

/// A non-streaming chat completion with this text, finish_reason "stop" and usage.
pub fn json_text(text: &str) -> Reply {
    json_reply(json!({
        "id": "chatcmpl-mock", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }))
}

/// A non-streaming chat completion with tool calls `(id, name, arguments)`.
pub fn json_tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    json_reply(json!({
        "id": "chatcmpl-mock", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
    }))
}

impl Reply {
    /// Any status, body bytes and content type.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        let mut r = json_reply(Value::Null).status(status);
        r.headers = vec![("Content-Type".into(), content_type.into())];
        r.frames = vec![body.into()];
        r
    }

    /// Change the status code.
    pub fn status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    /// Add a response header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Replace the body with this text (keeps the content type).
    pub fn body(mut self, body: &str) -> Reply {
        self.frames = vec![body.as_bytes().to_vec()];
        self.framing = Framing::ContentLength;
        self
    }

    /// Replace the body with this JSON.
    pub fn json_body(self, value: Value) -> Reply {
        self.body(&value.to_string())
    }

    /// Wait this long between stream events.
    pub fn delay_ms(mut self, ms: u64) -> Reply {
        self.delay_frames = Duration::from_millis(ms);
        self
    }

    /// Wait this long before sending the status line and headers.
    pub fn delay_headers_ms(mut self, ms: u64) -> Reply {
        self.delay_headers = Duration::from_millis(ms);
        self
    }

    /// Close the connection after `n` events, mid-body (no [DONE], no final chunk).
    pub fn cut_after(mut self, n: usize) -> Reply {
        self.cut_after = Some(n);
        self
    }

    /// Stop sending after `n` events but keep the connection open until the client
    /// goes away or the server is dropped.
    pub fn stall_after(mut self, n: usize) -> Reply {
        self.stall_after = Some(n);
        self
    }

    /// Write the body in TCP writes of at most `bytes` bytes, so events and UTF-8
    /// characters are split across reads.
    pub fn pieces(mut self, bytes: usize) -> Reply {
        self.piece = Some(bytes.max(1));
        self
    }

    /// Without the final `data: [DONE]` (a stream that ends at EOF).
    pub fn without_done(mut self) -> Reply {
        if self.frames.last().map(Vec::as_slice) == Some(b"data: [DONE]\n\n".as_slice()) {
            self.frames.pop();
        }
        self
    }

    /// End the body by closing the connection instead of chunked encoding.
    pub fn close_delimited(mut self) -> Reply {
        self.framing = Framing::CloseDelimited;
        self
    }
}

// ---------------------------------------------------------------------------------------
// Recorded requests
// ---------------------------------------------------------------------------------------

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, `GET`...
    pub method: String,
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
    /// The body as text.
    pub raw_body: String,
    /// When the whole request had arrived.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `messages` array of a chat request (empty when absent).
    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The names of the tools the request offered (none when it offered none).
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| {
                        let name = t["function"]["name"].as_str();
                        name.expect("every tool has a name").to_string()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The text of message `i` (0 is the system prompt).
    pub fn message_text(&self, i: usize) -> String {
        let messages = self.messages();
        messages[i]["content"]
            .as_str()
            .unwrap_or_else(|| panic!("message {i} has no text: {:?}", messages[i]))
            .to_string()
    }

    /// The contents of the tool results in this request, in order.
    pub fn tool_results(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str().map(String::from))
            .collect()
    }

    /// The content of the tool result for `call_id` (empty when there is none).
    pub fn tool_result(&self, call_id: &str) -> String {
        self.messages()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
            .and_then(|m| m["content"].as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The text of the last user message (empty when there is none).
    pub fn last_user_text(&self) -> String {
        self.messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The role and text of every message but the system prompt, in order.
    pub fn conversation(&self) -> Vec<(String, String)> {
        self.messages()
            .iter()
            .filter(|m| m["role"] != "system")
            .map(|m| {
                (
                    m["role"].as_str().unwrap_or("").to_string(),
                    m["content"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------

#[derive(Default)]
struct State {
    queue: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
    /// Fixed JSON answers to other paths (`/v1/models`, `/props`...), by path.
    /// Path, body, and how long to wait before the headers.
    routes: Vec<(String, Value, u64)>,
    /// Asked first for every chat request (see [`MockServer::respond_with`]).
    responder: Option<Responder>,
}

/// Answers a chat request from what it holds, or leaves it to the queue (`None`).
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The scripted server; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server on 127.0.0.1 that answers chat requests with `replies` in order.
    pub fn start(replies: Vec<Reply>) -> MockServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: replies.into(),
                requests: Vec::new(),
                routes: Vec::new(),
                responder: None,
            }),
            changed: Condvar::new(),
        });
        let shutdown = CancellationToken::new();
        let thread = {
            let shared = shared.clone();
            let shutdown = shutdown.clone();
            std::thread::Builder::new()
                .name("mock-llm-server".into())
                .spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    rt.block_on(serve(listener, shared, shutdown));
                })
                .unwrap()
        };
        MockServer {
            addr,
            shared,
            shutdown,
            thread: Some(thread),
        }
    }

    /// The base URL to configure: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers requests for `path` (e.g. `/v1/models`) with `body`, every time.
    pub fn route(&self, path: &str, body: Value) {
        self.route_delayed(path, body, 0);
    }

    /// Answers requests for `path` with `body` after `delay_ms` (a loaded local server
    /// slow to list its models: mockllm's `--models-delay-ms`).
    pub fn route_delayed(&self, path: &str, body: Value, delay_ms: u64) {
        self.shared
            .lock()
            .routes
            .push((path.to_string(), body, delay_ms));
    }

    /// Asks `respond` first for every chat request: a request it answers `Some` gets that
    /// reply without using up the queue (a server that refuses prompts over its window,
    /// a rule for summary requests, a model whose next step follows what it was sent).
    pub fn respond_with(
        &self,
        respond: impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static,
    ) {
        self.shared.lock().responder = Some(Arc::new(respond));
    }

    /// Adds a reply at the end of the queue.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push_back(reply);
    }

    /// Asserts that `n` chat requests came, the last with exactly the conversation
    /// `expected`: (role, text) pairs, the system prompt left out.
    pub fn assert_conversation(&self, n: usize, expected: &[(&str, &str)]) {
        let requests = self.chat_requests();
        assert_eq!(requests.len(), n);
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(r, t)| (r.to_string(), t.to_string()))
            .collect();
        assert_eq!(requests[n - 1].conversation(), expected);
    }

    /// Scripted replies not yet used.
    pub fn remaining(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// The bodies of every request received so far, as one text.
    pub fn everything_sent(&self) -> String {
        self.requests()
            .iter()
            .map(|r| r.raw_body.clone())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Responses API requests only.
    pub fn responses_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/responses"))
            .collect()
    }

    /// Chat-completion requests only.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .collect()
    }

    /// Waits until at least `n` requests arrived and returns them all; panics after
    /// `timeout` with what did arrive.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.wait_until(|r| r.len() >= n, timeout)
    }

    /// Waits until `n` chat requests have arrived (other paths, such as `/v1/models`
    /// asked for the context window, do not count).
    pub fn wait_for_chat_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.wait_until(
            |r| {
                r.iter()
                    .filter(|r| r.path.ends_with("/chat/completions"))
                    .count()
                    >= n
            },
            timeout,
        )
    }

    fn wait_until(
        &self,
        done: impl Fn(&[RecordedRequest]) -> bool,
        timeout: Duration,
    ) -> Vec<RecordedRequest> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while !done(&state.requests) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!(
                    "mock server: waited {timeout:?}, got {} requests: {:?}",
                    state.requests.len(),
                    state.requests.iter().map(|r| &r.path).collect::<Vec<_>>()
                );
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        state.requests.clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(listener: std::net::TcpListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    let listener = TcpListener::from_std(listener).unwrap();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(handle(stream, shared.clone(), shutdown.clone()));
                }
            }
        }
    }
}

/// A 400 refusal of a prompt too long for a window of `max_bytes` bytes (4 bytes a
/// token), worded as OpenAI words it (`context_length_exceeded`).
pub fn context_refusal(max_bytes: usize, body_bytes: usize) -> Reply {
    http_error(400).json_body(json!({"error": {
        "message": format!(
            "This model's maximum context length is {} tokens. However, your messages \
             resulted in {} tokens. Please reduce the length of the messages.",
            max_bytes / 4,
            body_bytes / 4
        ),
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}))
}

/// Default answer once the script has run out.
fn fallback(request: &RecordedRequest) -> Reply {
    if request.path.ends_with("/responses") {
        responses::rs_answer("done")
    } else if request.body.get("stream") == Some(&Value::Bool(false)) {
        json_text("done")
    } else {
        answer("done")
    }
}

async fn handle(mut stream: TcpStream, shared: Arc<Shared>, shutdown: CancellationToken) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let reply = {
        let mut state = shared.lock();
        let reply = if request.path.ends_with("/chat/completions")
            || request.path.ends_with("/responses")
        {
            let responder = state.responder.clone();
            responder
                .and_then(|respond| respond(&request))
                .or_else(|| state.queue.pop_front())
                .unwrap_or_else(|| fallback(&request))
        } else if let Some((_, body, delay)) =
            state.routes.iter().find(|(p, _, _)| *p == request.path)
        {
            json_reply(body.clone()).delay_headers_ms(*delay)
        } else {
            http_error(404).json_body(json!({"error": {"message": "mock: no such path"}}))
        };
        state.requests.push(request);
        shared.changed.notify_all();
        reply
    };
    tokio::select! {
        _ = shutdown.cancelled() => {}
        _ = write_reply(&mut stream, reply) => {}
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = stream.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = buf[head_end..].to_vec();
    if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        while body.len() < len {
            let n = stream.read(&mut tmp).await.ok()?;
            if n == 0 {
                return None;
            }
            body.extend_from_slice(&tmp[..n]);
        }
        body.truncate(len);
    } else if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            if let Some(decoded) = decode_chunked(&body) {
                body = decoded;
                break;
            }
            let n = stream.read(&mut tmp).await.ok()?;
            if n == 0 {
                return None;
            }
            body.extend_from_slice(&tmp[..n]);
        }
    }
    // Stamped before the body is decoded: a large body's parse is the server's time.
    let received_at = Instant::now();
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    Some(RecordedRequest {
        method,
        path,
        headers,
        body: serde_json::from_str(&raw_body).unwrap_or(Value::Null),
        raw_body,
        received_at,
    })
}

/// The decoded body once the whole chunked body is in `buf`.
fn decode_chunked(buf: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = buf;
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if rest.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Mock",
    }
}

async fn write_reply(stream: &mut TcpStream, reply: Reply) {
    if !reply.delay_headers.is_zero() {
        tokio::time::sleep(reply.delay_headers).await;
    }
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        reply.status,
        reason_phrase(reply.status)
    );
    for (n, v) in &reply.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    match reply.framing {
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        Framing::ContentLength => {
            let len: usize = reply.frames.iter().map(Vec::len).sum();
            head.push_str(&format!("Content-Length: {len}\r\n"));
        }
        Framing::CloseDelimited => {}
    }
    head.push_str("Connection: close\r\n\r\n");
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let _ = stream.flush().await;

    for (i, frame) in reply.frames.iter().enumerate() {
        if reply.cut_after == Some(i) {
            return; // dropping the stream closes the connection mid-body
        }
        if reply.stall_after == Some(i) {
            stall(stream).await;
            return;
        }
        if i > 0 && !reply.delay_frames.is_zero() {
            tokio::time::sleep(reply.delay_frames).await;
        }
        let pieces: Vec<&[u8]> = match reply.piece {
            Some(n) => frame.chunks(n).collect(),
            None => vec![frame.as_slice()],
        };
        for piece in pieces.into_iter().filter(|p| !p.is_empty()) {
            let ok = match reply.framing {
                Framing::Chunked => {
                    let mut out = format!("{:x}\r\n", piece.len()).into_bytes();
                    out.extend_from_slice(piece);
                    out.extend_from_slice(b"\r\n");
                    stream.write_all(&out).await.is_ok()
                }
                _ => stream.write_all(piece).await.is_ok(),
            };
            if !ok || stream.flush().await.is_err() {
                return;
            }
        }
    }
    if reply.cut_after == Some(reply.frames.len()) {
        return;
    }
    if reply.stall_after == Some(reply.frames.len()) {
        stall(stream).await;
        return;
    }
    if reply.framing == Framing::Chunked {
        let _ = stream.write_all(b"0\r\n\r\n").await;
    }
    let _ = stream.flush().await;
    let _ = stream.shutdown().await;
}

/// Keeps the connection open, sending nothing, until the client closes it.
async fn stall(stream: &mut TcpStream) {
    let mut tmp = [0u8; 1024];
    while let Ok(n) = stream.read(&mut tmp).await {
        if n == 0 {
            return;
        }
    }
}
