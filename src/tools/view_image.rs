//! The `view_image` tool: an image file (PNG, JPEG, GIF or WebP, told by its first
//! bytes) shown to the model, judged exactly as `read_file` is (the path resolved
//! through every symlink, then read without following any, regular files only, the
//! same `read(…)` rules and secret-file asks). The result's text names the image; the
//! image itself goes back in [`ToolOutput::images`], which the agent sends as a user
//! message after the call's results. It is not offered when the model takes no images.
//! It knows files and images; nothing of the wire or the approval policy.

use serde::Deserialize;

use super::path::{PathArg, ResolvedPath};
use super::{Access, ToolContext, ToolFuture, ToolOutput, TypedTool, WorksIn, run_blocking_until};

/// Shows an image file to the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewImage;

#[derive(Debug, Deserialize)]
pub struct Args {
    path: PathArg,
}

impl TypedTool for ViewImage {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;
    /// An image (about 1,100 tokens) would crowd a small window out.
    const MIN_WINDOW: Option<u64> = Some(crate::tools::ROOMY_WINDOW);

    const NAME: &'static str = "view_image";
    const DESCRIPTION: &'static str = "Look at an image file in the project (a screenshot, a plot): PNG, JPEG, GIF or \
         WebP. The image is shown to you right after this call's result.";

    const PARAMETERS: &'static str = include_str!("schemas/view_image.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        args.path.resolve(&ctx.workdir).read_access()
    }

    fn works_in(&self, args: &Args, ctx: &ToolContext) -> WorksIn {
        args.path.resolve(&ctx.workdir).works_in()
    }

    fn summary(&self, args: &Args) -> String {
        args.path.as_str().to_string()
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        let resolved = args.path.resolve(&ctx.workdir).clone();
        let max = ctx.limits.max_image_bytes;
        Box::pin(run_blocking_until(&ctx.cancel, move || {
            view(&resolved, max)
        }))
    }
}

fn view(path: &ResolvedPath, max: u64) -> ToolOutput {
    let shown = path.shown();
    match crate::images::read_file(&path.real, max) {
        Ok(image) => {
            let size = image.bytes.len();
            ToolOutput {
                images: vec![image],
                ..ToolOutput::ok(format!(
                    "{shown}: an image of {size} bytes, shown to you in the next message"
                ))
            }
        }
        Err(e) => ToolOutput::error(format!("Cannot view {shown}: {e}")),
    }
}
