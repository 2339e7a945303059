//! End-to-end benchmarks of the release binary against the scripted loopback server:
//! process start → first request received (with 0 and 1,000 skills on disk, the latter
//! with a cold and a warm discovery cache), peak RSS of a one-shot run, the gap between a
//! read_file tool-call response and the next request, and the size of the first request.
//! Run: `cargo bench --bench e2e`. Prints medians. `HARNESS9_BENCH_BIN=PATH` measures
//! another build of harness9 (an older commit's, for a comparison) instead of this one's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

const RUNS: usize = 30;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The binary measured: `HARNESS9_BENCH_BIN`, else this tree's release build.
fn binary() -> std::path::PathBuf {
    std::env::var_os("HARNESS9_BENCH_BIN")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_harness9").into())
}

fn command(server: &MockServer, home: &Path, workdir: &Path, prompt: &str) -> Command {
    let mut cmd = Command::new(binary());
    cmd.args([
        "--base-url",
        &server.url(),
        "--model",
        "m",
        "-p",
        prompt,
        "-C",
    ])
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

/// Start → first request received, in milliseconds.
fn start_to_first_request(skills: usize, cache: Cache) -> f64 {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    make_skills(work.path(), skills);
    if skills > 0 {
        // Files changed within 2 s of a run are never cached (see src/skills/cache.rs);
        // skills on a real disk are older than that.
        std::thread::sleep(Duration::from_millis(2_100));
    }
    let cache_file = home.path().join("cache/skills-index");
    let mut samples = Vec::new();
    for _ in 0..RUNS {
        if cache == Cache::Cold {
            let _ = std::fs::remove_file(&cache_file);
        }
        let server = MockServer::start(vec![sse(vec![text("ok"), finish("stop")])]);
        let t0 = Instant::now();
        let status = command(&server, home.path(), work.path(), "hi")
            .status()
            .unwrap();
        assert!(status.success());
        let first = server.wait_for_requests(1, Duration::from_secs(10))[0].received_at;
        samples.push(first.duration_since(t0).as_secs_f64() * 1000.0);
    }
    median(samples)
}

/// Peak RSS over every one-shot run this process has waited for, in MB (the kernel
/// keeps the largest `ru_maxrss` of waited-for children).
fn peak_rss_mb() -> f64 {
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    usage.max_rss() as f64 / 1024.0
}

/// Gap between the end of a read_file tool-call response and the next request, in ms
/// (measured from the first request's arrival, so it is an upper bound).
fn tool_gap_ms() -> f64 {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "line\n".repeat(200)).unwrap();
    let mut samples = Vec::new();
    for _ in 0..RUNS {
        let server = MockServer::start(vec![
            sse(vec![
                tool_call(0, "r", "read_file", r#"{"path":"a.txt"}"#),
                finish("tool_calls"),
            ]),
            sse(vec![text("done"), finish("stop")]),
        ]);
        assert!(
            command(&server, home.path(), work.path(), "read")
                .status()
                .unwrap()
                .success()
        );
        let reqs = server.wait_for_requests(2, Duration::from_secs(10));
        samples.push(
            reqs[1]
                .received_at
                .duration_since(reqs[0].received_at)
                .as_secs_f64()
                * 1000.0,
        );
    }
    median(samples)
}

fn first_request_bytes() -> usize {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    assert!(
        command(&server, home.path(), work.path(), "hi")
            .status()
            .unwrap()
            .success()
    );
    server.wait_for_requests(1, Duration::from_secs(10))[0]
        .raw_body
        .len()
}

fn main() {
    println!("harness9 end-to-end benchmarks (release build, loopback server, medians)");
    // RSS is the kernel's running maximum over waited-for children, so each reading
    // covers every run so far: measure the small cases first.
    let start_plain = start_to_first_request(0, Cache::Warm);
    let gap = tool_gap_ms();
    let bytes = first_request_bytes();
    let rss_plain = peak_rss_mb();
    let start_cold = start_to_first_request(1000, Cache::Cold);
    let start_skills = start_to_first_request(1000, Cache::Warm);
    let rss_skills = peak_rss_mb();
    println!("start → first request, no skills:      {start_plain:7.2} ms");
    println!("start → first request, 1,000 skills, cold cache: {start_cold:7.2} ms");
    println!("start → first request, 1,000 skills, warm cache: {start_skills:7.2} ms");
    println!("read_file tool call → next request:    {gap:7.2} ms");
    println!("first request size (all tools):        {bytes:7} bytes");
    println!("peak RSS, one-shot runs without skills: {rss_plain:6.2} MB");
    println!("peak RSS, including 1,000-skill runs:   {rss_skills:6.2} MB");
}
