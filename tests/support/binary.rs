//! Running the real binary in tests, one way for every test: [`Dirs`] (a home and a
//! project for a run), [`harness9_cli`] and [`Dirs::run`] (a subcommand, as a script
//! runs it, with no server), [`MockServer::harness9`] and the runs built on it (one tool
//! call, every kind of child a skill starts), [`sandbox_launcher`] (the launcher run
//! directly), [`output_of`] (a run with its standard input closed); its output read as
//! text or JSON lines, checked for what it must hold ([`assert_has`]) and its exit code
//! checked with its stderr shown. Only processes, paths and text: nothing here knows
//! harness9's types.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use super::{
    MockServer, RecordedRequest, answer, project_skill, run_fed, tool_reply, use_skill_reply, write,
};

/// Asserts that the binary exited with `code`, showing its stderr when it did not.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `type` of each event of a JSON-lines output.
pub fn event_types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().expect("every event has a type"))
        .collect()
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

/// A run's stdout as text.
pub fn stdout_text(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A run's stderr as text.
pub fn stderr_text(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// The real binary with nothing of the test's environment but `PATH`, and `home` as
/// both `$HOME` and `$HARNESS9_HOME`: what every run below starts from.
fn clean_binary(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HARNESS9_HOME", home);
    cmd
}

/// `harness9 -C project`, run the way a script runs a subcommand: a clean environment
/// with `home` as `$HOME` and `$HARNESS9_HOME`, `PATH` kept, stdin empty, no server.
/// Add the subcommand's arguments (and any more environment) before running it.
pub fn harness9_cli(home: &Path, project: &Path) -> Command {
    let mut cmd = clean_binary(home);
    cmd.arg("-C").arg(project).stdin(Stdio::null());
    cmd
}

/// The sandbox launcher (`harness9 __harness9-sandbox-exec`) with the test's own
/// environment: add its arguments.
pub fn sandbox_launcher() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.arg("__harness9-sandbox-exec");
    cmd
}

/// [`Dirs`] and a folder outside both, for the tests of what a run may reach beyond
/// its project (through links, mentions).
pub struct Outside {
    /// The home and the project.
    pub dirs: Dirs,
    /// The folder outside.
    pub outside: TempDir,
}

impl Outside {
    /// Three empty folders.
    pub fn new() -> Outside {
        Outside {
            dirs: Dirs::new(),
            outside: tempfile::tempdir().unwrap(),
        }
    }

    /// The project's path with every link resolved.
    pub fn project(&self) -> PathBuf {
        std::fs::canonicalize(self.dirs.project()).unwrap()
    }

    /// The outside folder's path with every link resolved.
    pub fn outside(&self) -> PathBuf {
        std::fs::canonicalize(self.outside.path()).unwrap()
    }
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

    /// `harness9 -C PROJECT ARGS…` ([`harness9_cli`]), not yet run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = harness9_cli(self.home(), self.project());
        cmd.args(args);
        cmd
    }

    /// `harness9 -C PROJECT ARGS…` ([`harness9_cli`]), run to its end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
}

impl MockServer {
    /// The real binary, run in `project` against this server with a clean environment:
    /// `home` as `$HARNESS9_HOME` and `$HOME`, the key `k`, the model `m`, `NO_COLOR`.
    pub fn harness9(&self, home: &Path, project: &Path) -> Command {
        let mut cmd = clean_binary(home);
        cmd.current_dir(project)
            .env("OPENAI_API_KEY", "k")
            .env("OPENAI_BASE_URL", self.url())
            .env("HARNESS9_MODEL", "m")
            .env("NO_COLOR", "1");
        cmd
    }

    /// `binary` (a harness9 build, for the benches: this one or a baseline) against
    /// this server in `workdir`, with nothing of the caller's environment but `PATH`,
    /// and its streams closed: the benches time and measure it, not its output.
    pub fn quiet_run_of(&self, binary: &Path, home: &Path, workdir: &Path) -> Command {
        let mut cmd = Command::new(binary);
        cmd.args(["--base-url", &self.url(), "--model", "m", "-C"])
            .arg(workdir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("HARNESS9_HOME", home)
            .env("OPENAI_API_KEY", "k")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    /// [`MockServer::harness9`] in `dirs`.
    pub fn binary(&self, dirs: &Dirs) -> Command {
        self.harness9(dirs.home(), dirs.project())
    }

    /// Runs `harness9 ARGS` in `dirs` against this server, its standard input closed.
    pub fn run(&self, dirs: &Dirs, args: &[&str]) -> Output {
        output_of(self.binary(dirs).args(args))
    }

    /// Runs `harness9 -p go ARGS` with `env` in `home` and `project`, its standard input
    /// empty, at most a minute; returns its output and the chat requests it made.
    fn run_go(
        &self,
        (home, project): (&Path, &Path),
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Output, Vec<RecordedRequest>) {
        let before = self.chat_requests().len();
        let mut cmd = self.harness9(home, project);
        cmd.args(["-p", "go"]).args(args);
        for (name, value) in env {
            cmd.env(name, value);
        }
        let out = run_fed(&mut cmd, b"");
        let made = self.chat_requests().split_off(before);
        (out, made)
    }

    /// Runs `harness9 -p go` (plus `args` and `env`) in `home` and `project` while this
    /// server's model makes one call of `tool` with the JSON text `arguments` and then
    /// answers; returns the output and the call's result as the model got it ("" when
    /// there was no second request).
    pub fn one_call(
        &self,
        (home, project): (&Path, &Path),
        (tool, arguments): (&str, &str),
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Output, String) {
        self.push(tool_reply("c1", tool, arguments));
        self.push(answer("done"));
        let (out, made) = self.run_go((home, project), args, env);
        let result = made
            .get(1)
            .and_then(|r| r.tool_results().into_iter().next())
            .unwrap_or_default();
        (out, result)
    }

    /// [`MockServer::one_call`] of the `bash` tool running `command`.
    pub fn one_bash_call(
        &self,
        home: &Path,
        project: &Path,
        command: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Output, String) {
        let call = serde_json::json!({ "command": command }).to_string();
        self.one_call((home, project), ("bash", &call), args, env)
    }

    /// Runs `harness9 -p go --approval-mode full-auto` (plus `env`) in `project` with a
    /// skill `name` whose body holds the inline command `` !`inline` `` and whose
    /// `scripts/run.sh` (the text `script`) is both its tools.json tool `NAME_run` (run
    /// with the argument `tool`) and what `skill_run` runs (with `run`): the model calls
    /// use_skill, the tool, then skill_run. Returns the output and the three tool results,
    /// in that order — one from each kind of child a skill starts.
    pub fn every_skill_child(
        &self,
        home: &Path,
        project: &Path,
        (name, inline, script): (&str, &str, &str),
        env: &[(&str, &str)],
    ) -> (Output, Vec<String>) {
        use std::os::unix::fs::PermissionsExt;
        let dir = project_skill(
            project,
            name,
            "Runs commands",
            &format!("Inline:\n!`{inline}`\n"),
        );
        let path = dir.join("scripts/run.sh");
        write(&path, script);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("the script is made executable");
        write(
            &dir.join("tools.json"),
            &serde_json::json!([{
                "name": format!("{name}_run"),
                "description": "Run the script.",
                "command": "scripts/run.sh tool",
                "parameters": {"type": "object", "properties": {}},
            }])
            .to_string(),
        );
        let call = |id: &str, tool: &str, args: Value| tool_reply(id, tool, &args.to_string());
        self.push(use_skill_reply("c1", name));
        self.push(call("c2", &format!("{name}_run"), serde_json::json!({})));
        self.push(call(
            "c3",
            "skill_run",
            serde_json::json!({ "skill": name, "command": "scripts/run.sh run" }),
        ));
        self.push(answer("done"));
        let (out, made) = self.run_go((home, project), &["--approval-mode", "full-auto"], env);
        let results = made
            .get(3)
            .map(RecordedRequest::tool_results)
            .unwrap_or_default();
        (out, results)
    }
}
