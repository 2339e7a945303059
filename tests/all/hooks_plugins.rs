//! Real Claude Code hooks nobody here wrote, run unchanged through the binary against
//! the scripted server (MIT-licensed copies in tests/fixtures/claude-hooks and
//! tests/fixtures/plugins, see their SOURCE.md): imbue-ai/mng's PreToolUse guard
//! refuses `git commit --amend` with exit 2, terrylica/cc-skills' PostToolUse nudge
//! reaches the model, severity1's prompt-improver adds UserPromptSubmit context while
//! pchalasani's `allow_git_hook.py` blocks a prompt before it is sent, and mng's Stop
//! hook keeps the agent going until the work is committed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A copy of the folder `from` at `to`, executable bits kept.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            // `fs::copy` keeps the permission bits.
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The project as a git repository holding mng's `scripts/` (where mng's own
/// configuration runs them from) in one commit "first", its identity set locally.
fn mng_project(dirs: &Dirs) {
    copy_tree(
        &fixtures().join("claude-hooks/imbue-ai-mng/scripts"),
        &dirs.project().join("scripts"),
    );
    git(dirs.project(), &["init", "-q", "-b", "main"]);
    git(dirs.project(), &["config", "user.name", "t"]);
    git(dirs.project(), &["config", "user.email", "t@t"]);
    git(dirs.project(), &["add", "-A"]);
    git(dirs.project(), &["commit", "-qm", "first"]);
}

/// One `[[hooks.EVENT]]` group running `command` as the hook's own configuration
/// writes it.
fn hook_group(event: &str, matcher: &str, command: &str) -> String {
    format!(
        "[[hooks.{event}]]\nmatcher = \"{matcher}\"\n[[hooks.{event}.hooks]]\ntype = \
         \"command\"\ncommand = '''{command}'''\ntimeout = 30\n"
    )
}

fn plugin(dirs: &Dirs, args: &[&str]) -> Output {
    let mut all = vec!["plugin"];
    all.extend_from_slice(args);
    dirs.run(&all)
}

/// imbue-ai/mng's PreToolUse guard (bash + jq, exit 2), configured with mng's own
/// command line and no matcher: `git commit --amend` is refused with its message and
/// the commit stays as it was; `git status` goes through.
#[test]
fn mngs_pre_tool_use_guard_refuses_a_commit_amend() {
    let dirs = Dirs::new();
    mng_project(&dirs);
    dirs.home_file(
        "config.toml",
        &hook_group(
            "PreToolUse",
            "",
            "${MNGR_AGENT_WORK_DIR:-.}/scripts/claude_prevent_commit_rewrite.sh",
        ),
    );
    let run = |command: &str| {
        MockServer::start(vec![]).one_bash_call(
            dirs.home(),
            dirs.project(),
            command,
            &["--approval-mode", "full-auto"],
            &[],
        )
    };
    let (out, tool) = run("git commit --amend -qm rewritten");
    assert_has(
        &tool,
        &[
            "PreToolUse hook blocked",
            "Blocked: git commit with --amend or --fixup is not allowed",
        ],
    );
    assert_has(&stderr_text(&out), &["blocked bash"]);
    assert_eq!(git(dirs.project(), &["log", "--format=%s"]).trim(), "first");
    let (_, tool) = run("git status --short && echo status-ran");
    assert!(tool.contains("status-ran"), "{tool}");
    assert!(!tool.contains("Blocked"), "{tool}");
}

/// terrylica/cc-skills' PostToolUse nudge (gh-tools): after a command opening GitHub's
/// token page its `{"decision":"block","reason"}` reaches the model beside the
/// command's output (the command ran: PostToolUse does not undo it); another command
/// gets no hook output.
#[test]
fn cc_skills_post_tool_use_nudge_reaches_the_model() {
    let dirs = Dirs::new();
    let plugins = tempfile::tempdir().unwrap();
    let root = plugins.path().join("gh-tools");
    copy_tree(
        &fixtures().join("claude-hooks/terrylica-cc-skills/plugins/gh-tools"),
        &root,
    );
    let command = format!(
        "CLAUDE_PLUGIN_ROOT='{root}' {root}/hooks/posttooluse-manual-pat-page-nudge.sh",
        root = root.display()
    );
    dirs.home_file("config.toml", &hook_group("PostToolUse", "Bash", &command));
    let run = |command: &str| {
        MockServer::start(vec![]).one_bash_call(
            dirs.home(),
            dirs.project(),
            command,
            &["--approval-mode", "full-auto"],
            &[],
        )
    };
    let (_, tool) = run("echo would open https://github.com/settings/personal-access-tokens/new");
    assert_has(&tool, &["would open https://github.com/settings"]);
    let hook_at = tool.find("<hook-output event=\"PostToolUse\"").unwrap();
    assert_has(
        &tool[hook_at..],
        &[
            "[gh-fine-grained-pat] You are opening the GitHub token settings page by hand",
            "Suppress with MANUAL-PAT-PAGE-OK",
        ],
    );
    let (_, tool) = run("echo plain-command");
    assert!(tool.contains("plain-command"), "{tool}");
    assert!(!tool.contains("<hook-output"), "{tool}");
}

/// Two plugins added from the local marketplace and trusted, their hooks.json as
/// published: prompt-improver's UserPromptSubmit context reaches the model with the
/// prompt; safety-hooks' `allow_git_hook.py` blocks `>allow-git status` with its reason
/// and the prompt is never sent.
#[test]
fn user_prompt_submit_context_reaches_the_model_and_a_block_keeps_the_prompt_out() {
    let dirs = Dirs::new();
    let market = fixtures().join("plugins").display().to_string();
    for name in ["prompt-improver", "safety-hooks"] {
        assert_exit(&plugin(&dirs, &["add", &market, name]), 0);
        assert_exit(&plugin(&dirs, &["trust", name]), 0);
    }
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(&dirs, &["-p", "fix the bug"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1);
    assert_has(
        &requests[0].last_user_text(),
        &[
            "fix the bug",
            "<hook-output event=\"UserPromptSubmit\"",
            "PROMPT EVALUATION",
        ],
    );
    let out = server.run(&dirs, &["-p", ">allow-git status"]);
    assert_ne!(out.status.code(), Some(0), "{}", stdout_text(&out));
    assert_has(&stderr_text(&out), &["Commits require approval"]);
    assert_eq!(server.chat_requests().len(), 1, "the prompt was not sent");
}

/// imbue-ai/mng's Stop hook (exit 2 while the tree is dirty, under
/// `CLAUDE_FORCE_COMMIT=1`): the model answers, the hook refuses the stop listing the
/// untracked file, the model commits through bash, and the next Stop lets it end.
#[test]
fn mngs_stop_hook_keeps_the_agent_going_until_the_work_is_committed() {
    let dirs = Dirs::new();
    mng_project(&dirs);
    dirs.project_file("notes.txt", "new work\n");
    // mng's own command line; `CLAUDE_FORCE_COMMIT=1` comes from the agent's
    // environment, as mng sets it (hooks inherit all but secrets).
    dirs.home_file(
        "config.toml",
        &hook_group("Stop", "", "./scripts/check_commit_status.sh"),
    );
    let server = MockServer::start(vec![
        answer("all done"),
        bash_reply("c1", "git add notes.txt && git commit -qm 'Add notes.'"),
        answer("committed now"),
    ]);
    let out = output_of(
        server
            .binary(&dirs)
            .args(["-p", "write notes", "--approval-mode", "full-auto"])
            .env("CLAUDE_FORCE_COMMIT", "1"),
    );
    assert_exit(&out, 0);
    assert_eq!(
        stdout_text(&out).trim(),
        "committed now",
        "{}",
        stderr_text(&out)
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3, "{}", stderr_text(&out));
    assert_has(
        &requests[1].last_user_text(),
        &[
            "<hook-output event=\"Stop\"",
            "ERROR: Cannot stop - uncommitted changes detected!",
            "Untracked files (need to git add or add to .gitignore):",
            "notes.txt",
        ],
    );
    assert_has(&stderr_text(&out), &["keeps the agent going"]);
    assert_eq!(
        git(dirs.project(), &["log", "--format=%s"]).trim(),
        "Add notes.\nfirst"
    );
    assert_eq!(git(dirs.project(), &["status", "--porcelain"]), "");
}

/// obra/superpowers' SessionStart hook as published (`"${CLAUDE_PLUGIN_ROOT}/hooks/
/// run-hook.cmd" session-start`, matcher `startup|clear|compact`, with Claude Code's newer
/// `shell` and `async` keys): its `additionalContext` (the using-superpowers SKILL.md, in
/// the `hookSpecificOutput` shape because `CLAUDE_PLUGIN_ROOT` is set) reaches the model
/// with the first message and never the system prompt; resuming the session (source
/// `resume`, not in its matcher) runs it not again.
#[test]
fn superpowers_session_start_context_reaches_the_model() {
    let dirs = Dirs::new();
    let market = fixtures().join("plugins").display().to_string();
    assert_exit(&plugin(&dirs, &["add", &market, "superpowers"]), 0);
    assert_exit(&plugin(&dirs, &["trust", "superpowers"]), 0);
    let server = MockServer::start(vec![answer("ok"), answer("again")]);
    let out = server.run(&dirs, &["-p", "hello", "--output-format", "stream-json"]);
    assert_exit(&out, 0);
    let first = &server.chat_requests()[0];
    let user = first.message_text(1);
    assert_has(
        &user,
        &[
            "SessionStart hooks (startup)",
            "You have superpowers.",
            "hello",
        ],
    );
    assert!(!first.message_text(0).contains("You have superpowers."));
    let runs: Vec<_> = json_lines(&out.stdout)
        .into_iter()
        .filter(|l| l["type"] == "hook" && l["event"] == "SessionStart")
        .collect();
    assert_eq!(runs.len(), 1, "{}", String::from_utf8_lossy(&out.stdout));

    let out = server.run(
        &dirs,
        &["-c", "-p", "more", "--output-format", "stream-json"],
    );
    assert_exit(&out, 0);
    let again = json_lines(&out.stdout)
        .into_iter()
        .filter(|l| l["type"] == "hook")
        .count();
    assert_eq!(again, 0, "{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        !server.chat_requests()[1]
            .last_user_text()
            .contains("You have superpowers.")
    );
}
