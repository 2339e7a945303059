//! The `skill_run` tool: runs a command rooted at a skill's folder, with `SKILL_DIR`,
//! `SKILL_NAME`, `WORK_DIR` (a fresh, private folder under the system temp dir, deleted
//! when the call ends) and `OUTPUT_DIR` (`$WORK_DIR/output`) set, stdin empty, in its own
//! process group. The result is one compact JSON object: `exit_code`, `signal` (when
//! killed by one), `timed_out`, `duration_ms`, `stdout`, `stderr` (separately, each kept
//! head-and-tail within its share of the output budget), and for `output_files` the
//! matching files under `WORK_DIR`, inline with a MIME type (text as text, anything else
//! as base64) within limits on count and bytes, plus `files_omitted` saying what was
//! left out and why. The whole object always fits the tool output limit, so it is never
//! cut mid-JSON.
//!
//! With allow or deny lists of command names (config), only one plain command is
//! accepted (no shell syntax), its name checked against the lists, and it runs without a
//! shell; otherwise the command line runs with `bash -c` like the `bash` tool. Process
//! handling (group kill on timeout, interrupt or abandonment) reuses `bash.rs`. When the
//! command exits, anything it left running in its group is killed, since its work folder
//! goes away. This module knows the skill catalog and the config's lists, not the
//! approval policy: it declares the command like `bash` does.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Component, Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::bash::{DRAIN_AFTER_EXIT, KILL_GRACE, Output, ProcessGroup, REAP_TIMEOUT};
use super::{
    Access, Tool, ToolContext, ToolFatal, ToolFuture, ToolOutput, parse_args, run_blocking,
};
use crate::config::CommandLists;
use crate::protocol::ApprovalRequestKind;
use crate::skills::Catalog;

/// Output files returned per call at most.
pub const MAX_FILES: usize = 20;
/// Bytes of inline file content per call at most (also bounded by the output limit).
pub const MAX_FILES_BYTES: usize = 256 * 1024;
/// Entries visited below `WORK_DIR` when matching `output_files`.
const MAX_WALK_ENTRIES: usize = 10_000;
/// `output_files` patterns per call at most.
const MAX_PATTERNS: usize = 20;
/// Room kept for the list of omitted files.
const OMITTED_RESERVE: usize = 1_500;
/// Variables skill_run sets itself.
const RESERVED_ENV: [&str; 4] = ["SKILL_DIR", "SKILL_NAME", "WORK_DIR", "OUTPUT_DIR"];
/// Variables that change which code runs (search paths, preloads, startup hooks).
const INJECTION_ENV: [&str; 22] = [
    "PATH",
    "IFS",
    "ENV",
    "BASH_ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "CDPATH",
    "PS4",
    "PROMPT_COMMAND",
    "GCONV_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PERL5LIB",
    "PERLLIB",
    "PERL5OPT",
    "RUBYLIB",
    "RUBYOPT",
    "NODE_PATH",
    "NODE_OPTIONS",
    "CLASSPATH",
    "JAVA_TOOL_OPTIONS",
];
/// Prefixes of variables refused for the same reason.
const INJECTION_PREFIXES: [&str; 3] = ["LD_", "DYLD_", "BASH_FUNC_"];

/// Runs a command in a skill's folder.
pub struct SkillRun {
    catalog: Arc<Catalog>,
    commands: CommandLists,
    description: String,
}

impl std::fmt::Debug for SkillRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillRun")
            .field("skills", &self.catalog.skills().len())
            .field("commands", &self.commands)
            .finish()
    }
}

impl SkillRun {
    /// The tool over `catalog`, restricted by `commands` when either list is set.
    pub fn new(catalog: Arc<Catalog>, commands: CommandLists) -> Self {
        let mut description = String::from(
            "Run a command in a skill's folder (cwd relative to it). Sets SKILL_DIR, \
             SKILL_NAME, WORK_DIR (fresh, deleted after the call) and OUTPUT_DIR \
             ($WORK_DIR/output). Returns JSON: exit_code, timed_out, duration_ms, stdout, \
             stderr, and the files matching output_files inline.",
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
        let names: Vec<&str> = self
            .catalog
            .skills()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    skill: String,
    command: String,
    cwd: Option<String>,
    env: Option<serde_json::Map<String, Value>>,
    timeout: Option<u64>,
    output_files: Option<Vec<String>>,
}

/// A call that passed every check, ready to run.
#[derive(Debug)]
struct Plan {
    skill_name: String,
    /// Canonical.
    skill_dir: PathBuf,
    /// Canonical, inside `skill_dir`.
    cwd: PathBuf,
    env: Vec<(String, String)>,
    program: Program,
    /// The command as shown for approval: extra variables, then the command.
    shown: String,
    timeout_secs: Option<u64>,
    outputs: Option<GlobSet>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Program {
    /// A command line for `bash -c`.
    Shell(String),
    /// A program and its arguments, run without a shell.
    Direct(Vec<String>),
}

impl Tool for SkillRun {
    fn name(&self) -> &str {
        "skill_run"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "Skill name."},
                "command": {"type": "string", "description": "The command line."},
                "cwd": {"type": "string", "description": "Folder relative to the skill's folder."},
                "env": {"type": "object", "description": "Extra string environment variables."},
                "timeout": {"type": "integer", "description": "Seconds before it is killed."},
                "output_files": {"type": "array", "items": {"type": "string"}, "description": "Globs relative to WORK_DIR (e.g. output/*) to return."}
            },
            "required": ["skill", "command"]
        })
    }

    fn access(&self, args: &Value, _ctx: &ToolContext) -> Access {
        match self.prepare(args) {
            Ok(plan) => Access::NeedsApproval(ApprovalRequestKind::Command {
                command: plan.shown,
                cwd: plan.cwd,
            }),
            // Refused calls run nothing: `run` reports the problem.
            Err(_) => Access::ReadOnly,
        }
    }

    fn summary(&self, args: &Value) -> String {
        let skill = args.get("skill").and_then(Value::as_str).unwrap_or("?");
        let command = args.get("command").and_then(Value::as_str).unwrap_or("?");
        let first_line = command.lines().next().unwrap_or("");
        let mut summary = format!("{skill}: ");
        summary.extend(first_line.chars().take(80));
        if first_line.chars().count() > 80 || command.trim_end().contains('\n') {
            summary.push_str(" ...");
        }
        summary
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match self.prepare(&args) {
                Ok(plan) => execute(plan, ctx).await,
                Err(output) => Ok(output),
            }
        })
    }
}

impl SkillRun {
    /// Checks a call: arguments, skill, cwd, variables, command lists, patterns.
    fn prepare(&self, args: &Value) -> Result<Plan, ToolOutput> {
        let args: Args = parse_args(self.name(), args, &self.parameters())?;
        let name = args.skill.trim();
        if name.is_empty() || name.contains(['/', '\\']) || name.contains("..") {
            return Err(ToolOutput::error(format!(
                "Invalid skill name {name:?}: give a skill's name, without path separators \
                 or `..`. Available skills: {}",
                self.available()
            )));
        }
        let Some(skill) = self.catalog.get(name) else {
            return Err(ToolOutput::error(format!(
                "Unknown skill {name:?}. Available skills: {}",
                self.available()
            )));
        };
        let skill_dir = std::fs::canonicalize(&skill.dir).map_err(|e| {
            ToolOutput::error(format!(
                "Cannot open the folder of skill {name:?} ({}): {e}",
                skill.dir.display()
            ))
        })?;
        let cwd = resolve_cwd(&skill_dir, args.cwd.as_deref()).map_err(ToolOutput::error)?;
        let env = check_env(args.env.unwrap_or_default()).map_err(ToolOutput::error)?;
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
            Program::Direct(words)
        };
        let outputs = match &args.output_files {
            Some(patterns) => Some(output_globs(patterns).map_err(ToolOutput::error)?),
            None => None,
        };
        let mut shown = String::new();
        for (key, value) in &env {
            shown.push_str(&format!("{key}={} ", shell_quote(value)));
        }
        shown.push_str(&args.command);
        Ok(Plan {
            skill_name: skill.name.clone(),
            skill_dir,
            cwd,
            env,
            program,
            shown,
            timeout_secs: args.timeout,
            outputs,
        })
    }
}

/// The working directory: `cwd` below the (canonical) skill folder, canonicalised, and
/// still inside it (so neither `..` nor a symlink can lead out).
fn resolve_cwd(skill_dir: &Path, cwd: Option<&str>) -> Result<PathBuf, String> {
    let Some(cwd) = cwd.map(str::trim).filter(|c| !c.is_empty() && *c != ".") else {
        return Ok(skill_dir.to_path_buf());
    };
    let relative = Path::new(cwd);
    if relative.is_absolute() {
        return Err(format!(
            "cwd {cwd:?} must be relative to the skill's folder, not absolute"
        ));
    }
    let joined = skill_dir.join(relative);
    let resolved = std::fs::canonicalize(&joined)
        .map_err(|e| format!("cwd {cwd:?} does not exist in the skill's folder: {e}"))?;
    if !resolved.starts_with(skill_dir) {
        return Err(format!(
            "cwd {cwd:?} leads outside the skill's folder ({}); use a folder inside it",
            skill_dir.display()
        ));
    }
    if !resolved.is_dir() {
        return Err(format!("cwd {cwd:?} is not a folder"));
    }
    Ok(resolved)
}

/// Extra variables: string values, valid names, none that skill_run sets itself or that
/// would change which code runs.
fn check_env(env: serde_json::Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let mut checked = Vec::with_capacity(env.len());
    for (name, value) in env {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "env: {name:?} is not a valid variable name (letters, digits, _)"
            ));
        }
        if RESERVED_ENV.contains(&name.as_str()) {
            return Err(format!(
                "env: {name} is set by skill_run itself and cannot be overridden"
            ));
        }
        if INJECTION_ENV.contains(&name.as_str())
            || INJECTION_PREFIXES.iter().any(|p| name.starts_with(p))
        {
            return Err(format!(
                "env: {name} is refused: it changes which programs or libraries run"
            ));
        }
        let Value::String(value) = value else {
            return Err(format!("env: the value of {name} must be a string"));
        };
        if value.contains('\0') {
            return Err(format!("env: the value of {name} contains a NUL byte"));
        }
        checked.push((name, value));
    }
    Ok(checked)
}

/// Splits one plain command into words with shell-like quoting ('...', "...", \x), and
/// refuses anything a shell would treat as syntax: separators, pipes, redirections,
/// substitutions, globs, variable assignments, comments, newlines.
fn split_plain(command: &str) -> Result<Vec<String>, String> {
    let syntax = |what: &str| Err(format!("`{what}` is shell syntax"));
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\n' | '\r' => return Err("a newline is shell syntax (one command only)".into()),
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated \" quote".into()),
                        },
                        Some('$') => return syntax("$"),
                        Some('`') => return syntax("`"),
                        Some(c) => word.push(c),
                        None => return Err("unterminated \" quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n' | '\r') | None => return syntax("\\"),
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
            },
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '`' | '$' | '*' | '?' | '[' | '{' | '}' => {
                let mut what = c.to_string();
                if let Some(&next) = chars.peek()
                    && matches!((c, next), ('&', '&') | ('|', '|') | ('$', '(') | ('>', '>'))
                {
                    what.push(next);
                }
                return syntax(&what);
            }
            '~' | '#' if !in_word => return syntax(&c.to_string()),
            '=' if words.is_empty() => {
                return Err(
                    "a variable assignment before the command is shell syntax (pass variables \
                     in env)"
                        .into(),
                );
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.first().is_none_or(String::is_empty) {
        return Err("no command name".into());
    }
    Ok(words)
}

/// The command name as the lists see it: the basename of the first word.
fn command_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Deny wins; with an allow list the name must be on it.
fn check_lists(lists: &CommandLists, words: &[String]) -> Result<(), String> {
    let name = words.first().map(|w| command_name(w)).unwrap_or("");
    let listed = |list: &[String]| list.iter().any(|entry| command_name(entry) == name);
    if lists.denied.as_deref().is_some_and(listed) {
        return Err(format!("Refused: `{name}` is on skill_run's deny list."));
    }
    if let Some(allowed) = &lists.allowed
        && !listed(allowed)
    {
        let allowed = if allowed.is_empty() {
            "(none)".to_string()
        } else {
            allowed.join(", ")
        };
        return Err(format!(
            "Refused: `{name}` is not on skill_run's allow list. Allowed commands: {allowed}."
        ));
    }
    Ok(())
}

/// The `output_files` patterns as one set, matched against `/`-separated paths relative
/// to `WORK_DIR` (`*` stays within a folder; `**` crosses folders).
fn output_globs(patterns: &[String]) -> Result<GlobSet, String> {
    if patterns.len() > MAX_PATTERNS {
        return Err(format!(
            "output_files: at most {MAX_PATTERNS} patterns, got {}",
            patterns.len()
        ));
    }
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let path = Path::new(pattern);
        if pattern.trim().is_empty()
            || path.is_absolute()
            || path.components().any(|c| c == Component::ParentDir)
        {
            return Err(format!(
                "output_files: {pattern:?} must be a glob relative to WORK_DIR, without `..` \
                 (e.g. \"output/*.png\")"
            ));
        }
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("output_files: {e}"))?;
        set.add(glob);
    }
    set.build().map_err(|e| format!("output_files: {e}"))
}

/// `value` quoted for display in a shell-like command line.
fn shell_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,=+@%".contains(c));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

/// A fresh, private work folder under the system temp dir, deleted on drop.
#[derive(Debug)]
struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    fn create() -> io::Result<WorkDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut last_error = None;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!(
                "harness9-skill-run-{}-{nanos:08x}-{n}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    // From here on, drop removes it.
                    let mut work = WorkDir { path };
                    work.path = std::fs::canonicalize(&work.path)?;
                    std::fs::DirBuilder::new()
                        .mode(0o700)
                        .create(work.output_dir())?;
                    return Ok(work);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_error.unwrap_or_else(|| io::Error::other("no free work folder name")))
    }

    fn output_dir(&self) -> PathBuf {
        self.path.join("output")
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// How the wait for the command ended.
enum Ending {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

async fn execute(plan: Plan, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
    let limits = ctx.limits;
    let timeout_secs = plan
        .timeout_secs
        .unwrap_or(limits.default_bash_timeout_secs)
        .clamp(1, limits.max_bash_timeout_secs.max(1));
    let work = match run_blocking(WorkDir::create).await? {
        Ok(work) => work,
        Err(e) => {
            return Ok(ToolOutput::error(format!(
                "Cannot create a work folder in {}: {e}",
                std::env::temp_dir().display()
            )));
        }
    };
    let started = Instant::now();
    let mut child = match build(&plan, &work).and_then(|mut cmd| cmd.spawn()) {
        Ok(child) => child,
        Err(e) => {
            let what = match &plan.program {
                Program::Shell(_) => "bash",
                Program::Direct(words) => words.first().map_or("", String::as_str),
            };
            run_blocking(move || drop(work)).await?;
            return Ok(ToolOutput::error(format!("Failed to start `{what}`: {e}")));
        }
    };
    let group = ProcessGroup {
        pgid: child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
        armed: true,
    };
    let max = limits.max_output_bytes;
    let mut streams = Streams {
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        out: Output::new(max * 2 / 5, ctx.live_output.clone()),
        err: Output::new(max / 5, ctx.live_output.clone()),
        out_buf: vec![0; 16 * 1024],
        err_buf: vec![0; 16 * 1024],
    };
    let ending = wait(
        &mut child,
        &mut streams,
        Duration::from_secs(timeout_secs),
        &ctx.cancel,
    )
    .await;
    match ending {
        // Whatever it left running loses its work folder: stop it.
        Ending::Exited(_) => group.signal(Signal::SIGKILL),
        Ending::TimedOut | Ending::Cancelled => {
            terminate(&group, &mut child, &mut streams).await;
        }
    }
    group.disarm();
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if matches!(ending, Ending::Cancelled) {
        run_blocking(move || drop(work)).await?;
        return Err(ToolFatal::Interrupted);
    }
    let (exit_code, signal, timed_out) = match ending {
        Ending::Exited(status) => (
            status.code(),
            status.signal().map(|s| {
                Signal::try_from(s).map_or_else(|_| s.to_string(), |s| s.as_str().to_string())
            }),
            false,
        ),
        _ => (None, None, true),
    };
    let report = Report {
        exit_code,
        signal,
        timed_out,
        duration_ms,
        stdout: streams.out.finish(),
        stderr: streams.err.finish(),
        files: None,
        files_omitted: Vec::new(),
        files_omitted_more: 0,
    };
    let outputs = plan.outputs;
    let content = run_blocking(move || {
        let content = match outputs {
            Some(globs) => report.with_files(&work.path, &globs, max).to_json(),
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

fn build(plan: &Plan, work: &WorkDir) -> io::Result<Command> {
    let mut cmd = match &plan.program {
        Program::Shell(line) => {
            let mut cmd = Command::new("bash");
            cmd.arg("-c").arg(line);
            cmd
        }
        Program::Direct(words) => {
            let (program, args) = words
                .split_first()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command name"))?;
            // A relative path with a slash means the working folder, not ours.
            let program = if program.contains('/') {
                plan.cwd.join(program)
            } else {
                PathBuf::from(program)
            };
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
    };
    cmd.current_dir(&plan.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .env("SKILL_DIR", &plan.skill_dir)
        .env("SKILL_NAME", &plan.skill_name)
        .env("WORK_DIR", &work.path)
        .env("OUTPUT_DIR", work.output_dir())
        .process_group(0)
        .kill_on_drop(true);
    Ok(cmd)
}

/// The command's stdout and stderr, read side by side, each capped head-and-tail.
struct Streams {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    out: Output,
    err: Output,
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
}

impl Streams {
    fn done(&self) -> bool {
        self.stdout.is_none() && self.stderr.is_none()
    }

    /// Reads what either stream has next (cancel-safe: nothing is lost when dropped).
    /// Pends forever once both are closed.
    async fn read_some(&mut self) {
        let Streams {
            stdout,
            stderr,
            out,
            err,
            out_buf,
            err_buf,
        } = self;
        tokio::select! {
            read = read_open(stdout, out_buf) => match read {
                Ok(0) | Err(_) => *stdout = None,
                Ok(n) => out.feed(&out_buf[..n]),
            },
            read = read_open(stderr, err_buf) => match read {
                Ok(0) | Err(_) => *stderr = None,
                Ok(n) => err.feed(&err_buf[..n]),
            },
        }
    }
}

async fn read_open<R: AsyncRead + Unpin>(
    reader: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match reader {
        Some(reader) => reader.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Waits until the main process exits and both streams close (or stay held by
/// background jobs past a short drain), the timeout passes, or the call is cancelled.
async fn wait(
    child: &mut Child,
    streams: &mut Streams,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ending {
    let deadline = Instant::now() + timeout;
    let mut status: Option<ExitStatus> = None;
    let mut drain_until: Option<Instant> = None;
    loop {
        if let Some(status) = status
            && streams.done()
        {
            return Ending::Exited(status);
        }
        let open = !streams.done();
        tokio::select! {
            _ = cancel.cancelled() => return Ending::Cancelled,
            _ = streams.read_some(), if open => {}
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
                    return Ending::Exited(status);
                }
            }
        }
    }
}

/// SIGTERM to the group; SIGKILL once the main process exits or the grace passes; the
/// output read meanwhile is kept.
async fn terminate(group: &ProcessGroup, child: &mut Child, streams: &mut Streams) {
    group.signal(Signal::SIGTERM);
    let grace_end = Instant::now() + KILL_GRACE;
    loop {
        let open = !streams.done();
        tokio::select! {
            _ = child.wait() => break,
            _ = streams.read_some(), if open => {}
            _ = sleep_until(grace_end) => break,
        }
    }
    group.signal(Signal::SIGKILL);
    let _ = tokio::time::timeout(REAP_TIMEOUT, child.wait()).await;
    let drain_end = Instant::now() + Duration::from_millis(50);
    while !streams.done() {
        tokio::select! {
            _ = streams.read_some() => {}
            _ = sleep_until(drain_end) => break,
        }
    }
}

/// The result the model sees, as compact JSON.
#[derive(Debug, Serialize)]
struct Report {
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    timed_out: bool,
    duration_ms: u64,
    stdout: String,
    stderr: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<Vec<FileEntry>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    files_omitted: Vec<Omitted>,
    #[serde(skip_serializing_if = "is_zero")]
    files_omitted_more: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One returned file.
#[derive(Debug, Serialize)]
struct FileEntry {
    /// Relative to `WORK_DIR`, `/`-separated.
    path: String,
    mime: &'static str,
    size: u64,
    /// `utf-8` (content is the text) or `base64`.
    encoding: &'static str,
    content: String,
}

/// A matching file that was left out.
#[derive(Debug, Serialize)]
struct Omitted {
    path: String,
    size: u64,
    reason: String,
}

impl Report {
    fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Adds the files under `work` matching `globs`, keeping the whole JSON within
    /// `max_output` bytes.
    fn with_files(mut self, work: &Path, globs: &GlobSet, max_output: usize) -> Report {
        self.files = Some(Vec::new());
        let base = self.to_json().len();
        let mut room = max_output
            .saturating_sub(base + OMITTED_RESERVE)
            .min(MAX_FILES_BYTES);
        let (matches, walk_capped) = matching_files(work, globs);
        let mut files = Vec::new();
        let mut omitted = Vec::new();
        for (path, size) in matches {
            let leave_out = |reason: String| Omitted {
                path: path.clone(),
                size,
                reason,
            };
            if files.len() >= MAX_FILES {
                omitted.push(leave_out(format!("over the limit of {MAX_FILES} files")));
                continue;
            }
            if usize::try_from(size).map_or(true, |s| s > room) {
                omitted.push(leave_out(format!(
                    "too large: {room} bytes of the output budget were left"
                )));
                continue;
            }
            let entry = match std::fs::read(work.join(&path)) {
                Ok(bytes) => file_entry(path.clone(), &bytes),
                Err(e) => {
                    omitted.push(leave_out(format!("cannot read: {e}")));
                    continue;
                }
            };
            let cost = serde_json::to_string(&entry).map_or(usize::MAX, |s| s.len() + 1);
            if cost > room {
                omitted.push(leave_out(format!(
                    "too large once encoded ({cost} bytes): {room} bytes of the output \
                     budget were left"
                )));
                continue;
            }
            room -= cost;
            files.push(entry);
        }
        if walk_capped {
            omitted.push(Omitted {
                path: String::new(),
                size: 0,
                reason: format!("WORK_DIR has over {MAX_WALK_ENTRIES} entries; stopped looking"),
            });
        }
        self.files = Some(files);
        // Keep as many omissions as fit; count the rest.
        let mut used = 0;
        for item in omitted {
            let cost = serde_json::to_string(&item).map_or(usize::MAX, |s| s.len() + 1);
            if self.files_omitted_more == 0 && used + cost + 40 <= OMITTED_RESERVE {
                used += cost;
                self.files_omitted.push(item);
            } else {
                self.files_omitted_more += 1;
            }
        }
        self
    }
}

/// Regular files below `work` (symlinks are not followed) whose relative path matches,
/// sorted, with their sizes; true when the walk stopped at its entry limit.
fn matching_files(work: &Path, globs: &GlobSet) -> (Vec<(String, u64)>, bool) {
    let mut found = Vec::new();
    let mut pending = vec![work.to_path_buf()];
    let mut visited = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MAX_WALK_ENTRIES {
                found.sort();
                return (found, true);
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                let Ok(relative) = path.strip_prefix(work) else {
                    continue;
                };
                let relative: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let relative = relative.join("/");
                if globs.is_match(&relative) {
                    let size = entry.metadata().map_or(0, |m| m.len());
                    found.push((relative, size));
                }
            }
        }
    }
    found.sort();
    (found, false)
}

fn file_entry(path: String, bytes: &[u8]) -> FileEntry {
    let (mime, text_kind) = mime_of(&path);
    let as_text = match text_kind {
        Some(true) | None => std::str::from_utf8(bytes)
            .ok()
            .filter(|t| text_kind.is_some() || !t.contains('\0')),
        Some(false) => None,
    };
    let mime = match (text_kind, as_text.is_some()) {
        (None, true) => "text/plain",
        _ => mime,
    };
    let size = bytes.len() as u64;
    match as_text {
        Some(text) => FileEntry {
            path,
            mime,
            size,
            encoding: "utf-8",
            content: text.to_string(),
        },
        None => FileEntry {
            path,
            mime,
            size,
            encoding: "base64",
            content: base64(bytes),
        },
    }
}

/// The MIME type for a file name's extension, and whether it is text (`None`: unknown,
/// decided by looking at the bytes).
fn mime_of(path: &str) -> (&'static str, Option<bool>) {
    let extension = path
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    let text = |mime| (mime, Some(true));
    let binary = |mime| (mime, Some(false));
    match extension.as_str() {
        "txt" | "log" | "text" => text("text/plain"),
        "md" | "markdown" => text("text/markdown"),
        "csv" => text("text/csv"),
        "tsv" => text("text/tab-separated-values"),
        "html" | "htm" => text("text/html"),
        "css" => text("text/css"),
        "js" | "mjs" => text("text/javascript"),
        "json" => text("application/json"),
        "xml" => text("application/xml"),
        "yaml" | "yml" => text("application/yaml"),
        "toml" => text("application/toml"),
        "svg" => text("image/svg+xml"),
        "sh" => text("application/x-sh"),
        "py" => text("text/x-python"),
        "rs" => text("text/x-rust"),
        "go" => text("text/x-go"),
        "c" | "h" => text("text/x-c"),
        "diff" | "patch" => text("text/x-diff"),
        "png" => binary("image/png"),
        "jpg" | "jpeg" => binary("image/jpeg"),
        "gif" => binary("image/gif"),
        "webp" => binary("image/webp"),
        "bmp" => binary("image/bmp"),
        "ico" => binary("image/vnd.microsoft.icon"),
        "pdf" => binary("application/pdf"),
        "zip" => binary("application/zip"),
        "gz" | "tgz" => binary("application/gzip"),
        "tar" => binary("application/x-tar"),
        "wasm" => binary("application/wasm"),
        "mp3" => binary("audio/mpeg"),
        "wav" => binary("audio/wav"),
        "mp4" => binary("video/mp4"),
        "docx" => binary("application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        "xlsx" => binary("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        "bin" => binary("application/octet-stream"),
        _ => ("application/octet-stream", None),
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let n = u32::from(chunk[0]) << 16 | u32::from(b1) << 8 | u32::from(b2);
        let digit = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(digit(18));
        out.push(digit(12));
        out.push(if chunk.len() > 1 { digit(6) } else { '=' });
        out.push(if chunk.len() > 2 { digit(0) } else { '=' });
    }
    out
}
