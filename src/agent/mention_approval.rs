//! Whether an `@path` mention the user typed may be attached: the session's approval
//! policy judges it like a read by a tool (`read_file` for a file, `list` for a folder),
//! so a file outside the project or a secret file asks (through the same
//! `Event::ApprovalRequest` and `Op::Approval` as a tool call) and rules such as
//! `allow read(~/notes/**)` apply. When nobody can answer (`-p`, pipe mode) the mention
//! is refused with what would allow it, and nothing is sent.
//!
//! It decides and asks; it must not know how a frontend draws the question or how a
//! mention is read.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::agent::approval::{AskPlan, Verdict};
use crate::agent::turn::{SessionState, TurnContext};
use crate::mentions::Mention;
use crate::protocol::{ApprovalDecision, AskBecause, ErrorKind, Offer, TurnOutcome};

/// Approves `mention` (asking when the policy says so), or the turn's failure.
pub(super) async fn approve(
    state: &SessionState,
    ctx: &TurnContext,
    mention: &Mention,
) -> Result<(), TurnOutcome> {
    let refused = |why: String| {
        Err(TurnOutcome::Failed {
            kind: ErrorKind::Usage,
            message: format!(
                "@{}: not attached: {why}; nothing was sent",
                mention.written
            ),
        })
    };
    let shown = mention.path.shown();
    match state.policy.verdict(mention.tool(), mention.access()) {
        Verdict::Run => Ok(()),
        Verdict::DeniedByRule { rule, source, .. } => refused(format!(
            "the rule `deny {rule}` ({source}) refuses reading {shown}"
        )),
        Verdict::DenyUnattended(plan) => refused(unattended(&shown, &plan)),
        Verdict::DeniedInPlan { why, .. } => refused(why),
        Verdict::Ask(plan) => match ask(state, ctx, mention, &plan).await {
            Some(ApprovalDecision::Deny { .. }) => refused("you declined it".to_string()),
            Some(_) => Ok(()),
            None => Err(TurnOutcome::Interrupted),
        },
    }
}

/// Why a mention needing a person was refused, and what would allow it.
fn unattended(shown: &str, plan: &AskPlan) -> String {
    let how = match (&plan.because, &plan.offer) {
        (Some(AskBecause::Rule { rule, source }), _) => format!(
            "the rule `ask {rule}` ({source}) asks about it every time; attach it in an \
             interactive session, where you can approve it"
        ),
        (_, Offer::Rules { rules }) => format!(
            "allow it with a permission rule (`allow = [\"{}\"]` under [permissions] in \
             config.toml), with --approval-mode full-auto, or approve it in an interactive \
             session",
            rules.join("\", \"")
        ),
        (_, Offer::OnceOnly { why }) => {
            format!("{why}; approve it in an interactive session")
        }
    };
    format!("reading {shown} needs approval and nobody can answer in this mode; {how}")
}

/// Asks the frontend; `None` when the turn was interrupted while waiting.
async fn ask(
    state: &SessionState,
    ctx: &TurnContext,
    mention: &Mention,
    plan: &AskPlan,
) -> Option<ApprovalDecision> {
    // Ids of their own, never a model's call id, so an answer reaches this question.
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let call_id = format!("mention-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let name = format!("@{}", mention.written);
    super::call::ask_frontend(ctx, &state.policy, &call_id, &name, plan).await
}
