//! Tests for the process supervisor: exit codes and signals, streams, stdin, the
//! environment, output caps, timeouts, cancellation, abandonment and leftovers, each
//! checked against the real processes (grandchildren included).

use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc::unbounded_channel;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::test_support::{
    abort_and_expect_killed, expect_killed, process_gone, read_pid, wait_live,
};
use super::*;

fn sink(max_bytes: usize) -> Sink {
    Sink {
        capture: Capture::HeadTail { max_bytes },
        live: None,
    }
}

/// `bash -c line` in `dir`, split streams of 10 kB each, 20 s, leftovers left.
fn request(line: &str, dir: &Path) -> Request {
    Request {
        program: Program::Bash {
            line: line.to_string(),
        },
        cwd: dir.to_path_buf(),
        prompts: Prompts::AsInherited,
        env: Vec::new(),
        stdin: Stdin::Null,
        output: Output::Split {
            stdout: sink(10_000),
            stderr: sink(10_000),
        },
        timeout: Duration::from_secs(20),
        leftovers: Leftovers::Leave,
        confinement: Confinement::Unconfined,
    }
}

/// [`request`] running `program` with `args` directly, without a shell.
fn direct(program: &str, args: &[&str], dir: &Path) -> Request {
    Request {
        program: Program::Direct {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        },
        ..request("", dir)
    }
}

async fn run_ok(request: Request) -> Finished {
    run(request, &CancellationToken::new()).await.unwrap()
}

/// Starts `line` in a task, its merged output live, and waits until it printed
/// "started".
async fn start_watched(
    line: &str,
    dir: &Path,
    cancel: CancellationToken,
) -> JoinHandle<Result<Finished, ExecError>> {
    let (tx, mut rx) = unbounded_channel();
    let mut req = request(line, dir);
    req.output = Output::Merged(Sink {
        capture: Capture::HeadTail { max_bytes: 1_000 },
        live: Some(tx),
    });
    let task = tokio::spawn(async move { run(req, &cancel).await });
    wait_live(&mut rx, "started\n").await;
    task
}

#[tokio::test]
async fn exit_codes_signals_and_their_status_lines() {
    let dir = tempfile::tempdir().unwrap();
    let done = run_ok(request("echo out; echo err >&2; exit 3", dir.path())).await;
    assert_eq!(done.exit, Exit::Exited { code: 3 });
    assert!(!done.exit.success());
    assert_eq!(done.exit.status_line().as_deref(), Some("[exit code 3]"));
    assert_eq!(
        (done.stdout.as_str(), done.stderr.as_str()),
        ("out\n", "err\n")
    );
    assert_eq!(done.pipes, Pipes::Closed);

    let done = run_ok(request("kill -TERM $$", dir.path())).await;
    assert_eq!(done.exit, Exit::Signalled { signal: 15 });
    assert_eq!(
        done.exit.status_line().as_deref(),
        Some("[killed by signal 15 (SIGTERM)]")
    );
    assert!(run_ok(request("true", dir.path())).await.exit.success());
    assert_eq!(Exit::Cancelled.status_line(), None);
}

#[tokio::test]
async fn merged_output_keeps_the_order_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = request("echo a; echo b >&2; echo c; echo d >&2", dir.path());
    req.output = Output::Merged(sink(10_000));
    let done = run_ok(req).await;
    assert_eq!(
        (done.stdout.as_str(), done.stderr.as_str()),
        ("a\nb\nc\nd\n", "")
    );
}

#[tokio::test]
async fn stdin_gets_the_bytes_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = request("cat; echo end", dir.path());
    req.stdin = Stdin::Bytes(b"{\"n\":1}\nsecond line".to_vec());
    assert_eq!(run_ok(req).await.stdout, "{\"n\":1}\nsecond lineend\n");
    // More than a pipe holds, to a command that reads none of it: no hang.
    let mut req = request("echo ignored", dir.path());
    req.stdin = Stdin::Bytes(vec![b'x'; 1 << 20]);
    assert_eq!(run_ok(req).await.stdout, "ignored\n");
    let done = run_ok(request("cat; echo end", dir.path())).await;
    assert_eq!(done.stdout, "end\n");
}

#[tokio::test]
async fn folder_environment_and_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let line = "pwd; echo \"${PAGER-unset} ${GIT_TERMINAL_PROMPT-unset} $MODE ${HOME-gone}\"";
    let mut req = request(line, &cwd);
    req.prompts = Prompts::Suppressed;
    req.env = vec![
        EnvChange::set("PAGER", "less"),
        EnvChange::set("MODE", "fast lane"),
        EnvChange::Remove {
            name: "HOME".into(),
        },
    ];
    let done = run_ok(req).await;
    assert_eq!(
        done.stdout,
        format!("{}\nless 0 fast lane gone\n", cwd.display())
    );
    let mut req = request("echo ${GIT_TERMINAL_PROMPT-unset}", &cwd);
    req.env = vec![EnvChange::Remove {
        name: "GIT_TERMINAL_PROMPT".into(),
    }];
    assert_eq!(run_ok(req).await.stdout, "unset\n");
}

#[tokio::test]
async fn direct_programs_run_without_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let req = direct("echo", &["a;b", "$HOME"], dir.path());
    assert_eq!(run_ok(req).await.stdout, "a;b $HOME\n");
}

#[tokio::test]
async fn missing_programs_fail_to_start_and_sh_stands_in_for_bash() {
    let dir = tempfile::tempdir().unwrap();
    let req = direct("no-such-program-h9", &[], dir.path());
    let err = run(req, &CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::Spawn { program, .. } if program == "no-such-program-h9"),
        "{err}"
    );
    assert_eq!(err.io_error().kind(), std::io::ErrorKind::NotFound);

    // A PATH with sh but no bash.
    let bin = tempfile::tempdir().unwrap();
    let sh = ["/bin/sh", "/usr/bin/sh"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(sh, bin.path().join("sh")).unwrap();
    let path = EnvChange::set("PATH", bin.path());
    let mut req = request("echo from sh", dir.path());
    req.env = vec![path.clone()];
    let err = run(req, &CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::Spawn { program, .. } if program == "bash"),
        "{err}"
    );
    let mut req = request("", dir.path());
    req.program = Program::BashOrSh {
        line: "echo from sh".into(),
    };
    req.env = vec![path];
    assert_eq!(run_ok(req).await.stdout, "from sh\n");
}

#[tokio::test]
async fn output_is_capped_head_and_tail_or_head_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = request("seq 1 100000; seq 1 100000 >&2", dir.path());
    req.output = Output::Split {
        stdout: sink(2_000),
        stderr: Sink {
            capture: Capture::Head { max_bytes: 10 },
            live: None,
        },
    };
    let done = run_ok(req).await;
    assert!(done.exit.success());
    let all: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(
        done.stdout,
        crate::truncate::truncate_head_tail(&all, 2_000)
    );
    assert!(done.stdout.ends_with("99999\n100000\n"));
    assert_eq!(done.stderr, "1\n2\n3\n4\n5\n");
    assert_eq!(
        Capture::within(1_000),
        Capture::HeadTail {
            max_bytes: 1_000 - FOOTER_RESERVE
        }
    );
}

#[tokio::test]
async fn timeout_stops_the_whole_group_grandchildren_too() {
    let dir = tempfile::tempdir().unwrap();
    // "started" comes once the grandchild's pid is on disk.
    let mut req = request(
        "sh -c 'sleep 100 & echo $! > grandchild.pid; wait' & \
         until [ -s grandchild.pid ]; do sleep 0.01; done; echo started; sleep 100",
        dir.path(),
    );
    req.timeout = Duration::from_secs(2);
    let done = run_ok(req).await;
    assert_eq!(
        done.exit,
        Exit::TimedOut {
            after: Duration::from_secs(2)
        }
    );
    assert_eq!(done.stdout, "started\n");
    expect_killed(&dir.path().join("grandchild.pid"), "the grandchild to die").await;
}

#[tokio::test]
async fn cancellation_stops_the_group_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let line = "sleep 300 & echo $! > bg.pid; echo started; sleep 300";
    let task = start_watched(line, dir.path(), cancel.clone()).await;
    cancel.cancel();
    let done = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(done.exit, Exit::Cancelled);
    assert_eq!(done.stdout, "started\n");
    expect_killed(&dir.path().join("bg.pid"), "the background job to die").await;
}

#[tokio::test]
async fn abandoning_the_call_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let line = "sleep 300 & echo $! > bg.pid; echo started; wait";
    let task = start_watched(line, dir.path(), CancellationToken::new()).await;
    abort_and_expect_killed(task, &dir.path().join("bg.pid")).await;
}

#[tokio::test]
async fn leftovers_are_left_or_killed_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    // Left running, holding the pipe: the call still ends, and says so.
    let req = request("sleep 300 & echo $! > left.pid; echo done", dir.path());
    let done = tokio::time::timeout(Duration::from_secs(10), run_ok(req))
        .await
        .unwrap();
    assert_eq!(
        (done.exit, done.pipes, done.stdout.as_str()),
        (Exit::Exited { code: 0 }, Pipes::HeldOpen, "done\n")
    );
    let left = read_pid(&dir.path().join("left.pid"));
    assert!(!process_gone(left), "a left job keeps running");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(left), Signal::SIGKILL);

    let mut req = request(
        "sleep 300 >/dev/null 2>&1 & echo $! > killed.pid; echo done",
        dir.path(),
    );
    req.leftovers = Leftovers::Kill;
    let done = run_ok(req).await;
    assert_eq!(
        (done.exit, done.pipes),
        (Exit::Exited { code: 0 }, Pipes::Closed)
    );
    expect_killed(&dir.path().join("killed.pid"), "the leftover to die").await;
}

/// A line over the 128 KiB one argument may hold runs as `bash FILE`: the file is
/// private (0600 in a 0700 folder of its own) while it runs and gone afterwards; the
/// line's meaning is the same (stdin, exit code, output, sh as well as bash).
#[tokio::test]
async fn lines_too_long_for_one_argument_run_through_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let filler = format!(": {}\n", "x".repeat(300 * 1024));
    for program in [
        |line: String| Program::Bash { line },
        |line: String| Program::BashOrSh { line },
    ] {
        let line = format!(
            "{filler}read -r got; echo \"stdin=$got\"; \
             echo \"modes=$(stat -c %a \"$0\" \"$(dirname \"$0\")\" | tr '\\n' ' ')\"; \
             echo \"file=$0\"; exit 3"
        );
        assert!(line.len() > 128 * 1024);
        let finished = run_ok(Request {
            program: program(line),
            stdin: Stdin::Bytes(b"hello\n".to_vec()),
            ..request("", dir.path())
        })
        .await;
        assert_eq!(finished.exit, Exit::Exited { code: 3 }, "{finished:?}");
        let out = &finished.stdout;
        assert!(out.contains("stdin=hello\n"), "{out}");
        assert!(out.contains("modes=600 700 \n"), "{out}");
        let file = out
            .lines()
            .find_map(|l| l.strip_prefix("file="))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(!Path::new(file).exists(), "{file} left behind");
        assert!(
            !Path::new(file).parent().unwrap().exists(),
            "{file}'s folder left behind"
        );
    }
    // A short line still goes as `-c`.
    let finished = run_ok(request("echo \"$0\"", dir.path())).await;
    assert_eq!(finished.stdout, "bash\n");
}
