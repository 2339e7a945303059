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
mod fit;
pub mod fork;
mod listings;
pub mod live_sessions;
pub mod mcp_servers;
mod mention_approval;
mod models;
mod nested;
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

/// Whether the window is learnt from the endpoint while the session runs.
#[derive(Debug, Clone)]
pub enum WindowLearning {
    /// It was configured, or learnt recently (cached): nothing to ask.
    Settled,
    /// Ask the endpoint in the background, once the first answer begins to stream (so the
    /// questions never compete with the first request), and remember the answer here.
    FromEndpoint {
        /// The cache of learnt windows.
        cache: WindowCache,
        /// Set when the questions have been asked (clones share it).
        asked: Arc<std::sync::atomic::AtomicBool>,
    },
}

impl WindowLearning {
    /// Learning from this endpoint, not yet started.
    pub fn from_endpoint(cache: WindowCache) -> Self {
        WindowLearning::FromEndpoint {
            cache,
            asked: Arc::default(),
        }
    }

    /// The cache to learn into, the first time only.
    pub fn start(&self) -> Option<WindowCache> {
        match self {
            WindowLearning::Settled => None,
            WindowLearning::FromEndpoint { cache, asked } => {
                let first = !asked.swap(true, std::sync::atomic::Ordering::Relaxed);
                first.then(|| cache.clone())
            }
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
}

/// The fixed parts of a session, assembled by `session::prepare`.
#[derive(Clone)]
pub struct AgentSetup {
    /// The model client.
    pub client: Arc<crate::llm::Client>,
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
    /// The session's MCP servers.
    pub mcp: crate::mcp::McpServers,
    /// Prices per model, for the cost of each request.
    pub prices: crate::cost::PriceTable,
    /// Pictures of the project's files for `/undo` and `/diff` (`None`: not kept).
    pub snapshots: Option<crate::undo::Snapshots>,
}
