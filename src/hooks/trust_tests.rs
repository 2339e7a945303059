//! Tests of trusting the project's hooks by content: what changes behind the user's
//! back (command, matcher, a new hook, a script it names, a file replaced by a link)
//! is out of force until trusted again; concurrent trusts keep each other's entries.

use std::path::Path;

use super::*;
use crate::hooks::Target;
use crate::protocol::{HookStanding, InForceBecause, NotInForceBecause};

const TWO: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "echo one", "on_error": "deny"},
    {"type": "command", "command": "echo two"}]}]}}"#;

fn project(dir: &Path, settings: &str) -> std::path::PathBuf {
    let root = dir.join("proj");
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), settings).unwrap();
    root
}

fn in_force_commands(hooks: &ProjectHooks) -> Vec<String> {
    hooks
        .in_force()
        .select(Event::PreToolUse, Target::Tool { name: "bash" })
        .iter()
        .map(|s| s.hook.command.clone())
        .collect()
}

fn standings(hooks: &ProjectHooks) -> Vec<HookStanding> {
    hooks
        .listing(&HookSet::new())
        .hooks
        .iter()
        .map(|h| h.standing)
        .collect()
}

#[test]
fn nothing_of_a_project_is_in_force_until_trusted_then_all_of_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = project(dir.path(), TWO);
    let before = ProjectHooks::load(&root, &home);
    assert_eq!(before.hooks.len(), 2);
    assert!(in_force_commands(&before).is_empty());
    assert_eq!(before.not_in_force(), 2);
    assert_eq!(
        standings(&before),
        vec![HookStanding::NotInForce(NotInForceBecause::NotTrusted); 2]
    );
    assert_eq!(trust(&home, &before).unwrap(), 2);
    let after = ProjectHooks::load(&root, &home);
    assert_eq!(in_force_commands(&after), ["echo one", "echo two"]);
    assert_eq!(after.not_in_force(), 0);
    assert_eq!(
        standings(&after),
        vec![HookStanding::InForce(InForceBecause::Trusted); 2]
    );
    // The guard stays a guard once in force.
    let set = after.in_force();
    let chosen = set.select(Event::PreToolUse, Target::Tool { name: "Bash" });
    assert_eq!(chosen[0].hook.on_error, OnError::Deny);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join(TRUST_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the trust list is private: {mode:o}");
    }
}

#[test]
fn every_change_behind_the_users_back_is_out_of_force_and_the_rest_stays() {
    let changes = [
        // command changed
        (TWO.replace("echo two", "echo two; curl evil"), 1),
        // matcher changed: both hooks under it
        (
            TWO.replace(r#""matcher": "Bash""#, r#""matcher": "Bash|Edit""#),
            2,
        ),
        // timeout changed
        (
            TWO.replace(
                r#""command": "echo two""#,
                r#""command": "echo two", "timeout": 5"#,
            ),
            1,
        ),
        // guard turned into a plain hook
        (
            TWO.replace(r#""on_error": "deny""#, r#""on_error": "continue""#),
            1,
        ),
    ];
    for (changed, out_of_force) in changes {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let root = project(dir.path(), TWO);
        trust(&home, &ProjectHooks::load(&root, &home)).unwrap();
        std::fs::write(root.join(".claude/settings.json"), &changed).unwrap();
        let now = ProjectHooks::load(&root, &home);
        assert_eq!(now.not_in_force(), out_of_force, "{changed}");
        let listing = now.listing(&HookSet::new());
        let out: Vec<_> = listing
            .hooks
            .iter()
            .filter(|h| {
                h.standing == HookStanding::NotInForce(NotInForceBecause::ChangedSinceTrust)
            })
            .collect();
        assert_eq!(out.len(), out_of_force, "{changed}");
    }
}

#[test]
fn a_hook_added_in_another_file_or_event_is_not_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = project(dir.path(), TWO);
    trust(&home, &ProjectHooks::load(&root, &home)).unwrap();
    std::fs::create_dir_all(root.join(".harness9")).unwrap();
    std::fs::write(
        root.join(".harness9/hooks.toml"),
        "[[PreToolUse]]\nmatcher = \"Bash\"\n[[PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"echo three\"\n",
    )
    .unwrap();
    // The same command moved to another file is another hook.
    std::fs::write(
        root.join(".claude/settings.local.json"),
        TWO.replace("echo two", "echo four"),
    )
    .unwrap();
    let now = ProjectHooks::load(&root, &home);
    assert_eq!(in_force_commands(&now), ["echo one", "echo two"]);
    assert_eq!(now.not_in_force(), 3, "three, and both of local settings");
}

#[test]
fn a_script_the_hook_names_in_the_project_is_part_of_what_is_trusted() {
    for command in [
        r#"\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"#,
        "${HARNESS9_PROJECT_DIR}/.claude/hooks/guard.sh --strict",
        "bash .claude/hooks/guard.sh",
        "./.claude/hooks/guard.sh && true",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let settings = format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{command}"}}]}}]}}}}"#
        );
        let root = project(dir.path(), &settings);
        std::fs::create_dir_all(root.join(".claude/hooks")).unwrap();
        std::fs::write(root.join(".claude/hooks/guard.sh"), "exit 0\n").unwrap();
        trust(&home, &ProjectHooks::load(&root, &home)).unwrap();
        assert_eq!(
            ProjectHooks::load(&root, &home).not_in_force(),
            0,
            "{command}"
        );
        std::fs::write(root.join(".claude/hooks/guard.sh"), "curl evil\n").unwrap();
        assert_eq!(
            ProjectHooks::load(&root, &home).not_in_force(),
            1,
            "{command}"
        );
        // Swapping the script for a link to the trusted content is a change too.
        std::fs::write(dir.path().join("copy.sh"), "exit 0\n").unwrap();
        std::fs::remove_file(root.join(".claude/hooks/guard.sh")).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("copy.sh"),
            root.join(".claude/hooks/guard.sh"),
        )
        .unwrap();
        assert_eq!(
            ProjectHooks::load(&root, &home).not_in_force(),
            1,
            "{command}"
        );
    }
}

#[test]
fn a_hook_file_replaced_by_a_link_puts_nothing_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = project(dir.path(), TWO);
    trust(&home, &ProjectHooks::load(&root, &home)).unwrap();
    // The very same content, now behind a link (and a linked folder).
    std::fs::write(dir.path().join("elsewhere.json"), TWO).unwrap();
    std::fs::remove_file(root.join(".claude/settings.json")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.json"),
        root.join(".claude/settings.json"),
    )
    .unwrap();
    let now = ProjectHooks::load(&root, &home);
    assert!(now.in_force().is_empty());
    assert!(
        now.problems.iter().any(|p| p.contains("settings.json")),
        "{:?}",
        now.problems
    );
    std::fs::remove_file(root.join(".claude/settings.json")).unwrap();
    std::fs::remove_dir(root.join(".claude")).unwrap();
    std::fs::create_dir_all(dir.path().join("other/.claude")).unwrap();
    std::fs::write(dir.path().join("other/.claude/settings.json"), TWO).unwrap();
    std::os::unix::fs::symlink(dir.path().join("other/.claude"), root.join(".claude")).unwrap();
    assert!(ProjectHooks::load(&root, &home).in_force().is_empty());
}

#[test]
fn trust_is_per_project_and_untrust_forgets_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let a = project(&dir.path().join("a"), TWO);
    let b = project(&dir.path().join("b"), TWO);
    trust(&home, &ProjectHooks::load(&a, &home)).unwrap();
    assert_eq!(ProjectHooks::load(&b, &home).not_in_force(), 2);
    assert_eq!(ProjectHooks::load(&a, &home).not_in_force(), 0);
    assert!(untrust(&home, &a).unwrap());
    assert_eq!(ProjectHooks::load(&a, &home).not_in_force(), 2);
    assert!(!untrust(&home, &a).unwrap());
}

#[test]
fn what_is_trusted_is_what_was_loaded_not_what_the_file_says_at_the_time_of_writing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = project(dir.path(), TWO);
    let shown = ProjectHooks::load(&root, &home);
    // The file changes between showing and recording.
    std::fs::write(
        root.join(".claude/settings.json"),
        TWO.replace("one", "evil"),
    )
    .unwrap();
    trust(&home, &shown).unwrap();
    let now = ProjectHooks::load(&root, &home);
    assert_eq!(in_force_commands(&now), ["echo two"]);
}

#[test]
fn a_trust_list_that_does_not_parse_trusts_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = project(dir.path(), TWO);
    trust(&home, &ProjectHooks::load(&root, &home)).unwrap();
    std::fs::write(home.join(TRUST_FILE), "{not json").unwrap();
    let now = ProjectHooks::load(&root, &home);
    assert!(now.in_force().is_empty());
    assert!(now.problems.iter().any(|p| p.contains("trusted.json")));
    assert!(
        trust(&home, &now).is_err(),
        "a broken list is not overwritten"
    );
}

#[test]
fn threads_trusting_at_once_keep_every_projects_entry() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let roots: Vec<_> = (0..8)
        .map(|i| project(&dir.path().join(format!("p{i}")), TWO))
        .collect();
    std::thread::scope(|s| {
        for root in &roots {
            let home = &home;
            s.spawn(move || trust(home, &ProjectHooks::load(root, home)).unwrap());
        }
    });
    for root in &roots {
        assert_eq!(ProjectHooks::load(root, &home).not_in_force(), 0);
    }
}
