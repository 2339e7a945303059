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
