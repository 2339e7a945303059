//! What hooks say of a call, composed with the approval policy: a PreToolUse or
//! PermissionRequest hook's stance ([`HookStance`]) and the one rule of what a hook's
//! allow may answer ([`hook_may_allow`]). A child of `approval.rs`, which owns the
//! policy; it must not know how hooks run or how a question is drawn.

use super::{
    Access, ApprovalPolicy, ApprovalRequestKind, Approver, AskBecause, AskPlan, Offer, Verdict,
};
use crate::protocol::ApprovalMode;

/// What the hooks said of a call before the policy judges it (PreToolUse's
/// `permissionDecision`, PermissionRequest's `decision.behavior`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookStance {
    /// No hook decided: the policy alone decides.
    Silent,
    /// A hook allowed it: it runs where only the approval mode would have asked (or
    /// the mode's sandbox requirement). Deny rules still deny; ask rules (the
    /// built-in secret-file rules among them), destructive commands and lines harness9
    /// cannot read still ask.
    Allow,
    /// A hook asked for the user's confirmation: asked even where the policy would run
    /// it (denied when nobody can answer); a deny rule still denies.
    Ask {
        /// Which hook asked, and why, for the question.
        why: String,
    },
}

impl ApprovalPolicy {
    /// [`ApprovalPolicy::verdict`] with what the hooks said of the call composed in:
    /// see [`HookStance`]. A hook's allow never turns a deny rule, an ask rule, a
    /// destructive command or an unreadable line into a run.
    pub fn verdict_with_hook(
        &self,
        mode: ApprovalMode,
        tool: &str,
        access: Access,
        stance: &HookStance,
    ) -> Verdict {
        let request = match &access {
            Access::NeedsApproval(request) => request.clone(),
            Access::ReadInside(path) => ApprovalRequestKind::Read {
                path: path.clone(),
                via: None,
            },
            // A read-only call touches nothing a rule judges; asked about, it is shown
            // as what it is: reading in the project.
            Access::ReadOnly | Access::All(_) => ApprovalRequestKind::Read {
                path: self.project(),
                via: None,
            },
        };
        let verdict = self.verdict_in(mode, tool, access);
        match (stance, verdict) {
            (_, denied @ Verdict::DeniedByRule { .. }) | (HookStance::Silent, denied) => denied,
            (HookStance::Allow, Verdict::Ask(plan) | Verdict::DenyUnattended(plan))
                if hook_may_allow(&plan) =>
            {
                Verdict::Run
            }
            (HookStance::Allow, other) => other,
            (HookStance::Ask { why }, Verdict::Run) => {
                let plan = AskPlan {
                    request,
                    because: Some(AskBecause::Hook { why: why.clone() }),
                    offer: Offer::OnceOnly {
                        why: "a hook asks about this call".to_string(),
                    },
                };
                match self.approver {
                    Approver::Frontend => Verdict::Ask(plan),
                    Approver::Nobody => Verdict::DenyUnattended(plan),
                }
            }
            // Asked anyway: the policy's own reason (a destructive command, a secret
            // file) is the stronger one to show.
            (HookStance::Ask { .. }, asked) => asked,
        }
    }
}

/// Whether a hook's allow may answer a question asked for `because`: only the approval
/// mode's own question (and its sandbox requirement), never a rule's, a destructive
/// command's, an unreadable line's or another hook's.
pub(in crate::agent) fn hook_may_allow(plan: &AskPlan) -> bool {
    // A plan is approved only by a person: approving it widens the mode.
    if matches!(plan.request, ApprovalRequestKind::Plan { .. }) {
        return false;
    }
    match plan.because.as_ref() {
        None | Some(AskBecause::Unconfined { .. }) => true,
        Some(
            AskBecause::Rule { .. }
            | AskBecause::Destructive { .. }
            | AskBecause::Opaque { .. }
            | AskBecause::Hook { .. },
        ) => false,
    }
}
