//! `/diff` and `/undo` through the real binary in pipe mode: a turn changes files with
//! `bash` (no edit tool involved), `/diff` shows it, `/undo` puts the files back and
//! removes what the turn created, and the model hears of it with the next message;
//! ignored files stay as they are.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::*;

#[test]
fn undo_puts_back_what_a_command_changed_and_the_model_hears_of_it() {
    let dirs = Dirs::new();
    let p = dirs.project();
    write(&p.join("keep.txt"), "original\n");
    write(&p.join("gone.txt"), "still here\n");
    write(&p.join(".gitignore"), "build/\n");
    write(&p.join("build/out"), "old build\n");
    let command = "printf 'changed\\n' > keep.txt && rm gone.txt && printf 'new\\n' > made.txt \
                   && printf 'new build\\n' > build/out";
    let server = MockServer::start(vec![
        tool_reply(
            "c1",
            "bash",
            &serde_json::json!({ "command": command }).to_string(),
        ),
        answer("changed them"),
        answer("noted"),
    ]);
    let child = spawn_fed(
        server
            .harness9(dirs.home(), p)
            .args(["--no-tui", "--approval-mode", "full-auto"]),
        b"change the files\n/diff\n/undo\nwhat now?\n",
    );
    let out = wait_with_deadline(child, std::time::Duration::from_secs(60));
    assert_exit(&out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("-original\n+changed"), "{stdout}");
    assert!(stdout.contains("+++ b/made.txt"), "{stdout}");
    assert!(stdout.contains("Undid the last turn's changes: put back 2 file(s): gone.txt, keep.txt; removed 1 file(s) it created: made.txt."), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(p.join("keep.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.join("gone.txt")).unwrap(),
        "still here\n"
    );
    assert!(!p.join("made.txt").exists());
    // Ignored files are not the undo's business.
    assert_eq!(
        std::fs::read_to_string(p.join("build/out")).unwrap(),
        "new build\n"
    );
    // The model is told with the next message, and nothing is left under the home.
    let last = server.chat_requests().last().unwrap().last_user_text();
    assert!(last.starts_with("[The user ran /undo"), "{last}");
    assert!(last.ends_with("what now?"), "{last}");
    let snapshots = dirs.home().join("snapshots");
    assert!(
        std::fs::read_dir(&snapshots).map_or(true, |d| d.count() == 0),
        "the store outlived the session"
    );
}

/// Runs the binary in pipe mode in `dirs` against `server` (plus `args`), feeding `stdin`.
fn pipe(server: &MockServer, dirs: &Dirs, args: &[&str], stdin: &str) -> std::process::Output {
    let child = spawn_fed(
        server
            .harness9(dirs.home(), dirs.project())
            .args(["--no-tui"])
            .args(args),
        stdin.as_bytes(),
    );
    let out = wait_with_deadline(child, std::time::Duration::from_secs(60));
    assert_exit(&out, 0);
    out
}

/// A model that makes one bash call running `command`, then answers.
fn one_command(command: &str) -> Vec<Reply> {
    vec![
        tool_reply(
            "c1",
            "bash",
            &serde_json::json!({ "command": command }).to_string(),
        ),
        answer("done"),
    ]
}

#[test]
fn an_undo_is_saved_so_a_resumed_session_tells_the_model() {
    let dirs = Dirs::new();
    let server = MockServer::start(one_command("printf 'x\\n' > made.txt"));
    pipe(
        &server,
        &dirs,
        &["--approval-mode", "full-auto"],
        "make it\n/undo\n",
    );
    assert!(!dirs.project().join("made.txt").exists());
    let server = MockServer::start(vec![answer("ok")]);
    pipe(&server, &dirs, &["-c"], "is made.txt there?\n");
    let last = server.chat_requests()[0].last_user_text();
    assert!(last.starts_with("[The user ran /undo"), "{last}");
    assert!(last.contains("made.txt"), "{last}");
    assert!(last.ends_with("is made.txt there?"), "{last}");
}

#[test]
fn undo_removes_the_folders_it_created_and_then_says_nothing_is_left() {
    let dirs = Dirs::new();
    let server = MockServer::start(one_command(
        "mkdir -p new/deep && printf 'x\\n' > new/deep/f",
    ));
    let out = pipe(
        &server,
        &dirs,
        &["--approval-mode", "full-auto"],
        "make it\n/undo\n/undo\n",
    );
    assert!(
        !dirs.project().join("new").exists(),
        "the folders it made are gone"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("removed 2 empty folder(s) it created: new, new/deep"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("no turn of this session changed a file"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Nothing left to undo: the turn that changed files was undone already"),
        "{stdout}"
    );
}

#[test]
fn a_skill_run_right_after_an_undo_carries_the_note() {
    let dirs = Dirs::new();
    project_skill(
        dirs.project(),
        "hello",
        "Say hello",
        "Say hello to the user.",
    );
    let mut replies = one_command("printf 'x\\n' > made.txt");
    replies.push(answer("hello!"));
    let server = MockServer::start(replies);
    pipe(
        &server,
        &dirs,
        &["--approval-mode", "full-auto"],
        "make it\n/undo\n/hello\n",
    );
    let last = server.chat_requests().last().unwrap().last_user_text();
    assert!(last.starts_with("[The user ran /undo"), "{last}");
    assert!(last.contains("Say hello to the user."), "{last}");
}
