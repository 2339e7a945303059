//! The subcommands (`harness9 skills|sessions|artifacts|permissions|mcp|hooks …`): the
//! configuration resolved as a subcommand needs it (no endpoint, nothing probed), the
//! start-up warnings written to stderr, and each parsed action handed to the module that
//! does it ([`crate::skills::cli`], [`crate::sessions::cli`], [`crate::artifacts::cli`],
//! [`crate::mcp::cli`], and [`permissions`] and [`hooks`] here), with stdout as a [`Sink`] (a reader
//! that stops early ends the output quietly).
//!
//! Every failure comes back as one [`CommandError`] whose [`CommandError::kind`] is a
//! [`Kind`] shared by all subcommands. It must not know exit codes or write errors (both
//! are `main`'s), and it never starts a session.

mod context;
mod hooks;
mod mcp;
mod permissions;
mod plugin;

use std::io;

use crate::agents::cli::AgentsCliError;
use crate::artifacts::cli::ArtifactsCliError;
use crate::cli::{
    AgentsAction, ArtifactsAction, Command, SessionExportFormat, SessionsAction, SkillsAction,
};
use crate::config::{Config, ConfigError, EndpointNeed, OllamaProbe, Overrides};
use crate::mcp::cli::McpCliError;
use crate::sessions::cli::CliError as SessionsCliError;
use crate::sink::{self, Sink};
use crate::skills::cli::SkillsCliError;
use crate::subcommand::Kind;
use crate::{session, startup};

pub use hooks::HooksCliError;
pub use permissions::PermissionsCliError;

/// Why a subcommand failed: its own error, or what every subcommand needs first.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The async runtime (for remote skills, MCP servers) could not be started.
    #[error("cannot start the async runtime")]
    Runtime(#[source] io::Error),
    /// `harness9 skills …`.
    #[error(transparent)]
    Skills(#[from] SkillsCliError),
    /// `harness9 agents …`.
    #[error(transparent)]
    Agents(#[from] AgentsCliError),
    /// `harness9 sessions …`.
    #[error(transparent)]
    Sessions(#[from] SessionsCliError),
    /// `harness9 artifacts …`.
    #[error(transparent)]
    Artifacts(#[from] ArtifactsCliError),
    /// `harness9 permissions …`.
    #[error(transparent)]
    Permissions(#[from] PermissionsCliError),
    /// `harness9 mcp …`.
    #[error(transparent)]
    Mcp(#[from] McpCliError),
    /// `harness9 plugin …`.
    #[error(transparent)]
    Plugin(#[from] crate::plugins::cli::PluginCliError),
    /// `harness9 hooks …`.
    #[error(transparent)]
    Hooks(#[from] HooksCliError),
    /// harness9's own binary (the sandbox launcher) cannot be found.
    #[error("cannot find harness9's own binary to start sandboxed servers")]
    OwnBinary(#[source] io::Error),
    /// `harness9 context`: the session could not be assembled.
    #[error("cannot assemble the session to report on")]
    ContextAssembly(#[source] crate::llm::LlmError),
    /// `harness9 context`: the report could not be written.
    #[error("cannot write the report")]
    ContextOutput(#[source] io::Error),
    /// A peer's subcommand (`exec`, `resume`…): what to type instead.
    #[error("{0}")]
    PeerHabit(String),
    /// `harness9 acp` reached the subcommands: it runs a session, which `main` starts.
    #[error("`harness9 acp` runs a session, not a subcommand")]
    SessionCommand,
}

impl CommandError {
    /// The kind of failure; `main` turns it into the exit code. An invalid
    /// configuration is the user's to fix, as in every mode: a usage error.
    pub fn kind(&self) -> Kind {
        match self {
            CommandError::Config(_) | CommandError::PeerHabit(_) => Kind::Usage,
            CommandError::Runtime(_) | CommandError::OwnBinary(_) => Kind::Internal,
            CommandError::SessionCommand => Kind::Internal,
            CommandError::ContextAssembly(_) | CommandError::ContextOutput(_) => Kind::Internal,
            CommandError::Skills(e) => e.kind(),
            CommandError::Agents(e) => e.kind(),
            CommandError::Sessions(e) => e.kind(),
            CommandError::Artifacts(e) => e.kind(),
            CommandError::Permissions(e) => e.kind(),
            CommandError::Mcp(e) => e.kind(),
            CommandError::Plugin(e) => e.kind(),
            CommandError::Hooks(e) => e.kind(),
        }
    }
}

/// Runs a subcommand. Subcommands never call the model: no endpoint is needed or looked
/// for. The home's warning (it cannot be written) comes first on stderr for every one.
pub fn run(overrides: &Overrides, command: &Command) -> Result<(), CommandError> {
    // A peer's habit is answered before anything is read.
    if let Command::Peer(peer) = command {
        return Err(CommandError::PeerHabit(peer.hint()));
    }
    let config = Config::resolve(
        overrides,
        &|name| std::env::var(name).ok(),
        EndpointNeed::None,
        OllamaProbe::Disabled,
    )?;
    let sealed = startup::seal_secrets(&config);
    let home = startup::init_logging(&config);
    if let Err(e) = sealed {
        tracing::warn!("{e}");
    }
    if let Some(warning) = home.warning() {
        warn(warning);
    }
    match command {
        Command::Skills { action } => skills(overrides, &config, action),
        Command::Agents { action } => agents(overrides, &config, action),
        Command::Sessions { action } => sessions(&config, action),
        Command::Artifacts { action } => artifacts(&config, action),
        Command::Permissions { action } => permissions::run(&config, action),
        Command::Mcp { action } => mcp::run(&config, action),
        Command::Plugin { action } => plugin::run(&config, action),
        Command::Hooks { action } => hooks::run(&config, action),
        Command::Context { json } => context::run(overrides, &config, *json),
        Command::Peer(peer) => Err(CommandError::PeerHabit(peer.hint())),
        Command::Acp => Err(CommandError::SessionCommand),
    }
}

/// A warning on stderr, as every mode writes them.
fn warn(warning: &str) {
    sink::stderr_line(&format!("harness9: warning: {warning}"));
}

/// A runtime on this thread, for the little async work a subcommand does.
fn current_thread_runtime() -> Result<tokio::runtime::Runtime, CommandError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CommandError::Runtime)
}

/// `harness9 skills list|show|validate`, on the skills a session would find (the remote
/// root, `SKILLS_ROOT` as a URL, downloaded or refreshed first).
fn skills(
    overrides: &Overrides,
    config: &Config,
    action: &SkillsAction,
) -> Result<(), CommandError> {
    use crate::skills::{Catalog, cli};
    let remote = if config.remote_skills_root.is_some() {
        current_thread_runtime()?.block_on(session::sync_remote_skills(config))
    } else {
        Default::default()
    };
    for warning in config.warnings.iter().chain(&remote.warnings) {
        warn(warning);
    }
    let options = session::discovery_options_with_remote(config, &remote);
    let mut out = Sink::new(io::stdout().lock());
    match action {
        SkillsAction::List { json } => {
            let format = if *json {
                cli::ListFormat::Json
            } else {
                cli::ListFormat::Table
            };
            let catalog = Catalog::discover(&options);
            let budget = session_index_budget(overrides, config);
            cli::list(&catalog, budget, format, &mut out)?;
        }
        SkillsAction::Show { name } => {
            cli::show(&Catalog::discover(&options), name, &mut out)?;
        }
        SkillsAction::Validate { paths } => {
            let paths = if paths.is_empty() {
                options.existing_roots()
            } else {
                paths.clone()
            };
            cli::validate(&paths, &mut out)?;
        }
    }
    Ok(())
}

/// `harness9 agents list|show|validate`, on the definitions a session would find.
fn agents(
    overrides: &Overrides,
    config: &Config,
    action: &AgentsAction,
) -> Result<(), CommandError> {
    use crate::agents::{AgentCatalog, cli};
    for warning in &config.warnings {
        warn(warning);
    }
    let places = session::agent_places(config);
    let mut out = Sink::new(io::stdout().lock());
    match action {
        AgentsAction::List { json } => {
            let format = if *json {
                cli::ListFormat::Json
            } else {
                cli::ListFormat::Table
            };
            let budget = session_index_budget(overrides, config);
            cli::list(&AgentCatalog::discover(&places), budget, format, &mut out)?;
        }
        AgentsAction::Show { name } => {
            cli::show(&AgentCatalog::discover(&places), name, &mut out)?;
        }
        AgentsAction::Validate { paths } => {
            let paths = if paths.is_empty() {
                places
                    .roots()
                    .into_iter()
                    .filter(|r| r.path.is_dir())
                    .map(|r| r.path.to_path_buf())
                    .collect()
            } else {
                paths.clone()
            };
            cli::validate(&paths, &mut out)?;
        }
    }
    Ok(())
}

/// The skills index budget a session started here would use. It follows the model's
/// context window, so the model is resolved as a session resolves it (the endpoint's
/// model list asked when none is configured, a local Ollama looked for when no endpoint
/// is); without an endpoint a session could use, the subcommand's own model stands.
fn session_index_budget(overrides: &Overrides, config: &Config) -> usize {
    let as_session = Config::resolve(
        overrides,
        &|name| std::env::var(name).ok(),
        EndpointNeed::Required,
        OllamaProbe::Enabled,
    );
    match as_session {
        Ok(session_config) => session::index_budget(&session_config),
        Err(_) => session::index_budget(config),
    }
}

/// `harness9 sessions list|show|export|prune`: the saved sessions of this project (or
/// all), read from `$HARNESS9_HOME/sessions`.
pub fn sessions(config: &Config, action: &SessionsAction) -> Result<(), CommandError> {
    use crate::sessions::{self, SessionStore, cli};
    let store = SessionStore::new(&config.home);
    let mut out = Sink::new(io::stdout().lock());
    let mut err = Sink::new(io::stderr());
    match action {
        SessionsAction::List { all, json } => {
            let scope = if *all {
                sessions::ListScope::All
            } else {
                sessions::ListScope::Project(sessions::project_of(&config.workdir))
            };
            let format = if *json {
                cli::ListFormat::Json
            } else {
                cli::ListFormat::Table
            };
            cli::list(&store, scope, format, &mut out)?;
        }
        SessionsAction::Show { id } => cli::show(&store, id, &mut out, &mut err)?,
        SessionsAction::Export { id, format, output } => {
            let format = match format {
                SessionExportFormat::Md => crate::protocol::ExportFormat::Markdown,
                SessionExportFormat::Json => crate::protocol::ExportFormat::Json,
            };
            let destination = match output {
                Some(file) => cli::Destination::File(file.clone()),
                None => cli::Destination::Stdout,
            };
            cli::export(&store, id, format, &destination, &mut out, &mut err)?;
        }
        SessionsAction::Prune {
            older_than,
            dry_run,
        } => {
            let mode = if *dry_run {
                cli::PruneMode::DryRun
            } else {
                cli::PruneMode::Remove
            };
            let now = sessions::record::now_ms();
            cli::prune(&store, *older_than, mode, now, &mut out)?;
        }
    }
    Ok(())
}

/// `harness9 artifacts list|get`: a saved session's artifacts.
fn artifacts(config: &Config, action: &ArtifactsAction) -> Result<(), CommandError> {
    use crate::artifacts::cli;
    let sessions = crate::sessions::SessionStore::new(&config.home);
    let mut out = Sink::new(io::stdout().lock());
    match action {
        ArtifactsAction::List { session, json } => {
            let (id, store) = cli::store_for(&sessions, &config.workdir, session.as_deref())?;
            cli::list(&id, &store, *json, &mut out)?;
        }
        ArtifactsAction::Get {
            name,
            session,
            output,
        } => {
            let (_, store) = cli::store_for(&sessions, &config.workdir, session.as_deref())?;
            cli::get(&store, name, output.as_deref(), &mut out)?;
        }
    }
    Ok(())
}
