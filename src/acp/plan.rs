//! The model's plan (`update_plan`, [`PlanUpdate`]) as ACP's `plan` session update: every
//! step an entry, in order, with its status (pending, in progress, completed). ACP's
//! plan is sent whole each time, as harness9's is.
//!
//! harness9's steps have no priority: each is sent as `medium`. The steps' words are the
//! model's (untrusted); the wire's writer escapes them. It keeps no state and must not
//! know the wire.

use agent_client_protocol_schema::v1::{
    Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
};

use crate::protocol::{PlanUpdate, StepStatus};

/// The `plan` update for `plan`.
pub fn update(plan: &PlanUpdate) -> SessionUpdate {
    let entries = plan
        .items
        .iter()
        .map(|step| {
            let status = match step.status {
                StepStatus::Pending => PlanEntryStatus::Pending,
                StepStatus::InProgress => PlanEntryStatus::InProgress,
                StepStatus::Done => PlanEntryStatus::Completed,
            };
            PlanEntry::new(step.step.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::PlanStep;

    #[test]
    fn every_step_is_an_entry_with_its_status_in_order() {
        let step = |text: &str, status| PlanStep {
            step: text.into(),
            status,
        };
        let plan = PlanUpdate {
            items: vec![
                step("read", StepStatus::Done),
                step("fix", StepStatus::InProgress),
                step("test", StepStatus::Pending),
            ],
            explanation: None,
        };
        let got = serde_json::to_value(update(&plan)).unwrap();
        assert_eq!(got["sessionUpdate"], "plan");
        let entries = got["entries"].as_array().unwrap();
        let seen: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| {
                (
                    e["content"].as_str().unwrap(),
                    e["status"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("read", "completed"),
                ("fix", "in_progress"),
                ("test", "pending")
            ]
        );
        assert_eq!(entries[0]["priority"], "medium");
    }
}
