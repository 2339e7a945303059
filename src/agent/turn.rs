//! One turn: send the conversation, stream the answer, run the tool calls the model makes
//! (after the approval policy), send the results, and repeat until the model answers
//! without tools, the request cap is reached, the user interrupts, or a request fails.
//!
//! It owns the conversation history and the session's usage counters. It reports
//! everything through the event sender and must not know how events are drawn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agent::AgentSetup;
use crate::agent::approval::{ApprovalPolicy, Verdict};
use crate::agent::skill::AgentForker;
use crate::llm::{ChatRequest, Completion, Message, StreamEvent, ToolCall, ToolSpec};
use crate::protocol::{
    ApprovalDecision, AutoDenyReason, ErrorKind, Event, ToolStatus, TurnOutcome, Usage,
};
use crate::tools::{ToolContext, ToolFatal, ToolOutput};

/// Approvals waiting for an answer, by call id.
pub type PendingApprovals = Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>;

/// Marker appended to an answer the user interrupted.
pub const INTERRUPTED_MARKER: &str = "[interrupted by the user]";

/// Everything a session carries from turn to turn.
#[derive(Debug)]
pub struct SessionState {
    /// System prompt first, then the conversation.
    pub messages: Vec<Message>,
    /// Current model id.
    pub model: String,
    /// Usage so far.
    pub usage: Usage,
    /// Approval mode and "always" approvals.
    pub policy: ApprovalPolicy,
}

/// Where a turn's events go: straight to the frontend, or, inside a forked skill's
/// sub-agent, wrapped in [`Event::SubAgent`] (approval requests stay unwrapped so the
/// frontend answers them as usual).
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<Event>,
    fork: Option<ForkLabel>,
}

#[derive(Debug, Clone)]
struct ForkLabel {
    parent_call_id: Option<String>,
    skill: String,
}

impl EventSink {
    /// A sink that sends events as they are.
    pub fn new(tx: mpsc::UnboundedSender<Event>) -> Self {
        EventSink { tx, fork: None }
    }

    /// A sink for a sub-agent running `skill`, started by `parent_call_id`.
    pub fn forked(&self, parent_call_id: Option<String>, skill: &str) -> Self {
        EventSink {
            tx: self.tx.clone(),
            fork: Some(ForkLabel {
                parent_call_id,
                skill: skill.to_string(),
            }),
        }
    }

    /// True inside a sub-agent.
    pub fn is_forked(&self) -> bool {
        self.fork.is_some()
    }

    /// Sends an event (a closed channel means the frontend is gone; the turn ends on
    /// its own, so the error is ignored).
    pub fn emit(&self, event: Event) {
        let event = match (&self.fork, event) {
            (None, event) => event,
            (Some(_), event @ Event::ApprovalRequest { .. }) => event,
            (Some(label), event) => Event::SubAgent {
                parent_call_id: label.parent_call_id.clone(),
                skill: label.skill.clone(),
                event: Box::new(event),
            },
        };
        let _ = self.tx.send(event);
    }
}

/// What a turn needs besides the session state.
#[derive(Clone)]
pub struct TurnContext {
    /// The session's fixed parts.
    pub setup: Arc<AgentSetup>,
    /// Where events go.
    pub events: EventSink,
    /// Cancelled by an interrupt.
    pub cancel: CancellationToken,
    /// Approvals waiting for an answer.
    pub pending: PendingApprovals,
}

impl TurnContext {
    fn emit(&self, event: Event) {
        self.events.emit(event);
    }
}

/// How a turn ended, with its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    /// How it ended.
    pub outcome: TurnOutcome,
    /// The final answer text (may be empty).
    pub final_text: String,
    /// Usage of the turn.
    pub usage: Usage,
    /// Model requests made.
    pub requests: u32,
}

/// How one tool call ended, for the turn.
enum CallEnd {
    Done,
    Interrupted,
    Fatal(String),
}

/// Runs one turn for `text` and reports it; returns how it ended.
pub async fn run_turn(state: &mut SessionState, ctx: &TurnContext, text: String) -> TurnResult {
    ctx.emit(Event::TurnStarted { text: text.clone() });
    state.messages.push(Message::User { content: text });
    let mut turn_usage = Usage::default();
    let mut requests = 0u32;
    let mut final_text = String::new();

    let outcome = loop {
        if requests >= ctx.setup.max_turns {
            break TurnOutcome::MaxTurnsReached {
                limit: ctx.setup.max_turns,
            };
        }
        requests += 1;
        ctx.emit(Event::RequestStarted { request: requests });
        // Fixed tools first, in a fixed order, then the tools of loaded skills: the
        // list changes only when a skill with tools is loaded or unloaded.
        let specs = ctx.setup.tools.specs();
        let mut streamed = String::new();
        let mut reasoning = String::new();
        let result = {
            let request = ChatRequest {
                model: &state.model,
                messages: &state.messages,
                tools: &specs,
            };
            let mut on_event = |event: StreamEvent| match event {
                StreamEvent::Text(t) => {
                    streamed.push_str(&t);
                    ctx.emit(Event::TextDelta { text: t });
                }
                StreamEvent::Reasoning(t) => {
                    reasoning.push_str(&t);
                    ctx.emit(Event::ReasoningDelta { text: t });
                }
                StreamEvent::Retrying {
                    attempt,
                    delay,
                    reason,
                } => {
                    streamed.clear();
                    reasoning.clear();
                    ctx.emit(Event::Retrying {
                        attempt,
                        delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        reason,
                    });
                }
            };
            ctx.setup
                .client
                .complete(request, &ctx.cancel, &mut on_event)
                .await
        };
        let completion = match result {
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::Interrupted || ctx.cancel.is_cancelled() => {
                if !streamed.is_empty() || !reasoning.is_empty() {
                    final_text = streamed.clone();
                    state.messages.push(Message::Assistant {
                        content: format!("{streamed}\n\n{INTERRUPTED_MARKER}"),
                        reasoning: (!reasoning.is_empty()).then_some(reasoning),
                        tool_calls: Vec::new(),
                    });
                }
                break TurnOutcome::Interrupted;
            }
            Err(e) => {
                break TurnOutcome::Failed {
                    kind: e.kind(),
                    message: e.to_string(),
                };
            }
        };
        // The partial copies are only for an interrupted answer: free them before the
        // answer is copied again (a long answer would otherwise be held three times).
        drop(streamed);
        drop(reasoning);

        let usage = completion
            .usage
            .unwrap_or_else(|| estimate_usage(&state.messages, &specs, &completion));
        turn_usage.add(&usage);
        state.usage.add(&usage);
        ctx.emit(Event::Usage {
            turn: turn_usage,
            session: state.usage,
            context_tokens: Some(usage.input_tokens),
        });

        final_text = completion.text.clone();
        let calls = completion.tool_calls.clone();
        state.messages.push(Message::Assistant {
            content: completion.text,
            reasoning: completion.reasoning,
            tool_calls: completion.tool_calls,
        });
        if calls.is_empty() {
            break TurnOutcome::Completed;
        }
        let mut interrupted_or_fatal = None;
        for call in &calls {
            if interrupted_or_fatal.is_some() {
                state.messages.push(Message::Tool {
                    tool_call_id: call.id.clone(),
                    content: "Not run: the turn was interrupted.".into(),
                });
                continue;
            }
            let (content, end) = run_call(state, ctx, call).await;
            state.messages.push(Message::Tool {
                tool_call_id: call.id.clone(),
                content,
            });
            match end {
                CallEnd::Done => {}
                CallEnd::Interrupted => interrupted_or_fatal = Some(TurnOutcome::Interrupted),
                CallEnd::Fatal(message) => {
                    interrupted_or_fatal = Some(TurnOutcome::Failed {
                        kind: ErrorKind::Internal,
                        message,
                    })
                }
            }
        }
        if let Some(outcome) = interrupted_or_fatal {
            break outcome;
        }
    };
    ctx.emit(Event::TurnComplete {
        outcome: outcome.clone(),
        final_text: final_text.clone(),
        usage: turn_usage,
        requests,
    });
    TurnResult {
        outcome,
        final_text,
        usage: turn_usage,
        requests,
    }
}

/// Runs one call: parse, look up, approve, run, report. Returns the text for the model.
async fn run_call(
    state: &mut SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
) -> (String, CallEnd) {
    let setup = &ctx.setup;
    let end_with = |status: ToolStatus, summary: String, content: String, diff: Option<String>| {
        ctx.emit(Event::ToolCallEnd {
            call_id: call.id.clone(),
            name: call.name.clone(),
            status,
            summary: first_lines(&summary, 3),
            diff,
        });
        content
    };

    let Some(tool) = setup.tools.get(&call.name) else {
        ctx.emit(Event::ToolCallBegin {
            call_id: call.id.clone(),
            name: call.name.clone(),
            summary: String::new(),
        });
        let msg = format!(
            "Error: unknown tool '{}'. Available tools: {}.",
            call.name,
            setup.tools.names().join(", ")
        );
        return (
            end_with(ToolStatus::Error, msg.clone(), msg, None),
            CallEnd::Done,
        );
    };
    let raw = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    let args: serde_json::Value = match serde_json::from_str(raw) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) | Err(_) => {
            ctx.emit(Event::ToolCallBegin {
                call_id: call.id.clone(),
                name: call.name.clone(),
                summary: String::new(),
            });
            let detail = serde_json::from_str::<serde_json::Value>(raw)
                .err()
                .map_or_else(|| "not a JSON object".to_string(), |e| e.to_string());
            let msg = format!(
                "Error: the arguments for {} are not a valid JSON object ({detail}). Call it again with a JSON object that matches its schema.",
                call.name
            );
            return (
                end_with(ToolStatus::Error, msg.clone(), msg, None),
                CallEnd::Done,
            );
        }
    };

    let (live_tx, mut live_rx) = mpsc::unbounded_channel::<String>();
    // Sub-agents get no forker: a forked skill cannot fork again.
    let forker = (!ctx.events.is_forked()).then(|| AgentForker::new(ctx.clone(), state));
    let tool_ctx = ToolContext {
        workdir: setup.workdir.clone(),
        cancel: ctx.cancel.clone(),
        limits: setup.tool_limits,
        live_output: Some(live_tx),
        forker: forker.clone().map(|f| f as Arc<dyn crate::tools::Forker>),
    };
    match state.policy.verdict(tool.access(&args, &tool_ctx)) {
        Verdict::Run => {}
        Verdict::DenyUnattended(request) => {
            let msg = state.policy.unattended_denial(&request);
            ctx.emit(Event::AutoDenied {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                request,
                reason: AutoDenyReason::NobodyToAsk,
            });
            return (
                end_with(ToolStatus::Denied, msg.clone(), msg, None),
                CallEnd::Done,
            );
        }
        Verdict::Ask(request) => {
            let (tx, rx) = oneshot::channel();
            if let Ok(mut pending) = ctx.pending.lock() {
                pending.insert(call.id.clone(), tx);
            }
            ctx.emit(Event::ApprovalRequest {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                request: request.clone(),
            });
            let decision = tokio::select! {
                d = rx => d.ok(),
                () = ctx.cancel.cancelled() => None,
            };
            if let Ok(mut pending) = ctx.pending.lock() {
                pending.remove(&call.id);
            }
            let Some(decision) = decision else {
                let msg =
                    "Not run: the turn was interrupted while waiting for approval.".to_string();
                return (
                    end_with(ToolStatus::Interrupted, msg.clone(), msg, None),
                    CallEnd::Interrupted,
                );
            };
            state.policy.record(&request, &decision);
            if let ApprovalDecision::Deny { reason } = decision {
                let msg = match reason.filter(|r| !r.trim().is_empty()) {
                    Some(r) => format!("The user denied this call: {r}"),
                    None => "The user denied this call. Do not retry it unchanged; ask or adapt."
                        .to_string(),
                };
                return (
                    end_with(ToolStatus::Denied, msg.clone(), msg, None),
                    CallEnd::Done,
                );
            }
        }
    }

    ctx.emit(Event::ToolCallBegin {
        call_id: call.id.clone(),
        name: call.name.clone(),
        summary: tool.summary(&args),
    });
    let forward = {
        let events = ctx.events.clone();
        let call_id = call.id.clone();
        tokio::spawn(async move {
            while let Some(text) = live_rx.recv().await {
                events.emit(Event::ToolOutputDelta {
                    call_id: call_id.clone(),
                    text,
                });
            }
        })
    };
    let result = tool.run(args, &tool_ctx).await;
    drop(tool_ctx);
    if let Some(forker) = forker {
        let sub = forker.take_usage();
        if sub != Usage::default() {
            state.usage.add(&sub);
            ctx.emit(Event::Usage {
                turn: sub,
                session: state.usage,
                context_tokens: None,
            });
        }
    }
    // The forwarder ends when the tool drops its sender; wait so deltas precede the end.
    let _ = forward.await;
    match result {
        Ok(ToolOutput {
            content,
            is_error,
            diff,
            warnings,
        }) => {
            for message in warnings {
                ctx.emit(Event::Warning { message });
            }
            let content = crate::tools::truncate::truncate_head_tail(
                &content,
                setup.tool_limits.max_output_bytes,
            );
            let status = if is_error {
                ToolStatus::Error
            } else {
                ToolStatus::Ok
            };
            (
                end_with(status, content.clone(), content, diff),
                CallEnd::Done,
            )
        }
        Err(ToolFatal::Interrupted) => {
            let msg = "Interrupted by the user.".to_string();
            (
                end_with(ToolStatus::Interrupted, msg.clone(), msg, None),
                CallEnd::Interrupted,
            )
        }
        Err(ToolFatal::Internal(message)) => {
            let msg = format!("Error: {message}");
            (
                end_with(ToolStatus::Error, msg.clone(), msg, None),
                CallEnd::Fatal(message),
            )
        }
    }
}

/// The first `n` lines of `text`, with a count of the rest.
fn first_lines(text: &str, n: usize) -> String {
    let total = text.lines().count();
    let mut out: Vec<&str> = text.lines().take(n).collect();
    let more = total.saturating_sub(n);
    let extra;
    if more > 0 {
        extra = format!("… +{more} lines");
        out.push(&extra);
    }
    out.join("\n")
}

/// Usage estimated at about 4 bytes per token when the provider sent none.
pub fn estimate_usage(messages: &[Message], specs: &[ToolSpec], completion: &Completion) -> Usage {
    let mut input = 0usize;
    for m in messages {
        input += match m {
            Message::System { content } | Message::User { content } => content.len(),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                content.len()
                    + tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.len())
                        .sum::<usize>()
            }
            Message::Tool { content, .. } => content.len(),
        } + 8;
    }
    for s in specs {
        input += s.name.len() + s.description.len() + s.parameters.to_string().len();
    }
    let output = completion.text.len()
        + completion.reasoning.as_ref().map_or(0, String::len)
        + completion
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>();
    Usage {
        input_tokens: (input as u64).div_ceil(4),
        output_tokens: (output as u64).div_ceil(4),
        cached_input_tokens: 0,
        estimated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_about_four_bytes_per_token_and_marked() {
        let messages = vec![Message::User {
            content: "x".repeat(400),
        }];
        let c = Completion {
            text: "y".repeat(40),
            ..Default::default()
        };
        let u = estimate_usage(&messages, &[], &c);
        assert!(u.estimated);
        assert_eq!(u.output_tokens, 10);
        assert!((100..=105).contains(&u.input_tokens), "{}", u.input_tokens);
    }

    #[test]
    fn first_lines_counts_the_rest() {
        assert_eq!(first_lines("a\nb\nc\nd\ne", 2), "a\nb\n… +3 lines");
        assert_eq!(first_lines("a", 3), "a");
    }
}
