//! Command-line arguments (clap). This module owns the flag names users script against
//! (documented in README.md and docs/HEADLESS.md) and turns them into config
//! [`Overrides`]. It must not read files, the environment or the terminal.

pub mod hints;
mod limits;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

use crate::config::Overrides;
use crate::mcp::cli::{AddRequest, Scope};
use crate::mcp::config::ServerFile;
use crate::print::OutputFormat;
use crate::protocol::{ApprovalMode, Effort};
use crate::repl::InputFormat;
use crate::sandbox::SandboxMode;

/// harness9: a terminal coding agent for any OpenAI-compatible endpoint, with Agent Skills.
///
/// With stdin and stdout on a terminal it opens the TUI; otherwise it reads one prompt
/// per line from stdin. `harness9 "PROMPT"` starts either with that first message;
/// `-p PROMPT` runs one prompt and exits.
#[derive(Debug, Parser)]
#[command(name = "harness9", version, about, long_about = None)]
pub struct Cli {
    /// The session's first message, sent as if typed (the TUI, or the REPL; with stdin
    /// piped, each line after it is a turn of its own). A subcommand's name is the
    /// subcommand: send such a word with `harness9 -- skills`.
    #[arg(value_name = "PROMPT", conflicts_with = "print")]
    pub prompt: Option<String>,

    /// Run one prompt and exit (print mode). Piped stdin is appended as context; with
    /// `-p -` (or an empty `-p ""`) piped stdin is the whole prompt.
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    pub print: Option<String>,

    /// An image sent with the `-p` prompt (PNG, JPEG, GIF or WebP, told by its bytes;
    /// at most max_image_bytes). Repeat it for several.
    #[arg(long = "image", value_name = "FILE", requires = "print")]
    pub images: Vec<PathBuf>,

    /// Output format for print and pipe modes.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Input format for print and pipe modes: `stream-json` reads JSON lines from stdin
    /// (messages, approval answers, interrupts, approval mode changes; docs/HEADLESS.md)
    /// and needs `--output-format stream-json`.
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    pub input_format: InputFormat,

    /// Model id (overrides HARNESS9_MODEL and config.toml).
    #[arg(short = 'm', long, global = true)]
    pub model: Option<String>,

    /// Endpoint base URL, e.g. http://127.0.0.1:8080/v1 (overrides OPENAI_BASE_URL).
    #[arg(long, value_name = "URL", global = true)]
    pub base_url: Option<String>,

    /// Project directory (default: the current directory).
    #[arg(
        short = 'C',
        long = "cwd",
        visible_alias = "cd",
        value_name = "DIR",
        global = true
    )]
    pub cwd: Option<PathBuf>,

    /// Most model requests in one turn before it stops.
    #[arg(long, value_name = "N", global = true)]
    pub max_turns: Option<u32>,

    /// How hard a reasoning model thinks: low, medium, high, or off (overrides
    /// reasoning_effort in config.toml; /effort changes it during the session).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub effort: Option<EffortArg>,

    /// What runs without asking (reading inside the project always does): suggest
    /// (nothing more), auto-edit (edits inside the project, and read-only commands inside
    /// the sandbox), full-auto (everything).
    #[arg(long, value_enum, global = true)]
    pub approval_mode: Option<ApprovalModeArg>,

    /// How commands run for the model are confined: read-only, workspace-write (writes
    /// only in the project and temp folders, no network), off. Default: workspace-write
    /// in auto-edit and full-auto, off in suggest.
    #[arg(long, value_enum, global = true)]
    pub sandbox: Option<SandboxArg>,

    /// Extra skills root, searched before the project and user roots (repeatable).
    #[arg(long = "skills-dir", value_name = "DIR", global = true)]
    pub skills_dirs: Vec<PathBuf>,

    /// Go on with the latest saved session of this project.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Go on with a saved session (an id or a unique prefix); without an id, pick one
    /// (TUI) or list them.
    #[arg(
        short = 'r',
        long,
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub resume: Option<String>,

    /// Do not save this session (also `sessions = false` in config.toml).
    #[arg(long, global = true)]
    pub no_session: bool,

    /// Text output (`-p` and pipe mode): the answer exactly as the model wrote it, its
    /// Markdown markers kept (by default they are rendered: styled on a terminal,
    /// removed elsewhere).
    #[arg(long)]
    pub raw: bool,

    /// Text output (`-p` and the REPL): the model's reasoning on stderr as it streams,
    /// dimmed on a terminal (also `show_reasoning = true` in config.toml).
    #[arg(long)]
    pub show_reasoning: bool,

    /// Use the line REPL even on a terminal.
    #[arg(long)]
    pub no_tui: bool,

    /// TUI in the alternate screen instead of inline.
    #[arg(long)]
    pub alt_screen: bool,

    /// Show tool activity, retries and token counts on stderr (text output).
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// A permission rule that runs matching calls without asking, for this run only
    /// (repeatable; the syntax of config.toml's rules, e.g. `bash(cargo test:*)`).
    #[arg(long = "allow", value_name = "RULE")]
    pub allow: Vec<String>,

    /// A permission rule that refuses matching calls, for this run only (repeatable;
    /// a deny rule wins over every allow rule).
    #[arg(long = "deny", value_name = "RULE")]
    pub deny: Vec<String>,

    /// Text added to the system prompt after the instruction files (AGENTS.md), as
    /// written; for a file's text, `--append-system-prompt "$(cat FILE)"`.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// Stop the run after this long (`90s`, `10m`, `1h30m`): the turn is interrupted,
    /// its commands stopped, the session saved; error kind `time_limit`, exit 6.
    #[arg(long, value_name = "DURATION", value_parser = limits::duration)]
    pub timeout: Option<Duration>,

    /// Stop the run once it has spent more than this many US dollars (`0.50`), priced
    /// by config.toml's `[prices]` (a model without a price is refused); error kind
    /// `cost_limit`, exit 7.
    #[arg(long, value_name = "USD", value_parser = limits::dollars)]
    pub max_cost: Option<crate::protocol::Cost>,

    /// A JSON Schema file (self-contained) the final answer must be valid against: an
    /// invalid answer is sent back once to be repaired, then the turn fails (error
    /// kind `output_schema`, exit 8); `-p`'s `result` carries `structured_output`.
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,

    /// A subcommand instead of a session.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--approval-mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovalModeArg {
    /// Edits and commands need approval.
    Suggest,
    /// Edits inside the project run, and read-only commands (ls, cat, rg, git status…)
    /// when the sandbox confines them; other commands need approval.
    AutoEdit,
    /// Everything runs (commands in the sandbox unless it is off).
    FullAuto,
    /// Plan mode: reading tools only, `bash` in the read-only sandbox, writes only to
    /// the plan file; `exit_plan` ends the run with the plan.
    Plan,
}

/// `--effort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EffortArg {
    /// Little thinking.
    Low,
    /// Some thinking.
    Medium,
    /// Much thinking.
    High,
    /// Thinking off, where the server has a switch for it.
    Off,
}

impl From<EffortArg> for Effort {
    fn from(value: EffortArg) -> Self {
        match value {
            EffortArg::Low => Effort::Low,
            EffortArg::Medium => Effort::Medium,
            EffortArg::High => Effort::High,
            EffortArg::Off => Effort::Off,
        }
    }
}

/// `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    /// Commands may write nothing (but /dev/null) and reach no network.
    ReadOnly,
    /// Commands may write only in the project, the temp folders and configured paths.
    WorkspaceWrite,
    /// No sandbox.
    Off,
}

impl From<SandboxArg> for SandboxMode {
    fn from(value: SandboxArg) -> Self {
        match value {
            SandboxArg::ReadOnly => SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxArg::Off => SandboxMode::Off,
        }
    }
}

impl From<ApprovalModeArg> for ApprovalMode {
    fn from(value: ApprovalModeArg) -> Self {
        match value {
            ApprovalModeArg::Suggest => ApprovalMode::Suggest,
            ApprovalModeArg::AutoEdit => ApprovalMode::AutoEdit,
            ApprovalModeArg::FullAuto => ApprovalMode::FullAuto,
            ApprovalModeArg::Plan => ApprovalMode::Plan,
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect and check skills.
    Skills {
        /// What to do.
        #[command(subcommand)]
        action: SkillsAction,
    },
    /// Inspect and check agent definitions (the sub-agents the `agent` tool runs).
    Agents {
        /// What to do.
        #[command(subcommand)]
        action: AgentsAction,
    },
    /// List, show, export and prune saved sessions.
    Sessions {
        /// What to do.
        #[command(subcommand)]
        action: SessionsAction,
    },
    /// List or get the files skill runs saved as artifacts in a session.
    Artifacts {
        /// What to do.
        #[command(subcommand)]
        action: ArtifactsAction,
    },
    /// List the permission rules in force, or approve the project's allow rules.
    Permissions {
        /// What to do.
        #[command(subcommand)]
        action: PermissionsAction,
    },
    /// List, check, add and remove MCP servers, or approve the project's.
    Mcp {
        /// What to do.
        #[command(subcommand)]
        action: McpAction,
    },
    /// Add, list, remove and trust Claude Code plugins (commands, skills, agents, hooks
    /// and MCP servers in one folder); nothing from a plugin loads before `trust`.
    Plugin {
        /// What to do.
        #[command(subcommand)]
        action: PluginAction,
    },
    /// List the hooks (config.toml's and the project's) with whether each is in force,
    /// or trust or untrust the project's hooks as they are now.
    Hooks {
        /// What to do.
        #[command(subcommand)]
        action: HooksAction,
    },
    /// What a session started here puts in the model's context: the instruction files
    /// (with bytes and tokens, and what was shortened), the skill roots, the MCP index,
    /// and what the first request costs (system prompt, tools, window).
    Context {
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains,
    /// Neovim, Emacs): one session in this directory, with the usual flags.
    Acp,
    /// A peer's subcommand (hidden), answered with the harness9 way.
    #[command(flatten)]
    Peer(hints::PeerCommand),
}

/// `harness9 plugin ...`.
#[derive(Debug, Subcommand)]
pub enum PluginAction {
    /// Copy a plugin folder, clone a git URL (shallow, no git hooks run), or take one
    /// plugin of a marketplace (a folder with `.claude-plugin/marketplace.json`, or that
    /// file) into `$HARNESS9_HOME/plugins/NAME/`. It is not trusted: nothing from it
    /// loads until `harness9 plugin trust NAME`.
    Add {
        /// A plugin folder, a marketplace folder or file, or a git URL of either.
        source: String,
        /// The marketplace's plugin to add (a plugin folder's own name, if given).
        name: Option<String>,
    },
    /// Every added plugin: whether it is trusted, what it contributes, its problems.
    List {
        /// JSON output (an array, one object per plugin; fields in docs/PLUGINS.md).
        #[arg(long)]
        json: bool,
    },
    /// Remove an added plugin (its folder and its record).
    Remove {
        /// The plugin's name.
        name: String,
    },
    /// Show what a plugin runs (hook commands, MCP servers) and trust it as its files
    /// are now; any later change to them untrusts it.
    Trust {
        /// The plugin's name.
        name: String,
    },
}

/// `harness9 mcp ...`.
#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Every configured server (disabled and unapproved ones too): where it is defined,
    /// what runs, and its state; enabled, approved servers are started to check them
    /// (at most 15 s each, side by side).
    List {
        /// JSON output (an array, one object per server; fields in docs/CONFIG.md).
        #[arg(long)]
        json: bool,
    },
    /// Start a server and list its tools (with the names the model calls them by), its
    /// prompts and whether it has resources.
    Tools {
        /// The server's name.
        name: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `harness9 mcp add NAME [OPTIONS] -- COMMAND [ARGS...]` (stdio) or
    /// `harness9 mcp add NAME --url URL [OPTIONS]` (streamable HTTP).
    Add(McpAddArgs),
    /// Remove a server's `[mcp_servers.NAME]` table.
    Remove {
        /// The server's name.
        name: String,
        /// The file to remove it from (default: the one whose definition is in force).
        #[arg(long, value_enum)]
        scope: Option<McpScopeArg>,
    },
    /// Show the servers this project defines (.harness9/config.toml, .mcp.json) and
    /// approve them for this machine (they come with the repository, so they never start
    /// until you do).
    Trust,
}

/// `harness9 mcp add`.
#[derive(Debug, clap::Args)]
pub struct McpAddArgs {
    /// The server's name (letters, digits, `-`, `_`).
    pub name: String,
    /// Where to write it: your config.toml (user) or the project's .harness9/config.toml.
    #[arg(long, value_enum, default_value_t = McpScopeArg::User)]
    pub scope: McpScopeArg,
    /// A variable set for a stdio server (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = key_value)]
    pub env: Vec<(String, String)>,
    /// A secret-looking variable of harness9's environment passed on to a stdio server
    /// (repeatable; others are kept from it).
    #[arg(long = "env-var", value_name = "VAR")]
    pub env_vars: Vec<String>,
    /// Its tools are in the tool list from the start (it starts in the background).
    #[arg(long)]
    pub preload: bool,
    /// Its line in the system prompt's index.
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,
    /// The endpoint of a streamable HTTP server (instead of a command).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// An HTTP header sent with every request (repeatable).
    #[arg(long = "header", value_name = "KEY=VALUE", value_parser = key_value)]
    pub headers: Vec<(String, String)>,
    /// The environment variable holding a bearer token for the server.
    #[arg(long, value_name = "VAR")]
    pub bearer_token_env: Option<String>,
    /// Replace a server of the same name.
    #[arg(long)]
    pub force: bool,
    /// The command of a stdio server and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `mcp add|remove --scope` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpScopeArg {
    /// Your config.toml.
    User,
    /// The project's .harness9/config.toml.
    Project,
}

impl From<McpScopeArg> for Scope {
    fn from(value: McpScopeArg) -> Self {
        match value {
            McpScopeArg::User => Scope::User,
            McpScopeArg::Project => Scope::Project,
        }
    }
}

/// `KEY=VALUE`, split at the first `=`.
fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("expected KEY=VALUE, got {text:?}")),
    }
}

impl McpAddArgs {
    /// The request these arguments make.
    pub fn request(&self) -> AddRequest {
        let (command, args) = match self.command.split_first() {
            Some((command, args)) => (Some(command.clone()), args.to_vec()),
            None => (None, Vec::new()),
        };
        AddRequest {
            name: self.name.clone(),
            scope: self.scope.into(),
            server: ServerFile {
                command,
                args,
                env: self.env.iter().cloned().collect(),
                env_vars: self.env_vars.clone(),
                url: self.url.clone(),
                headers: self.headers.iter().cloned().collect(),
                bearer_token_env: self.bearer_token_env.clone(),
                preload: self.preload.then_some(true),
                description: self.description.clone(),
                ..ServerFile::default()
            },
            force: self.force,
        }
    }
}

/// `harness9 permissions ...`.
#[derive(Debug, Subcommand)]
pub enum PermissionsAction {
    /// Every rule in force (built-in, config.toml, .harness9/permissions.toml), numbered,
    /// with where it came from; then the project's allow rules not yet approved.
    List,
    /// Approve the allow rules now in this project's .harness9/permissions.toml (they
    /// come with the repository, so they apply only once you approve them).
    Trust,
}

/// `harness9 hooks ...`.
#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Every hook (config.toml, .harness9/hooks.toml, .claude/settings*.json) by event,
    /// with its matcher, command, file, whether it is a guard, and whether it is in force
    /// (and why not).
    List {
        /// JSON output (one object: `hooks` and `problems`; fields in docs/HOOKS.md).
        #[arg(long)]
        json: bool,
    },
    /// Show the project's hooks as they are now, then trust exactly those on this
    /// machine (a hook added or changed later is not in force until trusted again).
    Trust,
    /// Forget the trust given to this project's hooks: none of them runs any more.
    Untrust,
}

/// `harness9 sessions ...`.
#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// This project's saved sessions, newest first.
    List {
        /// Every project's sessions, with a project column.
        #[arg(long)]
        all: bool,
        /// JSON output (an array of summaries).
        #[arg(long)]
        json: bool,
    },
    /// A session's header and a short transcript.
    Show {
        /// Session id or a unique prefix of one.
        id: String,
    },
    /// A session as Markdown (for a pull request) or as one JSON document.
    Export {
        /// Session id or a unique prefix of one.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = SessionExportFormat::Md)]
        format: SessionExportFormat,
        /// Write to FILE (replaced atomically) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Remove sessions not used for longer than an age.
    Prune {
        /// Age such as 30d, 12h, 90m or 2w.
        #[arg(long, value_name = "AGE", value_parser = crate::sessions::parse_age)]
        older_than: Duration,
        /// Only list what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `harness9 artifacts ...`.
#[derive(Debug, Subcommand)]
pub enum ArtifactsAction {
    /// Every saved version, oldest first.
    List {
        /// Session id or a unique prefix of one (default: this project's latest).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// JSON output (an array).
        #[arg(long)]
        json: bool,
    },
    /// One artifact's content (the latest version unless NAME@VERSION).
    Get {
        /// NAME or NAME@VERSION.
        name: String,
        /// Session id or a unique prefix of one (default: this project's latest).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Write to FILE instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// `sessions export --format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SessionExportFormat {
    /// Markdown.
    #[value(alias = "markdown")]
    Md,
    /// JSON: `{"header": ..., "records": [...]}`.
    Json,
}

/// `harness9 skills ...`.
#[derive(Debug, Subcommand)]
pub enum SkillsAction {
    /// Every skill found, with its root, path, status and index budget use.
    List {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// A skill's metadata and body.
    Show {
        /// Skill name.
        name: String,
    },
    /// Check skills against the Agent Skills specification (exit 1 on problems).
    Validate {
        /// SKILL.md files or directories (default: every discovered root).
        paths: Vec<PathBuf>,
    },
}

/// `harness9 agents ...`.
#[derive(Debug, Subcommand)]
pub enum AgentsAction {
    /// Every agent definition found (built-in, project, user, extra), with its origin,
    /// path, status and the index's budget use.
    List {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// A definition's settings and prompt.
    Show {
        /// Agent name.
        name: String,
    },
    /// Check agent definition files (exit 1 on errors).
    Validate {
        /// Definition files or folders (default: every agents folder found).
        paths: Vec<PathBuf>,
    },
}

/// Which saved session a run goes on with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeRequest {
    /// None: a new session.
    New,
    /// `-c`: the latest of this project.
    Latest,
    /// `--resume ID`.
    Id(String),
    /// `--resume` alone: pick one.
    Pick,
}

/// The setting flags (global, so they also work after a subcommand) that mean something
/// for a subcommand besides `-C`, by its path; its `--help` lists only those. The rest
/// still parse there (a script's flags never break it) but are hidden.
const SUBCOMMAND_SETTINGS: &[(&[&str], &[&str])] = &[
    // The index budget follows the model's context window.
    (&["skills", "list"], &["skills_dirs", "model", "base_url"]),
    (&["skills", "show"], &["skills_dirs"]),
    (&["skills", "validate"], &["skills_dirs"]),
    (&["agents", "list"], &["model", "base_url"]),
    // Servers start sandboxed as a session's would.
    (&["mcp", "list"], &["sandbox", "approval_mode"]),
    (&["mcp", "tools"], &["sandbox", "approval_mode"]),
    // The window and the skill roots are the session's.
    (&["context"], &["skills_dirs", "model", "base_url"]),
];

/// The one setting flag every subcommand takes.
const EVERY_SUBCOMMAND: &str = "cwd";

/// [`Cli`]'s command with each subcommand's help listing only the setting flags that
/// mean something there ([`SUBCOMMAND_SETTINGS`]). For drawing help only: clap parses
/// with [`Cli`]'s own (a command changed after it was built must not parse).
pub fn help_command() -> clap::Command {
    use clap::CommandFactory;
    let mut command = Cli::command();
    command.build();
    for sub in command.get_subcommands_mut() {
        let path = vec![sub.get_name().to_string()];
        hide_settings(sub, &path);
    }
    command
}

/// The help a command line asking for it (`-h`, `--help`, `help …`) gets, when it is a
/// subcommand's: drawn from [`help_command`]. `None` for the top level's (clap's own
/// stands) or a line that asks for no help.
pub fn subcommand_help(error: &clap::Error, args: &[String]) -> Option<clap::builder::StyledStr> {
    if error.kind() != clap::error::ErrorKind::DisplayHelp {
        return None;
    }
    let path = help_path(args);
    if path.is_empty() {
        return None;
    }
    let mut command = help_command();
    let mut found = &mut command;
    for name in &path {
        found = found.find_subcommand_mut(name)?;
    }
    let long = !args.iter().any(|a| a == "-h");
    Some(if long {
        found.render_long_help()
    } else {
        found.render_help()
    })
}

/// The subcommand whose help `args` ask for: `help skills list`, or the subcommands
/// clap finds in the line without its `-h`/`--help` (flag values are not taken for
/// names).
fn help_path(args: &[String]) -> Vec<String> {
    use clap::CommandFactory;
    let asked = args.iter().filter(|a| *a != "-h" && *a != "--help");
    let parsed = Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(asked);
    let matches = match parsed {
        Ok(matches) if matches.subcommand_name() != Some("help") => matches,
        // `help skills list` (which clap answers itself): the words after `help`.
        _ => {
            return args
                .iter()
                .skip_while(|a| *a != "help")
                .skip(1)
                .take_while(|a| !a.starts_with('-'))
                .cloned()
                .collect();
        }
    };
    let mut path = Vec::new();
    let mut at = &matches;
    while let Some((name, sub)) = at.subcommand() {
        path.push(name.to_string());
        at = sub;
    }
    path
}

/// Hides in `command` (at `path`) and below it the setting flags that mean nothing there.
fn hide_settings(command: &mut clap::Command, path: &[String]) {
    let meaningful: &[&str] = SUBCOMMAND_SETTINGS
        .iter()
        .find(|(at, _)| at.iter().eq(path.iter()))
        .map_or(&[], |(_, flags)| flags);
    let hidden: Vec<String> = command
        .get_arguments()
        .filter(|arg| arg.is_global_set())
        .map(|arg| arg.get_id().to_string())
        .filter(|id| id != EVERY_SUBCOMMAND && !meaningful.contains(&id.as_str()))
        .collect();
    let mut changed = std::mem::take(command);
    for id in hidden {
        changed = changed.mut_arg(id, |arg| arg.hide(true));
    }
    *command = changed;
    for sub in command.get_subcommands_mut() {
        let mut below = path.to_vec();
        below.push(sub.get_name().to_string());
        hide_settings(sub, &below);
    }
}

impl Cli {
    /// Which session to go on with.
    pub fn resume_request(&self) -> ResumeRequest {
        match (&self.resume, self.continue_session) {
            (Some(id), _) if id.trim().is_empty() => ResumeRequest::Pick,
            (Some(id), _) => ResumeRequest::Id(id.trim().to_string()),
            (None, true) => ResumeRequest::Latest,
            (None, false) => ResumeRequest::New,
        }
    }

    /// The config overrides these flags carry.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            workdir: self.cwd.clone(),
            max_turns: self.max_turns,
            effort: self.effort.map(Into::into),
            approval_mode: self.approval_mode.map(Into::into),
            sandbox: self.sandbox.map(Into::into),
            skills_dirs: self.skills_dirs.clone(),
            rules: crate::permissions::files::CommandLineRules {
                allow: self.allow.clone(),
                deny: self.deny.clone(),
            },
            run: crate::config::RunSettings {
                append_system_prompt: self.append_system_prompt.clone(),
                timeout: self.timeout,
                max_cost: self.max_cost,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_into_overrides() {
        let cli = Cli::try_parse_from([
            "harness9",
            "-p",
            "fix it",
            "--model",
            "m",
            "--base-url",
            "http://x/v1",
            "-C",
            "/tmp",
            "--max-turns",
            "3",
            "--approval-mode",
            "auto-edit",
            "--skills-dir",
            "a",
            "--skills-dir",
            "b",
            "--output-format",
            "stream-json",
        ])
        .unwrap();
        assert_eq!(cli.print.as_deref(), Some("fix it"));
        assert_eq!(cli.output_format, OutputFormat::StreamJson);
        let o = cli.overrides();
        assert_eq!(o.approval_mode, Some(ApprovalMode::AutoEdit));
        assert_eq!(o.skills_dirs, vec![PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!(o.max_turns, Some(3));
    }

    #[test]
    fn resume_flags_parse() {
        let of = |args: &[&str]| {
            let mut all = vec!["harness9"];
            all.extend_from_slice(args);
            Cli::try_parse_from(all).map(|c| c.resume_request())
        };
        assert_eq!(of(&[]).unwrap(), ResumeRequest::New);
        assert_eq!(of(&["-c", "-p", "go"]).unwrap(), ResumeRequest::Latest);
        assert_eq!(of(&["--continue"]).unwrap(), ResumeRequest::Latest);
        assert_eq!(of(&["--resume"]).unwrap(), ResumeRequest::Pick);
        assert_eq!(
            of(&["--resume", "2026"]).unwrap(),
            ResumeRequest::Id("2026".into())
        );
        assert!(of(&["-c", "--resume", "x"]).is_err());
    }

    #[test]
    fn skills_subcommands_parse() {
        let cli = Cli::try_parse_from(["harness9", "skills", "validate", "x/SKILL.md"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Skills { action: SkillsAction::Validate { ref paths } }) if paths.len() == 1
        ));
        assert!(Cli::try_parse_from(["harness9", "--approval-mode", "yolo"]).is_err());
    }

    #[test]
    fn sessions_subcommands_parse() {
        let cli = Cli::try_parse_from([
            "harness9", "sessions", "export", "2026", "--format", "json", "-o", "x.json",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Sessions {
                action: SessionsAction::Export {
                    format: SessionExportFormat::Json,
                    output: Some(_),
                    ..
                }
            })
        ));
        let cli =
            Cli::try_parse_from(["harness9", "sessions", "prune", "--older-than", "2w"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Sessions {
                action: SessionsAction::Prune { older_than, dry_run: false }
            }) if older_than == Duration::from_secs(14 * 86_400)
        ));
        assert!(
            Cli::try_parse_from(["harness9", "sessions", "prune", "--older-than", "soon"]).is_err()
        );
        assert!(Cli::try_parse_from(["harness9", "sessions", "prune"]).is_err());
        assert!(Cli::try_parse_from(["harness9", "sessions", "list", "--all", "--json"]).is_ok());
    }

    #[test]
    fn mcp_add_parses_a_command_or_a_url() {
        let parse = |args: &[&str]| {
            let mut all = vec!["harness9", "mcp", "add"];
            all.extend_from_slice(args);
            Cli::try_parse_from(all).map(|c| match c.command {
                Some(Command::Mcp {
                    action: McpAction::Add(add),
                }) => add.request(),
                other => panic!("{other:?}"),
            })
        };
        let r = parse(&[
            "fs",
            "--env",
            "A=b=c",
            "--env-var",
            "TOKEN",
            "--preload",
            "--",
            "npx",
            "-y",
            "server",
            "--scope",
            "x",
        ])
        .unwrap();
        assert_eq!(r.name, "fs");
        assert_eq!(r.scope, Scope::User);
        assert_eq!(r.server.command.as_deref(), Some("npx"));
        assert_eq!(r.server.args, ["-y", "server", "--scope", "x"]);
        assert_eq!(r.server.env.get("A").map(String::as_str), Some("b=c"));
        assert_eq!(r.server.preload, Some(true));
        let r = parse(&[
            "docs",
            "--url",
            "https://x/mcp",
            "--header",
            "X-A=1",
            "--bearer-token-env",
            "T",
            "--scope",
            "project",
        ])
        .unwrap();
        assert_eq!(r.scope, Scope::Project);
        assert_eq!(r.server.url.as_deref(), Some("https://x/mcp"));
        assert_eq!(r.server.headers.len(), 1);
        assert!(parse(&["x", "--url", "http://x", "--", "cmd"]).is_err());
        assert!(parse(&["x", "--env", "novalue", "--", "cmd"]).is_err());
        assert!(
            Cli::try_parse_from(["harness9", "mcp", "remove", "x", "--scope", "project"]).is_ok()
        );
        assert!(Cli::try_parse_from(["harness9", "mcp", "tools", "x", "--json"]).is_ok());
    }

    #[test]
    fn setting_flags_work_before_and_after_a_subcommand() {
        let before = Cli::try_parse_from([
            "harness9",
            "-C",
            "/p",
            "--skills-dir",
            "x",
            "skills",
            "list",
        ])
        .unwrap();
        let after = Cli::try_parse_from([
            "harness9",
            "skills",
            "list",
            "--skills-dir",
            "x",
            "-C",
            "/p",
            "--model",
            "m",
            "-v",
        ])
        .unwrap();
        assert_eq!(before.overrides().skills_dirs, vec![PathBuf::from("x")]);
        assert_eq!(after.overrides().skills_dirs, vec![PathBuf::from("x")]);
        assert_eq!(after.overrides().workdir, Some(PathBuf::from("/p")));
        assert_eq!(after.overrides().model.as_deref(), Some("m"));
        assert!(after.verbose);
        // Mode flags belong to a session, not to a subcommand.
        assert!(Cli::try_parse_from(["harness9", "skills", "list", "-p", "hi"]).is_err());
    }

    /// The help says what the README and the approval policy do: auto-edit also runs
    /// read-only commands inside the sandbox.
    #[test]
    fn the_approval_mode_help_agrees_with_the_policy_on_auto_edit() {
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        let auto_edit = help
            .lines()
            .find(|l| l.trim_start().starts_with("- auto-edit:"))
            .unwrap_or_else(|| panic!("{help}"));
        assert!(
            auto_edit.contains("read-only commands") && auto_edit.contains("sandbox"),
            "{auto_edit}"
        );
        assert!(!help.contains("suggest (read only)"), "{help}");
    }

    #[test]
    fn a_subcommands_help_lists_only_the_setting_flags_that_mean_something_there() {
        let mut cmd = help_command();
        let sessions = cmd.find_subcommand_mut("sessions").unwrap();
        let list = sessions.find_subcommand_mut("list").unwrap();
        let help = list.render_long_help().to_string();
        assert!(help.contains("--cwd"), "{help}");
        for flag in [
            "--model",
            "--base-url",
            "--approval-mode",
            "--sandbox",
            "--max-turns",
            "--skills-dir",
            "--no-session",
            "--verbose",
        ] {
            assert!(!help.contains(flag), "{flag} in:\n{help}");
        }
        let mcp = cmd.find_subcommand_mut("mcp").unwrap();
        let tools = mcp.find_subcommand_mut("tools").unwrap();
        let help = tools.render_long_help().to_string();
        assert!(
            help.contains("--sandbox") && !help.contains("--model"),
            "{help}"
        );
        let skills = cmd.find_subcommand_mut("skills").unwrap();
        let list = skills.find_subcommand_mut("list").unwrap();
        let help = list.render_long_help().to_string();
        for flag in ["--skills-dir", "--cwd", "--model", "--base-url"] {
            assert!(help.contains(flag), "{flag} missing from:\n{help}");
        }
        assert!(!help.contains("--approval-mode"), "{help}");
    }
}
