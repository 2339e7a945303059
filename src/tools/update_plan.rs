//! The `update_plan` tool: the model's list of steps for a task and where each stands
//! (pending, in progress, done; at most one in progress), shown to the user by every
//! frontend. It changes nothing on disk: the plan travels in the result
//! ([`ToolOutput::plan`]) for the agent to send on and save. It is left out of requests
//! when the context window is small ([`UpdatePlan::MIN_WINDOW`]).

use serde::Deserialize;

use super::{ToolContext, ToolFuture, ToolOutput, TypedTool};
use crate::protocol::{PlanStep, PlanUpdate, StepStatus};

/// Keeps the user's view of the plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdatePlan;

impl UpdatePlan {
    /// Below this context window (tokens) the tool is not offered: its schema and the
    /// plans it sends would take room the conversation needs.
    pub const MIN_WINDOW: u64 = crate::tools::ROOMY_WINDOW;
}

/// The most steps a plan holds.
const MAX_STEPS: usize = 50;
/// The longest step, in characters.
const MAX_STEP_CHARS: usize = 300;

/// The arguments of an `update_plan` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    items: Vec<Item>,
    explanation: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Item {
    step: String,
    status: StepStatus,
}

/// The plan from the arguments, or what is wrong with them.
fn plan_of(args: Args) -> Result<PlanUpdate, String> {
    if args.items.len() > MAX_STEPS {
        return Err(format!("a plan holds at most {MAX_STEPS} steps"));
    }
    let in_progress = args
        .items
        .iter()
        .filter(|i| i.status == StepStatus::InProgress)
        .count();
    if in_progress > 1 {
        return Err(format!(
            "{in_progress} steps are in_progress; at most one step is in progress at a time"
        ));
    }
    let mut items = Vec::with_capacity(args.items.len());
    for item in args.items {
        let step = item.step.trim();
        if step.is_empty() {
            return Err("a step is empty: say what it does".into());
        }
        items.push(PlanStep {
            step: step.chars().take(MAX_STEP_CHARS).collect(),
            status: item.status,
        });
    }
    let explanation = args
        .explanation
        .map(|e| e.trim().chars().take(MAX_STEP_CHARS).collect::<String>())
        .filter(|e| !e.is_empty());
    Ok(PlanUpdate { items, explanation })
}

impl TypedTool for UpdatePlan {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;
    const MIN_WINDOW: Option<u64> = Some(UpdatePlan::MIN_WINDOW);

    const NAME: &'static str = "update_plan";
    const DESCRIPTION: &'static str = "Show the user your plan for a multi-step task: every step with its status \
         (pending, in_progress, done; at most one in_progress). Send the whole list each \
         time a step starts or ends. Skip it for simple tasks.";

    const PARAMETERS: &'static str = include_str!("schemas/update_plan.json");

    fn summary(&self, args: &Args) -> String {
        let done = args
            .items
            .iter()
            .filter(|i| i.status == StepStatus::Done)
            .count();
        format!("{done}/{} done", args.items.len())
    }

    fn execute<'a>(&'a self, args: Args, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            Ok(match plan_of(args) {
                Ok(plan) => ToolOutput {
                    plan: Some(Box::new(plan)),
                    ..ToolOutput::ok("Plan updated.")
                },
                Err(why) => ToolOutput::error(why),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{run_tool, test_context};
    use serde_json::json;

    #[tokio::test]
    async fn a_plan_has_at_most_one_step_in_progress_and_no_empty_step() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = run_tool(
            &UpdatePlan,
            &ctx,
            json!({"items": [
                {"step": "read", "status": "done"},
                {"step": " write ", "status": "in_progress"},
                {"step": "test", "status": "pending"}
            ], "explanation": "started writing"}),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        let plan = out.plan.unwrap();
        assert_eq!(plan.items[1].step, "write");
        assert_eq!(
            (plan.done(), plan.current().map(|s| s.step.as_str())),
            (1, Some("write"))
        );
        assert_eq!(plan.explanation.as_deref(), Some("started writing"));
        let two = run_tool(
            &UpdatePlan,
            &ctx,
            json!({"items": [
                {"step": "a", "status": "in_progress"},
                {"step": "b", "status": "in_progress"}
            ]}),
        )
        .await;
        assert!(
            two.is_error && two.content.contains("at most one"),
            "{}",
            two.content
        );
        assert!(two.plan.is_none());
        let empty = run_tool(
            &UpdatePlan,
            &ctx,
            json!({"items": [{"step": " ", "status": "done"}]}),
        )
        .await;
        assert!(empty.is_error);
        let bad = run_tool(
            &UpdatePlan,
            &ctx,
            json!({"items": [{"step": "a", "status": "later"}]}),
        )
        .await;
        assert!(bad.is_error);
    }
}
