//! Skills that changed while the session runs, from the agent's side: before each turn
//! (and on `/skills reload`) the watch discovers again off the async threads; a skill
//! that is gone is unloaded with its tools; the frontend hears of it through
//! [`Event::SkillsReloaded`] (and gets its new slash commands, [`Event::SlashCommands`]),
//! and the model through the note the watch keeps for its next message. The system
//! prompt is never rebuilt. It knows the agent's state; how changes are found is
//! [`crate::skills::SkillsWatch`]'s.

use std::sync::Arc;

use super::turn::{SessionState, TurnContext};
use crate::protocol::{Event, ReloadTrigger};

/// Looks at the skills again and reports; before a turn, only when something changed
/// (and not in the first seconds of the session, when the skills were just found).
pub async fn check(state: &mut SessionState, ctx: &TurnContext, trigger: ReloadTrigger) {
    if trigger == ReloadTrigger::BeforeTurn && !ctx.setup.skills_watch.due() {
        return;
    }
    let watch = Arc::clone(&ctx.setup.skills_watch);
    let Ok((changes, warnings)) = tokio::task::spawn_blocking(move || watch.check()).await else {
        return;
    };
    if trigger == ReloadTrigger::BeforeTurn && changes.is_empty() && warnings.is_empty() {
        return;
    }
    let loaded = &ctx.setup.loaded_skills;
    let mut unloaded = false;
    for name in &changes.removed {
        if loaded.contains(name) {
            loaded.unload(name);
            unloaded = true;
        }
    }
    if unloaded {
        state.conversation.sync_skills(&loaded.names());
    }
    // The catalog was swapped: the frontend's slash commands follow it, first, so that
    // a frontend waiting for the reload routes its next line with them.
    if !changes.is_empty() {
        ctx.emit(Event::SlashCommands(ctx.setup.slash_commands()));
    }
    ctx.emit(Event::SkillsReloaded {
        skills: ctx.setup.catalog.current().skills().len(),
        changes,
        warnings,
        trigger,
    });
}
