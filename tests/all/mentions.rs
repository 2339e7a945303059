//! `@path` mentions through the real binary: typed mentions attach the files' text and
//! folders' listings after the message; a mention of nothing is a clear error with
//! nothing sent; text that arrived on stdin (the context of `-p PROMPT`, the prompt of
//! `-p -`, every line of the pipe REPL) is data whose mentions are never read; a typed
//! mention of a file outside the project or of a secret file asks, so with nobody to
//! answer it is refused with what would allow it, and a rule can allow it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use harness9::agent::Approver;
use harness9::protocol::{ApprovalDecision, ApprovalRequestKind, Event, Op, TurnOutcome};

use crate::support::*;

/// Markers the files hold: none may ever reach the server unless attached on purpose.
const HOME_SECRET: &str = "HOME-SECRET-7f3a";
const INSIDE: &str = "INSIDE-TEXT-91c2";
const OUTSIDE: &str = "OUTSIDE-TEXT-44de";
const DOTENV: &str = "DOTENV-KEY-0b5e";

/// A home with `~/secret.txt` and `~/notes/a.txt` (harness9's own home apart, as it is
/// usually `~/.harness9`), a project with `inside.txt`, `.env` and links to both secrets,
/// and a folder outside both with `outside.txt`.
struct World {
    /// harness9's own home and the project.
    dirs: Dirs,
    home: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let Outside { dirs, outside } = Outside::new();
        let home = tempfile::tempdir().unwrap();
        let world = World {
            dirs,
            home,
            outside,
        };
        write(&world.home.path().join("secret.txt"), HOME_SECRET);
        write(&world.home.path().join("notes/a.txt"), HOME_SECRET);
        write(&world.dirs.project().join("inside.txt"), INSIDE);
        write(&world.dirs.project().join(".env"), DOTENV);
        write(&world.outside.path().join("outside.txt"), OUTSIDE);
        std::os::unix::fs::symlink(".env", world.dirs.project().join("notes.txt")).unwrap();
        std::os::unix::fs::symlink(
            world.outside.path().join("outside.txt"),
            world.dirs.project().join("docs.txt"),
        )
        .unwrap();
        world
    }

    fn outside_file(&self) -> String {
        self.outside
            .path()
            .join("outside.txt")
            .display()
            .to_string()
    }

    /// `harness9 ARGS` with `stdin`, against `server`, with a deadline.
    fn run(&self, server: &MockServer, args: &[&str], stdin: &[u8]) -> Output {
        let mut cmd = server.binary(&self.dirs);
        cmd.env("HOME", self.home.path()).args(args);
        run_fed(&mut cmd, stdin)
    }
}

#[test]
fn mentioned_files_and_folders_reach_the_model_and_a_missing_one_stops_the_message() {
    let dirs = Dirs::new();
    dirs.project_file("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(&dirs, &["-p", "what does @src/lib.rs return? see @src."]);
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

    let server = MockServer::start(vec![]);
    let out = server.run(&dirs, &["-p", "explain @src/nope.rs"]);
    assert_exit(&out, 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("@src/nope.rs: no such file or folder in "),
        "{stderr}"
    );
    assert!(server.chat_requests().is_empty());
}

/// The reported attack and its family: mentions in piped text, in every way text
/// arrives on stdin, naming a file in the home, one in the project, one outside, a
/// secret, and links to them. None is read; the text itself is sent as it is.
#[test]
fn mentions_in_piped_text_are_never_read() {
    let world = World::new();
    let mentions = format!(
        "logs: @~/secret.txt @inside.txt @{} @.env @notes.txt @docs.txt @\"inside.txt\"",
        world.outside_file()
    );
    let piped_line = format!("{mentions}\n");
    for (how, args, stdin) in [
        (
            "-p PROMPT with stdin",
            vec!["-p", "summarize"],
            piped_line.clone(),
        ),
        ("-p -", vec!["-p", "-"], piped_line.clone()),
        (
            "-p with an empty argument",
            vec!["-p", ""],
            piped_line.clone(),
        ),
        ("the pipe REPL", vec!["--no-tui"], piped_line.clone()),
        (
            "-p PROMPT in full-auto",
            vec!["-p", "summarize", "--approval-mode", "full-auto"],
            piped_line.clone(),
        ),
    ] {
        let server = MockServer::start(vec![answer("ok")]);
        let out = world.run(&server, &args, stdin.as_bytes());
        assert_exit(&out, 0);
        let sent = server.everything_sent();
        for marker in [HOME_SECRET, INSIDE, OUTSIDE, DOTENV] {
            assert!(!sent.contains(marker), "{how}: {marker} was sent:\n{sent}");
        }
        let user = server.chat_requests()[0].last_user_text();
        assert!(
            user.contains(&mentions),
            "{how}: the text goes as it is:\n{user}"
        );
        assert!(!user.contains("<file path="), "{how}:\n{user}");
    }
}

/// A typed mention of a file outside the project or a secret file needs a person: `-p`
/// refuses it, names it and says how to allow it, and sends nothing.
#[test]
fn typed_mentions_outside_the_project_or_of_secret_files_are_refused_unattended() {
    let world = World::new();
    let outside = format!("see @{}", world.outside_file());
    for (prompt, named, hint) in [
        ("see @~/secret.txt", "@~/secret.txt", "read("),
        (outside.as_str(), "outside.txt", "read("),
        ("see @.env", "@.env", "asks about it every time"),
        // Through a link in the project: judged by where it leads.
        ("see @notes.txt", "@notes.txt", "asks about it every time"),
        ("see @docs.txt", "@docs.txt", "read("),
        ("see @../", "@../", "read("),
    ] {
        let server = MockServer::start(vec![]);
        let out = world.run(&server, &["-p", prompt], b"");
        assert_exit(&out, 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(named) && stderr.contains("not attached") && stderr.contains(hint),
            "{prompt}: {stderr}"
        );
        assert!(stderr.contains("nothing was sent"), "{prompt}: {stderr}");
        assert!(server.chat_requests().is_empty(), "{prompt}");
    }
    // The link's message shows where it leads.
    let server = MockServer::start(vec![]);
    let out = world.run(&server, &["-p", "see @docs.txt"], b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("docs.txt -> "), "{stderr}");
}

#[test]
fn a_rule_or_full_auto_lets_a_typed_mention_outside_the_project_through() {
    let world = World::new();
    write(
        &world.dirs.home().join("config.toml"),
        "[permissions]\nallow = [\"read(~/notes/**)\"]\n",
    );
    let server = MockServer::start(vec![answer("ok")]);
    let out = world.run(&server, &["-p", "see @~/notes/a.txt"], b"");
    assert_exit(&out, 0);
    assert!(server.everything_sent().contains(HOME_SECRET));
    // The rule covers that folder only.
    let server = MockServer::start(vec![]);
    let out = world.run(&server, &["-p", "see @~/secret.txt"], b"");
    assert_exit(&out, 2);
    // full-auto reads outside the project, as read_file does; a secret still asks.
    let outside = format!("see @{}", world.outside_file());
    let server = MockServer::start(vec![answer("ok")]);
    let out = world.run(
        &server,
        &["-p", &outside, "--approval-mode", "full-auto"],
        b"",
    );
    assert_exit(&out, 0);
    assert!(server.everything_sent().contains(OUTSIDE));
    let server = MockServer::start(vec![]);
    let out = world.run(
        &server,
        &["-p", "see @notes.txt", "--approval-mode", "full-auto"],
        b"",
    );
    assert_exit(&out, 2);
    assert!(!server.everything_sent().contains(DOTENV));
}

/// With a person to ask, the mention is asked about through the same approval flow as
/// a tool call: the request names the real file and the written one; "yes" attaches it,
/// "no" fails the turn with nothing sent.
#[tokio::test]
async fn a_typed_mention_outside_the_project_is_asked_about_and_attached_only_if_approved() {
    let world = World::new();
    let server = MockServer::start(vec![answer("ok")]);
    let mut s = SessionBuilder::new(&server, world.dirs.project())
        .approver(Approver::Frontend)
        .start();
    let real = std::fs::canonicalize(world.outside.path().join("outside.txt")).unwrap();
    for (decision, attached) in [
        (ApprovalDecision::Deny { reason: None }, false),
        (ApprovalDecision::Approve, true),
    ] {
        s.send("compare @docs.txt");
        let Event::ApprovalRequest(ask) = s.until(|e| matches!(e, Event::ApprovalRequest(_))).await
        else {
            unreachable!()
        };
        assert_eq!(
            ask.request,
            ApprovalRequestKind::ReadOutside {
                path: real.clone(),
                via: Some(
                    std::fs::canonicalize(world.dirs.project())
                        .unwrap()
                        .join("docs.txt")
                ),
            }
        );
        assert_eq!(ask.name, "@docs.txt");
        s.op(Op::Approval {
            call_id: ask.call_id,
            decision,
        });
        let (outcome, _) = s.until_complete().await;
        let sent = server.everything_sent();
        if attached {
            assert_eq!(outcome, TurnOutcome::Completed);
            assert!(sent.contains(OUTSIDE), "{sent}");
        } else {
            assert!(
                matches!(&outcome, TurnOutcome::Failed { message, .. } if message.contains("declined")),
                "{outcome:?}"
            );
            assert!(server.chat_requests().is_empty());
        }
    }
}

/// Inside the project, mentions attach as before: no question, even through a link
/// that stays inside.
#[test]
fn mentions_inside_the_project_attach_without_asking_even_through_a_link() {
    let world = World::new();
    std::os::unix::fs::symlink("inside.txt", world.dirs.project().join("alias.txt")).unwrap();
    let server = MockServer::start(vec![answer("ok")]);
    let out = world.run(&server, &["-p", "see @alias.txt and @inside.txt"], b"");
    assert_exit(&out, 0);
    let user = server.chat_requests()[0].last_user_text();
    // One real file, attached once.
    assert_eq!(user.matches(INSIDE).count(), 1, "{user}");
}
