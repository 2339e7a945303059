//! The habits of issue 29 on the real binary in a pseudo-terminal: `!cmd` shell mode
//! (the `$` prompt, the command shown as a bash call, its output sent with the next
//! message), and Esc Esc rewinding the conversation and its files to an earlier message
//! (the picker, the question about the files taking only y/n, the message back in the
//! composer, the rewound conversation sent and kept for `-c`).

use super::*;
use crate::support::{spawn_fed, wait_with_deadline};

#[test]
fn a_bang_command_runs_as_a_bash_call_and_reaches_the_next_request() {
    let server = MockServer::start(vec![answer("noted")]);
    let tui = Tui::start(&server, &["--approval-mode", "full-auto"]);
    tui.type_text("!echo TUI-SHELL-9 > s.txt; cat s.txt");
    tui.wait_for_text("$ !echo TUI-SHELL-9");
    tui.send("\r");
    tui.wait_for_text("[exit code 0]");
    tui.wait_ready();
    assert!(tui.dirs.project().join("s.txt").exists());
    assert!(
        server.chat_requests().is_empty(),
        "no request for the command"
    );
    tui.submit("what did it print?");
    tui.wait_for_text("noted");
    let user = server.chat_requests()[0].last_user_text();
    assert!(user.contains("TUI-SHELL-9\n[exit code 0]"), "{user}");
    assert!(user.ends_with("what did it print?"), "{user}");
}

#[test]
fn esc_esc_rewinds_the_conversation_and_its_files_to_an_earlier_message() {
    let bash = |id: &str, command: &str| {
        tool_reply(
            id,
            "bash",
            &serde_json::json!({ "command": command }).to_string(),
        )
    };
    let server = MockServer::start(vec![
        bash("c1", "mkdir -p made1 && echo one > made1/f1.txt"),
        answer("made f1"),
        bash("c2", "echo two > f2.txt"),
        answer("made f2"),
        answer("redone"),
    ]);
    let mut tui = Tui::start(&server, &["--approval-mode", "full-auto"]);
    let p = tui.dirs.project().to_path_buf();
    tui.type_text("!echo SHELL-BEFORE");
    tui.send("\r");
    tui.wait_for_text("SHELL-BEFORE");
    tui.wait_ready();
    tui.submit("first message");
    tui.wait_for_text("made f1");
    tui.wait_ready();
    tui.submit("second message");
    tui.wait_for_text("made f2");
    tui.wait_ready();
    assert!(p.join("made1/f1.txt").exists() && p.join("f2.txt").exists());

    tui.send("\x1b");
    tui.wait_for_text("press Esc again to rewind");
    tui.send("\x1b");
    tui.wait_for_text("Rewind to an earlier message");
    tui.wait_for_text("first message  · 2 files");
    tui.send("\x1b[B");
    tui.send("\r");
    tui.wait_for_text("Rewinding puts back 2 file(s) changed since that message");
    // Only y or n answers; other keys do nothing.
    tui.send("x");
    tui.send("y");
    tui.wait_for_text("Rewound the conversation to before that message");
    assert!(!p.join("f2.txt").exists());
    assert!(
        !p.join("made1").exists(),
        "the folder the turn created went too"
    );
    // The message is back in the composer: Enter sends it again.
    tui.wait_for_text("› first message");
    tui.send("\r");
    tui.wait_for_text("redone");
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    let users: Vec<String> = last
        .conversation()
        .into_iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    // The shell command before the rewound message is still news to the model.
    assert!(users[0].contains("SHELL-BEFORE"), "{users:?}");
    assert!(users[0].ends_with("first message"), "{users:?}");
    tui.exit_with_ctrl_c_twice();

    // Resumed, the conversation is the rewound one.
    let server = MockServer::start(vec![answer("resumed")]);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.args([
        "--base-url",
        &server.url(),
        "--model",
        "m",
        "--no-tui",
        "-c",
        "-C",
    ])
    .arg(&p)
    .env("OPENAI_API_KEY", "test")
    .env("HARNESS9_HOME", tui.dirs.home());
    let out = wait_with_deadline(spawn_fed(&mut cmd, b"and now?\n"), PTY_DEADLINE);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: Vec<(String, String)> = server.chat_requests()[0].conversation();
    let texts: Vec<&str> = sent.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts.len(), 3, "{sent:?}");
    assert!(texts[0].ends_with("first message"), "{sent:?}");
    assert_eq!(texts[1..], ["redone", "and now?"]);
}

#[test]
fn esc_at_an_approval_denies_it_without_a_line_about_no_pending_approval() {
    let (server, mut tui) = edit_awaiting_approval("var x = 1\n", "y", "rename", "next turn");
    tui.send("\x1b");
    tui.wait_for_text("Interrupted");
    tui.wait_ready();
    // The agent handles ops in order: any line about the late answer comes before the
    // next turn's answer.
    tui.submit("go on");
    tui.wait_for_text("next turn");
    tui.wait_ready();
    let screen = tui.contents();
    assert!(!screen.contains("no approval is pending"), "{screen}");
    assert_eq!(server.chat_requests().len(), 2);
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn an_always_answer_confirms_the_rule_it_added_and_where() {
    let bash = |id: &str, command: &str| {
        tool_reply(
            id,
            "bash",
            &serde_json::json!({ "command": command }).to_string(),
        )
    };
    let server = MockServer::start(vec![
        bash("c1", "cargo --version"),
        answer("first done"),
        bash("c2", "touch made.txt"),
        answer("second done"),
    ]);
    let mut tui = Tui::start(&server, &["--approval-mode", "suggest"]);
    tui.submit("check cargo");
    tui.wait_for_text("a this session: bash(cargo:*)");
    tui.send("a");
    tui.wait_for_text("Added the rule `allow bash(cargo:*)` for this session.");
    tui.wait_for_text("first done");
    tui.wait_ready();
    tui.submit("make a file");
    tui.wait_for_text("p this project");
    tui.send("p");
    tui.wait_for_text("second done");
    tui.wait_ready();
    let project_file = tui.dirs.project().join(".harness9/permissions.toml");
    let saved = std::fs::read_to_string(&project_file).unwrap();
    let screen = tui.contents().replace('\n', "");
    assert!(
        screen.contains("Added the rule `allow bash(touch"),
        "{screen}"
    );
    assert!(
        screen.contains("it holds in later sessions too"),
        "{screen}"
    );
    assert!(saved.contains("bash(touch"), "{saved}");
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn typed_ahead_text_at_the_full_auto_question_is_never_sent() {
    let server = MockServer::start(vec![answer("should not be asked")]);
    let mut tui = Tui::start(&server, &[]);
    tui.submit("/approvals full-auto");
    tui.wait_for_text("Full-auto?");
    // Typed right after, before looking: neither an answer nor a prompt.
    tui.submit("/approvals bogus");
    tui.type_text("n");
    tui.wait_for_text("Approval mode kept");
    tui.wait_ready();
    // Everything typed before was handled once a marker typed after shows up.
    tui.type_text("MARK");
    tui.wait_for_text("› MARK");
    tui.send("\x15");
    assert!(
        server.chat_requests().is_empty(),
        "typed-ahead text reached the model"
    );
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn esc_interrupts_a_bang_command_and_the_model_hears_it_was_interrupted() {
    let server = MockServer::start(vec![answer("ok")]);
    let tui = Tui::start(&server, &["--approval-mode", "full-auto"]);
    // The output (STARTED-2) is not in the typed line, so seeing it means the command
    // runs (the typed text shows STARTED-$((1+1)) in the composer at once).
    tui.type_text("!echo STARTED-$((1+1)); sleep 30; echo NEVER");
    tui.send("\r");
    tui.wait_for_text("STARTED-2");
    tui.send("\x1b");
    tui.wait_for_text("Interrupted");
    tui.wait_ready();
    tui.submit("next");
    tui.wait_for_text("ok");
    let user = server.chat_requests()[0].last_user_text();
    assert!(user.contains("the user interrupted it"), "{user}");
    assert!(!user.contains("[exit code"), "it never finished: {user}");
}
