//! One turn: send the conversation, stream the answer, run the tool calls the model makes
//! (after the approval policy), send the results, and repeat until the model answers
//! without tools, the request cap is reached, the user interrupts, or a request fails.
//! Each request is first made to fit the window (`fit.rs`); a refusal as too long
//! compacts, or sheds what is left, and asks once more.
//!
//! It owns the conversation history and the session's usage counters. It reports
//! everything through the event sender and must not know how events are drawn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agent::AgentSetup;
use crate::agent::approval::ApprovalPolicy;
use crate::agent::call::{CallEnd, run_call, run_calls_together};
use crate::agent::compact::{CompactError, compact_and_report};
use crate::agent::conversation::{Conversation, estimate_messages, estimate_specs};
use crate::llm::window::ContextWindow;
use crate::llm::{
    ChatRequest, Completion, FinishReason, Message, PartialAnswer, Reasoning, StreamEvent, ToolSpec,
};
use crate::protocol::{
    ApprovalDecision, CompactionTrigger, ErrorKind, Event, InputOrigin, SharedText, SubAgentEvent,
    TruncationReason, TurnOutcome, Usage, WindowSource,
};
use crate::sessions::Record;

/// Approvals waiting for an answer, by call id.
pub type PendingApprovals = Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>;

/// Marker appended to an answer the user interrupted.
pub const INTERRUPTED_MARKER: &str = "[interrupted by the user]";

/// Everything a session carries from turn to turn.
#[derive(Debug)]
pub struct SessionState {
    /// What is sent (system prompt first) and saved.
    pub conversation: Conversation,
    /// Current model id.
    pub model: String,
    /// The reasoning effort sent with each request (`None`: none is sent).
    pub effort: Option<crate::protocol::Effort>,
    /// Sent as `prompt_cache_key` where the provider caches by key: the saved session's
    /// id, else an id of the same form made for this run.
    pub cache_key: String,
    /// Usage so far.
    pub usage: Usage,
    /// Approval mode and "always" approvals.
    pub policy: ApprovalPolicy,
    /// The saved session's artifacts (`None` when the session is not saved).
    pub artifacts: Option<crate::artifacts::ArtifactStore>,
    /// Where the conversation's images are kept (beside the saved session, else in
    /// memory).
    pub images: crate::images::ImageStore,
}

/// Where a turn's events go: straight to the frontend, or, inside a forked skill's
/// sub-agent, wrapped in [`Event::SubAgent`] (approval requests stay unwrapped so the
/// frontend answers them as usual).
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<Event>,
    fork: Option<ForkLabel>,
    /// Where the turn's own `TurnComplete` waits, when the runner holds it back until
    /// the turn's work after the answer is done (see [`EventSink::holding_turn_end`]).
    held_end: Option<HeldTurnEnd>,
}

/// A turn's `TurnComplete`, held back by its [`EventSink`] until the runner releases it.
#[derive(Debug, Clone, Default)]
pub struct HeldTurnEnd(Arc<Mutex<Option<Event>>>);

impl HeldTurnEnd {
    /// Sends the held event, if the turn emitted one.
    pub fn release(&self, tx: &mpsc::UnboundedSender<Event>) {
        let held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(event) = held {
            let _ = tx.send(event);
        }
    }
}

#[derive(Debug, Clone)]
struct ForkLabel {
    parent_call_id: Option<String>,
    skill: String,
}

impl EventSink {
    /// A sink that sends events as they are.
    pub fn new(tx: mpsc::UnboundedSender<Event>) -> Self {
        EventSink {
            tx,
            fork: None,
            held_end: None,
        }
    }

    /// A sink that keeps the turn's own [`Event::TurnComplete`] (not a sub-agent's)
    /// until [`HeldTurnEnd::release`]: the frontend shows the session ready only once
    /// the runner has finished the turn's work after the answer (the undo picture of
    /// what the turn changed, so a file the user edits at "ready" is never counted as
    /// the turn's change).
    pub fn holding_turn_end(tx: mpsc::UnboundedSender<Event>) -> (Self, HeldTurnEnd) {
        let held = HeldTurnEnd::default();
        let sink = EventSink {
            tx,
            fork: None,
            held_end: Some(held.clone()),
        };
        (sink, held)
    }

    /// A sink for a sub-agent running `skill`, started by `parent_call_id`.
    pub fn forked(&self, parent_call_id: Option<String>, skill: &str) -> Self {
        EventSink {
            tx: self.tx.clone(),
            fork: Some(ForkLabel {
                parent_call_id,
                skill: skill.to_string(),
            }),
            held_end: None,
        }
    }

    /// True inside a sub-agent.
    pub fn is_forked(&self) -> bool {
        self.fork.is_some()
    }

    /// Sends an event (a closed channel means the frontend is gone; the turn ends on
    /// its own, so the error is ignored).
    pub fn emit(&self, event: Event) {
        if let (Some(held), Event::TurnComplete { .. }) = (&self.held_end, &event) {
            *held
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(event);
            return;
        }
        let event = match &self.fork {
            None => event,
            // Approval requests (and anything else that is not a turn event) go out as
            // they are: the frontend answers them as usual.
            Some(label) => match SubAgentEvent::new(event) {
                Ok(event) => Event::SubAgent {
                    parent_call_id: label.parent_call_id.clone(),
                    skill: label.skill.clone(),
                    event,
                },
                Err(event) => *event,
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
    pub(super) fn emit(&self, event: Event) {
        self.events.emit(event);
    }
}

/// How a turn ended, with its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    /// How it ended.
    pub outcome: TurnOutcome,
    /// The final answer text (may be empty), shared with the conversation's message.
    pub final_text: SharedText,
    /// Usage of the turn.
    pub usage: Usage,
    /// Model requests made.
    pub requests: u32,
}

/// A user message as a frontend sent it ([`crate::protocol::Op::UserInput`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMessage {
    /// The message.
    pub text: String,
    /// Typed (mentions attached) or piped (sent as it is).
    pub origin: InputOrigin,
    /// Piped text sent after a typed message, as it is.
    pub piped: Option<String>,
    /// Images the user gave besides the text.
    pub images: Vec<crate::protocol::ImageInput>,
}

/// Runs a turn for a user message. When the user typed it, its `@path` mentions are
/// attached first ([`crate::mentions`]): each is judged like a read by a tool (a file
/// outside the project or a secret file asks, and is refused when nobody can answer),
/// and one that names nothing, or is refused, fails the turn with the reason; nothing
/// is sent. Piped text is never searched for mentions.
pub async fn run_user_turn(
    state: &mut SessionState,
    ctx: &TurnContext,
    message: UserMessage,
) -> TurnOutcome {
    let UserMessage {
        text,
        origin,
        piped,
        images: given,
    } = message;
    let typed = text.clone();
    let attached = match origin {
        InputOrigin::Typed if crate::mentions::has_mentions(&text) => {
            attach_mentions(state, ctx, &text).await
        }
        InputOrigin::Typed | InputOrigin::Piped => Ok(Attached {
            text: text.clone(),
            images: Vec::new(),
        }),
    };
    let attached = match attached {
        Ok(attached) => super::images::add_given(state, ctx, attached, given).await,
        Err(failure) => Err(failure),
    };
    let Attached {
        text: mut attached,
        images,
    } = match attached {
        Ok(attached) => attached,
        Err(failure) => {
            ctx.emit(Event::TurnStarted { text });
            ctx.emit(Event::TurnComplete {
                outcome: failure.clone(),
                final_text: SharedText::default(),
                usage: Usage::default(),
                requests: 0,
            });
            return failure;
        }
    };
    if let Some(piped) = piped {
        attached.push_str(&piped);
    }
    state.conversation.expect_prompt(typed);
    run_turn_with(state, ctx, attached, images, FinalText::EventOnly)
        .await
        .outcome
}

/// A message with what its mentions (and the images given with it) attached: the
/// text, and the images, stored, in the order the text numbers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// What is sent as the message's text.
    pub text: String,
    /// Its images.
    pub images: Vec<crate::images::ImageRef>,
}

/// Who needs a turn's final answer once it ends: the frontend always gets it in
/// [`Event::TurnComplete`]; a sub-agent's caller also needs it back in the
/// [`TurnResult`] (it is the tool's result). Either way it is the conversation's own
/// message text, shared ([`SharedText`]): a long answer is in memory once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FinalText {
    /// In the event and in the result.
    Returned,
    /// In the event only; the result's is empty.
    EventOnly,
}

/// `text` with its mentions attached once each is judged (and, where the policy says
/// so, approved); the turn's failure when one names nothing or is refused.
pub(super) async fn attach_mentions(
    state: &SessionState,
    ctx: &TurnContext,
    text: &str,
) -> Result<Attached, TurnOutcome> {
    attach_mentions_from(state, ctx, text, text).await
}

/// Attaches to `text` the files mentioned in `source`: the part of `text` a person
/// wrote (a command's text without its inline commands' output), so nothing a
/// command printed can name a file to attach.
pub(super) async fn attach_mentions_from(
    state: &SessionState,
    ctx: &TurnContext,
    source: &str,
    text: &str,
) -> Result<Attached, TurnOutcome> {
    let workdir = ctx.setup.workdir.clone();
    let typed = source.to_string();
    let found =
        tokio::task::spawn_blocking(move || crate::mentions::resolve_all(&typed, &workdir)).await;
    let mentions = match found {
        Ok(Ok(mentions)) => mentions,
        Ok(Err(e)) => return Err(usage_failure(e.to_string())),
        Err(e) => return Err(internal_failure(e)),
    };
    for mention in &mentions {
        super::mention_approval::approve(state, ctx, mention).await?;
    }
    let typed = text.to_string();
    let intake = super::images::intake(ctx);
    let store = state.images.clone();
    let attached = tokio::task::spawn_blocking(move || {
        crate::mentions::attach(&typed, &mentions, intake)
            .map_err(|e| e.to_string())
            .and_then(|expanded| {
                let images = super::images::store_all(&store, &expanded.images)?;
                Ok(Attached {
                    text: expanded.text,
                    images,
                })
            })
    })
    .await;
    match attached {
        Ok(Ok(attached)) => Ok(attached),
        Ok(Err(message)) => Err(usage_failure(message)),
        Err(e) => Err(internal_failure(e)),
    }
}

pub(super) fn usage_failure(message: String) -> TurnOutcome {
    TurnOutcome::Failed {
        kind: ErrorKind::Usage,
        message,
    }
}

pub(super) fn internal_failure(e: tokio::task::JoinError) -> TurnOutcome {
    TurnOutcome::Failed {
        kind: ErrorKind::Internal,
        message: format!("attaching the mentioned files failed: {e}"),
    }
}

/// Runs one turn for `text` and reports it; returns how it ended, with its final answer.
pub async fn run_turn(state: &mut SessionState, ctx: &TurnContext, text: String) -> TurnResult {
    run_turn_with(state, ctx, text, Vec::new(), FinalText::Returned).await
}

/// [`run_turn`] for a message with images (stored already), its final answer in the
/// event only.
pub(super) async fn run_turn_with_images(
    state: &mut SessionState,
    ctx: &TurnContext,
    attached: Attached,
) -> TurnOutcome {
    run_turn_with(
        state,
        ctx,
        attached.text,
        attached.images,
        FinalText::EventOnly,
    )
    .await
    .outcome
}

/// [`run_turn`], returning the final answer only where `final_text` says.
async fn run_turn_with(
    state: &mut SessionState,
    ctx: &TurnContext,
    text: String,
    images: Vec<crate::images::ImageRef>,
    final_text: FinalText,
) -> TurnResult {
    // Skills that changed, an undo, a command the user ran: news to the model since it
    // last heard from the user, told with this message (a sub-agent's task is no such
    // message).
    let text = if ctx.events.is_forked() {
        text
    } else {
        with_notes(state, ctx, text)
    };
    ctx.emit(Event::TurnStarted { text: text.clone() });
    state
        .conversation
        .set_window(ctx.setup.context_window.get());
    state.conversation.begin_turn();
    state.conversation.push(Message::User {
        content: text,
        images,
    });
    let mut turn = TurnProgress::default();
    let outcome = loop {
        if turn.requests >= ctx.setup.max_turns {
            break TurnOutcome::MaxTurnsReached {
                limit: ctx.setup.max_turns,
            };
        }
        // Fixed tools first, in a fixed order, then the tools of loaded skills: the
        // list changes only when a skill with tools is loaded or unloaded.
        let mut specs = ctx.setup.tools.specs_for(
            super::plan_mode::tool_set(state.policy.mode()),
            ctx.setup.context_window.get(),
        );
        // A model that cannot see is not offered a tool that shows it images.
        if !ctx.setup.client.config().images.sends_images() {
            specs.retain(|s| {
                s.name != <crate::tools::view_image::ViewImage as crate::tools::TypedTool>::NAME
            });
        }
        if let Some(outcome) = super::fit::before_request(state, ctx, &specs).await {
            break outcome;
        }
        turn.requests += 1;
        ctx.emit(Event::RequestStarted {
            request: turn.requests,
        });
        let completion = match request(state, ctx, &specs, &mut turn).await {
            Answer::Completion(completion) => completion,
            Answer::AskAgain => {
                // The same request, now smaller: it does not count as another.
                turn.requests -= 1;
                continue;
            }
            Answer::End(outcome) => break outcome,
        };
        turn.compacted_after_refusal = false;
        super::endpoint::start_learning(ctx, &state.model);
        let over_budget = account_usage(state, ctx, &specs, &completion, &mut turn);
        let calls = completion.tool_calls.clone();
        // The answer's one allocation, moved from the completion (not copied) and
        // shared by the message, the turn's final text and the event.
        let answer = SharedText::from(completion.text);
        turn.final_text = answer.clone();
        state.conversation.push(Message::Assistant {
            content: answer,
            reasoning: completion.reasoning,
            tool_calls: completion.tool_calls,
        });
        if let Some(limit) = over_budget {
            // Nothing more is run or asked for: the answer so far is the turn's.
            break TurnOutcome::LimitReached { limit };
        }
        if calls.is_empty() {
            let outcome = answered(completion.finish_reason);
            if outcome == TurnOutcome::Completed
                && let Some(failed) = hold_to_schema(state, ctx, &mut turn)
            {
                match failed {
                    SchemaEnd::RepairAsked => continue,
                    SchemaEnd::Failed(outcome) => break outcome,
                }
            }
            // A complete answer is the agent stopping: its Stop hooks may keep it going.
            if outcome == TurnOutcome::Completed {
                let last = turn.final_text.clone();
                let after = super::hooks_turn::stop(state, ctx, &mut turn.stops, &last).await;
                if let super::hooks_turn::AfterStop::GoOn { message } = after {
                    state.conversation.push(Message::user(message));
                    continue;
                }
            }
            break outcome;
        }
        if let Some(outcome) = run_calls(state, ctx, &calls, &specs, &mut turn).await {
            break outcome;
        }
    };
    let outcome = ctx.setup.limits.explain(outcome);
    if let Some(left_out) = end_turn(state, ctx, &outcome) {
        ctx.emit(left_out);
    }
    let (shown, returned) = match final_text {
        FinalText::Returned => (turn.final_text.clone(), turn.final_text),
        FinalText::EventOnly => (turn.final_text, SharedText::default()),
    };
    ctx.emit(Event::TurnComplete {
        outcome: outcome.clone(),
        final_text: shown,
        usage: turn.usage,
        requests: turn.requests,
    });
    TurnResult {
        outcome,
        final_text: returned,
        usage: turn.usage,
        requests: turn.requests,
    }
}

/// `text` after the notes for the model: the skills' changes first, then the
/// conversation's (undos, the user's commands, in the order they happened).
pub(super) fn with_notes(state: &mut SessionState, ctx: &TurnContext, text: String) -> String {
    let notes: Vec<String> = [
        ctx.setup.skills_watch.take_note(),
        state.conversation.take_notes(),
        state.policy.take_mode_note(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if notes.is_empty() {
        return text;
    }
    format!("{}\n\n{text}", notes.join("\n\n"))
}

/// What a turn has done so far.
#[derive(Debug, Default)]
struct TurnProgress {
    /// Its usage.
    usage: Usage,
    /// Model requests made.
    requests: u32,
    /// The last answer's text.
    final_text: SharedText,
    /// One compaction after a refusal per request: a second refusal is a failure.
    compacted_after_refusal: bool,
    /// How often a Stop hook kept the agent going in this turn.
    stops: super::hooks_turn::StopLoop,
    /// Whether the model was asked to repair an answer `--output-schema` refused.
    repair_asked: bool,
}

/// What [`hold_to_schema`] decided about an answer that is not valid.
enum SchemaEnd {
    /// The model was asked, once, to answer again.
    RepairAsked,
    /// It was asked already: the turn fails.
    Failed(TurnOutcome),
}

/// `--output-schema` (the main conversation only): a valid final answer becomes its
/// JSON value's compact text; an invalid one is sent back once with what is wrong,
/// and fails the turn (`output_schema`) the second time. `None`: the answer stands.
fn hold_to_schema(
    state: &mut SessionState,
    ctx: &TurnContext,
    turn: &mut TurnProgress,
) -> Option<SchemaEnd> {
    use super::output_schema::Checked;
    let schema = ctx.setup.output_schema.as_deref()?;
    if ctx.events.is_forked() {
        return None;
    }
    match schema.check(&turn.final_text) {
        Checked::Valid(value) => {
            turn.final_text = SharedText::from(value.to_string());
            None
        }
        Checked::Invalid(why) if !turn.repair_asked => {
            turn.repair_asked = true;
            ctx.emit(Event::Warning {
                message: format!("--output-schema: {why}; the model is asked to repair it once"),
            });
            state.conversation.push(Message::User {
                content: schema.repair_request(&why),
                images: Vec::new(),
            });
            Some(SchemaEnd::RepairAsked)
        }
        Checked::Invalid(why) => Some(SchemaEnd::Failed(TurnOutcome::Failed {
            kind: ErrorKind::OutputSchema,
            message: format!(
                "the final answer does not satisfy --output-schema, even after one repair: {why}"
            ),
        })),
    }
}

/// What one request came to.
enum Answer {
    /// The model answered.
    Completion(Completion),
    /// The conversation was compacted after a context-length refusal: ask again.
    AskAgain,
    /// The turn ends.
    End(TurnOutcome),
}

/// Sends the conversation and streams the answer to the frontend. An interrupted answer
/// keeps what was streamed (marked); a context-length refusal compacts once and asks
/// for the request again.
async fn request(
    state: &mut SessionState,
    ctx: &TurnContext,
    specs: &[ToolSpec],
    turn: &mut TurnProgress,
) -> Answer {
    let images = super::images::read_back(state).await;
    let result = {
        let request = ChatRequest {
            model: &state.model,
            messages: state.conversation.messages(),
            tools: specs,
            effort: state.effort,
            cache_key: Some(&state.cache_key),
            images: &images,
            // The main conversation's answers are held to `--output-schema`.
            output_schema: if ctx.events.is_forked() {
                None
            } else {
                ctx.setup.output_schema.as_deref().map(|s| s.value())
            },
        };
        let model = state.model.clone();
        let mut on_event = |event: StreamEvent| match event {
            // What streams is gathered by the client alone (an interrupted answer comes
            // back in its error): a long answer is not held twice while it streams.
            StreamEvent::Text(t) => {
                super::endpoint::start_learning(ctx, &model);
                ctx.emit(Event::TextDelta { text: t });
            }
            StreamEvent::Reasoning(t) => {
                super::endpoint::start_learning(ctx, &model);
                ctx.emit(Event::ReasoningDelta { text: t });
            }
            StreamEvent::Retrying {
                attempt,
                delay,
                reason,
            } => {
                ctx.emit(Event::Retrying {
                    attempt,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    reason,
                });
            }
        };
        ctx.setup
            .client
            .client()
            .complete(request, &ctx.cancel, &mut on_event)
            .await
    };
    match result {
        Ok(completion) => Answer::Completion(completion),
        Err(mut e) if e.kind() == ErrorKind::Interrupted || ctx.cancel.is_cancelled() => {
            if let Some(PartialAnswer { text, reasoning }) = e.take_partial() {
                let content = format!("{text}\n\n{INTERRUPTED_MARKER}");
                turn.final_text = SharedText::from(text);
                state.conversation.push(Message::Assistant {
                    content: content.into(),
                    reasoning: (!reasoning.is_empty()).then_some(reasoning),
                    tool_calls: Vec::new(),
                });
            }
            Answer::End(TurnOutcome::Interrupted)
        }
        Err(e) if e.kind() == ErrorKind::ContextTooLong && !turn.compacted_after_refusal => {
            turn.compacted_after_refusal = true;
            compact_after_refusal(state, ctx, &e).await
        }
        Err(e) => Answer::End(TurnOutcome::Failed {
            kind: e.kind(),
            message: e.to_string(),
        }),
    }
}

/// After the endpoint refused a request as too long: learns the window when the refusal
/// names it, and compacts the conversation to ask again; when nothing can be compacted,
/// elides the whole results that are left (this turn's latest excepted).
async fn compact_after_refusal(
    state: &mut SessionState,
    ctx: &TurnContext,
    refusal: &crate::llm::LlmError,
) -> Answer {
    if let Some(tokens) = crate::llm::window::from_rejection(&refusal.to_string()) {
        let learnt = ContextWindow {
            tokens,
            source: WindowSource::Rejection,
        };
        if ctx.setup.context_window.set(learnt) {
            ctx.emit(Event::ContextWindow {
                tokens,
                source: WindowSource::Rejection,
            });
        }
    }
    match compact_and_report(state, ctx, CompactionTrigger::Rejection, None).await {
        Ok(_) => Answer::AskAgain,
        Err(CompactError::Interrupted) => Answer::End(TurnOutcome::Interrupted),
        Err(CompactError::NothingToCompact | CompactError::NoGain)
            if super::fit::shed_after_refusal(state, ctx) =>
        {
            Answer::AskAgain
        }
        Err(why) => Answer::End(TurnOutcome::Failed {
            kind: refusal.kind(),
            message: format!("{refusal} (compacting did not help: {why})"),
        }),
    }
}

/// Prices a request's usage (the provider's count, else an estimate), adds it to the
/// turn's and the session's, records it and tells the frontend. Returns the run's cost
/// limit when this request reached it.
fn account_usage(
    state: &mut SessionState,
    ctx: &TurnContext,
    specs: &[ToolSpec],
    completion: &Completion,
    turn: &mut TurnProgress,
) -> Option<crate::protocol::RunLimit> {
    let usage = match completion.usage {
        Some(usage) => {
            state
                .conversation
                .note_prompt_tokens(usage.input_tokens, specs);
            usage
        }
        None => estimate_usage(state.conversation.messages(), specs, completion),
    };
    let usage = ctx.setup.client.priced(&state.model, usage);
    turn.usage.add(&usage);
    state.usage.add(&usage);
    state.conversation.record(Record::Usage {
        turn: state.conversation.turn(),
        usage,
        session: state.usage,
    });
    ctx.emit(Event::Usage {
        turn: turn.usage,
        session: state.usage,
        context_tokens: Some(usage.input_tokens),
    });
    ctx.setup.limits.count(&state.model, &usage)
}

/// How a turn ends when the model answered without calling a tool.
fn answered(finish: Option<FinishReason>) -> TurnOutcome {
    match finish {
        Some(FinishReason::Length) => TurnOutcome::Truncated {
            reason: TruncationReason::Length,
        },
        Some(FinishReason::ContentFilter) => TurnOutcome::Truncated {
            reason: TruncationReason::ContentFilter,
        },
        _ => TurnOutcome::Completed,
    }
}

/// Runs the answer's tool calls in order, each result going into the conversation; after
/// an interrupt or a fatal error the rest are answered "not run". `Some` ends the turn.
async fn run_calls(
    state: &mut SessionState,
    ctx: &TurnContext,
    calls: &[crate::llm::ToolCall],
    specs: &[ToolSpec],
    turn: &mut TurnProgress,
) -> Option<TurnOutcome> {
    let mut ended = None;
    let mut rest = calls;
    while let Some(call) = rest.first() {
        // Consecutive `agent` calls run at once; any other call runs alone.
        let together = rest
            .iter()
            .take_while(|c| c.name == crate::tools::agent_tool::NAME)
            .count()
            .max(1);
        let (batch, after) = rest.split_at(together);
        rest = after;
        if let Some(outcome) = &ended {
            let content = match outcome {
                TurnOutcome::Completed => "Not run: a hook stopped the agent.",
                _ => "Not run: the turn was interrupted.",
            };
            for call in batch {
                state.conversation.push(Message::Tool {
                    tool_call_id: call.id.clone(),
                    content: content.into(),
                });
            }
            continue;
        }
        let results = if batch.len() > 1 {
            let cap = ctx.setup.max_parallel_agents;
            run_calls_together(state, ctx, batch, specs, cap).await
        } else {
            vec![run_call(state, ctx, call, specs).await]
        };
        let mut shown = Vec::new();
        for (call, result) in batch.iter().zip(results) {
            state.conversation.push(Message::Tool {
                tool_call_id: call.id.clone(),
                content: result.content,
            });
            shown.extend(
                result
                    .images
                    .into_iter()
                    .map(|image| (call.id.clone(), image)),
            );
            if let Some(attached) = result.attached {
                let bytes = attached.text.len();
                state
                    .conversation
                    .attach_instructions(&call.id, attached.files, bytes);
            }
            match result.end {
                CallEnd::Done => {}
                CallEnd::Interrupted => ended = ended.or(Some(TurnOutcome::Interrupted)),
                // The reason was shown with the hook's run.
                CallEnd::HookStopped => ended = ended.or(Some(TurnOutcome::Completed)),
                // The plan is the turn's answer: nobody here can approve it.
                CallEnd::PlanProposed(plan) => {
                    // Shown as the answer by every frontend, streamed like one.
                    ctx.emit(Event::TextDelta { text: plan.clone() });
                    turn.final_text = SharedText::from(plan);
                    ended = ended.or(Some(TurnOutcome::Completed));
                }
                CallEnd::Fatal(message) => {
                    ended = ended.or(Some(TurnOutcome::Failed {
                        kind: ErrorKind::Internal,
                        message,
                    }))
                }
            }
        }
        // After the whole batch's results, never between them.
        if !shown.is_empty() && !super::images::show_to_model(state, shown).await {
            ctx.emit(Event::Warning {
                message: "an image a tool returned could not be stored; it was not sent"
                    .to_string(),
            });
        }
    }
    state
        .conversation
        .sync_skills(&ctx.setup.loaded_skills.names());
    ended
}

/// Ends the turn in the conversation (saved, failed turns left out, old output elided).
/// Returns what to tell the user about messages left out, to send just before the
/// turn's end (frontends show it after the error the end reports, which it explains).
pub fn end_turn(
    state: &mut SessionState,
    ctx: &TurnContext,
    outcome: &TurnOutcome,
) -> Option<Event> {
    if let TurnOutcome::Truncated { reason } = outcome {
        ctx.emit(Event::Warning {
            message: format!("{}; ask the model to continue", reason.describe()),
        });
    }
    let conv = &mut state.conversation;
    conv.sync_skills(&ctx.setup.loaded_skills.names());
    let tools = &ctx.setup.tools;
    let dropped = conv.end_turn(outcome, &|name: &str| tools.output_kind(name));
    for message in conv.take_warnings() {
        ctx.emit(Event::Warning { message });
    }
    (dropped > 0 && !ctx.events.is_forked()).then(|| Event::TurnLeftOut {
        messages: dropped,
        saved: conv.is_saved(),
    })
}

/// Usage estimated at about 4 bytes per token when the provider sent none.
pub fn estimate_usage(messages: &[Message], specs: &[ToolSpec], completion: &Completion) -> Usage {
    let output = completion.text.len()
        + completion.reasoning.as_ref().map_or(0, Reasoning::len)
        + completion
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum::<usize>();
    Usage {
        input_tokens: estimate_messages(messages) + estimate_specs(specs),
        output_tokens: (output as u64).div_ceil(4),
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        estimated: true,
        cost: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_about_four_bytes_per_token_and_marked() {
        let messages = vec![Message::User {
            images: Vec::new(),
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

    fn turn_complete() -> Event {
        Event::TurnComplete {
            outcome: TurnOutcome::Completed,
            final_text: String::from("done").into(),
            usage: Usage::default(),
            requests: 1,
        }
    }

    #[test]
    fn a_holding_sink_keeps_the_turns_end_until_it_is_released_and_nothing_else() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (sink, held) = EventSink::holding_turn_end(tx.clone());
        sink.emit(Event::TextDelta { text: "a".into() });
        // A sub-agent's end goes out wrapped, as it always did.
        sink.forked(None, "skill").emit(turn_complete());
        sink.emit(turn_complete());
        sink.emit(Event::Warning {
            message: "after".into(),
        });
        let kinds = |rx: &mut mpsc::UnboundedReceiver<Event>| {
            let mut out = Vec::new();
            while let Ok(event) = rx.try_recv() {
                out.push(match event {
                    Event::TextDelta { .. } => "delta",
                    Event::SubAgent { .. } => "sub-agent",
                    Event::TurnComplete { .. } => "end",
                    Event::Warning { .. } => "warning",
                    _ => "other",
                });
            }
            out
        };
        assert_eq!(kinds(&mut rx), ["delta", "sub-agent", "warning"]);
        held.release(&tx);
        assert_eq!(kinds(&mut rx), ["end"]);
        // Released once: nothing is sent twice.
        held.release(&tx);
        assert!(kinds(&mut rx).is_empty());
    }
}
