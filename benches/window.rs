//! Small context windows end to end: the release binary against the scripted loopback
//! server (`tests/support`), which refuses a chat request whose body is over the window
//! (4 bytes a token, as `mockllm.py --max-prompt-bytes` and its usage counts do) with
//! OpenAI's `context_length_exceeded`, reports `prompt_tokens` as body bytes / 4 like it,
//! and answers summary requests by a rule. Workloads:
//!
//! - `8k`, `16k`, `128k`: TURNS piped turns (`--approval-mode full-auto --output-format
//!   stream-json`, `context_window` set), in each the model runs `bash` to print 60 KB of
//!   a file, then answers. `128k` is the normal case: nothing should be cut.
//! - `2k-turn`: `-p`, one turn in which the model calls `read_file` CALLS times (a new
//!   ~0.8 KB file each time), then answers, against a 2,048-token window.
//! - `gap`: the normal turn's cost, `-p` with two `read_file` calls of a 1 KB file and
//!   `context_window = 128000`: the time from the second request's arrival to the third's
//!   (an upper bound of the round trip of a call that is not the session's first, which
//!   pays for compiling the permission rules), and the size of the first request;
//!   GAP_RUNS runs per binary, alternating.
//!
//! For each: chat requests, refused requests, failed turns, compactions, the largest
//! request as a share of the window, wall time and peak RSS; medians over RUNS runs. With
//! `--before PATH` every run of this build is paired with one of the binary at PATH
//! (alternating, so both see the same load).
//!
//! Run: `cargo bench --bench window -- [--runs 3] [--turns 300] [--calls 20]
//! [--gap-runs 40] [--only 8k,16k,128k,2k-turn,gap] [--before /path/to/old/harness9]`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// The rule's summary, as a model would write it.
const SUMMARY: &str = "## Goal\nLook at big.txt turn after turn.\n## Constraints\nNone stated.\n\
    ## Decisions\nKeep reading.\n## Files\nbig.txt (read)\n## Open tasks\nGo on.";

/// How the summarizer's instructions begin (`agent/compact.rs`).
const SUMMARIZER: &str = "You summarize a conversation";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    /// TURNS piped turns of one bash call each.
    PipedTurns,
    /// One `-p` turn of CALLS read_file calls.
    OneLongTurn,
}

#[derive(Clone, Copy, Debug)]
struct Workload {
    name: &'static str,
    window: u64,
    shape: Shape,
}

const WORKLOADS: [Workload; 4] = [
    Workload {
        name: "8k",
        window: 8192,
        shape: Shape::PipedTurns,
    },
    Workload {
        name: "16k",
        window: 16384,
        shape: Shape::PipedTurns,
    },
    Workload {
        name: "128k",
        window: 128_000,
        shape: Shape::PipedTurns,
    },
    Workload {
        name: "2k-turn",
        window: 2048,
        shape: Shape::OneLongTurn,
    },
];

/// What one run came to.
#[derive(Debug, Clone, Default)]
struct Outcome {
    requests: usize,
    refused: usize,
    summaries: usize,
    completed: usize,
    failed: usize,
    compactions: usize,
    largest_percent: f64,
    wall_s: f64,
    rss_mb: f64,
}

struct Args {
    runs: usize,
    gap_runs: usize,
    turns: usize,
    calls: usize,
    only: Option<Vec<String>>,
    before: Option<PathBuf>,
}

fn args() -> Args {
    let mut out = Args {
        runs: 3,
        gap_runs: 40,
        turns: 300,
        calls: 20,
        only: None,
        before: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => out.runs = it.next().unwrap().parse().unwrap(),
            "--gap-runs" => out.gap_runs = it.next().unwrap().parse().unwrap(),
            "--turns" => out.turns = it.next().unwrap().parse().unwrap(),
            "--calls" => out.calls = it.next().unwrap().parse().unwrap(),
            "--only" => {
                out.only = Some(it.next().unwrap().split(',').map(String::from).collect());
            }
            "--before" => out.before = Some(PathBuf::from(it.next().unwrap())),
            // cargo bench passes --bench.
            _ => {}
        }
    }
    out
}

/// The role of the last message a chat request sends.
fn last_role(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["role"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The scripted model: refusals over the window, summaries by rule, then the workload's
/// next step from what the request ends with.
fn model(workload: Workload, calls: usize) -> impl Fn(&RecordedRequest) -> Option<Reply> {
    let limit = usize::try_from(workload.window * 4).unwrap();
    let made = Arc::new(AtomicUsize::new(0));
    move |request: &RecordedRequest| {
        let bytes = request.raw_body.len();
        if bytes > limit {
            return Some(context_refusal(limit, bytes));
        }
        let prompt_tokens = (bytes / 4) as u64;
        if request.raw_body.contains(SUMMARIZER) {
            return Some(sse(vec![
                text(SUMMARY),
                usage(prompt_tokens, 40),
                finish("stop"),
            ]));
        }
        let role = last_role(&request.body);
        let n = made.load(Ordering::SeqCst);
        let call = match workload.shape {
            Shape::PipedTurns if role == "user" => {
                Some(("bash", r#"{"command":"head -c 61440 big.txt"}"#.to_string()))
            }
            Shape::OneLongTurn if n < calls => {
                Some(("read_file", format!(r#"{{"path":"src/f{:02}.rs"}}"#, n + 1)))
            }
            _ => None,
        };
        Some(match call {
            Some((name, args)) => {
                made.fetch_add(1, Ordering::SeqCst);
                sse(vec![
                    tool_call(0, &format!("call_{n}"), name, &args),
                    usage(prompt_tokens, 20),
                    finish("tool_calls"),
                ])
            }
            None => sse(vec![
                text(&format!("done {n}: the file has what I looked for")),
                usage(prompt_tokens, 12),
                finish("stop"),
            ]),
        })
    }
}

fn project(dir: &Path, calls: usize) {
    let line = "0123456789abcdef".repeat(4) + "\n";
    write(&dir.join("big.txt"), &line.repeat(70_000 / line.len()));
    for i in 1..=calls {
        let body: String = (1..=20)
            .map(|l| format!("pub fn item_{i:02}_{l:02}() -> u32 {{ {l} }}\n"))
            .collect();
        write(&dir.join(format!("src/f{i:02}.rs")), &body);
    }
}

fn run(bin: &Path, workload: Workload, args: &Args) -> Outcome {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let proj = work.path().join("proj");
    project(&proj, args.calls);
    write(
        &home.join("config.toml"),
        // Enough requests for one turn of many calls (the default cap is 50).
        &format!(
            "context_window = {}\nmax_retries = 0\nmax_turns = 500\n",
            workload.window
        ),
    );
    let server = MockServer::start(vec![]);
    server.respond_with(model(workload, args.calls));
    let rss_file = work.path().join("rss");
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss_file)
        .arg(bin)
        .args(["--base-url", &server.url(), "--model", "m"])
        .args(["--approval-mode", "full-auto", "--sandbox", "off"])
        .args(["--output-format", "stream-json"])
        .current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("HARNESS9_HOME", &home)
        .env("OPENAI_API_KEY", "k")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let input = match workload.shape {
        Shape::PipedTurns => {
            cmd.stdin(Stdio::piped());
            (1..=args.turns)
                .map(|i| format!("turn {i}: look at big.txt again\n"))
                .collect::<String>()
        }
        Shape::OneLongTurn => {
            cmd.args([
                "-p",
                "read the files in src/ one by one, then tell me what they hold",
            ])
            .stdin(Stdio::null());
            String::new()
        }
    };
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    if let Some(mut stdin) = child.stdin.take() {
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let output = child.wait_with_output().unwrap();
    let wall_s = started.elapsed().as_secs_f64();

    let mut out = Outcome {
        wall_s,
        rss_mb: std::fs::read_to_string(&rss_file)
            .ok()
            .and_then(|s| s.trim().lines().last()?.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0),
        ..Outcome::default()
    };
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match event["type"].as_str() {
            Some("result") if event["is_error"] == Value::Bool(true) => out.failed += 1,
            Some("result") => out.completed += 1,
            Some("compacted") => out.compactions += 1,
            _ => {}
        }
    }
    let limit = usize::try_from(workload.window * 4).unwrap();
    let chat = server.chat_requests();
    out.requests = chat.len();
    out.refused = chat.iter().filter(|r| r.raw_body.len() > limit).count();
    out.summaries = chat
        .iter()
        .filter(|r| r.raw_body.contains(SUMMARIZER))
        .count();
    let largest = chat.iter().map(|r| r.raw_body.len()).max().unwrap_or(0);
    out.largest_percent = largest as f64 * 100.0 / limit as f64;
    // Nothing may be left waiting.
    let _ = server.wait_for_chat_requests(out.requests, Duration::from_secs(1));
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

fn summary(label: &str, runs: &[Outcome]) {
    let m = |f: &dyn Fn(&Outcome) -> f64| median(runs.iter().map(f).collect());
    println!(
        "  {label:<7} requests {:>5}  refused {:>4}  summaries {:>4}  turns ok {:>4}  failed {:>4}  \
         compactions {:>4}  largest {:>6.1}% of the window  wall {:>7.2} s  RSS {:>5.1} MB  (medians of {})",
        m(&|o| o.requests as f64),
        m(&|o| o.refused as f64),
        m(&|o| o.summaries as f64),
        m(&|o| o.completed as f64),
        m(&|o| o.failed as f64),
        m(&|o| o.compactions as f64),
        m(&|o| o.largest_percent),
        m(&|o| o.wall_s),
        m(&|o| o.rss_mb),
        runs.len()
    );
    let walls: Vec<String> = runs.iter().map(|o| format!("{:.2}", o.wall_s)).collect();
    println!("          wall per run: {}", walls.join(" "));
}

/// One `-p` run with two read_file calls and a 128k window: the gap between the second
/// and third requests' arrivals in ms, and the first request's size in bytes.
fn tool_gap(bin: &Path) -> (f64, usize) {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let proj = work.path().join("proj");
    write(&proj.join("a.txt"), &"line\n".repeat(200));
    write(
        &home.join("config.toml"),
        "context_window = 128000\nmax_retries = 0\n",
    );
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "r", "read_file", r#"{"path":"a.txt"}"#),
            usage(1250, 10),
            finish("tool_calls"),
        ]),
        sse(vec![
            tool_call(0, "s", "read_file", r#"{"path":"a.txt"}"#),
            usage(1600, 10),
            finish("tool_calls"),
        ]),
        sse(vec![text("done"), usage(1900, 2), finish("stop")]),
    ]);
    let status = Command::new(bin)
        .args([
            "--base-url",
            &server.url(),
            "--model",
            "m",
            "-p",
            "read a.txt",
        ])
        .current_dir(&proj)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("HARNESS9_HOME", &home)
        .env("OPENAI_API_KEY", "k")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let reqs = server.wait_for_chat_requests(3, Duration::from_secs(10));
    let gap = reqs[2].received_at.duration_since(reqs[1].received_at);
    (gap.as_secs_f64() * 1000.0, reqs[0].raw_body.len())
}

fn gaps(args: &Args, after: &Path) {
    println!(
        "gap: the second of two read_file calls, context_window = 128000, {} runs per binary",
        args.gap_runs
    );
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for _ in 0..args.gap_runs {
        if let Some(before) = &args.before {
            old.push(tool_gap(before));
        }
        new.push(tool_gap(after));
    }
    let show = |label: &str, runs: &[(f64, usize)]| {
        println!(
            "  {label:<7} tool response → next request {:.2} ms (median), first request {} bytes",
            median(runs.iter().map(|r| r.0).collect()),
            runs.first().map_or(0, |r| r.1)
        );
    };
    if !old.is_empty() {
        show("before", &old);
    }
    show("after", &new);
}

fn main() {
    let args = args();
    let after = PathBuf::from(env!("CARGO_BIN_EXE_harness9"));
    let chosen = |name: &str| {
        args.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == name))
    };
    for workload in WORKLOADS {
        if !chosen(workload.name) {
            continue;
        }
        let size = match workload.shape {
            Shape::PipedTurns => format!("{} turns of 60 KB bash output", args.turns),
            Shape::OneLongTurn => format!("one turn of {} read_file calls", args.calls),
        };
        println!(
            "{}: context_window = {}, server refuses bodies over {} bytes; {size}",
            workload.name,
            workload.window,
            workload.window * 4
        );
        let (mut new, mut old) = (Vec::new(), Vec::new());
        for _ in 0..args.runs {
            if let Some(before) = &args.before {
                old.push(run(before, workload, &args));
            }
            new.push(run(&after, workload, &args));
        }
        if !old.is_empty() {
            summary("before", &old);
        }
        summary("after", &new);
    }
    if chosen("gap") {
        gaps(&args, &after);
    }
}
