//! The `exit_plan` tool, offered only in plan mode: hands the plan file's text to the
//! user for approval. The approval itself is the agent's (the call's access is an
//! [`ApprovalRequestKind::Plan`]): an approved plan switches the approval mode before
//! this tool runs, a plan kept is a denial with the user's feedback, and a run nobody can
//! answer ends with the plan as its result. It reads the plan file without following
//! links and knows nothing of modes or frontends.

use std::io::Read;

use serde::Deserialize;

use super::{Access, ToolContext, ToolFuture, ToolOutput, TypedTool};
use crate::protocol::ApprovalRequestKind;

/// The most of a plan shown and handed over: a plan is a page, not a book.
pub const MAX_PLAN_BYTES: usize = 64 * 1024;

/// Asks the user to approve the plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitPlan;

/// The arguments of an `exit_plan` call (none).
#[derive(Debug, Deserialize)]
pub struct Args {}

/// The plan as read from its file, or why there is none to show.
fn read_plan(ctx: &ToolContext) -> Result<(std::path::PathBuf, String), String> {
    let Some(file) = ctx.plan_file.clone() else {
        return Err("this session has no plan file: exit_plan works only in plan mode".into());
    };
    let opened = crate::nofollow::open_read(&file);
    let mut bytes = Vec::new();
    match opened {
        Ok(f) => {
            let limit = u64::try_from(MAX_PLAN_BYTES).unwrap_or(u64::MAX) + 1;
            if let Err(e) = f.take(limit).read_to_end(&mut bytes) {
                return Err(format!("cannot read the plan file {}: {e}", file.display()));
            }
        }
        Err(crate::nofollow::FileError::NotFound) => {}
        Err(e) => return Err(format!("cannot read the plan file {}: {e}", file.display())),
    }
    if bytes.len() > MAX_PLAN_BYTES {
        return Err(format!(
            "the plan file {} is over {} KiB: shorten the plan",
            file.display(),
            MAX_PLAN_BYTES / 1024
        ));
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if text.trim().is_empty() {
        return Err(format!(
            "the plan file {} is empty: write the plan there first",
            file.display()
        ));
    }
    Ok((file, text))
}

impl TypedTool for ExitPlan {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::PlanOnly;

    const NAME: &'static str = "exit_plan";
    const DESCRIPTION: &'static str = "Plan mode only: show the plan you wrote to the plan file to the user for \
         approval. If approved, plan mode ends and you carry the plan out; otherwise you \
         get their feedback and keep planning.";

    const PARAMETERS: &'static str = include_str!("schemas/exit_plan.json");

    fn access(&self, _args: &Args, ctx: &ToolContext) -> Access {
        match read_plan(ctx) {
            Ok((file, text)) => Access::NeedsApproval(ApprovalRequestKind::Plan { file, text }),
            // Nothing to approve: the call runs and says why.
            Err(_) => Access::ReadOnly,
        }
    }

    fn summary(&self, _args: &Args) -> String {
        "the plan".into()
    }

    fn execute<'a>(&'a self, _args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            Ok(match read_plan(ctx) {
                Ok((file, _)) => ToolOutput::ok(format!(
                    "The user approved the plan in {}. Carry it out now, step by step.",
                    file.display()
                )),
                Err(why) => ToolOutput::error(why),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{prepared, run_tool, test_context};
    use serde_json::json;

    #[tokio::test]
    async fn the_plan_is_asked_about_only_when_there_is_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = test_context(dir.path());
        let out = run_tool(&ExitPlan, &ctx, json!({})).await;
        assert!(
            out.is_error && out.content.contains("no plan file"),
            "{}",
            out.content
        );
        let file = ctx.workdir.join("plan.md");
        ctx.plan_file = Some(file.clone());
        assert_eq!(
            prepared(&ExitPlan, json!({})).access(&ctx),
            Access::ReadOnly
        );
        let out = run_tool(&ExitPlan, &ctx, json!({})).await;
        assert!(out.content.contains("is empty"), "{}", out.content);
        std::fs::write(&file, "1. do it\n").unwrap();
        assert_eq!(
            prepared(&ExitPlan, json!({})).access(&ctx),
            Access::NeedsApproval(ApprovalRequestKind::Plan {
                file: file.clone(),
                text: "1. do it\n".into()
            })
        );
        // A link at the plan file is not followed.
        std::fs::remove_file(&file).unwrap();
        let elsewhere = ctx.workdir.join("elsewhere.md");
        std::fs::write(&elsewhere, "secret\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        assert_eq!(
            prepared(&ExitPlan, json!({})).access(&ctx),
            Access::ReadOnly
        );
    }
}
