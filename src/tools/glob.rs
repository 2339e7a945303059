//! The `glob` tool: finds files by glob pattern, gitignore-aware, sorted by path, capped.
//!
//! Also owns what `list` and `grep` share with it: the `path` argument (`SearchRoot`),
//! the project walker configuration
//! (`project_walker`: `.gitignore`/`.ignore` respected even outside a git repository,
//! hidden files included, `.git` skipped, and `walk`, which runs it, counting unreadable
//! paths, until cancelled) and the glob semantics (`PathGlob`: a pattern
//! without `/` matches file names at any depth). It knows nothing of approval policy
//! beyond declaring reads outside the project.

use std::ops::ControlFlow;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, WalkBuilder};

pub(crate) use crate::project_walk::project_walker;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::path::{PathArg, ResolvedPath, display_relative};
use super::{
    Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, WorksIn, run_blocking_until,
};
use crate::nofollow::{self, FileKind};

/// Paths returned at most.
const MAX_RESULTS: usize = 200;

/// Finds files by glob pattern.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

/// The arguments of a `glob` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    pattern: String,
    #[serde(default)]
    path: SearchRoot,
}

impl TypedTool for Glob {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "glob";
    const DESCRIPTION: &'static str = "Find files by glob pattern, skipping gitignored files. A pattern without '/' \
         matches file names at any depth (\"*.rs\"); with '/', it matches the path from \
         the search directory (\"src/**/*.rs\"). Returns matching paths sorted.";

    const PARAMETERS: &'static str = include_str!("schemas/glob.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        args.path.access(ctx)
    }

    fn works_in(&self, args: &Args, ctx: &ToolContext) -> WorksIn {
        args.path.resolve(ctx).works_in()
    }

    fn summary(&self, args: &Args) -> String {
        let pattern = &args.pattern;
        match args.path.as_str() {
            "" | "." => pattern.clone(),
            path => format!("{pattern} in {path}"),
        }
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let root = args.path.resolve(ctx).clone();
            let (workdir, cancel) = (ctx.workdir.clone(), ctx.cancel.clone());
            run_blocking_until(&ctx.cancel, move || {
                find(&root, &args.pattern, &workdir, &cancel)
            })
            .await?
        })
    }
}

/// Where a search starts: the optional `path` argument of `glob`, `grep` and `list`,
/// relative to the project (or absolute); absent or empty, the project root. Resolved
/// once per call (symlinks followed), and searched at the real path.
#[derive(Debug, Default)]
pub(crate) struct SearchRoot(PathArg);

impl<'de> Deserialize<'de> for SearchRoot {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<String>::deserialize(d)
            .map(|path| SearchRoot(PathArg::new(path.unwrap_or_default())))
    }
}

impl SearchRoot {
    /// The path as given; empty when absent.
    pub(crate) fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The path resolved against the project (the same resolution every time).
    pub(crate) fn resolve(&self, ctx: &ToolContext) -> &ResolvedPath {
        self.0.resolve(&ctx.workdir)
    }

    /// Reading it: inside the project, or asking first.
    pub(crate) fn access(&self, ctx: &ToolContext) -> Access {
        self.resolve(ctx).read_access()
    }
}

/// A glob as the tools understand it: without `/` it matches the file name at any depth,
/// with `/` the whole path relative to the search root (`*` stays within one folder).
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl PathGlob {
    /// Compiles `pattern`; the error is a message for the model.
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let pattern = pattern.trim();
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        if pattern.is_empty() {
            return Err("the glob pattern is empty".to_string());
        }
        if pattern.starts_with('/') || pattern.split('/').any(|part| part == "..") {
            return Err(format!(
                "the glob pattern {pattern:?} must be relative to the search directory; \
                 put the directory in `path` instead"
            ));
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("invalid glob pattern {pattern:?}: {e}"))?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            name_only: !pattern.contains('/'),
        })
    }

    /// Whether `relative` (a path below the search root) matches.
    pub(crate) fn is_match(&self, relative: &Path) -> bool {
        if self.name_only {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Walks `walker`, handing each readable entry to `visit` until it answers
/// `ControlFlow::Break`; stops with `Interrupted` when `cancel` fires. Returns how many
/// entries could not be read.
pub(crate) fn walk(
    walker: &WalkBuilder,
    cancel: &CancellationToken,
    mut visit: impl FnMut(DirEntry) -> ControlFlow<()>,
) -> Result<usize, ToolFatal> {
    let mut unreadable = 0usize;
    for entry in walker.build() {
        if cancel.is_cancelled() {
            return Err(ToolFatal::Interrupted);
        }
        match entry {
            Ok(entry) => {
                if visit(entry).is_break() {
                    break;
                }
            }
            Err(_) => unreadable += 1,
        }
    }
    Ok(unreadable)
}

/// A walking tool's answer: `out`, closed by a note for the paths the walk could not
/// read (nothing when there were none).
pub(crate) fn walked(mut out: String, unreadable: usize) -> Result<ToolOutput, ToolFatal> {
    if unreadable > 0 {
        out.push_str(&format!("[{unreadable} paths could not be read]\n"));
    }
    Ok(ToolOutput::ok(out))
}

/// What a search root may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RootKind {
    /// A directory (glob, list).
    Directory,
    /// A directory or one file (grep).
    DirectoryOrFile,
}

/// Checks that a search root exists and is what `kind` allows (looked at without
/// following links: the real path has none).
pub(crate) fn check_root(root: &ResolvedPath, kind: RootKind) -> Result<(), ToolOutput> {
    let shown = root.shown();
    match nofollow::kind_of(&root.real) {
        Ok(Some(FileKind::Directory)) => Ok(()),
        Ok(Some(FileKind::Regular)) if kind == RootKind::DirectoryOrFile => Ok(()),
        Ok(Some(FileKind::Regular)) => {
            Err(ToolOutput::error(format!("{shown} is not a directory")))
        }
        Ok(Some(other)) => Err(ToolOutput::error(format!(
            "{shown} is {}, not a directory or a regular file",
            other.describe()
        ))),
        Ok(None) => Err(ToolOutput::error(format!("No such directory: {shown}"))),
        Err(e) => Err(ToolOutput::error(format!("Cannot read {shown}: {e}"))),
    }
}

/// How to name a search root in messages.
pub(crate) fn place(root: &ResolvedPath) -> &str {
    if root.display == "." {
        "the project"
    } else {
        &root.display
    }
}

fn find(
    root: &ResolvedPath,
    pattern: &str,
    workdir: &Path,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolFatal> {
    let glob = match PathGlob::new(pattern) {
        Ok(glob) => glob,
        Err(message) => return Ok(ToolOutput::error(message)),
    };
    if let Err(output) = check_root(root, RootKind::Directory) {
        return Ok(output);
    }
    let mut found = Vec::new();
    let unreadable = walk(&project_walker(&root.real), cancel, |entry| {
        let is_file = entry.file_type().is_some_and(|t| !t.is_dir());
        if let Ok(relative) = entry.path().strip_prefix(&root.real)
            && is_file
            && glob.is_match(relative)
        {
            found.push(display_relative(entry.path(), workdir));
        }
        ControlFlow::Continue(())
    })?;
    found.sort();
    let mut out = String::new();
    if found.is_empty() {
        out.push_str(&format!("No files match {pattern:?} in {}.\n", place(root)));
    }
    for path in found.iter().take(MAX_RESULTS) {
        out.push_str(path);
        out.push('\n');
    }
    if found.len() > MAX_RESULTS {
        out.push_str(&format!(
            "[{MAX_RESULTS} of {} matches shown; narrow the pattern or the path]\n",
            found.len()
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
    async fn name_patterns_match_at_any_depth_sorted_and_gitignore_aware() {
        let (_d, ctx) = test_files(&[
            "src/main.rs",
            "src/a/b.rs",
            "src.rs",
            "target/debug/gen.rs",
            ".github/x.rs",
            ".git/hooks/h.rs",
            "notes.md",
        ]);
        fs::write(ctx.workdir.join(".gitignore"), "target/\n").unwrap();
        let out = run_tool(&Glob, &ctx, json!({"pattern": "*.rs"})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            ".github/x.rs\nsrc.rs\nsrc/a/b.rs\nsrc/main.rs\n"
        );
    }

    #[tokio::test]
    async fn path_patterns_and_search_directory() {
        let (_d, ctx) = test_files(&["src/main.rs", "src/a/b.rs", "tests/t.rs"]);
        let out = run_tool(&Glob, &ctx, json!({"pattern": "src/*.rs"})).await;
        assert_eq!(out.content, "src/main.rs\n");
        let out = run_tool(&Glob, &ctx, json!({"pattern": "src/**/*.rs"})).await;
        assert_eq!(out.content, "src/a/b.rs\nsrc/main.rs\n");
        // Relative to `path`, displayed relative to the project.
        let out = run_tool(&Glob, &ctx, json!({"pattern": "a/*.rs", "path": "src"})).await;
        assert_eq!(out.content, "src/a/b.rs\n");
        let out = run_tool(&Glob, &ctx, json!({"pattern": "*.{md,txt}"})).await;
        assert_eq!(
            out.content,
            "No files match \"*.{md,txt}\" in the project.\n"
        );
    }

    #[tokio::test]
    async fn results_are_capped_with_a_note() {
        let names: Vec<String> = (0..MAX_RESULTS + 5)
            .map(|i| format!("f{i:04}.txt"))
            .collect();
        let (_d, ctx) = test_files(&names);
        let out = run_tool(&Glob, &ctx, json!({"pattern": "*.txt"})).await;
        let note = format!(
            "[{MAX_RESULTS} of {} matches shown; narrow the pattern or the path]",
            MAX_RESULTS + 5
        );
        assert_capped(&out.content, MAX_RESULTS, "f0000.txt", &note);
    }

    #[tokio::test]
    async fn errors_the_model_can_fix() {
        let (_d, ctx) = test_files(&["a.txt"]);
        assert_errors(
            &Glob,
            &ctx,
            &[
                (
                    json!({"pattern": "a[", "path": "."}),
                    "invalid glob pattern",
                ),
                (json!({"pattern": "/etc/*"}), "put the directory in `path`"),
                (
                    json!({"pattern": "*", "path": "missing"}),
                    "No such directory: missing",
                ),
                (json!({"path": "."}), "missing field `pattern`"),
            ],
        )
        .await;
    }

    #[test]
    fn summary_names_the_pattern_and_the_folder() {
        assert_eq!(
            prepared(&Glob, json!({"pattern": "*.rs", "path": "src"})).summary(),
            "*.rs in src"
        );
    }
}
