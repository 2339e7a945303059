//! Ctrl+T's transcript view on the real binary: a command's output shown collapsed in
//! the conversation is there in full in the view (paged from its first line to its
//! last), q closes it, and the conversation is on the terminal as before, each line once.

use super::*;
use crate::support::bash_reply;

#[test]
fn ctrl_t_shows_a_collapsed_output_in_full_and_q_returns_to_the_session() {
    let server = MockServer::start(vec![
        bash_reply("call_1", "for i in $(seq 1 60); do echo out-$i; done"),
        answer("All printed."),
    ]);
    let dirs = Arc::new(Dirs::new());
    let mut tui = Tui::spawn_in(
        &server,
        &["--approval-mode", "full-auto"],
        &[],
        dirs,
        (30, 100),
    );
    tui.wait_ready();
    tui.submit("print them");
    tui.wait_for_text("All printed.");
    tui.wait_ready();
    let before = tui.all_lines();
    assert!(
        !before.iter().any(|l| l.trim() == "out-30"),
        "collapsed in the conversation"
    );
    tui.send("\x14");
    tui.wait_for_text("Transcript (ctrl+t)");
    // The end of the transcript: the answer, and the output's last lines above it.
    tui.wait_for_text("All printed.");
    assert!(tui.contents().contains("out-60"), "{}", tui.contents());
    // Page up to the start: every line of the output passes by, in order.
    let mut seen: Vec<usize> = Vec::new();
    let numbers = |screen: &str| -> Vec<usize> {
        screen
            .lines()
            .filter_map(|l| {
                l.trim()
                    .trim_start_matches("└ ")
                    .strip_prefix("out-")?
                    .parse()
                    .ok()
            })
            .collect()
    };
    seen.extend(numbers(&tui.contents()));
    while !seen.contains(&1) {
        let top = *seen.iter().min().unwrap();
        tui.send("\x1b[5~");
        tui.wait_for("the view to page up", |s| {
            numbers(&s.contents()).first().is_some_and(|n| *n < top)
        });
        seen.extend(numbers(&tui.contents()));
    }
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, (1..=60).collect::<Vec<_>>());
    tui.send("q");
    tui.wait_for("the view to close", |s| {
        !s.contents().contains("Transcript (ctrl+t)")
    });
    tui.wait_ready();
    tui.sync("back");
    let after = tui.all_lines();
    for wanted in ["› print them", "All printed.", "ready · / for commands"] {
        let n = after
            .iter()
            .filter(|l| l.trim_end().starts_with(wanted))
            .count();
        assert_eq!(n, 1, "{wanted:?}:\n{}", after.join("\n"));
    }
    assert!(
        !after.iter().any(|l| l.trim() == "out-30"),
        "{}",
        after.join("\n")
    );
    tui.exit_with_ctrl_c_twice();
}

/// A thought of `n` numbered lines, as the model streams it in `reasoning_content`.
fn long_thought(n: usize) -> String {
    (1..=n).map(|i| format!("thought-line-{i}\n")).collect()
}

#[test]
fn a_thought_is_collapsed_in_the_conversation_whole_in_ctrl_t_and_the_same_when_resumed() {
    let thought = long_thought(12);
    let server = MockServer::start(vec![
        sse(vec![
            crate::support::reasoning(&thought),
            tool_call(0, "call_1", "bash", r#"{"command":"echo hi"}"#),
            finish("tool_calls"),
        ]),
        answer("Thought it through."),
    ]);
    let dirs = Arc::new(Dirs::new());
    let mut tui = Tui::spawn_in(
        &server,
        &["--approval-mode", "full-auto"],
        &[],
        dirs.clone(),
        (30, 100),
    );
    tui.wait_ready();
    tui.submit("think first");
    tui.wait_for_text("Thought it through.");
    tui.wait_ready();
    let shown = tui.all_lines();
    let collapsed = |lines: &[String]| {
        assert!(
            lines.iter().any(|l| l.contains("∴ Thought (12 words)")),
            "{}",
            lines.join("\n")
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("… 10 more lines · ctrl+t to expand")),
            "{}",
            lines.join("\n")
        );
        assert!(
            !lines.iter().any(|l| l.trim() == "thought-line-7"),
            "collapsed: {}",
            lines.join("\n")
        );
    };
    collapsed(&shown);
    tui.send("\x14");
    tui.wait_for_text("Transcript (ctrl+t)");
    tui.wait_for("the whole thought", |s| {
        let c = s.contents();
        (1..=12).all(|i| {
            c.contains(&format!("thought-line-{i}\n")) || c.contains(&format!("thought-line-{i} "))
        })
    });
    tui.send("q");
    tui.wait_for("the view to close", |s| {
        !s.contents().contains("Transcript (ctrl+t)")
    });
    tui.exit_with_ctrl_c_twice();

    // Resumed, the saved thought is shown the same way, and whole in Ctrl+T.
    server.push(answer("again"));
    let mut tui = Tui::spawn_in(&server, &["-c"], &[], dirs, (30, 100));
    tui.wait_ready();
    tui.wait_for_text("Resumed session");
    collapsed(&tui.all_lines());
    tui.send("\x14");
    tui.wait_for_text("Transcript (ctrl+t)");
    tui.wait_for("the whole thought", |s| {
        s.contents().contains("thought-line-7")
    });
    tui.send("q");
    tui.wait_for("the view to close", |s| {
        !s.contents().contains("Transcript (ctrl+t)")
    });
    tui.exit_with_ctrl_c_twice();
}
