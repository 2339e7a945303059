//! The plan the model keeps with `update_plan`: its steps and their state, as the
//! frontends draw it, stream-json sends it (`plan` events) and sessions save it. Plain
//! data; the words are the model's (untrusted: frontends show them inert).

use serde::{Deserialize, Serialize};

/// Where one step of the plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Under way (at most one step at a time).
    InProgress,
    /// Finished.
    Done,
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// What the step does, in the model's words.
    pub step: String,
    /// Where it stands.
    pub status: StepStatus,
}

/// The whole plan as last updated.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlanUpdate {
    /// The steps, in order.
    pub items: Vec<PlanStep>,
    /// Why it changed, when the model said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

impl PlanUpdate {
    /// How many steps are done.
    pub fn done(&self) -> usize {
        self.items
            .iter()
            .filter(|s| s.status == StepStatus::Done)
            .count()
    }

    /// The step under way, if any.
    pub fn current(&self) -> Option<&PlanStep> {
        self.items
            .iter()
            .find(|s| s.status == StepStatus::InProgress)
    }

    /// The plan as plain text, one step a line with a mark (`[x]` done, `[>]` under
    /// way, `[ ]` pending), for line frontends (the REPL); not yet made inert.
    pub fn as_text(&self) -> String {
        let mut text = format!("Plan ({}/{} done)\n", self.done(), self.items.len());
        for item in &self.items {
            let mark = match item.status {
                StepStatus::Done => "[x]",
                StepStatus::InProgress => "[>]",
                StepStatus::Pending => "[ ]",
            };
            text.push_str(&format!(
                "  {mark} {}\n",
                item.step.replace(['\n', '\r'], " ")
            ));
        }
        if let Some(why) = &self.explanation {
            text.push_str(&format!("  ({})\n", why.replace(['\n', '\r'], " ")));
        }
        text
    }
}
