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
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::exec::secrets::SecretPolicy;
use crate::llm::wire::OWNED_BODY_KEYS;
use crate::llm::{
    AuthHeader, ProviderConfig, ReasoningEcho, StreamMode, ToolChoice, UsageReporting,
};
use crate::protocol::ApprovalMode;
use crate::tools::ToolLimits;

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

        Ok(Config {
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
            approval_mode: overrides
                .approval_mode
                .or(file.approval_mode)
                .unwrap_or_default(),
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

/// How the model list of an endpoint can be asked for at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ModelLookup {
    /// api.openai.com: [`DEFAULT_MODEL`] is right, nothing is asked.
    OpenAi,
    /// A plain-HTTP endpoint (local servers): `GET {base_url}/models`.
    PlainHttp,
    /// Another https endpoint: the start-up probe speaks no TLS, so nothing is asked.
    Tls,
}

fn model_lookup_for(base_url: &str) -> ModelLookup {
    if url_host(base_url).eq_ignore_ascii_case("api.openai.com") {
        ModelLookup::OpenAi
    } else if base_url.starts_with("http://") {
        ModelLookup::PlainHttp
    } else {
        ModelLookup::Tls
    }
}

/// The host of a URL (without port or brackets).
fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    authority.split(':').next().unwrap_or(authority)
}

const CHOOSE_HINT: &str = "set --model, HARNESS9_MODEL or model in config.toml to choose";

/// The model to use when none is configured, and a note saying which was picked and why.
/// `listed` is what a found Ollama already listed.
fn default_model(
    provider: &ProviderConfig,
    listed: Option<Vec<String>>,
) -> (String, Option<String>) {
    let default = || DEFAULT_MODEL.to_string();
    let listed = match (listed, model_lookup_for(&provider.base_url)) {
        (Some(models), _) => Some(models),
        (None, ModelLookup::OpenAi) => return (default(), None),
        (None, ModelLookup::Tls) => {
            let note = format!(
                "no model configured: sending `{DEFAULT_MODEL}` to {} ({CHOOSE_HINT})",
                url_host(&provider.base_url)
            );
            return (default(), Some(note));
        }
        (None, ModelLookup::PlainHttp) => probe_models(provider, MODEL_PROBE_TIMEOUT),
    };
    let url = format!("{}/models", provider.base_url);
    match listed {
        None => (
            default(),
            Some(format!(
                "no model configured and {url} did not answer with a model list: sending \
                 `{DEFAULT_MODEL}` ({CHOOSE_HINT})"
            )),
        ),
        Some(models) => match models.as_slice() {
            [] => (
                default(),
                Some(format!(
                    "no model configured and {url} lists none: sending `{DEFAULT_MODEL}` \
                     ({CHOOSE_HINT})"
                )),
            ),
            [only] => (
                only.clone(),
                Some(format!(
                    "no model configured: using `{only}`, the only model the server lists \
                     ({CHOOSE_HINT})"
                )),
            ),
            [first, ..] => (
                first.clone(),
                Some(format!(
                    "no model configured: using `{first}`, the first of {} models the server \
                     lists ({CHOOSE_HINT})",
                    models.len()
                )),
            ),
        },
    }
}

/// A local Ollama found by [`probe_ollama`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaFound {
    /// Its OpenAI-compatible base URL.
    pub base_url: String,
    /// The model ids it lists, in its order.
    pub models: Vec<String>,
}

/// Checks whether Ollama answers on 127.0.0.1:11434 (a short plain-HTTP GET of
/// `/v1/models`): `connect` to connect, four times that for the whole answer.
pub fn probe_ollama(connect: Duration) -> Option<OllamaFound> {
    let base_url = format!("http://{OLLAMA_ADDR}/v1");
    let (status, body) = http_get(&format!("{base_url}/models"), &[], connect, connect * 4)?;
    if status != 200 {
        return None;
    }
    Some(OllamaFound {
        models: model_ids(&body).unwrap_or_default(),
        base_url,
    })
}

/// Asks `GET {base_url}/models` of a plain-HTTP endpoint, with its key and extra
/// headers, within `timeout` in all. `None` when it does not answer 200 with an
/// OpenAI-style list (`{"data": [{"id": ...}]}`) in time.
pub fn probe_models(provider: &ProviderConfig, timeout: Duration) -> Option<Vec<String>> {
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(key) = &provider.api_key {
        let key = key.trim();
        headers.push(match &provider.auth_header {
            AuthHeader::Bearer => ("Authorization".into(), format!("Bearer {key}")),
            AuthHeader::Named { name } => (name.clone(), key.to_string()),
        });
    }
    headers.extend(provider.extra_headers.iter().cloned());
    let url = format!("{}/models", provider.base_url);
    let (status, body) = http_get(&url, &headers, timeout, timeout)?;
    if status != 200 {
        return None;
    }
    model_ids(&body)
}

/// The ids of an OpenAI-style model list.
fn model_ids(body: &[u8]) -> Option<Vec<String>> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let data = value.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id")?.as_str())
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// A tiny blocking HTTP/1.1 GET of a plain `http://` URL for the start-up probes: status
/// and body, or `None` on any failure. Connecting may take `connect`; everything,
/// connecting included, must be done within `total`. Bodies with a `Content-Length`,
/// chunked or ending at close are read, up to [`PROBE_RESPONSE_CAP`] bytes. Headers whose
/// name or value could break the request (control characters) are not sent.
fn http_get(
    url: &str,
    headers: &[(String, String)],
    connect: Duration,
    total: Duration,
) -> Option<(u16, Vec<u8>)> {
    let deadline = Instant::now() + total;
    let rest = url.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = url_host(url);
    // `host:port` or `[v6]:port`; no port is 80.
    let after_host = match authority.rsplit_once(']') {
        Some((_, rest)) => rest,
        None => authority,
    };
    let port = match after_host.rsplit_once(':') {
        Some((_, port)) => port.parse().ok()?,
        None => 80,
    };
    let addr: SocketAddr = (host, port).to_socket_addrs().ok()?.next()?;
    let remaining = |now: Instant| {
        deadline
            .checked_duration_since(now)
            .filter(|d| !d.is_zero())
    };
    let mut stream =
        TcpStream::connect_timeout(&addr, connect.min(remaining(Instant::now())?)).ok()?;
    stream.set_write_timeout(remaining(Instant::now())).ok()?;
    let mut request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\n\
         Connection: close\r\n"
    );
    let clean = |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_control());
    for (name, value) in headers {
        if clean(name) && !name.contains(':') && (value.is_empty() || clean(value)) {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).ok()?;

    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match parse_response(&raw, End::Open) {
            Parsed::Done(status, body) => return Some((status, body)),
            Parsed::Broken => return None,
            Parsed::Incomplete => {}
        }
        stream.set_read_timeout(remaining(Instant::now())).ok()?;
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return match parse_response(&raw, End::Closed) {
                Parsed::Done(status, body) => Some((status, body)),
                Parsed::Broken | Parsed::Incomplete => None,
            };
        }
        raw.extend_from_slice(&buf[..n]);
        if raw.len() > PROBE_RESPONSE_CAP {
            return None;
        }
    }
}

/// Whether the server has closed the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// More may come.
    Open,
    /// Everything has been read.
    Closed,
}

/// What the bytes of a response read so far amount to.
#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    /// More is needed.
    Incomplete,
    /// Not a usable HTTP response.
    Broken,
    /// Status and body.
    Done(u16, Vec<u8>),
}

fn parse_response(raw: &[u8], end: End) -> Parsed {
    let Some(head_end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return match end {
            End::Open => Parsed::Incomplete,
            End::Closed => Parsed::Broken,
        };
    };
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let body = &raw[head_end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = match status_line.split(' ').collect::<Vec<_>>().as_slice() {
        [version, code, ..] if version.starts_with("HTTP/1.") => code.parse::<u16>().ok(),
        _ => None,
    };
    let Some(status) = status else {
        return Parsed::Broken;
    };
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let (name, value) = (name.trim(), value.trim());
            if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.to_ascii_lowercase().contains("chunked");
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            }
        }
    }
    if chunked {
        return match (dechunk(body), end) {
            (Some(decoded), _) => Parsed::Done(status, decoded),
            (None, End::Closed) => Parsed::Broken,
            (None, End::Open) => Parsed::Incomplete,
        };
    }
    match (length, end) {
        (Some(n), _) if body.len() >= n => Parsed::Done(status, body[..n].to_vec()),
        (Some(_), End::Closed) => Parsed::Broken,
        (Some(_), End::Open) | (None, End::Open) => Parsed::Incomplete,
        (None, End::Closed) => Parsed::Done(status, body.to_vec()),
    }
}

/// Decodes a chunked body; `None` until the last (empty) chunk has arrived, or when the
/// framing is broken.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if data.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| map.get(k).cloned()
    }

    fn home_with(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        dir
    }

    #[test]
    fn a_home_that_is_a_file_is_named_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "").unwrap();
        let env = env_of(&[("HARNESS9_HOME", file.to_str().unwrap())]);
        let over = Overrides {
            workdir: Some(dir.path().into()),
            ..Default::default()
        };
        let err = Config::resolve(&over, &env, EndpointNeed::None, OllamaProbe::Disabled)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("HARNESS9_HOME "), "{err}");
        assert!(err.contains("not-a-dir is not a directory"), "{err}");
        assert_eq!(err.matches("not a directory").count(), 1, "{err}");
    }

    #[test]
    fn skills_roots_that_do_not_exist_are_warnings() {
        let home = home_with("skills_dirs = [\"/nonexistent/from-file\"]\n");
        let h = home.path().to_str().unwrap();
        let wd = tempfile::tempdir().unwrap();
        let present = wd.path().join("present");
        std::fs::create_dir(&present).unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            skills_dirs: vec![present, "/nonexistent/from-flag".into()],
            ..Default::default()
        };
        let env = env_of(&[
            ("HARNESS9_HOME", h),
            ("SKILLS_ROOT", "/nonexistent/from-env"),
        ]);
        let c = Config::resolve(&over, &env, EndpointNeed::None, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("/nonexistent/from-flag (--skills-dir) does not exist"));
        assert!(c.warnings[1].contains("/nonexistent/from-file (skills_dirs in "));
        assert!(c.warnings[2].contains("/nonexistent/from-env (SKILLS_ROOT)"));
        // They are still searched in order (a root may appear later).
        assert_eq!(c.skills_dirs.len(), 4);
    }

    #[test]
    fn flags_beat_env_beat_file_beat_defaults() {
        let home =
            home_with("model = \"file-model\"\nbase_url = \"http://file/v1\"\nmax_turns = 7\n");
        let h = home.path().to_str().unwrap();
        let wd = tempfile::tempdir().unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            ..Default::default()
        };

        let env = env_of(&[("HARNESS9_HOME", h)]);
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.model, "file-model");
        assert_eq!(c.provider.base_url, "http://file/v1");
        assert_eq!(c.max_turns, 7);

        let env = env_of(&[
            ("HARNESS9_HOME", h),
            ("HARNESS9_MODEL", "env-model"),
            ("OPENAI_BASE_URL", "http://env/v1/"),
        ]);
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.model, "env-model");
        assert_eq!(c.provider.base_url, "http://env/v1");

        let over = Overrides {
            model: Some("flag-model".into()),
            base_url: Some("http://flag/v1".into()),
            max_turns: Some(3),
            ..over
        };
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(
            (c.model.as_str(), c.provider.base_url.as_str()),
            ("flag-model", "http://flag/v1")
        );
        assert_eq!(c.max_turns, 3);
    }

    #[test]
    fn key_alone_means_openai_and_no_endpoint_says_what_to_set() {
        let home = home_with("");
        let h = home.path().to_str().unwrap();
        let wd = tempfile::tempdir().unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            ..Default::default()
        };
        let env = env_of(&[("HARNESS9_HOME", h), ("OPENAI_API_KEY", "sk-test")]);
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.provider.base_url, DEFAULT_BASE_URL);
        assert_eq!(c.provider.api_key.as_deref(), Some("sk-test"));
        assert_eq!(c.model, DEFAULT_MODEL);

        let env = env_of(&[("HARNESS9_HOME", h)]);
        let err = Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("OPENAI_API_KEY") && err.contains("--base-url"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_reported_with_the_file() {
        let home = home_with("modle = \"x\"\n");
        let h = home.path().to_str().unwrap();
        let env = env_of(&[("HARNESS9_HOME", h), ("OPENAI_API_KEY", "k")]);
        let err = Config::resolve(
            &Overrides::default(),
            &env,
            EndpointNeed::Required,
            OllamaProbe::Disabled,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("config.toml") && err.contains("modle"),
            "{err}"
        );

        let home = home_with("base_url = \"localhost:8080\"\n");
        let h = home.path().to_str().unwrap();
        let env = env_of(&[("HARNESS9_HOME", h)]);
        let err = Config::resolve(
            &Overrides::default(),
            &env,
            EndpointNeed::Required,
            OllamaProbe::Disabled,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("http://"), "{err}");
    }

    #[test]
    fn provider_quirks_come_from_the_file() {
        let home = home_with(
            "base_url = \"http://x/v1\"\ninclude_usage = false\nstream = false\nsend_reasoning = true\napi_key_env = \"MY_KEY\"\n[headers]\nX-Title = \"harness9\"\n",
        );
        let h = home.path().to_str().unwrap();
        let env = env_of(&[("HARNESS9_HOME", h), ("MY_KEY", "secret")]);
        let wd = tempfile::tempdir().unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            ..Default::default()
        };
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.provider.usage_reporting, UsageReporting::Omit);
        assert_eq!(c.provider.stream_mode, StreamMode::NonStreaming);
        assert_eq!(c.provider.reasoning_echo, ReasoningEcho::AsReasoningContent);
        assert_eq!(c.provider.api_key.as_deref(), Some("secret"));
        assert_eq!(c.provider.api_key_source, "MY_KEY");
        assert_eq!(
            c.provider.extra_headers,
            vec![("X-Title".to_string(), "harness9".to_string())]
        );
    }

    #[test]
    fn missing_workdir_is_an_error() {
        let env = env_of(&[("OPENAI_API_KEY", "k")]);
        let over = Overrides {
            workdir: Some("/definitely/not/here".into()),
            ..Default::default()
        };
        assert!(matches!(
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled),
            Err(ConfigError::Workdir { .. })
        ));
    }

    #[test]
    fn skills_root_and_skill_run_lists() {
        let home = home_with(
            "skills_root = \"https://example.com/skills.zip\"\nskill_run_denied_commands = [\"rm\"]\n",
        );
        let h = home.path().to_str().unwrap();
        let wd = tempfile::tempdir().unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            ..Default::default()
        };
        let env = env_of(&[("HARNESS9_HOME", h), ("OPENAI_API_KEY", "k")]);
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(
            c.remote_skills_root.as_deref(),
            Some("https://example.com/skills.zip")
        );
        assert_eq!(c.skills_cache_dir, home.path().join("cache/skills"));
        assert_eq!(c.skill_run_commands.denied, Some(vec!["rm".to_string()]));
        assert!(c.skill_run_commands.allowed.is_none());

        let env = env_of(&[
            ("HARNESS9_HOME", h),
            ("OPENAI_API_KEY", "k"),
            ("SKILLS_ROOT", "/team/skills"),
            ("SKILLS_CACHE_DIR", "/tmp/cache"),
            ("HARNESS9_SKILL_RUN_ALLOWED_COMMANDS", "python3, sh"),
        ]);
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.remote_skills_root, None);
        assert_eq!(
            c.skills_dirs.last().unwrap(),
            &PathBuf::from("/team/skills")
        );
        assert_eq!(c.skills_cache_dir, PathBuf::from("/tmp/cache"));
        assert_eq!(
            c.skill_run_commands.allowed,
            Some(vec!["python3".to_string(), "sh".to_string()])
        );
    }

    #[test]
    fn the_context_window_comes_only_from_the_file() {
        let wd = tempfile::tempdir().unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            model: Some("gpt-4o".into()),
            ..Default::default()
        };
        let home = home_with("");
        let env = env_of(&[
            ("HARNESS9_HOME", home.path().to_str().unwrap()),
            ("OPENAI_API_KEY", "k"),
        ]);
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.context_window, None, "the table is not consulted here");
        assert_eq!(
            c.context_window_cache,
            home.path().join("cache/context_windows.json")
        );

        let home = home_with("context_window = 32000\n");
        let env = env_of(&[
            ("HARNESS9_HOME", home.path().to_str().unwrap()),
            ("OPENAI_API_KEY", "k"),
        ]);
        let c =
            Config::resolve(&over, &env, EndpointNeed::Required, OllamaProbe::Disabled).unwrap();
        assert_eq!(c.context_window, Some(32_000));
    }

    #[test]
    fn sessions_are_saved_unless_turned_off() {
        let wd = tempfile::tempdir().unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            ..Default::default()
        };
        let resolve = |config: &str, pairs: &[(&str, &str)]| {
            let home = home_with(config);
            let mut all = vec![("HARNESS9_HOME", home.path().to_str().unwrap())];
            all.extend_from_slice(pairs);
            Config::resolve(
                &over,
                &env_of(&all),
                EndpointNeed::None,
                OllamaProbe::Disabled,
            )
        };
        let c = resolve("", &[]).unwrap();
        assert_eq!(c.session_saving, SessionSaving::Enabled);
        assert_eq!(c.sessions_max_bytes, DEFAULT_SESSIONS_MAX_BYTES);
        let c = resolve("sessions = false\nsessions_max_bytes = 5000\n", &[]).unwrap();
        assert_eq!(c.session_saving, SessionSaving::Disabled);
        assert_eq!(c.sessions_max_bytes, 5000);
        let c = resolve("", &[("HARNESS9_SESSIONS", "0")]).unwrap();
        assert_eq!(c.session_saving, SessionSaving::Disabled);
        let c = resolve("sessions = false\n", &[("HARNESS9_SESSIONS", "1")]).unwrap();
        assert_eq!(c.session_saving, SessionSaving::Enabled);
        let err = resolve("", &[("HARNESS9_SESSIONS", "maybe")]).unwrap_err();
        assert!(err.to_string().contains("HARNESS9_SESSIONS"), "{err}");
        assert!(resolve("sessions_max_bytes = 0\n", &[]).is_err());
    }

    #[test]
    fn provider_names() {
        assert_eq!(provider_name_for("https://api.openai.com/v1"), "openai");
        assert_eq!(provider_name_for("http://127.0.0.1:11434/v1"), "ollama");
        assert_eq!(provider_name_for("http://127.0.0.1:9/v1"), "127.0.0.1");
    }

    // --- provider settings and the default model ---

    fn resolve_with(
        config: &str,
        pairs: &[(&str, &str)],
        probe: ServerProbe,
    ) -> Result<Config, ConfigError> {
        let home = home_with(config);
        let wd = tempfile::tempdir().unwrap();
        let over = Overrides {
            workdir: Some(wd.path().into()),
            ..Default::default()
        };
        let mut all = vec![("HARNESS9_HOME", home.path().to_str().unwrap())];
        all.extend_from_slice(pairs);
        Config::resolve(&over, &env_of(&all), EndpointNeed::Required, probe)
    }

    #[test]
    fn provider_settings_parse_and_default() {
        let c = resolve_with("base_url = \"http://x/v1\"\n", &[], ServerProbe::Disabled).unwrap();
        assert_eq!(c.provider.auth_header, AuthHeader::Bearer);
        assert!(c.provider.extra_body.is_empty());
        assert_eq!(c.provider.max_output_tokens, None);
        assert_eq!(c.provider.tool_choice, ToolChoice::Auto);

        let c = resolve_with(
            "base_url = \"http://x/v1\"\nauth_header = \"api-key\"\ntool_choice = \"none-sent\"\n\
             max_output_tokens = 4096\n[extra_body]\noptions = { num_ctx = 8192 }\n\
             chat_template_kwargs = { enable_thinking = false }\n",
            &[],
            ServerProbe::Disabled,
        )
        .unwrap();
        assert_eq!(
            c.provider.auth_header,
            AuthHeader::Named {
                name: "api-key".into()
            }
        );
        assert_eq!(c.provider.tool_choice, ToolChoice::Omit);
        assert_eq!(c.provider.max_output_tokens, Some(4096));
        assert_eq!(
            serde_json::Value::Object(c.provider.extra_body.clone()),
            serde_json::json!({
                "options": {"num_ctx": 8192},
                "chat_template_kwargs": {"enable_thinking": false}
            })
        );
        for (text, choice) in [
            ("\"auto\"", ToolChoice::Auto),
            ("\"required\"", ToolChoice::Required),
            (
                "{ function = \"read_file\" }",
                ToolChoice::Function {
                    name: "read_file".into(),
                },
            ),
        ] {
            let c = resolve_with(
                &format!("base_url = \"http://x/v1\"\ntool_choice = {text}\n"),
                &[],
                ServerProbe::Disabled,
            )
            .unwrap();
            assert_eq!(c.provider.tool_choice, choice);
        }
        let c = resolve_with(
            "base_url = \"http://x/v1\"\nauth_header = \"Authorization\"\n",
            &[],
            ServerProbe::Disabled,
        )
        .unwrap();
        assert_eq!(c.provider.auth_header, AuthHeader::Bearer);
    }

    #[test]
    fn bad_provider_settings_are_errors_that_name_the_key() {
        let cases = [
            ("auth_header = \"api key\"\n", "auth_header"),
            ("auth_header = \"\"\n", "auth_header"),
            ("[extra_body]\nmodel = \"x\"\n", "extra_body.model"),
            (
                "[extra_body]\nstream_options = {}\n",
                "extra_body.stream_options",
            ),
            (
                "max_output_tokens = 10\n[extra_body]\nmax_tokens = 5\n",
                "extra_body.max_tokens",
            ),
            ("max_output_tokens = 0\n", "max_output_tokens"),
            ("tool_choice = \"none\"\n", "tool_choice"),
            ("extra_body = 3\n", "extra_body"),
        ];
        for (config, key) in cases {
            let err = resolve_with(
                &format!("base_url = \"http://x/v1\"\n{config}"),
                &[],
                ServerProbe::Disabled,
            )
            .unwrap_err()
            .to_string();
            assert!(err.contains(key), "{config}: {err}");
        }
        let err = resolve_with(
            "base_url = \"http://x/v1\"\n[extra_body]\nmessages = []\n",
            &[],
            ServerProbe::Disabled,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("cannot be overridden"), "{err}");
    }

    /// Serves `responses` in turn, one connection each, on 127.0.0.1; returns the base URL
    /// and the requests it received.
    fn serve(responses: Vec<Vec<u8>>) -> (String, std::sync::mpsc::Receiver<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for response in responses {
                let Ok((mut conn, _)) = listener.accept() else {
                    return;
                };
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tx.send(String::from_utf8_lossy(&request).into_owned());
                let _ = conn.write_all(&response);
            }
        });
        (url, rx)
    }

    fn list_body(ids: &[&str]) -> String {
        let data: Vec<_> = ids
            .iter()
            .map(|id| serde_json::json!({"id": id, "object": "model"}))
            .collect();
        serde_json::json!({"object": "list", "data": data}).to_string()
    }

    #[test]
    fn the_only_model_the_server_lists_is_used_and_said() {
        let body = list_body(&["qwen3-8b"]);
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let (url, requests) = serve(vec![response.into_bytes()]);
        let c = resolve_with(
            &format!("base_url = \"{url}\"\nauth_header = \"api-key\"\n"),
            &[("OPENAI_API_KEY", "k1")],
            ServerProbe::Enabled,
        )
        .unwrap();
        assert_eq!(c.model, "qwen3-8b");
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("using `qwen3-8b`, the only model")),
            "{:?}",
            c.warnings
        );
        let request = requests.recv().unwrap();
        assert!(
            request.starts_with("GET /v1/models HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(request.contains("\r\napi-key: k1\r\n"), "{request}");
    }

    #[test]
    fn the_first_of_several_models_is_used_chunked_or_close_delimited() {
        let body = list_body(&["a-model", "b-model", "c-model"]);
        let (half1, half2) = body.split_at(10);
        let chunked = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{half1}\r\n{:x}\r\n{half2}\r\n0\r\n\r\n",
            half1.len(),
            half2.len()
        );
        let closed = format!("HTTP/1.0 200 OK\r\n\r\n{body}");
        let (url, _requests) = serve(vec![chunked.into_bytes(), closed.into_bytes()]);
        for _ in 0..2 {
            let c = resolve_with(
                &format!("base_url = \"{url}\"\n"),
                &[],
                ServerProbe::Enabled,
            )
            .unwrap();
            assert_eq!(c.model, "a-model");
            assert!(
                c.warnings
                    .iter()
                    .any(|w| w.contains("using `a-model`, the first of 3 models the server lists")),
                "{:?}",
                c.warnings
            );
        }
    }

    #[test]
    fn a_configured_model_asks_nothing_and_openai_keeps_the_default() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let c = resolve_with(
            &format!("base_url = \"{url}\"\nmodel = \"mine\"\n"),
            &[],
            ServerProbe::Enabled,
        )
        .unwrap();
        assert_eq!(c.model, "mine");
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_err(), "no request when a model is set");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);

        let c = resolve_with("", &[("OPENAI_API_KEY", "k")], ServerProbe::Enabled).unwrap();
        assert_eq!(c.model, DEFAULT_MODEL);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn a_silent_or_failing_server_falls_back_quickly() {
        // Accepts and never answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let started = Instant::now();
        let c = resolve_with(
            &format!("base_url = \"{url}\"\n"),
            &[],
            ServerProbe::Enabled,
        )
        .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(c.model, DEFAULT_MODEL);
        assert!(
            c.warnings.iter().any(|w| w.contains("did not answer")),
            "{:?}",
            c.warnings
        );
        drop(listener);

        let (url, _requests) = serve(vec![
            b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".to_vec(),
        ]);
        let c = resolve_with(
            &format!("base_url = \"{url}\"\n"),
            &[],
            ServerProbe::Enabled,
        )
        .unwrap();
        assert_eq!(c.model, DEFAULT_MODEL);

        let c = resolve_with(
            "base_url = \"https://openrouter.ai/api/v1\"\n",
            &[],
            ServerProbe::Enabled,
        )
        .unwrap();
        assert_eq!(c.model, DEFAULT_MODEL);
        assert!(
            c.warnings.iter().any(|w| w.contains("to openrouter.ai")),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn responses_are_framed_and_capped() {
        let done = |raw: &str, end| parse_response(raw.as_bytes(), end);
        assert_eq!(
            done("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", End::Open),
            Parsed::Incomplete
        );
        assert_eq!(
            done(
                "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nabcd",
                End::Open
            ),
            Parsed::Done(200, b"ab".to_vec())
        );
        assert_eq!(
            done(
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
                End::Closed
            ),
            Parsed::Broken
        );
        assert_eq!(
            done(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
                End::Open
            ),
            Parsed::Done(200, b"abc".to_vec())
        );
        assert_eq!(
            done(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",
                End::Open
            ),
            Parsed::Incomplete
        );
        assert_eq!(done("garbage\r\n\r\n", End::Open), Parsed::Broken);
        assert_eq!(url_host("http://[::1]:8080/v1"), "::1");
        assert_eq!(
            model_lookup_for("https://api.openai.com/v1"),
            ModelLookup::OpenAi
        );
        assert_eq!(
            model_lookup_for("http://[::1]:8080/v1"),
            ModelLookup::PlainHttp
        );
        assert_eq!(
            model_lookup_for("https://openrouter.ai/api/v1"),
            ModelLookup::Tls
        );
        assert_eq!(url_host("https://user@api.openai.com/v1"), "api.openai.com");

        let big = format!(
            "HTTP/1.0 200 OK\r\n\r\n{}",
            "x".repeat(PROBE_RESPONSE_CAP + 10)
        );
        let (url, _requests) = serve(vec![big.into_bytes()]);
        assert_eq!(
            http_get(
                &format!("{url}/models"),
                &[],
                Duration::from_secs(2),
                Duration::from_secs(2)
            ),
            None
        );
    }
}
