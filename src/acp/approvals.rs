//! Approvals over ACP: an [`ApprovalAsk`] becomes a `session/request_permission` request
//! with three options (allow once, allow for this session, reject), and the client's
//! answer becomes an [`ApprovalDecision`].
//!
//! The options are a closed list: only an answer that selects one of their ids by name
//! approves anything; a cancelled request, an error, an unknown option id or an answer
//! that does not parse denies. A plan's approval (leaving plan mode) is not offered over
//! ACP yet and is denied with a note saying so. It must not know the wire or the agent.

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionId, ToolCallUpdate,
};
use serde_json::Value;

use crate::protocol::{ApprovalAsk, ApprovalDecision, ApprovalRequestKind};

/// The option that runs the call once.
const ALLOW_ONCE: &str = "allow_once";
/// The option that runs it and adds the offered rules for this session.
const ALLOW_SESSION: &str = "allow_session";
/// The option that does not run it.
const REJECT: &str = "reject";

/// What to do with an approval request.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// Ask the client with this request.
    Client(Box<RequestPermissionRequest>),
    /// Answer the agent at once (not offered over ACP).
    Answer(ApprovalDecision),
}

/// How `ask` is put to the client of session `session`.
pub fn ask(session: &SessionId, ask: &ApprovalAsk) -> Ask {
    if let ApprovalRequestKind::Plan { .. } = ask.request {
        return Ask::Answer(ApprovalDecision::Deny {
            reason: Some("approving a plan is not offered over ACP yet".into()),
        });
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
    Ask::Client(Box::new(RequestPermissionRequest::new(
        session.clone(),
        ToolCallUpdate::new(ask.call_id.clone(), fields),
        options,
    )))
}

/// The decision the client's answer (its result, or the error it sent) makes.
pub fn decision(answer: Result<Value, Value>) -> ApprovalDecision {
    let deny = ApprovalDecision::Deny { reason: None };
    let Ok(result) = answer else { return deny };
    let Ok(response) = serde_json::from_value::<RequestPermissionResponse>(result) else {
        return deny;
    };
    match response.outcome {
        RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
            ALLOW_ONCE => ApprovalDecision::Approve,
            ALLOW_SESSION => ApprovalDecision::ApproveForSession,
            _ => deny,
        },
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
        assert_eq!(decision(selected("allow_once")), ApprovalDecision::Approve);
        assert_eq!(
            decision(selected("allow_session")),
            ApprovalDecision::ApproveForSession
        );
        let deny = ApprovalDecision::Deny { reason: None };
        for id in ["reject", "ALLOW_ONCE", "allow_once ", "", "allow_project"] {
            assert_eq!(decision(selected(id)), deny, "{id:?}");
        }
        assert_eq!(
            decision(Ok(json!({"outcome": {"outcome": "cancelled"}}))),
            deny
        );
        assert_eq!(decision(Ok(json!("allow_once"))), deny);
        assert_eq!(decision(Ok(Value::Null)), deny);
        assert_eq!(decision(Err(json!({"code": -32603}))), deny);
    }
}
