//! The `read_file` tool: a text file with line numbers, a window of it (offset/limit),
//! never a binary file and never more than the read and output limits allow.
//!
//! It knows how to read and number lines; path resolution lives in `path.rs` and
//! opening the judged file (a regular file, no symlink followed) in `nofollow.rs`; when
//! the session runs in an editor that offers its buffers (`files.rs`), the text comes
//! from the editor once the file was found on disk that way. It knows nothing of
//! approval policy beyond declaring what it reads.

use std::io::{BufRead, BufReader, Read};

use serde::Deserialize;

use super::files::EditorFiles;
use super::path::{PathArg, ResolvedPath};
use super::{
    Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, WorksIn, run_blocking_until,
};
use crate::nofollow::{self, FileError};
use crate::protocol::FileLocation;

/// Lines returned when the model gives no limit.
const DEFAULT_LIMIT: u64 = 2000;
/// Longer lines are cut (minified files would otherwise eat the output budget).
const MAX_LINE_BYTES: usize = 2000;
/// Bytes inspected for NUL to decide a file is binary.
const BINARY_SNIFF_BYTES: usize = 8192;
/// Room kept in the output budget for the closing note.
const NOTE_RESERVE: usize = 200;

/// Reads a text file with line numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

#[derive(Debug, Deserialize)]
pub struct Args {
    path: PathArg,
    offset: Option<u64>,
    limit: Option<u64>,
}

impl TypedTool for ReadFile {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a text file. Output lines are numbered (\"    12\\tcode\"); the number and tab \
         are not part of the file. Reads up to 2000 lines; use offset/limit for more or for \
         large files. Refuses binary files.";

    const PARAMETERS: &'static str = include_str!("schemas/read_file.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        args.path.resolve(&ctx.workdir).read_access()
    }

    fn works_in(&self, args: &Args, ctx: &ToolContext) -> WorksIn {
        args.path.resolve(&ctx.workdir).works_in()
    }

    fn locations(&self, args: &Args, ctx: &ToolContext) -> Vec<FileLocation> {
        let line = args.offset.map_or(1, |offset| offset.max(1));
        vec![FileLocation {
            path: args.path.resolve(&ctx.workdir).real.clone(),
            line: Some(u32::try_from(line).unwrap_or(u32::MAX)),
        }]
    }

    fn summary(&self, args: &Args) -> String {
        match args.offset {
            Some(offset) if offset > 1 => format!("{} from line {offset}", args.path.as_str()),
            _ => args.path.as_str().to_string(),
        }
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        let resolved = args.path.resolve(&ctx.workdir).clone();
        let limits = ctx.limits;
        match ctx.files.reader() {
            None => Box::pin(run_blocking_until(&ctx.cancel, move || {
                read(&resolved, &args, limits)
            })),
            Some(editor) => {
                Box::pin(async move { read_through(editor, &resolved, &args, ctx).await })
            }
        }
    }
}

/// The message for a file that cannot be opened.
fn cannot_open(shown: &str, e: FileError) -> ToolOutput {
    match e {
        FileError::NotFound => ToolOutput::error(format!("File not found: {shown}")),
        FileError::Directory => ToolOutput::error(format!(
            "{shown} is a directory; use the list tool to see its contents"
        )),
        e => ToolOutput::error(format!("Cannot read {shown}: {e}")),
    }
}

fn read(path: &ResolvedPath, args: &Args, limits: super::ToolLimits) -> ToolOutput {
    let shown = &path.shown();
    let file = match nofollow::open_read(&path.real) {
        Ok(file) => file,
        Err(e) => return cannot_open(shown, e),
    };
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return ToolOutput::error(format!("Cannot read {shown}: {e}")),
    };
    let reader = BufReader::with_capacity(64 * 1024, file);
    read_lines(shown, meta.len(), args, limits, reader)
}

/// Reads the judged file through the editor (its unsaved text), once the path was
/// found on disk as a regular file reached without links.
async fn read_through(
    editor: &dyn EditorFiles,
    path: &ResolvedPath,
    args: &Args,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    let shown = &path.shown();
    let real = path.real.clone();
    let checked =
        run_blocking_until(&ctx.cancel, move || nofollow::open_read(&real).map(drop)).await?;
    if let Err(e) = checked {
        return Ok(cannot_open(shown, e));
    }
    let text = tokio::select! {
        text = editor.read_text(&path.real) => text,
        () = ctx.cancel.cancelled() => return Err(ToolFatal::Interrupted),
    };
    Ok(match text {
        Ok(text) => read_lines(shown, text.len() as u64, args, ctx.limits, text.as_bytes()),
        Err(e) => ToolOutput::error(format!("Cannot read {shown}: {e}")),
    })
}

/// Numbers the lines `reader` holds (`len` bytes in all) as the arguments ask.
fn read_lines<R: BufRead>(
    shown: &str,
    len: u64,
    args: &Args,
    limits: super::ToolLimits,
    mut reader: R,
) -> ToolOutput {
    let windowed = args.offset.is_some() || args.limit.is_some();
    if len > limits.max_read_bytes && !windowed {
        return ToolOutput::error(format!(
            "{shown} is {} bytes, over the {} byte read limit. Read a part with offset and \
             limit (e.g. offset=1, limit=500), or find the lines you need with grep.",
            len, limits.max_read_bytes
        ));
    }
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 {
        return ToolOutput::error("limit must be at least 1");
    }
    match looks_binary(&mut reader) {
        Ok(true) => {
            return ToolOutput::error(format!(
                "{shown} looks like a binary file (it contains NUL bytes); read_file only \
                 reads text"
            ));
        }
        Ok(false) => {}
        Err(e) => return ToolOutput::error(format!("Cannot read {shown}: {e}")),
    }
    match number_lines(&mut reader, offset, limit, limits.max_output_bytes) {
        Ok(window) => render(shown, offset, &window, len <= limits.max_read_bytes, reader),
        Err(e) => ToolOutput::error(format!("Cannot read {shown}: {e}")),
    }
}

/// True when the first bytes contain a NUL. Leaves the bytes in the reader's buffer.
fn looks_binary(reader: &mut impl BufRead) -> std::io::Result<bool> {
    let buffered = reader.fill_buf()?;
    Ok(buffered[..buffered.len().min(BINARY_SNIFF_BYTES)].contains(&0))
}

/// The lines read for the model.
struct Window {
    text: String,
    /// Line number of the last line shown; at the end of the file, its line count.
    last_line: u64,
    /// Why reading stopped before the end of the file, if it did.
    stop: Stop,
}

#[derive(Debug, PartialEq, Eq)]
enum Stop {
    EndOfFile,
    LimitReached,
    OutputFull,
}

fn number_lines(
    reader: &mut impl BufRead,
    offset: u64,
    limit: u64,
    max_output: usize,
) -> std::io::Result<Window> {
    let budget = max_output.saturating_sub(NOTE_RESERVE);
    let mut text = String::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(Window {
                text,
                last_line: number,
                stop: Stop::EndOfFile,
            });
        }
        number += 1;
        if number < offset {
            continue;
        }
        if number >= offset + limit {
            return Ok(Window {
                text,
                last_line: number - 1,
                stop: Stop::LimitReached,
            });
        }
        let rendered = render_line(number, &line);
        if text.len() + rendered.len() > budget && number > offset {
            return Ok(Window {
                text,
                last_line: number - 1,
                stop: Stop::OutputFull,
            });
        }
        text.push_str(&rendered);
    }
}

fn render_line(number: u64, raw: &[u8]) -> String {
    let mut content = raw.strip_suffix(b"\n").unwrap_or(raw);
    content = content.strip_suffix(b"\r").unwrap_or(content);
    let lossy = String::from_utf8_lossy(content);
    if lossy.len() > MAX_LINE_BYTES {
        let cut = lossy.floor_char_boundary(MAX_LINE_BYTES);
        format!(
            "{number:>6}\t{} [... line cut: {} more bytes]\n",
            &lossy[..cut],
            lossy.len() - cut
        )
    } else {
        format!("{number:>6}\t{lossy}\n")
    }
}

fn render(
    shown: &str,
    offset: u64,
    window: &Window,
    count_rest: bool,
    mut reader: impl Read,
) -> ToolOutput {
    if window.text.is_empty() {
        if window.last_line == 0 {
            return ToolOutput::ok(format!("{shown} is empty."));
        }
        return ToolOutput::error(format!(
            "offset {offset} is past the end of {shown}, which has {} lines",
            window.last_line
        ));
    }
    let mut out = window.text.clone();
    if window.stop != Stop::EndOfFile {
        // The line that stopped us was already read; count it and, for files within the
        // read limit, the rest, so the model knows how much remains.
        let total = if count_rest {
            count_lines(&mut reader).ok()
        } else {
            None
        };
        let next = window.last_line + 1;
        let why = if window.stop == Stop::OutputFull {
            "output limit reached; "
        } else {
            ""
        };
        let of_total = match total {
            Some(rest) => format!(" of {}", window.last_line + 1 + rest),
            None => String::new(),
        };
        out.push_str(&format!(
            "[{why}showing lines {offset}-{}{of_total}; more remain: continue with offset={next}]\n",
            window.last_line
        ));
    }
    ToolOutput::ok(out)
}

/// Counts the remaining lines (a final line without newline counts).
fn count_lines(reader: &mut impl Read) -> std::io::Result<u64> {
    let mut count = 0u64;
    let mut last = b'\n';
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        count += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    if last != b'\n' {
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;
    use crate::tools::{Tool, assert_error, prepared, run_tool, test_context, test_tree};
    use serde_json::json;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[tokio::test]
    async fn reads_with_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\r\nbeta\ngamma").unwrap();
        let out = run_tool(
            &ReadFile,
            &test_context(dir.path()),
            json!({"path": "a.txt"}),
        )
        .await;
        assert!(!out.is_error);
        assert_eq!(out.content, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    }

    #[tokio::test]
    async fn offset_and_limit_report_what_remains() {
        let (_dir, ctx) = test_tree(&[("a.txt", &numbered(10))]);
        let out = run_tool(
            &ReadFile,
            &ctx,
            json!({"path": "a.txt", "offset": 3, "limit": 2}),
        )
        .await;
        assert_eq!(
            out.content,
            "     3\tline 3\n     4\tline 4\n\
             [showing lines 3-4 of 10; more remain: continue with offset=5]\n"
        );
        let out = run_tool(&ReadFile, &ctx, json!({"path": "a.txt", "offset": 9})).await;
        assert_eq!(out.content, "     9\tline 9\n    10\tline 10\n");
        let out = run_tool(&ReadFile, &ctx, json!({"path": "a.txt", "offset": 11})).await;
        assert_error(&out, "past the end");
    }

    #[tokio::test]
    async fn refuses_binary_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.bin"), b"ELF\x00\x01\x02").unwrap();
        let out = run_tool(
            &ReadFile,
            &test_context(dir.path()),
            json!({"path": "b.bin"}),
        )
        .await;
        assert_error(&out, "binary");
    }

    #[tokio::test]
    async fn large_files_need_a_window() {
        let (_dir, mut ctx) = test_tree(&[("big.txt", &numbered(1000))]);
        ctx.limits.max_read_bytes = 100;
        let out = run_tool(&ReadFile, &ctx, json!({"path": "big.txt"})).await;
        assert_error(&out, "offset and limit");
        let out = run_tool(
            &ReadFile,
            &ctx,
            json!({"path": "big.txt", "offset": 500, "limit": 1}),
        )
        .await;
        assert!(!out.is_error);
        // Over the read limit, the rest is not counted.
        assert_eq!(
            out.content,
            "   500\tline 500\n[showing lines 500-500; more remain: continue with offset=501]\n"
        );
    }

    #[tokio::test]
    async fn output_budget_stops_early_with_next_offset() {
        let (_dir, mut ctx) = test_tree(&[("a.txt", &numbered(1000))]);
        ctx.limits.max_output_bytes = 1000;
        let out = run_tool(&ReadFile, &ctx, json!({"path": "a.txt"})).await;
        assert!(out.content.len() <= 1000);
        let note = out.content.lines().last().unwrap();
        let shown = out.content.lines().count() - 1;
        assert_eq!(
            note,
            format!(
                "[output limit reached; showing lines 1-{shown} of 1000; more remain: \
                 continue with offset={}]",
                shown + 1
            )
        );
    }

    #[tokio::test]
    async fn long_lines_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("min.js"), "x".repeat(5000)).unwrap();
        let out = run_tool(
            &ReadFile,
            &test_context(dir.path()),
            json!({"path": "min.js"}),
        )
        .await;
        assert!(out.content.ends_with(" [... line cut: 3000 more bytes]\n"));
    }

    #[tokio::test]
    async fn errors_the_model_can_fix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let ctx = test_context(dir.path());
        let out = run_tool(&ReadFile, &ctx, json!({})).await;
        assert_error(&out, "missing field `path`");
        assert_contains(&out.content, "\"path\": string");
        let out = run_tool(&ReadFile, &ctx, json!({"path": "empty.txt", "offset": "3"})).await;
        assert_contains(
            &out.content,
            "field `offset` must be an integer, got a string",
        );
        let out = run_tool(&ReadFile, &ctx, json!({"path": "nope.txt"})).await;
        assert_eq!(out.content, "File not found: nope.txt");
        let out = run_tool(&ReadFile, &ctx, json!({"path": "sub"})).await;
        assert_contains(&out.content, "is a directory");
        let out = run_tool(&ReadFile, &ctx, json!({"path": "empty.txt"})).await;
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (false, "empty.txt is empty.")
        );
    }

    #[test]
    fn bad_arguments_are_refused_and_good_ones_summarised() {
        let refused = ReadFile.prepare(json!({"path": 3})).err().unwrap();
        assert_eq!(
            (refused.is_error, refused.content.as_str()),
            (
                true,
                "Invalid arguments for read_file: field `path` must be a string, got an \
                 integer. Expected {\"path\": string, \"offset\"?: integer, \"limit\"?: integer}."
            )
        );
        assert_eq!(
            prepared(&ReadFile, json!({"path": "a.rs", "offset": 40})).summary(),
            "a.rs from line 40"
        );
    }
}
