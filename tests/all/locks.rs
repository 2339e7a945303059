//! Two harness9 processes never lose or interleave each other's writes: many
//! `harness9 mcp add` at once, to the user's config.toml and to the project's
//! `.harness9/config.toml` (which also approves each server in
//! `$HARNESS9_HOME/mcp/trusted.json`), all land; and a saved session is written by one
//! process at a time (`--resume` of a session another harness9 has open is refused,
//! naming that process).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn mcp_add(home: &Path, project: &Path, name: &str, scope: &str) -> Command {
    let mut cmd = harness9_cli(home, project);
    cmd.args([
        "mcp",
        "add",
        name,
        "--scope",
        scope,
        "--",
        "some-server",
        name,
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    cmd
}

/// `count` processes started together, each adding its own server; all must succeed.
fn add_at_once(home: &Path, project: &Path, scope: &str, count: usize) -> Vec<String> {
    let names: Vec<String> = (0..count).map(|i| format!("{scope}{i}")).collect();
    let children: Vec<Child> = names
        .iter()
        .map(|name| mcp_add(home, project, name, scope).spawn().unwrap())
        .collect();
    for child in children {
        let out = wait_with_deadline(child, DEADLINE);
        assert_exit(&out, 0);
    }
    names
}

#[test]
fn concurrent_mcp_adds_all_land_in_the_config_and_the_trust_list() {
    let dirs = Dirs::new();
    std::fs::write(
        dirs.home().join("config.toml"),
        "# my settings\nmodel = \"m\"\n",
    )
    .unwrap();
    let names = add_at_once(dirs.home(), dirs.project(), "user", 12);
    let text = std::fs::read_to_string(dirs.home().join("config.toml")).unwrap();
    assert!(text.starts_with("# my settings\nmodel = \"m\"\n"), "{text}");
    for name in &names {
        assert!(
            text.contains(&format!("[mcp_servers.{name}]")),
            "{name} lost: {text}"
        );
    }

    let names = add_at_once(dirs.home(), dirs.project(), "project", 12);
    let project_file =
        std::fs::read_to_string(dirs.project().join(".harness9/config.toml")).unwrap();
    let trust = std::fs::read_to_string(dirs.home().join("mcp/trusted.json")).unwrap();
    for name in &names {
        assert!(
            project_file.contains(&format!("[mcp_servers.{name}]")),
            "{name} lost: {project_file}"
        );
        assert!(
            trust.contains(&format!("[\\\"{name}\\\"")),
            "{name}'s approval lost: {trust}"
        );
    }
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dirs.project().join(".harness9"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

/// The saved session's file and id after one `-p` run in `project`.
fn one_saved_session(
    server: &MockServer,
    home: &Path,
    project: &Path,
) -> (std::path::PathBuf, String) {
    server.push(answer("first answer"));
    let out = server
        .harness9(home, project)
        .args(["-p", "first"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let dir = std::fs::read_dir(home.join("sessions"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let id = file.file_stem().unwrap().to_string_lossy().into_owned();
    (file, id)
}

/// Waits until the process `pid` holds the writer's lock on `file`, read from
/// `/proc/locks`: probing with a lock of our own would take it for a moment (and a
/// child another test forks at that moment would keep it until it execs), racing the
/// writer it waits for.
fn wait_until_locked(file: &Path, pid: u32) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).unwrap();
    let (dev, ino) = (meta.dev(), meta.ino());
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let wanted = format!("{major:02x}:{minor:02x}:{ino}");
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let locks = std::fs::read_to_string("/proc/locks").unwrap();
        let held = locks.lines().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1) == Some(&"FLOCK")
                && fields.get(4) == Some(&pid.to_string().as_str())
                && fields.get(5) == Some(&wanted.as_str())
        });
        if held {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{pid} never took the lock"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_session_open_in_one_harness9_is_refused_by_a_second() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![]);
    let (file, id) = one_saved_session(&server, dirs.home(), dirs.project());

    // The first: a pipe REPL on the session, waiting for input.
    let mut first = server
        .binary(&dirs)
        .args(["--resume", &id])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_locked(&file, first.id());

    // The second, by id and with -c (the latest of the project): refused, naming it.
    for args in [vec!["--resume", id.as_str()], vec!["-c"]] {
        let second = server
            .binary(&dirs)
            .args(&args)
            .args(["-p", "second"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_exit(&second, 2);
        let err = String::from_utf8_lossy(&second.stderr);
        assert!(
            err.contains(&format!(
                "session {id} is open in another harness9 process (pid {})",
                first.id()
            )),
            "{args:?}: {err}"
        );
    }
    // Neither refused run wrote to it (the first one may be writing its own records).
    assert!(!std::fs::read_to_string(&file).unwrap().contains("second"));
    assert_eq!(
        server.chat_requests().len(),
        1,
        "the refused runs sent nothing"
    );

    // Once the first has ended, the session is free again.
    drop(first.stdin.take());
    let out = wait_with_deadline(first, DEADLINE);
    assert_exit(&out, 0);
    server.push(answer("third answer"));
    let third = server.run(&dirs, &["--resume", &id, "-p", "third"]);
    assert_exit(&third, 0);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("third answer")
    );
}

/// Several `--resume ID -p …` started at the same instant: whichever get past the
/// start-up check, the writer's lock lets one write at a time — every line of the file
/// is a whole record, and each run's prompt is in it once or the run was refused.
#[test]
fn resumes_started_together_never_interleave_records() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![]);
    let (file, id) = one_saved_session(&server, dirs.home(), dirs.project());
    const RUNS: usize = 6;
    for n in 0..RUNS {
        server.push(answer(&format!("answer {n}")));
    }
    let children: Vec<Child> = (0..RUNS)
        .map(|n| {
            server
                .binary(&dirs)
                .args(["--resume", &id, "-p", &format!("prompt number {n}")])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| wait_with_deadline(c, DEADLINE))
        .collect();
    let text = std::fs::read_to_string(&file).unwrap();
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("a broken record ({e}): {line}\n{text}"));
    }
    for (n, out) in outputs.iter().enumerate() {
        let err = String::from_utf8_lossy(&out.stderr);
        let prompt = format!("prompt number {n}");
        match out.status.code() {
            Some(2) => {
                assert!(err.contains("is open in another harness9"), "{err}");
                assert!(!text.contains(&prompt), "refused run {n} wrote: {text}");
            }
            Some(0) if err.contains("could not resume") => {
                assert!(err.contains("is open in"), "{err}");
                assert!(!text.contains(&prompt), "run {n} wrote: {text}");
            }
            Some(0) => assert_eq!(text.matches(&prompt).count(), 1, "{n}: {text}"),
            other => panic!("run {n} ended with {other:?}: {err}"),
        }
    }
}
