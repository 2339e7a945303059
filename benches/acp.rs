//! `harness9 acp`: the time from spawning the binary to reading its answer to
//! `initialize` (issue 34's goal: under 10 ms, where Node agents take hundreds), in an
//! empty project against the scripted loopback server (no request is made before a
//! prompt).
//!
//! Run: `cargo bench --bench acp`. `HARNESS9_BENCH_BIN=PATH` measures another build of
//! harness9 (e.g. `target/dist/harness9`) instead of this one's release binary;
//! `HARNESS9_BENCH_RUNS=N` (default 50) sets the number of runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::*;

const INITIALIZE: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";

fn main() {
    let binary = std::env::var("HARNESS9_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_harness9")));
    let runs: usize = std::env::var("HARNESS9_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(spawn_to_initialize(&server, &dirs, &binary));
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "acp spawn → initialize reply ({} runs, {}): median {:.2} ms, p90 {:.2} ms, min {:.2} ms",
        runs,
        binary.display(),
        ms(times[runs / 2]),
        ms(times[runs * 9 / 10]),
        ms(times[0]),
    );
}

/// One run: spawn, send `initialize`, time until its answer's line is read; then close
/// stdin and wait for the exit.
fn spawn_to_initialize(server: &MockServer, dirs: &Dirs, binary: &PathBuf) -> Duration {
    let mut cmd = std::process::Command::new(binary);
    cmd.arg("acp")
        .current_dir(dirs.project())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dirs.home())
        .env("HARNESS9_HOME", dirs.home())
        .env("OPENAI_API_KEY", "k")
        .env("OPENAI_BASE_URL", server.url())
        .env("HARNESS9_MODEL", "m")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(INITIALIZE).unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let took = started.elapsed();
    assert!(
        line.contains("\"protocolVersion\""),
        "not an answer: {line}"
    );
    drop(stdin);
    child.wait().unwrap();
    took
}
