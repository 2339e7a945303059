//! The agent's dispatcher: receives [`Op`]s, queues work, runs one turn at a time on its
//! own task, routes approval answers and interrupts to the running turn, answers the
//! frontends' questions that need no session state (permissions, `/skills`, `/mcp`) at
//! once, and shuts down cleanly. It must not know how events are drawn.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::approval::ApprovalPolicy;
use crate::agent::compact::{CompactError, compact_and_report};
use crate::agent::conversation::Conversation;
use crate::agent::hooks_session;
use crate::agent::hooks_turn::PromptHooks;
use crate::agent::saved;
use crate::agent::slash::run_skill;
use crate::agent::turn::{
    EventSink, PendingApprovals, SessionState, TurnContext, UserMessage, run_user_turn,
};
use crate::agent::{AgentHandle, AgentSetup};
use crate::protocol::ApprovalMode;
use crate::protocol::{
    ApprovalDecision, CompactionTrigger, ErrorKind, Event, Invocation, Op, ReloadTrigger,
    TurnOutcome, Usage,
};
use crate::sessions::{NoteKind, Record, SessionId};

/// Records what conversation turn `turn` changed in the project, when it ran a call that
/// may change files; a failure is a warning.
async fn end_changes(ctx: &TurnContext, turn: u64) {
    let Some(snapshots) = ctx.setup.snapshots.clone() else {
        return;
    };
    let problem = match tokio::task::spawn_blocking(move || snapshots.end_turn(turn)).await {
        Ok(Ok(_)) => return,
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    ctx.emit(Event::Warning {
        message: format!("{problem}; /undo cannot put back this turn's changes"),
    });
}

/// The answer to `/undo`: what was put back is also a note for the model's next
/// message (saved, so `-c` still tells it).
async fn undo(setup: &AgentSetup, state: &mut SessionState) -> Event {
    let event = project_changes(setup, Op::Undo).await;
    if let Event::Undone {
        outcome: outcome @ crate::protocol::UndoOutcome::Restored { .. },
    } = &event
    {
        state
            .conversation
            .add_note(NoteKind::Undo, crate::undo::undo_note(outcome));
    }
    event
}

/// The answer to `/undo` (`which` is [`Op::Undo`]) or `/diff`.
async fn project_changes(setup: &AgentSetup, which: Op) -> Event {
    let Some(snapshots) = setup.snapshots.clone() else {
        return Event::Warning {
            message: "this session keeps no pictures of the project, so /undo and /diff have nothing to work with".into(),
        };
    };
    let undo = matches!(which, Op::Undo);
    let done = tokio::task::spawn_blocking(move || {
        if undo {
            snapshots.undo().map(|outcome| Event::Undone { outcome })
        } else {
            snapshots.diff().map(|diff| Event::SessionDiff { diff })
        }
    })
    .await;
    match done {
        Ok(Ok(event)) => event,
        Ok(Err(e)) => Event::Warning {
            message: format!("{} failed: {e}", if undo { "/undo" } else { "/diff" }),
        },
        Err(e) => Event::Warning {
            message: format!("internal error: {e}"),
        },
    }
}

/// Starts the agent on the current tokio runtime.
pub fn spawn(setup: AgentSetup) -> AgentHandle {
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    tokio::spawn(setup.limits.clone().watch_time());
    tokio::spawn(run(Arc::new(setup), ops_rx, events_tx));
    AgentHandle {
        ops: ops_tx,
        events: events_rx,
    }
}

/// A turn on its own task, and the token that interrupts it.
struct Running {
    task: tokio::task::JoinHandle<SessionState>,
    cancel: CancellationToken,
}

/// What happened while the dispatcher waited.
enum Next {
    /// The running turn ended; its state is back.
    TurnEnded,
    /// An op arrived; `None` when every frontend handle is gone.
    Op(Option<Op>),
}

/// The dispatcher's state between two things happening.
struct Dispatcher {
    setup: Arc<AgentSetup>,
    events: mpsc::UnboundedSender<Event>,
    pending: PendingApprovals,
    /// Shared by every state this session has (clones share the rule book), so
    /// `/permissions` is answered at once, even while a turn runs.
    policy: ApprovalPolicy,
    /// The id of the session being saved, if any.
    session_id: Option<SessionId>,
    /// What the plan file is named after (the saved session's id, else this run's).
    plan_id: String,
    /// The session state, while no turn holds it.
    state: Option<SessionState>,
    /// Ops that need the session state, in the order they came, waiting for the turn
    /// before them.
    queue: VecDeque<Op>,
    running: Option<Running>,
    shutting_down: bool,
    /// Calls that were waiting for an answer when the turn was interrupted: a frontend
    /// answers such a question after interrupting (Esc: "no, and stop"), and that late
    /// answer is no mistake to warn about.
    interrupted_asks: HashSet<String>,
}

async fn run(
    setup: Arc<AgentSetup>,
    mut ops: mpsc::UnboundedReceiver<Op>,
    events: mpsc::UnboundedSender<Event>,
) {
    let mut dispatcher = Dispatcher::open(setup, events);
    dispatcher.session_start_hooks().await;
    loop {
        dispatcher.start_queued().await;
        if dispatcher.shutting_down && dispatcher.running.is_none() {
            dispatcher.finish().await;
            return;
        }
        match dispatcher.next(&mut ops).await {
            Next::TurnEnded => {}
            Next::Op(op) => dispatcher.on_op(op),
        }
    }
}

impl Dispatcher {
    /// Starts the session: MCP failures become warnings and what their starts learn
    /// new slash commands, the saved session begins (a new file, or the conversation
    /// being resumed), the frontend hears that the session is configured (and what a
    /// resumed session said), and preloaded servers start.
    fn open(setup: Arc<AgentSetup>, events: mpsc::UnboundedSender<Event>) -> Dispatcher {
        {
            let events = events.clone();
            setup.mcp.set_notify(move |message| {
                let _ = events.send(Event::Warning { message });
            });
        }
        super::listings::announce_mcp_changes(&setup, &events);
        let mut dispatcher = Dispatcher {
            policy: setup.policy.clone(),
            setup,
            events,
            pending: PendingApprovals::default(),
            session_id: None,
            plan_id: String::new(),
            state: None,
            queue: VecDeque::new(),
            running: None,
            shutting_down: false,
            interrupted_asks: HashSet::new(),
        };
        let mut state = dispatcher.fresh_state();
        let (started, resumed) = saved::start(&mut state, &dispatcher.context());
        dispatcher.session_id = started;
        dispatcher.plan_id = state.cache_key.clone();
        let plan_file = match dispatcher.policy.mode() {
            ApprovalMode::Plan => dispatcher.policy.place_plan_file(&dispatcher.plan_id),
            ApprovalMode::Suggest | ApprovalMode::AutoEdit | ApprovalMode::FullAuto => None,
        };
        let setup = &dispatcher.setup;
        dispatcher.emit(Event::SessionConfigured {
            model: super::endpoint::shown_model(&dispatcher.setup, &state),
            workdir: setup.workdir.clone(),
            skills: setup.skills_in_index,
            context_window: setup.context_window.get(),
            context_window_source: setup.context_window.window().map(|w| w.source),
            session_id: dispatcher.session_id.as_ref().map(ToString::to_string),
            effort: state.effort,
            approval_mode: dispatcher.policy.mode(),
            plan_file: plan_file.clone(),
            instructions: super::context::instruction_files(setup, &state.conversation),
        });
        for event in resumed {
            dispatcher.emit(event);
        }
        super::mcp_servers::preload(&dispatcher.setup);
        dispatcher.state = Some(state);
        dispatcher
    }

    /// SessionStart as the session opens (`startup`, or `resume` for a resumed one),
    /// before any op is taken: its context reaches the first message.
    async fn session_start_hooks(&mut self) {
        let Some(mut state) = self.state.take() else {
            return;
        };
        let source = match self.setup.start {
            saved::SessionStart::New => hooks_session::StartSource::Startup,
            saved::SessionStart::Resume(_) => hooks_session::StartSource::Resume,
        };
        hooks_session::session_start(&mut state, &self.context(), source).await;
        self.state = Some(state);
    }

    /// A new conversation with the session's start model and no usage.
    fn fresh_state(&self) -> SessionState {
        SessionState {
            conversation: Conversation::new(self.setup.system_prompt.clone(), None),
            model: self.setup.model.clone(),
            effort: self.setup.client.config().reasoning_effort,
            cache_key: crate::sessions::record::SessionId::generate().to_string(),
            usage: Usage::default(),
            policy: self.policy.clone(),
            artifacts: None,
            images: crate::images::ImageStore::default(),
        }
    }

    /// What work between turns (and each turn, with its own token) is given.
    fn context(&self) -> TurnContext {
        self.turn_context(CancellationToken::new())
    }

    fn turn_context(&self, cancel: CancellationToken) -> TurnContext {
        TurnContext {
            setup: self.setup.clone(),
            events: EventSink::new(self.events.clone()),
            cancel,
            pending: self.pending.clone(),
        }
    }

    fn emit(&self, event: Event) {
        // A closed channel means the frontend is gone; shutdown follows.
        let _ = self.events.send(event);
    }

    /// Waits for the running turn's end (and takes its state back) or the next op,
    /// whichever comes first.
    async fn next(&mut self, ops: &mut mpsc::UnboundedReceiver<Op>) -> Next {
        let joined = match self.running.as_mut() {
            Some(running) => tokio::select! {
                joined = &mut running.task => joined,
                op = ops.recv() => return Next::Op(op),
            },
            None => return Next::Op(ops.recv().await),
        };
        self.turn_ended(joined);
        Next::TurnEnded
    }

    /// Starts queued work while no turn runs: work between turns is done here, in
    /// order; a turn goes to its own task and holds the state until it ends.
    async fn start_queued(&mut self) {
        while self.running.is_none() && !self.shutting_down {
            let Some(op) = self.queue.pop_front() else {
                break;
            };
            let Some(mut state) = self.state.take() else {
                self.queue.push_front(op);
                break;
            };
            match op {
                turn @ (Op::UserInput { .. }
                | Op::Invoke(_)
                | Op::Compact { .. }
                | Op::Shell { .. }) => {
                    self.spawn_turn(turn, state);
                }
                between => {
                    self.between_turns(between, &mut state).await;
                    self.state = Some(state);
                }
            }
        }
    }

    /// Work that needs the session state but is no turn: `/clear`, `/model NAME`,
    /// `/resume`, `/undo`, `/diff`, `/skills reload`, `/export`, the rewind picker's
    /// list and a rewind.
    async fn between_turns(&mut self, op: Op, state: &mut SessionState) {
        match op {
            Op::NewConversation => {
                let ctx = self.context();
                hooks_session::session_end(&ctx, hooks_session::EndReason::Clear).await;
                self.clear(state);
                hooks_session::session_start(state, &ctx, hooks_session::StartSource::Clear).await;
            }
            Op::SetModel { model } => {
                match super::endpoint::switch(&self.setup, state, &model).await {
                    Ok(switched) => self.switched(state, switched),
                    Err(message) => self.emit(Event::Warning { message }),
                }
            }
            Op::ListModels => {
                let current = super::endpoint::shown_model(&self.setup, state);
                let list = super::models::list_all(&self.setup, current).await;
                self.emit(Event::ModelList(list));
            }
            Op::SetEffort { effort } => {
                state.effort = Some(effort);
                state.conversation.record(Record::EffortChanged { effort });
                self.emit(Event::EffortChanged { effort });
            }
            Op::ListSessions => saved::list(&self.context(), self.session_id.as_ref()),
            Op::Status => {
                let report = super::status::report(
                    &self.setup,
                    state,
                    self.session_id.as_ref(),
                    self.policy.mode(),
                );
                self.emit(Event::Status(Box::new(report)));
            }
            Op::Context => {
                let report = super::context::report(&self.setup, &state.conversation);
                self.emit(Event::Context(Box::new(report)));
            }
            Op::Resume { id } => {
                if let Some(id) = saved::resume_by_query(state, &self.context(), &id) {
                    self.session_id = Some(id);
                    let source = hooks_session::StartSource::Resume;
                    hooks_session::session_start(state, &self.context(), source).await;
                }
            }
            Op::Undo => {
                let answer = undo(&self.setup, state).await;
                self.emit(answer);
                self.warn_about(state);
            }
            Op::Diff => {
                let answer = project_changes(&self.setup, Op::Diff).await;
                self.emit(answer);
            }
            Op::ListRewindPoints => {
                let points = super::rewind::points(&self.setup, state);
                self.emit(Event::RewindPoints { points });
            }
            Op::Rewind { turn } => {
                let answer = super::rewind::rewind(&self.setup, state, turn).await;
                self.emit(answer);
                self.warn_about(state);
            }
            Op::ReloadSkills => {
                super::skills_reload::check(state, &self.context(), ReloadTrigger::Asked).await;
            }
            Op::Export { format, path } => {
                saved::export(&self.context(), self.session_id.as_ref(), format, path);
            }
            // Turns run on their own task (`spawn_turn`); the rest is answered on
            // arrival (`on_op`) and never queued.
            _ => {}
        }
    }

    /// Records and announces a switch of model (and maybe provider).
    fn switched(&self, state: &mut SessionState, switched: super::endpoint::Switched) {
        state.conversation.record(Record::ModelChanged {
            model: switched.shown.clone(),
        });
        self.emit(Event::ModelChanged {
            model: switched.shown,
        });
        if let Some(window) = switched.window {
            self.emit(Event::ContextWindow {
                tokens: window.tokens,
                source: window.source,
            });
        }
    }

    /// Warnings the conversation has (a session file that could not be written).
    fn warn_about(&self, state: &mut SessionState) {
        for message in state.conversation.take_warnings() {
            self.emit(Event::Warning { message });
        }
    }

    /// `/clear`: a new conversation, with no loaded skills and none of their tools.
    fn clear(&self, state: &mut SessionState) {
        state.conversation.clear();
        self.setup.loaded_skills.clear();
        // Preloaded servers' tools are part of every conversation.
        super::mcp_servers::preload(&self.setup);
        self.emit(Event::ConversationCleared);
    }

    /// Runs a message, a slash command or `/compact` on a task of its own, with a fresh
    /// token for interrupts.
    fn spawn_turn(&mut self, op: Op, mut state: SessionState) {
        self.interrupted_asks.clear();
        // A limit of the run interrupts the turn as Ctrl-C does.
        let cancel = self.setup.limits.turn_token();
        let mut ctx = self.turn_context(cancel.clone());
        let (events, held_end) = EventSink::holding_turn_end(self.events.clone());
        ctx.events = events;
        let tx = self.events.clone();
        let task = tokio::spawn(async move {
            run_turn_op(&mut state, &ctx, op).await;
            // The turn's "after" picture, for /undo (part of the turn's work, so an
            // /undo sent right after waits for it, and the frontend shows the session
            // ready only after it: an edit the user makes at "ready" is never counted
            // as the turn's). A `!` command's changes belong to the turn before it:
            // rewinding to that turn's message puts them back.
            end_changes(&ctx, state.conversation.turn()).await;
            held_end.release(&tx);
            state
        });
        self.running = Some(Running { task, cancel });
    }

    /// The turn's task ended: its state is the session's again. A panicking turn loses
    /// its state; a fresh one lets the session go on, and the frontend is told.
    fn turn_ended(&mut self, joined: Result<SessionState, tokio::task::JoinError>) {
        self.running = None;
        let state = match joined {
            Ok(state) => state,
            Err(e) => {
                self.emit(Event::Warning {
                    message: format!(
                        "internal error in the turn ({e}); the conversation was reset"
                    ),
                });
                // Frontends wait for the turn's end: it ended, as a failure.
                self.emit(Event::TurnComplete {
                    outcome: TurnOutcome::Failed {
                        kind: ErrorKind::Internal,
                        message: format!("internal error in the turn ({e})"),
                    },
                    final_text: Default::default(),
                    usage: Usage::default(),
                    requests: 0,
                });
                self.fresh_state()
            }
        };
        self.state = Some(state);
    }

    /// An op as it arrives: what needs no session state is done at once, even while a
    /// turn runs; the rest is queued. No op (every frontend handle dropped) shuts down.
    fn on_op(&mut self, op: Option<Op>) {
        let Some(op) = op else {
            self.shut_down();
            return;
        };
        match op {
            Op::Shutdown => self.shut_down(),
            Op::Interrupt => self.interrupt(),
            Op::Approval { call_id, decision } => self.answer_approval(&call_id, decision),
            Op::SetApprovalMode { mode } => {
                // At once, even while a turn runs: its next call is judged in the new mode.
                self.policy.set_mode(mode);
                if mode == ApprovalMode::Plan {
                    self.policy.place_plan_file(&self.plan_id);
                }
                self.emit(Event::ApprovalModeChanged { mode });
            }
            Op::ListPermissions => {
                let view = self.policy.view();
                self.emit(Event::Permissions {
                    rules: view.rules,
                    untrusted: view.untrusted,
                    project_file: view.project_file,
                });
            }
            Op::RemovePermission { number } => {
                self.emit(match self.policy.remove(number) {
                    Ok(rule) => Event::PermissionRemoved { rule },
                    Err(e) => Event::Warning {
                        message: e.to_string(),
                    },
                });
            }
            Op::ListSkills => self.emit(super::listings::skills(&self.setup)),
            Op::ListMcpServers => self.emit(super::listings::mcp_servers(&self.setup)),
            Op::ListPlugins => self.emit(Event::PluginList(self.setup.plugins.clone())),
            Op::ListHooks => self.emit(super::hooks_session::hook_list(&self.setup)),
            queued @ (Op::UserInput { .. }
            | Op::Invoke(_)
            | Op::Shell { .. }
            | Op::ListRewindPoints
            | Op::Rewind { .. }
            | Op::NewConversation
            | Op::Compact { .. }
            | Op::SetModel { .. }
            | Op::SetEffort { .. }
            | Op::ListModels
            | Op::Resume { .. }
            | Op::ListSessions
            | Op::Status
            | Op::Context
            | Op::Undo
            | Op::Diff
            | Op::ReloadSkills
            | Op::Export { .. }) => self.queue.push_back(queued),
        }
    }

    /// Hands the user's answer to the call waiting for it; an answer to a question the
    /// interrupt already closed is dropped quietly.
    fn answer_approval(&mut self, call_id: &str, decision: ApprovalDecision) {
        let waiting = self.pending.lock().ok().and_then(|mut p| p.remove(call_id));
        match waiting {
            Some(tx) => {
                let _ = tx.send(decision);
            }
            None if self.interrupted_asks.remove(call_id) => {}
            None => self.emit(Event::Warning {
                message: format!("no approval is pending for call {call_id}; ignored"),
            }),
        }
    }

    fn interrupt(&mut self) {
        if let Some(running) = &self.running {
            running.cancel.cancel();
            if let Ok(pending) = self.pending.lock() {
                self.interrupted_asks.extend(pending.keys().cloned());
            }
        }
    }

    /// Queued work is dropped and the running turn interrupted; the session ends when
    /// the turn has.
    fn shut_down(&mut self) {
        self.shutting_down = true;
        self.queue.clear();
        self.interrupt();
    }

    /// The last event: the session's usage, once what the window's questions learn is
    /// stored (a fast `-p` answer ends before they are answered).
    /// Only when nothing else knows the window (no setting, cache or table entry): a
    /// known window is only refined by the answer, which is not worth holding the exit
    /// for (a hosted API's model list can take a second).
    async fn finish(self) {
        if self.setup.context_window.window().is_none() {
            self.setup
                .window_learning
                .settle(super::LEARNING_WAIT_AT_END)
                .await;
        }
        hooks_session::session_end(&self.context(), hooks_session::EndReason::Other).await;
        let usage = self.state.as_ref().map(|s| s.usage).unwrap_or_default();
        self.emit(Event::ShutdownComplete { usage });
    }
}

/// A message, a slash command or `/compact`, on the turn's task. The skills are looked
/// at again first (not for a compaction, which is no turn of the conversation).
async fn run_turn_op(state: &mut SessionState, ctx: &TurnContext, op: Op) {
    // Neither a compaction nor the user's own command is a turn of the conversation.
    if !matches!(op, Op::Compact { .. } | Op::Shell { .. }) {
        super::skills_reload::check(state, ctx, ReloadTrigger::BeforeTurn).await;
    }
    if let Some(prompt) = submitted_prompt(&op)
        && let PromptHooks::Blocked { reason } =
            super::hooks_turn::user_prompt_submit(state, ctx, &prompt).await
    {
        ctx.emit(Event::TurnStarted { text: prompt });
        ctx.emit(Event::TurnComplete {
            outcome: TurnOutcome::Failed {
                kind: ErrorKind::HookBlocked,
                message: format!(
                    "the prompt was not sent: a UserPromptSubmit hook blocked it: {reason}"
                ),
            },
            final_text: Default::default(),
            usage: Usage::default(),
            requests: 0,
        });
        return;
    }
    match op {
        Op::UserInput {
            text,
            origin,
            piped,
            images,
        } => {
            let message = UserMessage {
                text,
                origin,
                piped,
                images,
            };
            run_user_turn(state, ctx, message).await;
        }
        Op::Invoke(Invocation::Skill { name, args }) => {
            run_skill(state, ctx, &name, &args).await;
        }
        Op::Invoke(Invocation::McpPrompt {
            server,
            prompt,
            args,
        }) => {
            super::mcp_servers::run_prompt(state, ctx, &server, &prompt, &args).await;
        }
        Op::Invoke(Invocation::Init { args }) => {
            super::init::run_init(state, ctx, &args).await;
        }
        Op::Compact { focus } => compact_by_hand(state, ctx, focus).await,
        Op::Shell { command } => super::shell::run(state, ctx, command).await,
        // Only turns come here (`Dispatcher::start_queued`).
        _ => {}
    }
}

/// The prompt UserPromptSubmit hooks see for a turn's `op`: the text as given (with
/// piped text after it), or the slash line as typed; `None` for what is no prompt
/// (`/compact`, `!cmd`).
fn submitted_prompt(op: &Op) -> Option<String> {
    let line = |command: String, args: &str| {
        if args.is_empty() {
            command
        } else {
            format!("{command} {args}")
        }
    };
    match op {
        Op::UserInput { text, piped, .. } => {
            Some(format!("{text}{}", piped.as_deref().unwrap_or_default()))
        }
        Op::Invoke(Invocation::Skill { name, args }) => Some(line(format!("/{name}"), args)),
        Op::Invoke(Invocation::McpPrompt {
            server,
            prompt,
            args,
        }) => Some(line(format!("/{server}:{prompt}"), args)),
        Op::Invoke(Invocation::Init { args }) => Some(line("/init".to_string(), args)),
        _ => None,
    }
}

/// `/compact [focus]`: compacts between turns and says why when it cannot.
async fn compact_by_hand(state: &mut SessionState, ctx: &TurnContext, focus: Option<String>) {
    match compact_and_report(state, ctx, CompactionTrigger::Manual, focus.as_deref()).await {
        Ok(_) => {}
        Err(CompactError::NothingToCompact) => ctx.emit(Event::Warning {
            message:
                "there is nothing to compact yet: the conversation is already as short as it gets"
                    .into(),
        }),
        Err(CompactError::NoGain) => ctx.emit(Event::Warning {
            message: "nothing was compacted: the conversation is shorter than a summary of it"
                .into(),
        }),
        Err(CompactError::Interrupted) => ctx.emit(Event::Warning {
            message: "the compaction was interrupted; the conversation is unchanged".into(),
        }),
        Err(e @ CompactError::Failed { .. }) => ctx.emit(Event::Warning {
            message: format!("could not compact: {e}; the conversation is unchanged"),
        }),
    }
}
