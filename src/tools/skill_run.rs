//! The `skill_run` tool: runs a command in a fresh, private workspace (see
//! `workspace.rs`: a read-only copy of the skill's folder where the command runs, and
//! `work/`, `out/`, `runs/<id>/`, `tmp/`, with `SKILL_DIR`, `SKILL_NAME`,
//! `WORKSPACE_DIR`, `SKILLS_DIR`, `WORK_DIR`, `OUTPUT_DIR`, `RUN_DIR` and `TMPDIR` set),
//! deleted when the call ends, stdin empty, in its own process group; when the session
//! has a sandbox, the command may write only in the workspace. The result is one compact JSON object: `exit_code`, `signal` (when
//! killed by one), `timed_out`, `duration_ms`, `stdout`, `stderr` (separately, each kept
//! head-and-tail within its share of the output budget), and for `output_files` the
//! matching files under `WORK_DIR`, inline with a MIME type (text as text, anything else
//! as base64) within limits on count and bytes, plus `files_omitted` saying what was
//! left out and why. The whole object always fits the tool output limit, so it is never
//! cut mid-JSON.
//!
//! With allow or deny lists of command names (config), only one plain command is
//! accepted (no shell syntax), its name checked against the lists, and it runs without a
//! shell; otherwise the command line runs with `bash -c` like the `bash` tool. The
//! process supervisor ([`crate::exec`]) runs it (group kill on timeout, interrupt or
//! abandonment); when the command exits, anything it left running in its group is
//! killed, since its work folder goes away. This module knows the skill catalog and the
//! config's lists, not processes or the approval policy: it declares the command like
//! `bash` does.
//!
//! `checks.rs` holds the pre-run checks (cwd, variables, plain-command splitting, lists,
//! globs); `files.rs` the work folder, the report and the output files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{Access, ToolContext, ToolFatal, ToolFuture, ToolOutput, TypedTool, run_blocking};
use crate::exec::{
    self, Capture, Confinement, EnvChange, Exit, Leftovers, Output, Prompts, Request, Sink, Stdin,
    signal_name,
};
use crate::protocol::ApprovalRequestKind;
use crate::skills::SharedCatalog;

mod checks;
mod files;
mod inputs;
mod workspace;

use checks::{check_env, check_lists, resolve_cwd, shell_quote, split_plain};
use files::Report;
pub use files::{MAX_FILES, MAX_FILES_BYTES};
use workspace::Workspace;

/// Allow and deny lists of command names for `skill_run`. When either is set, only a
/// single plain command (no shell syntax) is accepted and checked against them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLists {
    /// Only these command names may run (`None`: no allow list).
    pub allowed: Option<Vec<String>>,
    /// These command names may not run (`None`: no deny list).
    pub denied: Option<Vec<String>>,
}

impl CommandLists {
    /// True when neither list is set (any shell command line is accepted).
    pub fn is_unrestricted(&self) -> bool {
        self.allowed.is_none() && self.denied.is_none()
    }
}

/// Runs a command in a skill's folder.
pub struct SkillRun {
    catalog: SharedCatalog,
    commands: CommandLists,
    description: String,
}

impl std::fmt::Debug for SkillRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillRun")
            .field("skills", &self.catalog.current().skills().len())
            .field("commands", &self.commands)
            .finish()
    }
}

impl SkillRun {
    /// The tool over `catalog`, restricted by `commands` when either list is set.
    pub fn new(catalog: impl Into<SharedCatalog>, commands: CommandLists) -> Self {
        let catalog = catalog.into();
        let mut description = String::from(
            "Run a command in a fresh workspace, in a read-only copy of a skill's folder \
             (cwd relative to it). Env: SKILL_DIR, WORK_DIR, OUTPUT_DIR=out/, RUN_DIR. \
             Returns JSON: exit_code, stdout, stderr, files matching output_files.",
        );
        if !commands.is_unrestricted() {
            description.push_str(" Only one plain command, no shell syntax.");
            if let Some(allowed) = &commands.allowed {
                let list = allowed.join(", ");
                let list: String = list.chars().take(200).collect();
                description.push_str(&format!(" Allowed: {list}."));
            }
        }
        SkillRun {
            catalog,
            commands,
            description,
        }
    }

    fn available(&self) -> String {
        let catalog = self.catalog.current();
        let names: Vec<&str> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    }
}

/// The arguments of a `skill_run` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    skill: String,
    command: String,
    cwd: Option<String>,
    env: Option<serde_json::Map<String, Value>>,
    timeout: Option<u64>,
    output_files: Option<Vec<String>>,
    outputs: Option<checks::OutputsSpec>,
    save_as_artifacts: Option<bool>,
    omit_inline_content: Option<bool>,
    artifact_prefix: Option<String>,
    inputs: Option<Vec<inputs::InputSpec>>,
}

/// A call that passed every check, ready to run.
#[derive(Debug)]
struct Plan {
    skill_name: String,
    /// Canonical.
    skill_dir: PathBuf,
    /// Canonical, inside `skill_dir`.
    cwd: PathBuf,
    /// `cwd` relative to `skill_dir` (the same folder in the workspace's copy).
    cwd_rel: PathBuf,
    env: Vec<(String, String)>,
    program: Program,
    /// The command as shown for approval: extra variables, then the command.
    shown: String,
    timeout_secs: Option<u64>,
    outputs: Option<files::Collect>,
    /// Checked inputs, staged before the command runs.
    inputs: Vec<inputs::Input>,
    /// What reading the inputs needs from the approval policy.
    input_access: Vec<Access>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Program {
    /// A command line for `bash -c`.
    Shell(String),
    /// A program and its arguments, run without a shell.
    Direct { program: String, args: Vec<String> },
}

impl TypedTool for SkillRun {
    type Args = Args;

    const NAME: &'static str = "skill_run";

    /// Names the skills it can run, so it is built per session.
    fn description(&self) -> &str {
        &self.description
    }

    const PARAMETERS: &'static str = include_str!("schemas/skill_run.json");

    fn access(&self, args: &Args, ctx: &ToolContext) -> Access {
        match self.plan(args, ctx) {
            Ok(plan) => {
                let command = Access::NeedsApproval(ApprovalRequestKind::Command {
                    command: plan.shown,
                    cwd: plan.cwd,
                });
                if plan.input_access.is_empty() {
                    command
                } else {
                    // The inputs are read first, so they are judged first.
                    let mut all = plan.input_access;
                    all.push(command);
                    Access::All(all)
                }
            }
            // Refused calls run nothing: `run` reports the problem.
            Err(_) => Access::ReadOnly,
        }
    }

    fn summary(&self, args: &Args) -> String {
        let (skill, command) = (&args.skill, &args.command);
        let first_line = command.lines().next().unwrap_or("");
        let mut summary = format!("{skill}: ");
        summary.extend(first_line.chars().take(80));
        if first_line.chars().count() > 80 || command.trim_end().contains('\n') {
            summary.push_str(" ...");
        }
        summary
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match self.plan(&args, ctx) {
                Ok(plan) => execute(plan, ctx).await,
                Err(output) => Ok(output),
            }
        })
    }
}

impl SkillRun {
    /// Checks a call: arguments, skill, cwd, variables, command lists, patterns, inputs.
    fn plan(&self, args: &Args, ctx: &ToolContext) -> Result<Plan, ToolOutput> {
        let project = ctx.workdir.as_path();
        let name = args.skill.trim();
        if name.is_empty() || name.contains(['/', '\\']) || name.contains("..") {
            return Err(ToolOutput::error(format!(
                "Invalid skill name {name:?}: give a skill's name, without path separators \
                 or `..`. Available skills: {}",
                self.available()
            )));
        }
        let catalog = self.catalog.current();
        let Some(skill) = catalog.get(name) else {
            return Err(ToolOutput::error(format!(
                "Unknown skill {name:?}. Available skills: {}",
                self.available()
            )));
        };
        let Some(folder) = skill.folder() else {
            return Err(ToolOutput::error(format!(
                "{name:?} is a command: it has no folder of scripts to run"
            )));
        };
        let skill_dir = std::fs::canonicalize(folder).map_err(|e| {
            ToolOutput::error(format!(
                "Cannot open the folder of skill {name:?} ({}): {e}",
                skill.dir.display()
            ))
        })?;
        let cwd = resolve_cwd(&skill_dir, args.cwd.as_deref()).map_err(ToolOutput::error)?;
        let cwd_rel = cwd
            .strip_prefix(&skill_dir)
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let env = check_env(args.env.clone().unwrap_or_default()).map_err(ToolOutput::error)?;
        if args.command.trim().is_empty() {
            return Err(ToolOutput::error("command is empty"));
        }
        let program = if self.commands.is_unrestricted() {
            Program::Shell(args.command.clone())
        } else {
            let words = split_plain(&args.command).map_err(|problem| {
                ToolOutput::error(format!(
                    "Refused: {problem}. skill_run is limited to allowed command names here, \
                     so it accepts one plain command (a program and its arguments, quoted \
                     like in a shell) and runs it without a shell."
                ))
            })?;
            check_lists(&self.commands, &words).map_err(ToolOutput::error)?;
            let Some((program, args)) = words.split_first() else {
                return Err(ToolOutput::error("Refused: no command name."));
            };
            Program::Direct {
                program: program.clone(),
                args: args.to_vec(),
            }
        };
        let outputs = checks::collect(
            args.output_files.as_deref(),
            args.outputs.as_ref(),
            checks::LegacyOutputs {
                save_as_artifacts: args.save_as_artifacts,
                omit_inline_content: args.omit_inline_content,
                artifact_prefix: args.artifact_prefix.as_deref(),
            },
            ctx.artifacts.is_some(),
        )
        .map_err(ToolOutput::error)?;
        let inputs = inputs::check(
            args.inputs.as_deref().unwrap_or_default(),
            project,
            &catalog,
            ctx.artifacts.as_ref(),
        )
        .map_err(ToolOutput::error)?;
        let input_access = inputs::accesses(&inputs, project);
        let mut shown = String::new();
        for (key, value) in &env {
            shown.push_str(&format!("{key}={} ", shell_quote(value)));
        }
        shown.push_str(&args.command);
        Ok(Plan {
            skill_name: skill.name.clone(),
            skill_dir,
            cwd,
            cwd_rel,
            env,
            program,
            shown,
            timeout_secs: args.timeout,
            outputs,
            inputs,
            input_access,
        })
    }
}

async fn execute(plan: Plan, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
    let limits = ctx.limits;
    let timeout_secs = plan
        .timeout_secs
        .unwrap_or(limits.default_bash_timeout_secs)
        .clamp(1, limits.max_bash_timeout_secs.max(1));
    let (name, dir) = (plan.skill_name.clone(), plan.skill_dir.clone());
    let to_stage = plan.inputs.clone();
    let sandboxed = crate::sandbox::session().is_some();
    let prepared = run_blocking(move || {
        let work = Workspace::create(&name, &dir).map_err(|e| format!("skill_run: {e}"))?;
        let staged = inputs::stage(&to_stage, &work, sandboxed)?;
        Ok::<_, String>((work, staged))
    })
    .await?;
    let (work, staged) = match prepared {
        Ok(prepared) => prepared,
        Err(message) => return Ok(ToolOutput::error(message)),
    };
    let request = request(&plan, &work, Duration::from_secs(timeout_secs), ctx);
    let finished = match exec::run(request, &ctx.cancel).await {
        Ok(finished) => finished,
        Err(e) => {
            let what = match &plan.program {
                Program::Shell(_) => "bash",
                Program::Direct { program, .. } => program.as_str(),
            };
            run_blocking(move || drop(work)).await?;
            return Ok(ToolOutput::error(format!(
                "Failed to start `{what}`: {}",
                e.io_error()
            )));
        }
    };
    let duration_ms = u64::try_from(finished.elapsed.as_millis()).unwrap_or(u64::MAX);
    let (exit_code, signal, timed_out) = match finished.exit {
        Exit::Cancelled => {
            run_blocking(move || drop(work)).await?;
            return Err(ToolFatal::Interrupted);
        }
        Exit::Exited { code } => (Some(code), None, false),
        Exit::Signalled { signal } => (
            None,
            Some(signal_name(signal).map_or_else(|| signal.to_string(), str::to_string)),
            false,
        ),
        Exit::TimedOut { .. } => (None, None, true),
    };
    let max = limits.max_output_bytes;
    let report = Report {
        exit_code,
        signal,
        timed_out,
        duration_ms,
        stdout: finished.stdout,
        stderr: finished.stderr,
        inputs: staged,
        files: None,
        files_omitted: Vec::new(),
        files_omitted_more: 0,
        artifact_files: Vec::new(),
        artifact_error: None,
    };
    let outputs = plan.outputs;
    let store = ctx.artifacts.clone();
    let content = run_blocking(move || {
        let content = match outputs {
            Some(collect) => report
                .with_files(&work.root, &collect, store.as_ref(), max)
                .to_json(),
            None => report.to_json(),
        };
        drop(work);
        content
    })
    .await?;
    let success = exit_code == Some(0) && !timed_out;
    Ok(if success {
        ToolOutput::ok(content)
    } else {
        ToolOutput::error(content)
    })
}

/// The request for a checked call: the program in the workspace's copy of the plan's
/// folder with the workspace's variables, stdout and stderr kept apart within their
/// shares of the output budget and both streamed live, leftovers killed with the
/// workspace, and (when the session has a sandbox) writes only in the workspace.
fn request(plan: &Plan, work: &Workspace, timeout: Duration, ctx: &ToolContext) -> Request {
    let cwd = work.skill_dir().join(&plan.cwd_rel);
    let program = match &plan.program {
        Program::Shell(line) => exec::Program::Bash { line: line.clone() },
        Program::Direct { program, args } => exec::Program::Direct {
            // A relative path with a slash means the working folder, not ours.
            program: if program.contains('/') {
                cwd.join(program)
            } else {
                PathBuf::from(program)
            },
            args: args.clone(),
        },
    };
    let mut env: Vec<EnvChange> = plan
        .env
        .iter()
        .map(|(name, value)| EnvChange::set(name, value))
        .collect();
    env.extend([
        EnvChange::set("SKILL_DIR", work.skill_dir()),
        EnvChange::set("SKILL_NAME", &plan.skill_name),
        EnvChange::set("WORKSPACE_DIR", &work.root),
        EnvChange::set("SKILLS_DIR", work.skills_dir()),
        EnvChange::set("WORK_DIR", work.work_dir()),
        EnvChange::set("OUTPUT_DIR", work.output_dir()),
        EnvChange::set("RUN_DIR", work.run_dir()),
        EnvChange::set("TMPDIR", work.tmp_dir()),
    ]);
    let max = ctx.limits.max_output_bytes;
    Request {
        program,
        cwd,
        prompts: Prompts::Suppressed,
        env,
        stdin: Stdin::Null,
        output: Output::Split {
            stdout: Sink {
                capture: Capture::within(max * 2 / 5),
                live: ctx.live_output.clone(),
            },
            stderr: Sink {
                capture: Capture::within(max / 5),
                live: ctx.live_output.clone(),
            },
        },
        timeout,
        leftovers: Leftovers::Kill,
        confinement: ctx
            .writes
            .confine(Confinement::SessionSandboxWritingOnly(work.writable())),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_inputs;
