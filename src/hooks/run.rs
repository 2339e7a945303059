//! Running the hooks chosen for one firing of an event: each as `bash -c COMMAND` (or
//! `sh -c`) through `exec` — its own process group, the environment without secrets
//! (`exec`'s scrubbing), plus `HARNESS9_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` (and for
//! a plugin's hook `CLAUDE_PLUGIN_ROOT` and `PYTHONDONTWRITEBYTECODE`), the
//! session's sandbox when the caller asks for it, the hook's timeout, stdout and stderr
//! capped — with the event's JSON on stdin, all hooks of the firing at once. Each ends
//! in an [`Outcome`] read as Claude Code reads it: exit 0 answers (JSON when stdout
//! starts with `{`, else plain text), exit 2 blocks with stderr as the reason, anything
//! else is an error that blocks nothing — unless the hook is a guard
//! (`on_error = "deny"`), whose failure to answer (not started, a missing script's 127,
//! a crash, a timeout, JSON that does not parse) denies with the reason.
//!
//! It must not know what a denial does to a tool call (the caller combines the
//! [`Report`]'s [`Verdict`] with the rule book) or how runs are shown.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::input::HookInput;
use super::{Hook, OnError, Origin, Selected};
use crate::exec::{
    self, Capture, Confinement, EnvChange, Exit, Leftovers, Output, Program, Prompts, Request,
    Sink, Stdin,
};

/// The most of a hook's stdout kept (its JSON answer must fit).
pub const MAX_STDOUT_BYTES: usize = 256 * 1024;
/// The most of a hook's stderr kept (head and tail).
pub const MAX_STDERR_BYTES: usize = 16 * 1024;

/// Where and how the hooks of a session run.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The project's root (`HARNESS9_PROJECT_DIR`, `CLAUDE_PROJECT_DIR`).
    pub project_dir: PathBuf,
    /// The working folder hooks start in.
    pub cwd: PathBuf,
    /// Whether the session's sandbox wraps them.
    pub confinement: Confinement,
}

impl RunContext {
    /// The same, with `transcript` (the session's record file, inside the harness9 home
    /// the sandbox masks) readable by the hooks when the session's sandbox wraps them;
    /// nothing else of the home becomes visible. Unchanged for an empty path.
    pub fn seeing_transcript(&self, transcript: &str) -> RunContext {
        let confinement = match (&self.confinement, transcript.is_empty()) {
            (Confinement::SessionSandbox, false) => {
                Confinement::SessionSandboxSeeing(vec![PathBuf::from(transcript)])
            }
            (other, _) => other.clone(),
        };
        RunContext {
            confinement,
            ..self.clone()
        }
    }
}

/// What one hook's run came to.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    /// The hook's command line.
    pub command: String,
    /// Whether it is a guard.
    pub on_error: OnError,
    /// Where it was configured.
    pub origin: Origin,
    /// How it ended, read.
    pub outcome: Outcome,
    /// How long it ran.
    pub elapsed: Duration,
}

/// How one hook ended, read as Claude Code reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Exit 0: its answer.
    Answered {
        /// What it said.
        answer: Answer,
    },
    /// Exit 2: the firing is blocked; stderr is the reason (fed back to the model).
    Blocked {
        /// Its stderr.
        reason: String,
    },
    /// A guard could not answer: the firing is denied.
    GuardFailed {
        /// Why it could not answer.
        failure: Failure,
    },
    /// A hook that is not a guard could not answer: reported, nothing is blocked.
    Failed {
        /// Why it could not answer.
        failure: Failure,
    },
}

/// Why a hook could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Failure {
    /// It could not be started.
    #[error("it could not be started: {reason}")]
    NotStarted {
        /// The system's reason.
        reason: String,
    },
    /// It exited with a code other than 0 and 2 (127: the command was not found).
    #[error("it exited with code {code}{}", stderr_note(.stderr))]
    Exited {
        /// The code.
        code: i32,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A signal ended it.
    #[error("it was killed by signal {signal}")]
    Signalled {
        /// The signal number.
        signal: i32,
    },
    /// It ran past its timeout and was stopped.
    #[error("it did not finish within {} s", .after.as_secs_f64())]
    TimedOut {
        /// Its timeout.
        after: Duration,
    },
    /// The firing was cancelled while it ran.
    #[error("it was cancelled")]
    Cancelled,
    /// It exited 0 with stdout starting with `{` that is not the JSON it may print.
    #[error("its JSON answer does not parse: {reason}")]
    BadJson {
        /// The parser's message.
        reason: String,
    },
    /// A script inside the project its command names changed since the session started
    /// (it was not run: the new text was never approved).
    #[error(
        "{} changed since the session started, so the hook was not run (restart harness9 \
         to use the new version{})",
        .path.display(),
        if *.project_hook { "; a project hook also needs `harness9 hooks trust` again" } else { "" }
    )]
    ScriptChanged {
        /// The script.
        path: PathBuf,
        /// Whether the hook is the project's (which needs trusting again).
        project_hook: bool,
    },
    /// Its group's matcher does not compile (only guards stay under such a matcher).
    #[error("its matcher does not compile: {reason}")]
    BrokenMatcher {
        /// Why.
        reason: String,
    },
}

fn stderr_note(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!(": {trimmed}")
    }
}

/// What a hook that exited 0 said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// Whether the agent goes on (`continue: false` stops it, with `stopReason`).
    pub keep_going: KeepGoing,
    /// Its decision on the firing, if any.
    pub decision: Option<Decision>,
    /// The tool call's new arguments (Claude Code's shape), for PreToolUse.
    pub updated_input: Option<Value>,
    /// Text added to the model's context.
    pub additional_context: Option<String>,
    /// A message for the user.
    pub system_message: Option<String>,
    /// Plain (not JSON) stdout, when it printed some.
    pub plain_text: Option<String>,
}

/// Whether the agent goes on after a hook's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum KeepGoing {
    /// It goes on.
    #[default]
    Yes,
    /// It stops (`continue: false`).
    Stop {
        /// `stopReason`, shown to the user.
        reason: Option<String>,
    },
}

/// A hook's decision on a firing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed (for a tool call: without asking, where the rules leave it open).
    Allow {
        /// Why, if said.
        reason: Option<String>,
    },
    /// Denied or blocked; the reason goes to the model.
    Deny {
        /// Why, if said.
        reason: Option<String>,
    },
    /// The user is asked.
    Ask {
        /// Why, if said.
        reason: Option<String>,
    },
}

/// The JSON a hook may print (Claude Code's keys; unknown keys are ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAnswer {
    #[serde(rename = "continue")]
    keep_going: Option<bool>,
    stop_reason: Option<String>,
    decision: Option<RawDecision>,
    reason: Option<String>,
    system_message: Option<String>,
    permission_decision: Option<PermissionDecision>,
    permission_decision_reason: Option<String>,
    updated_input: Option<Value>,
    additional_context: Option<String>,
    hook_specific_output: Option<Specific>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Specific {
    /// PermissionRequest's answer (`{"behavior": "allow"|"deny", "message": …}`).
    decision: Option<Behavior>,
    permission_decision: Option<PermissionDecision>,
    permission_decision_reason: Option<String>,
    updated_input: Option<Value>,
    additional_context: Option<String>,
}

/// PermissionRequest's `hookSpecificOutput.decision`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Behavior {
    behavior: BehaviorKind,
    message: Option<String>,
    updated_input: Option<Value>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum BehaviorKind {
    Allow,
    Deny,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawDecision {
    Block,
    Approve,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum PermissionDecision {
    Allow,
    Deny,
    Ask,
}

/// Every hook run of one firing, in configuration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The runs.
    pub runs: Vec<HookRun>,
}

/// What the hooks of a firing decided together: a denial wins over a question, a
/// question over an allowance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No hook decided anything.
    NoDecision,
    /// Some hook allowed, none asked or denied.
    Allow {
        /// The first allowing hook's reason.
        reason: Option<String>,
    },
    /// Some hook asked, none denied.
    Ask {
        /// The first asking hook's reason.
        reason: Option<String>,
    },
    /// Some hook denied, blocked (exit 2) or was a guard that could not answer.
    Deny {
        /// The first denying hook's command.
        command: String,
        /// Why, as said to the model.
        reason: String,
    },
}

impl Report {
    /// The firing's verdict.
    pub fn verdict(&self) -> Verdict {
        let mut allow = None;
        let mut ask = None;
        for run in &self.runs {
            let denied = match &run.outcome {
                Outcome::Blocked { reason } => Some(if reason.trim().is_empty() {
                    "blocked by the hook (exit 2, no reason given)".to_string()
                } else {
                    reason.trim().to_string()
                }),
                Outcome::GuardFailed { failure } => Some(format!(
                    "the guard hook could not answer, so it denies: {failure}"
                )),
                Outcome::Answered { answer } => match &answer.decision {
                    // A denial without a reason gives its systemMessage, if any (hookify
                    // writes its rule's message only there).
                    Some(Decision::Deny { reason }) => Some(
                        reason
                            .clone()
                            .or_else(|| answer.system_message.clone())
                            .unwrap_or_else(|| "denied by the hook".to_string()),
                    ),
                    Some(Decision::Ask { reason }) => {
                        ask.get_or_insert(reason.clone());
                        None
                    }
                    Some(Decision::Allow { reason }) => {
                        allow.get_or_insert(reason.clone());
                        None
                    }
                    None => None,
                },
                Outcome::Failed { .. } => None,
            };
            if let Some(reason) = denied {
                return Verdict::Deny {
                    command: run.command.clone(),
                    reason,
                };
            }
        }
        match (ask, allow) {
            (Some(reason), _) => Verdict::Ask { reason },
            (None, Some(reason)) => Verdict::Allow { reason },
            (None, None) => Verdict::NoDecision,
        }
    }

    /// The context the hooks added, in order (their `additionalContext`).
    pub fn additional_context(&self) -> Vec<&str> {
        self.answers()
            .filter_map(|a| a.additional_context.as_deref())
            .collect()
    }

    /// The first `updatedInput` a hook gave, in Claude Code's shape.
    pub fn updated_input(&self) -> Option<&Value> {
        self.answers().find_map(|a| a.updated_input.as_ref())
    }

    /// Whether a hook asked the agent to stop, and its reason.
    pub fn stop(&self) -> Option<Option<&str>> {
        self.answers().find_map(|a| match &a.keep_going {
            KeepGoing::Stop { reason } => Some(reason.as_deref()),
            KeepGoing::Yes => None,
        })
    }

    fn answers(&self) -> impl Iterator<Item = &Answer> {
        self.runs.iter().filter_map(|r| match &r.outcome {
            Outcome::Answered { answer } => Some(answer),
            _ => None,
        })
    }
}

/// Runs the `selected` hooks of one firing at once, each with `input` on stdin, and
/// reports every run in the order given.
pub async fn run_event(
    selected: &[Selected<'_>],
    input: &HookInput,
    ctx: &RunContext,
    cancel: &CancellationToken,
) -> Report {
    let stdin = match serde_json::to_vec(input) {
        Ok(bytes) => bytes,
        // Serializing plain strings, paths and JSON values cannot fail; if it ever did,
        // the hooks get an empty object rather than nothing.
        Err(_) => b"{}".to_vec(),
    };
    let mut tasks = JoinSet::new();
    let mut runs: Vec<Option<HookRun>> = vec![None; selected.len()];
    for (index, chosen) in selected.iter().enumerate() {
        // A hook that must not run (its matcher is broken, or a script it names changed
        // since the session started) fails without starting: a guard denies.
        let refused = match (chosen.broken, super::pins::changed(&chosen.hook.pinned)) {
            (Some(reason), _) => Some(Failure::BrokenMatcher {
                reason: reason.to_string(),
            }),
            (None, Some(path)) => Some(Failure::ScriptChanged {
                path: path.to_path_buf(),
                project_hook: chosen.hook.origin.kind.trust() == super::TrustNeeded::Project,
            }),
            (None, None) => None,
        };
        if let Some(failure) = refused {
            runs[index] = Some(not_started(chosen, failure));
            continue;
        }
        let hook = chosen.hook.clone();
        let request = request(&hook, ctx, stdin.clone());
        let cancel = cancel.clone();
        tasks.spawn(async move { (index, run_one(hook, request, cancel).await) });
    }
    while let Some(joined) = tasks.join_next().await {
        // A hook's task panicking is a bug of ours; its slot stays empty and is
        // reported as not started below.
        if let Ok((index, run)) = joined
            && let Some(slot) = runs.get_mut(index)
        {
            *slot = Some(run);
        }
    }
    let runs = runs
        .into_iter()
        .zip(selected)
        .map(|(run, chosen)| {
            run.unwrap_or_else(|| {
                not_started(
                    chosen,
                    Failure::NotStarted {
                        reason: "its task ended without a result".into(),
                    },
                )
            })
        })
        .collect();
    Report { runs }
}

fn request(hook: &Hook, ctx: &RunContext, stdin: Vec<u8>) -> Request {
    let project = ctx.project_dir.clone().into_os_string();
    let mut env = vec![
        EnvChange::set("HARNESS9_PROJECT_DIR", project.clone()),
        EnvChange::set("CLAUDE_PROJECT_DIR", project),
    ];
    if let Some(root) = &hook.plugin_root {
        env.push(EnvChange::set(
            "CLAUDE_PLUGIN_ROOT",
            root.clone().into_os_string(),
        ));
        // A plugin's folder is trusted by its content: Python writing `__pycache__`
        // beside the modules a hook imports would change it and untrust the plugin
        // after its first run (unconfined, when the sandbox is off).
        env.push(EnvChange::set("PYTHONDONTWRITEBYTECODE", "1"));
    }
    Request {
        program: Program::BashOrSh {
            line: hook.command.clone(),
        },
        cwd: ctx.cwd.clone(),
        prompts: Prompts::Suppressed,
        env,
        stdin: Stdin::Bytes(stdin),
        output: Output::Split {
            stdout: Sink {
                capture: Capture::Head {
                    max_bytes: MAX_STDOUT_BYTES,
                },
                live: None,
            },
            stderr: Sink {
                capture: Capture::HeadTail {
                    max_bytes: MAX_STDERR_BYTES,
                },
                live: None,
            },
        },
        timeout: hook.timeout,
        leftovers: Leftovers::Kill,
        confinement: ctx.confinement.clone(),
    }
}

async fn run_one(hook: Hook, request: Request, cancel: CancellationToken) -> HookRun {
    let (outcome, elapsed) = match exec::run(request, &cancel).await {
        Err(e) => (
            failed(
                hook.on_error,
                Failure::NotStarted {
                    reason: e.to_string(),
                },
            ),
            Duration::ZERO,
        ),
        Ok(done) => (
            read(&hook, done.exit, done.stdout, done.stderr),
            done.elapsed,
        ),
    };
    HookRun {
        command: hook.command,
        on_error: hook.on_error,
        origin: hook.origin,
        outcome,
        elapsed,
    }
}

/// The run of a hook that was never started, failing with `failure`.
fn not_started(chosen: &Selected<'_>, failure: Failure) -> HookRun {
    HookRun {
        command: chosen.hook.command.clone(),
        on_error: chosen.hook.on_error,
        origin: chosen.hook.origin.clone(),
        outcome: failed(chosen.hook.on_error, failure),
        elapsed: Duration::ZERO,
    }
}

fn failed(on_error: OnError, failure: Failure) -> Outcome {
    match on_error {
        OnError::Deny => Outcome::GuardFailed { failure },
        OnError::Continue => Outcome::Failed { failure },
    }
}

fn read(hook: &Hook, exit: Exit, stdout: String, stderr: String) -> Outcome {
    match exit {
        Exit::Exited { code: 0 } => match answer(&stdout) {
            Ok(answer) => Outcome::Answered { answer },
            Err(failure) => failed(hook.on_error, failure),
        },
        Exit::Exited { code: 2 } => Outcome::Blocked { reason: stderr },
        Exit::Exited { code } => failed(hook.on_error, Failure::Exited { code, stderr }),
        Exit::Signalled { signal } => failed(hook.on_error, Failure::Signalled { signal }),
        Exit::TimedOut { after } => failed(hook.on_error, Failure::TimedOut { after }),
        Exit::Cancelled => failed(hook.on_error, Failure::Cancelled),
    }
}

/// Reads exit 0's stdout: JSON when it starts with `{`, else plain text.
fn answer(stdout: &str) -> Result<Answer, Failure> {
    let text = stdout.trim();
    if text.is_empty() {
        return Ok(Answer::default());
    }
    if !text.starts_with('{') {
        return Ok(Answer {
            plain_text: Some(text.to_string()),
            ..Answer::default()
        });
    }
    let raw: RawAnswer = serde_json::from_str(text).map_err(|e| Failure::BadJson {
        reason: e.to_string(),
    })?;
    let specific = raw.hook_specific_output;
    let (permission, permission_reason, updated_input, additional_context) = match specific {
        // PermissionRequest's answer reads as a permission decision with its message.
        Some(Specific {
            decision: Some(behavior),
            permission_decision,
            permission_decision_reason,
            updated_input,
            additional_context,
        }) => (
            permission_decision
                .or(raw.permission_decision)
                .or(Some(match behavior.behavior {
                    BehaviorKind::Allow => PermissionDecision::Allow,
                    BehaviorKind::Deny => PermissionDecision::Deny,
                })),
            permission_decision_reason
                .or(raw.permission_decision_reason)
                .or(behavior.message),
            updated_input
                .or(behavior.updated_input)
                .or(raw.updated_input),
            additional_context.or(raw.additional_context),
        ),
        Some(s) => (
            s.permission_decision.or(raw.permission_decision),
            s.permission_decision_reason
                .or(raw.permission_decision_reason),
            s.updated_input.or(raw.updated_input),
            s.additional_context.or(raw.additional_context),
        ),
        None => (
            raw.permission_decision,
            raw.permission_decision_reason,
            raw.updated_input,
            raw.additional_context,
        ),
    };
    let decision = match (permission, raw.decision) {
        (Some(PermissionDecision::Deny), _) => Some(Decision::Deny {
            reason: permission_reason,
        }),
        (Some(PermissionDecision::Ask), _) => Some(Decision::Ask {
            reason: permission_reason,
        }),
        (Some(PermissionDecision::Allow), Some(RawDecision::Block)) => {
            Some(Decision::Deny { reason: raw.reason })
        }
        (Some(PermissionDecision::Allow), _) => Some(Decision::Allow {
            reason: permission_reason,
        }),
        (None, Some(RawDecision::Block)) => Some(Decision::Deny { reason: raw.reason }),
        (None, Some(RawDecision::Approve)) => Some(Decision::Allow { reason: raw.reason }),
        (None, None) => None,
    };
    let keep_going = match raw.keep_going {
        Some(false) => KeepGoing::Stop {
            reason: raw.stop_reason,
        },
        Some(true) | None => KeepGoing::Yes,
    };
    Ok(Answer {
        keep_going,
        decision,
        updated_input,
        additional_context,
        system_message: raw.system_message,
        plain_text: None,
    })
}
