//! Permission rules through the real binary: a scripted model asks for calls, and what
//! the model is told back (and what happened on disk) shows which rule decided — secret
//! files and destructive commands ask even in `full-auto` (so an unattended run denies
//! them), deny wins over allow across the user's and the project's files, a project
//! file's allow rules count only once approved, and `harness9 permissions` lists them
//! with their origin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use crate::support::*;

/// One `-p` run in `dirs` (plus `args`) in which the model makes one bash call; the
/// output and what the model got back.
fn one_bash_call(dirs: &Dirs, command: &str, args: &[&str]) -> (Output, String) {
    MockServer::start(vec![]).one_bash_call(dirs.home(), dirs.project(), command, args, &[])
}

#[test]
fn full_auto_still_asks_for_secret_files_so_an_unattended_run_denies_them() {
    let dirs = Dirs::new();
    dirs.project_file(".env", "API_KEY=sk-live-SECRET\n");
    let (out, tool) = one_bash_call(&dirs, "cat .env", &["--approval-mode", "full-auto"]);
    assert!(!tool.contains("sk-live-SECRET"), "{tool}");
    assert_has(&tool, &["Denied", "*(**/.env*)"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_has(&stderr, &["denied bash", "asks every time"]);
}

#[test]
fn destructive_commands_need_a_person_or_an_exact_rule() {
    let dirs = Dirs::new();
    let victim = dirs.project().join("build");
    std::fs::create_dir_all(&victim).unwrap();
    write(&victim.join("keep.txt"), "x");
    let (_, tool) = one_bash_call(&dirs, "rm -rf build", &["--approval-mode", "full-auto"]);
    assert!(victim.join("keep.txt").exists(), "{tool}");
    assert!(tool.contains("bash(rm -rf build)"), "{tool}");

    // A prefix rule does not cover it; the exact rule does.
    dirs.home_file("config.toml", "[permissions]\nallow = [\"bash(rm:*)\"]\n");
    let (_, tool) = one_bash_call(&dirs, "rm -rf build", &["--approval-mode", "full-auto"]);
    assert!(victim.exists(), "{tool}");
    dirs.home_file(
        "config.toml",
        "[permissions]\nallow = [\"bash(rm -rf build)\"]\n",
    );
    let (_, tool) = one_bash_call(&dirs, "rm -rf build", &["--approval-mode", "full-auto"]);
    assert!(!victim.exists(), "{tool}");
}

#[test]
fn deny_in_the_project_file_wins_over_allow_in_the_users_config() {
    let dirs = Dirs::with_config("[permissions]\nallow = [\"bash\"]\n");
    dirs.project_file(".harness9/permissions.toml", "deny = [\"bash(touch:*)\"]\n");
    let marker = dirs.project().join("made");
    let (out, tool) = one_bash_call(&dirs, "echo hi && touch made", &[]);
    assert!(!marker.exists());
    assert!(tool.contains("deny bash(touch:*)"), "{tool}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refused by the rule `deny bash(touch:*)`")
    );
    // The user's allow rule alone runs it in suggest mode, unattended.
    let (_, tool) = one_bash_call(&dirs, "echo ran-by-rule", &[]);
    assert!(tool.contains("ran-by-rule"), "{tool}");
}

#[test]
fn a_projects_allow_rules_count_only_once_this_user_approved_them() {
    let dirs = Dirs::new();
    dirs.project_file(
        ".harness9/permissions.toml",
        "# from the repository\nallow = [\"bash(echo:*)\"]\n",
    );
    let (out, tool) = one_bash_call(&dirs, "echo from-repo", &[]);
    assert!(!tool.contains("from-repo\n"), "{tool}");
    assert!(tool.contains("Denied"), "{tool}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_has(&stderr, &["permissions trust", "bash(echo:*)"]);

    let server = MockServer::start(vec![]);
    let list = server.run(&dirs, &["permissions", "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert_has(&text, &["Not in force", "bash(echo:*)"]);
    assert_has(&text, &["ask    *(**/.env*)", "built-in"]);
    let trust = server.run(&dirs, &["permissions", "trust"]);
    assert_exit(&trust, 0);

    let (_, tool) = one_bash_call(&dirs, "echo from-repo", &[]);
    assert!(tool.contains("from-repo"), "{tool}");
    assert!(!tool.contains("Denied"), "{tool}");

    // A rule slipped into the file afterwards is not approved by that.
    dirs.project_file(
        ".harness9/permissions.toml",
        "allow = [\"bash(echo:*)\", \"bash(touch:*)\"]\n",
    );
    let (_, tool) = one_bash_call(&dirs, "touch slipped", &[]);
    assert!(!dirs.project().join("slipped").exists(), "{tool}");
}

#[test]
fn a_bad_rule_stops_the_start_and_names_its_file() {
    let dirs = Dirs::new();
    dirs.project_file(".harness9/permissions.toml", "deny = [\"bash(\"]\n");
    let server = MockServer::start(vec![]);
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".harness9/permissions.toml") && stderr.contains("bash("),
        "{stderr}"
    );
}
