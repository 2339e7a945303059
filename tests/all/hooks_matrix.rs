//! The fail-closed matrix through the real binary: a PreToolUse hook that cannot give
//! an answer (its script missing, crashing, timing out, printing JSON that does not
//! parse, exiting 1) denies the call when it is a guard (`on_error = "deny"`) and lets it
//! run when it is not; exit 2 blocks either way. The call is a read inside the project,
//! which every approval mode runs by itself, so only the hook decides; every mode is
//! run headless (`-p`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::*;

/// How the hook ends, and whether that is an answer.
struct Case {
    name: &'static str,
    /// The script's body (`None`: the script does not exist).
    body: Option<&'static str>,
    /// Exit 2: a block, whatever the hook's role.
    blocks: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "missing",
        body: None,
        blocks: false,
    },
    Case {
        name: "crash",
        body: Some("cat > /dev/null\nkill -SEGV $$"),
        blocks: false,
    },
    Case {
        name: "timeout",
        body: Some("cat > /dev/null\nexec sleep 30"),
        blocks: false,
    },
    Case {
        name: "bad-json",
        body: Some("cat > /dev/null\necho '{\"permissionDecision\": '"),
        blocks: false,
    },
    Case {
        name: "exit-1",
        body: Some("cat > /dev/null\necho oops >&2\nexit 1"),
        blocks: false,
    },
    Case {
        name: "exit-2",
        body: Some("cat > /dev/null\necho 'reading is blocked here' >&2\nexit 2"),
        blocks: true,
    },
];

const MODES: &[&str] = &["suggest", "auto-edit", "full-auto", "plan"];

fn hook_script(dir: &Path, case: &Case) -> PathBuf {
    let path = dir.join(format!("{}.sh", case.name));
    if let Some(body) = case.body {
        std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// Runs one `read_file` call in `mode` with the hook configured as `on_error`; returns
/// the tool result the model got.
fn read_with_hook(dirs: &Dirs, hook: &Path, on_error: &str, mode: &str) -> String {
    dirs.home_file(
        "config.toml",
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Read\"\n[[hooks.PreToolUse.hooks]]\ntype = \
             \"command\"\ncommand = \"{}\"\non_error = \"{on_error}\"\ntimeout = 1\n",
            hook.display()
        ),
    );
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#),
        answer("done"),
    ]);
    let out = server.run(dirs, &["--approval-mode", mode, "-p", "read the notes"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "{}", stderr_text(&out));
    requests[1].tool_result("c1")
}

#[test]
fn a_guard_that_cannot_answer_denies_in_every_mode_and_a_plain_hook_does_not() {
    let dirs = Dirs::new();
    dirs.project_file("notes.txt", "the-secret-of-the-notes\n");
    let scripts = tempfile::tempdir().unwrap();
    for case in CASES {
        let hook = hook_script(scripts.path(), case);
        for mode in MODES {
            let guarded = read_with_hook(&dirs, &hook, "deny", mode);
            assert!(
                !guarded.contains("the-secret-of-the-notes"),
                "{} guard in {mode} let the read through: {guarded}",
                case.name
            );
            let plain = read_with_hook(&dirs, &hook, "continue", mode);
            assert_eq!(
                !plain.contains("the-secret-of-the-notes"),
                case.blocks,
                "{} plain hook in {mode}: {plain}",
                case.name
            );
            if case.blocks {
                assert!(plain.contains("reading is blocked here"), "{plain}");
            }
        }
    }
}
