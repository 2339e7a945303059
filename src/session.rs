//! Session assembly: from a resolved [`Config`] to everything a frontend needs to start
//! the agent (skills discovery, the system prompt, the tool registry, the model client)
//! and what it may show besides events ([`SessionInfo`]).
//!
//! This is the one place that wires the core's parts together. It must not know about
//! terminals or how a frontend draws.

use std::path::Path;
use std::sync::Arc;

use crate::agent::approval::{ApprovalPolicy, CommandSandbox};
use crate::agent::live_sessions::LiveSessions;
use crate::agent::saved::SessionStart;
use crate::agent::{self, AgentHandle, AgentSetup, Approver, SessionInfo, WindowLearning};
use crate::config::{Config, SessionSaving};
use crate::llm::window::{self, ContextWindow, WindowCache};
use crate::llm::{Client, LlmError};
use crate::protocol::WindowSource;
use crate::skills::active::LoadedSkills;
use crate::skills::remote::{self, RemoteLimits, RemoteRoots};
use crate::skills::{Catalog, DiscoveryOptions};
use crate::tools::ToolRegistryBuilder;
use crate::tools::skill::docs::{SkillListDocs, SkillSelectDocs};
use crate::tools::skill::unload_skill::UnloadSkill;
use crate::tools::skill::use_skill::{Listed, UseSkill};
use crate::tools::skill_run::SkillRun;
use crate::tools::web_fetch::WebFetch;
use crate::tools::web_search::WebSearch;

/// Where to look for skills, from the config.
pub fn discovery_options(config: &Config) -> DiscoveryOptions {
    DiscoveryOptions {
        flag_dirs: config.skills_dirs.clone(),
        workdir: config.workdir.clone(),
        project_root: config.project_root.clone(),
        harness9_home: config.home.clone(),
        user_home: config.user_home.clone(),
        remote_dirs: Vec::new(),
        plugins: config.plugins.skill_dirs.clone(),
    }
}

/// Where to look for agent definitions, from the config.
pub fn agent_places(config: &Config) -> crate::agents::Places {
    crate::agents::Places {
        workdir: config.workdir.clone(),
        project_root: config.project_root.clone(),
        harness9_home: config.home.clone(),
        user_home: config.user_home.clone(),
        // Each trusted plugin's `agents/` folder (untrusted plugins bring nothing).
        extra_roots: config
            .plugins
            .agent_roots()
            .iter()
            .map(|(_, dir)| dir.clone())
            .collect(),
    }
}

/// Where to look for skills, from the config and the synced remote root.
pub fn discovery_options_with_remote(config: &Config, remote: &RemoteRoots) -> DiscoveryOptions {
    DiscoveryOptions {
        remote_dirs: remote.dirs.clone(),
        ..discovery_options(config)
    }
}

/// Syncs the remote skills root the config names, if any: downloads or refreshes its
/// cache. Never fails: problems become warnings (see [`remote::sync_for_session`]).
pub async fn sync_remote_skills(config: &Config) -> RemoteRoots {
    remote::sync_for_session(
        config.remote_skills_root.as_deref(),
        &config.skills_cache_dir,
        &RemoteLimits::default(),
    )
    .await
}

/// The log file in the harness9 home (`logs/harness9.log`), opened for appending; the
/// folders are created. Opening it is also how a run learns whether the home can be
/// written at all, at no extra cost (see [`unwritable_home_warning`]).
pub fn open_log_file(home: &Path) -> std::io::Result<std::fs::File> {
    crate::private_files::open_private_log(&home.join("logs").join("harness9.log"))
}

/// The start-up warning for a harness9 home that cannot be written (`error` is why).
pub fn unwritable_home_warning(home: &Path, error: &std::io::Error) -> String {
    format!(
        "cannot write to {} ({error}): history, logs and caches are not saved this run; \
         set HARNESS9_HOME to a writable directory",
        home.display()
    )
}

/// Discovers the skills the config points at.
pub fn discover_skills(config: &Config) -> Catalog {
    Catalog::discover(&discovery_options(config))
}

/// The context window start-up knows without the network: config.toml, else the cache
/// of learned windows, else the built-in table (see [`window::initial`]).
pub fn initial_context_window(config: &Config) -> Option<ContextWindow> {
    window::initial(
        config.context_window,
        &WindowCache::new(config.context_window_cache.clone()),
        &config.provider.base_url,
        &config.model,
    )
}

/// The index budget in characters for this config.
pub fn index_budget(config: &Config) -> usize {
    index_budget_for(config, initial_context_window(config))
}

fn index_budget_for(config: &Config, window: Option<ContextWindow>) -> usize {
    crate::skills::index_budget(window.map(|w| w.tokens), config.skills_index_budget)
}

/// The session's instruction files (the AGENTS.md chain), read and fitted to the cap.
pub fn load_instructions(config: &Config) -> crate::instructions::Instructions {
    crate::instructions::load(crate::instructions::Places {
        harness9_home: &config.home,
        user_home: config.user_home.as_deref(),
        root: &config.project_root,
        workdir: &config.workdir,
        max_bytes: config.instructions_max_bytes,
    })
}

/// A session ready to start.
pub struct Prepared {
    /// The agent's fixed parts.
    pub setup: AgentSetup,
    /// What frontends may show.
    pub info: SessionInfo,
}

impl Prepared {
    /// Starts the agent on the current tokio runtime.
    pub fn spawn(self) -> (AgentHandle, SessionInfo) {
        (agent::spawn(self.setup), self.info)
    }
}

/// Builds a new session: discovers skills, builds the prompt once, registers tools.
pub fn prepare(config: &Config, approver: Approver) -> Result<Prepared, LlmError> {
    prepare_with_remote(config, approver, RemoteRoots::default(), SessionStart::New)
}

/// The saved sessions of this run's project, unless saving is off.
pub fn live_sessions(config: &Config) -> Option<LiveSessions> {
    match config.session_saving {
        SessionSaving::Enabled => Some(LiveSessions::new(
            &config.home,
            &config.workdir,
            &config.provider.base_url,
            config.sessions_max_bytes,
        )),
        SessionSaving::Disabled => None,
    }
}

/// [`prepare`], also searching the remote root synced by [`sync_remote_skills`] (its
/// warnings come first among the start-up warnings).
pub fn prepare_with_remote(
    config: &Config,
    approver: Approver,
    remote: RemoteRoots,
    start: SessionStart,
) -> Result<Prepared, LlmError> {
    let discovery = discovery_options_with_remote(config, &remote);
    let catalog = Arc::new(Catalog::discover(&discovery));
    let shared_catalog = crate::skills::SharedCatalog::from(Arc::clone(&catalog));
    let skills_watch = Arc::new(crate::skills::SkillsWatch::new(
        shared_catalog.clone(),
        discovery,
    ));
    let mut warnings = config.warnings.clone();
    warnings.extend(crate::sandbox::startup_warning());
    warnings.extend(remote.warnings);
    warnings.extend(catalog.warnings().iter().map(ToString::to_string));
    let context_window = initial_context_window(config);
    let index_budget = index_budget_for(config, context_window);
    let index = catalog.index(index_budget);
    if let Some(warning) = index.warning() {
        warnings.push(warning);
    }
    let mcp = mcp_servers(config);
    let mcp_section = crate::mcp::index::section(&mcp);
    // Agent definitions: without any beyond the built-ins there is no section (and no
    // `agent` tool), so such a session's first request is what it was before them.
    let agents = Arc::new(crate::agents::AgentCatalog::discover(&agent_places(config)));
    warnings.extend(agents.warnings().iter().map(ToString::to_string));
    let agents_index = agents.index(index_budget);
    warnings.extend(agents_index.warning());
    let parts: Vec<&str> = [
        index.text.as_deref(),
        mcp_section.as_deref(),
        agents_index.text.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let sections = (!parts.is_empty()).then(|| parts.join("\n\n"));
    let instructions = load_instructions(config);
    warnings.extend(instructions.warnings.iter().cloned());
    let system_prompt = crate::prompt::build(
        crate::prompt::Folders {
            workdir: &config.workdir,
            root: &config.project_root,
        },
        instructions.section().as_deref(),
        config.run.append_system_prompt.as_deref(),
        sections.as_deref(),
    );

    let policy = ApprovalPolicy::new(config.approval_mode, approver, config.permissions.clone())
        .with_sandbox(CommandSandbox::of_session())
        .with_plan_places(crate::agent::plan_mode::PlanPlaces::new(
            &config.project_root,
            &config.home,
        ));
    let mut tools = ToolRegistryBuilder::with_builtins();
    tools.register(Arc::new(WebFetch::new(config.web_fetch)));
    if let Some(backend) = &config.web_search {
        tools.register(Arc::new(WebSearch::new(backend.clone())));
    }
    // Skills loaded in this session (by use_skill or a slash command), shared by the
    // use_skill tool and the agent (which clears it on /clear).
    let loaded_skills = LoadedSkills::default();
    // The active set knows the registry's skill tools, so unloading a skill (or all of
    // them, for a new conversation) removes its tools too, however it was loaded.
    loaded_skills.attach_tools(Arc::new(tools.loaded().clone()));
    let skills_in_index = if index.text.is_some() || mcp_section.is_some() {
        // use_skill loads skills' tools.json tools into the registry's shared loaded set
        // (which learns every fixed tool's name when the registry is frozen below);
        // unload_skill removes them; the docs tools share the selection in loaded_skills.
        // With servers alone in the index, the two tools say nothing of skills.
        let listed = match index.text {
            Some(_) => Listed::Skills,
            None => Listed::ServersOnly,
        };
        let use_skill = UseSkill::with_loaded(shared_catalog.clone(), loaded_skills.clone())
            .with_tools(tools.loaded().clone())
            .with_inline_shell(crate::agent::slash::inline_permission(&policy))
            .with_servers(Arc::new(mcp.clone()))
            .listing(listed);
        tools.register(Arc::new(use_skill));
        tools.register(Arc::new(
            UnloadSkill::new(loaded_skills.clone()).listing(listed),
        ));
        // Documents are skills' only: with MCP servers alone they would do nothing.
        if index.text.is_some() {
            tools.register(Arc::new(SkillListDocs::new(
                shared_catalog.clone(),
                loaded_skills.clone(),
            )));
            tools.register(Arc::new(SkillSelectDocs::new(
                shared_catalog.clone(),
                loaded_skills.clone(),
            )));
        }
        catalog
            .skills()
            .iter()
            .filter(|s| s.model_invocable())
            .count()
    } else {
        0
    };
    if !catalog.is_empty() {
        tools.register(Arc::new(SkillRun::new(
            shared_catalog.clone(),
            config.skill_run_commands.clone(),
        )));
    }
    // The `agent` tool comes with the agents index: only when definitions exist beyond
    // the built-ins (then `explore` and `general` are offered too).
    if agents_index.text.is_some() {
        tools.register(Arc::new(crate::tools::agent_tool::AgentTool::new(
            Arc::clone(&agents),
            shared_catalog.clone(),
        )));
    }
    let client = Client::new(config.provider.clone())?;
    let start_prices = config
        .providers
        .endpoint(&config.provider_id)
        .map_or_else(|| config.prices.clone(), |e| e.prices.clone());
    let setup = AgentSetup {
        client: agent::endpoint::SharedClient::new(
            config.provider_id.clone(),
            client,
            start_prices,
        ),
        providers: config.providers.clone(),
        model: config.model.clone(),
        system_prompt,
        instruction_files: instructions.files.iter().map(|f| f.path.clone()).collect(),
        nested_instructions: Arc::new(crate::instructions::nested::Nested::new(
            &config.project_root,
            &config.workdir,
            &instructions,
        )),
        tools: tools.freeze(),
        workdir: config.workdir.clone(),
        policy,
        max_turns: config.max_turns,
        tool_limits: config.tool_limits,
        context_window: agent::SharedWindow::new(context_window),
        window_learning: match context_window.map(|w| w.source) {
            Some(WindowSource::Config | WindowSource::Cache) => {
                WindowLearning::settled(WindowCache::new(config.context_window_cache.clone()))
            }
            _ => {
                WindowLearning::from_endpoint(WindowCache::new(config.context_window_cache.clone()))
            }
        },
        skills_in_index,
        index_budget,
        catalog: shared_catalog.clone(),
        skills_watch,
        loaded_skills,
        sessions: live_sessions(config)
            .map(|s| Arc::new(s) as Arc<dyn agent::saved::SessionArchive>),
        start,
        model_source: config.model_source,
        effort_source: config.effort_source,
        mcp: mcp.clone(),
        snapshots: Some(crate::undo::Snapshots::new(
            &config.workdir,
            &config.home.join("snapshots"),
        )),
        // config.toml's hooks, then the project's the user trusted as they are now.
        hooks: agent::hooks::SessionHooks::new(
            crate::agent::hooks_session::in_force(config),
            crate::hooks::RunContext {
                project_dir: config.project_root.clone(),
                cwd: config.workdir.clone(),
                confinement: crate::exec::Confinement::SessionSandbox,
            },
        )
        .with_listing(crate::agent::hooks_session::listing(config)),
        plugins: config.plugins.listing(),
        commands: crate::exec::Confinement::SessionSandbox,
        max_parallel_agents: config.max_parallel_agents,
        approval_queue: Default::default(),
        limits: Arc::new(crate::agent::limits::RunLimits::new(
            config.run.timeout,
            config.run.max_cost,
        )),
        output_schema: None,
        files: crate::tools::files::FileAccess::Disk,
    };
    let info = SessionInfo {
        model: config.provider_id.qualify(&config.model),
        workdir: config.workdir.clone(),
        home: config.home.clone(),
        approval_mode: config.approval_mode,
        commands: setup.slash_commands(),
        context_window: context_window.map(|w| w.tokens),
        startup_warnings: warnings,
        images: setup.image_intake(),
    };
    Ok(Prepared { setup, info })
}

/// The session's MCP servers: nothing starts here (servers start when loaded, or in
/// the background once the agent runs when preloaded).
pub fn mcp_servers(config: &Config) -> crate::mcp::McpServers {
    // A server with `sandbox = true` is confined even when commands are not.
    let wants_sandbox = config.mcp.usable().any(|s| {
        matches!(
            s.transport,
            crate::mcp::config::McpTransport::Stdio {
                sandbox: crate::mcp::config::ServerSandbox::Session,
                ..
            }
        )
    });
    let sandbox = wants_sandbox.then(|| {
        let s = crate::sandbox::for_servers(&config.sandbox, &config.workdir, &config.project_root);
        (s.policy, s.launcher)
    });
    crate::mcp::McpServers::new(
        config.mcp.clone(),
        crate::mcp::ConnectContext {
            project: config.project_root.clone(),
            log_dir: config.home.join("logs").join("mcp"),
            sandbox,
            user_home: config.user_home.clone(),
            env: crate::exec::secrets::original_var,
        },
        crate::mcp::cache::IndexCache::new(config.home.join("cache").join("mcp-servers.json")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_file_is_created_in_a_writable_home() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        assert!(open_log_file(&home).is_ok());
        assert!(home.join("logs/harness9.log").is_file());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_unwritable_home_is_one_warning_saying_what_is_lost() {
        // Nobody, not even root, can create a directory in /proc.
        let home = Path::new("/proc/harness9-test-home");
        let error = open_log_file(home).unwrap_err();
        let warning = unwritable_home_warning(home, &error);
        assert!(warning.contains("/proc/harness9-test-home"), "{warning}");
        assert!(
            warning.contains("history, logs and caches are not saved"),
            "{warning}"
        );
    }
}
