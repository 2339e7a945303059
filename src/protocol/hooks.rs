//! What frontends learn of hooks: [`HookRan`], one hook's run (which event fired it,
//! the command, where it was configured, what it came to, how long it took), carried by
//! [`Event::HookRan`](super::Event::HookRan), and the hook events' names
//! ([`HookEvent`]). Part of the contract; it must not know how hooks run or how a run is
//! drawn.

use std::path::PathBuf;

use serde::Serialize;

/// A point of the session where hooks run, named as Claude Code names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum HookEvent {
    /// A session starts, resumes, is cleared or compacted (matcher: the source).
    SessionStart,
    /// The user submitted a prompt (no matcher).
    UserPromptSubmit,
    /// Before a tool call runs (matcher: the tool name).
    PreToolUse,
    /// An approval question is about to be asked (matcher: the tool name).
    PermissionRequest,
    /// After a tool call succeeded (matcher: the tool name).
    PostToolUse,
    /// After a tool call failed (matcher: the tool name).
    PostToolUseFailure,
    /// The agent finished its answer (no matcher).
    Stop,
    /// A sub-agent finished (no matcher).
    SubagentStop,
    /// Before a compaction (matcher: `manual` or `auto`).
    PreCompact,
    /// After a compaction (matcher: `manual` or `auto`).
    PostCompact,
    /// A notification is shown (matcher: its type).
    Notification,
    /// The session ends (matcher: the reason).
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order of Claude Code's documentation.
    pub const ALL: [HookEvent; 12] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::Notification,
        HookEvent::SessionEnd,
    ];

    /// Its name in configuration and in `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::Notification => "Notification",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event named exactly `name` (case matters, as in Claude Code).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Where a hook that ran was configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOrigin {
    /// `[hooks]` in the user's config.toml.
    UserConfig,
    /// The project's `.harness9/hooks.toml`.
    ProjectToml,
    /// The project's `.claude/settings.json`.
    ClaudeSettings,
    /// The project's `.claude/settings.local.json`.
    ClaudeLocalSettings,
    /// A trusted plugin's hook file.
    Plugin,
}

/// One hook's run, as frontends see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookRan {
    /// The event that fired it.
    pub event: HookEvent,
    /// The hook's command line (as configured: untrusted text, shown inert).
    pub command: String,
    /// Where it was configured.
    pub origin: HookOrigin,
    /// The file it was configured in.
    pub origin_path: PathBuf,
    /// The tool the firing was about (harness9's name), for the tool events.
    pub tool: Option<String>,
    /// What the run came to.
    pub result: HookResult,
    /// Whether the hook asked the agent to stop (`continue: false`).
    pub keep_going: HookKeepGoing,
    /// The hook's `systemMessage`, for the user.
    pub system_message: Option<String>,
    /// How long it ran, in milliseconds.
    pub elapsed_ms: u64,
}

/// What one hook's run came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HookResult {
    /// Exit 0 without a decision.
    Answered,
    /// Exit 0 with `allow` (or `approve`).
    Allowed {
        /// Its reason, if it gave one.
        reason: Option<String>,
    },
    /// Exit 0 with `ask`.
    Asked {
        /// Its reason, if it gave one.
        reason: Option<String>,
    },
    /// Exit 0 with `deny` or `decision: "block"`.
    Denied {
        /// Its reason, if it gave one.
        reason: Option<String>,
    },
    /// Exit 2: the firing is blocked, stderr is the reason.
    Blocked {
        /// The hook's stderr.
        reason: String,
    },
    /// A guard (`on_error = "deny"`) could not answer, so it denied.
    GuardFailed {
        /// Why it could not answer.
        reason: String,
    },
    /// A hook that is not a guard could not answer; nothing was blocked.
    Failed {
        /// Why it could not answer.
        reason: String,
    },
}

impl HookResult {
    /// The reason a run that blocks gives (a denial, exit 2, a guard's failure).
    pub fn block_reason(&self) -> Option<&str> {
        match self {
            HookResult::Denied { reason } => {
                Some(reason.as_deref().unwrap_or("denied by the hook"))
            }
            HookResult::Blocked { reason } | HookResult::GuardFailed { reason } => {
                Some(reason.trim())
            }
            HookResult::Answered
            | HookResult::Allowed { .. }
            | HookResult::Asked { .. }
            | HookResult::Failed { .. } => None,
        }
    }
}

/// Whether a hook let the agent go on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HookKeepGoing {
    /// It goes on.
    Yes,
    /// `continue: false`: the agent stops.
    Stop {
        /// Its `stopReason`.
        reason: Option<String>,
    },
}

impl HookRan {
    /// The one line every frontend shows for a run that blocked something, failed or
    /// stopped the agent; `None` for a plain run (shown only with `-v`).
    pub fn notice_line(&self) -> Option<String> {
        let what = self.what();
        if let HookKeepGoing::Stop { reason } = &self.keep_going {
            let why = reason.as_deref().unwrap_or("no reason given");
            return Some(format!("hook `{}` stopped the agent: {why}", self.command));
        }
        let (command, event) = (&self.command, self.event.name());
        let means = match self.event {
            HookEvent::Stop | HookEvent::SubagentStop => BlockMeans::KeepsGoing,
            HookEvent::PostToolUse | HookEvent::PostToolUseFailure => BlockMeans::TellsTheModel,
            HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::Notification => BlockMeans::Nothing,
            HookEvent::PreToolUse | HookEvent::PermissionRequest | HookEvent::UserPromptSubmit => {
                BlockMeans::Denies
            }
        };
        match (&self.result, means) {
            (HookResult::Failed { reason }, _) => Some(format!(
                "hook `{command}` ({event}) failed ({reason}); it is not a guard, so {what} goes on"
            )),
            (HookResult::GuardFailed { reason }, BlockMeans::Denies) => Some(format!(
                "hook `{command}` blocked {what}: the guard could not answer, so it denies: {reason}"
            )),
            (HookResult::GuardFailed { reason }, BlockMeans::KeepsGoing) => Some(format!(
                "hook `{command}` ({event}) could not answer ({reason}), so the agent stops"
            )),
            (HookResult::GuardFailed { reason }, BlockMeans::Nothing) => Some(format!(
                "hook `{command}` ({event}) could not answer ({reason}); {event} cannot be \
                 blocked, so nothing is"
            )),
            (other, BlockMeans::Nothing) => other.block_reason().map(|reason| {
                format!(
                    "hook `{command}` asked to block {event}, which cannot be blocked: {reason}"
                )
            }),
            (HookResult::GuardFailed { reason }, BlockMeans::TellsTheModel) => Some(format!(
                "hook `{command}` ({event}) could not answer ({reason}); the model is told the \
                 check did not run"
            )),
            (other, BlockMeans::Denies) => other
                .block_reason()
                .map(|reason| format!("hook `{command}` blocked {what}: {reason}")),
            (other, BlockMeans::KeepsGoing) => other
                .block_reason()
                .map(|reason| format!("hook `{command}` keeps the agent going: {reason}")),
            (other, BlockMeans::TellsTheModel) => other.block_reason().map(|reason| {
                format!("hook `{command}` ({event}) told the model about {what}: {reason}")
            }),
        }
    }

    /// The one line `-v` shows for every run.
    pub fn verbose_line(&self) -> String {
        let result = match &self.result {
            HookResult::Answered => "ok".to_string(),
            HookResult::Allowed { reason } => with_reason("allowed", reason.as_deref()),
            HookResult::Asked { reason } => with_reason("asked", reason.as_deref()),
            HookResult::Denied { reason } => with_reason("denied", reason.as_deref()),
            HookResult::Blocked { reason } => with_reason("blocked (exit 2)", Some(reason)),
            HookResult::GuardFailed { reason } => with_reason("guard failed, denied", Some(reason)),
            HookResult::Failed { reason } => with_reason("failed", Some(reason)),
        };
        let tool = self
            .tool
            .as_deref()
            .map_or_else(String::new, |t| format!(" {t}"));
        format!(
            "hook {}{tool} `{}`: {result} ({} ms)",
            self.event.name(),
            self.command,
            self.elapsed_ms
        )
    }

    /// What the firing was about, in words: the tool, or the event.
    fn what(&self) -> String {
        match (&self.tool, self.event) {
            (Some(tool), _) => tool.clone(),
            (None, HookEvent::UserPromptSubmit) => "the prompt".to_string(),
            (None, HookEvent::Stop | HookEvent::SubagentStop) => "the stop".to_string(),
            (None, event) => event.name().to_string(),
        }
    }
}

/// What a hook's block (or a guard's failure) does at its event.
#[derive(Clone, Copy)]
enum BlockMeans {
    /// The call, the prompt or the event's action is denied.
    Denies,
    /// The agent goes on instead of stopping.
    KeepsGoing,
    /// The call already ran: the reason goes to the model after its result.
    TellsTheModel,
    /// The event has nothing to block (a session, compaction or notification event).
    Nothing,
}

fn with_reason(word: &str, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!("{word}: {r}"),
        None => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(result: HookResult) -> HookRan {
        HookRan {
            event: HookEvent::PreToolUse,
            command: "/h/guard.sh".into(),
            origin: HookOrigin::UserConfig,
            origin_path: "/home/u/config.toml".into(),
            tool: Some("bash".into()),
            result,
            keep_going: HookKeepGoing::Yes,
            system_message: None,
            elapsed_ms: 12,
        }
    }

    #[test]
    fn blocks_and_failures_have_a_notice_and_plain_runs_do_not() {
        assert_eq!(ran(HookResult::Answered).notice_line(), None);
        assert_eq!(
            ran(HookResult::Allowed { reason: None }).notice_line(),
            None
        );
        assert_eq!(
            ran(HookResult::Blocked {
                reason: "no rm\n".into()
            })
            .notice_line()
            .as_deref(),
            Some("hook `/h/guard.sh` blocked bash: no rm")
        );
        let guard = ran(HookResult::GuardFailed {
            reason: "it exited with code 127".into(),
        })
        .notice_line()
        .unwrap();
        assert!(
            guard.contains("blocked bash") && guard.contains("127"),
            "{guard}"
        );
        let failed = ran(HookResult::Failed {
            reason: "it was killed by signal 9".into(),
        })
        .notice_line()
        .unwrap();
        assert!(failed.contains("not a guard, so bash goes on"), "{failed}");
    }

    #[test]
    fn a_block_is_worded_for_what_it_does_at_its_event() {
        let at = |event, result| HookRan {
            event,
            ..ran(result)
        };
        let blocked = || HookResult::Blocked {
            reason: "why".into(),
        };
        let guard = || HookResult::GuardFailed {
            reason: "it exited with code 127".into(),
        };
        let stop = at(HookEvent::Stop, blocked()).notice_line().unwrap();
        assert!(stop.contains("keeps the agent going: why"), "{stop}");
        let stop = at(HookEvent::Stop, guard()).notice_line().unwrap();
        assert!(stop.contains("so the agent stops"), "{stop}");
        let post = at(HookEvent::PostToolUse, blocked()).notice_line().unwrap();
        assert!(post.contains("told the model about bash: why"), "{post}");
        let post = at(HookEvent::PostToolUse, guard()).notice_line().unwrap();
        assert!(
            post.contains("the model is told the check did not run"),
            "{post}"
        );
        let prompt = HookRan {
            tool: None,
            ..at(HookEvent::UserPromptSubmit, blocked())
        };
        assert_eq!(
            prompt.notice_line().as_deref(),
            Some("hook `/h/guard.sh` blocked the prompt: why")
        );
    }

    #[test]
    fn the_verbose_line_names_event_tool_command_result_and_time() {
        assert_eq!(
            ran(HookResult::Denied {
                reason: Some("nope".into())
            })
            .verbose_line(),
            "hook PreToolUse bash `/h/guard.sh`: denied: nope (12 ms)"
        );
    }

    #[test]
    fn it_serializes_with_enums_as_objects() {
        let value = serde_json::to_value(ran(HookResult::Blocked { reason: "x".into() })).unwrap();
        assert_eq!(value["event"], "PreToolUse");
        assert_eq!(value["origin"], "user_config");
        assert_eq!(value["result"]["kind"], "blocked");
        assert_eq!(value["keep_going"]["kind"], "yes");
        assert_eq!(value["elapsed_ms"], 12);
    }
}
