//! The TUI over the Responses wire (`wire = "responses"`): the model's reasoning summary
//! is shown as a thought, its call runs, its answer streams, and the next request
//! carries the encrypted reasoning item back.

use super::*;
use crate::support::{rs_answer, rs_call_reply};

#[test]
fn a_responses_turn_shows_the_reasoning_summary_as_a_thought() {
    let server = MockServer::start(vec![
        rs_call_reply(
            "call_1",
            "read_file",
            r#"{"path":"a.txt"}"#,
            "enc-for-the-tui",
        ),
        rs_answer("The file holds alpha."),
    ]);
    let mut tui = Tui::ready(&server, &[], |home, project| {
        std::fs::write(home.join("config.toml"), "wire = \"responses\"\n").unwrap();
        std::fs::write(project.join("a.txt"), "alpha\n").unwrap();
    });
    tui.submit("what is in a.txt?");
    tui.wait_for_text("The file holds alpha.");
    let screen = tui.all_lines().join("\n");
    assert_has(
        &screen,
        &["Thought", "thinking about call_1", "read_file a.txt"],
    );
    let requests = server.responses_requests();
    assert_eq!(requests.len(), 2);
    assert!(server.chat_requests().is_empty());
    assert!(
        requests[1]
            .raw_body
            .contains("\"encrypted_content\":\"enc-for-the-tui\"")
    );
    tui.exit_with_ctrl_c_twice();
}
