//! harness9's approval modes as ACP session modes: the list `session/new` and
//! `session/load` answer with (suggest, auto-edit, full-auto, plan), the mode
//! `session/set_mode` names, and the `current_mode_update` sent when the mode changes
//! inside harness9 (an approved plan leaves plan mode).
//!
//! A mode id is one of the four names exactly; anything else is no mode. It must not know
//! the wire or how approval works inside.

use agent_client_protocol_schema::v1::{
    CurrentModeUpdate, SessionMode, SessionModeId, SessionModeState, SessionUpdate,
};

use crate::protocol::ApprovalMode;

/// Every mode, in the order offered.
pub const ALL: [ApprovalMode; 4] = [
    ApprovalMode::Suggest,
    ApprovalMode::AutoEdit,
    ApprovalMode::FullAuto,
    ApprovalMode::Plan,
];

/// The mode's id (its `--approval-mode` name).
pub fn id(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::Suggest => "suggest",
        ApprovalMode::AutoEdit => "auto-edit",
        ApprovalMode::FullAuto => "full-auto",
        ApprovalMode::Plan => "plan",
    }
}

/// The mode an id names exactly, if any.
pub fn parse(id_given: &str) -> Option<ApprovalMode> {
    ALL.into_iter().find(|mode| id(*mode) == id_given)
}

/// A mode's name and what it lets run, for the editor's mode picker.
fn described(mode: ApprovalMode) -> SessionMode {
    let (name, description) = match mode {
        ApprovalMode::Suggest => ("Suggest", "Asks before every edit and command"),
        ApprovalMode::AutoEdit => (
            "Auto-edit",
            "Edits files in the project without asking; asks before commands",
        ),
        ApprovalMode::FullAuto => (
            "Full-auto",
            "Edits and runs commands without asking, inside the sandbox",
        ),
        ApprovalMode::Plan => (
            "Plan",
            "Reads and plans only, then asks to carry the plan out",
        ),
    };
    SessionMode::new(id(mode), name).description(description.to_string())
}

/// The modes offered, with `current` in force.
pub fn state(current: ApprovalMode) -> SessionModeState {
    SessionModeState::new(id(current), ALL.into_iter().map(described).collect())
}

/// The update saying `mode` is now in force.
pub fn changed(mode: ApprovalMode) -> SessionUpdate {
    SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(SessionModeId::new(id(mode))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_is_named_once_and_only_its_exact_name_parses() {
        for mode in ALL {
            assert_eq!(parse(id(mode)), Some(mode));
        }
        for bad in ["", "Suggest", "auto_edit", "full-auto ", "yolo", "plan\n"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        let state = serde_json::to_value(state(ApprovalMode::AutoEdit)).unwrap();
        assert_eq!(state["currentModeId"], "auto-edit");
        let ids: Vec<&str> = state["availableModes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["suggest", "auto-edit", "full-auto", "plan"]);
        let update = serde_json::to_value(changed(ApprovalMode::Plan)).unwrap();
        assert_eq!(update["sessionUpdate"], "current_mode_update");
        assert_eq!(update["currentModeId"], "plan");
    }
}
