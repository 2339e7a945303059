//! The `grep` tool: searches file contents by regular expression with ripgrep's crates
//! (`grep-regex`, `grep-searcher`, and the shared gitignore-aware walker), skipping
//! binary files, answering `path:line:text`, capped. Each file is opened like
//! `read_file` opens one (`nofollow::open_read`: a regular file, no symlink followed),
//! so a FIFO, a device or a link swapped in mid-walk is skipped, never read; the walk
//! itself follows no links, and secret-looking files are skipped by their real path.
//!
//! It knows nothing of approval policy beyond declaring what it reads.

use std::io;
use std::ops::ControlFlow;
use std::path::Path;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::glob::{
    PathGlob, RootKind, SearchRoot, check_root, place, project_walker, walk, walked,
};
use super::path::{ResolvedPath, display_relative};
use super::{
    Access, SecretFileSearch, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, WorksIn,
    run_blocking_until,
};
use crate::nofollow;
use crate::truncate::truncate_head_tail;

/// Matches returned when the model gives no `max_results`.
const DEFAULT_MAX_RESULTS: usize = 100;
/// Upper bound on `max_results`.
const MAX_RESULTS_CAP: usize = 1000;
/// Characters of a matching line shown.
const MAX_LINE_CHARS: usize = 300;

/// Searches file contents by regex.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

/// The arguments of a `grep` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    pattern: String,
    #[serde(default)]
    path: SearchRoot,
    glob: Option<String>,
    case_insensitive: Option<bool>,
    max_results: Option<u64>,
}

/// What to search for and where, after validation.
struct Query {
    matcher: RegexMatcher,
    glob: Option<PathGlob>,
    max_results: usize,
    /// Whether secret-looking files are searched.
    secret_files: SecretFileSearch,
}

impl TypedTool for Grep {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "grep";
    const DESCRIPTION: &'static str = "Search file contents with a regular expression (Rust regex syntax), skipping \
         gitignored and binary files. Returns matching lines as path:line:text.";

    const PARAMETERS: &'static str = include_str!("schemas/grep.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        args.path.access(ctx)
    }

    fn works_in(&self, args: &Args, ctx: &ToolContext) -> WorksIn {
        args.path.resolve(ctx).works_in()
    }

    fn summary(&self, args: &Args) -> String {
        let pattern = &args.pattern;
        let place = Some(args.path.as_str()).filter(|p| !p.is_empty());
        match (place, args.glob.as_deref()) {
            (Some(path), _) => format!("{pattern} in {path}"),
            (None, Some(glob)) => format!("{pattern} in {glob}"),
            (None, None) => pattern.clone(),
        }
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let query = match query(&args) {
                Ok(query) => Query {
                    secret_files: ctx.limits.secret_files,
                    ..query
                },
                Err(message) => return Ok(ToolOutput::error(message)),
            };
            let root = args.path.resolve(ctx).clone();
            let (workdir, cancel) = (ctx.workdir.clone(), ctx.cancel.clone());
            let max_output = ctx.limits.max_output_bytes;
            let pattern = args.pattern;
            run_blocking_until(&ctx.cancel, move || {
                search(&root, &pattern, &query, &workdir, &cancel).map(|out| ToolOutput {
                    content: truncate_head_tail(&out.content, max_output),
                    ..out
                })
            })
            .await?
        })
    }
}

fn query(args: &Args) -> Result<Query, String> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.case_insensitive == Some(true))
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| {
            format!(
                "invalid regex {:?}: {e}. Escape literal ( ) [ ] {{ }} . * + ? with a backslash.",
                args.pattern
            )
        })?;
    let glob = args.glob.as_deref().map(PathGlob::new).transpose()?;
    let max_results = match args.max_results {
        None => DEFAULT_MAX_RESULTS,
        Some(0) => return Err("max_results must be at least 1".to_string()),
        Some(n) => usize::try_from(n)
            .unwrap_or(MAX_RESULTS_CAP)
            .min(MAX_RESULTS_CAP),
    };
    Ok(Query {
        matcher,
        glob,
        max_results,
        secret_files: SecretFileSearch::Skipped,
    })
}

fn search(
    root: &ResolvedPath,
    pattern: &str,
    query: &Query,
    workdir: &Path,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolFatal> {
    if let Err(output) = check_root(root, RootKind::DirectoryOrFile) {
        return Ok(output);
    }
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();
    let mut out = String::new();
    let mut found = 0usize;
    let mut more = false;
    let mut unsearchable = 0usize;
    let mut skipped_secrets: Vec<String> = Vec::new();
    let unwalkable = walk(&project_walker(&root.real), cancel, |entry| {
        // Links are not followed (their targets are judged where the walk meets them, or
        // not at all), and FIFOs, sockets and devices are never opened.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return ControlFlow::Continue(());
        }
        if query.secret_files == SecretFileSearch::Skipped
            && entry.depth() > 0
            && crate::permissions::is_secret_file(entry.path())
        {
            skipped_secrets.push(display_relative(entry.path(), workdir));
            return ControlFlow::Continue(());
        }
        if let (Some(glob), Ok(relative)) = (&query.glob, entry.path().strip_prefix(&root.real))
            && entry.depth() > 0
            && !glob.is_match(relative)
        {
            return ControlFlow::Continue(());
        }
        // One more than the room left, to know whether more matches exist.
        let mut sink = FileMatches {
            lines: Vec::new(),
            binary: false,
            limit: query.max_results - found + 1,
        };
        let Ok(file) = nofollow::open_read(entry.path()) else {
            unsearchable += 1;
            return ControlFlow::Continue(());
        };
        if searcher
            .search_file(&query.matcher, &file, &mut sink)
            .is_err()
        {
            unsearchable += 1;
            return ControlFlow::Continue(());
        }
        if sink.binary {
            return ControlFlow::Continue(());
        }
        let shown = display_relative(entry.path(), workdir);
        for (line, text) in sink.lines {
            if found == query.max_results {
                more = true;
                break;
            }
            found += 1;
            out.push_str(&format!("{shown}:{line}:{text}\n"));
        }
        if more {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    let unreadable = unwalkable + unsearchable;
    if found == 0 {
        out.push_str(&format!("No matches for {pattern:?} in {}.\n", place(root)));
    }
    if !skipped_secrets.is_empty() {
        let shown: Vec<&str> = skipped_secrets.iter().take(5).map(String::as_str).collect();
        let more_names = if skipped_secrets.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        out.push_str(&format!(
            "[skipped {} file(s) that may hold secrets: {}{more_names}; read_file asks the user before reading one]\n",
            skipped_secrets.len(),
            shown.join(", ")
        ));
    }
    if more {
        out.push_str(&format!(
            "[stopped after {found} matches; more exist: narrow the pattern, path or glob, or \
             raise max_results]\n"
        ));
    }
    walked(out, unreadable)
}

/// Collects one file's matching lines; a file found to be binary is marked and dropped.
struct FileMatches {
    lines: Vec<(u64, String)>,
    binary: bool,
    limit: usize,
}

impl Sink for FileMatches {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let text = String::from_utf8_lossy(mat.bytes());
        let text = text.trim_end_matches(['\n', '\r']);
        let text = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{} [...]", &text[..cut]),
            None => text.to_string(),
        };
        self.lines.push((mat.line_number().unwrap_or(0), text));
        Ok(self.lines.len() < self.limit)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;
    use crate::tools::{assert_errors, prepared, run_tool};
    use serde_json::json;

    use crate::tools::test_tree as tree;

    #[tokio::test]
    async fn finds_lines_skipping_ignored_and_binary_files() {
        let (_d, ctx) = tree(&[
            ("src/a.rs", "fn alpha() {}\nfn beta() {}\n"),
            ("src/b.rs", "// nothing\nfn gamma() {}\r\n"),
            ("target/gen.rs", "fn ignored() {}\n"),
            ("blob.bin", "fn binary()\0\n"),
            (".gitignore", "target/\n"),
        ]);
        let out = run_tool(&Grep, &ctx, json!({"pattern": "fn \\w+\\(\\)"})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            "src/a.rs:1:fn alpha() {}\nsrc/a.rs:2:fn beta() {}\nsrc/b.rs:2:fn gamma() {}\n"
        );
    }

    #[tokio::test]
    async fn glob_path_and_case_filters() {
        let (_d, ctx) = tree(&[
            ("src/a.rs", "Hello\n"),
            ("src/a.md", "hello\n"),
            ("docs/b.md", "HELLO\n"),
        ]);
        let out = run_tool(
            &Grep,
            &ctx,
            json!({"pattern": "hello", "case_insensitive": true, "glob": "*.md"}),
        )
        .await;
        assert_eq!(out.content, "docs/b.md:1:HELLO\nsrc/a.md:1:hello\n");
        let out = run_tool(&Grep, &ctx, json!({"pattern": "hello", "path": "src"})).await;
        assert_eq!(out.content, "src/a.md:1:hello\n");
        let out = run_tool(
            &Grep,
            &ctx,
            json!({"pattern": "Hello", "path": "src/a.rs", "glob": "*.md"}),
        )
        .await;
        assert_eq!(out.content, "src/a.rs:1:Hello\n");
        let out = run_tool(&Grep, &ctx, json!({"pattern": "absent"})).await;
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (false, "No matches for \"absent\" in the project.\n")
        );
    }

    #[tokio::test]
    async fn secret_files_are_skipped_and_named() {
        let (_d, mut ctx) = tree(&[
            (".env", "API_KEY=sk-live-1\n"),
            ("certs/server.pem", "API_KEY in a key\n"),
            ("src/a.rs", "let API_KEY = env();\n"),
        ]);
        let out = run_tool(&Grep, &ctx, json!({"pattern": "API_KEY"})).await;
        assert_eq!(
            out.content,
            "src/a.rs:1:let API_KEY = env();\n[skipped 2 file(s) that may hold secrets: .env, \
             certs/server.pem; read_file asks the user before reading one]\n"
        );
        ctx.limits.secret_files = SecretFileSearch::Searched;
        let out = run_tool(&Grep, &ctx, json!({"pattern": "API_KEY"})).await;
        assert_contains(&out.content, ".env:1:API_KEY=sk-live-1");
    }

    #[tokio::test]
    async fn results_are_capped_with_a_note() {
        let many: String = (1..=50).map(|i| format!("hit {i}\n")).collect();
        let (_d, ctx) = tree(&[("a.txt", &many), ("b.txt", "hit b\n")]);
        let out = run_tool(&Grep, &ctx, json!({"pattern": "hit", "max_results": 3})).await;
        assert_eq!(
            out.content,
            "a.txt:1:hit 1\na.txt:2:hit 2\na.txt:3:hit 3\n[stopped after 3 matches; more exist: \
             narrow the pattern, path or glob, or raise max_results]\n"
        );
        // Exactly at the cap: no note.
        let out = run_tool(&Grep, &ctx, json!({"pattern": "hit b", "max_results": 1})).await;
        assert_eq!(out.content, "b.txt:1:hit b\n");
    }

    #[tokio::test]
    async fn errors_the_model_can_fix() {
        let (_d, ctx) = tree(&[("a.txt", "x\n")]);
        assert_errors(
            &Grep,
            &ctx,
            &[
                (json!({"pattern": "foo("}), "invalid regex"),
                (json!({"pattern": "x", "glob": "a["}), "invalid glob"),
                (
                    json!({"pattern": "x", "max_results": -1}),
                    "field `max_results`: invalid value: integer `-1`",
                ),
                (
                    json!({"pattern": "x", "path": "nope"}),
                    "No such directory: nope",
                ),
                (json!({"glob": "*"}), "missing field `pattern`"),
            ],
        )
        .await;
    }

    #[test]
    fn summary_names_the_pattern_and_the_glob() {
        assert_eq!(
            prepared(&Grep, json!({"pattern": "TODO", "glob": "*.rs"})).summary(),
            "TODO in *.rs"
        );
    }
}
