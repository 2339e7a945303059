//! The agent: one loop that serves every frontend. It owns the conversation, sends it to
//! the model, runs the tool calls the model makes (after applying the approval policy),
//! and reports everything as [`Event`]s. Frontends talk to it only through an
//! [`AgentHandle`]: [`Op`]s in, [`Event`]s out.
//!
//! It must not know about terminals or how events are drawn.

pub mod approval;
mod call;
pub mod compact;
pub mod context;
pub mod conversation;
pub mod delegate;
pub mod endpoint;
mod fit;
pub mod fork;
pub mod hooks;
pub mod hooks_session;
pub mod hooks_turn;
mod images;
pub mod init;
pub mod limits;
mod listings;
pub mod live_sessions;
pub mod mcp_servers;
mod mention_approval;
mod models;
mod nested;
pub mod output_schema;
pub mod plan_mode;
mod rewind;
mod runner;
pub mod saved;
mod shell;
mod skills_reload;
pub mod slash;
mod status;
pub mod turn;

pub use runner::spawn;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::llm::window::{ContextWindow, WindowCache};
use crate::protocol::{Event, Op, SlashCommands};
use crate::skills::active::LoadedSkills;
use crate::tools::{ToolLimits, ToolRegistry};

// The approval mode is a protocol value (config, frontends and the agent share it).
use crate::protocol::ApprovalMode;

/// Who can answer approval requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approver {
    /// A frontend that shows [`Event::ApprovalRequest`] and answers with [`Op::Approval`].
    Frontend,
    /// Nobody (print and pipe modes): calls that need approval are denied at once.
    Nobody,
}

/// The model's context window, shared so that what is learnt while the session runs
/// (from the endpoint, or from a refusal) is used from the next request on.
#[derive(Debug, Clone, Default)]
pub struct SharedWindow(Arc<Mutex<Option<ContextWindow>>>);

impl SharedWindow {
    /// A window known (or not) at start.
    pub fn new(window: Option<ContextWindow>) -> Self {
        SharedWindow(Arc::new(Mutex::new(window)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ContextWindow>> {
        // A plain value is written whole: a poisoned lock still holds a valid one.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The window in tokens, when known.
    pub fn get(&self) -> Option<u64> {
        self.window().map(|w| w.tokens)
    }

    /// The window and where it came from, when known.
    pub fn window(&self) -> Option<ContextWindow> {
        *self.lock()
    }

    /// Replaces the window by what is known of another model (after a switch).
    pub fn replace(&self, window: Option<ContextWindow>) {
        *self.lock() = window.filter(|w| w.tokens > 0);
    }

    /// Sets the window (0 is ignored); returns whether it changed.
    pub fn set(&self, window: ContextWindow) -> bool {
        let mut current = self.lock();
        if window.tokens == 0 || current.is_some_and(|c| c.tokens == window.tokens) {
            return false;
        }
        *current = Some(window);
        true
    }
}

/// Whether the window is still to be learnt from the endpoint: it is asked in the
/// background once the first answer begins to stream (so the questions never compete
/// with the first request), and again after a switch to a model nothing knows the
/// window of. Clones share the state.
#[derive(Debug, Clone)]
pub struct WindowLearning {
    /// The cache of learnt windows.
    cache: WindowCache,
    /// Set when nothing is to be asked (configured, cached, or asked already).
    asked: Arc<std::sync::atomic::AtomicBool>,
    /// The questions in flight, waited for (a short while) when the session ends, so a
    /// `-p` run that answered fast still stores what it learns.
    in_flight: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>>,
}

/// How long the end of a session waits for the window's questions still in flight.
pub const LEARNING_WAIT_AT_END: std::time::Duration = std::time::Duration::from_secs(3);

impl WindowLearning {
    /// Learning from the endpoint, not yet started.
    pub fn from_endpoint(cache: WindowCache) -> Self {
        WindowLearning {
            cache,
            asked: Arc::default(),
            in_flight: Arc::default(),
        }
    }

    /// Nothing to learn now (the window was configured or cached); a switch may rearm it.
    pub fn settled(cache: WindowCache) -> Self {
        WindowLearning {
            cache,
            asked: Arc::new(std::sync::atomic::AtomicBool::new(true)),
            in_flight: Arc::default(),
        }
    }

    /// The cache to learn into, the first time only.
    pub fn start(&self) -> Option<WindowCache> {
        let first = !self.asked.swap(true, std::sync::atomic::Ordering::AcqRel);
        first.then(|| self.cache.clone())
    }

    /// Whether the window is to be learnt again (after a switch).
    pub fn rearm(&self, learn: bool) {
        self.asked
            .store(!learn, std::sync::atomic::Ordering::Release);
    }

    /// The cache of learnt windows.
    pub fn cache(&self) -> &WindowCache {
        &self.cache
    }

    /// Keeps the task asking the endpoint, to be waited for at the end.
    pub fn track(&self, task: tokio::task::JoinHandle<()>) {
        let mut slot = self
            .in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *slot = Some(task);
    }

    /// Waits for the questions in flight, at most `wait`; after that they are dropped
    /// (each is bounded by its own time limit, so this is rarely reached).
    pub async fn settle(&self, wait: std::time::Duration) {
        let task = self
            .in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(wait, task).await;
        }
    }
}

/// The frontend's end of a running agent.
#[derive(Debug)]
pub struct AgentHandle {
    /// Send operations here.
    pub ops: mpsc::UnboundedSender<Op>,
    /// Events arrive here, in order; the channel closes after
    /// [`Event::ShutdownComplete`].
    pub events: mpsc::UnboundedReceiver<Event>,
}

/// What frontends may read about the session besides the event stream: plain data,
/// fixed at start (what changes later arrives as events). No handle into the core.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// Model id at start.
    pub model: String,
    /// The project directory.
    pub workdir: PathBuf,
    /// `$HARNESS9_HOME`.
    pub home: PathBuf,
    /// The approval mode.
    pub approval_mode: ApprovalMode,
    /// The slash commands at start (skills, MCP servers and their known prompts), for
    /// routing and completion; [`Event::SlashCommands`] replaces them when they change.
    pub commands: SlashCommands,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// Warnings from start-up (skills that did not load, config problems). Frontends
    /// show them once.
    pub startup_warnings: Vec<String>,
    /// Whether the model at start takes images, and how large (a frontend turns a
    /// pasted image into text with a note when it takes none).
    pub images: crate::images::ImageIntake,
}

/// The fixed parts of a session, assembled by `session::prepare`.
#[derive(Clone)]
pub struct AgentSetup {
    /// The model client of the provider in use (a switch replaces it).
    pub client: endpoint::SharedClient,
    /// Every provider the session can switch to.
    pub providers: crate::config::providers::ProviderBook,
    /// Model id at start.
    pub model: String,
    /// The system prompt, built once.
    pub system_prompt: String,
    /// The instruction files the system prompt holds (the AGENTS.md chain), for
    /// `/status`.
    pub instruction_files: Vec<PathBuf>,
    /// The instruction files of folders below the working folder, attached to the
    /// result of the first call that works there (`nested.rs`).
    pub nested_instructions: Arc<crate::instructions::nested::Nested>,
    /// The session's tools.
    pub tools: ToolRegistry,
    /// The project directory.
    pub workdir: PathBuf,
    /// The approval policy (mode, who answers, the permission rules); clones share the
    /// rules, so what an answer adds holds for every part of the session.
    pub policy: approval::ApprovalPolicy,
    /// Cap on model requests per turn.
    pub max_turns: u32,
    /// Tool limits.
    pub tool_limits: ToolLimits,
    /// The model's context window, when known (updated as it is learnt).
    pub context_window: SharedWindow,
    /// Whether the window is still to be learnt from the endpoint.
    pub window_learning: WindowLearning,
    /// Skills in the index.
    pub skills_in_index: usize,
    /// The skills index budget in characters (for `/skills`).
    pub index_budget: usize,
    /// The skills catalog (for `/name` invocations); reloads swap it.
    pub catalog: crate::skills::SharedCatalog,
    /// Looks for new, changed and removed skills between turns.
    pub skills_watch: Arc<crate::skills::SkillsWatch>,
    /// Skills loaded in this session; cleared with the conversation.
    pub loaded_skills: LoadedSkills,
    /// Where sessions are saved (`None`: not saved this run).
    pub sessions: Option<Arc<dyn saved::SessionArchive>>,
    /// A new session or a resumed one.
    pub start: saved::SessionStart,
    /// Whether a resumed session's model replaces this one.
    pub model_source: crate::config::ModelSource,
    /// Where the session's reasoning effort came from: `--effort` wins over a resumed
    /// session's.
    pub effort_source: crate::config::ModelSource,
    /// The session's MCP servers.
    pub mcp: crate::mcp::McpServers,
    /// Pictures of the project's files for `/undo` and `/diff` (`None`: not kept).
    pub snapshots: Option<crate::undo::Snapshots>,
    /// The hooks in force (config.toml's; project hooks wait for trust).
    pub hooks: hooks::SessionHooks,
    /// The installed plugins as `/plugins` shows them (what loaded was decided at start).
    pub plugins: crate::protocol::PluginListing,
    /// Where `bash` runs: the session's sandbox (a read-only sub-agent's: the same with
    /// nothing writable).
    pub commands: crate::exec::Confinement,
    /// How many `agent` calls of one response run at once (`max_parallel_agents`).
    pub max_parallel_agents: usize,
    /// Approval questions wait here for their turn: one is shown at a time.
    pub approval_queue: delegate::ApprovalQueue,
    /// The run's hard limits (`--timeout`, `--max-cost`), shared with sub-agents.
    pub limits: Arc<limits::RunLimits>,
    /// `--output-schema`: what the main conversation's final answers must be.
    pub output_schema: Option<Arc<output_schema::OutputSchema>>,
    /// Where the file tools read and write: the disk, or the editor the session runs
    /// in (set by that frontend before the session starts).
    pub files: crate::tools::files::FileAccess,
}
