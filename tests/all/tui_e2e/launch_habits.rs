//! The habits the peers' users bring, in the TUI: `harness9 "PROMPT"` opens the session
//! with that message sent, the resume hint after exit, and `/status`.

use super::{Tui, last_user_message};
use crate::support::{MockServer, answer};

#[test]
fn the_command_lines_prompt_is_sent_as_the_first_message() {
    let server = MockServer::start(vec![answer("Hello from the model.")]);
    let mut tui = Tui::start(&server, &["say hello"]);
    tui.wait_for_text("Hello from the model.");
    tui.wait_ready();
    assert!(tui.contents().contains("› say hello"), "{}", tui.contents());
    assert_eq!(last_user_message(&server), "say hello");
    tui.exit_with_ctrl_c_twice();
}

/// After exit, below the token count: the command that goes on with the session.
#[test]
fn the_exit_says_how_to_continue_the_session() {
    let server = MockServer::start(vec![answer("Done.")]);
    let mut tui = Tui::start(&server, &[]);
    tui.submit("do it");
    tui.wait_for_text("Done.");
    tui.exit_with_ctrl_c_twice();
    let sessions = tui.dirs.home().join("sessions");
    let project = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let file = std::fs::read_dir(project.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let id = file
        .path()
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let hint = format!(
        "To continue this session, run harness9 -C {} --resume {id}",
        tui.dirs.project().display()
    );
    tui.wait_for_text(&hint);
    let screen = tui.contents();
    let row_of = |needle: &str| screen.lines().position(|l| l.contains(needle));
    assert!(row_of("tokens:") < row_of(&hint), "{screen}");
}

/// `/status` in the TUI: a cell with the session's state.
#[test]
fn status_shows_the_sessions_state_in_a_cell() {
    let server = MockServer::start(vec![]);
    let mut tui = Tui::start(&server, &["--approval-mode", "auto-edit"]);
    tui.submit("/status");
    // (The `/` popup's description names the fields too: wait for a value.)
    tui.wait_for_text("tokens          0 in, 0 out");
    let screen = tui.contents();
    for needle in [
        "Status",
        "model           m",
        "provider        127.0.0.1:",
        "approvals       auto-edit",
        "session ",
        "its file is written with the first message",
        "tokens          0 in, 0 out",
    ] {
        assert!(screen.contains(needle), "{needle:?} missing:\n{screen}");
    }
    tui.exit_with_ctrl_c_twice();
}

/// `/effort LEVEL` in the TUI: announced on the screen, sent with the next request; the
/// status line shows the prompt cache's hit rate once the server reports cache reads.
#[test]
fn effort_switches_mid_session_and_the_cache_hit_rate_shows() {
    use crate::support::{finish, sse, text, usage, usage_cached};
    let server = MockServer::start(vec![
        sse(vec![text("first"), finish("stop"), usage(1000, 5)]),
        sse(vec![
            text("second"),
            finish("stop"),
            usage_cached(1000, 5, 800),
        ]),
    ]);
    let mut tui = Tui::start(&server, &[]);
    tui.submit("one");
    tui.wait_for_text("first");
    tui.wait_ready();
    tui.submit("/effort high");
    tui.wait_for_text("Reasoning effort set to high.");
    tui.submit("two");
    tui.wait_for_text("second");
    // 800 of the session's 2000 input tokens were read from the cache.
    tui.wait_for_text("cache 40%");
    let requests = server.chat_requests();
    assert!(requests[0].body.get("reasoning_effort").is_none());
    assert_eq!(requests[1].body["reasoning_effort"], "high");
    tui.exit_with_ctrl_c_twice();
}
