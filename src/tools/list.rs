//! The `list` tool: a directory's contents as an indented tree (folders end with `/`),
//! gitignore-aware, to a given depth, capped.
//!
//! It shares the walker with `glob` and knows nothing of approval policy beyond
//! declaring reads outside the project.

use std::ops::ControlFlow;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::glob::{RootKind, SearchRoot, check_root, place, project_walker, walk, walked};
use super::path::ResolvedPath;
use super::{
    Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, WorksIn, run_blocking_until,
};

/// Depth when the model gives none.
const DEFAULT_DEPTH: usize = 2;
/// Deepest listing allowed.
const MAX_DEPTH: usize = 10;
/// Entries shown at most.
const MAX_ENTRIES: usize = 400;
/// Entries counted at most after the cap (for the note).
const MAX_COUNTED: usize = 10_000;

/// Lists a directory as a tree.
#[derive(Debug, Clone, Copy, Default)]
pub struct List;

/// The arguments of a `list` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    #[serde(default)]
    path: SearchRoot,
    depth: Option<u64>,
}

impl TypedTool for List {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "list";
    const DESCRIPTION: &'static str = "List a directory as an indented tree, skipping gitignored files; folders end \
         with '/'.";

    const PARAMETERS: &'static str = include_str!("schemas/list.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        args.path.access(ctx)
    }

    fn works_in(&self, args: &Args, ctx: &ToolContext) -> WorksIn {
        args.path.resolve(ctx).works_in()
    }

    fn summary(&self, args: &Args) -> String {
        match args.path.as_str() {
            "" => ".".to_string(),
            path => path.to_string(),
        }
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let root = args.path.resolve(ctx).clone();
            let depth = match args.depth {
                None => DEFAULT_DEPTH,
                Some(d) if (1..=MAX_DEPTH as u64).contains(&d) => d as usize,
                Some(d) => {
                    return Ok(ToolOutput::error(format!(
                        "depth must be between 1 and {MAX_DEPTH}, got {d}"
                    )));
                }
            };
            let cancel = ctx.cancel.clone();
            run_blocking_until(&ctx.cancel, move || list(&root, depth, &cancel)).await?
        })
    }
}

fn list(
    root: &ResolvedPath,
    depth: usize,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolFatal> {
    if let Err(output) = check_root(root, RootKind::Directory) {
        return Ok(output);
    }
    let mut out = String::new();
    let mut shown = 0usize;
    let mut total = 0usize;
    let mut walker = project_walker(&root.real);
    walker.max_depth(Some(depth));
    let unreadable = walk(&walker, cancel, |entry| {
        if entry.depth() == 0 {
            return ControlFlow::Continue(());
        }
        total += 1;
        if shown < MAX_ENTRIES {
            shown += 1;
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let indent = "  ".repeat(entry.depth() - 1);
            let name = entry.file_name().to_string_lossy();
            out.push_str(&format!(
                "{indent}{name}{}\n",
                if is_dir { "/" } else { "" }
            ));
        } else if total >= MAX_COUNTED {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    if total == 0 {
        return Ok(ToolOutput::ok(format!(
            "{} is empty (or all of it is ignored).\n",
            place(root)
        )));
    }
    if total > shown {
        let counted = if total >= MAX_COUNTED {
            format!("more than {MAX_COUNTED}")
        } else {
            total.to_string()
        };
        out.push_str(&format!(
            "[{shown} of {counted} entries shown; list a subfolder or use a smaller depth]\n"
        ));
    }
    walked(out, unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{assert_capped, assert_errors, prepared, run_tool, test_files};
    use serde_json::json;

    use std::fs;

    #[tokio::test]
    async fn lists_a_tree_to_the_default_depth_skipping_ignored() {
        let (_d, ctx) = test_files(&[
            "Cargo.toml",
            "src/lib.rs",
            "src/tools/mod.rs",
            "target/debug/x",
            ".git/HEAD",
            ".gitignore",
        ]);
        fs::write(ctx.workdir.join(".gitignore"), "/target\n").unwrap();
        let out = run_tool(&List, &ctx, json!({})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            ".gitignore\nCargo.toml\nsrc/\n  lib.rs\n  tools/\n"
        );
        let out = run_tool(&List, &ctx, json!({"path": "src", "depth": 5})).await;
        assert_eq!(out.content, "lib.rs\ntools/\n  mod.rs\n");
    }

    #[tokio::test]
    async fn caps_entries_with_a_note() {
        let names: Vec<String> = (0..MAX_ENTRIES + 3).map(|i| format!("d/f{i:04}")).collect();
        let (_d, ctx) = test_files(&names);
        let out = run_tool(&List, &ctx, json!({"depth": 2})).await;
        let note = format!(
            "[{MAX_ENTRIES} of {} entries shown; list a subfolder or use a smaller depth]",
            MAX_ENTRIES + 4
        );
        assert_capped(&out.content, MAX_ENTRIES, "d/", &note);
    }

    #[tokio::test]
    async fn errors_and_empty_directories() {
        let (_d, ctx) = test_files(&["file.txt"]);
        fs::create_dir(ctx.workdir.join("empty")).unwrap();
        let out = run_tool(&List, &ctx, json!({"path": "empty"})).await;
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (false, "empty is empty (or all of it is ignored).\n")
        );
        assert_errors(
            &List,
            &ctx,
            &[
                (json!({"path": "file.txt"}), "file.txt is not a directory"),
                (json!({"depth": 0}), "between 1 and 10"),
                (
                    json!({"depth": "deep"}),
                    "field `depth` must be an integer, got a string",
                ),
            ],
        )
        .await;
    }

    #[test]
    fn summary_is_the_folder() {
        assert_eq!(prepared(&List, json!({})).summary(), ".");
    }
}
