//! `!cmd` shell mode through the real binary in pipe mode: the command is the user's
//! `bash` call, judged and run exactly as the model's would be (a deny rule keeps it
//! from running, the sandbox confines it in `full-auto`, nobody is asked in a pipe), and
//! what it printed reaches the model with the next message, saved so `-c` keeps it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;
use std::time::Duration;

use crate::support::*;

/// Runs the binary in pipe mode in `dirs` against `server` with `args`, feeding `stdin`.
fn pipe(server: &MockServer, dirs: &Dirs, args: &[&str], stdin: &str) -> Output {
    let child = spawn_fed(
        server.binary(dirs).args(["--no-tui"]).args(args),
        stdin.as_bytes(),
    );
    wait_with_deadline(child, Duration::from_secs(60))
}

const FULL_AUTO: &[&str] = &["--approval-mode", "full-auto"];

#[test]
fn a_bang_command_runs_makes_no_request_and_its_output_reaches_the_next_one() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![answer("seen it")]);
    let out = pipe(
        &server,
        &dirs,
        FULL_AUTO,
        "!echo SHELL-MARK-42 > made.txt; cat made.txt; exit 3\nwhat did it print?\n",
    );
    assert_exit(&out, 0);
    assert_eq!(
        std::fs::read_to_string(dirs.project().join("made.txt")).unwrap(),
        "SHELL-MARK-42\n"
    );
    let requests = server.chat_requests();
    assert_eq!(
        requests.len(),
        1,
        "the command itself asked the model nothing"
    );
    let user = requests[0].last_user_text();
    assert!(
        user.starts_with("[The user ran a shell command themselves"),
        "{user}"
    );
    assert!(user.contains("SHELL-MARK-42\n[exit code 3]"), "{user}");
    assert!(user.contains("it failed"), "{user}");
    assert!(user.ends_with("what did it print?"), "{user}");

    // Saved: a resumed session sends the same message again.
    let server = MockServer::start(vec![answer("again")]);
    let out = pipe(&server, &dirs, &["-c"], "and now?\n");
    assert_exit(&out, 0);
    let sent = server.everything_sent();
    assert!(sent.contains("SHELL-MARK-42"), "{sent}");
}

#[test]
fn a_command_noted_but_not_yet_sent_is_delivered_after_resume() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![]);
    let out = pipe(&server, &dirs, FULL_AUTO, "hello\n!echo LATE-NOTE-7\n");
    assert_exit(&out, 0);
    let server = MockServer::start(vec![answer("ok")]);
    let out = pipe(&server, &dirs, &["-c"], "next\n");
    assert_exit(&out, 0);
    let user = server.chat_requests()[0].last_user_text();
    assert!(user.contains("LATE-NOTE-7"), "{user}");
    assert!(user.ends_with("next"), "{user}");
}

#[test]
fn a_deny_rule_keeps_the_users_command_from_running() {
    let dirs = Dirs::with_config("[permissions]\ndeny = [\"bash(touch:*)\"]\n");
    let server = MockServer::start(vec![answer("ok")]);
    let out = pipe(&server, &dirs, FULL_AUTO, "!touch denied.txt\nnext\n");
    assert_exit(&out, 0);
    assert!(!dirs.project().join("denied.txt").exists());
    let stderr = stderr_text(&out);
    assert!(stderr.contains("touch"), "{stderr}");
    let user = server.chat_requests()[0].last_user_text();
    assert_eq!(user, "next", "a command that did not run is no news");
}

#[test]
fn in_a_pipe_nobody_approves_the_users_command_in_suggest_mode() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![]);
    let out = pipe(&server, &dirs, &[], "!touch unasked.txt\n");
    assert!(!dirs.project().join("unasked.txt").exists());
    assert!(server.chat_requests().is_empty());
    let stderr = stderr_text(&out);
    assert!(stderr.contains("denied"), "{stderr}");
}

#[test]
fn the_sandbox_confines_the_users_command() {
    let dirs = Dirs::new();
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().join("escaped.txt");
    let server = MockServer::start(vec![answer("ok")]);
    let line = format!("!touch {} ; echo inside > in.txt\nnext\n", target.display());
    let out = pipe(&server, &dirs, FULL_AUTO, &line);
    assert_exit(&out, 0);
    assert!(!target.exists(), "the sandbox let the user's command out");
    assert!(dirs.project().join("in.txt").exists());
    let user = server.chat_requests()[0].last_user_text();
    assert!(
        user.contains("Permission denied") || user.contains("Read-only file system"),
        "{user}"
    );
}

#[test]
fn a_bare_bang_runs_nothing_and_print_mode_refuses_shell_mode() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![answer("ok")]);
    let out = pipe(&server, &dirs, FULL_AUTO, "!\nhi\n");
    assert_exit(&out, 0);
    assert!(stderr_text(&out).contains("runs a shell command"));
    assert_eq!(server.chat_requests()[0].last_user_text(), "hi");

    let out = server.run(
        &dirs,
        &["-p", "!touch p.txt", "--approval-mode", "full-auto"],
    );
    assert_exit(&out, 2);
    assert!(!dirs.project().join("p.txt").exists());
    assert!(stderr_text(&out).contains("shell mode"));
}
