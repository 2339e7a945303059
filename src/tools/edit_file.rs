//! The `edit_file` tool: replaces an exact string in a file (once, or everywhere with
//! `replace_all`), writes atomically and returns a unified diff.
//!
//! When the string is not found, the error names the most similar region of the file
//! (line numbers, its text, and how it differs) so the model can fix whitespace or
//! indentation; when it is found several times, it says how many and where. Files over
//! [`MAX_EDIT_BYTES`] are refused (before and after the edit), so one edit holds a few
//! copies of at most that much. Reading, writing and diffing are shared with
//! `write_file`, reading and writing through the editor when the session has one
//! (`files.rs`); this module knows nothing of approval policy beyond declaring the edit.

use std::collections::HashMap;

use serde::Deserialize;
use similar::TextDiff;

use super::files::{AccessError, read_judged, write_judged};
use super::path::{PathArg, ResolvedPath};
use super::write_file::{Existing, file_diff, read_existing};
use super::{
    Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, WorksIn, run_blocking_until,
};
use crate::nofollow::{FileError, Parents};
use crate::protocol::{FileChange, FileLocation};
use crate::truncate::truncate_head_tail;

/// The largest file `edit_file` edits, before or after the edit (8 MiB): an edit holds
/// the old text, the new text and their diff at once. `write_file` does not diff
/// files over it either.
pub const MAX_EDIT_BYTES: u64 = 8 * 1024 * 1024;

/// Lines of a closest-match region shown to the model.
const MAX_REGION_LINES: usize = 40;
/// Characters of one region line shown to the model.
const MAX_REGION_LINE_CHARS: usize = 200;
/// Below this similarity, nothing in the file is called a match.
const MIN_SIMILARITY: f64 = 0.3;
/// Match lines listed when a string occurs several times.
const MAX_LISTED_MATCHES: usize = 20;

/// Replaces exact text in a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

/// The arguments of an `edit_file` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    path: PathArg,
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
}

impl TypedTool for EditFile {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "edit_file";
    const DESCRIPTION: &'static str = "Replace exact text in an existing file. old_string must match the file exactly \
         (whitespace and indentation included, no line-number prefixes) and occur once, \
         unless replace_all is true; include enough surrounding lines to make it unique. \
         Returns a unified diff.";

    const PARAMETERS: &'static str = include_str!("schemas/edit_file.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        let path = args.path.resolve(&ctx.workdir);
        let diff = read_text(&path.real).ok().and_then(|old| {
            let new = apply_edit(&old, &args.old_string, &args.new_string, mode(args)).ok()?;
            let diff = file_diff(&path.real_display, Some(&old), &new.text);
            Some(truncate_head_tail(&diff.text, ctx.limits.max_output_bytes))
        });
        path.edit_access(diff)
    }

    fn summary(&self, args: &Args) -> String {
        args.path.as_str().to_string()
    }

    fn works_in(&self, args: &Args, ctx: &ToolContext) -> WorksIn {
        args.path.resolve(&ctx.workdir).works_in()
    }

    fn locations(&self, args: &Args, ctx: &ToolContext) -> Vec<FileLocation> {
        vec![FileLocation {
            path: args.path.resolve(&ctx.workdir).real.clone(),
            line: None,
        }]
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        let path = args.path.resolve(&ctx.workdir).clone();
        Box::pin(edit(path, args, ctx))
    }
}

/// One occurrence or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Once,
    All,
}

fn mode(args: &Args) -> Mode {
    if args.replace_all == Some(true) {
        Mode::All
    } else {
        Mode::Once
    }
}

/// Why a file's text could not be had for an edit.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("{0}")]
    File(#[from] FileError),
    #[error("{0} bytes")]
    TooLarge(u64),
    #[error("not UTF-8 text")]
    NotText,
}

/// The text of the regular file `real`, read without following symlinks, up to
/// [`MAX_EDIT_BYTES`].
fn read_text(real: &std::path::Path) -> Result<String, ReadError> {
    match read_existing(real, MAX_EDIT_BYTES)? {
        Existing::Absent => Err(FileError::NotFound.into()),
        Existing::TooLarge(size) => Err(ReadError::TooLarge(size)),
        Existing::Bytes(bytes) => String::from_utf8(bytes).map_err(|_| ReadError::NotText),
    }
}

/// The message for a file over [`MAX_EDIT_BYTES`], before or after the edit.
fn too_large(shown: &str, size: u64, when: &str) -> String {
    format!(
        "{shown} {when} {size} bytes, over edit_file's limit of {MAX_EDIT_BYTES} bytes (8 MiB). \
         Change it with a command through bash instead (sed, a short script), or split \
         the file."
    )
}

/// Reads the file (through the editor when the session has one), applies the edit,
/// writes it back the same way and reports the diff.
async fn edit(path: ResolvedPath, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
    let shown = path.shown();
    let old = match read_judged(ctx, &path.real, MAX_EDIT_BYTES).await? {
        Ok(Existing::Bytes(bytes)) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                return Ok(ToolOutput::error(format!(
                    "{shown} is not UTF-8 text; edit_file only edits text files"
                )));
            }
        },
        Ok(Existing::Absent) | Err(AccessError::File(FileError::NotFound)) => {
            return Ok(ToolOutput::error(format!(
                "File not found: {shown}. To create a file, use write_file."
            )));
        }
        Ok(Existing::TooLarge(size)) => {
            return Ok(ToolOutput::error(too_large(&shown, size, "is")));
        }
        Err(e) => return Ok(ToolOutput::error(format!("Cannot read {shown}: {e}"))),
    };
    let (old, edited) = run_blocking_until(&ctx.cancel, move || {
        let edited = apply_edit(&old, &args.old_string, &args.new_string, mode(&args));
        (old, edited)
    })
    .await?;
    let edited = match edited {
        Ok(edited) => edited,
        Err(EditError::TooLarge { size }) => {
            return Ok(ToolOutput::error(too_large(&shown, size, "would be")));
        }
        Err(e) => return Ok(ToolOutput::error(e.message(&shown))),
    };
    if let Err(e) = write_judged(ctx, &path.real, &edited.text, Parents::Existing).await? {
        return Ok(ToolOutput::error(format!("Cannot write {shown}: {e}")));
    }
    let max_output = ctx.limits.max_output_bytes;
    run_blocking_until(&ctx.cancel, move || {
        report(&path, &old, &edited, max_output)
    })
    .await
}

/// What the model and the frontends are told of a done edit.
fn report(path: &ResolvedPath, old: &str, edited: &Edited, max_output: usize) -> ToolOutput {
    let shown = path.shown();
    let diff = file_diff(&path.real_display, Some(old), &edited.text);
    let diff_text = truncate_head_tail(&diff.text, max_output.saturating_sub(200));
    let occurrences = if edited.count == 1 {
        "1 occurrence".to_string()
    } else {
        format!("{} occurrences", edited.count)
    };
    let crlf = if edited.crlf {
        " (matched with CRLF line endings)"
    } else {
        ""
    };
    let content = format!(
        "Edited {shown}: replaced {occurrences}{crlf}, +{} -{} lines.\n{diff_text}",
        diff.added, diff.removed
    );
    ToolOutput::ok(content)
        .with_diff(diff_text)
        .with_change(FileChange::within_cap(
            path.real.clone(),
            Some(old),
            &edited.text,
        ))
}

/// The file's new text after a successful edit.
#[derive(Debug)]
struct Edited {
    text: String,
    count: usize,
    /// The match needed the file's CRLF line endings.
    crlf: bool,
}

/// Why an edit could not be applied.
#[derive(Debug, PartialEq, thiserror::Error)]
enum EditError {
    #[error("old_string is empty")]
    EmptyOld,
    #[error("old_string and new_string are identical")]
    NoChange,
    #[error("old_string not found")]
    NotFound {
        closest: Option<Closest>,
        has_line_numbers: bool,
    },
    #[error("old_string found {count} times")]
    Ambiguous { count: usize, lines: Vec<usize> },
    #[error("the edited file would be {size} bytes")]
    TooLarge { size: u64 },
}

impl EditError {
    /// The message for the model.
    fn message(&self, shown: &str) -> String {
        match self {
            EditError::EmptyOld => "old_string is empty. Give the exact text to replace; \
                 to create or overwrite a whole file, use write_file."
                .to_string(),
            EditError::NoChange => {
                "old_string and new_string are identical; nothing to change.".to_string()
            }
            EditError::TooLarge { size } => too_large(shown, *size, "would be"),
            EditError::Ambiguous { count, lines } => {
                let listed: Vec<String> = lines.iter().map(usize::to_string).collect();
                let more = if *count > lines.len() { ", ..." } else { "" };
                format!(
                    "old_string occurs {count} times in {shown} (at lines {}{more}). Include \
                     more surrounding lines to make it unique, or set replace_all to true to \
                     replace every occurrence.",
                    listed.join(", ")
                )
            }
            EditError::NotFound {
                closest,
                has_line_numbers,
            } => {
                let mut msg = format!("old_string was not found in {shown}.");
                if *has_line_numbers {
                    msg.push_str(
                        " It seems to include line-number prefixes from read_file; leave \
                         them out.",
                    );
                }
                match closest {
                    Some(closest) => msg.push_str(&closest.describe()),
                    None => msg.push_str(
                        " Nothing in the file resembles it; read the file to see its \
                         current content.",
                    ),
                }
                msg
            }
        }
    }
}

/// The region of the file most similar to a string that was not found.
#[derive(Debug, Clone, PartialEq)]
struct Closest {
    /// 1-based first and last line of the region.
    first_line: usize,
    last_line: usize,
    /// 0.0 to 1.0.
    similarity: f64,
    /// The region equals old_string once all whitespace is ignored.
    whitespace_only: bool,
    /// The region as numbered lines (capped).
    region: String,
    /// A line diff from old_string to the region (- yours, + file), when short.
    diff: Option<String>,
}

impl Closest {
    fn describe(&self) -> String {
        let how = if self.whitespace_only {
            "it differs only in whitespace or indentation".to_string()
        } else {
            format!("{:.0}% similar", self.similarity * 100.0)
        };
        let lines = if self.first_line == self.last_line {
            format!("line {}", self.first_line)
        } else {
            format!("lines {}-{}", self.first_line, self.last_line)
        };
        let mut out = format!(" The closest match is at {lines} ({how}):\n{}", self.region);
        if let Some(diff) = &self.diff {
            out.push_str("Differences (- your old_string, + the file):\n");
            out.push_str(diff);
        }
        out.push_str("Copy the text exactly as it is in the file and try again.");
        out
    }
}

fn apply_edit(content: &str, old: &str, new: &str, mode: Mode) -> Result<Edited, EditError> {
    if old.is_empty() {
        return Err(EditError::EmptyOld);
    }
    if old == new {
        return Err(EditError::NoChange);
    }
    let mut attempt = replace(content, old, new, mode, false);
    if matches!(attempt, Err(EditError::NotFound { .. }))
        && content.contains("\r\n")
        && old.contains('\n')
        && !old.contains("\r\n")
    {
        let (old_crlf, new_crlf) = (old.replace('\n', "\r\n"), new.replace('\n', "\r\n"));
        if content.contains(&old_crlf) {
            attempt = replace(content, &old_crlf, &new_crlf, mode, true);
        }
    }
    match attempt {
        Err(EditError::NotFound { .. }) => Err(EditError::NotFound {
            closest: closest_region(content, old),
            has_line_numbers: has_line_number_prefixes(old),
        }),
        other => other,
    }
}

fn replace(
    content: &str,
    old: &str,
    new: &str,
    mode: Mode,
    crlf: bool,
) -> Result<Edited, EditError> {
    let offsets: Vec<usize> = content.match_indices(old).map(|(at, _)| at).collect();
    match (offsets.len(), mode) {
        (0, _) => Err(EditError::NotFound {
            closest: None,
            has_line_numbers: false,
        }),
        (count @ 1, _) | (count, Mode::All) => {
            // Known before the new text is built: a small file with many occurrences
            // could otherwise grow without bound.
            let size = (content.len() as u64)
                .saturating_add((new.len() as u64).saturating_mul(count as u64))
                .saturating_sub((old.len() as u64).saturating_mul(count as u64));
            if size > MAX_EDIT_BYTES {
                return Err(EditError::TooLarge { size });
            }
            Ok(Edited {
                text: content.replace(old, new),
                count,
                crlf,
            })
        }
        (count, Mode::Once) => Err(EditError::Ambiguous {
            count,
            lines: line_numbers(content, &offsets[..count.min(MAX_LISTED_MATCHES)]),
        }),
    }
}

/// 1-based line numbers of sorted byte offsets.
fn line_numbers(content: &str, offsets: &[usize]) -> Vec<usize> {
    let mut lines = Vec::with_capacity(offsets.len());
    let (mut line, mut pos) = (1, 0);
    for &offset in offsets {
        line += content.as_bytes()[pos..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        pos = offset;
        lines.push(line);
    }
    lines
}

/// True when every non-empty line starts like read_file output (`   12\t`).
fn has_line_number_prefixes(old: &str) -> bool {
    let mut lines = old.lines().filter(|l| !l.trim().is_empty()).peekable();
    lines.peek().is_some()
        && lines.all(|l| {
            let rest = l.trim_start();
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            digits > 0 && rest[digits..].starts_with('\t')
        })
}

/// Character bigrams of a line with whitespace removed (plus one for the line start, so
/// one-character lines count too).
fn bigrams(line: &str) -> impl Iterator<Item = u64> + '_ {
    let mut prev = '\n';
    line.chars().filter(|c| !c.is_whitespace()).map(move |c| {
        let key = (u64::from(prev) << 32) | u64::from(c);
        prev = c;
        key
    })
}

/// Finds the window of lines (as many as old_string has) with the highest Dice
/// similarity of whitespace-free character bigrams: one rolling pass over the file.
fn closest_region(content: &str, old: &str) -> Option<Closest> {
    let file_lines: Vec<&str> = content.lines().collect();
    let old_lines: Vec<&str> = old.lines().collect();
    if file_lines.is_empty() || old_lines.is_empty() {
        return None;
    }
    let width = old_lines.len().min(file_lines.len());
    let mut wanted: HashMap<u64, u32> = HashMap::new();
    let mut wanted_total = 0u64;
    for key in old_lines.iter().flat_map(|l| bigrams(l)) {
        *wanted.entry(key).or_default() += 1;
        wanted_total += 1;
    }
    let mut window: HashMap<u64, u32> = HashMap::new();
    let (mut window_total, mut common) = (0u64, 0u64);
    let mut best: Option<(f64, usize)> = None;
    for end in 0..file_lines.len() {
        for key in bigrams(file_lines[end]) {
            let have = window.entry(key).or_default();
            if *have < wanted.get(&key).copied().unwrap_or(0) {
                common += 1;
            }
            *have += 1;
            window_total += 1;
        }
        if end >= width {
            for key in bigrams(file_lines[end - width]) {
                let have = window.entry(key).or_default();
                if *have <= wanted.get(&key).copied().unwrap_or(0) {
                    common -= 1;
                }
                *have -= 1;
                window_total -= 1;
            }
        }
        if end + 1 >= width {
            let total = window_total + wanted_total;
            let score = if total == 0 {
                0.0
            } else {
                2.0 * common as f64 / total as f64
            };
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, end + 1 - width));
            }
        }
    }
    let (similarity, start) = best?;
    if similarity < MIN_SIMILARITY {
        return None;
    }
    let region_lines = &file_lines[start..start + width];
    let squash = |lines: &[&str]| -> String {
        lines
            .iter()
            .flat_map(|l| l.chars())
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    let region_text = region_lines.join("\n");
    let mut region = String::new();
    for (i, line) in region_lines.iter().take(MAX_REGION_LINES).enumerate() {
        let shown = match line.char_indices().nth(MAX_REGION_LINE_CHARS) {
            Some((cut, _)) => format!("{} [...]", &line[..cut]),
            None => line.to_string(),
        };
        region.push_str(&format!("{:>6}\t{shown}\n", start + i + 1));
    }
    if region_lines.len() > MAX_REGION_LINES {
        region.push_str(&format!(
            "[... {} more lines]\n",
            region_lines.len() - MAX_REGION_LINES
        ));
    }
    let old_text = old_lines.join("\n");
    let diff = (width <= MAX_REGION_LINES && old_text.len() <= 8 * 1024).then(|| {
        TextDiff::from_lines(format!("{old_text}\n"), format!("{region_text}\n"))
            .unified_diff()
            .context_radius(1)
            .to_string()
    });
    Some(Closest {
        first_line: start + 1,
        last_line: start + width,
        similarity,
        whitespace_only: squash(region_lines) == squash(&old_lines),
        region,
        diff: diff.filter(|d| !d.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ApprovalRequestKind, Location};
    use crate::test_support::assert_contains;
    use crate::tools::{prepared, run_tool, test_context};
    use serde_json::json;
    use std::fs;

    const SOURCE: &str = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n\nfn other() {\n    let x = 1;\n}\n";

    /// Replaces `old` by `new` in `path`.
    async fn edit(ctx: &ToolContext, path: &str, old: &str, new: &str) -> ToolOutput {
        run_tool(
            &EditFile,
            ctx,
            json!({"path": path, "old_string": old, "new_string": new}),
        )
        .await
    }

    fn setup() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("main.rs"), SOURCE).unwrap();
        let ctx = test_context(dir.path());
        (dir, ctx)
    }

    fn file(ctx: &ToolContext) -> String {
        fs::read_to_string(ctx.workdir.join("main.rs")).unwrap()
    }

    #[tokio::test]
    async fn replaces_a_unique_match_and_returns_a_diff() {
        let (_d, ctx) = setup();
        let out = edit(&ctx, "main.rs", "println!(\"{x}\");", "dbg!(x);").await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(file(&ctx), SOURCE.replace("println!(\"{x}\");", "dbg!(x);"));
        let diff = out.diff.clone().unwrap();
        assert!(
            diff.starts_with("--- a/main.rs\n+++ b/main.rs\n@@ -1,6 +1,6 @@\n"),
            "{diff}"
        );
        assert_contains(&diff, "-    println!(\"{x}\");\n+    dbg!(x);\n");
        assert_eq!(
            out.content,
            format!("Edited main.rs: replaced 1 occurrence, +1 -1 lines.\n{diff}")
        );
    }

    #[tokio::test]
    async fn several_matches_need_replace_all() {
        let (_d, ctx) = setup();
        let args =
            json!({"path": "main.rs", "old_string": "let x = 1;", "new_string": "let x = 2;"});
        let out = run_tool(&EditFile, &ctx, args.clone()).await;
        assert!(out.is_error);
        assert_contains(&out.content, "occurs 2 times in main.rs (at lines 2, 7)");
        assert_eq!(file(&ctx), SOURCE);
        let mut all = args;
        all["replace_all"] = json!(true);
        let out = run_tool(&EditFile, &ctx, all).await;
        assert!(
            out.content
                .starts_with("Edited main.rs: replaced 2 occurrences, +2 -2 lines.")
        );
        assert_eq!(file(&ctx).matches("let x = 2;").count(), 2);
    }

    #[tokio::test]
    async fn not_found_names_the_closest_match_with_whitespace_hint() {
        let (_d, ctx) = setup();
        let out = edit(&ctx, "main.rs", "fn other() {\n  let x = 1;\n}", "x").await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with(
                "old_string was not found in main.rs. The closest match is at lines 6-8 \
                 (it differs only in whitespace or indentation):\n     6\tfn other() {\n     7\t    let x = 1;\n"
            ),
            "{}",
            out.content
        );
        assert_contains(&out.content, "-  let x = 1;\n+    let x = 1;\n");
        assert_eq!(file(&ctx), SOURCE);
    }

    #[tokio::test]
    async fn not_found_with_a_typo_gives_similarity_and_line() {
        let (_d, ctx) = setup();
        let out = edit(&ctx, "main.rs", "    printn!(\"{x}\");", "x").await;
        assert_contains(&out.content, "The closest match is at line 3 (");
        assert_contains(&out.content, "% similar");
        let out = edit(&ctx, "main.rs", "zzzz qqqq", "x").await;
        assert_contains(&out.content, "Nothing in the file resembles it");
    }

    #[tokio::test]
    async fn line_number_prefixes_are_pointed_out() {
        let (_d, ctx) = setup();
        let out = edit(
            &ctx,
            "main.rs",
            "     2\t    let x = 1;\n     3\t    println!(\"{x}\");",
            "x",
        )
        .await;
        assert_contains(&out.content, "line-number prefixes");
    }

    #[tokio::test]
    async fn crlf_files_match_lf_old_strings() {
        let (_d, ctx) = setup();
        fs::write(ctx.workdir.join("main.rs"), "a\r\nb\r\nc\r\n").unwrap();
        let out = edit(&ctx, "main.rs", "a\nb", "x\ny").await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(file(&ctx), "x\r\ny\r\nc\r\n");
    }

    #[tokio::test]
    async fn errors_the_model_can_fix() {
        let (_d, ctx) = setup();
        let out = run_tool(
            &EditFile,
            &ctx,
            json!({"path": "main.rs", "old_string": "x"}),
        )
        .await;
        assert_contains(&out.content, "missing field `new_string`");
        let out = edit(&ctx, "main.rs", "", "x").await;
        assert!(out.content.starts_with("old_string is empty"));
        let out = edit(&ctx, "main.rs", "x", "x").await;
        assert_contains(&out.content, "identical");
        let out = edit(&ctx, "nope.rs", "x", "y").await;
        assert_contains(&out.content, "File not found: nope.rs");
        let out = run_tool(
            &EditFile,
            &ctx,
            json!({"path": "main.rs", "old_string": "x", "new_string": "y", "replace_all": "yes"}),
        )
        .await;
        assert_contains(
            &out.content,
            "field `replace_all` must be a boolean, got a string",
        );
        fs::write(ctx.workdir.join("bin"), b"\xff\xfe").unwrap();
        let out = edit(&ctx, "bin", "x", "y").await;
        assert_contains(&out.content, "not UTF-8");
    }

    #[test]
    fn access_carries_the_diff_in_advance() {
        let (_d, ctx) = setup();
        let access = prepared(
            &EditFile,
            json!({"path": "main.rs", "old_string": "fn other", "new_string": "fn renamed"}),
        )
        .access(&ctx);
        let Access::NeedsApproval(ApprovalRequestKind::Edit {
            path,
            via: None,
            diff,
            location,
        }) = access
        else {
            panic!("expected an edit request: {access:?}");
        };
        assert_eq!(path, ctx.workdir.join("main.rs"));
        assert_contains(&diff.unwrap(), "-fn other() {\n+fn renamed() {\n");
        assert_eq!(location, Location::Inside);
        // Nothing written by access().
        assert_eq!(file(&ctx), SOURCE);
        let failing = prepared(
            &EditFile,
            json!({"path": "main.rs", "old_string": "absent", "new_string": "y"}),
        )
        .access(&ctx);
        assert!(matches!(
            failing,
            Access::NeedsApproval(ApprovalRequestKind::Edit { diff: None, .. })
        ));
    }

    #[tokio::test]
    async fn files_over_the_cap_before_or_after_the_edit_are_refused() {
        let (_d, ctx) = setup();
        let big = ctx.workdir.join("big.txt");
        fs::write(&big, "a".repeat(MAX_EDIT_BYTES as usize + 1)).unwrap();
        let out = edit(&ctx, "big.txt", "a", "b").await;
        assert_contains(
            &out.content,
            &format!(
                "big.txt is {} bytes, over edit_file's limit",
                MAX_EDIT_BYTES + 1
            ),
        );
        // A small file whose edit would grow past the cap is refused before the new
        // text is built.
        fs::write(&big, "a".repeat(1024 * 1024)).unwrap();
        let out = run_tool(
            &EditFile,
            &ctx,
            json!({"path": "big.txt", "old_string": "a", "new_string": "0123456789", "replace_all": true}),
        )
        .await;
        assert_contains(
            &out.content,
            "big.txt would be 10485760 bytes, over edit_file's limit",
        );
        assert_eq!(fs::metadata(&big).unwrap().len(), 1024 * 1024);
    }

    #[test]
    fn closest_region_in_a_large_file() {
        let mut content: String = (0..20_000)
            .map(|i| format!("let value_{i} = compute({i});\n"))
            .collect();
        content.push_str("    target_line_here(alpha, beta);\n");
        let closest = closest_region(&content, "target_line_here(alpha,beta);").unwrap();
        assert_eq!(closest.first_line, 20_001);
        assert!(closest.whitespace_only);
    }
}
