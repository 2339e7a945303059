//! Plugins through the real binary, with public Claude Code plugins nobody here wrote
//! (`tests/fixtures/plugins/`, permissive licences, see its SOURCE.md): `plugin add`
//! from a local marketplace, `list`, nothing loaded before `trust`, then the plugin's
//! PreToolUse guard blocking a command end to end against the scripted server and a
//! plugin's commands in the catalog; a change after trust untrusts it; a git URL cloned
//! without running git hooks; a marketplace entry leading out of the marketplace refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins")
}

fn plugin(dirs: &Dirs, args: &[&str]) -> Output {
    let mut all = vec!["plugin"];
    all.extend_from_slice(args);
    dirs.run(&all)
}

fn listed(dirs: &Dirs) -> Vec<Value> {
    let out = plugin(dirs, &["list", "--json"]);
    assert_exit(&out, 0);
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The model runs `rm victim.txt`, which safety-hooks' PreToolUse guard denies (it
/// refuses every `rm`, asking for a move to TRASH/); returns the run and the tool's
/// result.
fn rm_victim(dirs: &Dirs) -> (Output, String) {
    MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "rm victim.txt",
        &["--approval-mode", "full-auto"],
        &[],
    )
}

#[test]
fn a_marketplace_plugin_loads_nothing_until_trusted_then_its_guard_blocks_a_command() {
    let dirs = Dirs::new();
    let market = fixtures().display().to_string();
    // A marketplace needs the plugin's name.
    let out = plugin(&dirs, &["add", &market]);
    assert_exit(&out, 2);
    assert_has(&stderr_text(&out), &["name the plugin", "safety-hooks"]);
    let out = plugin(&dirs, &["add", &market, "safety-hooks"]);
    assert_exit(&out, 0);
    assert_has(
        &stdout_text(&out),
        &[
            "Added plugin safety-hooks",
            "not trusted",
            "PreToolUse [Bash]: bash -c 'if test -f \"${CLAUDE_PLUGIN_ROOT}/hooks/bash_hook.py\"",
        ],
    );
    let list = listed(&dirs);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["standing"], "not_trusted");
    assert_eq!(list[0]["contributes"]["hooks"], 5);
    // Untrusted: its hook does not run, the file goes, the start says why.
    let victim = dirs.project().join("victim.txt");
    dirs.project_file("victim.txt", "x\n");
    let (out, tool) = rm_victim(&dirs);
    assert!(!victim.exists(), "{tool}");
    assert_has(&stderr_text(&out), &["plugin safety-hooks is not trusted"]);
    // Trusted: `trust` shows what runs, then the guard blocks the same command.
    dirs.project_file("victim.txt", "x\n");
    let out = plugin(&dirs, &["trust", "safety-hooks"]);
    assert_exit(&out, 0);
    assert_has(
        &stdout_text(&out),
        &["will run", "hooks/bash_hook.py", "Trusted safety-hooks"],
    );
    assert_eq!(listed(&dirs)[0]["standing"], "trusted");
    let (out, tool) = rm_victim(&dirs);
    assert!(victim.is_file(), "{tool}");
    assert_has(&tool, &["MOVE files using `mv` to the TRASH directory"]);
    assert_has(&stderr_text(&out), &["blocked bash"]);
    // A change to its files untrusts it: the hook is not loaded again.
    let script = dirs
        .home()
        .join("plugins/safety-hooks/hooks/rm_block_hook.py");
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str("\n# changed\n");
    std::fs::write(&script, text).unwrap();
    assert_eq!(listed(&dirs)[0]["standing"], "changed_since_trust");
    let (out, tool) = rm_victim(&dirs);
    assert!(!victim.exists(), "{tool}");
    assert_has(&stderr_text(&out), &["changed since trusted"]);
    // Removed: gone from the list and the home.
    assert_exit(&plugin(&dirs, &["remove", "safety-hooks"]), 0);
    assert!(listed(&dirs).is_empty());
    assert!(!dirs.home().join("plugins/safety-hooks").exists());
    assert_exit(&plugin(&dirs, &["remove", "safety-hooks"]), 2);
}

/// motlin's `git` plugin (Apache-2.0) from its own marketplace: its commands join the
/// catalog once trusted, labelled by the plugin, and its agent definitions join
/// `agents list`.
#[test]
fn a_trusted_plugins_commands_join_the_catalog_labelled_by_the_plugin() {
    let dirs = Dirs::new();
    let market = fixtures().join("community").display().to_string();
    assert_exit(&plugin(&dirs, &["add", &market, "git"]), 0);
    let out = dirs.run(&["skills", "show", "commit-chunks"]);
    assert_ne!(out.status.code(), Some(0), "{}", stdout_text(&out));
    // Its agent definitions wait for trust too.
    let out = dirs.run(&["agents", "list"]);
    assert_exit(&out, 0);
    assert!(
        !stdout_text(&out).contains("conflict-resolver"),
        "{}",
        stdout_text(&out)
    );
    assert_exit(&plugin(&dirs, &["trust", "git"]), 0);
    let out = dirs.run(&["agents", "list"]);
    assert_exit(&out, 0);
    assert_has(&stdout_text(&out), &["conflict-resolver", "rebaser"]);
    let out = dirs.run(&["skills", "list"]);
    assert_exit(&out, 0);
    assert_has(
        &stdout_text(&out),
        &["commit", "commit-chunks", "rebase-all", "plugin"],
    );
    let out = dirs.run(&["skills", "show", "commit-chunks"]);
    assert_exit(&out, 0);
    assert_has(
        &stdout_text(&out),
        &[
            "Split local changes into multiple logical commits (plugin:git)",
            "kind: command",
        ],
    );
}

#[test]
fn a_marketplace_entry_leading_out_of_the_marketplace_is_refused() {
    let dirs = Dirs::new();
    let market = fixtures().display().to_string();
    let out = plugin(&dirs, &["add", &market, "escapes"]);
    assert_exit(&out, 2);
    assert_has(
        &stderr_text(&out),
        &["`../../` is not a relative path inside the plugin"],
    );
    assert!(listed(&dirs).is_empty());
    let left: Vec<_> = std::fs::read_dir(dirs.home().join("plugins"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn a_git_url_is_cloned_shallow_without_running_a_git_hook() {
    let dirs = Dirs::new();
    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let source = fixtures().join("superpowers");
    for rel in [
        ".claude-plugin/plugin.json",
        "hooks/hooks.json",
        "hooks/run-hook.cmd",
        "hooks/session-start",
        "skills/using-superpowers/SKILL.md",
        "LICENSE",
    ] {
        let to = repo.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(source.join(rel), &to).unwrap();
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "plugin"]);
    git(work.path(), &["clone", "-q", "--bare", "repo", "bare.git"]);
    // A template whose post-checkout hook would leave a mark: git runs it on clone
    // unless hooks are turned off.
    let template = work.path().join("template");
    let marker = work.path().join("hook-ran");
    let hook = template.join("hooks/post-checkout");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plain = Command::new("git")
        .args(["clone", "-q", "bare.git", "plain"])
        .current_dir(work.path())
        .env("GIT_TEMPLATE_DIR", &template)
        .output()
        .unwrap();
    assert!(plain.status.success());
    assert!(marker.exists(), "the template's hook runs on a plain clone");
    std::fs::remove_file(&marker).unwrap();
    let url = format!("file://{}", work.path().join("bare.git").display());
    let out = dirs
        .command(&["plugin", "add", &url])
        .env("GIT_TEMPLATE_DIR", &template)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(!marker.exists(), "no git hook ran");
    let installed = dirs.home().join("plugins/superpowers");
    assert!(installed.join("hooks/session-start").is_file());
    assert!(!installed.join(".git").exists());
    let list = listed(&dirs);
    assert_eq!(list[0]["name"], "superpowers");
    assert_eq!(list[0]["source"], url.as_str());
    // The executable bit survives the copy: the hook runs the scripts directly.
    for script in ["hooks/run-hook.cmd", "hooks/session-start"] {
        let mode = std::fs::metadata(installed.join(script))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "{script}");
    }
    // A marketplace in a git repository: cloned, then its entry taken by name.
    let market = work.path().join("market");
    let community = fixtures().join("community");
    for rel in [
        ".claude-plugin/marketplace.json",
        "plugins/bash-guards/.claude-plugin/plugin.json",
        "plugins/bash-guards/hooks/hooks.json",
        "plugins/bash-guards/scripts/validate-bash.sh",
    ] {
        let to = market.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(community.join(rel), &to).unwrap();
    }
    git(&market, &["init", "-q"]);
    git(&market, &["add", "-A"]);
    git(&market, &["commit", "-qm", "market"]);
    let url = format!("file://{}", market.display());
    let out = dirs
        .command(&["plugin", "add", &url, "bash-guards"])
        .env("GIT_TEMPLATE_DIR", &template)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(!marker.exists(), "no git hook ran");
    assert!(
        dirs.home()
            .join("plugins/bash-guards/scripts/validate-bash.sh")
            .is_file()
    );
}

/// `/plugins` in the REPL (piped): each plugin with its standing and what it brings;
/// a trusted plugin's command runs as `/commit-chunks` (motlin's `git` plugin), its
/// text sent to the model with its inline shell's output.
#[test]
fn slash_plugins_lists_each_plugin_and_a_plugin_command_runs() {
    let dirs = Dirs::new();
    let community = fixtures().join("community").display().to_string();
    assert_exit(&plugin(&dirs, &["add", &community, "git"]), 0);
    let market = fixtures().display().to_string();
    assert_exit(&plugin(&dirs, &["add", &market, "safety-hooks"]), 0);
    assert_exit(&plugin(&dirs, &["trust", "git"]), 0);
    // The command's inline shell asks git about the project. (A tracked change is left
    // out: `git diff`'s `@@` hunk headers are read as @-mentions of a missing file and
    // refuse the command — a defect of command expansion, reported, not of plugins.)
    dirs.project_file("README", "first\n");
    git(dirs.project(), &["init", "-q"]);
    git(dirs.project(), &["add", "-A"]);
    git(dirs.project(), &["commit", "-qm", "first"]);
    dirs.project_file("untracked-notes.txt", "new\n");
    // The plugin's Stop hook reports the dirty tree without holding the stop (exit 0).
    let server = MockServer::start(vec![answer("committed")]);
    let child = spawn_fed(
        server
            .binary(&dirs)
            .args(["--no-tui", "--approval-mode", "full-auto"]),
        b"/plugins\n/commit-chunks\n",
    );
    let out = wait_with_deadline(child, std::time::Duration::from_secs(60));
    assert_exit(&out, 0);
    // Its plugin.json lists each command and agent file of its default folders: read
    // with the folders, nothing to warn about.
    let stderr = stderr_text(&out);
    for warning in ["is a file", "not a regular file"] {
        assert!(!stderr.contains(warning), "{stderr}");
    }
    let stdout = stdout_text(&out);
    assert_has(
        &stdout,
        &[
            "Plugins:",
            "git 1.29.0 — trusted, loaded: 8 commands",
            "safety-hooks 1.15.1 — not trusted, nothing loaded (harness9 plugin trust NAME): 5 hooks",
            "committed",
        ],
    );
    let sent = server.chat_requests()[0].last_user_text();
    // The inline commands ran: git's answers are in what the model got.
    assert_has(
        &sent,
        &[
            "Analyze my local changes and propose splitting them into multiple logical commits.",
            "untracked-notes.txt",
            "first",
        ],
    );
}

/// A community marketplace (motlin/claude-code-plugins): its two guards, one blocking
/// with exit 2, one denying through JSON output, run unchanged once trusted.
#[test]
fn a_community_marketplaces_guards_block_bash_commands_once_trusted() {
    let dirs = Dirs::new();
    let market = fixtures().join("community").display().to_string();
    for name in ["bash-guards", "git-guards"] {
        assert_exit(&plugin(&dirs, &["add", &market, name]), 0);
    }
    // An entry whose plugin is not in the copy is refused, naming the path.
    let out = plugin(&dirs, &["add", &market, "markdown-tasks"]);
    assert_exit(&out, 2);
    assert_has(
        &stderr_text(&out),
        &["./plugins/markdown-tasks", "does not exist"],
    );
    let doomed = dirs.project().join("build");
    std::fs::create_dir(&doomed).unwrap();
    std::fs::write(doomed.join("keep"), "x").unwrap();
    let run = |command: &str| {
        MockServer::start(vec![]).one_bash_call(
            dirs.home(),
            dirs.project(),
            command,
            &["--approval-mode", "full-auto"],
            &[],
        )
    };
    // Untrusted: neither guard runs (the rules alone decide).
    let (_, tool) = run("git add -A");
    assert!(!tool.contains("git add -A is banned"), "{tool}");
    for name in ["bash-guards", "git-guards"] {
        assert_exit(&plugin(&dirs, &["trust", name]), 0);
    }
    let (_, tool) = run("rm -rf build");
    assert!(doomed.join("keep").exists(), "{tool}");
    assert_has(&tool, &["Recursive rm is destructive", "Use 'trash'"]);
    let (_, tool) = run("git add -A");
    assert_has(&tool, &["git add -A is banned"]);
    // A command both let through runs.
    let (_, tool) = run("echo through-the-guards");
    assert_has(&tool, &["through-the-guards"]);
}

/// A trusted plugin's MCP server (its `.mcp.json`) joins the configured ones: `mcp list`
/// shows it with the scope `plugin` and starts it; untrusted, it is not there.
#[test]
fn a_trusted_plugins_mcp_server_is_listed_and_started() {
    let dirs = Dirs::new();
    let source = tempfile::tempdir().unwrap();
    let mcp_json = serde_json::json!({"mcpServers": {"fxp": {
        "command": mcp_fixture().display().to_string(),
        "env": {"PLUGIN_HOME": "${CLAUDE_PLUGIN_ROOT}"}
    }}});
    write(
        &source.path().join(".claude-plugin/plugin.json"),
        r#"{"name": "served", "version": "0.1.0"}"#,
    );
    write(&source.path().join(".mcp.json"), &mcp_json.to_string());
    let path = source.path().display().to_string();
    let out = plugin(&dirs, &["add", &path]);
    assert_exit(&out, 0);
    assert_has(&stdout_text(&out), &["MCP servers:", "fxp: "]);
    let servers = |dirs: &Dirs| {
        let out = dirs.run(&["mcp", "list", "--json"]);
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(servers(&dirs), serde_json::json!([]));
    assert_exit(&plugin(&dirs, &["trust", "served"]), 0);
    let list = servers(&dirs);
    assert_eq!(list[0]["name"], "fxp", "{list}");
    assert_eq!(list[0]["scope"], "plugin", "{list}");
    assert_eq!(list[0]["state"], "ok", "{list}");
    assert!(list[0]["tools"].as_u64().unwrap() > 0, "{list}");
}

/// `${CLAUDE_PLUGIN_ROOT}` reaches a hook as an environment variable, never spliced into
/// its command: a harness9 home whose path holds shell syntax runs none of it.
#[test]
fn the_plugin_root_is_never_spliced_into_a_hook_command() {
    let dirs = Dirs::new();
    let home = dirs.home().join("h$(touch INJECTED)`touch TICKED`");
    std::fs::create_dir(&home).unwrap();
    let source = tempfile::tempdir().unwrap();
    write(
        &source.path().join(".claude-plugin/plugin.json"),
        r#"{"name": "rooted"}"#,
    );
    write(
        &source.path().join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "echo \"refused from ${CLAUDE_PLUGIN_ROOT}\" >&2; exit 2"}]}]}}"#,
    );
    let cli = |args: &[&str]| {
        let out = harness9_cli(&home, dirs.project())
            .arg("plugin")
            .args(args)
            .output()
            .unwrap();
        assert_exit(&out, 0);
    };
    cli(&["add", &source.path().display().to_string()]);
    cli(&["trust", "rooted"]);
    let (_, tool) = MockServer::start(vec![]).one_bash_call(
        &home,
        dirs.project(),
        "echo never-ran",
        &["--approval-mode", "full-auto"],
        &[],
    );
    let root = home.join("plugins/rooted");
    assert_has(&tool, &[&format!("refused from {}", root.display())]);
    assert!(!tool.contains("never-ran"), "{tool}");
    for made in ["INJECTED", "TICKED"] {
        assert!(!dirs.project().join(made).exists(), "{made}");
        assert!(!home.join(made).exists(), "{made}");
    }
}

/// A trusted plugin whose Python hook imports its sibling modules (safety-hooks'
/// `bash_hook.py`) stays trusted after its hooks ran unconfined (`--sandbox off`):
/// Python writes no `__pycache__` into the plugin's folder, so the guard still blocks
/// in the next session.
#[test]
fn a_trusted_python_plugin_stays_trusted_after_its_hooks_ran() {
    let dirs = Dirs::new();
    let market = fixtures().display().to_string();
    assert_exit(&plugin(&dirs, &["add", &market, "safety-hooks"]), 0);
    assert_exit(&plugin(&dirs, &["trust", "safety-hooks"]), 0);
    let victim = dirs.project().join("victim.txt");
    for session in 0..2 {
        dirs.project_file("victim.txt", "x\n");
        let (out, tool) = MockServer::start(vec![]).one_bash_call(
            dirs.home(),
            dirs.project(),
            "rm victim.txt",
            &["--approval-mode", "full-auto", "--sandbox", "off"],
            &[],
        );
        assert!(victim.is_file(), "session {session}: {tool}");
        assert_has(&stderr_text(&out), &["blocked bash"]);
    }
    assert_eq!(listed(&dirs)[0]["standing"], "trusted");
    let cache = dirs.home().join("plugins/safety-hooks/hooks/__pycache__");
    assert!(!cache.exists(), "{}", cache.display());
}
