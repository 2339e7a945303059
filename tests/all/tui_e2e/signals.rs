//! SIGTERM and SIGHUP on a terminal: the TUI, while the model's command runs (and an
//! earlier command's background job lives), stops them all, restores the terminal and
//! exits with 128 + the signal's number; the line REPL on a terminal (`--no-tui`),
//! signalled while its line editor holds the terminal in raw mode, gives the terminal
//! its modes back.

use super::*;
use crate::signals::{assert_all_gone, running, script_of_long_commands};
use nix::sys::signal::Signal;

#[test]
fn sigterm_and_sighup_stop_every_command_and_restore_the_terminal() {
    for by in [Signal::SIGTERM, Signal::SIGHUP] {
        let server = MockServer::start(vec![]);
        script_of_long_commands(&server);
        let mut tui = Tui::start(&server, &["--approval-mode", "full-auto"]);
        tui.submit("go");
        let work = tui.dirs.project().to_path_buf();
        let pids = running(&work);
        tui.signal(by);
        let status = tui.wait_exit();
        assert_all_gone(&pids);
        assert_eq!(status.exit_code(), 128 + by as u32, "{by}: {status:?}");
        tui.assert_restored();
    }
}

#[test]
fn the_terminal_repl_gives_the_terminal_back_on_sigterm() {
    let server = MockServer::start(vec![]);
    let mut repl = Tui::spawn(&server, &["--no-tui"], |_, _| {});
    repl.wait_for_text("Ctrl-D to quit");
    // The line editor reads: the terminal is in raw mode now.
    repl.wait_for("raw mode", |_| {
        repl.local_flags()
            .is_some_and(|f| !f.contains(&"ICANON".to_string()))
    });
    repl.signal(Signal::SIGTERM);
    let status = repl.wait_exit();
    assert_eq!(status.exit_code(), 143, "{status:?}");
    repl.assert_restored();
}
