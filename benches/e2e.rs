//! End-to-end benchmarks of the release binary against the scripted loopback server:
//! process start → first request received (with 0, 1,000 and 10,000 skills on disk, the
//! 1,000 with a cold and a warm discovery cache, the 10,000 warm), the peak RSS of
//! one-shot runs (without skills, and with 10,000), the gap between a read_file
//! tool-call response and the next request, the gap for a `bash` call of `true` in
//! `auto-edit` with the sandbox on (the first of a session, and the later ones) against
//! the same calls in `full-auto --sandbox off` (the scripted model thinking 20 ms before
//! each answer, taken off), and the size of the first request.
//! Run: `cargo bench --bench e2e`. Prints medians.
//!
//! With `HARNESS9_BENCH_BASE=PATH` (another harness9 binary, e.g. main's release build)
//! every case runs on both binaries, alternating run by run so the machine's load falls
//! on both alike, and each line shows both medians and their ratio.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

const RUNS: usize = 30;
/// `bash` calls per session in the sandbox case.
const CALLS: usize = 6;

/// The first `n` chat requests, once they came (a session may also ask `/models` for
/// the context window, in the background: that request is no turn of it).
fn chat(server: &MockServer, n: usize) -> Vec<RecordedRequest> {
    server
        .wait_for_chat_requests(n, Duration::from_secs(10))
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The binaries measured: this build, and `HARNESS9_BENCH_BASE` when set.
fn bins() -> Vec<PathBuf> {
    let mut bins = vec![PathBuf::from(env!("CARGO_BIN_EXE_harness9"))];
    if let Some(base) = std::env::var_os("HARNESS9_BENCH_BASE") {
        bins.push(PathBuf::from(base));
    }
    bins
}

fn command(bin: &Path, server: &MockServer, home: &Path, workdir: &Path, prompt: &str) -> Command {
    let mut cmd = server.quiet_run_of(bin, home, workdir);
    cmd.args(["-p", prompt]);
    cmd
}

fn make_skills(root: &Path, n: usize) {
    for i in 0..n {
        let name = format!("skill-{i:05}");
        let description = format!("Use when doing task number {i} of the generated set");
        let body = "Follow these steps carefully.\n".repeat(100);
        skill(&root.join("skills"), &name, &description, "", &body);
    }
}

/// Whether the discovery cache (`$HARNESS9_HOME/cache/skills-index`) is there.
#[derive(Clone, Copy, PartialEq)]
enum Cache {
    /// Deleted before each run: every SKILL.md head is read (and the cache written).
    Cold,
    /// Kept between runs: one `stat` per SKILL.md.
    Warm,
}

/// Start → first request received, in milliseconds, per binary.
fn start_to_first_request(skills: usize, cache: Cache) -> Vec<f64> {
    let work = tempfile::tempdir().unwrap();
    make_skills(work.path(), skills);
    if skills > 0 {
        // Files changed within 2 s of a run are never cached (see src/skills/cache.rs);
        // skills on a real disk are older than that.
        std::thread::sleep(Duration::from_millis(2_100));
    }
    let bins = bins();
    let homes: Vec<_> = bins.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    let mut samples = vec![Vec::new(); bins.len()];
    for run in 0..RUNS + 1 {
        for (i, bin) in bins.iter().enumerate() {
            let cache_file = homes[i].path().join("cache/skills-index");
            if cache == Cache::Cold {
                let _ = std::fs::remove_file(&cache_file);
            }
            let server = MockServer::start(vec![sse(vec![text("ok"), finish("stop")])]);
            let t0 = Instant::now();
            let status = command(bin, &server, homes[i].path(), work.path(), "hi")
                .status()
                .unwrap();
            assert!(status.success());
            let first = chat(&server, 1)[0].received_at;
            // The first run of a warm case makes the cache.
            if run > 0 || cache == Cache::Cold {
                samples[i].push(first.duration_since(t0).as_secs_f64() * 1000.0);
            }
        }
    }
    samples.into_iter().map(median).collect()
}

/// Peak RSS of one-shot runs with `skills` skills (warm cache), in MB, per binary: each
/// run under `/usr/bin/time -f %M` (a small parent, whose own size cannot be counted).
fn peak_rss_mb(skills: usize) -> Vec<f64> {
    let work = tempfile::tempdir().unwrap();
    make_skills(work.path(), skills);
    if skills > 0 {
        std::thread::sleep(Duration::from_millis(2_100));
    }
    let bins = bins();
    let homes: Vec<_> = bins.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    let out = tempfile::tempdir().unwrap();
    let mut samples = vec![Vec::new(); bins.len()];
    for run in 0..11 {
        for (i, bin) in bins.iter().enumerate() {
            let server = MockServer::start(vec![sse(vec![text("ok"), finish("stop")])]);
            let inner = command(bin, &server, homes[i].path(), work.path(), "hi");
            let file = out.path().join("rss");
            let mut timed = Command::new("/usr/bin/time");
            timed
                .args(["-f", "%M", "-o"])
                .arg(&file)
                .arg(inner.get_program())
                .args(inner.get_args())
                .env_clear()
                .envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            assert!(timed.status().unwrap().success());
            if run > 0 {
                let kb: f64 = std::fs::read_to_string(&file)
                    .unwrap()
                    .split_whitespace()
                    .last()
                    .unwrap()
                    .parse()
                    .unwrap();
                samples[i].push(kb / 1024.0);
            }
        }
    }
    samples.into_iter().map(median).collect()
}

/// Gap between the end of a read_file tool-call response and the next request, in ms
/// (measured from the first request's arrival, so it is an upper bound), per binary.
fn tool_gap_ms() -> Vec<f64> {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "line\n".repeat(200)).unwrap();
    let bins = bins();
    let homes: Vec<_> = bins.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    let mut samples = vec![Vec::new(); bins.len()];
    for _ in 0..RUNS {
        for (i, bin) in bins.iter().enumerate() {
            let server = MockServer::start(vec![
                sse(vec![
                    tool_call(0, "r", "read_file", r#"{"path":"a.txt"}"#),
                    finish("tool_calls"),
                ]),
                sse(vec![text("done"), finish("stop")]),
            ]);
            assert!(
                command(bin, &server, homes[i].path(), work.path(), "read")
                    .status()
                    .unwrap()
                    .success()
            );
            let reqs = chat(&server, 2);
            samples[i].push(
                reqs[1]
                    .received_at
                    .duration_since(reqs[0].received_at)
                    .as_secs_f64()
                    * 1000.0,
            );
        }
    }
    samples.into_iter().map(median).collect()
}

/// How long the scripted model takes before each answer in the `bash` case: a session's
/// spare launcher starts a moment after a command ends, while the model thinks (no model
/// answers in under 20 ms). Taken off the gaps.
const THINK_MS: u64 = 20;

/// One session of [`CALLS`] `bash` calls of `true`; each call's gap (tool-call response
/// → next request, less the model's [`THINK_MS`]), in ms.
fn bash_session(bin: &Path, home: &Path, work: &Path, args: &[&str]) -> Vec<f64> {
    let mut replies: Vec<Reply> = (0..CALLS)
        .map(|i| {
            sse(vec![
                tool_call(0, &format!("b{i}"), "bash", r#"{"command":"true"}"#),
                finish("tool_calls"),
            ])
            .delay_headers_ms(THINK_MS)
        })
        .collect();
    replies.push(sse(vec![text("done"), finish("stop")]));
    let server = MockServer::start(replies);
    let mut cmd = command(bin, &server, home, work, "run it");
    cmd.args(args);
    assert!(cmd.status().unwrap().success());
    let reqs = chat(&server, CALLS + 1);
    reqs.windows(2)
        .map(|w| {
            w[1].received_at
                .duration_since(w[0].received_at)
                .as_secs_f64()
                * 1000.0
                - THINK_MS as f64
        })
        .collect()
}

/// The gap of a `bash` call of `true`, per binary: (first call of a session, later
/// calls) in `auto-edit` with the sandbox on, and the same without a sandbox
/// (`full-auto --sandbox off`).
struct BashGaps {
    sandboxed: (f64, f64),
    unconfined: (f64, f64),
}

fn bash_gaps() -> Vec<BashGaps> {
    let work = tempfile::tempdir().unwrap();
    let bins = bins();
    let homes: Vec<_> = bins.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    let modes: [&[&str]; 2] = [
        &["--approval-mode", "auto-edit"],
        &["--approval-mode", "full-auto", "--sandbox", "off"],
    ];
    // [bin][mode] → (first calls, later calls)
    let mut samples = vec![vec![(Vec::new(), Vec::new()); 2]; bins.len()];
    for _ in 0..RUNS {
        for (i, bin) in bins.iter().enumerate() {
            for (m, args) in modes.iter().enumerate() {
                let gaps = bash_session(bin, homes[i].path(), work.path(), args);
                samples[i][m].0.push(gaps[0]);
                samples[i][m].1.extend_from_slice(&gaps[1..]);
            }
        }
    }
    samples
        .into_iter()
        .map(|mut per_mode| {
            let unconfined = per_mode.pop().unwrap();
            let sandboxed = per_mode.pop().unwrap();
            BashGaps {
                sandboxed: (median(sandboxed.0), median(sandboxed.1)),
                unconfined: (median(unconfined.0), median(unconfined.1)),
            }
        })
        .collect()
}

fn first_request_bytes(bin: &Path) -> usize {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    assert!(
        command(bin, &server, home.path(), work.path(), "hi")
            .status()
            .unwrap()
            .success()
    );
    chat(&server, 1)[0].raw_body.len()
}

/// One line: the value for each binary, and the ratio when there are two.
fn line(what: &str, unit: &str, values: &[f64]) {
    let shown: Vec<String> = values.iter().map(|v| format!("{v:8.2} {unit}")).collect();
    let ratio = match values {
        [now, base] if *base > 0.0 => format!("   ({:.2}× of the base)", now / base),
        _ => String::new(),
    };
    println!("{what:52} {}{ratio}", shown.join("  |  base "));
}

fn main() {
    println!("harness9 end-to-end benchmarks (release build, loopback server, medians)");
    for (i, bin) in bins().iter().enumerate() {
        println!("  binary {i}: {}", bin.display());
    }
    let start_plain = start_to_first_request(0, Cache::Warm);
    let gap = tool_gap_ms();
    let bash = bash_gaps();
    let bytes: Vec<f64> = bins()
        .iter()
        .map(|b| first_request_bytes(b) as f64)
        .collect();
    let start_cold = start_to_first_request(1000, Cache::Cold);
    let start_skills = start_to_first_request(1000, Cache::Warm);
    let start_10k = start_to_first_request(10_000, Cache::Warm);
    let rss_plain = peak_rss_mb(0);
    let rss_10k = peak_rss_mb(10_000);
    line("start → first request, no skills", "ms", &start_plain);
    line(
        "start → first request, 1,000 skills, cold cache",
        "ms",
        &start_cold,
    );
    line(
        "start → first request, 1,000 skills, warm cache",
        "ms",
        &start_skills,
    );
    line(
        "start → first request, 10,000 skills, warm cache",
        "ms",
        &start_10k,
    );
    line("read_file tool call → next request", "ms", &gap);
    let pick = |f: fn(&BashGaps) -> f64| bash.iter().map(f).collect::<Vec<f64>>();
    line(
        "bash true, --sandbox off, first call",
        "ms",
        &pick(|g| g.unconfined.0),
    );
    line(
        "bash true, --sandbox off, later calls",
        "ms",
        &pick(|g| g.unconfined.1),
    );
    line(
        "bash true, auto-edit sandbox, first call",
        "ms",
        &pick(|g| g.sandboxed.0),
    );
    line(
        "bash true, auto-edit sandbox, later calls",
        "ms",
        &pick(|g| g.sandboxed.1),
    );
    line(
        "  the sandbox adds, first call",
        "ms",
        &pick(|g| g.sandboxed.0 - g.unconfined.0),
    );
    line(
        "  the sandbox adds, later calls",
        "ms",
        &pick(|g| g.sandboxed.1 - g.unconfined.1),
    );
    line("first request size (all tools)", "B", &bytes);
    line("peak RSS, one-shot run without skills", "MB", &rss_plain);
    line(
        "peak RSS, one-shot run, 10,000 skills (warm)",
        "MB",
        &rss_10k,
    );
}
