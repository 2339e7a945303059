//! The TUI end to end: the real binary in a pseudo-terminal (120x40) against the
//! scripted server, with the screen read through vt100. Start-up and the status line, a
//! streamed answer, a skill slash command (and the request it sends), approving an edit
//! and seeing its diff, interrupting a stalled stream with Esc, and leaving with Ctrl+C
//! twice with the terminal restored (main screen, cursor visible, bracketed paste off,
//! canonical mode and echo back on), and a second run that resumes the first one's
//! saved session from the picker.
//!
//! The harness answers the two questions the TUI asks the terminal at start (cursor
//! position and primary device attributes) like a terminal without the kitty keyboard
//! protocol would. Every wait has a deadline and checks the screen; nothing sleeps and
//! hopes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

mod context;
mod defects;
mod habits;
mod images;
mod launch_habits;
mod plan;
mod resize;
mod responses_wire;
mod rewind_links;
mod signals;
mod transcript;

use crate::support::{
    Dirs, MockServer, PTY_DEADLINE, PtyWriter, Terminal, answer, assert_has, finish,
    harness9_pty_command, skill, sse, text, tool_call, tool_reply,
};
use serde_json::Value;

const ROWS: u16 = 40;
const COLS: u16 = 120;
/// Lines of scrollback the emulated terminal keeps.
const SCROLLBACK: usize = 2000;

/// The TUI in a pseudo-terminal ([`Terminal`]: its screen, keys and exit).
struct Tui {
    term: Terminal,
    /// Cursor-position queries answered so far.
    positions_asked: Arc<std::sync::atomic::AtomicUsize>,
    dirs: Arc<Dirs>,
}

impl std::ops::Deref for Tui {
    type Target = Terminal;
    fn deref(&self) -> &Terminal {
        &self.term
    }
}

impl std::ops::DerefMut for Tui {
    fn deref_mut(&mut self) -> &mut Terminal {
        &mut self.term
    }
}

/// Answers the terminal queries found in `bytes` (after `parser` has processed them).
fn answer_queries(
    bytes: &[u8],
    parser: &vt100::Parser,
    writer: &PtyWriter,
    asked: &std::sync::atomic::AtomicUsize,
) {
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    let mut reply = Vec::new();
    if has(b"\x1b[6n") {
        asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (row, col) = parser.screen().cursor_position();
        reply.extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
    }
    if has(b"\x1b[c") || has(b"\x1b[0c") {
        // A VT220-class terminal; no reply to the kitty keyboard query `CSI ? u`.
        reply.extend_from_slice(b"\x1b[?62;22c");
    }
    if !reply.is_empty() {
        let mut w = writer.lock().unwrap();
        w.write_all(&reply).unwrap();
        w.flush().unwrap();
    }
}

impl Tui {
    /// The TUI with nothing prepared, once it is ready.
    fn start(server: &MockServer, extra: &[&str]) -> Tui {
        Tui::ready(server, extra, |_, _| {})
    }

    /// [`Tui::spawn`], once the TUI is ready.
    fn ready(server: &MockServer, extra: &[&str], prepare: impl FnOnce(&Path, &Path)) -> Tui {
        let tui = Tui::spawn(server, extra, prepare);
        tui.wait_ready();
        tui
    }

    /// The TUI in a fresh home and project that `prepare` fills first.
    fn spawn(server: &MockServer, extra: &[&str], prepare: impl FnOnce(&Path, &Path)) -> Tui {
        Tui::spawn_env(server, extra, &[], prepare)
    }

    fn spawn_env(
        server: &MockServer,
        extra: &[&str],
        env: &[(&str, String)],
        prepare: impl FnOnce(&Path, &Path),
    ) -> Tui {
        let dirs = Arc::new(Dirs::new());
        prepare(dirs.home(), dirs.project());
        Tui::spawn_in(server, extra, env, dirs, (ROWS, COLS))
    }

    /// The binary with this home and project directory.
    fn spawn_in(
        server: &MockServer,
        extra: &[&str],
        env: &[(&str, String)],
        dirs: Arc<Dirs>,
        size: (u16, u16),
    ) -> Tui {
        let (home, work) = (dirs.home(), dirs.project());
        let mut cmd = harness9_pty_command(&server.url(), home, work, extra);
        cmd.env("HOME", home);
        cmd.env_remove("TMUX");
        for (name, value) in env {
            cmd.env(name, value);
        }
        let positions_asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let asked = positions_asked.clone();
        let term = Terminal::spawn(cmd, size, SCROLLBACK, move |bytes, parser, writer| {
            answer_queries(bytes, parser, writer, &asked);
        });
        Tui {
            term,
            positions_asked,
            dirs,
        }
    }

    /// Types text one key at a time (as a person would; a burst would be a paste).
    fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.send(&c.to_string());
        }
    }

    /// Types `text` one key at a time, then Enter.
    fn submit(&self, text: &str) {
        self.type_text(text);
        self.send("\r");
    }

    /// Sends `signal` to the binary.
    fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = self.child.process_id().expect("a pid");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
            signal,
        )
        .unwrap();
    }

    /// The TUI is up and idle: its status line says so.
    fn wait_ready(&self) {
        self.wait_for_text("ready · / for commands");
    }

    /// Ctrl+C twice, then checks the exit and the terminal state. Waits for the turn to
    /// have ended first: its answer can be on screen while it still runs, and a Ctrl+C
    /// then interrupts it instead of arming the exit.
    fn exit_with_ctrl_c_twice(&mut self) {
        self.wait_ready();
        self.send("\x03");
        self.wait_for_text("press Ctrl+C again to exit");
        self.send("\x03");
        let status = self.wait_exit();
        assert!(status.success(), "exit status {status:?}");
        // Let the reader take the last bytes the process wrote.
        self.wait_for("the usage line", |s| s.contents().contains("tokens:"));
        self.assert_restored();
    }

    /// Main screen, cursor visible, bracketed paste off, canonical mode and echo on,
    /// waited for: the process has exited, but the reader may not have taken the last
    /// bytes it wrote yet.
    fn assert_restored(&self) {
        let start = std::time::Instant::now();
        loop {
            let Err(missing) = self.restored() else {
                return;
            };
            assert!(start.elapsed() < PTY_DEADLINE, "{missing}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// What is not restored yet, if anything.
    fn restored(&self) -> Result<(), String> {
        {
            let parser = self.screen.lock().unwrap();
            let screen = parser.screen();
            if screen.alternate_screen() {
                return Err("still on the alternate screen".into());
            }
            if screen.hide_cursor() {
                return Err("the cursor is still hidden".into());
            }
            if screen.bracketed_paste() {
                return Err("bracketed paste is still on".into());
            }
        }
        if let Some(flags) = self.local_flags() {
            for flag in ["ICANON", "ECHO"] {
                if !flags.iter().any(|f| f == flag) {
                    return Err(format!("{flag} is not back on: {flags:?}"));
                }
            }
        }
        Ok(())
    }

    /// The pty's termios local flags by name (ICANON, ECHO, ...), when readable.
    fn local_flags(&self) -> Option<Vec<String>> {
        let termios = self.master.lock().unwrap().get_termios()?;
        let text = format!("{:?}", termios.local_flags);
        let inner = text.trim_start_matches("LocalFlags(").trim_end_matches(')');
        Some(inner.split(" | ").map(str::to_string).collect())
    }
}

impl Tui {
    /// Resizes the terminal as a terminal emulator does: its screen first (bytes the
    /// program wrote for the old size and not yet read land in the new one), then the
    /// pty (which signals the program). It does not wait: [`Tui::sync`] afterwards
    /// proves the TUI drew a frame after it (every frame reads the size first).
    fn resize(&self, rows: u16, cols: u16) {
        use portable_pty::PtySize;
        self.screen.lock().unwrap().screen_mut().set_size(
            std::num::NonZero::new(rows).unwrap(),
            std::num::NonZero::new(cols).unwrap(),
        );
        self.master
            .lock()
            .unwrap()
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    /// Every line the terminal holds: its scrollback, oldest first, then the screen.
    fn all_lines(&self) -> Vec<String> {
        let mut parser = self.screen.lock().unwrap();
        let (rows, cols) = parser.screen().size();
        let rows = usize::from(rows.get());
        let screen = parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let mut back = screen.scrollback();
        let mut lines = Vec::new();
        while back > 0 {
            screen.set_scrollback(back);
            let take = back.min(rows);
            lines.extend(screen.rows(0, cols.get()).take(take));
            back -= take;
        }
        screen.set_scrollback(0);
        lines.extend(screen.rows(0, cols.get()));
        lines
    }

    /// Proves the TUI has handled everything sent before: types a marker, waits for
    /// it in the composer, and deletes it.
    fn sync(&self, marker: &str) {
        self.type_text(marker);
        self.wait_for_text(&format!("› {marker}"));
        self.send("\x15");
        self.wait_for("the marker deleted", |s| {
            !s.contents().contains(&format!("› {marker}"))
        });
    }
}

/// The text of the last user message of the last chat request.
fn last_user_message(server: &MockServer) -> String {
    let requests = server.chat_requests();
    requests.last().expect("a chat request").last_user_text()
}

#[test]
fn the_welcome_names_the_sandbox_in_force() {
    let server = MockServer::start(vec![]);
    let mut tui = Tui::start(&server, &["--approval-mode", "full-auto"]);
    let screen = tui.contents();
    assert!(
        screen.contains("approvals: full-auto · sandbox: workspace-write, no network"),
        "{screen}"
    );
    tui.exit_with_ctrl_c_twice();
    let mut plain = Tui::start(&server, &[]);
    let screen = plain.contents();
    assert!(
        screen.contains("approvals: suggest · /help") && !screen.contains("sandbox:"),
        "{screen}"
    );
    plain.exit_with_ctrl_c_twice();
}

#[test]
fn starts_and_shows_the_status_line() {
    let server = MockServer::start(vec![]);
    let mut tui = Tui::start(&server, &[]);
    let screen = tui.contents();
    assert!(screen.contains("harness9 · m ·"), "{screen}");
    assert!(screen.contains("↑0 ↓0"), "{screen}");
    if let Some(flags) = tui.local_flags() {
        assert!(
            !flags.contains(&"ICANON".to_string()),
            "raw mode while running: {flags:?}"
        );
    }
    // The live area sits at the top of a fresh terminal, not the whole screen.
    let cursor = tui.screen.lock().unwrap().screen().cursor_position();
    assert!(cursor.0 < 10, "cursor at {cursor:?}");
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn a_prompt_streams_the_answer() {
    let server = MockServer::start(vec![sse(vec![
        text("Hello "),
        text("from **the model**.\n\nSecond "),
        text("paragraph."),
        finish("stop"),
    ])]);
    let mut tui = Tui::start(&server, &[]);
    tui.submit("say hello");
    tui.wait_for_text("Hello from the model.");
    tui.wait_for_text("Second paragraph.");
    tui.wait_ready();
    assert!(tui.contents().contains("› say hello"));
    assert_eq!(last_user_message(&server), "say hello");
    tui.exit_with_ctrl_c_twice();
    // The conversation stays in the terminal after exit, the live area is gone, and
    // the usage line follows the conversation.
    let screen = tui.contents();
    let row_of = |needle: &str| screen.lines().position(|l| l.contains(needle));
    let answer = row_of("Second paragraph.").expect("the answer stays");
    let usage = row_of("tokens:").expect("the usage line");
    assert!(usage > answer, "usage line below the answer:\n{screen}");
    assert!(
        !screen.contains("ready · / for commands"),
        "live area cleared:\n{screen}"
    );
}

#[test]
fn a_skill_slash_command_sends_the_skill_with_its_arguments() {
    let server = MockServer::start(vec![answer("Refactored.")]);
    let mut tui = Tui::ready(&server, &["--skills-dir", "team-skills"], |_, work| {
        skill(
            &work.join("team-skills"),
            "go-refactor",
            "Refactor Go code the team's way",
            "",
            "Follow the team's Go style guide.\n",
        );
    });
    tui.type_text("/go-re");
    tui.wait_for_text("Refactor Go code the team's way");
    tui.submit("factor clean main.go");
    tui.wait_for_text("Refactored.");
    assert!(tui.contents().contains("› /go-refactor clean main.go"));
    let sent = last_user_message(&server);
    assert!(sent.contains("Follow the team's Go style guide."), "{sent}");
    assert!(sent.contains("clean main.go"), "{sent}");
    tui.exit_with_ctrl_c_twice();
}

/// `edit_file` arguments turning `var x = 1` into `var {name} = 1` in main.go.
fn rename_x_to(name: &str) -> String {
    serde_json::json!({
        "path": "main.go",
        "old_string": "var x = 1",
        "new_string": format!("var {name} = 1"),
    })
    .to_string()
}

/// The TUI in suggest mode with `main_go` in main.go, once the prompt `prompt` has made
/// the model ask (as call `call_1`) to rename `x` to `name` there; its next answer is
/// `then`.
fn edit_awaiting_approval(
    main_go: &str,
    name: &str,
    prompt: &str,
    then: &str,
) -> (MockServer, Tui) {
    let server = MockServer::start(vec![
        tool_reply("call_1", "edit_file", &rename_x_to(name)),
        answer(then),
    ]);
    let tui = Tui::ready(&server, &["--approval-mode", "suggest"], |_, work| {
        std::fs::write(work.join("main.go"), main_go).unwrap();
    });
    tui.submit(prompt);
    tui.wait_for_text("Apply this edit?");
    (server, tui)
}

#[test]
fn approving_an_edit_shows_the_diff_and_applies_it() {
    let main_go = "package main\n\nvar x = 1\n";
    let (server, mut tui) =
        edit_awaiting_approval(main_go, "count", "rename x", "Renamed x to count.");
    tui.wait_for_text("-var x = 1");
    tui.wait_for_text("+var count = 1");
    tui.send("y");
    tui.wait_for_text("Renamed x to count.");
    tui.wait_for_text("✓ edit_file");
    tui.wait_ready();
    let edited = std::fs::read_to_string(tui.dirs.project().join("main.go")).unwrap();
    assert_eq!(edited, "package main\n\nvar count = 1\n");
    let requests = server.chat_requests();
    let tool_result = requests[1]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or(Value::Null);
    assert_eq!(tool_result["tool_call_id"], "call_1");
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn esc_interrupts_a_stalled_stream() {
    let server = MockServer::start(vec![
        sse(vec![
            text("partial answer\n"),
            text("never shown"),
            finish("stop"),
        ])
        .stall_after(1),
        answer("after the interrupt"),
    ]);
    let mut tui = Tui::start(&server, &[]);
    tui.submit("long task");
    tui.wait_for_text("partial answer");
    tui.wait_for_text("esc to interrupt");
    tui.send("\x1b");
    tui.wait_for_text("Interrupted");
    tui.wait_ready();
    assert!(!tui.contents().contains("never shown"));
    tui.submit("go on");
    tui.wait_for_text("after the interrupt");
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn alt_screen_mode_is_left_on_exit() {
    let server = MockServer::start(vec![]);
    let mut tui = Tui::start(&server, &["--alt-screen"]);
    assert!(tui.screen.lock().unwrap().screen().alternate_screen());
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn a_paste_stays_one_input_and_ctrl_g_edits_the_draft_in_the_editor() {
    let server = MockServer::start(vec![answer("Got it.")]);
    let bin = tempfile::tempdir().unwrap();
    let editor = bin.path().join("fake-editor");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'written in the editor' > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let env = [
        ("VISUAL", editor.display().to_string()),
        ("EDITOR", editor.display().to_string()),
    ];
    let mut tui = Tui::spawn_env(&server, &[], &env, |_, _| {});
    tui.wait_ready();
    // A bracketed paste of several lines is one draft, not three prompts.
    tui.send("\x1b[200~first line\nsecond line\nthird line\x1b[201~");
    tui.wait_for_text("third line");
    assert!(server.chat_requests().is_empty(), "a paste sends nothing");
    // Ctrl+G replaces the draft with what the editor wrote.
    tui.send("\x07");
    tui.wait_for_text("› written in the editor");
    assert!(!tui.contents().contains("second line"));
    tui.send("\r");
    tui.wait_for_text("Got it.");
    assert_eq!(last_user_message(&server), "written in the editor");
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn sigterm_restores_the_terminal() {
    let server = MockServer::start(vec![]);
    let mut tui = Tui::start(&server, &["--alt-screen"]);
    tui.signal(nix::sys::signal::Signal::SIGTERM);
    let status = tui.wait_exit();
    assert!(
        !status.success(),
        "a signal is not a clean exit: {status:?}"
    );
    tui.wait_for("the main screen", |s| !s.alternate_screen());
    tui.assert_restored();
}

#[test]
fn resume_opens_the_picker_and_goes_on_with_the_chosen_session() {
    let server = MockServer::start(vec![
        answer("The parser plan is **ready**."),
        answer("Going on from the plan."),
    ]);
    let dirs = Arc::new(Dirs::new());
    let mut first = Tui::spawn_in(&server, &[], &[], dirs.clone(), (ROWS, COLS));
    first.wait_ready();
    first.submit("draft the parser plan");
    first.wait_for_text("The parser plan is ready.");
    first.wait_ready();
    first.exit_with_ctrl_c_twice();

    // Same home, same project: `--resume` without an id opens the picker at start.
    let mut second = Tui::spawn_in(&server, &["--resume"], &[], dirs, (ROWS, COLS));
    second.wait_for_text("Resume a session · 1 of 1");
    second.wait_for_text("1 turn");
    second.wait_for_text("draft the parser plan");
    second.send("\r");
    second.wait_for_text("Resumed session");
    let screen = second.contents();
    assert!(screen.contains("› draft the parser plan"), "{screen}");
    assert!(screen.contains("The parser plan is ready."), "{screen}");
    assert!(
        !screen.contains("Resume a session"),
        "picker closed: {screen}"
    );
    second.wait_ready();
    second.submit("go on");
    second.wait_for_text("Going on from the plan.");
    server.assert_conversation(
        2,
        &[
            ("user", "draft the parser plan"),
            ("assistant", "The parser plan is **ready**."),
            ("user", "go on"),
        ],
    );
    second.exit_with_ctrl_c_twice();
}
