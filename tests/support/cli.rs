//! The binary run the way a script runs a subcommand (`harness9 -C PROJECT skills …`):
//! the environment cleared but `PATH`, a home of its own as both `$HOME` and
//! `$HARNESS9_HOME`, stdin empty, stdout and stderr captured. Every CLI test uses this
//! one runner, so they all see the binary the same way.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `harness9 -C project` with a clean environment: `home` as `$HOME` and
/// `$HARNESS9_HOME`, `PATH` kept, stdin empty. Add the subcommand's arguments (and any
/// more environment) before running it.
pub fn harness9_cli(home: &Path, project: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.arg("-C")
        .arg(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HARNESS9_HOME", home)
        .stdin(Stdio::null());
    cmd
}

/// A home and a project folder of their own, removed at the end of the test.
pub struct CliEnv {
    /// `$HOME` and `$HARNESS9_HOME`.
    pub home: tempfile::TempDir,
    /// The project (`-C`).
    pub work: tempfile::TempDir,
}

impl CliEnv {
    /// Two empty folders.
    pub fn new() -> CliEnv {
        CliEnv {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    /// `harness9 -C WORK ARGS…`, not yet run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = harness9_cli(self.home.path(), self.work.path());
        cmd.args(args);
        cmd
    }

    /// `harness9 -C WORK ARGS…`, run to its end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
}

/// A run's stdout as text.
pub fn stdout_text(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A run's stderr as text.
pub fn stderr_text(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}
