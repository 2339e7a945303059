//! The `bash` tool: runs a command with `bash -c` (or `sh -c` when bash is missing) in
//! the project directory, stdin empty, through the process supervisor ([`crate::exec`]).
//!
//! stdout and stderr share one pipe, so the model sees them interleaved exactly as they
//! were written (like a terminal would show them), unlabelled. Complete lines stream to
//! `ctx.live_output` as they arrive; the result keeps the head and tail of long output
//! (`truncate.rs`) and ends with the exit code or signal. On timeout or interrupt the
//! whole process group is stopped and the call returns promptly; a background job that
//! keeps the output pipe open cannot hold the call once the main process has exited, and
//! keeps running. This module owns the tool's arguments and wording; it knows nothing of
//! processes beyond the request it hands to `exec`, nor of approval policy beyond
//! declaring the command.

use std::time::Duration;

use serde::Deserialize;

use super::{Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, WorksIn};
use crate::exec::{
    self, Capture, Exit, Leftovers, Output, Pipes, Program, Prompts, Request, Sink, Stdin,
};
use crate::protocol::ApprovalRequestKind;

/// Runs a shell command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bash;

/// The arguments of a `bash` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    command: String,
    timeout_secs: Option<u64>,
    #[allow(dead_code)]
    description: Option<String>,
}

impl TypedTool for Bash {
    type Args = Args;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "bash";
    const DESCRIPTION: &'static str = "Run a shell command with bash in the project directory. Non-interactive: stdin \
         is empty and nothing can prompt. Returns stdout and stderr interleaved (head and \
         tail if long) and the exit code. Background jobs must redirect their output \
         (cmd > log 2>&1 &). Prefer read_file, grep, glob and list over cat, grep and find.";

    const PARAMETERS: &'static str = include_str!("schemas/bash.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        Access::NeedsApproval(ApprovalRequestKind::Command {
            command: args.command.clone(),
            cwd: ctx.workdir.clone(),
        })
    }

    /// Where the command starts (what it then reads is not read off its text).
    fn works_in(&self, _args: &Args, ctx: &ToolContext) -> WorksIn {
        WorksIn::Place {
            real: ctx.workdir.clone(),
        }
    }

    fn summary(&self, args: &Args) -> String {
        let command = &args.command;
        let first_line = command.lines().next().unwrap_or("");
        let mut summary: String = first_line.chars().take(80).collect();
        if summary.len() < command.trim_end().len() {
            summary.push_str(" ...");
        }
        summary
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
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

async fn run_command(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    let request = Request {
        program: Program::BashOrSh {
            line: command.to_string(),
        },
        cwd: ctx.workdir.clone(),
        prompts: Prompts::Suppressed,
        env: Vec::new(),
        stdin: Stdin::Null,
        output: Output::Merged(Sink {
            capture: Capture::within(ctx.limits.max_output_bytes),
            live: ctx.live_output.clone(),
        }),
        timeout,
        leftovers: Leftovers::Leave,
        confinement: ctx.writes.confine(ctx.commands.clone()),
    };
    let finished = match exec::run(request, &ctx.cancel).await {
        Ok(finished) => finished,
        Err(e) => {
            return Ok(ToolOutput::error(format!(
                "Failed to start the command: {}",
                e.io_error()
            )));
        }
    };
    let mut text = finished.stdout;
    if text.is_empty() {
        text.push_str("(no output)\n");
    } else if !text.ends_with('\n') {
        text.push('\n');
    }
    match finished.exit {
        Exit::Cancelled => Err(ToolFatal::Interrupted),
        Exit::TimedOut { after } => Ok(ToolOutput::error(format!(
            "{text}[timed out after {} s; the command and everything it started were \
             killed. Run long jobs in the background with output redirected, or raise \
             timeout_secs]",
            after.as_secs()
        ))),
        exit @ (Exit::Exited { .. } | Exit::Signalled { .. }) => {
            let mut footer = exit.status_line().unwrap_or_default();
            if finished.pipes == Pipes::HeldOpen {
                footer.push_str(
                    "\n[background processes still hold the command's output; it is no \
                     longer captured]",
                );
            }
            let content = format!("{text}{footer}");
            Ok(if exit.success() {
                ToolOutput::ok(content)
            } else {
                ToolOutput::error(content)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Tool, assert_error, prepared, run_tool, test_context};
    use serde_json::json;

    use crate::exec::test_support::{abort_and_expect_killed, expect_killed, read_pid, wait_live};
    use crate::tools::cancel_and_expect_interrupted;
    use nix::sys::signal::Signal;
    use nix::unistd::Pid;

    /// Runs `command` in `dir` as a task until its live output says `started`; the task
    /// and the call's cancellation token.
    async fn start(
        dir: &std::path::Path,
        command: &str,
    ) -> (
        tokio::task::JoinHandle<Result<ToolOutput, ToolFatal>>,
        tokio_util::sync::CancellationToken,
    ) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut ctx = test_context(dir);
        ctx.live_output = Some(tx);
        let cancel = ctx.cancel.clone();
        let args = json!({ "command": command });
        let task = tokio::spawn(async move { Bash.run(args, &ctx).await });
        wait_live(&mut rx, "started\n").await;
        (task, cancel)
    }

    #[tokio::test]
    async fn reports_exit_codes_and_interleaved_output() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = run_tool(
            &Bash,
            &ctx,
            json!({"command": "echo out; echo err >&2; echo out2"}),
        )
        .await;
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (false, "out\nerr\nout2\n[exit code 0]")
        );
        let out = run_tool(&Bash, &ctx, json!({"command": "printf partial; exit 3"})).await;
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (true, "partial\n[exit code 3]")
        );
        let out = run_tool(&Bash, &ctx, json!({"command": "kill -9 $$"})).await;
        assert_eq!(out.content, "(no output)\n[killed by signal 9 (SIGKILL)]");
        assert!(out.is_error);
    }

    #[tokio::test]
    async fn runs_in_the_workdir_with_empty_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = run_tool(&Bash, &ctx, json!({"command": "pwd; cat; echo end"})).await;
        assert_eq!(
            out.content,
            format!("{}\nend\n[exit code 0]", ctx.workdir.display())
        );
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = run_tool(&Bash,
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
        expect_killed(&ctx.workdir.join("grandchild.pid"), "the grandchild to die").await;
    }

    #[tokio::test]
    async fn cancel_returns_promptly_and_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let line = "sleep 300 & echo $! > bg.pid; echo started; sleep 300";
        let (task, cancel) = start(dir.path(), line).await;
        cancel_and_expect_interrupted(&cancel, task).await;
        expect_killed(&dir.path().join("bg.pid"), "the background job to die").await;
    }

    #[tokio::test]
    async fn background_job_holding_the_pipe_does_not_hang() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let out = tokio::time::timeout(
            Duration::from_secs(20),
            run_tool(
                &Bash,
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
        let line = "sleep 300 & echo $! > bg.pid; echo started; wait";
        let (task, _cancel) = start(dir.path(), line).await;
        abort_and_expect_killed(task, &dir.path().join("bg.pid")).await;
    }

    #[tokio::test]
    async fn long_output_keeps_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = test_context(dir.path());
        ctx.limits.max_output_bytes = 2_000;
        let out = run_tool(&Bash, &ctx, json!({"command": "seq 1 100000"})).await;
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
        let out = run_tool(
            &Bash,
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
        let out = run_tool(&Bash, &ctx, json!({"timeout_secs": 5})).await;
        assert_error(&out, "missing field `command`");
        let out = run_tool(&Bash, &ctx, json!({"command": "  "})).await;
        assert_eq!(out.content, "command is empty");
        assert_eq!(
            prepared(&Bash, json!({"command": "cargo test"})).access(&ctx),
            Access::NeedsApproval(ApprovalRequestKind::Command {
                command: "cargo test".into(),
                cwd: ctx.workdir.clone()
            })
        );
        assert_eq!(
            prepared(&Bash, json!({"command": "cargo build\ncargo test"})).summary(),
            "cargo build ..."
        );
    }
}
