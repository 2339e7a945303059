//! The signals that end a run — SIGTERM, SIGHUP, and SIGINT where it ends one rather
//! than stopping a turn — heard the same way by every frontend (`-p`, the REPL, the
//! TUI), and what comes first when one arrives: every command, background job and
//! server harness9 started is stopped ([`crate::exec::stop_all`]), so nothing outlives
//! the session. The exit status is then 128 plus the signal's number, as a shell
//! reports a process the signal ended.
//!
//! It knows signals and exit statuses; it must not know terminals (each frontend
//! restores its own) or what the commands are.

use std::io;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// A signal that ends the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndingSignal {
    /// SIGHUP: the terminal went away.
    Hangup,
    /// SIGINT where it ends the run (the TUI outside its own key handling, a second
    /// Ctrl-C in `-p`).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl EndingSignal {
    /// The exit status of a process ended by this signal (128 + its number).
    pub fn exit_code(self) -> u8 {
        match self {
            EndingSignal::Hangup => 129,
            EndingSignal::Interrupt => 130,
            EndingSignal::Terminate => 143,
        }
    }
}

impl std::fmt::Display for EndingSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EndingSignal::Hangup => "SIGHUP",
            EndingSignal::Interrupt => "SIGINT",
            EndingSignal::Terminate => "SIGTERM",
        })
    }
}

/// SIGTERM and SIGHUP, listened for from the moment this is made (inside the async
/// runtime): from then on they no longer kill harness9 outright, they arrive here.
#[derive(Debug)]
pub struct EndingSignals {
    terminate: Signal,
    hangup: Signal,
}

impl EndingSignals {
    /// Starts listening.
    pub fn listen() -> io::Result<EndingSignals> {
        Ok(EndingSignals {
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next one that arrives.
    pub async fn recv(&mut self) -> EndingSignal {
        tokio::select! {
            _ = self.terminate.recv() => EndingSignal::Terminate,
            _ = self.hangup.recv() => EndingSignal::Hangup,
        }
    }
}

/// What every frontend does first when a signal ends the run: every process group
/// harness9 started is stopped (SIGTERM, SIGKILL after a second).
pub async fn stop_everything() {
    let stopped = crate::exec::stop_all().await;
    if stopped > 0 {
        tracing::info!("stopped {stopped} process group(s) before ending");
    }
}
