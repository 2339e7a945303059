//! Configuration: one resolved [`Config`] built from, in order of precedence, command-line
//! overrides, the environment, `$HARNESS9_HOME/config.toml` and defaults.
//!
//! This module owns the config file format, the environment variable names and the
//! defaults. It reads the environment through a lookup function so tests never touch the
//! process environment. It must not know about frontends or terminals, and it makes no
//! network request except the optional start-up probes: the local Ollama one in
//! [`probe_ollama`], and, when no model is configured, the endpoint's model list in
//! [`probe_models`] (both a tiny blocking plain-HTTP GET with short timeouts).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::exec::secrets::SecretPolicy;
use crate::llm::{AuthHeader, ProviderConfig};
use crate::permissions::PermissionsSetup;
use crate::permissions::files::UserPermissions;
use crate::protocol::ApprovalMode;
use crate::sandbox::{Network, SandboxMode, SandboxSettings};
use crate::tools::ToolLimits;
use crate::tools::skill_run::CommandLists;

/// Default model when none is configured.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// Default endpoint when only a key is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Where a local Ollama serves its OpenAI-compatible API.
pub const OLLAMA_ADDR: &str = "127.0.0.1:11434";
/// Default cap on model requests per turn.
pub const DEFAULT_MAX_TURNS: u32 = 50;
/// How long the start-up `GET {base_url}/models` may take, connecting included, by
/// default (`model_probe_timeout_ms`): long enough for a loaded local server. It is
/// asked only when no model is configured, and a server that is not there refuses the
/// connection at once, so only a slow server's answer is waited for.
pub const MODEL_PROBE_TIMEOUT: Duration = Duration::from_millis(3000);
/// The longest `model_probe_timeout_ms` accepted.
pub const MAX_MODEL_PROBE_TIMEOUT_MS: u64 = 60_000;
/// The most of a probe response that is read; a longer one is ignored.
pub const PROBE_RESPONSE_CAP: usize = 256 * 1024;

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `$HARNESS9_HOME` (or `~/.harness9`) exists and is not a directory.
    #[error(
        "{origin} {path} is not a directory; harness9 keeps config.toml, history, logs and \
         caches there: point {origin} at a directory or move the file away"
    )]
    HomeNotADirectory {
        /// The path.
        path: PathBuf,
        /// Where it came from: `HARNESS9_HOME` or the default.
        origin: HomeOrigin,
    },
    /// The config file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is not valid TOML or has unknown keys.
    #[error("{path} is invalid: {message}\n  see docs/CONFIG.md for the keys it accepts")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A permission rule file or rule cannot be read.
    #[error("permission rules: {0}")]
    Permissions(#[from] crate::permissions::files::PermissionsError),
    /// A value is out of range or of the wrong form.
    #[error("invalid {what}: {message}")]
    Invalid {
        /// Which setting.
        what: String,
        /// What is wrong and what is expected.
        message: String,
    },
    /// The project directory does not exist.
    #[error("project directory {path} does not exist or is not a directory")]
    Workdir {
        /// The directory given.
        path: PathBuf,
    },
    /// No endpoint is configured and none was found.
    #[error(
        "no model endpoint configured.\n  Set OPENAI_API_KEY (and OPENAI_BASE_URL for a provider other than OpenAI),\n  or pass --base-url URL (e.g. http://127.0.0.1:8080/v1 for a local server),\n  or set base_url in {config_path},\n  or start Ollama on {OLLAMA_ADDR}."
    )]
    NoEndpoint {
        /// The config file the user could edit.
        config_path: PathBuf,
    },
}

/// Where `$HARNESS9_HOME` came from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HomeOrigin {
    /// The `HARNESS9_HOME` variable.
    Variable,
    /// The default, `~/.harness9`.
    Default,
}

impl std::fmt::Display for HomeOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HomeOrigin::Variable => "HARNESS9_HOME",
            HomeOrigin::Default => "the harness9 home (HARNESS9_HOME, default ~/.harness9)",
        })
    }
}

/// How many `agent` calls of one response run at once when `max_parallel_agents` is not
/// set.
pub const DEFAULT_MAX_PARALLEL_AGENTS: usize = 4;

/// The `config.toml` file. Every key is optional.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Model id.
    pub model: Option<String>,
    /// Endpoint base URL (up to `/v1`).
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (default OPENAI_API_KEY).
    pub api_key_env: Option<String>,
    /// A name for the provider in messages.
    pub provider_name: Option<String>,
    /// `suggest`, `auto-edit` or `full-auto`.
    pub approval_mode: Option<ApprovalMode>,
    /// Cap on model requests per turn.
    pub max_turns: Option<u32>,
    /// How many `agent` calls of one response run at once (default 4).
    pub max_parallel_agents: Option<usize>,
    /// The model's context window in tokens.
    pub context_window: Option<u64>,
    /// Send `stream_options.include_usage` (default true).
    pub include_usage: Option<bool>,
    /// Stream responses (default true).
    pub stream: Option<bool>,
    /// Send reasoning back on assistant messages: unset decides per host and model.
    pub send_reasoning: Option<bool>,
    /// The reasoning effort to ask for: `low`, `medium`, `high` or `off` (unset: none
    /// is sent).
    pub reasoning_effort: Option<crate::protocol::Effort>,
    /// Which body field carries the effort: `reasoning-effort`, `deepseek`,
    /// `openrouter`, `chat-template-kwargs` or `ollama` (unset: decided from the base URL
    /// and model).
    pub effort_dialect: Option<crate::llm::effort::EffortDialect>,
    /// Prompt-cache markers: `auto` (the default), `explicit` or `off`.
    pub prompt_cache: Option<crate::llm::cache::PromptCache>,
    /// `--output-schema` asked of the server: `off` (the default) or `json-schema`.
    pub structured_output: Option<crate::llm::StructuredOutput>,
    /// Seconds without bytes before an attempt fails.
    pub idle_timeout_secs: Option<u64>,
    /// Seconds one attempt may take in all (default 600).
    pub attempt_timeout_secs: Option<u64>,
    /// Seconds all attempts of one request may take together (default 900).
    pub total_timeout_secs: Option<u64>,
    /// Retries after the first attempt.
    pub max_retries: Option<u32>,
    /// Extra HTTP headers for every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Extra skill roots (after `--skills-dir`, before the project roots).
    #[serde(default)]
    pub skills_dirs: Vec<PathBuf>,
    /// Character budget for the skills index in the system prompt.
    pub skills_index_budget: Option<usize>,
    /// The combined cap in bytes on the instruction files (the AGENTS.md chain) in the
    /// system prompt (default 32 KiB).
    pub instructions_max_bytes: Option<usize>,
    /// Default `bash` timeout in seconds.
    pub bash_timeout_secs: Option<u64>,
    /// A skills root given as a URL of an archive (.zip, .tar.gz, .tgz, .tar) or a path;
    /// `SKILLS_ROOT` overrides it.
    pub skills_root: Option<String>,
    /// Where remote skill archives are cached (default `$HARNESS9_HOME/cache/skills`);
    /// `SKILLS_CACHE_DIR` overrides it.
    pub skills_cache_dir: Option<PathBuf>,
    /// Command names `skill_run` may run (when set, only a plain command is accepted).
    pub skill_run_allowed_commands: Option<Vec<String>>,
    /// Command names `skill_run` must not run (when set, only a plain command is accepted).
    pub skill_run_denied_commands: Option<Vec<String>>,
    /// Variables kept in commands' environments although their names look like secrets.
    #[serde(default)]
    pub child_env_keep: Vec<String>,
    /// More variables removed from commands' environments.
    #[serde(default)]
    pub child_env_remove: Vec<String>,
    /// Save sessions under `$HARNESS9_HOME/sessions` (default true); `HARNESS9_SESSIONS=0`
    /// turns it off.
    pub sessions: Option<bool>,
    /// Show the model's reasoning on stderr in the REPL and `-p` (default false).
    pub show_reasoning: Option<bool>,
    /// Total size in bytes the saved sessions may take (default 1 GiB); the oldest go first.
    pub sessions_max_bytes: Option<u64>,
    /// The header the API key goes in: `Authorization` (default, `Bearer <key>`) or
    /// another name, which gets the raw key (`api-key` for Azure OpenAI).
    pub auth_header: Option<String>,
    /// Top-level keys merged into every chat request body.
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// Hooks in Claude Code's shape (`[[hooks.PreToolUse]]` …), the user's own: they need
    /// no trust (docs/HOOKS.md).
    pub hooks: Option<toml::Value>,
    /// `auto`, `none-sent` or `required`.
    pub tool_choice: Option<ToolChoiceSetting>,
    /// Sent as `max_tokens` (`max_output_tokens` on the Responses wire).
    pub max_output_tokens: Option<u32>,
    /// `auto` (the default), `chat` or `responses`: the wire protocol requests use.
    pub wire: Option<crate::llm::WireSetting>,
    /// Whether the model takes images: `true`, `false` (nothing is attached or sent),
    /// unset tries and reports a refusal clearly.
    pub images: Option<bool>,
    /// The largest image attached (an `@` mention, `--image`, `view_image`), in bytes
    /// (default 5 MiB).
    pub max_image_bytes: Option<u64>,
    /// Permission rules (`allow`, `ask`, `deny`) and `builtin_rules` (docs/SECURITY.md).
    #[serde(default)]
    pub permissions: UserPermissions,
    /// The sandbox for commands (`mode`, `network`, `writable_paths`).
    #[serde(default)]
    pub sandbox: SandboxFile,
    /// MCP servers by name (docs/MCP.md).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, crate::mcp::config::ServerFile>,
    /// Prices per model (US dollars per million tokens), by model id or id prefix.
    #[serde(default)]
    pub prices: BTreeMap<String, crate::cost::ModelPrice>,
    /// How long start-up waits for `GET {base_url}/models` when no model is configured
    /// (milliseconds, default 3000).
    pub model_probe_timeout_ms: Option<u64>,
    /// Named providers (`[providers.NAME]`), switched to with `NAME/model`.
    #[serde(default)]
    pub providers: BTreeMap<String, providers::ProviderFile>,
    /// `web_fetch`'s limits.
    #[serde(default)]
    pub web_fetch: web::WebFetchFile,
    /// The `web_search` backend (none: the tool is not offered).
    #[serde(default)]
    pub web_search: web::WebSearchFile,
}

impl FileConfig {
    /// The top-level keys that set up the default provider's client.
    fn provider_keys(&self) -> provider_keys::ProviderKeys<'_> {
        provider_keys::ProviderKeys {
            wire: self.wire,
            headers: &self.headers,
            auth_header: self.auth_header.as_deref(),
            extra_body: self.extra_body.as_ref(),
            tool_choice: self.tool_choice.as_ref(),
            max_output_tokens: self.max_output_tokens,
            include_usage: self.include_usage,
            stream: self.stream,
            send_reasoning: self.send_reasoning,
            reasoning_effort: self.reasoning_effort,
            effort_dialect: self.effort_dialect,
            prompt_cache: self.prompt_cache,
            structured_output: self.structured_output,
            idle_timeout_secs: self.idle_timeout_secs,
            attempt_timeout_secs: self.attempt_timeout_secs,
            total_timeout_secs: self.total_timeout_secs,
            max_retries: self.max_retries,
            images: self.images,
        }
    }
}

/// `[sandbox]` in config.toml.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    /// `read-only`, `workspace-write` or `off`.
    pub mode: Option<SandboxMode>,
    /// `deny` (the default) or `allow`.
    pub network: Option<Network>,
    /// More folders confined commands may write beneath (`~/` expanded).
    #[serde(default)]
    pub writable_paths: Vec<PathBuf>,
    /// More files and folders confined commands may not read (`~/` expanded; relative
    /// ones are in the project).
    #[serde(default)]
    pub masked_paths: Vec<PathBuf>,
}

/// `tool_choice` in config.toml: what the request says about tools — a mode, or
/// `{ function = "NAME" }` to force one tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum ToolChoiceSetting {
    /// `"auto"`, `"none-sent"` or `"required"`.
    Mode(ToolChoiceMode),
    /// `{ function = "read_file" }`: the model must call that tool.
    Function {
        /// The tool's name.
        function: String,
    },
}

/// The modes of [`ToolChoiceSetting`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolChoiceMode {
    /// `"tool_choice": "auto"` is sent with the tools.
    Auto,
    /// No `tool_choice` key is sent (servers that reject it).
    NoneSent,
    /// `"tool_choice": "required"`: the model must call a tool.
    Required,
}

impl FileConfig {
    /// Reads `path`; a missing file is an empty config.
    pub fn load(path: &Path) -> Result<FileConfig, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileConfig::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

/// Values given on the command line (they win over everything else).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Overrides {
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `-C/--cwd`.
    pub workdir: Option<PathBuf>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--effort`.
    pub effort: Option<crate::protocol::Effort>,
    /// `--approval-mode`.
    pub approval_mode: Option<ApprovalMode>,
    /// `--sandbox`.
    pub sandbox: Option<SandboxMode>,
    /// `--skills-dir` (repeatable), highest precedence first.
    pub skills_dirs: Vec<PathBuf>,
    /// `--allow` / `--deny` (repeatable): permission rules for this run only.
    pub rules: crate::permissions::files::CommandLineRules,
    /// What holds for this run only (`--append-system-prompt`, the CI limits).
    pub run: RunSettings,
}

/// Settings of one run, given only on the command line (docs/CI.md).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunSettings {
    /// `--append-system-prompt`: text put after the instruction files in the system
    /// prompt, as written (never read as a file name).
    pub append_system_prompt: Option<String>,
    /// `--timeout`: how long the run may take, from its start.
    pub timeout: Option<std::time::Duration>,
    /// `--max-cost`: how much the run may spend (a model without a price is refused).
    pub max_cost: Option<crate::protocol::Cost>,
}

/// Whether the run needs a model endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointNeed {
    /// A session: an endpoint must be configured or found.
    Required,
    /// Subcommands that never call the model (`skills ...`): the endpoint is left empty
    /// when none is configured.
    None,
}

/// Whether start-up may ask servers anything: look for a local Ollama when no endpoint is
/// configured, and ask the endpoint's `/models` when no model is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerProbe {
    /// Try 127.0.0.1:11434 and `GET {base_url}/models` as needed.
    Enabled,
    /// Never (tests, and subcommands that call no model).
    Disabled,
}

/// The earlier name of [`ServerProbe`], kept so code written against it still builds.
pub type OllamaProbe = ServerProbe;

/// The resolved configuration of a run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Whether the REPL and `-p` show reasoning (`show_reasoning`).
    pub show_reasoning: ShowReasoning,
    /// Model id.
    pub model: String,
    /// Where the model id came from.
    pub model_source: ModelSource,
    /// Where the reasoning effort came from (`CommandLine`: `--effort`, which wins over
    /// a resumed session's).
    pub effort_source: ModelSource,
    /// Endpoint and its quirks.
    pub provider: ProviderConfig,
    /// The working folder (canonical): `-C`, else the current folder. Tools, commands
    /// and the sandbox work here.
    pub workdir: PathBuf,
    /// The project root the working folder belongs to ([`crate::project_root::find`]):
    /// where AGENTS.md, skill roots, `.harness9/`, `.mcp.json` and the permission file
    /// are read, and what sessions and trust lists are keyed by.
    pub project_root: PathBuf,
    /// `$HARNESS9_HOME` (default `~/.harness9`).
    pub home: PathBuf,
    /// The user's home directory, when known.
    pub user_home: Option<PathBuf>,
    /// Approval mode.
    pub approval_mode: ApprovalMode,
    /// Cap on model requests per turn.
    pub max_turns: u32,
    /// How many `agent` calls of one response run at once.
    pub max_parallel_agents: usize,
    /// The context window in tokens set in config.toml (`context_window`), if any. Other
    /// sources (the cache, the endpoint, the built-in table) are in
    /// [`crate::llm::window`]; [`crate::llm::window::initial`] combines them at start-up.
    pub context_window: Option<u64>,
    /// Where learned context windows are cached
    /// (`$HARNESS9_HOME/cache/context_windows.json`).
    pub context_window_cache: PathBuf,
    /// Skill roots given on the command line and in the config file, in precedence order.
    pub skills_dirs: Vec<PathBuf>,
    /// Configured index budget (characters), if any.
    pub skills_index_budget: Option<usize>,
    /// The combined cap on the instruction files in the system prompt, in bytes.
    pub instructions_max_bytes: usize,
    /// Tool limits.
    pub tool_limits: ToolLimits,
    /// `web_fetch`'s limits (`[web_fetch]`).
    pub web_fetch: crate::tools::web_fetch::Settings,
    /// Where `web_search` searches (`[web_search]`); `None`: the tool is not offered.
    pub web_search: Option<crate::tools::web_search::Backend>,
    /// A remote skills root (an http(s) URL of an archive), if any.
    pub remote_skills_root: Option<String>,
    /// The cache for remote skill archives.
    pub skills_cache_dir: PathBuf,
    /// `skill_run` allow and deny lists.
    pub skill_run_commands: CommandLists,
    /// What is kept out of commands' environments (the key, header values, secrets).
    pub secret_policy: SecretPolicy,
    /// Settings that point at nothing (a skills root that does not exist) and notes such
    /// as which model was picked when none was configured, for the start-up warnings of
    /// every mode.
    pub warnings: Vec<String>,
    /// Whether sessions are saved.
    pub session_saving: SessionSaving,
    /// The permission rules (built-in, config.toml, the project file) and where the
    /// files are.
    pub permissions: PermissionsSetup,
    /// The sandbox for commands, as configured.
    pub sandbox: SandboxSettings,
    /// The hooks of config.toml's `[hooks]` (what could not be used is in `warnings`).
    pub user_hooks: crate::hooks::HookSet,
    /// The project's hooks and what this user trusted of them (only the trusted ones
    /// run; what could not be used, and how many are not in force, is in `warnings`).
    pub project_hooks: crate::hooks::ProjectHooks,
    /// The MCP servers configured for this project (a trusted plugin's among them).
    pub mcp: crate::mcp::McpSetup,
    /// The installed plugins and what the trusted ones bring (`crate::plugins`): their
    /// hooks join the session's, their skill and command folders the catalog's, their
    /// agent folders are [`crate::plugins::PluginsInForce::agent_roots`].
    pub plugins: crate::plugins::PluginsInForce,
    /// Prices per model, when the user set any.
    pub prices: crate::cost::PriceTable,
    /// Total size the saved sessions may take, in bytes.
    pub sessions_max_bytes: u64,
    /// Every endpoint a session can switch to: the default one and the named ones.
    pub providers: providers::ProviderBook,
    /// The provider [`Config::provider`] is (`--model NAME/model` picks a named one).
    pub provider_id: providers::ProviderId,
    /// What holds for this run only (`--append-system-prompt`, the CI limits).
    pub run: RunSettings,
}

/// Default cap on the total size of saved sessions: 1 GiB.
pub const DEFAULT_SESSIONS_MAX_BYTES: u64 = 1 << 30;

/// Where the model id came from: a resumed session brings its own model unless the
/// command line named one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// `--model`: it wins over a resumed session's model.
    CommandLine,
    /// The environment, config.toml or the default.
    Settings,
}

/// Whether conversations are saved to `$HARNESS9_HOME/sessions` (docs/SESSIONS.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionSaving {
    /// Every message is appended to the session's file (the default).
    Enabled,
    /// Nothing is saved (`sessions = false` or `HARNESS9_SESSIONS=0`).
    Disabled,
}

/// A short provider name from a base URL, for messages.
pub fn provider_name_for(base_url: &str) -> String {
    let host = base_url
        .split("://")
        .nth(1)
        .unwrap_or(base_url)
        .split(['/', ':'])
        .next()
        .unwrap_or(base_url);
    match host {
        "api.openai.com" => "openai".into(),
        "openrouter.ai" => "openrouter".into(),
        "api.deepseek.com" => "deepseek".into(),
        _ if base_url.contains(":11434") => "ollama".into(),
        _ => host.to_string(),
    }
}

mod probe;
mod provider_keys;
pub mod providers;
mod resolve;
pub mod web;

pub use probe::{OllamaFound, probe_models, probe_ollama};

#[cfg(test)]
mod tests;

/// Whether the REPL and `-p` show the model's reasoning (`show_reasoning` in config.toml;
/// `--show-reasoning` too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShowReasoning {
    /// Not shown (the default).
    #[default]
    Hidden,
    /// Shown on stderr.
    Shown,
}
