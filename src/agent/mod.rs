//! The agent: one loop that serves every frontend. It owns the conversation, sends it to
//! the model, runs the tool calls the model makes (after applying the approval policy),
//! and reports everything as [`Event`]s. Frontends talk to it only through an
//! [`AgentHandle`]: [`Op`]s in, [`Event`]s out.
//!
//! It must not know about terminals or how events are drawn.

pub mod approval;
mod call;
pub mod compact;
pub mod conversation;
pub mod fork;
mod runner;
pub mod saved;
pub mod slash;
pub mod turn;

pub use runner::spawn;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;

use crate::protocol::{Event, Op};
use crate::skills::Catalog;
use crate::skills::active::LoadedSkills;
use crate::tools::{ToolLimits, ToolRegistry};

// The approval mode is a protocol value (config, frontends and the agent share it).
pub use crate::protocol::ApprovalMode;

/// Who can answer approval requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approver {
    /// A frontend that shows [`Event::ApprovalRequest`] and answers with [`Op::Approval`].
    Frontend,
    /// Nobody (print and pipe modes): calls that need approval are denied at once.
    Nobody,
}

/// The model's context window in tokens, shared so that what is learnt while the
/// session runs (from the endpoint, or from a refusal) is used from the next request on.
#[derive(Debug, Clone, Default)]
pub struct SharedWindow(Arc<AtomicU64>);

impl SharedWindow {
    /// A window known (or not) at start.
    pub fn new(tokens: Option<u64>) -> Self {
        SharedWindow(Arc::new(AtomicU64::new(tokens.unwrap_or(0))))
    }

    /// The window, when known.
    pub fn get(&self) -> Option<u64> {
        Some(self.0.load(Ordering::Relaxed)).filter(|t| *t > 0)
    }

    /// Sets the window (0 is ignored).
    pub fn set(&self, tokens: u64) {
        if tokens > 0 {
            self.0.store(tokens, Ordering::Relaxed);
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

/// What frontends may read about the session besides the event stream.
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
    /// The skills catalog (for completion, `/skills`, slash commands).
    pub catalog: Arc<Catalog>,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// Warnings from start-up (skills that did not load, config problems). Frontends
    /// show them once.
    pub startup_warnings: Vec<String>,
    /// The skills index budget in characters (for `/skills`).
    pub index_budget: usize,
    /// Skills loaded in this session (for `/skills` to mark them).
    pub loaded_skills: LoadedSkills,
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
    /// The session's tools.
    pub tools: ToolRegistry,
    /// The project directory.
    pub workdir: PathBuf,
    /// Approval mode.
    pub approval_mode: ApprovalMode,
    /// Who answers approval requests.
    pub approver: Approver,
    /// Cap on model requests per turn.
    pub max_turns: u32,
    /// Tool limits.
    pub tool_limits: ToolLimits,
    /// The model's context window, when known (updated as it is learnt).
    pub context_window: SharedWindow,
    /// Skills in the index.
    pub skills_in_index: usize,
    /// The skills catalog (for `/name` invocations).
    pub catalog: Arc<Catalog>,
    /// Skills loaded in this session; cleared with the conversation.
    pub loaded_skills: LoadedSkills,
    /// Where sessions are saved (`None`: not saved this run).
    pub sessions: Option<Arc<dyn saved::SessionStore>>,
    /// A new session or a resumed one.
    pub start: saved::SessionStart,
    /// Whether a resumed session's model replaces this one.
    pub model_source: saved::ModelSource,
}
