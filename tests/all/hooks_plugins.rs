//! Real Claude Code plugins' hooks, nobody here wrote them, run unchanged through the
//! binary from config.toml's `[hooks]` (tests/fixtures/claude-plugins, see its
//! SOURCE.md): hookify's PreToolUse guard blocks `rm -rf`, security-guidance's
//! PostToolUse adds a warning for the model after a write, hookify's and
//! security-guidance's UserPromptSubmit hooks run and let the prompt through, and
//! hookify's Stop rule keeps the agent going until the transcript shows the tests ran.
//! Each plugin is copied to a folder of its own first (python writes its bytecode
//! beside the scripts), as an installed plugin would be.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::support::*;

/// A copy of plugin `name` in `into`; returns its root (`CLAUDE_PLUGIN_ROOT`).
fn installed(name: &str, into: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-plugins");
    copy_tree(&from.join(name), &into.join(name));
    into.join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// One `[[hooks.EVENT]]` group running the plugin's command line as its hooks.json
/// writes it, `${CLAUDE_PLUGIN_ROOT}` given as the variable the plugin reads.
fn plugin_hook(event: &str, matcher: &str, root: &Path, command: &str) -> String {
    let line = format!(
        "CLAUDE_PLUGIN_ROOT='{root}' {}",
        command.replace("${CLAUDE_PLUGIN_ROOT}", &root.display().to_string()),
        root = root.display()
    );
    format!(
        "[[hooks.{event}]]\nmatcher = \"{matcher}\"\n[[hooks.{event}.hooks]]\ntype = \
         \"command\"\ncommand = '''{line}'''\ntimeout = 30\n"
    )
}

/// A hookify rule file in the project, from the plugin's own example.
fn hookify_rule(dirs: &Dirs, root: &Path, example: &str, enable: bool) {
    let text = std::fs::read_to_string(root.join("examples").join(example)).unwrap();
    let text = if enable {
        text.replace("enabled: false", "enabled: true")
    } else {
        text
    };
    dirs.project_file(&format!(".claude/hookify.{example}"), &text);
}

#[test]
fn hookifys_pre_tool_use_guard_blocks_rm_rf() {
    let dirs = Dirs::new();
    let plugins = tempfile::tempdir().unwrap();
    let root = installed("hookify", plugins.path());
    hookify_rule(&dirs, &root, "dangerous-rm.local.md", false);
    dirs.project_file("keep/file", "x\n");
    dirs.home_file(
        "config.toml",
        &plugin_hook(
            "PreToolUse",
            "",
            &root,
            "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/pretooluse.py",
        ),
    );
    let (out, tool) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "rm -rf keep",
        &["--approval-mode", "full-auto"],
        &[],
    );
    assert!(dirs.project().join("keep/file").exists(), "{tool}");
    assert_has(
        &tool,
        &[
            "PreToolUse hook blocked",
            "block-dangerous-rm",
            "Dangerous rm command",
        ],
    );
    assert_has(&stderr_text(&out), &["blocked bash"]);
    // Another command goes through.
    let (_, tool) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "echo still-allowed",
        &["--approval-mode", "full-auto"],
        &[],
    );
    assert!(tool.contains("still-allowed"), "{tool}");
}

#[test]
fn security_guidances_post_tool_use_warns_the_model_after_a_write() {
    let dirs = Dirs::new();
    let plugins = tempfile::tempdir().unwrap();
    let root = installed("security-guidance", plugins.path());
    let hook = "bash \"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\" \
                \"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\"";
    dirs.home_file(
        "config.toml",
        &plugin_hook(
            "PostToolUse",
            "Edit|Write|MultiEdit|NotebookEdit",
            &root,
            hook,
        ),
    );
    let write = serde_json::json!({
        "path": "run.py",
        "content": "import os\nos.system(\"ls \" + name)\n",
    })
    .to_string();
    let (_, tool) = MockServer::start(vec![]).one_call(
        (dirs.home(), dirs.project()),
        ("write_file", &write),
        &["--approval-mode", "full-auto"],
        &[],
    );
    assert!(dirs.project().join("run.py").exists(), "{tool}");
    let hook_at = tool.find("<hook-output event=\"PostToolUse\"").unwrap();
    assert_has(
        &tool[hook_at..],
        &["security-guidance", "os.system()", "command-injection"],
    );
}

#[test]
fn user_prompt_submit_hooks_of_two_plugins_run_and_let_the_prompt_through() {
    let dirs = Dirs::new();
    let plugins = tempfile::tempdir().unwrap();
    let hookify = installed("hookify", plugins.path());
    let guidance = installed("security-guidance", plugins.path());
    let config = format!(
        "{}\n{}",
        plugin_hook(
            "UserPromptSubmit",
            "",
            &hookify,
            "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/userpromptsubmit.py",
        ),
        plugin_hook(
            "UserPromptSubmit",
            "",
            &guidance,
            "bash \"${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh\" \
             \"${CLAUDE_PLUGIN_ROOT}/hooks/security_reminder_hook.py\"",
        ),
    );
    dirs.home_file("config.toml", &config);
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(
        &dirs,
        &["-p", "hello there", "--output-format", "stream-json"],
    );
    assert_exit(&out, 0);
    assert_eq!(server.chat_requests().len(), 1);
    let hooks: Vec<serde_json::Value> = json_lines(&out.stdout)
        .into_iter()
        .filter(|l| l["type"] == "hook")
        .collect();
    assert_eq!(hooks.len(), 2, "{hooks:?}");
    for hook in &hooks {
        assert_eq!(hook["event"], "UserPromptSubmit");
        assert_eq!(hook["result"]["kind"], "answered", "{hook}");
    }
}

/// hookify's Stop rule (its own example, enabled) blocks the stop while the transcript
/// shows no test run; its reason, which names the test commands, goes to the model as
/// the next message and into the transcript, so the next stop passes. (The example's
/// pattern `npm test|pytest|cargo test` under `not_contains` is compared as one literal
/// string by hookify, so it would never let the agent stop, in Claude Code too: the
/// rule here names one command.)
#[test]
fn hookifys_stop_rule_keeps_the_agent_going_until_the_transcript_shows_tests() {
    let dirs = Dirs::new();
    let plugins = tempfile::tempdir().unwrap();
    let root = installed("hookify", plugins.path());
    hookify_rule(&dirs, &root, "require-tests-stop.local.md", true);
    let rule = dirs
        .project()
        .join(".claude/hookify.require-tests-stop.local.md");
    let text = std::fs::read_to_string(&rule).unwrap();
    std::fs::write(
        &rule,
        text.replace("pattern: npm test|pytest|cargo test", "pattern: cargo test"),
    )
    .unwrap();
    dirs.home_file(
        "config.toml",
        &plugin_hook(
            "Stop",
            "",
            &root,
            "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/stop.py",
        ),
    );
    let server = MockServer::start(vec![answer("all done"), answer("ran them now")]);
    // The transcript is the session file under the harness9 home, which the sandbox
    // hides from the commands it confines (hooks among them).
    let out = server.run(&dirs, &["-p", "fix it", "--sandbox", "off"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout_text(&out).trim(),
        "ran them now",
        "{}",
        stderr_text(&out)
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_has(
        &requests[1].last_user_text(),
        &[
            "<hook-output event=\"Stop\"",
            "require-tests-run",
            "Tests not detected",
        ],
    );
    assert_has(&stderr_text(&out), &["keeps the agent going"]);
}

/// ralph-wiggum's Stop hook runs unchanged, but reads the transcript as Claude Code
/// writes it (an assistant message's `content` as a list of blocks); harness9's
/// session file holds it as text, so the hook's `jq` fails (exit 5): it is a plain
/// hook, so the failure is reported and the agent stops — no loop runs on a transcript
/// it cannot read.
#[test]
fn ralph_wiggums_stop_hook_runs_but_cannot_read_harness9s_transcript() {
    let dirs = Dirs::new();
    let plugins = tempfile::tempdir().unwrap();
    let root = installed("ralph-wiggum", plugins.path());
    let setup = std::process::Command::new("bash")
        .arg(root.join("scripts/setup-ralph-loop.sh"))
        .args(["Fix the build", "--max-iterations", "3"])
        .current_dir(dirs.project())
        .output()
        .unwrap();
    assert!(setup.status.success(), "{setup:?}");
    dirs.home_file(
        "config.toml",
        &plugin_hook(
            "Stop",
            "",
            &root,
            "${CLAUDE_PLUGIN_ROOT}/hooks/stop-hook.sh",
        ),
    );
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    let out = server.run(&dirs, &["-p", "go", "--sandbox", "off"]);
    assert_exit(&out, 0);
    assert_eq!(server.chat_requests().len(), 1);
    assert_has(
        &stderr_text(&out),
        &["(Stop) failed", "code 5", "the stop goes on"],
    );
}
