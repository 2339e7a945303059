//! Nothing harness9 started outlives it: SIGTERM or SIGHUP to `harness9 -p` and to the
//! pipe REPL, while the model's `bash` command runs (and after an earlier command left
//! a background job), stops the running command, its children and the job, and
//! harness9 exits with 128 + the signal's number, saying which signal ended it. A
//! second Ctrl-C in `-p` ends it the same way. (The TUI: `tui_e2e::signals`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::support::*;

const DEADLINE: Duration = Duration::from_secs(30);

/// The model's two calls: one leaves a background job and returns; the next writes its
/// own pid and its child's, then sleeps. (The pids are the sandbox's own numbers:
/// [`host_pid`] finds them on the host.)
pub fn script_of_long_commands(server: &MockServer) {
    server.push(tool_reply(
        "c1",
        "bash",
        r#"{"command":"sleep 300 > /dev/null 2>&1 & echo $! > job.pid"}"#,
    ));
    server.push(tool_reply(
        "c2",
        "bash",
        r#"{"command":"sleep 301 & echo $! > child.pid; echo $$ > cmd.pid; wait"}"#,
    ));
    server.push(answer("never reached"));
}

/// Waits until `file` holds a pid (written whole, with its newline).
pub fn wait_for_pid(file: &Path) -> i32 {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && text.ends_with('\n')
        {
            return text.trim().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "{} never came", file.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The host's pid of the process a command in `project` knows as `inner`: in the
/// sandbox a command has a PID namespace of its own, so `$$` is that namespace's number.
/// The process is the one working in `project` whose `NSpid` ends with `inner` and whose
/// command line holds `marker` (unsandboxed, `NSpid` is the pid itself).
pub fn host_pid(project: &Path, inner: i32, marker: &str) -> i32 {
    let project = project.canonicalize().unwrap();
    let deadline = Instant::now() + DEADLINE;
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let last = status
                .lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|ids| ids.split_whitespace().last()?.parse::<i32>().ok());
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd"));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if last == Some(inner) && cwd.is_ok_and(|c| c == project) && cmdline.contains(marker) {
                return pid;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no process {inner} ({marker}) in {}",
            project.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until `file` holds `text`.
fn wait_for_text(file: &Path, text: &str) {
    let deadline = Instant::now() + DEADLINE;
    while !std::fs::read_to_string(file).is_ok_and(|t| t.contains(text)) {
        assert!(
            Instant::now() < deadline,
            "{} never held {text}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether `pid` is gone (or a zombie nobody reaped yet).
pub fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Asserts every pid is gone within the deadline (killing the survivors so that a
/// failing test leaves nothing behind).
pub fn assert_all_gone(pids: &[(&str, i32)]) {
    let deadline = Instant::now() + DEADLINE;
    while pids.iter().any(|(_, pid)| !gone(*pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let alive: Vec<&str> = pids
        .iter()
        .filter(|(_, pid)| !gone(*pid))
        .map(|(what, _)| *what)
        .collect();
    for (_, pid) in pids {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    assert!(
        alive.is_empty(),
        "still running after harness9 ended: {alive:?}"
    );
}

/// The host's pids of the three processes once the second command runs.
pub fn running(project: &Path) -> [(&'static str, i32); 3] {
    let pid =
        |file: &str, marker: &str| host_pid(project, wait_for_pid(&project.join(file)), marker);
    [
        (
            "the background job of the first command",
            pid("job.pid", "sleep 300"),
        ),
        ("the running command", pid("cmd.pid", "cmd.pid")),
        ("the running command's child", pid("child.pid", "sleep 301")),
    ]
}

/// `harness9 ARGS` in `dirs` against `server`, running with `stdin` and its output
/// piped.
fn start(server: &MockServer, dirs: &Dirs, args: &[&str], stdin: Stdio) -> Child {
    server
        .binary(dirs)
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`start`] in fresh folders against a server scripted with
/// [`script_of_long_commands`]; keep the server alive while the child runs.
fn start_long_commands(args: &[&str], stdin: Stdio) -> (Dirs, MockServer, Child) {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![]);
    script_of_long_commands(&server);
    let child = start(&server, &dirs, args, stdin);
    (dirs, server, child)
}

fn signal(child: &Child, signal: Signal) {
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), signal).unwrap();
}

fn check_ended(child: Child, by: Signal, pids: &[(&str, i32)]) {
    let out = wait_with_deadline(child, DEADLINE);
    assert_all_gone(pids);
    let code = 128 + by as i32;
    assert_exit(&out, code);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("harness9: terminated by {}", by.as_str())),
        "{err}"
    );
}

#[test]
fn sigterm_and_sighup_of_print_mode_stop_every_command() {
    for by in [Signal::SIGTERM, Signal::SIGHUP] {
        let (dirs, _server, child) =
            start_long_commands(&["-p", "go", "--approval-mode", "full-auto"], Stdio::null());
        let pids = running(dirs.project());
        signal(&child, by);
        check_ended(child, by, &pids);
    }
}

#[test]
fn a_second_ctrl_c_in_print_mode_stops_every_command() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![]);
    // A command that notes the SIGTERM the first Ctrl-C sends it, and goes on (it
    // would be killed a second later).
    server.push(tool_reply("c1", "bash", r#"{"command":"trap 'echo got >> term.log' TERM; trap '' INT; echo $$ > cmd.pid; while :; do sleep 0.05; done"}"#));
    let child = start(
        &server,
        &dirs,
        &["-p", "go", "--approval-mode", "full-auto"],
        Stdio::null(),
    );
    let cmd = host_pid(
        dirs.project(),
        wait_for_pid(&dirs.project().join("cmd.pid")),
        "cmd.pid",
    );
    signal(&child, Signal::SIGINT);
    // The first was heard: the turn is being stopped.
    wait_for_text(&dirs.project().join("term.log"), "got");
    signal(&child, Signal::SIGINT);
    check_ended(child, Signal::SIGINT, &[("the command", cmd)]);
}

#[test]
fn sigterm_and_sighup_of_the_pipe_repl_stop_every_command() {
    for by in [Signal::SIGTERM, Signal::SIGHUP] {
        let (dirs, _server, mut child) =
            start_long_commands(&["--approval-mode", "full-auto"], Stdio::piped());
        // One line, and stdin stays open: the REPL waits for more.
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"go\n").unwrap();
        stdin.flush().unwrap();
        let pids = running(dirs.project());
        signal(&child, by);
        check_ended(child, by, &pids);
        drop(stdin);
    }
}
