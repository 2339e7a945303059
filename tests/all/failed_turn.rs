//! The note about a failed turn's messages, through the real binary: in the REPL it
//! follows the error it explains and counts one message as one; in `-p`, where no
//! prompt follows, there is none.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::*;

#[test]
fn in_the_repl_the_note_follows_the_error_and_says_1_message() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![http_error(400), answer("fine now")]);
    let child = spawn_fed(server.binary(&dirs).args(["--no-tui"]), b"first\nsecond\n");
    let out = wait_with_deadline(child, Duration::from_secs(60));
    let stderr = stderr_text(&out);
    let error = stderr.find("mock error 400").expect(&stderr);
    let note = stderr
        .find("this turn failed, so its 1 message will not be sent again")
        .expect(&stderr);
    assert!(
        error < note,
        "the note comes after the error it explains: {stderr}"
    );
    assert!(!stderr.contains("1 messages"), "{stderr}");
    assert!(stdout_text(&out).contains("fine now"));
}

#[test]
fn print_mode_has_no_retry_note() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![http_error(400)]);
    let out = server.run(&dirs, &["-p", "go"]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = stderr_text(&out);
    assert!(stderr.contains("mock error 400"), "{stderr}");
    assert!(!stderr.contains("will not be sent again"), "{stderr}");
    assert!(!stderr.contains("next prompt"), "{stderr}");
}
