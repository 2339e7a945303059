//! Claude Code commands (`.claude/commands/*.md`) end to end through the real binary
//! against the scripted server: commands copied from a public repository run as
//! `/name args` and the request carries their expanded text; `$1`.. and `@path`
//! expand; `!`cmd`` never runs by itself; `allowed-tools` pre-approve a call only for
//! the user's own commands, never past a deny rule; `skills list` shows their kind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::support::*;

/// The command files copied from a public repository (see the README beside them).
fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-commands/react-native-track-player/.claude/commands")
}

fn copy_fixture(project: &Path) {
    let to = project.join(".claude/commands");
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(fixture()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Every request's body as text, joined.
fn all_requests(server: &MockServer) -> String {
    server
        .chat_requests()
        .iter()
        .map(|r| r.raw_body.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_real_repositorys_commands_run_as_slash_commands_with_their_text() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    copy_fixture(dirs.project());
    let marker = dirs.project().join("ran");
    let server = MockServer::start(vec![]);

    let out = server.run(&dirs, &["-p", "/ios-build for the simulator"]);
    assert_exit(&out, 0);
    let user = server.chat_requests()[0].message_text(1);
    assert_eq!(
        user,
        "Run `yarn ios:rebuild` to rebuild the iOS app with pod install and check for any \
         compilation errors.\n\nfor the simulator"
    );

    // `!`git status`` and friends are judged like the model's bash calls: print mode
    // asks nobody, so each stays as text with a note, and nothing runs.
    let out = server.run(&dirs, &["-p", "/review-staged"]);
    assert_exit(&out, 0);
    let user = server.chat_requests()[1].message_text(1);
    assert_has(
        &user,
        &[
            "## Context",
            "- Current git status: [inline command `git status` not run: approval mode suggest \
             does not allow commands]",
            "- Do a code review of what changed",
        ],
    );
    assert!(!user.contains("allowed-tools"), "{user}");
    // The repository's allowed-tools pre-approve nothing, and the user is told.
    assert_has(
        &stderr_text(&out),
        &[
            "/review-staged: its allowed-tools (Bash(git add:*), Bash(git status:*)) were not pre-approved",
        ],
    );
    assert!(!marker.exists());

    // The model sees the described commands in its index; `skills list` shows them
    // with their kind.
    let system = server.chat_requests()[0].message_text(0);
    assert_has(
        &system,
        &[
            "commit",
            "Create a git commit from the staged changes",
            "review-staged",
        ],
    );
    let out = dirs.run(&["skills", "list"]);
    assert_exit(&out, 0);
    let listed = stdout_text(&out);
    for name in ["commit", "ios-build", "review-staged"] {
        assert!(
            listed.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.first() == Some(&name) && cols.get(1) == Some(&"command")
            }),
            "{name}: {listed}"
        );
    }
    let out = dirs.run(&["skills", "show", "commit"]);
    assert_exit(&out, 0);
    assert_has(
        &stdout_text(&out),
        &[
            "kind: command",
            "allowed-tools: Bash(git add:*), Bash(git status:*)",
            "## Steps",
        ],
    );
}

#[test]
fn positional_arguments_and_mentions_expand_and_mentions_keep_their_guards() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    dirs.project_file(
        ".claude/commands/fix.md",
        "---\ndescription: Fix an issue\nargument-hint: [issue] [priority]\n---\n\
         Fix issue #$1 with priority $2 ($ARGUMENTS). Notes: @notes.txt\n",
    );
    dirs.project_file("notes.txt", "the notes say 42\n");
    dirs.project_file(".claude/commands/leak.md", "Summarise @.env\n");
    dirs.project_file(".env", "API_TOKEN=very-secret-value\n");
    let server = MockServer::start(vec![]);

    let out = server.run(&dirs, &["-p", "/fix 7 high"]);
    assert_exit(&out, 0);
    let user = server.chat_requests()[0].message_text(1);
    assert_has(
        &user,
        &[
            "Fix issue #7 with priority high (7 high). Notes: @notes.txt",
            "the notes say 42",
        ],
    );

    // A secret file named by a repository's command is judged like a read: nobody can
    // approve it in print mode, so nothing is sent.
    let before = server.chat_requests().len();
    let out = server.run(&dirs, &["-p", "/leak"]);
    assert_ne!(out.status.code(), Some(0), "{}", stderr_text(&out));
    assert_eq!(server.chat_requests().len(), before);
    assert!(!all_requests(&server).contains("very-secret-value"));
}

/// What an inline command prints is never read for mentions: a `git log` line holding
/// `@file` must not attach the file. Mentions in the command's own text and in the
/// arguments still attach.
#[test]
fn an_inline_commands_output_never_becomes_a_mention() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    dirs.project_file(
        ".claude/commands/show.md",
        "Log: !`printf '%s' '@notes.txt'`\nWritten: @written.txt\nAsked: $ARGUMENTS\n",
    );
    dirs.project_file("notes.txt", "printed-mention-content\n");
    dirs.project_file("written.txt", "written-mention-content\n");
    dirs.project_file("asked.txt", "argument-mention-content\n");
    let server = MockServer::start(vec![]);

    let out = server.run(
        &dirs,
        &["--approval-mode", "full-auto", "-p", "/show @asked.txt"],
    );
    assert_exit(&out, 0);
    let user = server.chat_requests()[0].message_text(1);
    assert_has(
        &user,
        &[
            "Log: @notes.txt",
            "written-mention-content",
            "argument-mention-content",
        ],
    );
    assert!(!user.contains("printed-mention-content"), "{user}");
}

/// Runs `/make` in print mode while the model calls `bash` with `touch made.txt`;
/// returns whether the file was made.
fn touch_through_command(dirs: &Dirs) -> bool {
    let server = MockServer::start(vec![
        tool_reply("c1", "bash", r#"{"command":"touch made.txt"}"#),
        answer("done"),
    ]);
    let out = server.run(dirs, &["-p", "/make"]);
    assert_exit(&out, 0);
    dirs.project().join("made.txt").exists()
}

const MAKE: &str = "---\ndescription: Make the file\nallowed-tools: Bash(touch:*)\n---\nMake it.\n";

#[test]
fn the_users_own_command_pre_approves_its_tools_for_its_turn() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    dirs.home_file(".claude/commands/make.md", MAKE);
    assert!(touch_through_command(&dirs), "the grant did not apply");
    // Without the command, the same call is denied (print mode asks nobody).
    let server = MockServer::start(vec![
        tool_reply("c1", "bash", r#"{"command":"touch other.txt"}"#),
        answer("done"),
    ]);
    let out = server.run(&dirs, &["-p", "make it"]);
    assert_exit(&out, 0);
    assert!(!dirs.project().join("other.txt").exists());
}

#[test]
fn a_repositorys_command_pre_approves_nothing() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    dirs.project_file(".claude/commands/make.md", MAKE);
    assert!(!touch_through_command(&dirs), "a repository granted a tool");
}

#[test]
fn a_deny_rule_wins_over_a_commands_grant() {
    let dirs = Dirs::with_config("max_retries = 0\n[permissions]\ndeny = [\"bash(touch:*)\"]\n");
    dirs.home_file(".claude/commands/make.md", MAKE);
    assert!(
        !touch_through_command(&dirs),
        "the grant widened past a deny rule"
    );
}
