//! The terminal frontend: a ratatui TUI over the agent loop, inline by default.
//!
//! Finished conversation cells go into the terminal's own scrollback (native scrolling,
//! search and mouse selection keep working); only the live area (the answer being
//! streamed, running tools, the composer and the status line) is redrawn, by diff, and
//! only when something happened. `--alt-screen` gives a full-screen mode instead.
//!
//! Layout of the module: `app` is the state machine (events and keys in; ops, finished
//! lines and a drawing out) and needs no terminal; `event_loop` feeds it; `screen`
//! places the live area and inserts history; `terminal` turns terminal modes on and
//! always off again. Cells (`cells`, `markdown`, `highlight`), the `composer`,
//! the slash `popup`, the `approval` questions, the session `picker` and the `status`
//! line draw themselves; `overlay` holds what sits on top of the composer and the one
//! order in which it is seen; `resume` turns a resumed session into cells.
//!
//! Like every frontend it talks to the agent only through [`Op`](crate::protocol::Op)s
//! and [`Event`](crate::protocol::Event)s, and routes input with [`crate::input`].

mod app;
#[cfg(test)]
mod app_habit_tests;
#[cfg(test)]
mod app_hook_tests;
#[cfg(test)]
mod app_tests;
mod approval;
#[cfg(test)]
mod bench_tests;
mod cells;
mod composer;
mod event_loop;
mod highlight;
mod history_search;
mod hooks_view;
mod image_paste;
mod markdown;
mod mention_popup;
mod overlay;
mod pastes;
mod picker;
mod plan_view;
mod popup;
mod resume;
mod rewind;
mod screen;
mod skill_run_cell;
mod status;
mod stream;
mod table;
mod terminal;
#[cfg(test)]
mod test_support;
mod transcript;
mod transcript_view;
mod views;
mod wrap;

use crate::agent::{AgentHandle, SessionInfo};
use crate::protocol::Usage;

/// Where the TUI draws.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ScreenMode {
    /// A live area at the bottom of the normal screen; history in the scrollback.
    #[default]
    Inline,
    /// The whole alternate screen (`--alt-screen`); history scrolls with PageUp/PageDown.
    AltScreen,
}

/// How the TUI runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TuiOptions {
    /// Inline (default) or alternate screen.
    pub screen: ScreenMode,
    /// What the TUI shows first.
    pub start: StartView,
    /// The command line's prompt (`harness9 "fix the bug"`): sent first, as if typed.
    pub first_prompt: Option<String>,
}

/// What the TUI shows first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartView {
    /// The conversation (new or resumed).
    #[default]
    Conversation,
    /// The picker of this project's saved sessions (`--resume` without an id).
    ResumePicker,
}

/// Why the TUI stopped other than by the user leaving.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// Reading from or writing to the terminal failed.
    #[error("terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// The agent's channels closed before it said it had shut down.
    #[error("the agent stopped unexpectedly")]
    AgentGone,
    /// A signal ended the session (the terminal was restored first).
    #[error("terminated by {signal}")]
    Signal {
        /// Which one.
        signal: EndingSignal,
    },
}

/// The signals that end the TUI (after restoring the terminal).
use crate::signals::EndingSignal;

/// Runs the TUI over a started agent until the user leaves; returns the session's token
/// usage (for main to print). The terminal is restored on every way out.
pub async fn run(
    handle: AgentHandle,
    info: SessionInfo,
    options: TuiOptions,
) -> Result<Usage, TuiError> {
    event_loop::run(handle, info, options).await
}
