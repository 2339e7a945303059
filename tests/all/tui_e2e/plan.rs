//! Plan mode in the TUI, on the screen read back: `/plan TASK` enters it (the status line
//! says `plan`), the plan `exit_plan` hands over is shown for approval with the modes to
//! choose from, and approving it switches the mode the status line shows.

use serde_json::json;

use super::Tui;
use crate::plan_mode::scripted;
use crate::support::MockServer;

#[test]
fn slash_plan_enters_plan_mode_and_approving_the_plan_switches_the_mode() {
    let server = MockServer::start(vec![]);
    scripted(&server, |plan| {
        vec![
            (
                "write_file".into(),
                json!({"path": plan, "content": "1. read the parser\n2. add a cache\n"}),
            ),
            ("exit_plan".into(), json!({})),
        ]
    });
    let mut tui = Tui::start(&server, &["--approval-mode", "suggest"]);
    tui.submit("/plan add a cache");
    tui.wait_for_text("Approve this plan?");
    let screen = tui.contents();
    for shown in [
        "1. read the parser",
        "2. add a cache",
        "y approve, then auto-edit",
        "s then suggest",
        "f then full-auto",
        "n keep planning",
    ] {
        assert!(screen.contains(shown), "{shown}: {screen}");
    }
    assert!(
        screen.contains("plan ·"),
        "the status line names plan mode: {screen}"
    );
    tui.send("y");
    tui.wait_for_text("done");
    tui.wait_ready();
    tui.wait_for_text("auto-edit ·");
    let requests = server.chat_requests();
    assert!(requests[0].last_user_text().contains("Plan mode is on"));
    assert!(requests[0].last_user_text().ends_with("add a cache"));
    tui.exit_with_ctrl_c_twice();
}
