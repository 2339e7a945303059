//! Running the real binary in tests: [`Dirs`] (a home and a project for a run),
//! [`output_of`] (a run with its standard input closed), its output read back as JSON
//! lines, checked for what it must hold ([`assert_has`]) and its exit code checked with
//! its stderr shown. Only processes, paths and
//! text: nothing here knows harness9's types.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use super::write;

/// Asserts that the binary exited with `code`, showing its stderr when it did not.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts that `text` holds every one of `needles`, showing it when not.
pub fn assert_has(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} is missing from: {text}");
    }
}

/// Every line of `stdout` parsed as JSON; a line that is not fails the test.
pub fn json_lines(stdout: impl AsRef<[u8]>) -> Vec<Value> {
    String::from_utf8_lossy(stdout.as_ref())
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect()
}

/// Runs `cmd` with its standard input closed and waits for its output.
pub fn output_of(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("the command runs")
}

/// The real binary run in `project` with nothing of the test's environment but `PATH`,
/// `home` as `$HOME` and `harness9_home` as `$HARNESS9_HOME`: for the subcommands that
/// need no server.
pub fn harness9_offline(home: &Path, harness9_home: &Path, project: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HARNESS9_HOME", harness9_home);
    cmd
}

/// A `$HARNESS9_HOME` and a project folder for runs of the binary, removed when dropped.
pub struct Dirs {
    /// What the binary gets as `$HARNESS9_HOME` (and `$HOME`).
    pub home: TempDir,
    /// The folder it runs in.
    pub project: TempDir,
}

impl Dirs {
    /// Two empty folders.
    pub fn new() -> Dirs {
        Dirs {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    /// Two folders, the home holding `toml` as its `config.toml`.
    pub fn with_config(toml: &str) -> Dirs {
        let dirs = Dirs::new();
        write(&dirs.home().join("config.toml"), toml);
        dirs
    }

    /// The home's path.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The project's path.
    pub fn project(&self) -> &Path {
        self.project.path()
    }

    /// Writes `text` to `rel` in the project (parent folders made).
    pub fn project_file(&self, rel: &str, text: &str) {
        write(&self.project().join(rel), text);
    }

    /// Writes `text` to `rel` in the home (parent folders made).
    pub fn home_file(&self, rel: &str, text: &str) {
        write(&self.home().join(rel), text);
    }
}
