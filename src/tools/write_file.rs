//! The `write_file` tool: creates or replaces a whole file, atomically (temp file in the
//! same directory, then rename, through `nofollow::replace`: the judged file, no symlink
//! followed), creating parent folders, and reports a unified diff.
//!
//! When the session runs in an editor that offers its buffers, the old text is read and
//! the new one written through it first (`files.rs`). Also owns what every
//! file-changing tool shares: `read_existing` (the old text, capped) and `file_diff`. It
//! knows nothing of approval policy beyond declaring the edit.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use similar::{ChangeTag, TextDiff};

use super::edit_file::MAX_EDIT_BYTES;
use super::files::{AccessError, read_judged, write_judged};
use super::path::{PathArg, ResolvedPath};
use super::{
    Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, WorksIn, run_blocking_until,
};
use crate::nofollow::{self, FileError, Parents};
use crate::protocol::{FileChange, FileLocation};
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
    path: PathArg,
    content: String,
}

impl TypedTool for WriteFile {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Create a file or replace its whole content; parent folders are created. Prefer \
         edit_file for changes to an existing file.";

    const PARAMETERS: &'static str = include_str!("schemas/write_file.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        let path = args.path.resolve(&ctx.workdir);
        let diff = match read_existing(&path.real, MAX_EDIT_BYTES) {
            Ok(Existing::Bytes(old)) => Some(file_diff(
                &path.real_display,
                Some(&lossy(old)),
                &args.content,
            )),
            Ok(Existing::Absent) => Some(file_diff(&path.real_display, None, &args.content)),
            Ok(Existing::TooLarge(_)) | Err(_) => None,
        };
        path.edit_access(diff.map(|d| truncate_head_tail(&d.text, ctx.limits.max_output_bytes)))
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
        Box::pin(write(path, args.content, ctx))
    }
}

/// Writes the file (through the editor when the session has one, its old text read the
/// same way) and reports the diff.
async fn write(
    path: ResolvedPath,
    content: String,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    let shown = path.shown();
    let old = match read_judged(ctx, &path.real, MAX_EDIT_BYTES).await? {
        Ok(old) => old,
        Err(AccessError::File(FileError::Directory)) => {
            return Ok(ToolOutput::error(format!(
                "{shown} is a directory; give a file path"
            )));
        }
        Err(e) => return Ok(ToolOutput::error(format!("Cannot write {shown}: {e}"))),
    };
    if matches!(&old, Existing::Bytes(bytes) if bytes == content.as_bytes()) {
        return Ok(ToolOutput::ok(format!(
            "No change: {shown} already has this content."
        )));
    }
    if let Err(e) = write_judged(ctx, &path.real, &content, Parents::Create).await? {
        return Ok(ToolOutput::error(format!("Cannot write {shown}: {e}")));
    }
    let max_diff = ctx.limits.max_output_bytes;
    run_blocking_until(&ctx.cancel, move || report(&path, &content, old, max_diff)).await
}

/// What the model and the frontends are told of a done write.
fn report(path: &ResolvedPath, content: &str, old: Existing, max_diff: usize) -> ToolOutput {
    let shown = &path.shown();
    let lines = content.lines().count();
    let bytes = content.len();
    match old {
        Existing::Absent => {
            let diff = file_diff(&path.real_display, None, content);
            ToolOutput::ok(format!("Created {shown} ({lines} lines, {bytes} bytes)."))
                .with_diff(truncate_head_tail(&diff.text, max_diff))
                .with_change(FileChange::within_cap(path.real.clone(), None, content))
        }
        Existing::Bytes(old) => {
            let old = lossy(old);
            let diff = file_diff(&path.real_display, Some(&old), content);
            ToolOutput::ok(format!(
                "Updated {shown}: +{} -{} lines.",
                diff.added, diff.removed
            ))
            .with_diff(truncate_head_tail(&diff.text, max_diff))
            .with_change(FileChange::within_cap(
                path.real.clone(),
                Some(&old),
                content,
            ))
        }
        Existing::TooLarge(size) => ToolOutput::ok(format!(
            "Replaced {shown} ({lines} lines, {bytes} bytes; it held {size} bytes, too many \
             to diff)."
        )),
    }
}

/// What a file holds before it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Nothing: the file does not exist.
    Absent,
    /// Its bytes.
    Bytes(Vec<u8>),
    /// More bytes than the cap: not read.
    TooLarge(u64),
}

/// What the regular file `real` holds, read without following symlinks, up to `cap`
/// bytes; a FIFO, socket or device is an error, never read.
pub(crate) fn read_existing(real: &Path, cap: u64) -> Result<Existing, FileError> {
    let file = match nofollow::open_read(real) {
        Ok(file) => file,
        Err(FileError::NotFound) => return Ok(Existing::Absent),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    if size > cap {
        return Ok(Existing::TooLarge(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // One byte past the cap tells a file that grew since its size was read.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > cap {
        return Ok(Existing::TooLarge(bytes.len() as u64));
    }
    Ok(Existing::Bytes(bytes))
}

/// Bytes as text, invalid UTF-8 replaced.
pub(crate) fn lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ApprovalRequestKind, Location};
    use crate::test_support::assert_contains;
    use crate::tools::{Tool, assert_error, assert_errors, prepared, run_tool, test_context};
    use serde_json::json;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

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
            via: None,
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
