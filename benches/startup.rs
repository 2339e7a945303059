//! Start-up, resume and memory of the release binary against the scripted loopback
//! server, side by side with a baseline binary when one is given (issue 28, goals 2, 3
//! and 7):
//!
//! - the first tool call of a session against the later ones: a `read_file` response →
//!   the next request, for the 1st, 2nd and 3rd call of one `-p` run;
//! - resuming a saved 1,000-turn session (`--resume ID -p …`) → its first request, for a
//!   file with a compaction every 90 turns (as a 32k window makes them) and for one
//!   without any (a large window), against a new session;
//! - peak RSS of `-p hi` (the binary's pages fresh from a copy, and read back after
//!   being dropped from the page cache) and of a `-p` run answered with 4 MB of text;
//! - the binary's size.
//!
//! Run: `cargo bench --bench startup`. `HARNESS9_BENCH_BIN=PATH` measures another build
//! of harness9 (e.g. `target/dist/harness9`) instead of this one's release binary;
//! `HARNESS9_BENCH_BASE=PATH` adds a baseline binary, run alternately with it, and
//! prints both medians and their ratio. `HARNESS9_BENCH_RUNS=N` (default 30) sets the
//! runs per figure; `HARNESS9_BENCH_ONLY=resume` (or `first_call`, `memory`, comma
//! separated) runs only those parts. The session files are written with the library's record types.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness9::llm::{Message, ToolCall};
use harness9::protocol::{CompactionTrigger, TurnOutcome, Usage};
use harness9::sessions::record::SCHEMA_VERSION;
use harness9::sessions::{Header, Record, SessionId, SessionStore, project_of};
use support::*;

/// A binary under test: its label and a private copy of it.
struct Binary {
    label: &'static str,
    path: PathBuf,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

fn runs() -> usize {
    std::env::var("HARNESS9_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30)
}

/// The binaries, each copied into `dir` (so both start from the same page-cache state:
/// freshly written) with its launcher beside it.
fn binaries(dir: &Path) -> Vec<Binary> {
    let this = std::env::var("HARNESS9_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_harness9")));
    let mut out = vec![("this", this)];
    if let Ok(base) = std::env::var("HARNESS9_BENCH_BASE") {
        out.insert(0, ("base", PathBuf::from(base)));
    }
    out.into_iter()
        .map(|(label, path)| {
            let folder = dir.join(label);
            std::fs::create_dir_all(&folder).unwrap();
            let copy = folder.join("harness9");
            std::fs::copy(&path, &copy).unwrap();
            let launcher = path.with_file_name("harness9-sandbox");
            if launcher.exists() {
                std::fs::copy(&launcher, folder.join("harness9-sandbox")).unwrap();
            }
            Binary { label, path: copy }
        })
        .collect()
}

/// `binary -p PROMPT` against `server` in `workdir`, with a clean environment.
fn command(binary: &Path, server: &MockServer, home: &Path, workdir: &Path) -> Command {
    server.quiet_run_of(binary, home, workdir)
}

/// Runs `cmd` under `/usr/bin/time` and returns its peak RSS in MB.
fn peak_rss_mb(cmd: &Command, scratch: &Path) -> f64 {
    let out = scratch.join("time.txt");
    let mut timed = Command::new("/usr/bin/time");
    timed
        .args(["-f", "%M", "-o"])
        .arg(&out)
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    assert!(timed.status().unwrap().success());
    let text = std::fs::read_to_string(&out).unwrap();
    text.trim().lines().last().unwrap().parse::<f64>().unwrap() / 1024.0
}

/// Drops `path`'s pages from the page cache, so the next run reads them back the way a
/// binary installed long ago is read.
fn evict(path: &Path) {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let file = std::fs::File::open(path).unwrap();
    file.sync_all().unwrap();
    posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).unwrap();
}

/// Prints one line: each binary's median, and the ratio of the last to the first.
fn report(what: &str, unit: &str, medians: &[(&str, f64)]) {
    let mut line = format!("{what:<58}");
    for (label, m) in medians {
        line.push_str(&format!(" {label} {m:8.2} {unit}"));
    }
    if let [(_, base), .., (_, this)] = medians {
        line.push_str(&format!("  ({:.2}×)", this / base));
    }
    println!("{line}");
}

/// A home whose config.toml sets `context_window` (so no run asks the server for it)
/// and no retries.
fn home_with_window(window: u64) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!("context_window = {window}\nmax_retries = 0\n"),
    )
    .unwrap();
    home
}

// ---------------------------------------------------------------------------------------
// The first tool call
// ---------------------------------------------------------------------------------------

/// One `-p` run whose model reads three files in turn: the gaps between a `read_file`
/// response and the next request, for the 1st, 2nd and 3rd call, in ms.
fn tool_call_gaps(binary: &Path, home: &Path, work: &Path) -> [f64; 3] {
    let mut replies: Vec<Reply> = ["a.txt", "b.txt", "c.txt"]
        .iter()
        .enumerate()
        .map(|(i, file)| {
            sse(vec![
                tool_call(
                    0,
                    &format!("r{i}"),
                    "read_file",
                    &format!(r#"{{"path":"{file}"}}"#),
                ),
                finish("tool_calls"),
            ])
        })
        .collect();
    replies.push(sse(vec![text("done"), finish("stop")]));
    let server = MockServer::start(replies);
    let mut cmd = command(binary, &server, home, work);
    cmd.args(["-p", "read them"]);
    assert!(cmd.status().unwrap().success());
    let reqs = server.wait_for_chat_requests(4, Duration::from_secs(10));
    let gap = |i: usize| {
        reqs[i + 1]
            .received_at
            .duration_since(reqs[i].received_at)
            .as_secs_f64()
            * 1000.0
    };
    [gap(0), gap(1), gap(2)]
}

fn first_tool_call(bins: &[Binary]) {
    let home = home_with_window(32_000);
    let work = tempfile::tempdir().unwrap();
    for file in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(work.path().join(file), "line\n".repeat(200)).unwrap();
    }
    let mut gaps: Vec<[Vec<f64>; 4]> = bins.iter().map(|_| Default::default()).collect();
    for _ in 0..runs() {
        for (b, bin) in bins.iter().enumerate() {
            let [g1, g2, g3] = tool_call_gaps(&bin.path, home.path(), work.path());
            gaps[b][0].push(g1);
            gaps[b][1].push(g2);
            gaps[b][2].push(g3);
            gaps[b][3].push(g1 - g2.min(g3));
        }
    }
    let names = [
        "read_file response → next request, 1st call of a session",
        "read_file response → next request, 2nd call",
        "read_file response → next request, 3rd call",
        "1st call over the faster of the 2nd and 3rd (per run)",
    ];
    for (i, name) in names.iter().enumerate() {
        let medians: Vec<(&str, f64)> = bins
            .iter()
            .zip(&gaps)
            .map(|(bin, g)| (bin.label, median(g[i].clone())))
            .collect();
        report(name, "ms", &medians);
    }
}

// ---------------------------------------------------------------------------------------
// Resume
// ---------------------------------------------------------------------------------------

const TURNS: u64 = 1_000;
/// Bytes of tool output per turn.
const OUTPUT: usize = 8_192;

fn usage(turn: u64) -> Record {
    let request = Usage {
        input_tokens: 4_000 + turn,
        output_tokens: 20,
        ..Usage::default()
    };
    Record::Usage {
        turn,
        usage: request,
        session: request,
    }
}

/// Writes a saved session of [`TURNS`] turns for `project` under `home`, each a `bash`
/// call printing [`OUTPUT`] bytes and an answer, recorded as the agent records them;
/// with a compaction every `compact_every` turns when given. Returns its id.
fn write_session(home: &Path, project: &Path, compact_every: Option<u64>) -> SessionId {
    let id = SessionId::generate();
    let header = Header {
        schema: SCHEMA_VERSION,
        id: id.clone(),
        created_ms: 1_700_000_000_000,
        cwd: project.to_path_buf(),
        project: project_of(project),
        model: "m".into(),
        endpoint_host: "127.0.0.1".into(),
        version: "0.1.0".into(),
    };
    let writer = SessionStore::new(home).create(&header).unwrap();
    writer
        .append(&Record::SystemPrompt {
            prompt: "You are a coding agent.\n".repeat(200),
        })
        .unwrap();
    let output: String = ("y".repeat(63) + "\n").repeat(OUTPUT / 64);
    let mut recent_prompts: Vec<String> = Vec::new();
    for turn in 1..=TURNS {
        let prompt = format!("turn {turn}: read out.txt");
        let message = |message: Message| Record::Message { turn, message };
        writer
            .append(&message(Message::User {
                images: Vec::new(),
                content: prompt.clone(),
            }))
            .unwrap();
        if compact_every.is_some_and(|n| turn % n == 0) {
            writer
                .append(&Record::Compacted {
                    turn,
                    trigger: CompactionTrigger::Threshold,
                    tokens_before: 27_500,
                    tokens_after: 1_200,
                    summarized_messages: 360,
                    user_messages: recent_prompts.clone(),
                    messages: vec![
                        Message::User {
                            images: Vec::new(),
                            content: format!(
                                "## Goal\nRead out.txt.\n## Open tasks\nGo on.\n## The user's \
                                 messages\n{}",
                                recent_prompts.join("\n")
                            ),
                        },
                        Message::Assistant {
                            content: "Understood.".into(),
                            reasoning: None,
                            tool_calls: Vec::new(),
                        },
                        Message::User {
                            images: Vec::new(),
                            content: prompt.clone(),
                        },
                    ],
                })
                .unwrap();
        }
        recent_prompts.push(prompt);
        if recent_prompts.len() > 10 {
            recent_prompts.remove(0);
        }
        writer.append(&usage(turn)).unwrap();
        let call_id = format!("call_{turn}");
        writer
            .append(&message(Message::Assistant {
                content: Default::default(),
                reasoning: None,
                tool_calls: vec![ToolCall {
                    id: call_id.clone(),
                    name: "bash".into(),
                    arguments: format!(r#"{{"command":"head -c {OUTPUT} out.txt"}}"#),
                }],
            }))
            .unwrap();
        writer
            .append(&message(Message::Tool {
                tool_call_id: call_id,
                content: output.clone(),
            }))
            .unwrap();
        writer.append(&usage(turn)).unwrap();
        writer
            .append(&message(Message::Assistant {
                content: format!("turn {turn} done").into(),
                reasoning: None,
                tool_calls: Vec::new(),
            }))
            .unwrap();
        writer
            .append(&Record::TurnEnd {
                turn,
                outcome: TurnOutcome::Completed,
            })
            .unwrap();
    }
    id
}

/// Start → the first chat request, in ms, of `cmd` against `server`.
fn to_first_request(mut cmd: Command, server: &MockServer) -> f64 {
    let before = server.chat_requests().len();
    let t0 = Instant::now();
    assert!(cmd.status().unwrap().success());
    let first =
        server.wait_for_chat_requests(before + 1, Duration::from_secs(20))[before].received_at;
    first.duration_since(t0).as_secs_f64() * 1000.0
}

fn resume(bins: &[Binary], label: &str, window: u64, compact_every: Option<u64>) {
    let home = home_with_window(window);
    let project = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let id = write_session(home.path(), project.path(), compact_every);
    let file = std::fs::read_dir(home.path().join("sessions").join(
        harness9::sessions::project_dir_name(&project_of(project.path())),
    ))
    .unwrap()
    .map(|e| e.unwrap().path())
    .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
    .unwrap();
    let pristine = home.path().join("pristine.jsonl");
    std::fs::copy(&file, &pristine).unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    println!(
        "resume, {label}: {TURNS} turns, {:.1} MB",
        size as f64 / 1e6
    );
    let mut resumed: Vec<Vec<f64>> = bins.iter().map(|_| Vec::new()).collect();
    let mut fresh: Vec<Vec<f64>> = bins.iter().map(|_| Vec::new()).collect();
    let mut rss: Vec<Vec<f64>> = bins.iter().map(|_| Vec::new()).collect();
    let server = MockServer::start(Vec::new());
    for _ in 0..runs() {
        for (b, bin) in bins.iter().enumerate() {
            // Every run resumes the same file (a resumed run appends to it).
            std::fs::copy(&pristine, &file).unwrap();
            let mut cmd = command(&bin.path, &server, home.path(), project.path());
            cmd.args(["--resume", id.as_str(), "-p", "one more"]);
            resumed[b].push(to_first_request(cmd, &server));
            std::fs::copy(&pristine, &file).unwrap();
            let mut cmd = command(&bin.path, &server, home.path(), project.path());
            cmd.args(["--resume", id.as_str(), "-p", "one more"]);
            rss[b].push(peak_rss_mb(&cmd, home.path()));
            let mut cmd = command(&bin.path, &server, home.path(), empty.path());
            cmd.args(["-p", "one more"]);
            fresh[b].push(to_first_request(cmd, &server));
        }
    }
    let each = |v: &[Vec<f64>]| -> Vec<(&str, f64)> {
        bins.iter()
            .zip(v)
            .map(|(bin, s)| (bin.label, median(s.clone())))
            .collect()
    };
    report(
        &format!("--resume ID -p → first request, {label}"),
        "ms",
        &each(&resumed),
    );
    report("-p → first request, a new session", "ms", &each(&fresh));
    report(
        &format!("peak RSS, --resume ID -p, {label}"),
        "MB",
        &each(&rss),
    );
}

// ---------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------

fn memory(bins: &[Binary]) {
    let home = home_with_window(32_000);
    let work = tempfile::tempdir().unwrap();
    let server = MockServer::start(Vec::new());
    let hi = |bin: &Binary| {
        let mut cmd = command(&bin.path, &server, home.path(), work.path());
        cmd.args(["-p", "hi"]);
        cmd
    };
    // Freshly copied: the page cache holds the binary as it was written.
    let mut fresh: Vec<Vec<f64>> = bins.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs() {
        for (b, bin) in bins.iter().enumerate() {
            fresh[b].push(peak_rss_mb(&hi(bin), home.path()));
        }
    }
    // Read back after being dropped from the page cache, as after a reboot.
    for bin in bins {
        evict(&bin.path);
    }
    let mut read_back: Vec<Vec<f64>> = bins.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs() {
        for (b, bin) in bins.iter().enumerate() {
            read_back[b].push(peak_rss_mb(&hi(bin), home.path()));
        }
    }
    // A 4 MB answer, in 2,048-character deltas.
    const ANSWER: usize = 4 << 20;
    let delta = "lorem ipsum dolor sit amet ".repeat(76)[..2048].to_string();
    let mut long: Vec<Vec<f64>> = bins.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs().min(10) {
        for (b, bin) in bins.iter().enumerate() {
            let mut events: Vec<Ev> = (0..ANSWER / delta.len()).map(|_| text(&delta)).collect();
            events.push(finish("stop"));
            server.push(sse(events));
            long[b].push(peak_rss_mb(&hi(bin), home.path()));
        }
    }
    let each = |v: &[Vec<f64>]| -> Vec<(&str, f64)> {
        bins.iter()
            .zip(v)
            .map(|(bin, s)| (bin.label, median(s.clone())))
            .collect()
    };
    report(
        "peak RSS, -p hi, binary freshly copied",
        "MB",
        &each(&fresh),
    );
    report(
        "peak RSS, -p hi, binary read back after eviction",
        "MB",
        &each(&read_back),
    );
    let long = each(&long);
    report("peak RSS, -p answered with 4 MB of text", "MB", &long);
    let over: Vec<(&str, f64)> = long
        .iter()
        .zip(each(&read_back))
        .map(|((label, l), (_, h))| (*label, (l - h) / (ANSWER as f64 / (1 << 20) as f64)))
        .collect();
    report("  (its peak over -p hi) / answer size", "×", &over);
    let sizes: Vec<(&str, f64)> = bins
        .iter()
        .map(|bin| {
            (
                bin.label,
                std::fs::metadata(&bin.path).unwrap().len() as f64 / (1 << 20) as f64,
            )
        })
        .collect();
    report("binary size", "MiB", &sizes);
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let bins = binaries(dir.path());
    println!(
        "harness9 start-up, resume and memory (loopback server, medians of {} runs{})",
        runs(),
        if bins.len() > 1 {
            ", base and this alternating"
        } else {
            ""
        }
    );
    if part("first_call") {
        first_tool_call(&bins);
    }
    if part("resume") {
        resume(
            &bins,
            "a compaction every 90 turns (32k window)",
            32_000,
            Some(90),
        );
        resume(&bins, "no compaction (200k window)", 200_000, None);
    }
    if part("memory") {
        memory(&bins);
    }
}

/// Whether `HARNESS9_BENCH_ONLY` (comma-separated: `first_call`, `resume`, `memory`)
/// leaves part `name` in; unset, every part runs.
fn part(name: &str) -> bool {
    std::env::var("HARNESS9_BENCH_ONLY")
        .map_or(true, |only| only.split(',').any(|p| p.trim() == name))
}
