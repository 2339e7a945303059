//! The contract between the core and every frontend: frontends send [`Op`]s to the agent
//! and render the [`Event`]s it sends back. Nothing else crosses that line.
//!
//! This module owns the message enums and the small value types they carry (usage and
//! cost, approval requests and decisions, the rules' effects and reasons, error kinds,
//! turn outcomes, skill changes, undo outcomes). It is the floor of the house: it imports
//! nothing of harness9 but leaf modules, and every other module may import it. It must
//! not know how a frontend draws anything, how the model is reached, or how a tool does
//! its work.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

mod commands;
mod context;
mod effort;
mod files;
mod limits;
mod rules;
mod text;
mod values;

pub use commands::{BUILTINS, is_builtin};
pub use context::{
    ContextReport, InstructionFileInfo, InstructionOrigin, SkillRootCount, estimated_tokens,
};
pub use effort::Effort;
pub use files::{FileChange, FileLocation};
pub use limits::RunLimit;
pub use rules::{AskBecause, Effect, Offer, RuleView, Source};
pub use text::SharedText;
pub use values::{Cost, RewindPoint, SkillChanges, UndoOutcome, describe_rewind};

mod status;
pub use status::{Counted, KnownWindow, SandboxState, SavedState, StatusReport};

mod events;
pub use events::*;

mod hooks;
pub use hooks::{HookEvent, HookKeepGoing, HookOrigin, HookRan, HookResult};
mod sub_usage;
pub use sub_usage::SubAgentUsage;

mod listings;
mod plan;
pub use plan::{PlanStep, PlanUpdate, StepStatus};
mod hook_list;
mod models;
mod plugins;
pub use hook_list::{
    HookEntry, HookLine, HookLineKind, HookListing, HookRole, HookStanding, InForceBecause,
    NotInForceBecause, TRUST_COMMAND, describe_hooks,
};
pub use listings::{
    McpHealth, McpPromptArgument, McpPromptCommand, McpServerEntry, McpServerName, McpUse,
    SkillEntry, SkillInvocation, SkillListing, SkillNote, SkillOrigin, SkillStanding,
    SlashCommands, SlashSkill,
};
pub use models::{ModelList, ModelListing, ProviderModels};
pub use plugins::{PluginContributions, PluginEntry, PluginListing, PluginStanding};

/// A slash command the agent runs as a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Run a skill the user invoked (`/name args`): the agent expands the body
    /// (templates, inline shell when allowed) and runs it as a turn, or, for a
    /// `context: fork` skill, in a sub-agent whose final answer becomes the turn's answer.
    Skill {
        /// The skill's name.
        name: String,
        /// Everything after the name, trimmed.
        args: String,
    },
    /// Send an MCP server's prompt (`/server:prompt args`) as the user's message: the
    /// agent gets it from the server (starting it when needed) with the arguments
    /// matched to the prompt's, and runs a turn with its text as given (never expanded).
    McpPrompt {
        /// The server.
        server: String,
        /// The prompt's name.
        prompt: String,
        /// Everything after the command, trimmed.
        args: String,
    },
    /// `/init`: the agent reads the project (build files, layout, README, CONTRIBUTING)
    /// and asks the model to propose an `AGENTS.md`, written only through the edit
    /// tools and asked about whatever the approval mode.
    Init {
        /// What the user added after `/init` (guidance for the file), trimmed.
        args: String,
    },
}

/// What a frontend asks the agent to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Start a turn with this user message (already routed: a plain prompt or an
    /// expanded skill). Input sent while a turn runs is queued and starts after it.
    UserInput {
        /// The text sent to the model as the user message.
        text: String,
        /// Where `text` came from: only typed text has its `@path` mentions attached.
        origin: InputOrigin,
        /// Text that arrived on stdin besides a typed prompt (`-p PROMPT` with a pipe),
        /// sent after it as it is: data, never mention-expanded.
        piped: Option<String>,
        /// Images the user gave besides the text (`-p --image FILE`, a pasted image or
        /// path in the TUI): sent with the message as image parts, `[image #N]` in its
        /// text. Any frontend adds images here ([`Op::with_images`]).
        images: Vec<ImageInput>,
    },
    /// Run a slash command the user typed that becomes a turn: a skill or an MCP
    /// server's prompt.
    Invoke(Invocation),
    /// Run a command the user typed after `!` (shell mode). It is judged and run exactly
    /// as the model's `bash` call would be (permission rules, approval mode, sandbox,
    /// output caps), shown as a `bash` call between [`Event::TurnStarted`] and
    /// [`Event::TurnComplete`] (no model request is made), and what it printed goes to
    /// the model with the user's next message, as a note saying the user ran it.
    Shell {
        /// The command line, without the `!`.
        command: String,
    },
    /// The answer to an [`Event::ApprovalRequest`].
    Approval {
        /// The `call_id` of the request being answered.
        call_id: String,
        /// What the user decided.
        decision: ApprovalDecision,
    },
    /// Stop the running turn: abort the request in flight and kill any running tool.
    /// What was streamed so far stays in history, marked as interrupted.
    Interrupt,
    /// Forget the conversation and start a new one (same system prompt).
    NewConversation,
    /// Replace the conversation sent to the model by a summary now (`/compact`).
    Compact {
        /// What the summary should keep in view, as the user typed it.
        focus: Option<String>,
    },
    /// List this project's saved sessions ([`Event::SessionList`]), for `/resume`.
    ListSessions,
    /// List the permission rules in force ([`Event::Permissions`]), for `/permissions`.
    ListPermissions,
    /// Remove permission rule `number` (as listed) from the session and from the file
    /// it came from; answered with [`Event::PermissionRemoved`] or a warning.
    RemovePermission {
        /// The rule's number in the list.
        number: usize,
    },
    /// Go on with a saved session (`/resume ID`): its conversation, model and loaded
    /// skills replace the current ones.
    Resume {
        /// A session id or a unique prefix.
        id: String,
    },
    /// Switch the approval mode for the rest of the session (`/approvals MODE`,
    /// Shift+Tab); answered by [`Event::ApprovalModeChanged`]. Every later call is judged
    /// in the new mode, including the running turn's next one.
    SetApprovalMode {
        /// The new mode.
        mode: ApprovalMode,
    },
    /// Put back what the last turn with file changes changed (`/undo`); answered by
    /// [`Event::Undone`] or a warning.
    Undo,
    /// List the earlier user messages the conversation can be rewound to (Esc Esc on an
    /// empty composer); answered by [`Event::RewindPoints`].
    ListRewindPoints,
    /// Rewind to just before the user message of turn `turn` (one of
    /// [`Event::RewindPoints`]): that turn and every later one leave the conversation,
    /// and the files they changed are put back with the undo pictures (newest first,
    /// stopping at a file changed since). Answered by [`Event::Rewound`] or a warning.
    Rewind {
        /// The turn whose message is taken back.
        turn: u64,
    },
    /// Look for new, changed and removed skills now (`/skills reload`); answered by
    /// [`Event::SkillsReloaded`].
    ReloadSkills,
    /// Show what this session changed in the project (`/diff`); answered by
    /// [`Event::SessionDiff`] or a warning.
    Diff,
    /// Write the current session to a file (`/export`); answered by [`Event::Exported`].
    Export {
        /// Markdown or JSON.
        format: ExportFormat,
        /// Where; default `harness9-session-<id>.<ext>` in the project directory.
        path: Option<PathBuf>,
    },
    /// Tell the session's state (`/status`); answered by [`Event::Status`] once no
    /// turn runs (the model and the tokens are the turn's until it ends).
    Status,
    /// Tell what the model's context holds and what a request costs (`/context`);
    /// answered by [`Event::Context`] once no turn runs.
    Context,
    /// Use another model from the next request on.
    SetModel {
        /// The model id as the endpoint knows it, or `NAME/model` for a configured
        /// provider's model.
        model: String,
    },
    /// Use this reasoning effort from the next request on (`/effort LEVEL`); answered
    /// by [`Event::EffortChanged`] and recorded in the saved session.
    SetEffort {
        /// The level.
        effort: Effort,
    },
    /// List what each provider's `/models` offers (`/model` alone); answered by
    /// [`Event::ModelList`] once no turn runs.
    ListModels,
    /// End the session: interrupt any running turn, then send [`Event::ShutdownComplete`].
    Shutdown,

    // ----- listings: answered at once, even while a turn runs ------------------------
    /// List the skills as `/skills` shows them ([`Event::SkillList`]).
    ListSkills,
    /// List the MCP servers as `/mcp` shows them ([`Event::McpServerList`]).
    ListMcpServers,
    /// List the installed plugins as `/plugins` shows them ([`Event::PluginList`]).
    ListPlugins,
    /// List the hooks as `/hooks` shows them ([`Event::HookList`]).
    ListHooks,
}

/// Where a user message's text came from. Text that arrived on stdin may have been
/// written by anyone (a log, a web page, a file): it is data, and an `@path` in it is
/// never read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputOrigin {
    /// Typed by the user: the TUI's composer, the terminal REPL, the `-p` argument. Its
    /// `@path` mentions are attached (outside the project or secret: after asking).
    Typed,
    /// Read from stdin: `-p -`, `-p` with no argument, each line of the pipe REPL. Sent
    /// as it is.
    Piped,
}

/// An image a frontend hands over with a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageInput {
    /// A file the user named themselves (`--image FILE`, a pasted path): read as given
    /// (relative to the project), within `max_image_bytes`, an image by its first bytes.
    File {
        /// The path as given.
        path: std::path::PathBuf,
    },
    /// Bytes the frontend already holds (a clipboard image; ACP and stream-json images).
    Bytes {
        /// The image's bytes, checked like a file's.
        bytes: Vec<u8>,
        /// What to call it (`clipboard`, a file name).
        name: String,
    },
}

impl Op {
    /// `self` with `images` added, when it is a user message (other ops are returned as
    /// they are): the one way a frontend attaches images to what the user sends.
    pub fn with_images(self, more: Vec<ImageInput>) -> Op {
        match self {
            Op::UserInput {
                text,
                origin,
                piped,
                mut images,
            } => {
                images.extend(more);
                Op::UserInput {
                    text,
                    origin,
                    piped,
                    images,
                }
            }
            other => other,
        }
    }

    /// A message the user typed (its `@path` mentions are attached), with nothing piped.
    pub fn typed(text: impl Into<String>) -> Op {
        Op::UserInput {
            text: text.into(),
            origin: InputOrigin::Typed,
            piped: None,
            images: Vec::new(),
        }
    }
}

/// A user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this one call.
    Approve,
    /// Run it, and add the rules the request offered ([`Event::ApprovalRequest`]'s
    /// `offer`) for the rest of this session.
    ApproveForSession,
    /// Run it, and add the offered rules to the project's `.harness9/permissions.toml`
    /// (they hold in later sessions too).
    ApproveForProject,
    /// Do not run it; the model is told, with the reason when one is given. For a
    /// plan ([`ApprovalRequestKind::Plan`]): keep planning, with the reason as feedback.
    Deny {
        /// Optional words for the model about why.
        reason: Option<String>,
    },
    /// Approve a plan ([`ApprovalRequestKind::Plan`]) and leave plan mode for `mode`.
    ApprovePlan {
        /// The approval mode to carry the plan out in.
        mode: ApprovalMode,
    },
}

/// What a tool call is about to do, as shown to the person asked to approve it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalRequestKind {
    /// Run a shell command.
    Command {
        /// The command line.
        command: String,
        /// Where it runs.
        cwd: PathBuf,
    },
    /// Create, overwrite or edit a file.
    Edit {
        /// The file that changes: the real file, every symlink followed.
        path: PathBuf,
        /// The path as written, when it is not `path` (it goes through a symlink).
        #[serde(skip_serializing_if = "Option::is_none")]
        via: Option<PathBuf>,
        /// A unified diff of the change, when it could be computed in advance.
        diff: Option<String>,
        /// Inside or outside the project directory.
        location: Location,
    },
    /// Read something outside the project directory.
    ReadOutside {
        /// The path outside the project: the real path, every symlink followed.
        path: PathBuf,
        /// The path as written, when it is not `path` (it goes through a symlink).
        #[serde(skip_serializing_if = "Option::is_none")]
        via: Option<PathBuf>,
    },
    /// Read a file inside the project that a rule asks about (a secret file).
    Read {
        /// The file: the real path, every symlink followed.
        path: PathBuf,
        /// The path as written, when it is not `path` (it goes through a symlink).
        #[serde(skip_serializing_if = "Option::is_none")]
        via: Option<PathBuf>,
    },
    /// Call a tool of an MCP server, or read its resources.
    Mcp {
        /// The server.
        server: String,
        /// The tool's name on the server (`resources` for the resources tool).
        tool: String,
        /// Calling a tool, or reading resources.
        action: McpAction,
        /// The arguments as compact JSON (cut at 2,000 characters), or the resource URI.
        arguments: String,
    },
    /// Fetch a web page (`web_fetch`): judged by the host it names, in every mode.
    Fetch {
        /// The URL as the call gives it.
        url: String,
        /// Its host, lowercased (what `web_fetch(HOST)` rules match).
        domain: String,
    },
    /// Search the web (`web_search`) through the configured backend: judged by
    /// `web_search` rules, in every mode.
    Search {
        /// The query as it would be sent.
        query: String,
        /// The backend's host.
        backend: String,
    },
    /// Approve the plan (`exit_plan`) and leave plan mode, or keep planning.
    Plan {
        /// The plan file.
        file: PathBuf,
        /// Its text, as the model wrote it (untrusted: shown inert).
        text: String,
    },
}

/// What an MCP request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McpAction {
    /// Call one of its tools (asks in `suggest` and `auto-edit`).
    CallTool,
    /// List or read its resources (a read: runs in every mode unless a rule says no).
    ReadResource,
}

impl ApprovalRequestKind {
    /// The path a file request is about, as a person should read it: the real path, or
    /// `written -> real` when what was written goes through a symlink. `None` for
    /// commands and MCP calls.
    pub fn shown_path(&self) -> Option<String> {
        match self {
            ApprovalRequestKind::Edit { path, via, .. }
            | ApprovalRequestKind::Read { path, via }
            | ApprovalRequestKind::ReadOutside { path, via } => Some(match via {
                Some(via) => format!("{} -> {}", via.display(), path.display()),
                None => path.display().to_string(),
            }),
            ApprovalRequestKind::Command { .. }
            | ApprovalRequestKind::Mcp { .. }
            | ApprovalRequestKind::Fetch { .. }
            | ApprovalRequestKind::Search { .. }
            | ApprovalRequestKind::Plan { .. } => None,
        }
    }
}

/// Where a path lies relative to the project directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    /// Inside the project directory (or the directory itself), after following symlinks.
    Inside,
    /// Outside the project directory: reaching it needs approval.
    Outside,
}

/// How calls that change things are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Edits and commands need approval (the default).
    #[default]
    Suggest,
    /// Edits inside the project are approved; commands need approval.
    AutoEdit,
    /// Everything is approved.
    FullAuto,
    /// Plan mode: only reading tools; `bash` runs in the read-only sandbox (refused where
    /// there is none); writes only to the session's plan file.
    Plan,
}

/// Token counts for a request, a turn or a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent to the model (prompt).
    pub input_tokens: u64,
    /// Tokens the model produced (completion).
    pub output_tokens: u64,
    /// Of `input_tokens`, how many the provider served from its prompt cache.
    pub cached_input_tokens: u64,
    /// Of `input_tokens`, how many the provider wrote to its prompt cache (routes that
    /// charge for writes: Anthropic's models, Gemini's); absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// True when at least part of these counts is our estimate (about 4 bytes per
    /// token) because the provider sent no usage.
    pub estimated: bool,
    /// What it cost, when the model has a price in config.toml (`cost_usd` in JSON).
    #[serde(rename = "cost_usd", default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

impl Usage {
    /// Adds another count to this one; the sum is an estimate if either part was, and
    /// its cost is the sum of the parts' known costs.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.estimated |= other.estimated;
        self.cost = match (self.cost, other.cost) {
            (Some(a), Some(b)) => Some(a.plus(b)),
            (a, b) => a.or(b),
        };
    }

    /// Input plus output tokens.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// The share of input tokens served from the provider's prompt cache, in percent
    /// (`None` before any input was counted).
    pub fn cache_hit_percent(&self) -> Option<u64> {
        (self.input_tokens > 0)
            .then(|| self.cached_input_tokens.min(self.input_tokens) * 100 / self.input_tokens)
    }

    /// What the prompt cache did, worded once for `/usage` and `/status`
    /// (`83% hit (1000 read, 50 written)`); `None` when it did nothing.
    pub fn cache_summary(&self) -> Option<String> {
        if self.cached_input_tokens == 0 && self.cache_write_tokens == 0 {
            return None;
        }
        let percent = self.cache_hit_percent().unwrap_or(0);
        let mut text = format!("{percent}% hit ({} read", self.cached_input_tokens);
        if self.cache_write_tokens > 0 {
            text.push_str(&format!(", {} written", self.cache_write_tokens));
        }
        text.push(')');
        Some(text)
    }
}

/// For serde: a count of zero is left out.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The classes of failure a user or a script needs to tell apart. Each maps to one
/// exit code in print and pipe modes (see docs/HEADLESS.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The API key was refused (401/403).
    Auth,
    /// The endpoint does not know the model (404 naming the model).
    ModelNotFound,
    /// The request was refused as malformed (400/422).
    BadRequest,
    /// The request carried images and the server refused them: the model cannot see
    /// (a 4xx/5xx naming images, vision or the content type).
    ImagesRefused,
    /// The conversation no longer fits the model's context window.
    ContextTooLong,
    /// Too many requests (429) even after waiting and retrying.
    RateLimit,
    /// The account's quota or credit is exhausted.
    Quota,
    /// The provider failed (5xx) on every attempt.
    Server,
    /// The endpoint could not be reached, or the connection broke, on every attempt.
    Network,
    /// No bytes arrived for longer than the idle timeout.
    Timeout,
    /// The endpoint answered with something that is not a chat completion.
    Protocol,
    /// `--max-turns` was reached before the model finished.
    MaxTurns,
    /// The answer was cut off at the model's output token limit.
    OutputLimit,
    /// The provider's content filter cut the answer off.
    ContentFilter,
    /// The user interrupted the turn.
    Interrupted,
    /// `--timeout`: the run's time limit stopped it.
    TimeLimit,
    /// `--max-cost`: the run's cost limit stopped it (or a model without a price).
    CostLimit,
    /// `--output-schema`: the final answer was not valid against the schema, even
    /// after one repair.
    OutputSchema,
    /// A skill could not be invoked (unreadable body, a failing inline command).
    Skill,
    /// A UserPromptSubmit hook blocked the prompt (it was not sent).
    HookBlocked,
    /// The input or the command line cannot be used (an unknown slash command or an
    /// empty prompt with `-p`, an invalid flag or config.toml).
    Usage,
    /// Anything else inside harness9 (a bug, an I/O failure).
    Internal,
}

impl ErrorKind {
    /// The stable snake_case name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::ModelNotFound => "model_not_found",
            ErrorKind::BadRequest => "bad_request",
            ErrorKind::ImagesRefused => "images_refused",
            ErrorKind::ContextTooLong => "context_too_long",
            ErrorKind::RateLimit => "rate_limit",
            ErrorKind::Quota => "quota",
            ErrorKind::Server => "server",
            ErrorKind::Network => "network",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Protocol => "protocol",
            ErrorKind::MaxTurns => "max_turns",
            ErrorKind::OutputLimit => "output_limit",
            ErrorKind::ContentFilter => "content_filter",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::TimeLimit => "time_limit",
            ErrorKind::CostLimit => "cost_limit",
            ErrorKind::OutputSchema => "output_schema",
            ErrorKind::Skill => "skill",
            ErrorKind::HookBlocked => "hook_blocked",
            ErrorKind::Usage => "usage",
            ErrorKind::Internal => "internal",
        }
    }
}
