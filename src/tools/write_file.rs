//! The `write_file` tool: creates or replaces a whole file, atomically (temp file in the
//! same directory, then rename), creating parent folders, and reports a unified diff.
//!
//! Also owns the two helpers every file-changing tool shares: `write_atomic` and
//! `file_diff`. It knows nothing of approval policy beyond declaring the edit.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use similar::{ChangeTag, TextDiff};

use super::path::{ResolvedPath, resolve};
use super::{Access, ToolContext, ToolFuture, ToolOutput, TypedTool, run_blocking};
use crate::protocol::ApprovalRequestKind;
use crate::truncate::truncate_head_tail;

/// Lines of context around each change in diffs.
const DIFF_CONTEXT: usize = 3;
/// Give up on finding a minimal diff after this long (a coarser diff is still correct).
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// Creates or overwrites a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

/// The arguments of a `write_file` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    path: String,
    content: String,
}

impl TypedTool for WriteFile {
    type Args = Args;

    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Create a file or replace its whole content; parent folders are created. Prefer \
         edit_file for changes to an existing file.";

    const PARAMETERS: &'static str = include_str!("schemas/write_file.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        let path = resolve(&ctx.workdir, &args.path);
        let old = read_existing(&path.abs).ok().flatten();
        let diff = file_diff(&path.display, old.as_deref(), &args.content);
        edit_access(
            &path,
            Some(truncate_head_tail(&diff.text, ctx.limits.max_output_bytes)),
        )
    }

    fn summary(&self, args: &Args) -> String {
        args.path.clone()
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        let path = resolve(&ctx.workdir, &args.path);
        let max_diff = ctx.limits.max_output_bytes;
        Box::pin(run_blocking(move || write(&path, &args.content, max_diff)))
    }
}

/// The approval request for changing `path`.
pub(crate) fn edit_access(path: &ResolvedPath, diff: Option<String>) -> Access {
    Access::NeedsApproval(ApprovalRequestKind::Edit {
        path: path.abs.clone(),
        diff,
        location: path.location,
    })
}

fn write(path: &ResolvedPath, content: &str, max_diff: usize) -> ToolOutput {
    let shown = &path.display;
    if path.abs.is_dir() {
        return ToolOutput::error(format!("{shown} is a directory; give a file path"));
    }
    let old = match read_existing(&path.abs) {
        Ok(old) => old,
        Err(e) => return ToolOutput::error(format!("Cannot read {shown}: {e}")),
    };
    if old.as_deref() == Some(content) {
        return ToolOutput::ok(format!("No change: {shown} already has this content."));
    }
    if let Err(e) = write_atomic(&path.abs, content.as_bytes()) {
        return ToolOutput::error(format!("Cannot write {shown}: {e}"));
    }
    let diff = file_diff(shown, old.as_deref(), content);
    let summary = match old {
        None => format!(
            "Created {shown} ({} lines, {} bytes).",
            content.lines().count(),
            content.len()
        ),
        Some(_) => format!("Updated {shown}: +{} -{} lines.", diff.added, diff.removed),
    };
    ToolOutput::ok(summary).with_diff(truncate_head_tail(&diff.text, max_diff))
}

/// The current content of a file (lossy UTF-8), `None` when it does not exist.
pub(crate) fn read_existing(path: &Path) -> io::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A unified diff with its line counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileDiff {
    /// The unified diff text (`--- a/x`, `+++ b/x`, hunks); empty when nothing changed.
    pub text: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

/// Unified diff of a file's change; `old = None` for a new file (diff against empty,
/// from `/dev/null`).
pub(crate) fn file_diff(display: &str, old: Option<&str>, new: &str) -> FileDiff {
    let before = old.unwrap_or("");
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, new);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    // `a/` and `b/` prefix paths relative to the project; a path outside it is shown as
    // it is (`+++ /tmp/x`, not `+++ b//tmp/x`).
    let side = |prefix: &str| {
        if display.starts_with('/') {
            display.to_string()
        } else {
            format!("{prefix}{display}")
        }
    };
    let from = if old.is_some() {
        side("a/")
    } else {
        "/dev/null".to_string()
    };
    let text = diff
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .header(&from, &side("b/"))
        .to_string();
    FileDiff {
        text,
        added,
        removed,
    }
}

/// Writes `content` to `path` atomically: a temp file in the same directory, synced,
/// then renamed over the target. Parent folders are created; an existing file keeps its
/// permissions; a symlink keeps pointing where it did and its target changes.
pub(crate) fn write_atomic(path: &Path, content: &[u8]) -> io::Result<()> {
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file path",
        ));
    };
    fs::create_dir_all(dir)?;
    let permissions = fs::metadata(&target).ok().map(|m| m.permissions());
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp = TempFile(dir.join(format!(
        ".{}.{}-{}.harness9.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp.0)?;
    file.write_all(content)?;
    file.sync_data()?;
    drop(file);
    if let Some(permissions) = permissions {
        fs::set_permissions(&temp.0, permissions)?;
    }
    fs::rename(&temp.0, &target)?;
    std::mem::forget(temp);
    Ok(())
}

/// Removes the temp file unless the rename took it.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Location;
    use crate::test_support::assert_contains;
    use crate::tools::{Tool, assert_error, assert_errors, prepared, run_tool, test_context};
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    /// Writes `content` to `path`.
    async fn write_to(ctx: &ToolContext, path: &str, content: &str) -> ToolOutput {
        run_tool(&WriteFile, ctx, json!({"path": path, "content": content})).await
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[tokio::test]
    async fn creates_file_and_parents_with_diff_against_empty() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = write_to(&ctx, "a/b/new.txt", "one\ntwo\n").await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "Created a/b/new.txt (2 lines, 8 bytes).");
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/new.txt")).unwrap(),
            "one\ntwo\n"
        );
        assert_eq!(
            out.diff.unwrap(),
            "--- /dev/null\n+++ b/a/b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        );
        assert_eq!(entries(&dir.path().join("a/b")), ["new.txt"]);
    }

    #[tokio::test]
    async fn overwrites_keeping_permissions_and_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        fs::write(&file, "echo old\nexit 0\n").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
        let ctx = test_context(dir.path());
        let out = write_to(&ctx, "run.sh", "echo new\nexit 0\n").await;
        assert_eq!(out.content, "Updated run.sh: +1 -1 lines.");
        assert_contains(&out.diff.unwrap(), "-echo old\n+echo new\n");
        assert_eq!(fs::read_to_string(&file).unwrap(), "echo new\nexit 0\n");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(entries(dir.path()), ["run.sh"]);
        let out = write_to(&ctx, "run.sh", "echo new\nexit 0\n").await;
        assert_eq!(out.content, "No change: run.sh already has this content.");
    }

    #[tokio::test]
    async fn writes_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("real.txt"), "a\n").unwrap();
        std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
        let out = run_tool(
            &WriteFile,
            &test_context(dir.path()),
            json!({"path": "link.txt", "content": "b\n"}),
        )
        .await;
        assert!(!out.is_error);
        assert!(
            fs::symlink_metadata(dir.path().join("link.txt"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("real.txt")).unwrap(),
            "b\n"
        );
    }

    #[tokio::test]
    async fn errors_the_model_can_fix() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        let ctx = test_context(dir.path());
        assert_errors(
            &WriteFile,
            &ctx,
            &[
                (json!({"path": "x.txt"}), "missing field `content`"),
                (
                    json!({"path": "x.txt", "content": ["a"]}),
                    "field `content` must be a string, got an array",
                ),
            ],
        )
        .await;
        let out = write_to(&ctx, "sub", "x").await;
        assert_error(&out, "is a directory");
    }

    #[test]
    fn access_is_an_edit_with_the_diff_computed_now() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        fs::write(ctx.workdir.join("f.txt"), "old\n").unwrap();
        let Access::NeedsApproval(ApprovalRequestKind::Edit {
            path,
            diff,
            location,
        }) = prepared(&WriteFile, json!({"path": "f.txt", "content": "new\n"})).access(&ctx)
        else {
            panic!("expected an edit request");
        };
        assert_eq!(path, ctx.workdir.join("f.txt"));
        assert_eq!(
            diff.unwrap(),
            "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+new\n"
        );
        assert_eq!(location, Location::Inside);
        let outside =
            prepared(&WriteFile, json!({"path": "/tmp/x/y.txt", "content": ""})).access(&ctx);
        assert!(matches!(
            outside,
            Access::NeedsApproval(ApprovalRequestKind::Edit {
                location: Location::Outside,
                ..
            })
        ));
        let refused = WriteFile.prepare(json!({"path": "f.txt"})).err().unwrap();
        assert_error(&refused, "missing field `content`");
    }

    #[test]
    fn a_diff_outside_the_project_names_the_absolute_path_once() {
        let d = file_diff("/tmp/x.txt", Some("a\n"), "b\n");
        assert!(
            d.text.starts_with("--- /tmp/x.txt\n+++ /tmp/x.txt\n"),
            "{}",
            d.text
        );
        let inside = file_diff("src/x.rs", Some("a\n"), "b\n");
        assert!(
            inside.text.starts_with("--- a/src/x.rs\n+++ b/src/x.rs\n"),
            "{}",
            inside.text
        );
    }
}
