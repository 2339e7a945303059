//! One tool a skill bundles in its `tools.json` ([`crate::skills::bundle`]), as a
//! [`Tool`](crate::tools::Tool): a call runs the declared command in the skill's folder with the arguments
//! as JSON on stdin (one line), `SKILL_DIR`, `SKILL_NAME` and `PROJECT_DIR` set, in its
//! own process group (through the process supervisor, [`crate::exec`]), and returns its
//! stdout. A non-zero exit, a signal or a timeout makes the result an error for the
//! model, with stderr; on success stderr (warnings, progress) follows stdout under a
//! `[stderr]` line. On timeout or interrupt the whole group is stopped.
//!
//! The command is declared for approval like `bash`'s (the approval mode applies). This
//! module knows nothing of loading or unloading: `use_skill` builds these tools and puts
//! them in the registry.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool};
use crate::exec::{
    self, Capture, Confinement, EnvChange, Exit, Leftovers, Output, Program, Prompts, Request,
    Sink, Stdin,
};
use crate::protocol::ApprovalRequestKind;
use crate::skills::bundle::{ToolCommand, ToolDecl};

/// Longest argument JSON shown in an approval request.
const MAX_SHOWN_ARGS: usize = 200;

/// A tool from a skill's `tools.json`.
#[derive(Debug, Clone)]
pub struct SkillTool {
    skill: String,
    dir: PathBuf,
    decl: ToolDecl,
}

impl SkillTool {
    /// The tool `decl` of skill `skill`, whose folder is `dir` (canonical).
    pub fn new(skill: &str, dir: PathBuf, decl: ToolDecl) -> Self {
        SkillTool {
            skill: skill.to_string(),
            dir,
            decl,
        }
    }

    /// The skill that brought it.
    pub fn skill(&self) -> &str {
        &self.skill
    }

    /// The request for one call: `input` on stdin, stdout kept for the model, stderr
    /// streamed live too.
    fn request(&self, input: String, timeout: Duration, ctx: &ToolContext) -> Request {
        let program = match &self.decl.command {
            ToolCommand::Script { path, .. } => Program::Direct {
                program: path.clone(),
                args: Vec::new(),
            },
            ToolCommand::Line(line) => Program::Bash { line: line.clone() },
        };
        let max = ctx.limits.max_output_bytes;
        let mut stdin = input.into_bytes();
        stdin.push(b'\n');
        Request {
            program,
            cwd: self.dir.clone(),
            prompts: Prompts::Suppressed,
            env: vec![
                EnvChange::set("SKILL_DIR", &self.dir),
                EnvChange::set("SKILL_NAME", &self.skill),
                EnvChange::set("PROJECT_DIR", &ctx.workdir),
            ],
            stdin: Stdin::Bytes(stdin),
            output: Output::Split {
                stdout: Sink {
                    capture: Capture::within(max * 3 / 5),
                    live: None,
                },
                stderr: Sink {
                    capture: Capture::within(max / 5),
                    live: ctx.live_output.clone(),
                },
            },
            timeout,
            leftovers: Leftovers::Leave,
            confinement: ctx.writes.confine(Confinement::SessionSandbox),
        }
    }
}

impl TypedTool for SkillTool {
    /// Whatever object the skill's schema describes: it goes to the command as it came.
    type Args = Map<String, Value>;

    fn name(&self) -> &str {
        &self.decl.name
    }

    fn description(&self) -> &str {
        &self.decl.description
    }

    fn parameters(&self) -> Value {
        self.decl.parameters.clone()
    }

    fn access(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Access {
        let mut shown = stdin_json(args);
        if shown.len() > MAX_SHOWN_ARGS {
            let cut = (0..=MAX_SHOWN_ARGS)
                .rev()
                .find(|&i| shown.is_char_boundary(i))
                .unwrap_or(0);
            shown.truncate(cut);
            shown.push('…');
        }
        Access::NeedsApproval(ApprovalRequestKind::Command {
            command: format!("{}  # stdin: {shown}", self.decl.command.display()),
            cwd: self.dir.clone(),
        })
    }

    fn summary(&self, args: &Map<String, Value>) -> String {
        let mut s: String = stdin_json(args).chars().take(80).collect();
        if s == "{}" {
            s.clear();
        }
        s
    }

    fn execute<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let limits = ctx.limits;
            let timeout = self
                .decl
                .timeout_secs
                .unwrap_or(limits.default_bash_timeout_secs)
                .clamp(1, limits.max_bash_timeout_secs.max(1));
            execute(self, stdin_json(&args), Duration::from_secs(timeout), ctx).await
        })
    }
}

/// The arguments as the command reads them: one line of JSON.
fn stdin_json(args: &Map<String, Value>) -> String {
    Value::Object(args.clone()).to_string()
}

async fn execute(
    tool: &SkillTool,
    input: String,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    let finished = match exec::run(tool.request(input, timeout, ctx), &ctx.cancel).await {
        Ok(finished) => finished,
        Err(e) => {
            return Ok(ToolOutput::error(format!(
                "Failed to start `{}` (tool {} of skill {}): {}",
                tool.decl.command.display(),
                tool.decl.name,
                tool.skill,
                e.io_error()
            )));
        }
    };
    let stdout = finished.stdout;
    let stderr = finished.stderr;
    let what = match finished.exit {
        Exit::Cancelled => return Err(ToolFatal::Interrupted),
        Exit::TimedOut { after } => format!(
            "[timed out after {} s; the command and everything it started were killed]",
            after.as_secs()
        ),
        exit if exit.success() => {
            let mut content = stdout;
            if content.is_empty() {
                content.push_str("(no output)");
            }
            if !stderr.trim().is_empty() {
                if !content.ends_with('\n') {
                    content.push('\n');
                }
                content.push_str("[stderr]\n");
                content.push_str(stderr.trim_end());
            }
            return Ok(ToolOutput::ok(content));
        }
        exit => exit.status_line().unwrap_or_default(),
    };
    Ok(ToolOutput::error(failure(&what, &stdout, &stderr)))
}

/// An error result: what happened, then stderr and stdout when there are any.
fn failure(what: &str, stdout: &str, stderr: &str) -> String {
    let mut out = what.to_string();
    for (label, text) in [("stderr", stderr), ("stdout", stdout)] {
        if !text.trim().is_empty() {
            out.push_str(&format!("\n[{label}]\n{}", text.trim_end()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::bundle::parse;
    use crate::tools::cancel_and_expect_interrupted;
    use crate::tools::{Tool, assert_error, prepared, test_context};
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    use tokio::time::Instant;

    /// A skill folder with an executable `scripts/tool.sh` holding `script`.
    fn skill(script: &str) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        let path = dir.join("scripts/tool.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = std::fs::canonicalize(dir).unwrap();
        (tmp, dir)
    }

    fn tool(dir: &Path, decl: Value) -> SkillTool {
        let decl = parse(&json!([decl]).to_string(), dir).unwrap().remove(0);
        SkillTool::new("demo", dir.to_path_buf(), decl)
    }

    fn script_tool(dir: &Path) -> SkillTool {
        tool(
            dir,
            json!({
                "name": "demo_tool", "description": "Demo", "command": "scripts/tool.sh",
                "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
            }),
        )
    }

    #[tokio::test]
    async fn arguments_arrive_as_json_on_stdin_and_stdout_comes_back() {
        let (_tmp, dir) = skill("cat; echo; pwd; echo \"$SKILL_NAME $PROJECT_DIR\"");
        let project = tempfile::tempdir().unwrap();
        let ctx = test_context(project.path());
        let t = script_tool(&dir);
        let out = t.run(json!({"n": 3}), &ctx).await.unwrap();
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            format!(
                "{{\"n\":3}}\n\n{}\ndemo {}\n",
                dir.display(),
                ctx.workdir.display()
            )
        );
    }

    #[tokio::test]
    async fn command_lines_run_in_the_skill_folder() {
        let (_tmp, dir) = skill("true");
        let t = tool(
            &dir,
            json!({"name": "line", "description": "d", "command": "read -r x; echo \"got $x\" >&2; echo ok"}),
        );
        let ctx = test_context(&dir);
        let out = t.run(json!({"a": "b"}), &ctx).await.unwrap();
        assert_eq!(
            (out.is_error, out.content.as_str()),
            (false, "ok\n[stderr]\ngot {\"a\":\"b\"}")
        );
    }

    #[tokio::test]
    async fn failures_are_errors_with_stderr_and_stdout() {
        let (_tmp, dir) = skill("echo partial; echo 'bad input' >&2; exit 4");
        let ctx = test_context(&dir);
        let out = script_tool(&dir).run(json!({"n": 1}), &ctx).await.unwrap();
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "[exit code 4]\n[stderr]\nbad input\n[stdout]\npartial"
        );
        // Arguments that break the declared schema never reach the command.
        let out = script_tool(&dir).run(json!({}), &ctx).await.unwrap();
        assert_error(&out, "missing field `n`");
        let out = script_tool(&dir)
            .run(json!({"n": "x"}), &ctx)
            .await
            .unwrap();
        assert_error(&out, "must be an integer");
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let (_tmp, dir) = skill("sleep 300 & echo $! > bg.pid; echo started; sleep 300");
        let t = tool(
            &dir,
            json!({"name": "slow", "description": "d", "command": "scripts/tool.sh", "timeout_secs": 1}),
        );
        let out = t.run(json!({}), &test_context(&dir)).await.unwrap();
        assert!(out.is_error);
        assert!(
            out.content.starts_with("[timed out after 1 s;")
                && out.content.ends_with("[stdout]\nstarted"),
            "{}",
            out.content
        );
        let pid: i32 = std::fs::read_to_string(dir.join("bg.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        wait_gone(pid).await;
    }

    async fn wait_gone(pid: i32) {
        let what = format!("process {pid} to go away");
        crate::exec::test_support::wait_for(&what, || crate::exec::test_support::process_gone(pid))
            .await;
    }

    #[tokio::test]
    async fn cancel_interrupts_and_kills() {
        let (_tmp, dir) = skill("echo $$ > main.pid; sleep 300");
        let ctx = test_context(&dir);
        let cancel = ctx.cancel.clone();
        let t = tool(
            &dir,
            json!({"name": "slow", "description": "d", "command": "scripts/tool.sh"}),
        );
        let pid_file = dir.join("main.pid");
        let task = tokio::spawn(async move { t.run(json!({}), &ctx).await });
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n')) {
            assert!(Instant::now() < deadline, "the script never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel_and_expect_interrupted(&cancel, task).await;
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        wait_gone(pid).await;
    }

    #[test]
    fn access_asks_like_bash_with_the_script_and_its_input() {
        let (_tmp, dir) = skill("true");
        let t = script_tool(&dir);
        let ctx = test_context(&dir);
        assert_eq!(
            prepared(&t, json!({"n": 2})).access(&ctx),
            Access::NeedsApproval(ApprovalRequestKind::Command {
                command: format!(
                    "{}  # stdin: {{\"n\":2}}",
                    dir.join("scripts/tool.sh").display()
                ),
                cwd: dir.clone(),
            })
        );
        let long = "é".repeat(300);
        let Access::NeedsApproval(ApprovalRequestKind::Command { command, .. }) =
            prepared(&t, json!({ "n": 1, "s": long })).access(&ctx)
        else {
            panic!("not a command")
        };
        assert!(command.ends_with('…') && command.len() < 400, "{command}");
        assert_eq!(prepared(&t, json!({"n": 2})).summary(), "{\"n\":2}");
        assert_eq!(t.skill(), "demo");
    }
}
