//! Trusting the project's hooks, through the real binary: a project hook that would
//! create a file does not run until `harness9 hooks trust`, then it does; a hook changed
//! afterwards (command, matcher, a new one) is out of force again until trusted;
//! `hooks untrust` takes them all out; `hooks list [--json]` says which hooks are in
//! force and why not; start-up says how many are not and what to type; several
//! processes trusting at once keep every project's entry.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use crate::support::*;

/// `.claude/settings.json` with one PreToolUse hook on `matcher` that touches `marker`.
fn touching_settings(matcher: &str, marker: &Path) -> String {
    serde_json::json!({"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [
        {"type": "command", "command": format!("touch '{}'", marker.display())}]}]}})
    .to_string()
}

fn one_bash_call(dirs: &Dirs, command: &str) -> (Output, String) {
    MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        command,
        &["--approval-mode", "full-auto"],
        &[],
    )
}

#[test]
fn a_project_hook_runs_only_once_trusted_and_only_as_trusted() {
    let dirs = Dirs::new();
    let marker = dirs.project().join("hook-ran");
    dirs.project_file(".claude/settings.json", &touching_settings("Bash", &marker));

    let (out, tool) = one_bash_call(&dirs, "echo first");
    assert!(tool.contains("first"), "{tool}");
    assert!(!marker.exists(), "an untrusted project hook ran");
    assert_has(
        &stderr_text(&out),
        &[
            "1 of the project's hooks is not in force",
            "harness9 hooks trust",
        ],
    );

    let trust = dirs.run(&["hooks", "trust"]);
    assert_exit(&trust, 0);
    assert_has(
        &stdout_text(&trust),
        &[
            "Trusting these 1 hook(s)",
            "PreToolUse:",
            "matcher Bash: touch",
            "settings.json",
            "Trusted.",
        ],
    );

    let (out, tool) = one_bash_call(&dirs, "echo second");
    assert!(tool.contains("second"), "{tool}");
    assert!(marker.exists(), "the trusted hook did not run");
    assert!(
        !stderr_text(&out).contains("not in force"),
        "{}",
        stderr_text(&out)
    );

    // Changed behind the user's back: the command, then the matcher, then a new hook.
    let changed = dirs.project().join("changed-ran");
    let variants = [
        touching_settings("Bash", &changed),
        touching_settings("Bash|Write", &marker).replace(
            &marker.display().to_string(),
            &changed.display().to_string(),
        ),
    ];
    for settings in variants {
        dirs.project_file(".claude/settings.json", &settings);
        let (out, _) = one_bash_call(&dirs, "echo third");
        assert!(!changed.exists(), "a changed hook ran: {settings}");
        assert_has(
            &stderr_text(&out),
            &["1 of the project's hooks is not in force"],
        );
    }
    std::fs::remove_file(&marker).unwrap();
    dirs.project_file(".claude/settings.json", &touching_settings("Bash", &marker));
    dirs.project_file(
        ".harness9/hooks.toml",
        &format!(
            "[[PreToolUse]]\n[[PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"touch '{}'\"\n",
            changed.display()
        ),
    );
    let (_, _) = one_bash_call(&dirs, "echo fourth");
    assert!(marker.exists(), "the unchanged trusted hook still runs");
    assert!(!changed.exists(), "a hook added after trust ran");

    // Untrusted: nothing of the project runs.
    let untrust = dirs.run(&["hooks", "untrust"]);
    assert_exit(&untrust, 0);
    assert_has(&stdout_text(&untrust), &["no longer trusted"]);
    std::fs::remove_file(&marker).unwrap();
    let (_, _) = one_bash_call(&dirs, "echo fifth");
    assert!(!marker.exists() && !changed.exists());
}

#[test]
fn hooks_list_says_what_is_in_force_and_why_not() {
    let dirs = Dirs::new();
    dirs.home_file(
        "config.toml",
        "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"echo user\"\non_error = \"deny\"\n",
    );
    let marker = dirs.project().join("m");
    dirs.project_file(".claude/settings.json", &touching_settings("Bash", &marker));
    let list = dirs.run(&["hooks", "list"]);
    assert_exit(&list, 0);
    let text = stdout_text(&list);
    assert_has(
        &text,
        &[
            "Stop:",
            "[in force (config.toml)] guard matcher *: echo user",
            "config.toml",
            "PreToolUse:",
            "[NOT in force: the project's hooks are not trusted] hook matcher Bash: touch",
            ".claude/settings.json",
            "1 project hook is not in force; `harness9 hooks trust`",
        ],
    );
    assert_exit(&dirs.run(&["hooks", "trust"]), 0);
    dirs.project_file(
        ".claude/settings.local.json",
        &touching_settings("Edit", &marker),
    );
    let json = dirs.run(&["hooks", "list", "--json"]);
    assert_exit(&json, 0);
    let value: serde_json::Value = serde_json::from_str(&stdout_text(&json)).unwrap();
    let hooks = value["hooks"].as_array().unwrap();
    let summary: Vec<(String, String, String, String)> = hooks
        .iter()
        .map(|h| {
            (
                h["event"].as_str().unwrap().to_string(),
                h["origin_kind"].as_str().unwrap().to_string(),
                h["standing"]["state"].as_str().unwrap().to_string(),
                h["standing"]["because"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expect = |a: &str, b: &str, c: &str, d: &str| (a.into(), b.into(), c.into(), d.into());
    // config.toml's hooks first, then the project's in file order.
    assert_eq!(
        summary,
        vec![
            expect("Stop", "user_config", "in_force", "user_config"),
            expect("PreToolUse", "claude_settings", "in_force", "trusted"),
            expect(
                "PreToolUse",
                "claude_local_settings",
                "not_in_force",
                "changed_since_trust"
            ),
        ]
    );
    assert_eq!(hooks.iter().filter(|h| h["role"] == "guard").count(), 1);
}

#[test]
fn a_hook_file_replaced_by_a_link_is_not_read_even_if_it_says_the_same() {
    let dirs = Dirs::new();
    let marker = dirs.project().join("hook-ran");
    let settings = touching_settings("Bash", &marker);
    dirs.project_file(".claude/settings.json", &settings);
    assert_exit(&dirs.run(&["hooks", "trust"]), 0);
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("s.json"), &settings).unwrap();
    std::fs::remove_file(dirs.project().join(".claude/settings.json")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("s.json"),
        dirs.project().join(".claude/settings.json"),
    )
    .unwrap();
    let (out, _) = one_bash_call(&dirs, "echo hi");
    assert!(!marker.exists());
    assert_has(&stderr_text(&out), &["settings.json", "cannot be read"]);
}

#[test]
fn processes_trusting_at_once_keep_every_projects_entry() {
    let home = tempfile::tempdir().unwrap();
    let projects: Vec<tempfile::TempDir> = (0..6).map(|_| tempfile::tempdir().unwrap()).collect();
    for p in &projects {
        write(
            &p.path().join(".claude/settings.json"),
            &touching_settings("Bash", &p.path().join("m")),
        );
    }
    let children: Vec<_> = projects
        .iter()
        .map(|p| {
            harness9_cli(home.path(), p.path())
                .args(["hooks", "trust"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    for p in &projects {
        let list = harness9_cli(home.path(), p.path())
            .args(["hooks", "list"])
            .output()
            .unwrap();
        assert_has(&stdout_text(&list), &["[in force (trusted)]"]);
    }
}

#[test]
fn slash_hooks_in_the_piped_repl_lists_them_by_event_with_their_standing() {
    let dirs = Dirs::new();
    dirs.home_file(
        "config.toml",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/opt/no-rm.sh\"\non_error = \"deny\"\n",
    );
    let marker = dirs.project().join("m");
    dirs.project_file(
        ".claude/settings.json",
        &touching_settings("Edit|Write", &marker),
    );
    let server = MockServer::start(vec![]);
    let out = run_fed(&mut server.binary(&dirs), b"/hooks\n");
    let text = stdout_text(&out);
    assert_has(
        &text,
        &[
            "Hooks:",
            "PreToolUse:",
            "[in force (config.toml)] guard matcher Bash: /opt/no-rm.sh",
            "[NOT in force: the project's hooks are not trusted] hook matcher Edit|Write: touch",
            ".claude/settings.json",
            "`harness9 hooks trust`",
        ],
    );
    assert_exit(&dirs.run(&["hooks", "trust"]), 0);
    let out = run_fed(&mut server.binary(&dirs), b"/hooks\n");
    assert_has(
        &stdout_text(&out),
        &["[in force (trusted)] hook matcher Edit|Write: touch"],
    );
    assert!(!stdout_text(&out).contains("NOT in force"));
}

#[test]
fn the_model_cannot_trust_the_projects_hooks_through_a_command() {
    let dirs = Dirs::new();
    let marker = dirs.project().join("hook-ran");
    dirs.project_file(".claude/settings.json", &touching_settings("Bash", &marker));
    // full-auto runs the command by itself, inside the session's sandbox, where
    // $HARNESS9_HOME (and its trust list) cannot be written.
    let command = format!("{} hooks trust", env!("CARGO_BIN_EXE_harness9"));
    let (_, tool) = one_bash_call(&dirs, &command);
    assert!(!tool.contains("Trusted."), "{tool}");
    assert!(!dirs.home().join("hooks/trusted.json").exists(), "{tool}");
    let (_, _) = one_bash_call(&dirs, "echo next");
    assert!(!marker.exists(), "a hook trusted by the model ran");
}
