//! The agent's dispatcher: receives [`Op`]s, queues work, runs one turn at a time on its
//! own task, routes approval answers and interrupts to the running turn, and shuts down
//! cleanly. It must not know how events are drawn.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::compact::{CompactError, compact_and_report};
use crate::agent::conversation::Conversation;
use crate::agent::saved;
use crate::agent::slash::run_skill;
use crate::agent::turn::{
    EventSink, PendingApprovals, SessionState, TurnContext, UserMessage, run_user_turn,
};
use crate::agent::{AgentHandle, AgentSetup};
use crate::protocol::{CompactionTrigger, Event, ExportFormat, Invocation, Op, Usage};
use crate::sessions::{Record, SessionId};

/// Work queued while a turn runs, done in order.
enum Work {
    Turn(UserMessage),
    Invoke(Invocation),
    Clear,
    Compact(Option<String>),
    SetModel(String),
    Resume(String),
    ListSessions,
    Undo,
    Diff,
    ReloadSkills,
    Export {
        format: ExportFormat,
        path: Option<std::path::PathBuf>,
    },
}

/// Records what the turn changed in the project, when it ran a call that may change
/// files; a failure is a warning.
async fn end_changes(ctx: &TurnContext) {
    let Some(snapshots) = ctx.setup.snapshots.clone() else {
        return;
    };
    let problem = match tokio::task::spawn_blocking(move || snapshots.end_turn()).await {
        Ok(Ok(_)) => return,
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    ctx.emit(Event::Warning {
        message: format!("{problem}; /undo cannot put back this turn's changes"),
    });
}

/// The answer to `/undo` or `/diff`.
async fn project_changes(setup: &AgentSetup, work: &Work) -> Event {
    let Some(snapshots) = setup.snapshots.clone() else {
        return Event::Warning {
            message: "this session keeps no pictures of the project, so /undo and /diff have nothing to work with".into(),
        };
    };
    let undo = matches!(work, Work::Undo);
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
    tokio::spawn(run(Arc::new(setup), ops_rx, events_tx));
    AgentHandle {
        ops: ops_tx,
        events: events_rx,
    }
}

type TurnTask = tokio::task::JoinHandle<SessionState>;

async fn run(
    setup: Arc<AgentSetup>,
    mut ops: mpsc::UnboundedReceiver<Op>,
    events: mpsc::UnboundedSender<Event>,
) {
    let pending: PendingApprovals = Arc::default();
    // Shared by every state this session has (clones share the rule book), so
    // `/permissions` is answered at once, even while a turn runs.
    let policy = setup.policy.clone();
    // MCP servers' failures (a start, a server that stopped) are warnings.
    {
        let events = events.clone();
        setup.mcp.set_notify(move |message| {
            let _ = events.send(Event::Warning { message });
        });
    }
    let mut st = SessionState {
        conversation: Conversation::new(setup.system_prompt.clone(), None),
        model: setup.model.clone(),
        usage: Usage::default(),
        policy: policy.clone(),
        artifacts: None,
    };
    let ctx = |cancel: CancellationToken| TurnContext {
        setup: setup.clone(),
        events: EventSink::new(events.clone()),
        cancel,
        pending: pending.clone(),
    };
    // A saved session starts here: a new file (written from the first record on), or
    // the conversation of the session being resumed.
    let (started, resumed) = saved::start(&mut st, &ctx(CancellationToken::new()));
    let session_id = Arc::new(std::sync::Mutex::new(started));
    let _ = events.send(Event::SessionConfigured {
        model: st.model.clone(),
        workdir: setup.workdir.clone(),
        skills: setup.skills_in_index,
        context_window: setup.context_window.get(),
        context_window_source: setup.context_window.window().map(|w| w.source),
        session_id: current_id(&session_id).map(|id| id.to_string()),
    });
    for event in resumed {
        let _ = events.send(event);
    }
    super::mcp_servers::preload(&setup);
    let mut state = Some(st);
    let mut queue: VecDeque<Work> = VecDeque::new();
    let mut running: Option<(TurnTask, CancellationToken)> = None;
    let mut shutting_down = false;

    loop {
        // Start queued work while idle.
        while running.is_none() && !shutting_down {
            let Some(work) = queue.pop_front() else { break };
            let Some(mut st) = state.take() else { break };
            match work {
                Work::Clear => {
                    st.conversation.clear();
                    // A new conversation has no loaded skills and none of their tools.
                    setup.loaded_skills.clear();
                    // Preloaded servers' tools are part of every conversation.
                    super::mcp_servers::preload(&setup);
                    state = Some(st);
                    let _ = events.send(Event::ConversationCleared);
                }
                Work::SetModel(model) => {
                    st.model = model.clone();
                    st.conversation.record(Record::ModelChanged {
                        model: model.clone(),
                    });
                    state = Some(st);
                    let _ = events.send(Event::ModelChanged { model });
                }
                Work::ListSessions => {
                    saved::list(&ctx(CancellationToken::new()));
                    state = Some(st);
                }
                Work::Undo | Work::Diff => {
                    let _ = events.send(project_changes(&setup, &work).await);
                    state = Some(st);
                }
                Work::ReloadSkills => {
                    super::skills_reload::check(
                        &mut st,
                        &ctx(CancellationToken::new()),
                        crate::protocol::ReloadTrigger::Asked,
                    )
                    .await;
                    state = Some(st);
                }
                Work::Export { format, path } => {
                    let id = current_id(&session_id);
                    saved::export(&ctx(CancellationToken::new()), id.as_ref(), format, path);
                    state = Some(st);
                }
                Work::Resume(query) => {
                    if let Some(id) =
                        saved::resume_by_query(&mut st, &ctx(CancellationToken::new()), &query)
                        && let Ok(mut current) = session_id.lock()
                    {
                        *current = Some(id);
                    }
                    state = Some(st);
                }
                work @ (Work::Turn(_) | Work::Invoke(_) | Work::Compact(_)) => {
                    let cancel = CancellationToken::new();
                    let ctx = ctx(cancel.clone());
                    let task = tokio::spawn(async move {
                        // Skills added, edited or removed since the last turn.
                        if !matches!(work, Work::Compact(_)) {
                            super::skills_reload::check(
                                &mut st,
                                &ctx,
                                crate::protocol::ReloadTrigger::BeforeTurn,
                            )
                            .await;
                        }
                        match work {
                            Work::Invoke(Invocation::Skill { name, args }) => {
                                run_skill(&mut st, &ctx, &name, &args).await;
                            }
                            Work::Invoke(Invocation::McpPrompt {
                                server,
                                prompt,
                                args,
                            }) => {
                                super::mcp_servers::run_prompt(
                                    &mut st, &ctx, &server, &prompt, &args,
                                )
                                .await;
                            }
                            Work::Turn(message) => {
                                run_user_turn(&mut st, &ctx, message).await;
                            }
                            Work::Compact(focus) => compact_by_hand(&mut st, &ctx, focus).await,
                            Work::Clear
                            | Work::SetModel(_)
                            | Work::Resume(_)
                            | Work::ListSessions
                            | Work::Undo
                            | Work::Diff
                            | Work::ReloadSkills
                            | Work::Export { .. } => {}
                        }
                        // The turn's "after" picture, for /undo (part of the turn's work,
                        // so an /undo sent right after waits for it).
                        end_changes(&ctx).await;
                        st
                    });
                    running = Some((task, cancel));
                }
            }
        }
        if shutting_down && running.is_none() {
            let usage = state.as_ref().map(|s| s.usage).unwrap_or_default();
            let _ = events.send(Event::ShutdownComplete { usage });
            return;
        }

        let op = match running.as_mut() {
            Some((task, _)) => tokio::select! {
                joined = task => {
                    running = None;
                    match joined {
                        Ok(st) => state = Some(st),
                        Err(e) => {
                            // A panicking turn loses its state; start a fresh one so the
                            // session goes on, and say so.
                            let _ = events.send(Event::Warning { message: format!("internal error in the turn ({e}); the conversation was reset") });
                            // Frontends wait for the turn's end: it ended, as a failure.
                            let _ = events.send(Event::TurnComplete {
                                outcome: crate::protocol::TurnOutcome::Failed {
                                    kind: crate::protocol::ErrorKind::Internal,
                                    message: format!("internal error in the turn ({e})"),
                                },
                                final_text: String::new(),
                                usage: Usage::default(),
                                requests: 0,
                            });
                            state = Some(SessionState {
                                conversation: Conversation::new(setup.system_prompt.clone(), None),
                                model: setup.model.clone(),
                                usage: Usage::default(),
                                policy: policy.clone(),
                                artifacts: None,
                            });
                        }
                    }
                    continue;
                }
                op = ops.recv() => op,
            },
            None => ops.recv().await,
        };
        match op {
            None | Some(Op::Shutdown) => {
                shutting_down = true;
                queue.clear();
                if let Some((_, cancel)) = &running {
                    cancel.cancel();
                }
            }
            Some(Op::Interrupt) => {
                if let Some((_, cancel)) = &running {
                    cancel.cancel();
                }
            }
            Some(Op::Approval { call_id, decision }) => {
                let sender = pending.lock().ok().and_then(|mut p| p.remove(&call_id));
                match sender {
                    Some(tx) => {
                        let _ = tx.send(decision);
                    }
                    None => {
                        let _ = events.send(Event::Warning {
                            message: format!("no approval is pending for call {call_id}; ignored"),
                        });
                    }
                }
            }
            Some(Op::UserInput {
                text,
                origin,
                piped,
            }) => queue.push_back(Work::Turn(UserMessage {
                text,
                origin,
                piped,
            })),
            Some(Op::Invoke(invocation)) => queue.push_back(Work::Invoke(invocation)),
            Some(Op::NewConversation) => queue.push_back(Work::Clear),
            Some(Op::Compact { focus }) => queue.push_back(Work::Compact(focus)),
            Some(Op::SetModel { model }) => queue.push_back(Work::SetModel(model)),
            Some(Op::Resume { id }) => queue.push_back(Work::Resume(id)),
            Some(Op::ListSessions) => queue.push_back(Work::ListSessions),
            Some(Op::Undo) => queue.push_back(Work::Undo),
            Some(Op::ReloadSkills) => queue.push_back(Work::ReloadSkills),
            Some(Op::SetApprovalMode { mode }) => {
                // At once, even while a turn runs: its next call is judged in the new mode.
                policy.set_mode(mode);
                let _ = events.send(Event::ApprovalModeChanged { mode });
            }
            Some(Op::Diff) => queue.push_back(Work::Diff),
            Some(Op::ListPermissions) => {
                let view = policy.view();
                let _ = events.send(Event::Permissions {
                    rules: view.rules,
                    untrusted: view.untrusted,
                    project_file: view.project_file,
                });
            }
            Some(Op::RemovePermission { number }) => {
                let _ = events.send(match policy.remove(number) {
                    Ok(rule) => Event::PermissionRemoved { rule },
                    Err(e) => Event::Warning {
                        message: e.to_string(),
                    },
                });
            }
            Some(Op::Export { format, path }) => queue.push_back(Work::Export { format, path }),
        }
    }
}

/// The id of the session being saved, if any.
fn current_id(id: &std::sync::Mutex<Option<SessionId>>) -> Option<SessionId> {
    id.lock().ok().and_then(|id| id.clone())
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
