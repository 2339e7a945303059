//! The session's side of hooks beyond a tool call: which hooks are in force when a
//! session starts (config.toml's, then the project's this user trusted as they stand,
//! `crate::hooks::ProjectHooks`) and what `/hooks` lists.
//!
//! It must not know how hooks are read, trusted or run inside (`crate::hooks`), or how
//! events are drawn.

use crate::agent::AgentSetup;
use crate::config::Config;
use crate::hooks::HookSet;
use crate::protocol::{Event, HookListing};

/// The hooks in force for a session started with `config`: config.toml's first, then
/// the project's trusted ones; untrusted project hooks never run.
pub fn in_force(config: &Config) -> HookSet {
    let mut set = config.user_hooks.clone();
    set.extend(config.project_hooks.in_force());
    set
}

/// Every configured hook with its standing, for `/hooks` and `harness9 hooks list`.
pub fn listing(config: &Config) -> HookListing {
    config.project_hooks.listing(&config.user_hooks)
}

/// `/hooks`: the listing made when the session started (trust given later takes effect
/// in the next session, and the listing says what is in force in this one).
pub fn hook_list(setup: &AgentSetup) -> Event {
    Event::HookList(setup.hooks.listing().clone())
}
