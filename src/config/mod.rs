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
use crate::llm::wire::OWNED_BODY_KEYS;
use crate::llm::{
    AuthHeader, ProviderConfig, ReasoningEcho, StreamMode, ToolChoice, UsageReporting,
};
use crate::permissions::PermissionsSetup;
use crate::permissions::files::{BuiltinRules, Places, UserPermissions};
use crate::protocol::ApprovalMode;
use crate::sandbox::{
    NamespacesProbe, Network, SandboxChoice, SandboxMode, SandboxSettings, SecretPlaces,
};
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
/// How long the start-up `GET {base_url}/models` may take, connecting included.
pub const MODEL_PROBE_TIMEOUT: Duration = Duration::from_millis(300);
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
    /// The model's context window in tokens.
    pub context_window: Option<u64>,
    /// Send `stream_options.include_usage` (default true).
    pub include_usage: Option<bool>,
    /// Stream responses (default true).
    pub stream: Option<bool>,
    /// Send reasoning back as `reasoning_content` (default false).
    pub send_reasoning: Option<bool>,
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
    /// Total size in bytes the saved sessions may take (default 1 GiB); the oldest go first.
    pub sessions_max_bytes: Option<u64>,
    /// The header the API key goes in: `Authorization` (default, `Bearer <key>`) or
    /// another name, which gets the raw key (`api-key` for Azure OpenAI).
    pub auth_header: Option<String>,
    /// Top-level keys merged into every chat request body.
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// `auto`, `none-sent` or `required`.
    pub tool_choice: Option<ToolChoiceSetting>,
    /// Sent as `max_tokens`.
    pub max_output_tokens: Option<u32>,
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
    /// `--approval-mode`.
    pub approval_mode: Option<ApprovalMode>,
    /// `--sandbox`.
    pub sandbox: Option<SandboxMode>,
    /// `--skills-dir` (repeatable), highest precedence first.
    pub skills_dirs: Vec<PathBuf>,
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
    /// Model id.
    pub model: String,
    /// Where the model id came from.
    pub model_source: ModelSource,
    /// Endpoint and its quirks.
    pub provider: ProviderConfig,
    /// The project directory (canonical).
    pub workdir: PathBuf,
    /// `$HARNESS9_HOME` (default `~/.harness9`).
    pub home: PathBuf,
    /// The user's home directory, when known.
    pub user_home: Option<PathBuf>,
    /// Approval mode.
    pub approval_mode: ApprovalMode,
    /// Cap on model requests per turn.
    pub max_turns: u32,
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
    /// Tool limits.
    pub tool_limits: ToolLimits,
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
    /// The MCP servers configured for this project.
    pub mcp: crate::mcp::McpSetup,
    /// Prices per model, when the user set any.
    pub prices: crate::cost::PriceTable,
    /// Total size the saved sessions may take, in bytes.
    pub sessions_max_bytes: u64,
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

/// Session saving from `HARNESS9_SESSIONS` (it wins), else `sessions` in config.toml.
fn resolve_session_saving(
    env: &dyn Fn(&str) -> Option<String>,
    file: Option<bool>,
) -> Result<SessionSaving, ConfigError> {
    let enabled = match env("HARNESS9_SESSIONS").filter(|v| !v.trim().is_empty()) {
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => {
                return Err(ConfigError::Invalid {
                    what: "HARNESS9_SESSIONS".into(),
                    message: format!("{v:?}: use 0 to save no sessions or 1 to save them"),
                });
            }
        },
        None => file.unwrap_or(true),
    };
    Ok(if enabled {
        SessionSaving::Enabled
    } else {
        SessionSaving::Disabled
    })
}

/// A comma- or whitespace-separated list of command names from an environment variable.
fn command_list(value: &str) -> Vec<String> {
    value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

impl Config {
    /// Resolves the configuration. `env` looks up environment variables.
    pub fn resolve(
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        need: EndpointNeed,
        probe: ServerProbe,
    ) -> Result<Config, ConfigError> {
        let user_home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let (home, home_origin) = match env("HARNESS9_HOME").filter(|h| !h.is_empty()) {
            Some(h) => (PathBuf::from(h), HomeOrigin::Variable),
            None => (
                user_home
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("."))
                    .join(".harness9"),
                HomeOrigin::Default,
            ),
        };
        if home.exists() && !home.is_dir() {
            return Err(ConfigError::HomeNotADirectory {
                path: home,
                origin: home_origin,
            });
        }
        let config_path = home.join("config.toml");
        let file = FileConfig::load(&config_path)?;

        let workdir_raw = match &overrides.workdir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|_| ConfigError::Workdir {
                path: PathBuf::from("."),
            })?,
        };
        let workdir = workdir_raw
            .canonicalize()
            .ok()
            .filter(|p| p.is_dir())
            .ok_or(ConfigError::Workdir {
                path: workdir_raw.clone(),
            })?;

        let api_key_env = file
            .api_key_env
            .clone()
            .unwrap_or_else(|| "OPENAI_API_KEY".into());
        let api_key = env(&api_key_env).filter(|k| !k.trim().is_empty());
        let configured_url = overrides
            .base_url
            .clone()
            .or_else(|| env("OPENAI_BASE_URL").filter(|u| !u.is_empty()))
            .or_else(|| file.base_url.clone());
        let configured_model = overrides
            .model
            .clone()
            .or_else(|| env("HARNESS9_MODEL").filter(|m| !m.is_empty()))
            .or_else(|| file.model.clone());

        // Models a found Ollama listed, so they need not be asked for twice.
        let mut listed_models = None;
        let base_url = match (configured_url, &api_key) {
            (Some(url), _) => url,
            (None, Some(_)) => DEFAULT_BASE_URL.to_string(),
            (None, None) if need == EndpointNeed::None => String::new(),
            (None, None) => match probe {
                ServerProbe::Enabled => match probe_ollama(Duration::from_millis(150)) {
                    Some(found) => {
                        listed_models = Some(found.models);
                        found.base_url
                    }
                    None => return Err(ConfigError::NoEndpoint { config_path }),
                },
                ServerProbe::Disabled => return Err(ConfigError::NoEndpoint { config_path }),
            },
        };
        if need == EndpointNeed::Required {
            validate_url(&base_url)?;
        }

        let mut provider = ProviderConfig::new(
            file.provider_name
                .clone()
                .unwrap_or_else(|| provider_name_for(&base_url)),
            base_url.trim_end_matches('/'),
        );
        provider.api_key = api_key;
        provider.api_key_source = api_key_env;
        provider.extra_headers = file.headers.into_iter().collect();
        if let Some(name) = &file.auth_header {
            provider.auth_header = auth_header_from(name)?;
        }
        if let Some(extra) = file.extra_body {
            validate_extra_body(&extra, file.max_output_tokens)?;
            provider.extra_body = extra;
        }
        if let Some(n) = file.max_output_tokens {
            if n == 0 {
                return Err(ConfigError::Invalid {
                    what: "max_output_tokens".into(),
                    message: "must be at least 1 (leave it unset to let the server decide)".into(),
                });
            }
            provider.max_output_tokens = Some(n);
        }
        let (model, model_note) = match configured_model {
            Some(model) => (model, None),
            None if probe == ServerProbe::Enabled && need == EndpointNeed::Required => {
                default_model(&provider, listed_models)
            }
            None => (DEFAULT_MODEL.to_string(), None),
        };
        if file.include_usage == Some(false) {
            provider.usage_reporting = UsageReporting::Omit;
        }
        if file.stream == Some(false) {
            provider.stream_mode = StreamMode::NonStreaming;
        }
        if file.send_reasoning == Some(true) {
            provider.reasoning_echo = ReasoningEcho::AsReasoningContent;
        }
        if let Some(choice) = file.tool_choice {
            provider.tool_choice = match choice {
                ToolChoiceSetting::Mode(ToolChoiceMode::Auto) => ToolChoice::Auto,
                ToolChoiceSetting::Mode(ToolChoiceMode::NoneSent) => ToolChoice::Omit,
                ToolChoiceSetting::Mode(ToolChoiceMode::Required) => ToolChoice::Required,
                ToolChoiceSetting::Function { function } => ToolChoice::Function { name: function },
            };
        }
        for (key, value, slot) in [
            (
                "idle_timeout_secs",
                file.idle_timeout_secs,
                &mut provider.idle_timeout,
            ),
            (
                "attempt_timeout_secs",
                file.attempt_timeout_secs,
                &mut provider.attempt_timeout,
            ),
            (
                "total_timeout_secs",
                file.total_timeout_secs,
                &mut provider.total_timeout,
            ),
        ] {
            if let Some(secs) = value {
                if secs == 0 {
                    return Err(ConfigError::Invalid {
                        what: key.into(),
                        message: "must be at least 1".into(),
                    });
                }
                *slot = Duration::from_secs(secs);
            }
        }
        if let Some(n) = file.max_retries {
            provider.retry.max_retries = n;
        }
        if let Some(secs) = env("HARNESS9_IDLE_TIMEOUT_MS").and_then(|v| v.parse::<u64>().ok()) {
            provider.idle_timeout = Duration::from_millis(secs.max(1));
        }

        let max_turns = overrides
            .max_turns
            .or(file.max_turns)
            .unwrap_or(DEFAULT_MAX_TURNS);
        if max_turns == 0 {
            return Err(ConfigError::Invalid {
                what: "max turns".into(),
                message: "must be at least 1".into(),
            });
        }
        // Each local root with where it was named, so a missing one can be reported.
        let mut roots: Vec<(PathBuf, String)> = overrides
            .skills_dirs
            .iter()
            .map(|d| (d.clone(), "--skills-dir".to_string()))
            .collect();
        roots.extend(file.skills_dirs.iter().map(|d| {
            (
                expand_home(d, user_home.as_deref()),
                format!("skills_dirs in {}", config_path.display()),
            )
        }));
        let mut tool_limits = ToolLimits::default();
        if file.permissions.builtin_rules == BuiltinRules::Off {
            tool_limits.secret_files = crate::tools::SecretFileSearch::Searched;
        }
        if let Some(secs) = file.bash_timeout_secs {
            tool_limits.default_bash_timeout_secs =
                secs.clamp(1, tool_limits.max_bash_timeout_secs);
        }

        // SKILLS_ROOT / skills_root: a URL is a remote root; a path is one more local root.
        let mut remote_skills_root = None;
        let root_origin = match env("SKILLS_ROOT").filter(|r| !r.is_empty()) {
            Some(root) => Some((root, "SKILLS_ROOT".to_string())),
            None => file
                .skills_root
                .clone()
                .map(|root| (root, format!("skills_root in {}", config_path.display()))),
        };
        if let Some((root, origin)) = root_origin {
            if root.starts_with("http://") || root.starts_with("https://") {
                remote_skills_root = Some(root);
            } else {
                roots.push((expand_home(Path::new(&root), user_home.as_deref()), origin));
            }
        }
        let mut warnings: Vec<String> = roots
            .iter()
            .filter(|(dir, _)| !dir.is_dir())
            .map(|(dir, origin)| {
                let what = if dir.exists() {
                    "is not a directory"
                } else {
                    "does not exist"
                };
                format!(
                    "skills root {} ({origin}) {what}; no skills are read from it",
                    dir.display()
                )
            })
            .collect();
        warnings.extend(model_note);
        let skills_dirs = roots.into_iter().map(|(dir, _)| dir).collect();
        let skills_cache_dir = env("SKILLS_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                file.skills_cache_dir
                    .as_deref()
                    .map(|d| expand_home(d, user_home.as_deref()))
            })
            .unwrap_or_else(|| home.join("cache").join("skills"));
        let skill_run_commands = CommandLists {
            allowed: env("HARNESS9_SKILL_RUN_ALLOWED_COMMANDS")
                .map(|v| command_list(&v))
                .or(file.skill_run_allowed_commands.clone()),
            denied: env("HARNESS9_SKILL_RUN_DENIED_COMMANDS")
                .map(|v| command_list(&v))
                .or(file.skill_run_denied_commands.clone()),
        };
        let secret_policy = SecretPolicy {
            values: provider
                .api_key
                .iter()
                .cloned()
                .chain(provider.extra_headers.iter().map(|(_, v)| v.clone()))
                .collect(),
            remove: file.child_env_remove.clone(),
            keep: file.child_env_keep.clone(),
        };
        let session_saving = resolve_session_saving(env, file.sessions)?;
        let sessions_max_bytes = file
            .sessions_max_bytes
            .unwrap_or(DEFAULT_SESSIONS_MAX_BYTES);
        if sessions_max_bytes == 0 {
            return Err(ConfigError::Invalid {
                what: "sessions_max_bytes".into(),
                message: "must be at least 1 (sessions = false saves none)".into(),
            });
        }

        let permissions = PermissionsSetup::load(
            Places {
                user_file: config_path.clone(),
                project: workdir.clone(),
                harness_home: home.clone(),
                home: user_home.clone(),
            },
            &file.permissions,
        )?;
        if !permissions.untrusted.is_empty() {
            warnings.push(format!(
                "{} has allow rules you have not approved on this machine ({}); they are \
                 ignored. Review the file, then run `harness9 permissions trust` to use them.",
                permissions.places.project_file().display(),
                permissions.untrusted.join(", ")
            ));
        }

        for (model, price) in &file.prices {
            price.check().map_err(|message| ConfigError::Invalid {
                what: format!("prices.\"{model}\""),
                message,
            })?;
        }
        let prices = crate::cost::PriceTable::new(file.prices.clone());
        let mcp = crate::mcp::config::load(&file.mcp_servers, &config_path, &workdir, &home, env);
        warnings.extend(mcp.warnings.iter().cloned());
        warnings.extend(mcp.untrusted_warning());

        let approval_mode = overrides
            .approval_mode
            .or(file.approval_mode)
            .unwrap_or_default();
        let sandbox = resolve_sandbox(
            env,
            overrides.sandbox,
            &file.sandbox,
            approval_mode,
            SandboxPlaces {
                user_home: user_home.as_deref(),
                harness9_home: &home,
                workdir: &workdir,
                skills_cache_dir: &skills_cache_dir,
            },
        )?;

        Ok(Config {
            permissions,
            sandbox,
            mcp,
            prices,
            remote_skills_root,
            skills_cache_dir,
            skill_run_commands,
            secret_policy,
            context_window: file.context_window,
            context_window_cache: home.join("cache").join("context_windows.json"),
            model,
            model_source: if overrides.model.is_some() {
                ModelSource::CommandLine
            } else {
                ModelSource::Settings
            },
            provider,
            workdir,
            home,
            user_home,
            approval_mode,
            max_turns,
            skills_dirs,
            skills_index_budget: file.skills_index_budget,
            tool_limits,
            warnings,
            session_saving,
            sessions_max_bytes,
        })
    }
}

/// Where the sandbox's masks and exceptions are.
struct SandboxPlaces<'a> {
    user_home: Option<&'a Path>,
    harness9_home: &'a Path,
    workdir: &'a Path,
    skills_cache_dir: &'a Path,
}

/// The sandbox from `--sandbox`, then `HARNESS9_SANDBOX`, then `[sandbox]`; with none,
/// workspace-write in `auto-edit` and `full-auto` (where commands may run unasked) and
/// off in `suggest` (where a person approves each one). It masks the user's secrets and
/// `$HARNESS9_HOME` but for its skill folders.
fn resolve_sandbox(
    env: &dyn Fn(&str) -> Option<String>,
    flag: Option<SandboxMode>,
    file: &SandboxFile,
    approval_mode: ApprovalMode,
    places: SandboxPlaces<'_>,
) -> Result<SandboxSettings, ConfigError> {
    let user_home = places.user_home;
    let from_env = match env("HARNESS9_SANDBOX").filter(|v| !v.is_empty()) {
        None => None,
        Some(v) => Some(match v.as_str() {
            "read-only" => SandboxMode::ReadOnly,
            "workspace-write" => SandboxMode::WorkspaceWrite,
            "off" => SandboxMode::Off,
            _ => {
                return Err(ConfigError::Invalid {
                    what: "HARNESS9_SANDBOX".into(),
                    message: format!("{v:?}: use read-only, workspace-write or off"),
                });
            }
        }),
    };
    let mode = match flag.or(from_env).or(file.mode) {
        Some(mode) => SandboxChoice::Chosen(mode),
        None => SandboxChoice::Default(match approval_mode {
            ApprovalMode::Suggest => SandboxMode::Off,
            ApprovalMode::AutoEdit | ApprovalMode::FullAuto => SandboxMode::WorkspaceWrite,
        }),
    };
    Ok(SandboxSettings {
        mode,
        network: file.network.unwrap_or_default(),
        writable_paths: file
            .writable_paths
            .iter()
            .map(|p| expand_home(p, user_home))
            .collect(),
        secrets: SecretPlaces {
            user_home: user_home.map(Path::to_path_buf),
            harness9_home: Some(places.harness9_home.to_path_buf()),
            masked_paths: file
                .masked_paths
                .iter()
                .map(|p| places.workdir.join(expand_home(p, user_home)))
                .collect(),
            visible: vec![
                places.harness9_home.join("skills"),
                places.skills_cache_dir.to_path_buf(),
            ],
        },
        simulate_unavailable: env("HARNESS9_SANDBOX_UNAVAILABLE").is_some_and(|v| v == "1"),
        namespaces: if env("HARNESS9_SANDBOX_NO_NAMESPACES").is_some_and(|v| v == "1") {
            NamespacesProbe::SimulateUnavailable
        } else {
            NamespacesProbe::Run
        },
    })
}

fn validate_url(url: &str) -> Result<(), ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(ConfigError::Invalid {
            what: "base URL".into(),
            message: format!(
                "{url:?} must start with http:// or https:// (e.g. https://api.openai.com/v1)"
            ),
        })
    }
}

fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
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

/// The provider's key header from `auth_header`: `Authorization` (any case) is the
/// default `Bearer` form; any other valid header name gets the raw key.
fn auth_header_from(name: &str) -> Result<AuthHeader, ConfigError> {
    let name = name.trim();
    if name.eq_ignore_ascii_case("authorization") {
        return Ok(AuthHeader::Bearer);
    }
    // RFC 9110 token characters.
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if valid {
        Ok(AuthHeader::Named {
            name: name.to_string(),
        })
    } else {
        Err(ConfigError::Invalid {
            what: "auth_header".into(),
            message: format!(
                "{name:?} is not a valid HTTP header name (letters, digits and -_. only, \
                 e.g. \"api-key\")"
            ),
        })
    }
}

/// `extra_body` may not set what harness9 sets itself, nor `max_tokens` together with
/// `max_output_tokens`.
fn validate_extra_body(
    extra: &serde_json::Map<String, serde_json::Value>,
    max_output_tokens: Option<u32>,
) -> Result<(), ConfigError> {
    if let Some(key) = extra.keys().find(|k| OWNED_BODY_KEYS.contains(&k.as_str())) {
        return Err(ConfigError::Invalid {
            what: format!("extra_body.{key}"),
            message: format!(
                "harness9 sets `{key}` itself and it cannot be overridden (extra_body may not \
                 set {})",
                OWNED_BODY_KEYS.join(", ")
            ),
        });
    }
    if extra.contains_key("max_tokens") && max_output_tokens.is_some() {
        return Err(ConfigError::Invalid {
            what: "extra_body.max_tokens".into(),
            message: "max_output_tokens is set too: keep only max_output_tokens".into(),
        });
    }
    Ok(())
}

mod probe;

use probe::default_model;
pub use probe::{OllamaFound, probe_models, probe_ollama};

#[cfg(test)]
mod tests;
