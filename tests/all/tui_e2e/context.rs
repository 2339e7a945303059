//! `/context` in the TUI: after a read below the working folder, a cell lists the chain's
//! file and the nested one the read attached, the skill roots, and what a request costs.

use super::*;

#[test]
fn context_shows_the_chain_and_the_attached_nested_file_in_a_cell() {
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path": "pkg/a.rs"}"#),
        answer("READ-DONE"),
    ]);
    let mut tui = Tui::ready(&server, &[], |_, project| {
        crate::support::write(&project.join("AGENTS.md"), "ROOT-RULE\n");
        crate::support::write(&project.join("pkg/AGENTS.md"), "PKG-RULE\n");
        crate::support::write(&project.join("pkg/a.rs"), "fn a() {}\n");
    });
    tui.submit("read pkg/a.rs");
    tui.wait_for_text("READ-DONE");
    tui.wait_for_text("+ instructions: pkg/AGENTS.md");
    tui.wait_ready();
    tui.submit("/context");
    tui.wait_for_text("attached to a tool result");
    let screen = tui.contents();
    let root = tui.dirs.project().canonicalize().unwrap();
    for needle in [
        "Context".to_string(),
        format!(
            "{}  10 bytes, about 3 tokens (system prompt)",
            root.join("AGENTS.md").display()
        ),
        format!(
            "{}  9 bytes, about 3 tokens (attached to a tool result)",
            root.join("pkg/AGENTS.md").display()
        ),
        "system prompt  ".to_string(),
        "tools          ".to_string(),
    ] {
        assert!(screen.contains(&needle), "{needle:?} missing:\n{screen}");
    }
    tui.exit_with_ctrl_c_twice();
}
