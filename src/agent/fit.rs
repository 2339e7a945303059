//! Every request fits the window the session knows. Before a request that would pass
//! the fill line, and before a tool result joins the conversation, room is made in this
//! order: whole output of earlier turns elided; the older turns compacted into a summary;
//! this turn's earlier results elided; this turn's earlier calls folded into a note. A
//! tool result is then cut (head and tail, with a marker saying how much was cut and how
//! to get the rest) to what is left, and to at most [`RESULT_PERCENT`] of the window.
//! Without a known window nothing here acts: the fixed limits of the tools hold.
//!
//! It decides when and how much; the conversation elides and folds, `compact.rs` writes
//! the summary. It must not know how anything is drawn.

use crate::agent::compact::{CompactError, compact_and_report};
use crate::agent::conversation::Shed;
use crate::agent::turn::{SessionState, TurnContext};
use crate::llm::{ToolCall, ToolSpec};
use crate::protocol::{CompactionTrigger, Event, TurnOutcome};
use crate::tools::OutputKind;
use crate::truncate::truncate_noting;

/// The share of the window (percent) one tool result may take.
pub const RESULT_PERCENT: u64 = 25;

/// Room (percent of the window) kept free beside a new result: the estimate's error and
/// the messages that follow it.
const MARGIN_PERCENT: u64 = 2;

/// A compaction is made for a result only when what it would summarize is over this
/// share of the window (percent): summarizing less gains little and costs a request.
const COMPACT_WORTH_PERCENT: u64 = 20;

/// Bytes the estimates count for a message beside its text.
const MESSAGE_OVERHEAD: usize = 24;

/// Said in the marker of a result cut to fit the window.
pub const CUT_TO_FIT: &str = " to fit the context window; to see that part, ask for less at \
     once (read_file with offset and limit, grep for what you need, a command that filters \
     its output)";

/// How sizing a result ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sized {
    /// The result fits (cut or whole).
    Fitted,
    /// The user interrupted a compaction made for it: the turn stops.
    Interrupted,
}

/// Makes room before a request whose estimate is over the fill line: earlier output,
/// then a compaction, then this turn's results and calls but the latest. `Some` ends the
/// turn (interrupted while compacting).
pub(super) async fn before_request(
    state: &mut SessionState,
    ctx: &TurnContext,
    specs: &[ToolSpec],
) -> Option<TurnOutcome> {
    state
        .conversation
        .set_window(ctx.setup.context_window.get());
    if state.conversation.room(specs)? >= 0 {
        return None;
    }
    let tools = &ctx.setup.tools;
    let kinds = |name: &str| tools.output_kind(name);
    if shed_until(state, Shed::EarlierOutput, 0, specs, &kinds) {
        return None;
    }
    match compact_and_report(state, ctx, CompactionTrigger::Threshold, None).await {
        Ok(_) | Err(CompactError::NothingToCompact | CompactError::NoGain) => {}
        Err(CompactError::Interrupted) => return Some(TurnOutcome::Interrupted),
        // The request may still fit; a refusal is handled when it comes.
        Err(e @ CompactError::Failed { .. }) => ctx.emit(Event::Warning {
            message: format!("could not compact the conversation: {e}"),
        }),
    }
    if !shed_until(state, Shed::TurnOutput { keep: 1 }, 0, specs, &kinds) {
        shed_until(state, Shed::TurnCalls { keep: 1 }, 0, specs, &kinds);
    }
    None
}

/// After the endpoint refused a request as too long and no compaction could help:
/// elides every whole result but this turn's latest, and the latest too when nothing else
/// was left (it was sized for a window the endpoint does not have; the model can call
/// again and get it sized anew). Returns whether anything changed (then the request is
/// worth asking again).
pub(super) fn shed_after_refusal(state: &mut SessionState, ctx: &TurnContext) -> bool {
    state
        .conversation
        .set_window(ctx.setup.context_window.get());
    let Some(window) = state.conversation.window() else {
        return false;
    };
    let specs = ctx.setup.tools.specs();
    let tools = &ctx.setup.tools;
    let kinds = |name: &str| tools.output_kind(name);
    // As much room as there could be: everything of these kinds goes.
    let all = i64::try_from(window).unwrap_or(i64::MAX);
    let conv = &mut state.conversation;
    let mut changed = conv.shed(Shed::EarlierOutput, all, &specs, &kinds);
    changed += conv.shed(Shed::TurnOutput { keep: 1 }, all, &specs, &kinds);
    if changed == 0 {
        changed = conv.shed(Shed::TurnOutput { keep: 0 }, all, &specs, &kinds);
    }
    changed > 0
}

/// Sizes a tool result for the window before it joins the conversation: makes room for
/// it (see the module), then cuts it to the room left and to [`RESULT_PERCENT`] of the
/// window (instructions only to the room). Its last `kept` bytes (instruction files
/// attached to it) are never cut: what comes before them is. Without a known window it
/// is unchanged.
pub(super) async fn fit_result(
    state: &mut SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    specs: &[ToolSpec],
    content: String,
    kept: usize,
) -> (String, Sized) {
    let Some(window) = ctx.setup.context_window.get() else {
        return (content, Sized::Fitted);
    };
    state.conversation.set_window(Some(window));
    let tools = &ctx.setup.tools;
    let kinds = |name: &str| tools.output_kind(name);
    let cap = match tools.output_kind(&call.name) {
        OutputKind::Instructions => u64::MAX,
        OutputKind::Reproducible => window * RESULT_PERCENT / 100,
    };
    let conv = &state.conversation;
    let whole = conv.tokens_of(content.len() + MESSAGE_OVERHEAD);
    let wanted = whole.min(cap);
    let fair = wanted.min(cap / 2);
    let margin = window * MARGIN_PERCENT / 100;
    let want = |tokens: u64| i64::try_from(tokens + margin).unwrap_or(i64::MAX);
    // The usual case: it fits whole, nothing to do.
    if wanted == whole && has_room(state, want(whole), specs) {
        return (content, Sized::Fitted);
    }

    let mut sized = Sized::Fitted;
    if !shed_until(state, Shed::EarlierOutput, want(wanted), specs, &kinds)
        && !has_room(state, want(fair), specs)
        && state.conversation.earlier_tokens() > window * COMPACT_WORTH_PERCENT / 100
    {
        match compact_and_report(state, ctx, CompactionTrigger::Threshold, None).await {
            Ok(_) | Err(CompactError::NothingToCompact | CompactError::NoGain) => {}
            Err(CompactError::Interrupted) => sized = Sized::Interrupted,
            Err(e @ CompactError::Failed { .. }) => ctx.emit(Event::Warning {
                message: format!("could not compact the conversation: {e}"),
            }),
        }
    }
    if !shed_until(
        state,
        Shed::TurnOutput { keep: 0 },
        want(wanted),
        specs,
        &kinds,
    ) {
        shed_until(
            state,
            Shed::TurnCalls { keep: 0 },
            want(fair),
            specs,
            &kinds,
        );
    }

    let conv = &state.conversation;
    let room = conv.room(specs).unwrap_or(0) - i64::try_from(margin).unwrap_or(i64::MAX);
    let tokens = wanted.min(u64::try_from(room).unwrap_or(0));
    if tokens >= whole {
        return (content, sized);
    }
    let bytes = conv.bytes_of(tokens).saturating_sub(MESSAGE_OVERHEAD);
    let (output, attached) = content.split_at(content.len() - kept.min(content.len()));
    let mut cut = truncate_noting(output, bytes.saturating_sub(attached.len()), CUT_TO_FIT);
    cut.push_str(attached);
    (cut, sized)
}

/// Whether the next request has at least `room` tokens of room.
fn has_room(state: &SessionState, room: i64, specs: &[ToolSpec]) -> bool {
    state.conversation.room(specs).is_none_or(|r| r >= room)
}

/// Sheds `step` until the next request has `room` tokens of room; returns whether it
/// has (now or already).
fn shed_until(
    state: &mut SessionState,
    step: Shed,
    room: i64,
    specs: &[ToolSpec],
    kinds: &dyn Fn(&str) -> OutputKind,
) -> bool {
    state.conversation.shed(step, room, specs, kinds);
    has_room(state, room, specs)
}
