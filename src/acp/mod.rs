//! `harness9 acp`: an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
//! Neovim, Emacs). It answers `initialize`, `session/new` and `session/prompt`, streams
//! the turn as `session/update` notifications (message and thought chunks, tool calls and
//! their updates), ends each prompt with its stop reason, and turns `session/cancel` into
//! an interrupt.
//!
//! It is a frontend like print mode and the REPL: it only sends [`Op`]s and renders
//! [`Event`]s, with ACP's schema types (the `agent-client-protocol-schema` crate) for
//! what goes over the wire. It must not know how the agent works inside. The client is
//! untrusted: malformed, unknown or oversized messages get JSON-RPC errors ([`wire`]).
//! One process runs one session, in the directory it was started in. A call that needs
//! approval is put to the client as `session/request_permission` ([`approvals`]).
//! Tool calls are shown with their kind, locations, diff and streamed output
//! ([`tool_calls`]); when the client offers its files, the file tools read and write
//! through it ([`client_fs`]).

mod approvals;
mod client_fs;
mod tool_calls;
mod updates;
pub mod wire;

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, CancelNotification, ClientCapabilities, ContentBlock, Implementation,
    InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse, PromptRequest,
    PromptResponse, SessionId, SessionNotification,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::agent::AgentHandle;
use crate::input;
use crate::protocol::{Event, InputOrigin, Op, SlashCommands};
use crate::session::Prepared;
use crate::signals::{EndingSignal, EndingSignals};
use wire::{Incoming, Line, Writer, code};

/// How `harness9 acp` ended.
#[derive(Debug)]
pub enum AcpEnd {
    /// The client closed stdin; the agent shut down.
    Closed,
    /// A signal ended it: every command was stopped first.
    Signalled(EndingSignal),
}

/// What stopped `harness9 acp` from serving.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// Stdin, stdout or the signal handlers failed.
    #[error("ACP stdio failed")]
    Io(#[from] io::Error),
}

/// Serves ACP on stdin/stdout until the client closes stdin or a signal ends the run.
/// The agent is started at `session/new`.
pub fn run(runtime: &tokio::runtime::Runtime, prepared: Prepared) -> Result<AcpEnd, AcpError> {
    runtime.block_on(async {
        let (lines, incoming) = mpsc::channel(8);
        tokio::spawn(read_stdin(lines));
        let (fs_calls, fs_incoming) = mpsc::unbounded_channel();
        let mut server = Server {
            out: Writer::new(io::stdout().lock()),
            workdir: prepared.info.workdir.clone(),
            commands: prepared.info.commands.clone(),
            prepared: Some(prepared),
            live: None,
            asked: HashMap::new(),
            requests_made: 0,
            tool_calls: tool_calls::ToolCalls::default(),
            client: ClientCapabilities::default(),
            fs_calls,
            fs_pending: client_fs::Pending::default(),
        };
        server.serve(incoming, fs_incoming).await
    })
}

/// Reads stdin line by line into `lines` until it ends or nobody listens.
async fn read_stdin(lines: mpsc::Sender<io::Result<Line>>) {
    let mut reader = tokio::io::BufReader::new(tokio::io::stdin());
    loop {
        let line = wire::read_line(&mut reader, wire::MAX_LINE).await;
        let last = matches!(line, Ok(Line::End) | Err(_));
        if lines.send(line).await.is_err() || last {
            return;
        }
    }
}

/// The running session.
struct Live {
    id: SessionId,
    handle: AgentHandle,
    /// The `session/prompt` request being answered, if one runs.
    prompt: Option<Value>,
}

struct Server<W: Write> {
    out: Writer<W>,
    workdir: PathBuf,
    commands: SlashCommands,
    /// The session to start at `session/new` (taken then).
    prepared: Option<Prepared>,
    live: Option<Live>,
    /// The permission requests sent and not answered: our request id → the call.
    asked: HashMap<String, String>,
    /// How many requests of ours were sent (for their ids).
    requests_made: u64,
    /// The tool calls running and their output so far.
    tool_calls: tool_calls::ToolCalls,
    /// What the client said it offers in `initialize`.
    client: ClientCapabilities,
    /// Where the session's file tools hand their requests to the client.
    fs_calls: mpsc::UnboundedSender<client_fs::FsCall>,
    /// The file requests sent to the client and not answered.
    fs_pending: client_fs::Pending,
}

impl<W: Write> Server<W> {
    async fn serve(
        &mut self,
        mut incoming: mpsc::Receiver<io::Result<Line>>,
        mut fs_incoming: mpsc::UnboundedReceiver<client_fs::FsCall>,
    ) -> Result<AcpEnd, AcpError> {
        let mut ending = EndingSignals::listen()?;
        loop {
            let events = async {
                match &mut self.live {
                    Some(live) => live.handle.events.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                line = incoming.recv() => match line {
                    Some(Ok(Line::Text(text))) => self.message(&text)?,
                    Some(Ok(Line::TooLong)) => self.out.error(
                        &Value::Null,
                        code::INVALID_REQUEST,
                        &format!("a message is at most {} bytes", wire::MAX_LINE),
                    )?,
                    Some(Ok(Line::End)) | None => {
                        self.shut_down().await;
                        return Ok(AcpEnd::Closed);
                    }
                    Some(Err(e)) => {
                        self.shut_down().await;
                        return Err(e.into());
                    }
                },
                Some(call) = fs_incoming.recv() => self.ask_files(call)?,
                event = events => match event {
                    Some(event) => self.event(&event)?,
                    // The agent is gone: nothing more can be answered.
                    None => return Ok(AcpEnd::Closed),
                },
                signal = ending.recv() => {
                    if let Some(live) = &self.live {
                        let _ = live.handle.ops.send(Op::Shutdown);
                    }
                    crate::signals::stop_everything().await;
                    return Ok(AcpEnd::Signalled(signal));
                }
            }
        }
    }

    /// Stops the agent and waits for it to say so (half a second at most).
    async fn shut_down(&mut self) {
        let Some(live) = &mut self.live else { return };
        let _ = live.handle.ops.send(Op::Shutdown);
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), async {
            while let Some(event) = live.handle.events.recv().await {
                if matches!(event, Event::ShutdownComplete { .. }) {
                    break;
                }
            }
        })
        .await;
    }

    fn message(&mut self, line: &[u8]) -> io::Result<()> {
        match wire::classify(line) {
            Incoming::Request { id, method, params } => self.request(&id, &method, params),
            Incoming::Notification { method, params } => {
                if method == "session/cancel" {
                    self.cancel(params);
                }
                // Other notifications need no answer, and one cannot be given.
                Ok(())
            }
            Incoming::Response { id, outcome } => {
                self.answered(&id, outcome);
                Ok(())
            }
            Incoming::Blank => Ok(()),
            Incoming::Invalid { id, code, message } => self.out.error(&id, code, &message),
        }
    }

    fn request(&mut self, id: &Value, method: &str, params: Value) -> io::Result<()> {
        match method {
            "initialize" => match serde_json::from_value::<InitializeRequest>(params) {
                Ok(request) => {
                    self.client = request.client_capabilities;
                    let response = InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(AgentCapabilities::new())
                        .agent_info(Implementation::new("harness9", env!("CARGO_PKG_VERSION")));
                    self.out.result(id, &response)
                }
                Err(e) => self.invalid_params(id, &e),
            },
            "session/new" => match serde_json::from_value::<NewSessionRequest>(params) {
                Ok(request) => self.new_session(id, &request.cwd),
                Err(e) => self.invalid_params(id, &e),
            },
            "session/prompt" => match serde_json::from_value::<PromptRequest>(params) {
                Ok(request) => self.prompt(id, request),
                Err(e) => self.invalid_params(id, &e),
            },
            _ => self.out.error(
                id,
                code::METHOD_NOT_FOUND,
                &format!("harness9 does not offer {method:?}"),
            ),
        }
    }

    fn invalid_params(&mut self, id: &Value, e: &serde_json::Error) -> io::Result<()> {
        self.out.error(id, code::INVALID_PARAMS, &e.to_string())
    }

    fn new_session(&mut self, id: &Value, cwd: &Path) -> io::Result<()> {
        if !same_directory(cwd, &self.workdir) {
            let message = format!(
                "this harness9 serves {}: start `harness9 acp` in {} for a session there",
                self.workdir.display(),
                cwd.display()
            );
            return self.out.error(id, code::INVALID_PARAMS, &message);
        }
        let Some(prepared) = self.prepared.take() else {
            return self.out.error(
                id,
                code::INVALID_REQUEST,
                "one harness9 acp process runs one session: start another for a new one",
            );
        };
        let session_id = SessionId::new(format!("harness9-{}", std::process::id()));
        let mut prepared = prepared;
        prepared.setup.files = client_fs::access(&self.client, &session_id, self.fs_calls.clone());
        let (handle, _info) = prepared.spawn();
        self.live = Some(Live {
            id: session_id.clone(),
            handle,
            prompt: None,
        });
        self.out.result(id, &NewSessionResponse::new(session_id))
    }

    fn prompt(&mut self, id: &Value, request: PromptRequest) -> io::Result<()> {
        let Some(live) = self.live.as_mut().filter(|l| l.id == request.session_id) else {
            return self.out.error(id, code::INVALID_PARAMS, "no such session");
        };
        if live.prompt.is_some() {
            return self.out.error(
                id,
                code::INVALID_REQUEST,
                "a prompt is already running in this session: cancel it or wait for its end",
            );
        }
        let text = prompt_text(&request.prompt);
        let op = match input::route(&text, &self.commands) {
            input::Routed::Empty => Err("the prompt is empty".to_string()),
            input::Routed::Builtin(_) => {
                Err("built-in commands such as /help are not offered over ACP".to_string())
            }
            input::Routed::Shell(_) => {
                Err("`!command` (shell mode) is not offered over ACP".to_string())
            }
            input::Routed::Error(message) => Err(message),
            routed => routed
                .to_op(InputOrigin::Typed)
                .ok_or_else(|| "this prompt cannot be run".to_string()),
        };
        match op {
            Ok(op) => {
                let _ = live.handle.ops.send(op);
                live.prompt = Some(id.clone());
                Ok(())
            }
            Err(message) => self.out.error(id, code::INVALID_PARAMS, &message),
        }
    }

    fn cancel(&mut self, params: Value) {
        let Ok(cancel) = serde_json::from_value::<CancelNotification>(params) else {
            return;
        };
        if let Some(live) = &self.live
            && live.id == cancel.session_id
            && live.prompt.is_some()
        {
            // A permission request still open is answered cancelled: whatever the client
            // answers it later approves nothing.
            self.asked.clear();
            let _ = live.handle.ops.send(Op::Interrupt);
        }
    }

    /// The client answered a request of ours: a permission request's answer goes to
    /// the agent; anything else (an id never sent, or answered already) is ignored.
    fn answered(&mut self, id: &Value, outcome: Result<Value, Value>) {
        let Value::String(id) = id else { return };
        if self.fs_pending.answer(id, outcome.clone()) {
            return;
        }
        let Some(call_id) = self.asked.remove(id) else {
            return;
        };
        if let Some(live) = &self.live {
            let decision = approvals::decision(outcome);
            let _ = live.handle.ops.send(Op::Approval { call_id, decision });
        }
    }

    /// Sends a file tool's request to the client; a request that cannot be written is
    /// answered with an error at once.
    fn ask_files(&mut self, call: client_fs::FsCall) -> io::Result<()> {
        let params = match call.method.params() {
            Ok(params) => params,
            Err(e) => {
                let _ = call
                    .reply
                    .send(Err(serde_json::json!({"message": e.to_string()})));
                return Ok(());
            }
        };
        let name = call.method.name();
        let id = self.fs_pending.add(call.reply);
        self.out.request(&Value::String(id), name, &params)
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        let Some(live) = &mut self.live else {
            return Ok(());
        };
        if let Event::ApprovalRequest(ask) = event {
            match approvals::ask(&live.id, ask) {
                approvals::Ask::Client(request) => {
                    self.requests_made += 1;
                    let id = format!("harness9-permission-{}", self.requests_made);
                    self.asked.insert(id.clone(), ask.call_id.clone());
                    self.out
                        .request(&Value::String(id), "session/request_permission", &request)?;
                }
                approvals::Ask::Answer(decision) => {
                    let _ = live.handle.ops.send(Op::Approval {
                        call_id: ask.call_id.clone(),
                        decision,
                    });
                }
            }
            return Ok(());
        }
        let update = self
            .tool_calls
            .update_for(event)
            .or_else(|| updates::update_for(event));
        if let Some(update) = update {
            let notification = SessionNotification::new(live.id.clone(), update);
            self.out.notify("session/update", &notification)?;
        }
        if let Event::TurnComplete { .. } = event {
            // Nothing of the turn waits for an answer or runs any more.
            self.asked.clear();
            self.tool_calls = tool_calls::ToolCalls::default();
        }
        if let Event::TurnComplete { outcome, .. } = event
            && let Some(id) = live.prompt.take()
        {
            return match updates::stop_reason(outcome) {
                Ok(stop) => self.out.result(&id, &PromptResponse::new(stop)),
                Err((kind, message)) => self.out.error(
                    &id,
                    code::INTERNAL_ERROR,
                    &format!("{}: {message}", kind.as_str()),
                ),
            };
        }
        Ok(())
    }
}

/// The user message a prompt's blocks make: text as it is, links by their URI; other
/// blocks are not offered in the capabilities and are left out.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(link.uri.clone()),
            _ => {}
        }
    }
    parts.join("\n")
}

/// Whether two paths name the same directory (both resolved; an unresolvable one is
/// never the same).
fn same_directory(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
