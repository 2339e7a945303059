//! How a [`Config`] is resolved, as named steps: where harness9's home and the project
//! are, the endpoint and the provider's settings, the model, the skill roots, the tools'
//! limits, what is kept from commands, sessions, permissions, prices, MCP servers, the
//! approval mode and the sandbox. Each step reads the command line, the environment
//! (through the lookup function) and config.toml in that order of precedence.
//!
//! It must not know frontends; it makes no network request but the optional start-up
//! probes in `probe`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::probe::default_model;
use super::provider_keys::{self, validate_url};
use super::providers::{Endpoint as Endpoint_, ProviderBook, ProviderId};
use super::{
    Config, ConfigError, DEFAULT_BASE_URL, DEFAULT_MAX_TURNS, DEFAULT_MODEL,
    DEFAULT_SESSIONS_MAX_BYTES, EndpointNeed, FileConfig, HomeOrigin, ModelSource, Overrides,
    SandboxFile, ServerProbe, SessionSaving, probe_ollama, provider_name_for,
};
use crate::exec::secrets::SecretPolicy;
use crate::llm::ProviderConfig;
use crate::permissions::PermissionsSetup;
use crate::permissions::files::{BuiltinRules, Places};
use crate::protocol::ApprovalMode;
use crate::sandbox::{NamespacesProbe, SandboxChoice, SandboxMode, SandboxSettings, SecretPlaces};
use crate::tools::ToolLimits;
use crate::tools::skill_run::CommandLists;

/// The environment lookup every step reads through.
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

impl Config {
    /// Resolves the configuration. `env` looks up environment variables.
    pub fn resolve(
        overrides: &Overrides,
        env: Env<'_>,
        need: EndpointNeed,
        probe: ServerProbe,
    ) -> Result<Config, ConfigError> {
        let homes = Homes::locate(env)?;
        let config_path = homes.harness.join("config.toml");
        let file = FileConfig::load(&config_path)?;
        let workdir = workdir(overrides)?;
        let root = crate::project_root::find(&workdir);
        let prices = prices(&file)?;
        let mut named = super::providers::resolve_named(&file.providers, &prices, env)?;
        // What holds for every provider of the session: where refusals taught how a
        // model wants its reasoning (beside the windows), and `--effort`.
        let session_wide = |provider: &mut ProviderConfig| {
            provider.reasoning_memory =
                Some(homes.harness.join("cache").join("reasoning_echo.json"));
            if let Some(effort) = overrides.effort {
                provider.reasoning_effort = Some(effort);
            }
        };
        named
            .values_mut()
            .for_each(|e| session_wide(&mut e.provider));
        let mut endpoint = Endpoint::resolve(
            overrides,
            env,
            &file,
            EndpointAsk {
                need,
                probe,
                config_path: &config_path,
            },
            &named,
        )?;
        let max_turns = max_turns(overrides, &file)?;
        let instructions_max_bytes = instructions_max_bytes(&file)?;
        let skills = SkillPlaces::resolve(overrides, env, &file, &homes, &config_path);
        let mut warnings = skills.warnings;
        warnings.extend(root.warning());
        let project_root = root.path;
        warnings.extend(endpoint.model_note.take());
        session_wide(&mut endpoint.provider);
        if let Some(default) = endpoint.default.as_mut() {
            session_wide(default);
        }
        let context_window = match &endpoint.id {
            ProviderId::Default => file.context_window,
            ProviderId::Named { name } => named.get(name).and_then(|e| e.context_window),
        };
        let default_endpoint = endpoint.default.clone().map(|provider| Endpoint_ {
            id: ProviderId::Default,
            provider,
            context_window: file.context_window,
            prices: prices.clone(),
        });
        let providers = super::providers::book(default_endpoint, named);
        let secret_policy = secret_policy(&providers, &endpoint.provider, &file);
        let session_saving = session_saving(env, file.sessions)?;
        let sessions_max_bytes = sessions_max_bytes(&file)?;
        let folders = Folders {
            workdir: &workdir,
            root: &project_root,
        };
        let mut permissions = permissions(&file, &config_path, folders, &homes, &mut warnings)?;
        crate::permissions::files::add_command_line(
            &mut permissions.book,
            &overrides.rules,
            homes.user.as_deref(),
        )?;
        let mut mcp = crate::mcp::config::load(
            &file.mcp_servers,
            &config_path,
            &project_root,
            &homes.harness,
            env,
        );
        let plugins = crate::plugins::load_in_force(&homes.harness, env);
        warnings.extend(plugins.warnings.iter().cloned());
        mcp.add_plugin_servers(plugins.mcp_servers.clone());
        warnings.extend(mcp.warnings.iter().cloned());
        warnings.extend(mcp.untrusted_warning());
        let user_hooks = user_hooks(&file, &config_path, &mut warnings);
        let project_hooks = project_hooks(&project_root, &homes.harness, &mut warnings);
        let approval_mode = overrides
            .approval_mode
            .or(file.approval_mode)
            .unwrap_or_default();
        let mut sandbox = sandbox(
            env,
            overrides.sandbox,
            &file.sandbox,
            approval_mode,
            SandboxPlaces {
                user_home: homes.user.as_deref(),
                harness9_home: &homes.harness,
                project_root: &project_root,
                skills_cache_dir: &skills.cache_dir,
            },
        )?;
        // A trusted plugin's files stay readable inside the masked harness9 home: its
        // hooks and servers run from there.
        sandbox
            .secrets
            .visible
            .extend(plugins.trusted_roots().iter().cloned());
        Ok(Config {
            run: overrides.run.clone(),
            user_hooks,
            plugins,
            project_hooks,
            show_reasoning: match file.show_reasoning {
                Some(true) => super::ShowReasoning::Shown,
                Some(false) | None => super::ShowReasoning::Hidden,
            },
            permissions,
            sandbox,
            mcp,
            prices,
            remote_skills_root: skills.remote_root,
            skills_cache_dir: skills.cache_dir,
            skill_run_commands: skill_run_commands(env, &file),
            secret_policy,
            context_window,
            context_window_cache: homes.harness.join("cache").join("context_windows.json"),
            model: endpoint.model,
            model_source: if overrides.model.is_some() {
                ModelSource::CommandLine
            } else {
                ModelSource::Settings
            },
            effort_source: if overrides.effort.is_some() {
                ModelSource::CommandLine
            } else {
                ModelSource::Settings
            },
            provider: endpoint.provider,
            provider_id: endpoint.id,
            providers,
            workdir,
            project_root,
            home: homes.harness,
            user_home: homes.user,
            approval_mode,
            max_turns,
            max_parallel_agents: max_parallel_agents(&file)?,
            skills_dirs: skills.dirs,
            skills_index_budget: file.skills_index_budget,
            instructions_max_bytes,
            tool_limits: tool_limits(&file),
            web_fetch: super::web::fetch_settings(&file.web_fetch)?,
            web_search: super::web::search_backend(&file.web_search)?,
            warnings,
            session_saving,
            sessions_max_bytes,
        })
    }
}

/// The user's home folder and harness9's.
struct Homes {
    /// `$HOME`, when set.
    user: Option<PathBuf>,
    /// `$HARNESS9_HOME`, else `~/.harness9`.
    harness: PathBuf,
}

impl Homes {
    fn locate(env: Env<'_>) -> Result<Homes, ConfigError> {
        let user = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let (harness, origin) = match env("HARNESS9_HOME").filter(|h| !h.is_empty()) {
            Some(h) => (PathBuf::from(h), HomeOrigin::Variable),
            None => (
                user.clone()
                    .unwrap_or_else(|| PathBuf::from("."))
                    .join(".harness9"),
                HomeOrigin::Default,
            ),
        };
        if harness.exists() && !harness.is_dir() {
            return Err(ConfigError::HomeNotADirectory {
                path: harness,
                origin,
            });
        }
        Ok(Homes { user, harness })
    }
}

/// The working folder: `-C`, else the current one; it must exist. (The project root
/// it belongs to is [`crate::project_root::find`]'s.)
fn workdir(overrides: &Overrides) -> Result<PathBuf, ConfigError> {
    let raw = match &overrides.workdir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|_| ConfigError::Workdir {
            path: PathBuf::from("."),
        })?,
    };
    raw.canonicalize()
        .ok()
        .filter(|p| p.is_dir())
        .ok_or(ConfigError::Workdir { path: raw.clone() })
}

/// The combined cap on the instruction files: config.toml, else 32 KiB.
fn instructions_max_bytes(file: &FileConfig) -> Result<usize, ConfigError> {
    use crate::instructions::{DEFAULT_MAX_BYTES, MAX_MAX_BYTES};
    match file.instructions_max_bytes {
        None => Ok(DEFAULT_MAX_BYTES),
        Some(n) if n <= MAX_MAX_BYTES => Ok(n),
        Some(n) => Err(ConfigError::Invalid {
            what: "instructions_max_bytes".into(),
            message: format!("{n} is over the largest cap, {MAX_MAX_BYTES} bytes"),
        }),
    }
}

/// The endpoint, its settings and the model.
struct Endpoint {
    /// Which provider the session starts on.
    id: ProviderId,
    provider: ProviderConfig,
    model: String,
    /// Which model was picked when none was configured.
    model_note: Option<String>,
    /// The top-level endpoint, when one is configured or found (it is `provider` when
    /// `id` is the default).
    default: Option<ProviderConfig>,
}

/// What finding the endpoint may do.
#[derive(Clone, Copy)]
struct EndpointAsk<'a> {
    need: EndpointNeed,
    probe: ServerProbe,
    config_path: &'a Path,
}

impl Endpoint {
    fn resolve(
        overrides: &Overrides,
        env: Env<'_>,
        file: &FileConfig,
        ask: EndpointAsk<'_>,
        named: &std::collections::BTreeMap<String, Endpoint_>,
    ) -> Result<Endpoint, ConfigError> {
        let configured_model = overrides
            .model
            .clone()
            .or_else(|| env("HARNESS9_MODEL").filter(|m| !m.is_empty()))
            .or_else(|| file.model.clone());
        // `NAME/model` starts on a named provider; the top-level endpoint is then only
        // one more to switch to, so it is neither required nor probed for.
        let book = super::providers::book(None, named.clone());
        let choice = configured_model
            .as_deref()
            .map(|spec| book.choose(spec, &ProviderId::Default));
        if let Some(choice) = &choice
            && choice.model.trim().is_empty()
        {
            return Err(ConfigError::Invalid {
                what: "model".into(),
                message: format!(
                    "no model after `{}/`: write NAME/MODEL",
                    choice.provider.name()
                ),
            });
        }
        if let Some(super::providers::Choice {
            provider: id @ ProviderId::Named { .. },
            model,
        }) = choice
        {
            let quiet = EndpointAsk {
                need: EndpointNeed::None,
                probe: ServerProbe::Disabled,
                ..ask
            };
            let default = default_provider(overrides, env, file, quiet)?
                .map(|(provider, _)| provider)
                .filter(|p| !p.base_url.is_empty());
            let provider = book
                .endpoint(&id)
                .map(|e| e.provider.clone())
                .unwrap_or_else(|| ProviderConfig::new(id.name(), ""));
            return Ok(Endpoint {
                id,
                provider,
                model,
                model_note: None,
                default,
            });
        }
        let Some((provider, listed_models)) = default_provider(overrides, env, file, ask)? else {
            return Err(ConfigError::NoEndpoint {
                config_path: ask.config_path.to_path_buf(),
            });
        };
        let (model, model_note) = match choice {
            Some(choice) => (choice.model, None),
            None if ask.probe == ServerProbe::Enabled && ask.need == EndpointNeed::Required => {
                default_model(&provider, listed_models, model_probe_timeout(file)?)
            }
            None => (DEFAULT_MODEL.to_string(), None),
        };
        Ok(Endpoint {
            id: ProviderId::Default,
            default: (!provider.base_url.is_empty()).then(|| provider.clone()),
            provider,
            model,
            model_note,
        })
    }
}

/// How long start-up waits for the model list: config.toml, else the default.
fn model_probe_timeout(file: &FileConfig) -> Result<Duration, ConfigError> {
    match file.model_probe_timeout_ms {
        None => Ok(super::MODEL_PROBE_TIMEOUT),
        Some(ms @ 1..=super::MAX_MODEL_PROBE_TIMEOUT_MS) => Ok(Duration::from_millis(ms)),
        Some(ms) => Err(ConfigError::Invalid {
            what: "model_probe_timeout_ms".into(),
            message: format!(
                "{ms}: use 1 to {} milliseconds",
                super::MAX_MODEL_PROBE_TIMEOUT_MS
            ),
        }),
    }
}

/// The top-level endpoint's settings and the models a found Ollama listed.
type Found = (ProviderConfig, Option<Vec<String>>);

/// The top-level endpoint with its settings (and the models a found Ollama listed).
fn default_provider(
    overrides: &Overrides,
    env: Env<'_>,
    file: &FileConfig,
    ask: EndpointAsk<'_>,
) -> Result<Option<Found>, ConfigError> {
    let api_key_env = file
        .api_key_env
        .clone()
        .unwrap_or_else(|| "OPENAI_API_KEY".into());
    let api_key = env(&api_key_env).filter(|k| !k.trim().is_empty());
    let (base_url, listed_models) = match base_url(
        overrides,
        env,
        file,
        api_key.is_some(),
        ask.need,
        ask.probe,
        ask.config_path,
    ) {
        Ok(found) => found,
        Err(ConfigError::NoEndpoint { .. }) if ask.need == EndpointNeed::None => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    if ask.need == EndpointNeed::Required || !base_url.is_empty() {
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
    provider_keys::apply(&mut provider, file.provider_keys(), env)?;
    Ok(Some((provider, listed_models)))
}

/// The base URL: the command line, `OPENAI_BASE_URL`, config.toml; OpenAI's when only a
/// key is set; else a local Ollama when the probe finds one (with the models it listed,
/// so they need not be asked for twice).
fn base_url(
    overrides: &Overrides,
    env: Env<'_>,
    file: &FileConfig,
    has_key: bool,
    need: EndpointNeed,
    probe: ServerProbe,
    config_path: &Path,
) -> Result<(String, Option<Vec<String>>), ConfigError> {
    let configured = overrides
        .base_url
        .clone()
        .or_else(|| env("OPENAI_BASE_URL").filter(|u| !u.is_empty()))
        .or_else(|| file.base_url.clone());
    let no_endpoint = || ConfigError::NoEndpoint {
        config_path: config_path.to_path_buf(),
    };
    Ok(match (configured, has_key) {
        (Some(url), _) => (url, None),
        (None, true) => (DEFAULT_BASE_URL.to_string(), None),
        (None, false) if need == EndpointNeed::None => (String::new(), None),
        (None, false) => match probe {
            ServerProbe::Enabled => match probe_ollama(Duration::from_millis(150)) {
                Some(found) => (found.base_url, Some(found.models)),
                None => return Err(no_endpoint()),
            },
            ServerProbe::Disabled => return Err(no_endpoint()),
        },
    })
}

/// The cap on model requests per turn: the command line, config.toml, the default.
fn max_turns(overrides: &Overrides, file: &FileConfig) -> Result<u32, ConfigError> {
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
    Ok(max_turns)
}

/// How many `agent` calls of one response run at once: config.toml, else 4; at least 1.
fn max_parallel_agents(file: &FileConfig) -> Result<usize, ConfigError> {
    match file.max_parallel_agents {
        Some(0) => Err(ConfigError::Invalid {
            what: "max_parallel_agents".into(),
            message: "must be at least 1".into(),
        }),
        Some(n) => Ok(n),
        None => Ok(super::DEFAULT_MAX_PARALLEL_AGENTS),
    }
}

/// Where skills come from.
struct SkillPlaces {
    /// Local roots (`--skills-dir`, `skills_dirs`, a path in `SKILLS_ROOT`).
    dirs: Vec<PathBuf>,
    /// A URL in `SKILLS_ROOT` / `skills_root`.
    remote_root: Option<String>,
    /// Where remote archives are cached.
    cache_dir: PathBuf,
    /// A warning for each local root that is not a folder.
    warnings: Vec<String>,
}

impl SkillPlaces {
    fn resolve(
        overrides: &Overrides,
        env: Env<'_>,
        file: &FileConfig,
        homes: &Homes,
        config_path: &Path,
    ) -> SkillPlaces {
        let user_home = homes.user.as_deref();
        // Each local root with where it was named, so a missing one can be reported.
        let mut roots: Vec<(PathBuf, String)> = overrides
            .skills_dirs
            .iter()
            .map(|d| (d.clone(), "--skills-dir".to_string()))
            .collect();
        roots.extend(file.skills_dirs.iter().map(|d| {
            (
                expand_home(d, user_home),
                format!("skills_dirs in {}", config_path.display()),
            )
        }));
        // SKILLS_ROOT / skills_root: a URL is a remote root; a path is one more local root.
        let mut remote_root = None;
        let root_origin = match env("SKILLS_ROOT").filter(|r| !r.is_empty()) {
            Some(root) => Some((root, "SKILLS_ROOT".to_string())),
            None => file
                .skills_root
                .clone()
                .map(|root| (root, format!("skills_root in {}", config_path.display()))),
        };
        if let Some((root, origin)) = root_origin {
            if root.starts_with("http://") || root.starts_with("https://") {
                remote_root = Some(root);
            } else {
                roots.push((expand_home(Path::new(&root), user_home), origin));
            }
        }
        let warnings = roots
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
        let cache_dir = env("SKILLS_CACHE_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                file.skills_cache_dir
                    .as_deref()
                    .map(|d| expand_home(d, user_home))
            })
            .unwrap_or_else(|| homes.harness.join("cache").join("skills"));
        SkillPlaces {
            dirs: roots.into_iter().map(|(dir, _)| dir).collect(),
            remote_root,
            cache_dir,
            warnings,
        }
    }
}

/// The tools' limits from config.toml.
fn tool_limits(file: &FileConfig) -> ToolLimits {
    let mut limits = ToolLimits::default();
    if file.permissions.builtin_rules == BuiltinRules::Off {
        limits.secret_files = crate::tools::SecretFileSearch::Searched;
    }
    if let Some(secs) = file.bash_timeout_secs {
        limits.default_bash_timeout_secs = secs.clamp(1, limits.max_bash_timeout_secs);
    }
    if let Some(bytes) = file.max_image_bytes {
        limits.max_image_bytes = bytes;
    }
    limits
}

/// `skill_run`'s allow and deny lists: the environment, else config.toml.
fn skill_run_commands(env: Env<'_>, file: &FileConfig) -> CommandLists {
    CommandLists {
        allowed: env("HARNESS9_SKILL_RUN_ALLOWED_COMMANDS")
            .map(|v| command_list(&v))
            .or(file.skill_run_allowed_commands.clone()),
        denied: env("HARNESS9_SKILL_RUN_DENIED_COMMANDS")
            .map(|v| command_list(&v))
            .or(file.skill_run_denied_commands.clone()),
    }
}

/// What is kept from commands: every provider's key and header values under any name,
/// and the lists.
fn secret_policy(
    providers: &ProviderBook,
    provider: &ProviderConfig,
    file: &FileConfig,
) -> SecretPolicy {
    let mut values: Vec<String> = provider
        .api_key
        .iter()
        .cloned()
        .chain(provider.extra_headers.iter().map(|(_, v)| v.clone()))
        .collect();
    for value in providers.secret_values() {
        if !values.contains(&value) {
            values.push(value);
        }
    }
    SecretPolicy {
        values,
        remove: file.child_env_remove.clone(),
        keep: file.child_env_keep.clone(),
    }
}

/// The total size saved sessions may take.
fn sessions_max_bytes(file: &FileConfig) -> Result<u64, ConfigError> {
    let max = file
        .sessions_max_bytes
        .unwrap_or(DEFAULT_SESSIONS_MAX_BYTES);
    if max == 0 {
        return Err(ConfigError::Invalid {
            what: "sessions_max_bytes".into(),
            message: "must be at least 1 (sessions = false saves none)".into(),
        });
    }
    Ok(max)
}

/// The working folder and the project root it belongs to.
#[derive(Clone, Copy)]
struct Folders<'a> {
    workdir: &'a Path,
    root: &'a Path,
}

/// The permission rules, and a warning for the project file's unapproved allow rules.
fn permissions(
    file: &FileConfig,
    config_path: &Path,
    folders: Folders<'_>,
    homes: &Homes,
    warnings: &mut Vec<String>,
) -> Result<PermissionsSetup, ConfigError> {
    let permissions = PermissionsSetup::load(
        Places {
            user_file: config_path.to_path_buf(),
            project: folders.workdir.to_path_buf(),
            root: folders.root.to_path_buf(),
            harness_home: homes.harness.clone(),
            home: homes.user.clone(),
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
    Ok(permissions)
}

/// The price table, each price checked.
fn prices(file: &FileConfig) -> Result<crate::cost::PriceTable, ConfigError> {
    for (model, price) in &file.prices {
        price.check().map_err(|message| ConfigError::Invalid {
            what: format!("prices.\"{model}\""),
            message,
        })?;
    }
    Ok(crate::cost::PriceTable::new(file.prices.clone()))
}

/// Session saving from `HARNESS9_SESSIONS` (it wins), else `sessions` in config.toml.
fn session_saving(
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

/// Where the sandbox's masks and exceptions are.
struct SandboxPlaces<'a> {
    user_home: Option<&'a Path>,
    harness9_home: &'a Path,
    /// Relative masked paths are in the project, so anchored at its root.
    project_root: &'a Path,
    skills_cache_dir: &'a Path,
}

/// The sandbox from `--sandbox`, then `HARNESS9_SANDBOX`, then `[sandbox]`; with none,
/// workspace-write in `auto-edit` and `full-auto` (where commands may run unasked) and
/// off in `suggest` (where a person approves each one). It masks the user's secrets and
/// `$HARNESS9_HOME` but for its skill folders.
fn sandbox(
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
            // Plan mode narrows commands to read-only itself; workspace-write is what the
            // mode chosen when the plan is approved needs.
            ApprovalMode::AutoEdit | ApprovalMode::FullAuto | ApprovalMode::Plan => {
                SandboxMode::WorkspaceWrite
            }
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
                .map(|p| places.project_root.join(expand_home(p, user_home)))
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

fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// The hooks of config.toml's `[hooks]`; each entry that cannot be used becomes a
/// start-up warning naming the file and the reason.
fn user_hooks(
    file: &FileConfig,
    config_path: &Path,
    warnings: &mut Vec<String>,
) -> crate::hooks::HookSet {
    let Some(block) = file.hooks.clone() else {
        return crate::hooks::HookSet::new();
    };
    let origin = crate::hooks::Origin {
        kind: crate::hooks::OriginKind::UserConfig,
        path: config_path.to_path_buf(),
    };
    let (set, problems) = crate::hooks::parse_toml_value(block, &origin);
    warnings.extend(problems.iter().map(|p| format!("hooks: {p}")));
    set
}

/// The project's hooks and what this user trusted of them: what cannot be used is named,
/// and how many are not in force (with the command that trusts them) is a warning.
fn project_hooks(
    project_root: &Path,
    home: &Path,
    warnings: &mut Vec<String>,
) -> crate::hooks::ProjectHooks {
    let hooks = crate::hooks::ProjectHooks::load(project_root, home);
    warnings.extend(hooks.problems.iter().map(|p| format!("hooks: {p}")));
    let count = hooks.not_in_force();
    if count > 0 {
        warnings.push(format!(
            "hooks: {count} of the project's hooks {} not in force (new or changed since \
             trusted, or never trusted); `harness9 hooks list` shows them, `{}` trusts them",
            if count == 1 { "is" } else { "are" },
            crate::protocol::TRUST_COMMAND,
        ));
    }
    hooks
}
