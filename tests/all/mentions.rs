//! `@path` mentions through the real binary: in `-p` and in pipe mode the mentioned
//! files' text and folders' listings reach the model after the message, and a mention
//! of nothing is a clear error with nothing sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use crate::support::*;

#[test]
fn mentioned_files_and_folders_reach_the_model_and_a_missing_one_stops_the_message() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(
        &project.path().join("src/lib.rs"),
        "pub fn answer() -> u32 { 42 }\n",
    );
    let server = MockServer::start(vec![sse(vec![text("ok"), finish("stop")])]);
    let out = server
        .harness9(home.path(), project.path())
        .args(["-p", "what does @src/lib.rs return? see @src."])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let sent = server.chat_requests()[0].last_user_text();
    assert!(
        sent.starts_with("what does @src/lib.rs return? see @src.\n\n"),
        "{sent}"
    );
    assert!(
        sent.contains("<file path=\"src/lib.rs\">\npub fn answer() -> u32 { 42 }\n</file>"),
        "{sent}"
    );
    assert!(
        sent.contains("<folder path=\"src\">\nlib.rs\n</folder>"),
        "{sent}"
    );

    // Pipe mode: the same message router.
    let server = MockServer::start(vec![]);
    let child = spawn_fed(
        server.harness9(home.path(), project.path()).arg("--no-tui"),
        b"explain @src/nope.rs\n",
    );
    let out = wait_with_deadline(child, std::time::Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("@src/nope.rs: no such file or folder in "),
        "{stderr}"
    );
    assert!(server.chat_requests().is_empty());
}
