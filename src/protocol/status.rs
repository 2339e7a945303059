//! What `/status` shows, as plain data the agent fills from the live session
//! ([`StatusReport`], answered to `Op::Status` by `Event::Status`) and the one wording
//! of it every frontend shows ([`StatusReport::lines`]): model, provider, context
//! window, approval mode, sandbox, saved session, instruction files, skills, MCP
//! servers and tokens. It must not know where the facts come from or how they are drawn.

use std::path::PathBuf;

use serde::Serialize;

use super::{ApprovalMode, Effort, Usage, WindowSource};

/// The session as `/status` tells it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusReport {
    /// The model in use.
    pub model: String,
    /// The reasoning effort sent with each request (`None`: none is sent).
    pub effort: Option<Effort>,
    /// The endpoint's host (and port), from the base URL.
    pub provider: String,
    /// The model's context window, when known.
    pub context_window: Option<KnownWindow>,
    /// The approval mode in force.
    pub approval_mode: ApprovalMode,
    /// How commands run for the model are confined.
    pub sandbox: SandboxState,
    /// Where the session is saved.
    pub session: SavedState,
    /// The instruction files in the system prompt (read at start).
    pub instructions: Vec<PathBuf>,
    /// Skills found, and how many of them are loaded now.
    pub skills: Counted,
    /// MCP servers configured, and how many of them run now.
    pub mcp_servers: Counted,
    /// Tokens used so far in this session.
    pub usage: Usage,
    /// About how many tokens the next request's prompt holds, once a request was made.
    pub context_tokens: Option<u64>,
}

/// A context window and where its size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KnownWindow {
    /// Tokens.
    pub tokens: u64,
    /// Where the number came from.
    pub source: WindowSource,
}

/// How commands run for the model are confined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SandboxState {
    /// They run unconfined.
    Off,
    /// They run in the sandbox.
    Confined {
        /// `read-only` or `workspace-write`.
        mode: String,
        /// Whether they may use the network.
        network: bool,
    },
}

/// Where the session is saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SavedState {
    /// Sessions are not saved in this run.
    NotSaved,
    /// Saved under this id; the file is written with the first thing said.
    Saved {
        /// The session's id.
        id: String,
        /// Its file, once written.
        file: Option<PathBuf>,
    },
}

/// A number of things and how many of them are active.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counted {
    /// How many there are.
    pub total: usize,
    /// How many are loaded or running.
    pub active: usize,
}

impl StatusReport {
    /// Label and value, one line each, in the order shown.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        let window = match self.context_window {
            Some(w) => format!("{} tokens ({})", w.tokens, w.source.describe()),
            None => "unknown (not configured, not learnt from the endpoint yet)".to_string(),
        };
        let mode = match self.approval_mode {
            ApprovalMode::Suggest => "suggest (edits and commands ask)",
            ApprovalMode::AutoEdit => {
                "auto-edit (edits in the project and read-only commands in the sandbox run; \
                 other commands ask)"
            }
            ApprovalMode::FullAuto => "full-auto (edits and commands run unasked)",
            ApprovalMode::Plan => {
                "plan (reading tools only, commands in the read-only sandbox, writes only to \
                 the plan file)"
            }
        };
        let sandbox = match &self.sandbox {
            SandboxState::Off => "off (commands run unconfined)".to_string(),
            SandboxState::Confined { mode, network } => {
                let network = if *network { "network" } else { "no network" };
                format!("{mode}, {network}")
            }
        };
        let session = match &self.session {
            SavedState::NotSaved => "not saved (--no-session or sessions = false)".to_string(),
            SavedState::Saved {
                id,
                file: Some(file),
            } => format!("{id} ({})", file.display()),
            SavedState::Saved { id, file: None } => {
                format!("{id} (its file is written with the first message)")
            }
        };
        let instructions = if self.instructions.is_empty() {
            "none (AGENTS.md in the project is read at start)".to_string()
        } else {
            let files: Vec<String> = self
                .instructions
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            files.join(", ")
        };
        let usage = &self.usage;
        let mut tokens = format!("{} in, {} out", usage.input_tokens, usage.output_tokens);
        if usage.cached_input_tokens > 0 {
            tokens.push_str(&format!(", {} cached", usage.cached_input_tokens));
        }
        if usage.estimated {
            tokens.push_str(" (estimated)");
        }
        if let Some(cost) = usage.cost {
            tokens.push_str(&format!(", {cost}"));
        }
        let context = match (self.context_tokens, self.context_window) {
            (Some(used), Some(w)) if w.tokens > 0 => {
                format!(
                    "about {used} tokens, {}% of the window",
                    used * 100 / w.tokens
                )
            }
            (Some(used), _) => format!("about {used} tokens"),
            (None, _) => "no request yet".to_string(),
        };
        let mut lines = vec![
            ("model", self.model.clone()),
            ("effort", Effort::describe(self.effort).to_string()),
            ("provider", self.provider.clone()),
            ("context window", window),
            ("context used", context),
            ("approvals", mode.to_string()),
            ("sandbox", sandbox),
            ("session", session),
            ("instructions", instructions),
            (
                "skills",
                format!("{} found, {} loaded", self.skills.total, self.skills.active),
            ),
            (
                "MCP servers",
                format!(
                    "{} configured, {} running",
                    self.mcp_servers.total, self.mcp_servers.active
                ),
            ),
            ("tokens", tokens),
        ];
        if let Some(cache) = self.usage.cache_summary() {
            lines.push(("prompt cache", cache));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fact_has_its_line_and_unknowns_say_so() {
        let report = StatusReport {
            model: "m".into(),
            effort: Some(Effort::Low),
            provider: "127.0.0.1:8080".into(),
            context_window: None,
            approval_mode: ApprovalMode::AutoEdit,
            sandbox: SandboxState::Confined {
                mode: "workspace-write".into(),
                network: false,
            },
            session: SavedState::Saved {
                id: "20261127-000000-abcdef".into(),
                file: None,
            },
            instructions: vec![],
            skills: Counted {
                total: 3,
                active: 1,
            },
            mcp_servers: Counted {
                total: 0,
                active: 0,
            },
            usage: Usage::default(),
            context_tokens: None,
        };
        let lines = report.lines();
        let get = |label: &str| {
            lines
                .iter()
                .find(|(l, _)| *l == label)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert!(get("context window").starts_with("unknown"));
        assert_eq!(get("sandbox"), "workspace-write, no network");
        assert!(get("approvals").starts_with("auto-edit"));
        assert_eq!(get("skills"), "3 found, 1 loaded");
        assert_eq!(get("effort"), "low");
        assert_eq!(get("tokens"), "0 in, 0 out");
        let known = StatusReport {
            context_window: Some(KnownWindow {
                tokens: 1000,
                source: WindowSource::Config,
            }),
            context_tokens: Some(250),
            ..report
        };
        let lines = known.lines();
        assert!(lines.contains(&("context window", "1000 tokens (config.toml)".into())));
        assert!(lines.contains(&("context used", "about 250 tokens, 25% of the window".into())));
    }
}
