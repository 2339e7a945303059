//! The TUI defects of issue 15, each on the real binary in a pseudo-terminal: the
//! scrollback after growing and shrinking the terminal (vt100 moves lines between the
//! screen and its scrollback on a resize as xterm and tmux do; resize storms are in
//! `resize.rs`), a Ctrl+C that clears a
//! draft not arming the exit, Esc at an approval sending nothing more to the model, an
//! interrupted command keeping its output, and tool cells at 80 columns.

use super::*;

fn numbered(prefix: &str, n: usize) -> String {
    (1..=n).map(|i| format!("{prefix}-{i}\n\n")).collect()
}

/// Each `prefix-i` line the terminal holds, with how often.
fn counts(lines: &[String], prefix: &str, n: usize) -> Vec<usize> {
    (1..=n)
        .map(|i| {
            let want = format!("{prefix}-{i}");
            lines.iter().filter(|l| l.trim() == want).count()
        })
        .collect()
}

#[test]
fn growing_and_shrinking_the_terminal_keeps_every_line_of_the_conversation() {
    let server = MockServer::start(vec![
        answer(&numbered("AAA", 20)),
        answer(&numbered("BBB", 4)),
        answer("CCC-1"),
    ]);
    let dirs = Arc::new(Dirs::new());
    let mut tui = Tui::spawn_in(&server, &[], &[], dirs, (30, 100));
    tui.wait_ready();
    tui.submit("first");
    tui.wait_for_text("AAA-20");
    tui.wait_ready();
    tui.submit("second");
    tui.wait_for_text("BBB-4");
    tui.wait_ready();
    // Taller: the terminal pulls lines back from its scrollback.
    tui.resize(40, 100);
    tui.sync("one");
    let lines = tui.all_lines();
    assert_eq!(counts(&lines, "BBB", 4), [1; 4], "{lines:#?}");
    assert_eq!(counts(&lines, "AAA", 20), [1; 20], "{lines:#?}");
    // Several sizes, wider and narrower, taller and shorter.
    for (i, (rows, cols)) in [(40, 120), (24, 80), (40, 120), (12, 60), (40, 120)]
        .into_iter()
        .enumerate()
    {
        tui.resize(rows, cols);
        tui.sync(&format!("resize{i}"));
    }
    tui.submit("third");
    tui.wait_for_text("CCC-1");
    tui.wait_ready();
    let lines = tui.all_lines();
    assert_eq!(counts(&lines, "AAA", 20), [1; 20], "{lines:#?}");
    assert_eq!(counts(&lines, "BBB", 4), [1; 4], "{lines:#?}");
    let asked: Vec<usize> = ["› first", "› second", "› third"]
        .iter()
        .map(|q| lines.iter().filter(|l| l.trim_end() == *q).count())
        .collect();
    assert_eq!(asked, [1, 1, 1], "{lines:#?}");
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn a_ctrl_c_that_cleared_the_draft_then_one_that_interrupts_does_not_quit() {
    let server = MockServer::start(vec![
        sse(vec![
            text("partial answer\n"),
            text("never"),
            finish("stop"),
        ])
        .stall_after(1),
        answer("still here"),
    ]);
    let mut tui = Tui::start(&server, &[]);
    tui.type_text("a draft");
    tui.wait_for_text("› a draft");
    tui.send("\x03");
    tui.wait_for("the draft cleared", |s| !s.contents().contains("› a draft"));
    tui.submit("go");
    tui.wait_for_text("partial answer");
    // Well inside the double-press window of the first Ctrl+C.
    tui.send("\x03");
    tui.wait_for_text("Interrupted");
    tui.wait_ready();
    assert!(tui.child.try_wait().unwrap().is_none(), "harness9 quit");
    assert!(!tui.contents().contains("press Ctrl+C again"));
    tui.submit("more");
    tui.wait_for_text("still here");
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn esc_at_an_approval_stops_the_turn_without_another_request() {
    let (server, mut tui) = edit_awaiting_approval("var x = 1\n", "y", "rename", "next turn");
    tui.send("\x1b");
    tui.wait_for_text("Interrupted");
    tui.wait_ready();
    assert_eq!(server.chat_requests().len(), 1, "the denial was not sent");
    let kept = std::fs::read_to_string(tui.dirs.project().join("main.go")).unwrap();
    assert_eq!(kept, "var x = 1\n");
    tui.submit("go on");
    tui.wait_for_text("next turn");
    assert_eq!(server.chat_requests().len(), 2);
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn interrupting_a_command_keeps_the_output_it_streamed() {
    let args = serde_json::json!({
        "command": "printf 'out-1\\nout-2\\n'; sleep 30",
    })
    .to_string();
    let server = MockServer::start(vec![tool_reply("call_1", "bash", &args)]);
    let mut tui = Tui::start(&server, &["--approval-mode", "full-auto"]);
    tui.submit("run it");
    tui.wait_for_text("out-2");
    tui.send("\x1b");
    tui.wait_for_text("Interrupted");
    tui.wait_ready();
    let screen = tui.contents();
    assert_has(&screen, &["out-1", "out-2"]);
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn tool_cells_at_80_columns_show_one_diff_header_and_hang_wrapped_rows() {
    let pattern = "a very long pattern that goes on and on so that the header wraps twice";
    let grep = serde_json::json!({ "pattern": pattern, "path": "." }).to_string();
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "call_1", "grep", &grep),
            tool_call(1, "call_2", "edit_file", &rename_x_to("y")),
            finish("tool_calls"),
        ]),
        answer("done here"),
    ]);
    let dirs = Arc::new(Dirs::new());
    std::fs::write(dirs.project().join("main.go"), "var x = 1\n").unwrap();
    let mut tui = Tui::spawn_in(
        &server,
        &["--approval-mode", "auto-edit"],
        &[],
        dirs,
        (40, 80),
    );
    tui.wait_ready();
    tui.submit("look");
    tui.wait_for_text("done here");
    tui.wait_ready();
    let lines = tui.all_lines();
    let header = lines
        .iter()
        .position(|l| l.starts_with("✓ grep a very long"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    // The header's continuation lines up under its text, two columns in.
    assert!(
        lines[header + 1].starts_with("  ") && !lines[header + 1].starts_with("   "),
        "{lines:#?}"
    );
    let headers = lines.iter().filter(|l| l.contains("+++ b/main.go")).count();
    assert_eq!(headers, 1, "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("+var y = 1")), "{lines:#?}");
    tui.exit_with_ctrl_c_twice();
}
