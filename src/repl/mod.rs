//! The line REPL: the frontend for piped input (CI, scripts) and for terminals that
//! should not get the full-screen UI (`--no-tui`, `TERM=dumb`, stdout not a terminal).
//! Each input line is one user turn, routed by [`crate::input::route`] exactly as in the
//! TUI; events are rendered by the headless renderer (same JSON schema as print mode),
//! with the assistant's Markdown streamed as plain or lightly styled text.
//!
//! It owns the REPL's loop and state: when to read the next line (only while no turn
//! runs, so output never garbles the line being typed), built-in commands, inline
//! approvals on a terminal, Ctrl-C, SIGTERM and SIGHUP (every command stopped, the
//! terminal's modes put back), and the summary main turns into an exit code; agent
//! events are applied in `events.rs`, one step per kind. It talks to the agent only
//! through [`AgentHandle`] (the slash commands it routes with arrive as events) and must
//! not know how turns work.

mod driver;
mod events;
mod markdown;
mod render;
mod source;
mod stream_input;
mod table;

use std::collections::VecDeque;
use std::io::{self, IsTerminal, Write};

use tokio::sync::mpsc;

use crate::agent::{AgentHandle, SessionInfo};
use crate::input::{self, Builtin, PermissionsCommand, Routed};
use crate::print::{Activity, OutputFormat};
use crate::protocol::{ApprovalDecision, ErrorKind, Event, Op, SlashCommands, Usage};
use crate::signals::{EndingSignal, EndingSignals};
use crate::sink::{ReaderState, ReaderWatch, Sink};

pub use markdown::{MarkdownStream, MarkdownStyle};
pub use render::AnswerText;
use render::{AnswerDelivery, ReplRenderer, TurnSeparation};
use source::{Answer, Reply, TerminalInput};
pub use stream_input::{INPUT_SCHEMA_VERSION, InputFormat};

/// Where input lines come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplInput {
    /// A terminal: rustyline editing, history, completion, inline approvals.
    Terminal,
    /// A pipe or file: one turn per line, no prompts, approvals denied.
    Piped,
    /// A program driving the session with JSON lines (`--input-format stream-json`):
    /// messages, approval answers, interrupts, mode changes (docs/HEADLESS.md).
    StreamJson,
}

/// How the REPL runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplOptions {
    /// Output format (text, json, stream-json).
    pub format: OutputFormat,
    /// Whether tool activity is shown on stderr in text output.
    pub activity: Activity,
    /// Terminal or pipe.
    pub input: ReplInput,
    /// Rendered Markdown, or the model's text as written (`--raw`).
    pub answer: AnswerText,
    /// Whether reasoning is shown on stderr in the text format.
    pub thoughts: crate::print::ThoughtDisplay,
    /// The command line's prompt (`harness9 "fix the bug"`): the first turn, as typed
    /// (its `@path` mentions are read even when the lines after it come from a pipe).
    pub first_prompt: Option<String>,
}

/// How a REPL session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplSummary {
    /// The kind of the first failed turn, if any turn failed.
    pub failure: Option<ErrorKind>,
    /// Usage of the whole session.
    pub usage: Usage,
    /// Whether stdout still had a reader at the end; a reader that went away
    /// (`| head`) ended the session early.
    pub reader: ReaderState,
    /// The signal that ended the session (SIGTERM, SIGHUP): every command was stopped
    /// and the terminal restored; main exits with 128 + its number.
    pub signal: Option<EndingSignal>,
}

/// Why the REPL could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplError {
    /// Signals could not be listened for, or reading input or writing output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The line editor could not start on the terminal.
    #[error(transparent)]
    LineEditor(#[from] rustyline::error::ReadlineError),
}

/// Runs the REPL until the input ends (or `/exit`), the last turn has completed and
/// the agent has shut down.
pub async fn run(
    handle: AgentHandle,
    info: SessionInfo,
    options: ReplOptions,
) -> Result<ReplSummary, ReplError> {
    let stdout_is_terminal = io::stdout().is_terminal();
    let style = markdown_style(stdout_is_terminal, &|name| std::env::var_os(name));
    let stdout = Sink::new(io::stdout());
    let reader = stdout.watch();
    let renderer = ReplRenderer::new(
        options.format,
        options.activity,
        style,
        stdout,
        Sink::new(io::stderr()),
    )
    .with_delivery(if stdout_is_terminal {
        AnswerDelivery::Live
    } else {
        AnswerDelivery::PerRequest
    })
    .with_answer_text(options.answer)
    .with_thoughts(options.thoughts)
    .with_separation(match options.input {
        ReplInput::Terminal => TurnSeparation::None,
        ReplInput::Piped | ReplInput::StreamJson => TurnSeparation::BlankLine,
    })
    .with_input_schema(match options.input {
        ReplInput::StreamJson => Some(INPUT_SCHEMA_VERSION),
        ReplInput::Terminal | ReplInput::Piped => None,
    });
    // Listen for SIGINT before the line editor starts: it restores the handler it
    // finds after each read. SIGTERM and SIGHUP end the session.
    let interrupts = forward_interrupts()?;
    let ending = EndingSignals::listen()?;
    // The line editor switches the terminal to raw mode while it reads; a signal that
    // ends the session puts back the mode the terminal had here.
    let saved_terminal = match options.input {
        ReplInput::Terminal => nix::sys::termios::tcgetattr(io::stdin()).ok(),
        ReplInput::Piped | ReplInput::StreamJson => None,
    };
    let (terminal, replies) = match options.input {
        ReplInput::Piped => (
            None,
            source::spawn_line_reader(io::BufReader::new(io::stdin())),
        ),
        ReplInput::StreamJson => (
            None,
            source::spawn_driver_reader(io::BufReader::new(io::stdin())),
        ),
        ReplInput::Terminal => {
            let (t, rx) = TerminalInput::start(info.home.clone())?;
            (Some(t), rx)
        }
    };
    let mut repl = Repl::new(
        handle,
        info,
        options.input,
        renderer,
        terminal,
        replies,
        interrupts,
        reader,
    );
    repl.ending = Some(ending);
    repl.saved_terminal = saved_terminal;
    repl.first_prompt = options.first_prompt;
    Ok(repl.run().await?)
}

/// The next SIGTERM or SIGHUP, when they are listened for; never otherwise.
async fn ending_signal(ending: &mut Option<EndingSignals>) -> EndingSignal {
    match ending {
        Some(signals) => signals.recv().await,
        None => std::future::pending().await,
    }
}

/// Plain text unless stdout is a terminal that takes colours (`NO_COLOR` unset or
/// empty, `TERM` not `dumb`).
fn markdown_style(
    stdout_terminal: bool,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> MarkdownStyle {
    let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = env("TERM").is_some_and(|t| t == "dumb");
    if stdout_terminal && !no_color && !dumb {
        MarkdownStyle::Ansi
    } else {
        MarkdownStyle::Plain
    }
}

/// Each Ctrl-C (SIGINT) becomes one message on the returned channel.
fn forward_interrupts() -> io::Result<mpsc::UnboundedReceiver<()>> {
    let (tx, rx) = mpsc::unbounded_channel();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut sigint = signal(SignalKind::interrupt())?;
        tokio::spawn(async move {
            while sigint.recv().await.is_some() {
                if tx.send(()).is_err() {
                    return;
                }
            }
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).is_err() {
                return;
            }
        }
    });
    Ok(rx)
}

/// What the REPL is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Ready for the next input.
    Idle,
    /// A turn runs.
    Turn,
    /// Waiting for [`Event::ConversationCleared`].
    Clearing,
    /// Waiting for [`Event::ModelChanged`] or [`Event::ModelList`].
    SwitchingModel,
    /// Waiting for [`Event::EffortChanged`].
    SettingEffort,
    /// Waiting for [`Event::Compacted`], or the warning saying why not.
    Compacting,
    /// Waiting for [`Event::SessionList`], or the warning saying why not.
    Listing,
    /// Waiting for [`Event::Permissions`], [`Event::PermissionRemoved`] or the warning
    /// saying why not.
    Permissions,
    /// Waiting for [`Event::SessionResumed`], or the warning saying why not.
    Resuming,
    /// Waiting for [`Event::Exported`], or the warning saying why not.
    Exporting,
    /// Waiting for [`Event::Undone`] or [`Event::SessionDiff`], or the warning saying
    /// why not.
    ProjectChanges,
    /// Waiting for [`Event::SkillsReloaded`].
    ReloadingSkills,
    /// Waiting for [`Event::SkillList`].
    ListingSkills,
    /// Waiting for [`Event::McpServerList`].
    ListingMcpServers,
    /// Waiting for [`Event::PluginList`].
    ListingPlugins,
    /// Waiting for [`Event::HookList`].
    ListingHooks,
    /// Waiting for [`Event::Status`].
    Status,
    /// Waiting for [`Event::Context`].
    Context,
    /// [`Op::Shutdown`] sent; waiting for [`Event::ShutdownComplete`].
    ShuttingDown,
    /// The agent has stopped.
    Done,
}

struct Repl<O: Write, E: Write> {
    ops: mpsc::UnboundedSender<Op>,
    events: mpsc::UnboundedReceiver<Event>,
    info: SessionInfo,
    input: ReplInput,
    renderer: ReplRenderer<O, E>,
    /// The line editor (terminal input only).
    terminal: Option<TerminalInput>,
    replies: mpsc::UnboundedReceiver<Reply>,
    interrupts: mpsc::UnboundedReceiver<()>,
    /// Whether stdout's reader is still there.
    reader: ReaderWatch,
    /// The session is already winding down because stdout's reader went away.
    stopped_for_reader: bool,
    state: State,
    /// The terminal thread is reading (a line or an answer): print nothing meanwhile.
    reading: bool,
    /// The note about a failed turn's messages, printed after the turn's error.
    left_out: Option<String>,
    /// No more input will come (EOF, `/exit`, Ctrl-C in pipe mode).
    input_closed: bool,
    /// Events held back while the terminal thread reads.
    pending: VecDeque<Event>,
    /// The approval being asked on the terminal.
    asking: Option<String>,
    /// What the question being asked is about.
    asked: Asked,
    interrupts_seen: u32,
    model: String,
    /// The reasoning effort in force (from `SessionConfigured`, then `EffortChanged`).
    effort: Option<crate::protocol::Effort>,
    /// The approval mode in force.
    approval_mode: crate::protocol::ApprovalMode,
    /// The slash commands for routing and completion, as the agent last sent them.
    commands: SlashCommands,
    usage: Usage,
    /// What each sub-agent consumed (part of `usage`), for `/usage`.
    sub_agents: crate::protocol::SubAgentUsage,
    context_tokens: u64,
    /// The model's context window, when known (learnt while the session runs).
    context_window: Option<u64>,
    failure: Option<ErrorKind>,
    /// SIGTERM and SIGHUP, when listened for.
    ending: Option<EndingSignals>,
    /// The signal that ended the session.
    signal: Option<EndingSignal>,
    /// The terminal's mode before the line editor started (terminal input only).
    saved_terminal: Option<nix::sys::termios::Termios>,
    /// The command line's prompt, sent before any line is read.
    first_prompt: Option<String>,
    /// What a stream-json driver sent and was asked (`ReplInput::StreamJson`).
    driver: driver::Driver,
}

impl<O: Write, E: Write> Repl<O, E> {
    // Each argument is a separate wire of the loop (agent, input, output, signals);
    // bundling them would only move the list into a struct built in one place.
    #[allow(clippy::too_many_arguments)]
    fn new(
        handle: AgentHandle,
        info: SessionInfo,
        input: ReplInput,
        renderer: ReplRenderer<O, E>,
        terminal: Option<TerminalInput>,
        replies: mpsc::UnboundedReceiver<Reply>,
        interrupts: mpsc::UnboundedReceiver<()>,
        reader: ReaderWatch,
    ) -> Self {
        Repl {
            ops: handle.ops,
            events: handle.events,
            model: info.model.clone(),
            effort: None,
            context_window: info.context_window,
            approval_mode: info.approval_mode,
            commands: info.commands.clone(),
            info,
            input,
            renderer,
            terminal,
            replies,
            interrupts,
            reader,
            stopped_for_reader: false,
            state: State::Idle,
            reading: false,
            left_out: None,
            input_closed: false,
            pending: VecDeque::new(),
            asking: None,
            asked: Asked::Call,
            interrupts_seen: 0,
            usage: Usage::default(),
            sub_agents: Default::default(),
            context_tokens: 0,
            failure: None,
            ending: None,
            signal: None,
            saved_terminal: None,
            first_prompt: None,
            driver: driver::Driver::default(),
        }
    }

    async fn run(mut self) -> io::Result<ReplSummary> {
        for warning in std::mem::take(&mut self.info.startup_warnings) {
            self.renderer.warning(&warning)?;
        }
        if self.input == ReplInput::Terminal {
            self.renderer.info(&format!(
                "harness9 · {} · {} · /help for commands, Ctrl-D to quit",
                self.model,
                self.info.workdir.display()
            ))?;
        }
        if let Some(text) = self.first_prompt.take() {
            self.on_line_from(&text, crate::protocol::InputOrigin::Typed)?;
        }
        loop {
            while !self.reading {
                let Some(event) = self.pending.pop_front() else {
                    break;
                };
                self.on_event(event)?;
            }
            if self.state == State::Done {
                break;
            }
            self.stop_if_nobody_reads();
            if self.state == State::Idle && !self.reading {
                // A driver's messages wait in order for the turns before them.
                if let Some(message) = self.driver.next_message() {
                    self.send_driver_message(message)?;
                    continue;
                }
                if self.input_closed {
                    self.send(Op::Shutdown);
                    self.state = State::ShuttingDown;
                } else if let Some(terminal) = &self.terminal {
                    terminal.request_line(self.commands.clone());
                    self.reading = true;
                }
            }
            let take_reply = match (&self.terminal, self.input) {
                (Some(_), _) => self.reading,
                // A driver's answers, interrupts and mode changes act while a turn runs.
                (None, ReplInput::StreamJson) => !self.input_closed,
                (None, _) => self.state == State::Idle && !self.input_closed,
            };
            tokio::select! {
                Some(()) = self.interrupts.recv() => {
                    if self.on_interrupt()? {
                        // The second Ctrl-C in a pipe: nothing waits for the agent,
                        // and nothing it started is left running.
                        crate::signals::stop_everything().await;
                        break;
                    }
                }
                signal = ending_signal(&mut self.ending) => {
                    self.end_by_signal(signal).await;
                    break;
                }
                event = self.events.recv() => match event {
                    Some(event) => self.pending.push_back(event),
                    None => {
                        self.agent_gone()?;
                        break;
                    }
                },
                reply = self.replies.recv(), if take_reply => {
                    self.reading = false;
                    self.on_reply(reply.unwrap_or(Reply::Eof))?;
                }
            }
        }
        Ok(ReplSummary {
            failure: self.failure,
            usage: self.usage,
            reader: self.reader.state(),
            signal: self.signal,
        })
    }

    /// SIGTERM or SIGHUP: the agent is told to stop, every command and server it
    /// started is stopped, the agent gets half a second to say it has shut down, and
    /// the terminal gets its mode back.
    async fn end_by_signal(&mut self, signal: EndingSignal) {
        self.send(Op::Shutdown);
        crate::signals::stop_everything().await;
        let events = &mut self.events;
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), async {
            while let Some(event) = events.recv().await {
                if matches!(event, Event::ShutdownComplete { .. }) {
                    break;
                }
            }
        })
        .await;
        if let Some(saved) = &self.saved_terminal {
            let _ = nix::sys::termios::tcsetattr(
                io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                saved,
            );
            // The line editor also switched bracketed paste on while reading.
            let mut stdout = io::stdout();
            let _ = stdout.write_all(b"\x1b[?2004l");
            let _ = stdout.flush();
        }
        self.state = State::Done;
        self.signal = Some(signal);
    }

    /// stdout's reader went away (`| head`): nobody will see more, so read no more
    /// input and stop the running turn; the session then shuts down as at EOF.
    fn stop_if_nobody_reads(&mut self) {
        if self.reader.state() == ReaderState::Reading || self.stopped_for_reader {
            return;
        }
        self.stopped_for_reader = true;
        self.input_closed = true;
        if self.state == State::Turn {
            self.send(Op::Interrupt);
        }
    }

    fn send(&self, op: Op) {
        // A closed channel shows up as the event stream ending.
        let _ = self.ops.send(op);
    }

    fn fail(&mut self, kind: ErrorKind) {
        self.failure.get_or_insert(kind);
    }

    fn agent_gone(&mut self) -> io::Result<()> {
        if !matches!(self.state, State::ShuttingDown | State::Done) {
            self.renderer.error("the agent stopped unexpectedly")?;
            self.fail(ErrorKind::Internal);
        }
        Ok(())
    }

    /// Ctrl-C. Returns true when the REPL must stop at once.
    fn on_interrupt(&mut self) -> io::Result<bool> {
        self.interrupts_seen += 1;
        match self.input {
            // On a terminal SIGINT only arrives while no line is being edited (the
            // editor reads Ctrl-C as a key): it stops the running turn.
            ReplInput::Terminal => {
                if self.state == State::Turn {
                    self.send(Op::Interrupt);
                }
                Ok(false)
            }
            // In a pipe: stop the running turn and read no more input; a second
            // Ctrl-C stops waiting for the agent.
            ReplInput::Piped | ReplInput::StreamJson => {
                self.fail(ErrorKind::Interrupted);
                if self.interrupts_seen > 1 {
                    return Ok(true);
                }
                self.input_closed = true;
                if self.state == State::Turn {
                    self.send(Op::Interrupt);
                }
                Ok(false)
            }
        }
    }

    fn on_reply(&mut self, reply: Reply) -> io::Result<()> {
        match reply {
            Reply::Line(line) => self.on_line(&line),
            Reply::Driver { line, input } => self.on_driver_line(line, input),
            Reply::BadInput { line, problem } => self.on_bad_input(line, &problem),
            Reply::Eof if self.input == ReplInput::StreamJson => self.driver_input_ended(),
            Reply::Eof => {
                self.input_closed = true;
                Ok(())
            }
            Reply::Failed(message) => {
                self.fail(ErrorKind::Internal);
                self.renderer.error(&message)?;
                match self.input {
                    ReplInput::StreamJson => self.driver_input_ended(),
                    ReplInput::Terminal | ReplInput::Piped => {
                        self.input_closed = true;
                        Ok(())
                    }
                }
            }
            Reply::Answer(answer) => {
                let Some(call_id) = self.asking.take() else {
                    return Ok(());
                };
                let plan = |mode| ApprovalDecision::ApprovePlan { mode };
                let decision = match (answer, self.asked) {
                    // A plan: y, a and p approve it for auto-edit, full-auto and suggest.
                    (Answer::Yes, Asked::Plan) => plan(crate::protocol::ApprovalMode::AutoEdit),
                    (Answer::Always, Asked::Plan) => plan(crate::protocol::ApprovalMode::FullAuto),
                    (Answer::Project, Asked::Plan) => plan(crate::protocol::ApprovalMode::Suggest),
                    (answer, _) => match answer {
                        Answer::Yes => ApprovalDecision::Approve,
                        Answer::Always => ApprovalDecision::ApproveForSession,
                        Answer::Project => ApprovalDecision::ApproveForProject,
                        Answer::No => ApprovalDecision::Deny { reason: None },
                        Answer::Cancel => ApprovalDecision::Deny {
                            reason: Some("the user stopped the turn".into()),
                        },
                        Answer::Eof => {
                            self.input_closed = true;
                            ApprovalDecision::Deny {
                                reason: Some("the user closed the input".into()),
                            }
                        }
                    },
                };
                self.send(Op::Approval { call_id, decision });
                if answer == Answer::Cancel {
                    self.send(Op::Interrupt);
                }
                Ok(())
            }
        }
    }

    fn on_line(&mut self, line: &str) -> io::Result<()> {
        // Lines read from a pipe are data: their `@path` mentions are not read.
        let origin = match self.input {
            ReplInput::Terminal => crate::protocol::InputOrigin::Typed,
            ReplInput::Piped | ReplInput::StreamJson => crate::protocol::InputOrigin::Piped,
        };
        self.on_line_from(line, origin)
    }

    /// A line routed as input that came from `origin`.
    fn on_line_from(&mut self, line: &str, origin: crate::protocol::InputOrigin) -> io::Result<()> {
        match input::route(line, &self.commands) {
            Routed::Empty => Ok(()),
            routed @ (Routed::Prompt(_) | Routed::Invoke(_) | Routed::Shell(_)) => {
                if let Some(op) = routed.to_op(origin) {
                    self.send(op);
                }
                self.state = State::Turn;
                Ok(())
            }
            Routed::Error(message) => self.renderer.error(&message),
            Routed::Builtin(builtin) => self.on_builtin(builtin),
        }
    }

    fn on_builtin(&mut self, builtin: Builtin) -> io::Result<()> {
        match builtin {
            Builtin::Help => {
                let text =
                    render::help_text(crate::protocol::BUILTINS, self.input == ReplInput::Terminal);
                self.renderer.notice(&text)
            }
            Builtin::Skills => {
                self.send(Op::ListSkills);
                self.state = State::ListingSkills;
                Ok(())
            }
            Builtin::Mcp => {
                self.send(Op::ListMcpServers);
                self.state = State::ListingMcpServers;
                Ok(())
            }
            Builtin::Plugins => {
                self.send(Op::ListPlugins);
                self.state = State::ListingPlugins;
                Ok(())
            }
            Builtin::Hooks => {
                self.send(Op::ListHooks);
                self.state = State::ListingHooks;
                Ok(())
            }
            Builtin::Approvals(None) => {
                let mode = mode_name(self.approval_mode);
                self.renderer.notice(&format!(
                    "approval mode: {mode} (switch with /approvals suggest|auto-edit|full-auto)"
                ))
            }
            Builtin::Approvals(Some(mode)) => {
                self.send(Op::SetApprovalMode { mode });
                Ok(())
            }
            Builtin::Plan(task) => {
                self.send(Op::SetApprovalMode {
                    mode: crate::protocol::ApprovalMode::Plan,
                });
                if let Some(text) = task {
                    self.send(Op::UserInput {
                        text,
                        origin: crate::protocol::InputOrigin::Typed,
                        piped: None,
                        images: Vec::new(),
                    });
                    self.state = State::Turn;
                }
                Ok(())
            }
            Builtin::SkillsReload => {
                self.send(Op::ReloadSkills);
                self.state = State::ReloadingSkills;
                Ok(())
            }
            Builtin::Undo | Builtin::Diff => {
                self.send(if builtin == Builtin::Undo {
                    Op::Undo
                } else {
                    Op::Diff
                });
                self.state = State::ProjectChanges;
                Ok(())
            }
            Builtin::Clear => {
                self.send(Op::NewConversation);
                self.state = State::Clearing;
                Ok(())
            }
            Builtin::Compact(focus) => {
                self.send(Op::Compact { focus });
                self.state = State::Compacting;
                Ok(())
            }
            Builtin::Resume(None) => {
                self.send(Op::ListSessions);
                self.state = State::Listing;
                Ok(())
            }
            Builtin::Resume(Some(id)) => {
                self.send(Op::Resume { id });
                self.state = State::Resuming;
                Ok(())
            }
            Builtin::Permissions(command) => {
                self.send(match command {
                    PermissionsCommand::List => Op::ListPermissions,
                    PermissionsCommand::Remove { number } => Op::RemovePermission { number },
                });
                self.state = State::Permissions;
                Ok(())
            }
            Builtin::Export { format, path } => {
                self.send(Op::Export { format, path });
                self.state = State::Exporting;
                Ok(())
            }
            Builtin::Exit => {
                self.input_closed = true;
                Ok(())
            }
            Builtin::Model(None) => {
                self.send(Op::ListModels);
                self.state = State::SwitchingModel;
                Ok(())
            }
            Builtin::Model(Some(model)) => {
                self.send(Op::SetModel { model });
                self.state = State::SwitchingModel;
                Ok(())
            }
            Builtin::Effort(None) => {
                let text = format!(
                    "reasoning effort: {} (set with /effort low|medium|high|off)",
                    crate::protocol::Effort::describe(self.effort)
                );
                self.renderer.notice(&text)
            }
            Builtin::Effort(Some(effort)) => {
                self.send(Op::SetEffort { effort });
                self.state = State::SettingEffort;
                Ok(())
            }
            Builtin::Status => {
                self.send(Op::Status);
                self.state = State::Status;
                Ok(())
            }
            Builtin::Context => {
                self.send(Op::Context);
                self.state = State::Context;
                Ok(())
            }
            Builtin::Usage => {
                let mut text =
                    render::usage_text(&self.usage, self.context_tokens, self.context_window);
                for line in self.sub_agents.lines() {
                    text.push('\n');
                    text.push_str(&line);
                }
                self.renderer.notice(&text)
            }
        }
    }

    /// The answer to what the REPL was waiting for in `waiting` came: read on.
    fn done_waiting(&mut self, waiting: State) {
        if self.state == waiting {
            self.state = State::Idle;
        }
    }
}

#[cfg(test)]
mod tests;

/// What an approval question is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    /// A tool call.
    Call,
    /// A plan (`exit_plan`): its answers choose the mode to carry it out in.
    Plan,
}

/// An approval mode's name as typed.
fn mode_name(mode: crate::protocol::ApprovalMode) -> &'static str {
    match mode {
        crate::protocol::ApprovalMode::Suggest => "suggest",
        crate::protocol::ApprovalMode::AutoEdit => "auto-edit",
        crate::protocol::ApprovalMode::FullAuto => "full-auto",
        crate::protocol::ApprovalMode::Plan => "plan",
    }
}
