//! The `bash` tool: runs a command with `bash -c` (or `sh -c` when bash is missing) in
//! the project directory, stdin empty, in its own process group.
//!
//! stdout and stderr share one pipe, so the model sees them interleaved exactly as they
//! were written (like a terminal would show them), unlabelled. Complete lines stream to
//! `ctx.live_output` as they arrive; the result keeps the head and tail of long output
//! (`truncate.rs`) and ends with the exit code or signal. On timeout or interrupt the
//! whole process group gets SIGTERM, then SIGKILL after a short grace, and the call
//! returns promptly; a background job that keeps the output pipe open cannot hold the
//! call once the main process has exited. This module knows nothing of approval policy
//! beyond declaring the command.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::{Instant, sleep_until};

use super::truncate::HeadTail;
use super::{Access, Tool, ToolContext, ToolFatal, ToolFuture, ToolOutput, parse_args};
use crate::protocol::ApprovalRequestKind;

/// Between SIGTERM and SIGKILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(1);
/// How long to keep reading after the main process exited while something else (a
/// background job) still holds the output pipe open.
pub(crate) const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);
/// How long to wait for the main process to be reaped after SIGKILL.
pub(crate) const REAP_TIMEOUT: Duration = Duration::from_secs(2);
/// A line longer than this is passed on in pieces.
const MAX_PENDING_LINE: usize = 16 * 1024;
/// Live output sent per call at most (frontends show the latest lines; a runaway command
/// must not flood them).
const MAX_LIVE_BYTES: usize = 1024 * 1024;
/// Room kept in the output budget for the closing status lines.
const FOOTER_RESERVE: usize = 400;

/// Runs a shell command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bash;

#[derive(Debug, Deserialize)]
struct Args {
    command: String,
    timeout_secs: Option<u64>,
    #[allow(dead_code)]
    description: Option<String>,
}

impl Tool for Bash {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        "Run a shell command with bash in the project directory. Non-interactive: stdin \
         is empty and nothing can prompt. Returns stdout and stderr interleaved (head and \
         tail if long) and the exit code. Background jobs must redirect their output \
         (cmd > log 2>&1 &). Prefer read_file, grep, glob and list over cat, grep and find."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line."},
                "timeout_secs": {"type": "integer", "description": "Kill the command after this many seconds (omit for the default)."},
                "description": {"type": "string", "description": "What the command does, in a few words, for the user."}
            },
            "required": ["command"]
        })
    }

    fn access(&self, args: &Value, ctx: &ToolContext) -> Access {
        match parse_args::<Args>(self.name(), args, &self.parameters()) {
            Ok(args) => Access::NeedsApproval(ApprovalRequestKind::Command {
                command: args.command,
                cwd: ctx.workdir.clone(),
            }),
            Err(_) => Access::ReadOnly,
        }
    }

    fn summary(&self, args: &Value) -> String {
        let command = args.get("command").and_then(Value::as_str).unwrap_or("?");
        let first_line = command.lines().next().unwrap_or("");
        let mut summary: String = first_line.chars().take(80).collect();
        if summary.len() < command.trim_end().len() {
            summary.push_str(" ...");
        }
        summary
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: Args = match parse_args(self.name(), &args, &self.parameters()) {
                Ok(args) => args,
                Err(output) => return Ok(output),
            };
            if args.command.trim().is_empty() {
                return Ok(ToolOutput::error("command is empty"));
            }
            let limits = ctx.limits;
            let timeout_secs = args
                .timeout_secs
                .unwrap_or(limits.default_bash_timeout_secs)
                .clamp(1, limits.max_bash_timeout_secs.max(1));
            run_command(&args.command, Duration::from_secs(timeout_secs), ctx).await
        })
    }
}

/// How the wait for the command ended.
enum Ending {
    /// The main process exited; `detached` when a background job still held the output.
    Exited {
        status: ExitStatus,
        detached: bool,
    },
    TimedOut,
    Cancelled,
}

async fn run_command(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    let spawned = match spawn(command, ctx) {
        Ok(spawned) => spawned,
        Err(e) => {
            return Ok(ToolOutput::error(format!(
                "Failed to start the command: {e}"
            )));
        }
    };
    let Spawned {
        mut child,
        mut reader,
        group,
    } = spawned;
    let mut output = Output::new(ctx.limits.max_output_bytes, ctx.live_output.clone());
    let ending = wait(&mut child, &mut reader, &mut output, timeout, ctx).await;
    if !matches!(ending, Ending::Exited { .. }) {
        group.terminate(&mut child, &mut reader, &mut output).await;
    }
    group.disarm();
    let mut text = output.finish();
    if text.is_empty() {
        text.push_str("(no output)\n");
    } else if !text.ends_with('\n') {
        text.push('\n');
    }
    match ending {
        Ending::Cancelled => Err(ToolFatal::Interrupted),
        Ending::TimedOut => Ok(ToolOutput::error(format!(
            "{text}[timed out after {} s; the command and everything it started were \
             killed. Run long jobs in the background with output redirected, or raise \
             timeout_secs]",
            timeout.as_secs()
        ))),
        Ending::Exited { status, detached } => {
            let mut footer = describe_status(status);
            if detached {
                footer.push_str(
                    "\n[background processes still hold the command's output; it is no \
                     longer captured]",
                );
            }
            let content = format!("{text}{footer}");
            Ok(if status.success() {
                ToolOutput::ok(content)
            } else {
                ToolOutput::error(content)
            })
        }
    }
}

fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("[exit code {code}]"),
        (None, Some(signal)) => {
            let name = Signal::try_from(signal)
                .map(Signal::as_str)
                .unwrap_or("unknown");
            format!("[killed by signal {signal} ({name})]")
        }
        (None, None) => "[exit status unknown]".to_string(),
    }
}

/// Waits for the main process, reading output, until it exits (and the output pipe
/// closes or stays held by background jobs past a short drain), the timeout passes, or
/// the call is cancelled.
async fn wait(
    child: &mut Child,
    reader: &mut pipe::Receiver,
    output: &mut Output,
    timeout: Duration,
    ctx: &ToolContext,
) -> Ending {
    let deadline = Instant::now() + timeout;
    let mut status: Option<ExitStatus> = None;
    let mut drain_until: Option<Instant> = None;
    let mut eof = false;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if let (Some(status), true) = (status, eof) {
            return Ending::Exited {
                status,
                detached: false,
            };
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => return Ending::Cancelled,
            read = reader.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => output.feed(&buf[..n]),
            },
            exited = child.wait(), if status.is_none() => match exited {
                Ok(exited) => {
                    status = Some(exited);
                    drain_until = Some(Instant::now() + DRAIN_AFTER_EXIT);
                }
                // Cannot happen for a child we spawned; treat it like a hang.
                Err(_) => return Ending::TimedOut,
            },
            _ = sleep_until(deadline), if status.is_none() => return Ending::TimedOut,
            _ = sleep_until(drain_until.unwrap_or(deadline)), if drain_until.is_some() => {
                if let Some(status) = status {
                    return Ending::Exited { status, detached: true };
                }
            }
        }
    }
}

struct Spawned {
    child: Child,
    reader: pipe::Receiver,
    group: ProcessGroup,
}

fn spawn(command: &str, ctx: &ToolContext) -> io::Result<Spawned> {
    let (reader, writer) = io::pipe()?;
    let child = match build(&ctx.workdir, "bash", command, &writer)?.spawn() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            build(&ctx.workdir, "sh", command, &writer)?.spawn()?
        }
        other => other?,
    };
    // Only the child holds the write end now: EOF comes when it and its descendants
    // close it. (`build` gave the commands clones, dropped with them.)
    drop(writer);
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    let group = ProcessGroup {
        pgid: pid.map(Pid::from_raw),
        armed: true,
    };
    let reader = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok(Spawned {
        child,
        reader,
        group,
    })
}

fn build(
    workdir: &std::path::Path,
    shell: &str,
    command: &str,
    writer: &io::PipeWriter,
) -> io::Result<Command> {
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone()?))
        .stderr(Stdio::from(writer.try_clone()?))
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .process_group(0)
        .kill_on_drop(true);
    Ok(cmd)
}

/// The command's process group. Killed when dropped while armed (the call was abandoned
/// mid-run), so nothing it started outlives an aborted call.
pub(crate) struct ProcessGroup {
    pub(crate) pgid: Option<Pid>,
    pub(crate) armed: bool,
}

impl ProcessGroup {
    pub(crate) fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is fine.
            let _ = killpg(pgid, signal);
        }
    }

    /// SIGTERM to the group; SIGKILL once the main process exits or the grace passes
    /// (whichever is first, so stragglers never survive); output read meanwhile is kept.
    async fn terminate(&self, child: &mut Child, reader: &mut pipe::Receiver, output: &mut Output) {
        self.signal(Signal::SIGTERM);
        let grace_end = Instant::now() + KILL_GRACE;
        let mut buf = vec![0u8; 16 * 1024];
        let mut eof = false;
        loop {
            tokio::select! {
                _ = child.wait() => break,
                read = reader.read(&mut buf), if !eof => match read {
                    Ok(0) | Err(_) => eof = true,
                    Ok(n) => output.feed(&buf[..n]),
                },
                _ = sleep_until(grace_end) => break,
            }
        }
        self.signal(Signal::SIGKILL);
        let _ = tokio::time::timeout(REAP_TIMEOUT, child.wait()).await;
        // Whatever is still buffered in the pipe, without waiting for more.
        let drain_end = Instant::now() + Duration::from_millis(50);
        while !eof {
            tokio::select! {
                read = reader.read(&mut buf) => match read {
                    Ok(0) | Err(_) => eof = true,
                    Ok(n) => output.feed(&buf[..n]),
                },
                _ = sleep_until(drain_end) => break,
            }
        }
    }

    pub(crate) fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if self.armed {
            self.signal(Signal::SIGKILL);
        }
    }
}

/// The command's output: split into lines for live display, capped for the model.
pub(crate) struct Output {
    collected: HeadTail,
    pending: Vec<u8>,
    live: Option<UnboundedSender<String>>,
    live_bytes: usize,
}

impl Output {
    pub(crate) fn new(max_bytes: usize, live: Option<UnboundedSender<String>>) -> Self {
        Output {
            collected: HeadTail::new(max_bytes.saturating_sub(FOOTER_RESERVE)),
            pending: Vec::new(),
            live,
            live_bytes: 0,
        }
    }

    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        if let Some(last_newline) = self.pending.iter().rposition(|&b| b == b'\n') {
            // UTF-8 sequences never contain b'\n', so this split is safe.
            let lines: Vec<u8> = self.pending.drain(..=last_newline).collect();
            self.emit(&String::from_utf8_lossy(&lines));
        }
        if self.pending.len() > MAX_PENDING_LINE {
            let cut = match std::str::from_utf8(&self.pending) {
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                _ => self.pending.len(),
            };
            let piece: Vec<u8> = self.pending.drain(..cut).collect();
            self.emit(&String::from_utf8_lossy(&piece));
        }
    }

    fn emit(&mut self, text: &str) {
        self.collected.push(text);
        let Some(live) = &self.live else { return };
        if self.live_bytes < MAX_LIVE_BYTES {
            self.live_bytes += text.len();
            let _ = live.send(text.to_string());
            if self.live_bytes >= MAX_LIVE_BYTES {
                let _ = live.send("[live output stopped here; the command goes on]\n".to_string());
            }
        }
    }

    pub(crate) fn finish(mut self) -> String {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.emit(&String::from_utf8_lossy(&rest));
        }
        self.collected.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_context;

    async fn call(ctx: &ToolContext, args: Value) -> ToolOutput {
        Bash.run(args, ctx).await.unwrap()
    }

    /// True once `pid` no longer runs (gone, or a zombie nobody reaped yet).
    use crate::tools::process::test_support::{process_gone, read_pid, wait_for};

    #[tokio::test]
    async fn reports_exit_codes_and_interleaved_output() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = call(
            &ctx,
            json!({"command": "echo out; echo err >&2; echo out2"}),
        )
        .await;
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (false, "out\nerr\nout2\n[exit code 0]")
        );
        let out = call(&ctx, json!({"command": "printf partial; exit 3"})).await;
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (true, "partial\n[exit code 3]")
        );
        let out = call(&ctx, json!({"command": "kill -9 $$"})).await;
        assert_eq!(out.content, "(no output)\n[killed by signal 9 (SIGKILL)]");
        assert!(out.is_error);
    }

    #[tokio::test]
    async fn runs_in_the_workdir_with_empty_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = call(&ctx, json!({"command": "pwd; cat; echo end"})).await;
        assert_eq!(
            out.content,
            format!("{}\nend\n[exit code 0]", ctx.workdir.display())
        );
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = call(
            &ctx,
            json!({"command": "sleep 300 & echo $! > grandchild.pid; echo started; sleep 300", "timeout_secs": 1}),
        )
        .await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with("started\n[timed out after 1 s;"),
            "{}",
            out.content
        );
        let grandchild = read_pid(&ctx.workdir.join("grandchild.pid"));
        wait_for("the grandchild to die", || process_gone(grandchild)).await;
    }

    #[tokio::test]
    async fn cancel_returns_promptly_and_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut ctx = test_context(dir.path());
        ctx.live_output = Some(tx);
        let cancel = ctx.cancel.clone();
        let task = tokio::spawn(async move {
            Bash.run(
                json!({"command": "sleep 300 & echo $! > bg.pid; echo started; sleep 300"}),
                &ctx,
            )
            .await
        });
        let mut seen = String::new();
        while !seen.contains("started\n") {
            seen.push_str(&rx.recv().await.unwrap());
        }
        cancel.cancel();
        let result = tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(result, Err(ToolFatal::Interrupted)));
        let bg = read_pid(&dir.path().join("bg.pid"));
        wait_for("the background job to die", || process_gone(bg)).await;
    }

    #[tokio::test]
    async fn background_job_holding_the_pipe_does_not_hang() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = tokio::time::timeout(
            Duration::from_secs(20),
            call(
                &ctx,
                json!({"command": "sleep 300 & echo $! > bg.pid; echo done"}),
            ),
        )
        .await
        .unwrap();
        assert!(
            out.content
                .starts_with("done\n[exit code 0]\n[background processes"),
            "{}",
            out.content
        );
        // Left running by design; clean up.
        let bg = read_pid(&ctx.workdir.join("bg.pid"));
        let _ = nix::sys::signal::kill(Pid::from_raw(bg), Signal::SIGKILL);
    }

    #[tokio::test]
    async fn dropping_the_call_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut ctx = test_context(dir.path());
        ctx.live_output = Some(tx);
        let task = tokio::spawn(async move {
            Bash.run(
                json!({"command": "sleep 300 & echo $! > bg.pid; echo started; wait"}),
                &ctx,
            )
            .await
        });
        let mut seen = String::new();
        while !seen.contains("started\n") {
            seen.push_str(&rx.recv().await.unwrap());
        }
        task.abort();
        let _ = task.await;
        let bg = read_pid(&dir.path().join("bg.pid"));
        wait_for("the background job to die", || process_gone(bg)).await;
    }

    #[tokio::test]
    async fn long_output_keeps_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = test_context(dir.path());
        ctx.limits.max_output_bytes = 2_000;
        let out = call(&ctx, json!({"command": "seq 1 100000"})).await;
        assert!(!out.is_error);
        assert!(out.content.len() <= 2_000, "{}", out.content.len());
        assert!(out.content.starts_with("1\n2\n3\n"));
        assert!(
            out.content.ends_with("99999\n100000\n[exit code 0]"),
            "{}",
            out.content
        );
        let marker = out
            .content
            .lines()
            .find(|l| l.starts_with("[... "))
            .unwrap();
        assert!(marker.ends_with(" lines) cut ...]"), "{marker}");
    }

    #[tokio::test]
    async fn streams_lines_live() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut ctx = test_context(dir.path());
        ctx.live_output = Some(tx);
        let out = call(
            &ctx,
            json!({"command": "echo one; echo two >&2; printf three"}),
        )
        .await;
        drop(ctx);
        let mut live = String::new();
        while let Some(piece) = rx.recv().await {
            live.push_str(&piece);
        }
        assert_eq!(live, "one\ntwo\nthree");
        assert_eq!(out.content, "one\ntwo\nthree\n[exit code 0]");
    }

    #[tokio::test]
    async fn invalid_arguments_and_access() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = call(&ctx, json!({"timeout_secs": 5})).await;
        assert!(out.is_error && out.content.contains("missing field `command`"));
        let out = call(&ctx, json!({"command": "  "})).await;
        assert_eq!(out.content, "command is empty");
        assert_eq!(
            Bash.access(&json!({"command": "cargo test"}), &ctx),
            Access::NeedsApproval(ApprovalRequestKind::Command {
                command: "cargo test".into(),
                cwd: ctx.workdir.clone()
            })
        );
        assert_eq!(
            Bash.summary(&json!({"command": "cargo build\ncargo test"})),
            "cargo build ..."
        );
    }
}
