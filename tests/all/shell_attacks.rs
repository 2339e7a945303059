//! Issue 26's attacks on command approval, through the real binary: a scripted model
//! asks for each form, unattended (`-p`), and the file the form would create or the data
//! it would destroy shows whether it ran. Bash expansions the reader cannot see, builtins
//! that evaluate their arguments, destructive spellings, a repository's git config, and
//! `auto-edit` without a sandbox.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use crate::support::*;

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A project that is a git repository with `hello` committed.
fn repository(project: &Path) {
    write(&project.join("a.txt"), "hello\n");
    git(project, &["init", "-q"]);
    git(project, &["add", "a.txt"]);
}

/// Every form that runs `touch PWNED` in bash (the first), as the unit tests
/// of `permissions::attack_tests` also read them.
fn forms() -> impl Iterator<Item = &'static str> {
    include_str!("../data/code_running_forms.txt")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

#[test]
fn expansions_the_reader_cannot_see_never_run_unasked() {
    let server = MockServer::start(vec![]);
    let settings: [(&str, &[&str]); 2] = [
        // auto-edit with no rules (the sandbox is on by default there).
        ("", &["--approval-mode", "auto-edit"]),
        // suggest, unconfined, with every program of the forms allowed by a rule.
        (
            "[permissions]\nallow = [\"bash(echo:*)\", \"bash(test:*)\", \"bash(printf:*)\", \
             \"bash(git grep:*)\", \"bash(read:*)\"]\n",
            &["--approval-mode", "suggest", "--sandbox", "off"],
        ),
    ];
    for (config, args) in settings {
        for form in forms() {
            let (home, project) = dirs();
            repository(project.path());
            write(&home.path().join("config.toml"), config);
            let (out, tool) = server.one_bash_call(home.path(), project.path(), form, args, &[]);
            assert!(
                !project.path().join("PWNED").exists(),
                "`{form}` ran with {args:?}: {tool}"
            );
            assert!(tool.starts_with("Denied"), "`{form}` {args:?}: {tool}");
            assert_exit(&out, 0);
        }
    }
}

#[test]
fn bare_redirections_and_assignments_are_not_commands_a_rule_covers() {
    let server = MockServer::start(vec![]);
    let (home, project) = dirs();
    write(&project.path().join("victim.txt"), "keep me\n");
    write(
        &home.path().join("config.toml"),
        "[permissions]\nallow = [\"bash(echo:*)\"]\n",
    );
    for form in ["> victim.txt", "x='$(touch PWNED)'", "echo x > victim.txt"] {
        let (_, tool) = server.one_bash_call(
            home.path(),
            project.path(),
            form,
            &["--sandbox", "off"],
            &[],
        );
        assert!(tool.starts_with("Denied"), "{form}: {tool}");
    }
    assert_eq!(
        std::fs::read_to_string(project.path().join("victim.txt")).unwrap(),
        "keep me\n"
    );
}

#[test]
fn every_spelling_of_a_destructive_command_asks_in_full_auto() {
    let server = MockServer::start(vec![]);
    let forms = [
        "/bin/rm -rf src",
        "rm --recur --force src",
        "command rm -rf src",
        "bash -c \"rm -rf src\"",
        "env rm -rf src",
        "find src -delete",
        "find src -type f -exec rm {} +",
        "ls src | xargs rm -rf",
        "x=rm; $x -rf src",
        "git reset --ha",
        "git -C . reset --hard",
        "git switch --discard-changes main",
        "git checkout -f main",
        "git branch -d -f topic",
        "git clean -fdx",
        "git restore src/keep.txt",
    ];
    for form in forms {
        let (home, project) = dirs();
        let p = project.path();
        write(&p.join("src/keep.txt"), "committed\n");
        git(p, &["init", "-q", "-b", "main"]);
        git(p, &["add", "."]);
        git(
            p,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "one",
            ],
        );
        git(p, &["branch", "topic"]);
        write(&p.join("src/keep.txt"), "uncommitted work\n");
        write(&p.join("untracked.txt"), "new\n");
        let (_, tool) =
            server.one_bash_call(home.path(), p, form, &["--approval-mode", "full-auto"], &[]);
        assert_eq!(
            std::fs::read_to_string(p.join("src/keep.txt")).unwrap_or_default(),
            "uncommitted work\n",
            "`{form}` destroyed work: {tool}"
        );
        assert!(p.join("untracked.txt").exists(), "`{form}`: {tool}");
        let branches = Command::new("git")
            .args(["branch", "--list", "topic"])
            .current_dir(p)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&branches.stdout).contains("topic"),
            "`{form}` deleted a branch: {tool}"
        );
        assert!(tool.starts_with("Denied"), "`{form}`: {tool}");
    }
}

#[test]
fn read_only_git_commands_ask_where_the_repository_config_names_a_program() {
    let server = MockServer::start(vec![]);
    let (home, project) = dirs();
    let p = project.path();
    repository(p);
    // What runs without asking in a clean repository.
    let (_, tool) = server.one_bash_call(
        home.path(),
        p,
        "git status --short",
        &["--approval-mode", "auto-edit"],
        &[],
    );
    assert!(tool.contains("A  a.txt"), "{tool}");
    for (key, value) in [
        ("core.fsmonitor", "touch PWNED; false"),
        ("core.pager", "touch PWNED; cat"),
        ("diff.x.textconv", "touch PWNED; cat"),
        ("include.path", "../evil.config"),
    ] {
        git(p, &["config", key, value]);
        let (_, tool) = server.one_bash_call(
            home.path(),
            p,
            "git status",
            &["--approval-mode", "auto-edit"],
            &[],
        );
        assert!(!p.join("PWNED").exists(), "{key}: {tool}");
        assert!(
            tool.starts_with("Denied") && tool.contains(key),
            "{key}: {tool}"
        );
        git(p, &["config", "--unset", key]);
    }
}

#[test]
fn auto_edit_without_a_sandbox_asks_before_any_command() {
    let server = MockServer::start(vec![]);
    let (home, project) = dirs();
    let (_, tool) = server.one_bash_call(
        home.path(),
        project.path(),
        "ls",
        &["--approval-mode", "auto-edit", "--sandbox", "off"],
        &[],
    );
    assert!(
        tool.starts_with("Denied") && tool.contains("only inside the sandbox"),
        "{tool}"
    );
}
