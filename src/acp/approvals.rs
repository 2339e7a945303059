//! Approvals over ACP: an [`ApprovalAsk`] becomes a `session/request_permission` request
//! with three options (allow once, allow for this session, reject), and the client's
//! answer becomes an [`ApprovalDecision`].
//!
//! A plan's approval (`exit_plan`) is asked the same way, with the modes to carry it out
//! in (auto-edit, full-auto, suggest) and "keep planning".
//!
//! The options are a closed list: only an answer that selects one of the ids offered for
//! that request by name approves anything; a cancelled request, an error, an unknown
//! option id (or one offered for the other kind of request) or an answer that does not
//! parse denies. It must not know the wire or the agent.

use agent_client_protocol_schema::v1::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionId, TextContent, ToolCallContent,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;

use crate::protocol::{ApprovalAsk, ApprovalDecision, ApprovalMode, ApprovalRequestKind};

/// The option that runs the call once.
const ALLOW_ONCE: &str = "allow_once";
/// The option that runs it and adds the offered rules for this session.
const ALLOW_SESSION: &str = "allow_session";
/// The option that does not run it.
const REJECT: &str = "reject";

/// The option that approves a plan and switches to auto-edit to carry it out.
const PLAN_AUTO_EDIT: &str = "plan_auto_edit";
/// The option that approves a plan and switches to full-auto.
const PLAN_FULL_AUTO: &str = "plan_full_auto";
/// The option that approves a plan and switches to suggest.
const PLAN_SUGGEST: &str = "plan_suggest";
/// The option that keeps planning.
const KEEP_PLANNING: &str = "keep_planning";

/// Which kind of request was put to the client: what its answer may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// A tool call: run it once, for the session, or not.
    Call,
    /// A plan: carry it out in one of the modes, or keep planning.
    Plan,
}

/// How `ask` is put to the client of session `session`, and which kind it is.
pub fn ask(session: &SessionId, ask: &ApprovalAsk) -> (RequestPermissionRequest, Asked) {
    if let ApprovalRequestKind::Plan { text, .. } = &ask.request {
        return (plan(session, ask, text), Asked::Plan);
    }
    let fields = super::tool_calls::asked_about(&ask.request)
        .title(title(ask))
        .kind(super::updates::kind_of(&ask.name));
    let options = vec![
        PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALLOW_SESSION,
            "Allow for this session",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
    ];
    let request = RequestPermissionRequest::new(
        session.clone(),
        ToolCallUpdate::new(ask.call_id.clone(), fields),
        options,
    );
    (request, Asked::Call)
}

/// A plan's approval: the plan as the call's content, the modes to switch to as options.
fn plan(session: &SessionId, ask: &ApprovalAsk, text: &str) -> RequestPermissionRequest {
    let content: ToolCallContent = ContentBlock::Text(TextContent::new(text)).into();
    let fields = ToolCallUpdateFields::new()
        .title("Carry out this plan?")
        .kind(ToolKind::SwitchMode)
        .content(vec![content]);
    let options = vec![
        PermissionOption::new(
            PLAN_AUTO_EDIT,
            "Yes, and auto-edit (edits without asking)",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            PLAN_FULL_AUTO,
            "Yes, and full-auto (edits and commands without asking)",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            PLAN_SUGGEST,
            "Yes, and ask before each edit and command",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            KEEP_PLANNING,
            "No, keep planning",
            PermissionOptionKind::RejectOnce,
        ),
    ];
    RequestPermissionRequest::new(
        session.clone(),
        ToolCallUpdate::new(ask.call_id.clone(), fields),
        options,
    )
}

/// The decision the client's answer (its result, or the error it sent) to a request of
/// kind `asked` makes.
pub fn decision(asked: Asked, answer: Result<Value, Value>) -> ApprovalDecision {
    let deny = ApprovalDecision::Deny { reason: None };
    let Ok(result) = answer else { return deny };
    let Ok(response) = serde_json::from_value::<RequestPermissionResponse>(result) else {
        return deny;
    };
    let RequestPermissionOutcome::Selected(selected) = response.outcome else {
        return deny;
    };
    let plan = |mode| ApprovalDecision::ApprovePlan { mode };
    match (asked, &*selected.option_id.0) {
        (Asked::Call, ALLOW_ONCE) => ApprovalDecision::Approve,
        (Asked::Call, ALLOW_SESSION) => ApprovalDecision::ApproveForSession,
        (Asked::Plan, PLAN_AUTO_EDIT) => plan(ApprovalMode::AutoEdit),
        (Asked::Plan, PLAN_FULL_AUTO) => plan(ApprovalMode::FullAuto),
        (Asked::Plan, PLAN_SUGGEST) => plan(ApprovalMode::Suggest),
        _ => deny,
    }
}

/// What the call would do, in a line.
fn title(ask: &ApprovalAsk) -> String {
    match &ask.request {
        ApprovalRequestKind::Command { command, .. } => format!("{}: {command}", ask.name),
        _ => ask.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_named_allow_option_approves() {
        let selected = |id: &str| Ok(json!({"outcome": {"outcome": "selected", "optionId": id}}));
        let call = |answer| decision(Asked::Call, answer);
        let plan = |answer| decision(Asked::Plan, answer);
        assert_eq!(call(selected("allow_once")), ApprovalDecision::Approve);
        assert_eq!(
            call(selected("allow_session")),
            ApprovalDecision::ApproveForSession
        );
        assert_eq!(
            plan(selected("plan_full_auto")),
            ApprovalDecision::ApprovePlan {
                mode: ApprovalMode::FullAuto
            }
        );
        assert_eq!(
            plan(selected("plan_auto_edit")),
            ApprovalDecision::ApprovePlan {
                mode: ApprovalMode::AutoEdit
            }
        );
        let deny = ApprovalDecision::Deny { reason: None };
        for id in ["reject", "ALLOW_ONCE", "allow_once ", "", "allow_project"] {
            assert_eq!(call(selected(id)), deny, "{id:?}");
        }
        // An option of the other kind of request approves nothing.
        for id in ["plan_full_auto", "plan_suggest", "keep_planning"] {
            assert_eq!(call(selected(id)), deny, "{id:?}");
        }
        for id in ["allow_once", "allow_session", "keep_planning", "plan"] {
            assert_eq!(plan(selected(id)), deny, "{id:?}");
        }
        for asked in [Asked::Call, Asked::Plan] {
            assert_eq!(
                decision(asked, Ok(json!({"outcome": {"outcome": "cancelled"}}))),
                deny
            );
            assert_eq!(decision(asked, Ok(json!("allow_once"))), deny);
            assert_eq!(decision(asked, Ok(Value::Null)), deny);
            assert_eq!(decision(asked, Err(json!({"code": -32603}))), deny);
        }
    }
}
