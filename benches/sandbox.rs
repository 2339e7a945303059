//! What the sandbox launcher adds to one command, with the policy a session gives it
//! (workspace-write, namespaces on: a project with `.git` and `.env`, the temp folders,
//! the protected paths, the home folder's secrets and `$HARNESS9_HOME` masked, as
//! `SandboxPolicy::new(…).hiding(…)` makes them for this user): `true` started directly;
//! through a launcher started for it (its arguments on the command line, as the launcher
//! always ran before the spare); and through a spare (a launcher already running, with
//! namespaces: the user and PID namespaces and their first process made before the
//! job), handed the command as a job, timed from the job's write. Each run is followed
//! by a pause (a session's commands are separated by model turns: the namespaces of the
//! last one are torn down meanwhile), the cases alternate run by run. Prints medians.
//! With `HARNESS9_BENCH_BASE_LAUNCHER=PATH` (an older `harness9-sandbox`), its
//! command-line launch is measured too.
//!
//! Run: `cargo bench --bench sandbox`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness9::sandbox::job::{Job, JobStderr, JobStdin};
use harness9::sandbox::launcher::JOB_IN_NAMESPACES_FLAG;
use harness9::sandbox::{
    LAUNCHER_MARKER, Namespaces, Network, SandboxMode, SandboxPolicy, SecretPlaces,
};

const RUNS: usize = 300;
const PAUSE: Duration = Duration::from_millis(2);

fn median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[v.len() / 10])
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// The launcher's arguments for this session-like policy (marker first).
fn policy_args(project: &Path) -> Vec<OsString> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let places = SecretPlaces {
        harness9_home: home.as_ref().map(|h| h.join(".harness9")),
        visible: home
            .as_ref()
            .map(|h| vec![h.join(".harness9/skills")])
            .unwrap_or_default(),
        user_home: home,
        masked_paths: Vec::new(),
    };
    SandboxPolicy::new(SandboxMode::WorkspaceWrite, project, &[], Network::Deny)
        .hiding(&places)
        .with_namespaces(Namespaces::On)
        .launcher_args()
}

fn quiet(cmd: &mut Command) -> &mut Command {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
}

fn main() {
    let project = tempfile::tempdir().unwrap();
    let p = project.path().canonicalize().unwrap();
    std::fs::create_dir_all(p.join(".git/hooks")).unwrap();
    std::fs::write(p.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(p.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(p.join(".env"), "SECRET=x\n").unwrap();
    let launcher = PathBuf::from(env!("CARGO_BIN_EXE_harness9-sandbox"));
    let base = std::env::var_os("HARNESS9_BENCH_BASE_LAUNCHER").map(PathBuf::from);
    let args = policy_args(&p);

    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let mut direct = Vec::new();
    let mut fresh = Vec::new();
    let mut fresh_base = Vec::new();
    let mut spare = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        assert!(
            quiet(Command::new("true").current_dir(&p))
                .status()
                .unwrap()
                .success()
        );
        direct.push(ms(t));
        std::thread::sleep(PAUSE);
        for (bin, out) in [
            (Some(&launcher), &mut fresh),
            (base.as_ref(), &mut fresh_base),
        ] {
            let Some(bin) = bin else { continue };
            let t = Instant::now();
            let ok = quiet(
                Command::new(bin)
                    .args(&args)
                    .args(["--", "true"])
                    .current_dir(&p),
            )
            .status()
            .unwrap()
            .success();
            out.push(ms(t));
            assert!(ok, "{} failed", bin.display());
            std::thread::sleep(PAUSE);
        }
        let mut child = quiet(
            Command::new(&launcher)
                .args([LAUNCHER_MARKER, JOB_IN_NAMESPACES_FLAG])
                .current_dir("/"),
        )
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
        // Waiting for its job, as a session's spare is by the time a command comes.
        std::thread::sleep(Duration::from_millis(10));
        let mut job_args = args[1..].to_vec();
        job_args.extend(["--".into(), "true".into()]);
        let job = Job {
            cwd: p.clone(),
            stdin: JobStdin::Null,
            stderr: JobStderr::Own,
            env: env.clone(),
            args: job_args,
        }
        .encode();
        let t = Instant::now();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&job).unwrap();
        drop(stdin);
        let ok = child.wait().unwrap().success();
        spare.push(ms(t));
        assert!(ok, "the spare failed");
        std::thread::sleep(PAUSE);
    }
    let (d, d10) = median(direct);

    println!("sandbox launcher, `true`, {RUNS} runs each (median, p10), policy of a session");
    println!("  direct                                   {d:6.2} ms ({d10:.2})");
    let show = |name: &str, v: Vec<f64>| {
        if v.is_empty() {
            return;
        }
        let (m, m10) = median(v);
        println!("  {name:40} {m:6.2} ms ({m10:.2})   adds {:+.2} ms", m - d);
    };
    show("launcher started for it (arguments)", fresh);
    show("older launcher started for it", fresh_base);
    show("spare launcher (job, namespaces ahead)", spare);
}
