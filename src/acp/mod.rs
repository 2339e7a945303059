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
//! Nothing is resolved before `initialize` is answered: each `session/new` is opened for
//! the editor's `cwd` and MCP servers by the caller's [`Opener`] ([`session`]), and one
//! process runs as many sessions as the editor opens. A call that needs approval is put
//! to the client as `session/request_permission` ([`approvals`]). Tool calls are shown
//! with their kind, locations, diff and streamed output ([`tool_calls`]); when the
//! client offers its files, the file tools read and write through it ([`client_fs`]).

mod approvals;
mod client_fs;
mod commands;
mod modes;
mod plan;
mod replay;
pub mod session;
mod tool_calls;
mod updates;
pub mod wire;

use std::collections::HashMap;
use std::io::{self, Write};

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, CancelNotification, ClientCapabilities, ContentBlock,
    EmbeddedResourceResource, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SessionId,
    SessionNotification, SetSessionModeRequest, SetSessionModeResponse, StopReason,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::agent::AgentHandle;
use crate::mentions;
use crate::protocol::{ApprovalMode, Event, ImageInput, Op, ResumedSession, SlashCommands};
use crate::signals::{EndingSignal, EndingSignals};
use session::{Conversation, OpenError, OpenRequest, Opener};
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
/// Nothing is resolved before `initialize` is answered: each `session/new` (or
/// `session/load`) has `opener` prepare its session, for the editor's directory.
pub fn run<O: Opener>(runtime: &tokio::runtime::Runtime, opener: O) -> Result<AcpEnd, AcpError> {
    runtime.block_on(async {
        let (lines, incoming) = mpsc::channel(8);
        tokio::spawn(read_stdin(lines));
        let (from_agents, agents) = mpsc::unbounded_channel();
        let (fs_calls, fs_incoming) = mpsc::unbounded_channel();
        let mut server = Server {
            out: Writer::new(io::stdout().lock()),
            opener,
            sessions: HashMap::new(),
            from_agents,
            asked: HashMap::new(),
            requests_made: 0,
            sessions_made: 0,
            client: ClientCapabilities::default(),
            fs_calls,
            fs_pending: client_fs::Pending::default(),
        };
        server.serve(incoming, agents, fs_incoming).await
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

/// What an agent said, tagged with its session.
enum FromAgent {
    /// One of its events.
    Event(SessionId, Box<Event>),
    /// Its event stream ended.
    Ended(SessionId),
}

/// A permission request sent to the client and not answered yet.
struct Pending {
    /// The session that asked.
    session: SessionId,
    /// The call (or plan) it is about.
    call_id: String,
    /// What its answer may choose.
    asked: approvals::Asked,
}

/// A `session/prompt` being answered.
struct Running {
    /// Its request id.
    id: Value,
    /// The event that ends it.
    ends: commands::Ends,
}

/// A running session.
struct Live {
    /// Where its ops go.
    ops: mpsc::UnboundedSender<Op>,
    /// The slash commands its prompts are routed with (replaced when the agent says).
    commands: SlashCommands,
    /// The `session/prompt` request being answered, if one runs.
    prompt: Option<Running>,
    /// Whether its model takes images, and how large.
    images: crate::images::ImageIntake,
    /// Its tool calls running and their output so far.
    tool_calls: tool_calls::ToolCalls,
}

struct Server<W: Write, O: Opener> {
    out: Writer<W>,
    opener: O,
    /// The running sessions, by id.
    sessions: HashMap<SessionId, Live>,
    /// Where each session's events are passed on to.
    from_agents: mpsc::UnboundedSender<FromAgent>,
    /// The permission requests sent and not answered, by our request id.
    asked: HashMap<String, Pending>,
    /// How many requests of ours were sent (for their ids).
    requests_made: u64,
    /// How many sessions were opened (for the ids of sessions that are not saved).
    sessions_made: u64,
    /// What the client said it offers in `initialize`.
    client: ClientCapabilities,
    /// Where the sessions' file tools hand their requests to the client.
    fs_calls: mpsc::UnboundedSender<client_fs::FsCall>,
    /// The file requests sent to the client and not answered.
    fs_pending: client_fs::Pending,
}

impl<W: Write, O: Opener> Server<W, O> {
    async fn serve(
        &mut self,
        mut incoming: mpsc::Receiver<io::Result<Line>>,
        mut agents: mpsc::UnboundedReceiver<FromAgent>,
        mut fs_incoming: mpsc::UnboundedReceiver<client_fs::FsCall>,
    ) -> Result<AcpEnd, AcpError> {
        let mut ending = EndingSignals::listen()?;
        loop {
            tokio::select! {
                line = incoming.recv() => match line {
                    Some(Ok(Line::Text(text))) => self.message(&text).await?,
                    Some(Ok(Line::TooLong)) => self.out.error(
                        &Value::Null,
                        code::INVALID_REQUEST,
                        &format!("a message is at most {} bytes", wire::MAX_LINE),
                    )?,
                    Some(Ok(Line::End)) | None => {
                        self.shut_down(&mut agents).await;
                        return Ok(AcpEnd::Closed);
                    }
                    Some(Err(e)) => {
                        self.shut_down(&mut agents).await;
                        return Err(e.into());
                    }
                },
                Some(call) = fs_incoming.recv() => self.ask_files(call)?,
                said = agents.recv() => match said {
                    Some(FromAgent::Event(session, event)) => self.event(&session, &event)?,
                    Some(FromAgent::Ended(session)) => self.ended(&session)?,
                    // Never: this server holds a sender.
                    None => {}
                },
                signal = ending.recv() => {
                    for live in self.sessions.values() {
                        let _ = live.ops.send(Op::Shutdown);
                    }
                    crate::signals::stop_everything().await;
                    return Ok(AcpEnd::Signalled(signal));
                }
            }
        }
    }

    /// Stops every agent and waits for them to say so (half a second at most).
    async fn shut_down(&mut self, agents: &mut mpsc::UnboundedReceiver<FromAgent>) {
        for live in self.sessions.values() {
            let _ = live.ops.send(Op::Shutdown);
        }
        let mut running = self.sessions.len();
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), async {
            while running > 0
                && let Some(said) = agents.recv().await
            {
                if let FromAgent::Event(_, event) = said
                    && let Event::ShutdownComplete { .. } = *event
                {
                    running -= 1;
                }
            }
        })
        .await;
    }

    async fn message(&mut self, line: &[u8]) -> io::Result<()> {
        match wire::classify(line) {
            Incoming::Request { id, method, params } => self.request(&id, &method, params).await,
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

    async fn request(&mut self, id: &Value, method: &str, params: Value) -> io::Result<()> {
        match method {
            "initialize" => match serde_json::from_value::<InitializeRequest>(params) {
                Ok(request) => {
                    self.client = request.client_capabilities;
                    let response = InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(capabilities())
                        .agent_info(Implementation::new("harness9", env!("CARGO_PKG_VERSION")));
                    self.out.result(id, &response)
                }
                Err(e) => self.invalid_params(id, &e),
            },
            "session/new" => match serde_json::from_value::<NewSessionRequest>(params) {
                Ok(request) => {
                    let opened =
                        session::request(&request.cwd, &request.mcp_servers, Conversation::New);
                    match opened {
                        Ok(opened) => self.open_session(id, opened).await,
                        Err(e) => self.open_failed(id, &e),
                    }
                }
                Err(e) => self.invalid_params(id, &e),
            },
            "session/load" => match serde_json::from_value::<LoadSessionRequest>(params) {
                Ok(request) => {
                    let conversation = Conversation::Load {
                        id: request.session_id.0.to_string(),
                    };
                    match session::request(&request.cwd, &request.mcp_servers, conversation) {
                        Ok(opened) => self.open_session(id, opened).await,
                        Err(e) => self.open_failed(id, &e),
                    }
                }
                Err(e) => self.invalid_params(id, &e),
            },
            "session/set_mode" => match serde_json::from_value::<SetSessionModeRequest>(params) {
                Ok(request) => self.set_mode(id, &request),
                Err(e) => self.invalid_params(id, &e),
            },
            // No login is offered (none is advertised): the endpoint is configured.
            "authenticate" => self.out.error(id, code::INVALID_PARAMS, session::NO_LOGIN),
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

    /// Answers a `session/new` or `session/load` that could not be opened.
    fn open_failed(&mut self, id: &Value, e: &OpenError) -> io::Result<()> {
        let code = match e {
            OpenError::NoEndpoint { .. } => code::AUTH_REQUIRED,
            OpenError::Refused { .. } => code::INVALID_PARAMS,
            OpenError::Failed { .. } => code::INTERNAL_ERROR,
        };
        self.out.error(id, code, &e.to_string())
    }

    /// Opens and starts a session. A new one is answered with its id: harness9's saved
    /// session id (what `session/load` takes), or one of this process when sessions are
    /// not saved. A loaded one first replays what was said, then is answered.
    async fn open_session(&mut self, id: &Value, request: OpenRequest) -> io::Result<()> {
        let loading = match &request.conversation {
            Conversation::New => None,
            Conversation::Load { id } => Some(id.clone()),
        };
        let prepared = match self.opener.open(request).await {
            Ok(prepared) => prepared,
            Err(e) => return self.open_failed(id, &e),
        };
        let commands = prepared.info.commands.clone();
        let images = prepared.info.images;
        // The file tools learn the session's id once the agent has said it (below).
        let session_cell = client_fs::SessionCell::default();
        let mut prepared = prepared;
        prepared.setup.files =
            client_fs::access(&self.client, &session_cell, self.fs_calls.clone());
        let (mut handle, _info) = prepared.spawn();
        let Configured {
            saved_id,
            mode,
            mut early,
        } = configured(&mut handle).await;
        let Some(wanted) = loading else {
            self.sessions_made += 1;
            let session_id = SessionId::new(saved_id.unwrap_or_else(|| {
                format!("harness9-{}-{}", std::process::id(), self.sessions_made)
            }));
            let _ = session_cell.set(session_id.clone());
            self.start(session_id.clone(), handle, commands, images, early);
            let response = NewSessionResponse::new(session_id.clone()).modes(modes::state(mode));
            self.out.result(id, &response)?;
            return self.offer_commands(&session_id);
        };
        let resumed = match saved_id {
            Some(saved) if saved == wanted => resumed(&mut handle, &mut early).await,
            _ => None,
        };
        let Some(resumed) = resumed else {
            // The agent started a new conversation instead: not what was asked.
            let _ = handle.ops.send(Op::Shutdown);
            let why = early.iter().find_map(|e| match e {
                Event::Warning { message } => Some(message.as_str()),
                _ => None,
            });
            let message = why.unwrap_or("the saved session could not be loaded");
            return self.out.error(id, code::INVALID_PARAMS, message);
        };
        let session_id = SessionId::new(wanted);
        let _ = session_cell.set(session_id.clone());
        for update in replay::updates(&resumed.history) {
            let notification = SessionNotification::new(session_id.clone(), update);
            self.out.notify("session/update", &notification)?;
        }
        // What the agent said before it resumed goes with the replay.
        self.start(session_id.clone(), handle, commands, images, Vec::new());
        for event in &early {
            self.event(&session_id, event)?;
        }
        self.out
            .result(id, &LoadSessionResponse::new().modes(modes::state(mode)))?;
        self.offer_commands(&session_id)
    }

    /// Keeps a started session and passes its events (`early` first) on to the server.
    fn start(
        &mut self,
        session_id: SessionId,
        handle: AgentHandle,
        commands: SlashCommands,
        images: crate::images::ImageIntake,
        early: Vec<Event>,
    ) {
        let AgentHandle { ops, mut events } = handle;
        let to = self.from_agents.clone();
        let session = session_id.clone();
        tokio::spawn(async move {
            for event in early {
                if to
                    .send(FromAgent::Event(session.clone(), Box::new(event)))
                    .is_err()
                {
                    return;
                }
            }
            while let Some(event) = events.recv().await {
                if to
                    .send(FromAgent::Event(session.clone(), Box::new(event)))
                    .is_err()
                {
                    return;
                }
            }
            let _ = to.send(FromAgent::Ended(session));
        });
        self.sessions.insert(
            session_id,
            Live {
                ops,
                commands,
                prompt: None,
                images,
                tool_calls: tool_calls::ToolCalls::default(),
            },
        );
    }

    fn prompt(&mut self, id: &Value, request: PromptRequest) -> io::Result<()> {
        let Some(live) = self.sessions.get_mut(&request.session_id) else {
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
        let images = match prompt_images(&request.prompt, live.images) {
            Ok(images) => images,
            Err(message) => return self.out.error(id, code::INVALID_PARAMS, &message),
        };
        match commands::start(&text, &live.commands) {
            Ok(started) => {
                let to_model = started
                    .ops
                    .iter()
                    .any(|op| matches!(op, Op::UserInput { .. }));
                if !images.is_empty() && !to_model {
                    return self.out.error(
                        id,
                        code::INVALID_PARAMS,
                        "images go only with a prompt to the model, not with this command",
                    );
                }
                let mut images = Some(images);
                for op in started.ops {
                    let op = match op {
                        Op::UserInput { .. } => op.with_images(images.take().unwrap_or_default()),
                        other => other,
                    };
                    let _ = live.ops.send(op);
                }
                if started.ends == commands::Ends::AtOnce {
                    return self
                        .out
                        .result(id, &PromptResponse::new(StopReason::EndTurn));
                }
                live.prompt = Some(Running {
                    id: id.clone(),
                    ends: started.ends,
                });
                Ok(())
            }
            Err(message) => self.out.error(id, code::INVALID_PARAMS, &message),
        }
    }

    /// Ends the session's running prompt: done (`end_turn`).
    fn answer_done(&mut self, session: &SessionId) -> io::Result<()> {
        let running = self
            .sessions
            .get_mut(session)
            .and_then(|live| live.prompt.take());
        match running {
            Some(running) => self
                .out
                .result(&running.id, &PromptResponse::new(StopReason::EndTurn)),
            None => Ok(()),
        }
    }

    /// Tells the client which slash commands session `session` offers.
    fn offer_commands(&mut self, session: &SessionId) -> io::Result<()> {
        let Some(live) = self.sessions.get(session) else {
            return Ok(());
        };
        let update = commands::available(&live.commands);
        self.out.notify(
            "session/update",
            &SessionNotification::new(session.clone(), update),
        )
    }

    /// Switches the session's approval mode; the agent's answer becomes a
    /// `current_mode_update`.
    fn set_mode(&mut self, id: &Value, request: &SetSessionModeRequest) -> io::Result<()> {
        let Some(live) = self.sessions.get(&request.session_id) else {
            return self.out.error(id, code::INVALID_PARAMS, "no such session");
        };
        let Some(mode) = modes::parse(&request.mode_id.0) else {
            return self.out.error(
                id,
                code::INVALID_PARAMS,
                "no such mode: suggest, auto-edit, full-auto or plan",
            );
        };
        let _ = live.ops.send(Op::SetApprovalMode { mode });
        self.out.result(id, &SetSessionModeResponse::new())
    }

    fn cancel(&mut self, params: Value) {
        let Ok(cancel) = serde_json::from_value::<CancelNotification>(params) else {
            return;
        };
        if let Some(live) = self.sessions.get(&cancel.session_id)
            && live.prompt.is_some()
        {
            // A permission request still open is answered cancelled: whatever the client
            // answers it later approves nothing.
            self.asked.retain(|_, p| p.session != cancel.session_id);
            let _ = live.ops.send(Op::Interrupt);
        }
    }

    /// The client answered a request of ours: a permission request's answer goes to
    /// the agent; anything else (an id never sent, or answered already) is ignored.
    fn answered(&mut self, id: &Value, outcome: Result<Value, Value>) {
        let Value::String(id) = id else { return };
        if self.fs_pending.answer(id, outcome.clone()) {
            return;
        }
        let Some(pending) = self.asked.remove(id) else {
            return;
        };
        if let Some(live) = self.sessions.get(&pending.session) {
            let decision = approvals::decision(pending.asked, outcome);
            let _ = live.ops.send(Op::Approval {
                call_id: pending.call_id,
                decision,
            });
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

    /// A session's agent is gone: its running prompt fails, and it is forgotten.
    fn ended(&mut self, session: &SessionId) -> io::Result<()> {
        self.asked.retain(|_, p| &p.session != session);
        if let Some(live) = self.sessions.remove(session)
            && let Some(running) = live.prompt
        {
            return self.out.error(
                &running.id,
                code::INTERNAL_ERROR,
                "the session's agent stopped",
            );
        }
        Ok(())
    }

    fn event(&mut self, session: &SessionId, event: &Event) -> io::Result<()> {
        let Some(live) = self.sessions.get_mut(session) else {
            return Ok(());
        };
        if let Event::ApprovalRequest(ask) = event {
            let (request, asked) = approvals::ask(session, ask);
            self.requests_made += 1;
            let id = format!("harness9-permission-{}", self.requests_made);
            let pending = Pending {
                session: session.clone(),
                call_id: ask.call_id.clone(),
                asked,
            };
            self.asked.insert(id.clone(), pending);
            return self
                .out
                .request(&Value::String(id), "session/request_permission", &request);
        }
        if let Event::ApprovalModeChanged { mode } = event {
            let notification = SessionNotification::new(session.clone(), modes::changed(*mode));
            self.out.notify("session/update", &notification)?;
        }
        if let Event::SlashCommands(slash) = event {
            live.commands = slash.clone();
            let update = commands::available(slash);
            self.out.notify(
                "session/update",
                &SessionNotification::new(session.clone(), update),
            )?;
        }
        let update = live
            .tool_calls
            .update_for(event)
            .or_else(|| updates::update_for(event));
        if let Some(update) = update {
            let notification = SessionNotification::new(session.clone(), update);
            self.out.notify("session/update", &notification)?;
        }
        let ends = live.prompt.as_ref().map(|r| r.ends);
        match (event, ends) {
            (Event::ConversationCleared, Some(commands::Ends::Cleared)) => {
                return self.answer_done(session);
            }
            (Event::Status(report), Some(commands::Ends::Status)) => {
                let text: String = report
                    .lines()
                    .iter()
                    .map(|(label, value)| format!("{label}: {value}\n"))
                    .collect();
                let update = updates::message(&text);
                self.out.notify(
                    "session/update",
                    &SessionNotification::new(session.clone(), update),
                )?;
                return self.answer_done(session);
            }
            _ => {}
        }
        if let Event::TurnComplete { outcome, .. } = event {
            // Nothing of the turn waits for an answer or runs any more.
            self.asked.retain(|_, p| &p.session != session);
            if let Some(live) = self.sessions.get_mut(session) {
                live.tool_calls = tool_calls::ToolCalls::default();
            }
            if let Some(live) = self.sessions.get_mut(session)
                && let Some(Running { id, .. }) = live.prompt.take()
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
        }
        Ok(())
    }
}

/// What harness9 offers an editor: loading saved sessions, MCP servers over stdio and
/// streamable HTTP.
fn capabilities() -> AgentCapabilities {
    AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true))
}

/// Reads a resumed agent's events up to [`Event::SessionResumed`] (the others kept in
/// `early`, in order); none when its events end first.
async fn resumed(handle: &mut AgentHandle, early: &mut Vec<Event>) -> Option<Box<ResumedSession>> {
    while let Some(event) = handle.events.recv().await {
        match event {
            Event::SessionResumed(resumed) => return Some(resumed),
            event => early.push(event),
        }
    }
    None
}

/// Reads a just started agent's events up to [`Event::SessionConfigured`].
async fn configured(handle: &mut AgentHandle) -> Configured {
    let mut early = Vec::new();
    while let Some(event) = handle.events.recv().await {
        let said = match &event {
            Event::SessionConfigured {
                session_id,
                approval_mode,
                ..
            } => Some((session_id.clone(), *approval_mode)),
            _ => None,
        };
        early.push(event);
        if let Some((saved_id, mode)) = said {
            return Configured {
                saved_id,
                mode,
                early,
            };
        }
    }
    Configured {
        saved_id: None,
        mode: ApprovalMode::default(),
        early,
    }
}

/// What a just started agent said of itself.
struct Configured {
    /// The saved session's id (none when sessions are not saved).
    saved_id: Option<String>,
    /// The approval mode it starts in.
    mode: ApprovalMode,
    /// Every event read so far, in order, to pass on.
    early: Vec<Event>,
}

/// The images of a prompt's blocks (base64 data and a MIME type), each decoded and
/// checked here as the agent will check it again: an image type by its bytes, the
/// type it was said to be, within the size cap; the first refused one says why.
fn prompt_images(
    blocks: &[ContentBlock],
    intake: crate::images::ImageIntake,
) -> Result<Vec<ImageInput>, String> {
    let mut images = Vec::new();
    for block in blocks {
        let ContentBlock::Image(image) = block else {
            continue;
        };
        let max = match intake {
            crate::images::ImageIntake::Accept { max_bytes } => max_bytes,
            crate::images::ImageIntake::Refuse => {
                return Err(crate::images::IMAGES_OFF.to_string());
            }
        };
        let n = images.len() + 1;
        let name = format!("image {n}");
        let checked = crate::images::from_base64(&image.data, Some(&image.mime_type), &name, max)
            .map_err(|e| format!("image {n} of the prompt was refused: {e}"))?;
        images.push(ImageInput::Bytes {
            bytes: checked.bytes,
            name: checked.name,
        });
    }
    Ok(images)
}

/// The user message a prompt's blocks make: text as it is, links by their URI, and the
/// editor's embedded text resources (an `@file` in Zed, a buffer) attached after the
/// text as mentions attach files — `<file path="…">` blocks, each and all capped as
/// mentions are (the editor chose them, as a user typing `@path` does). Images are
/// taken apart (`prompt_images`); other blocks are not offered in the capabilities and
/// are left out.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    let mut attached = String::new();
    let mut budget = mentions::MAX_TOTAL_BYTES;
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(link.uri.clone()),
            ContentBlock::Resource(embedded) => {
                attached.push_str(&embedded_block(&embedded.resource, &mut budget));
            }
            _ => {}
        }
    }
    let mut text = parts.join("\n");
    if !attached.is_empty() {
        text.push_str("\n\n");
        text.push_str(&attached);
    }
    text
}

/// One embedded resource as an attachment block, its text cut (at a line end) to what
/// `budget` and the per-file cap leave.
fn embedded_block(resource: &EmbeddedResourceResource, budget: &mut usize) -> String {
    let (uri, text) = match resource {
        EmbeddedResourceResource::TextResourceContents(contents) => {
            (&contents.uri, Some(&contents.text))
        }
        EmbeddedResourceResource::BlobResourceContents(contents) => (&contents.uri, None),
        _ => return String::new(),
    };
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let Some(text) = text else {
        return format!("<file path=\"{path}\">\n(binary content: not attached)\n</file>\n");
    };
    let cap = mentions::MAX_FILE_BYTES.min(*budget);
    let mut body = if text.len() > cap {
        let mut end = cap;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let kept = text[..end].rfind('\n').map_or(end, |at| at + 1);
        format!(
            "{}[… cut: {kept} of {} bytes attached]\n",
            &text[..kept],
            text.len()
        )
    } else {
        text.clone()
    };
    if !body.ends_with('\n') {
        body.push('\n');
    }
    *budget = budget.saturating_sub(body.len());
    format!("<file path=\"{path}\">\n{body}</file>\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blocks(value: Value) -> Vec<ContentBlock> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn embedded_resources_are_attached_after_the_text_and_capped_like_mentions() {
        let text = prompt_text(&blocks(json!([
            {"type": "text", "text": "why does this panic?"},
            {"type": "resource", "resource": {"uri": "file:///p/src/lib.rs", "text": "fn main() {}"}},
            {"type": "resource_link", "uri": "file:///p/README.md", "name": "README.md"},
            {"type": "resource", "resource": {"uri": "file:///p/logo.png", "blob": "AAAA"}},
        ])));
        assert_eq!(
            text,
            "why does this panic?\nfile:///p/README.md\n\n<file path=\"/p/src/lib.rs\">\nfn main() {}\n</file>\n<file path=\"/p/logo.png\">\n(binary content: not attached)\n</file>\n"
        );
        // A buffer over the cap is cut at a line end and says so.
        let big = "line\n".repeat(mentions::MAX_FILE_BYTES / 5 + 100);
        let text = prompt_text(&blocks(json!([
            {"type": "text", "text": "look"},
            {"type": "resource", "resource": {"uri": "file:///p/big.txt", "text": big}},
        ])));
        assert!(
            text.len() < mentions::MAX_FILE_BYTES + 200,
            "{}",
            text.len()
        );
        assert!(text.contains("[… cut: "), "{text}");
        assert!(text.ends_with("attached]\n</file>\n"), "{text}");
    }
}
