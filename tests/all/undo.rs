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
