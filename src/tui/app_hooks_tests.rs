//! Tests of `/hooks` in the app state machine: the listing comes from the agent
//! (`Op::ListHooks` → `Event::HookList`) and is drawn grouped by event, with each hook's
//! standing, role and file; hostile text from a hook file is drawn inert.

use super::*;
use crate::protocol::{
    HookEntry, HookListing, HookOrigin, HookRole, HookStanding, InForceBecause, NotInForceBecause,
};

fn hook(
    event: &str,
    command: &str,
    origin: &str,
    role: HookRole,
    standing: HookStanding,
) -> HookEntry {
    HookEntry {
        event: event.into(),
        matcher: "Bash".into(),
        command: command.into(),
        origin: PathBuf::from(origin),
        origin_kind: HookOrigin::ClaudeSettings,
        role,
        standing,
    }
}

fn listing() -> HookListing {
    HookListing {
        hooks: vec![
            hook(
                "PreToolUse",
                "/opt/hooks/no-rm.sh",
                "/home/u/.harness9/config.toml",
                HookRole::Guard,
                HookStanding::InForce(InForceBecause::UserConfig),
            ),
            hook(
                "PreToolUse",
                "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh",
                "/p/.claude/settings.json",
                HookRole::Plain,
                HookStanding::NotInForce(NotInForceBecause::ChangedSinceTrust),
            ),
            hook(
                "Stop",
                "echo done",
                "/p/.harness9/hooks.toml",
                HookRole::Plain,
                HookStanding::InForce(InForceBecause::Trusted),
            ),
        ],
        problems: Vec::new(),
    }
}

#[test]
fn hooks_are_listed_by_event_with_standing_role_and_file() {
    let mut h = Harness::new();
    h.submit("/hooks");
    assert_eq!(h.ops(), vec![Op::ListHooks], "/hooks asks the agent");
    h.event(Event::HookList(listing()));
    assert_snapshot!("hooks", h.screen(100, 18));
}

#[test]
fn a_hook_files_control_characters_are_drawn_inert() {
    let mut h = Harness::new();
    h.submit("/hooks");
    let mut hostile = listing();
    hostile.hooks[0].command = "echo \u{1b}]0;pwned\u{7} \u{9b}2J".into();
    hostile.problems = vec!["/p/x.json: \u{1b}[31mred".into()];
    h.event(Event::HookList(hostile));
    let screen = h.screen(100, 20);
    assert!(
        !screen.contains('\u{1b}') && !screen.contains('\u{9b}'),
        "{screen:?}"
    );
    assert!(screen.contains("pwned"), "{screen}");
}
