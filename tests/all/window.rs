//! Every turn fits the window it knows, end to end: the real binary (and, for the summary
//! request, a library session) against the scripted server playing a model with a small
//! window: it refuses a chat request whose body is over the window at 4 bytes a token
//! (as `mockllm.py --max-prompt-bytes` does), reports `prompt_tokens` as body bytes / 4,
//! and answers summary requests by a rule. Checked by what was sent: no request over the
//! window, tool results cut with a marker that says how to get the rest, a long turn
//! that keeps going, compactions only when the window is really full.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use harness9::protocol::{CompactionTrigger, Event, Op, TurnOutcome};
use serde_json::Value;

/// How the summarizer's instructions begin (`agent/compact.rs`).
const SUMMARIZER: &str = "You summarize a conversation";

/// What the scripted model does when it is not refusing or summarizing: the next call,
/// by how many calls it has made so far (`None`: it answers).
type NextCall = dyn Fn(usize, &RecordedRequest) -> Option<(String, String)> + Send + Sync;

/// A model with a window of `window` tokens (4 body bytes each): refusals over it, a
/// summary by rule, else the call `next` names, else an answer.
fn small_model(
    window: usize,
    summary: String,
    next: Arc<NextCall>,
) -> impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static {
    let made = Arc::new(AtomicUsize::new(0));
    let limit = window * 4;
    move |request: &RecordedRequest| {
        let bytes = request.raw_body.len();
        if bytes > limit {
            return Some(context_refusal(limit, bytes));
        }
        let prompt_tokens = (bytes / 4) as u64;
        if request.raw_body.contains(SUMMARIZER) {
            return Some(sse(vec![
                text(&summary),
                usage(prompt_tokens, 40),
                finish("stop"),
            ]));
        }
        let n = made.load(Ordering::SeqCst);
        Some(match next(n, request) {
            Some((name, args)) => {
                made.fetch_add(1, Ordering::SeqCst);
                sse(vec![
                    tool_call(0, &format!("call_{n}"), &name, &args),
                    usage(prompt_tokens, 20),
                    finish("tool_calls"),
                ])
            }
            None => sse(vec![
                text(&format!("answered after {n} calls")),
                usage(prompt_tokens, 10),
                finish("stop"),
            ]),
        })
    }
}

/// The role of the last message a request sends.
fn last_role(request: &RecordedRequest) -> String {
    request
        .messages()
        .last()
        .and_then(|m| m["role"].as_str().map(String::from))
        .unwrap_or_default()
}

/// A file of `n` numbered lines of 64 bytes.
fn numbered_file(path: &Path, n: usize) {
    let text: String = (1..=n)
        .map(|i| format!("line {i:05} {}\n", "x".repeat(52)))
        .collect();
    write(path, &text);
}

fn run(
    server: &MockServer,
    home: &Path,
    project: &Path,
    window: Option<u64>,
    args: &[&str],
) -> Output {
    let config = match window {
        Some(w) => format!("max_retries = 0\ncontext_window = {w}\n"),
        None => "max_retries = 0\n".to_string(),
    };
    write(&home.join("config.toml"), &config);
    server
        .harness9(home, project)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The bodies of the chat requests, by size.
fn largest_request(server: &MockServer) -> usize {
    server
        .chat_requests()
        .iter()
        .map(|r| r.raw_body.len())
        .max()
        .unwrap_or(0)
}

#[test]
fn a_tool_result_is_cut_to_what_the_window_leaves_and_says_how_to_get_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // 1,000 lines of 64 bytes: read_file sends its first 30 KB (its own limit).
    numbered_file(&project.path().join("big.txt"), 1_000);
    let read = Arc::new(|n: usize, _: &RecordedRequest| {
        (n == 0).then(|| ("read_file".to_string(), r#"{"path":"big.txt"}"#.to_string()))
    });
    let server = MockServer::start(vec![]);
    server.respond_with(small_model(8192, "s".into(), read.clone()));
    let out = run(
        &server,
        home.path(),
        project.path(),
        Some(8192),
        &["-p", "read big.txt", "--output-format", "stream-json"],
    );
    assert_exit(&out, 0);
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let result = events.iter().find(|e| e["type"] == "result").unwrap();
    assert_eq!(result["result"], "answered after 1 calls");
    // What the user is shown of the call says the model got less.
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_call_end")
        .unwrap();
    let summary = end["summary"].as_str().unwrap();
    assert!(
        summary.contains("cut to fit the context window") && summary.contains("the model got"),
        "{summary}"
    );
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 2, "no refusal, no compaction");
    assert!(largest_request(&server) <= 8192 * 4);
    let result = &reqs[1].tool_results()[0];
    // A quarter of the window at most: 2,048 tokens, about 8 KB.
    assert!(result.len() <= 8192, "{}", result.len());
    assert!(
        result.starts_with("     1\tline 00001 "),
        "{}",
        &result[..80]
    );
    let marker = result
        .lines()
        .find(|l| l.starts_with("[... "))
        .expect("a marker line");
    assert!(
        marker.contains("cut to fit the context window")
            && marker.contains("read_file with offset and limit")
            && marker.contains("grep"),
        "{marker}"
    );
    // The tail is kept too: the last lines read_file gave.
    let last_kept = result
        .lines()
        .rev()
        .find(|l| l.contains("\tline "))
        .unwrap();
    assert!(!last_kept.contains("line 00001"), "{last_kept}");

    // No window known: the tools' own limits, as before (read_file's 30 KB, whole).
    let server = MockServer::start(vec![]);
    server.respond_with(small_model(1_000_000, "s".into(), read));
    let out = run(
        &server,
        home.path(),
        project.path(),
        None,
        &["-p", "read big.txt"],
    );
    assert_exit(&out, 0);
    let result = &server.chat_requests()[1].tool_results()[0];
    assert!(result.len() > 25_000, "{}", result.len());
    assert!(!result.contains("cut to fit the context window"));
}

#[test]
fn one_long_turn_in_a_2k_window_elides_and_folds_its_own_calls_and_keeps_going() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    for i in 1..=20 {
        numbered_file(&project.path().join(format!("f{i:02}.txt")), 12);
    }
    let next = Arc::new(|n: usize, _: &RecordedRequest| {
        (n < 20).then(|| {
            let args = format!(r#"{{"path":"f{:02}.txt"}}"#, n + 1);
            ("read_file".to_string(), args)
        })
    });
    let server = MockServer::start(vec![]);
    server.respond_with(small_model(2048, "s".into(), next));
    let out = run(
        &server,
        home.path(),
        project.path(),
        Some(2048),
        &["-p", "read f01.txt to f20.txt one by one"],
    );
    assert_exit(&out, 0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "answered after 20 calls\n"
    );
    let reqs = server.chat_requests();
    assert_eq!(
        reqs.len(),
        21,
        "one request per call and the answer: none refused"
    );
    assert!(largest_request(&server) <= 2048 * 4);
    // The last request still shows the latest result whole, and names calls it folded.
    let last = reqs.last().unwrap();
    let results = last.tool_results();
    assert!(
        results.last().unwrap().contains("line 00012"),
        "{results:?}"
    );
    // The prompt is sent as typed; the folded calls are named in the first answer left.
    let sent = last.messages();
    assert_eq!(sent[1]["content"], "read f01.txt to f20.txt one by one");
    let note = sent[2]["content"].as_str().unwrap();
    assert!(note.starts_with("[To fit the context window"), "{note}");
    assert!(
        note.contains("calls, then read_file") || note.contains(r#"read_file {"path":"f01.txt"}"#)
    );
}

#[test]
fn a_16k_window_compacts_only_when_the_conversation_fills_it() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    numbered_file(&project.path().join("big.txt"), 1_000);
    let read = Arc::new(|_: usize, r: &RecordedRequest| {
        (last_role(r) == "user")
            .then(|| ("read_file".to_string(), r#"{"path":"big.txt"}"#.to_string()))
    });
    let server = MockServer::start(vec![]);
    server.respond_with(small_model(16_384, "## Goal\nread".into(), read));
    let config = "max_retries = 0\ncontext_window = 16384\n";
    write(&home.path().join("config.toml"), config);
    let prompts: String = (1..=30)
        .map(|i| format!("turn {i}: read big.txt\n"))
        .collect();
    let mut child = server
        .harness9(home.path(), project.path())
        .args(["--output-format", "stream-json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(prompts.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "result").collect();
    assert_eq!(results.len(), 30);
    assert!(
        results.iter().all(|r| r["is_error"] == false),
        "{results:?}"
    );
    let compactions = events.iter().filter(|e| e["type"] == "compacted").count();
    assert!(compactions <= 3, "{compactions} compactions in 30 turns");
    assert!(largest_request(&server) <= 16_384 * 4);
    let chat = server.chat_requests().len();
    assert_eq!(
        chat,
        60 + compactions,
        "two requests a turn and one per summary"
    );
}

#[tokio::test]
async fn the_summary_request_and_the_summary_stay_within_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let window = 4096;
    let server = MockServer::start(vec![]);
    // The summarizer writes far more than asked: 60 KB.
    let long_summary = format!("## Goal\n{}", "keep going ".repeat(6_000));
    server.respond_with(small_model(
        window,
        long_summary,
        Arc::new(|_: usize, _: &RecordedRequest| None),
    ));
    let mut s = SessionBuilder::new(&server, dir.path())
        .config_toml(&format!(
            "max_retries = 0\nidle_timeout_secs = 10\ncontext_window = {window}\n"
        ))
        .start();
    // Each prompt is 3 KB: the conversation passes the fill line every few turns.
    for i in 0..6 {
        let (outcome, _) = s.turn(&format!("{i} {}", "p".repeat(3_000))).await;
        assert_eq!(outcome, TurnOutcome::Completed);
    }
    // And by hand, with a focus of 50 KB.
    s.op(Op::Compact {
        focus: Some("f".repeat(50_000)),
    });
    s.until(|e| {
        matches!(
            e,
            Event::Compacted {
                trigger: CompactionTrigger::Manual,
                ..
            }
        )
    })
    .await;
    let (outcome, _) = s.turn("after").await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let reqs = server.chat_requests();
    let summaries: Vec<&RecordedRequest> = reqs
        .iter()
        .filter(|r| r.raw_body.contains(SUMMARIZER))
        .collect();
    assert!(summaries.len() >= 2, "{}", summaries.len());
    for r in &summaries {
        // Half the window for the whole request (JSON adds a little).
        assert!(
            r.raw_body.len() <= window * 4 * 55 / 100,
            "{} bytes",
            r.raw_body.len()
        );
    }
    assert!(largest_request(&server) <= window * 4, "nothing refused");
    // The summary written back was cut to its share (15%).
    let after = reqs.last().unwrap().messages();
    let summary = after[1]["content"].as_str().unwrap();
    assert!(summary.len() < window * 4 * 30 / 100, "{}", summary.len());
    assert!(summary.contains("cut from the summary to keep it small"));
}

#[test]
fn a_resumed_session_whose_long_turn_was_folded_still_fits() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    for i in 1..=20 {
        numbered_file(&project.path().join(format!("f{i:02}.txt")), 12);
    }
    // The first run's model reads the 20 files; after it, it only answers.
    let next = Arc::new(|n: usize, r: &RecordedRequest| {
        let first_run = r.messages().iter().filter(|m| m["role"] == "user").count() == 1;
        (n < 20 && first_run).then(|| {
            let args = format!(r#"{{"path":"f{:02}.txt"}}"#, n + 1);
            ("read_file".to_string(), args)
        })
    });
    let server = MockServer::start(vec![]);
    server.respond_with(small_model(2048, "## Goal\nread the files".into(), next));
    let out = run(
        &server,
        home.path(),
        project.path(),
        Some(2048),
        &["-p", "read them all"],
    );
    assert_exit(&out, 0);
    let before = server.chat_requests().len();
    // The file has every call and result whole; the replay applies the turn-end rules
    // only, so the next request is made to fit before it is sent.
    let out = run(
        &server,
        home.path(),
        project.path(),
        Some(2048),
        &["-c", "-p", "and now?"],
    );
    assert_exit(&out, 0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "answered after 20 calls\n"
    );
    let reqs = server.chat_requests();
    assert!(
        reqs[before..]
            .iter()
            .any(|r| r.raw_body.contains(SUMMARIZER)),
        "the replayed turn was compacted before the new one was sent"
    );
    assert!(largest_request(&server) <= 2048 * 4, "nothing refused");
    assert_eq!(reqs.last().unwrap().last_user_text(), "and now?");
}

#[test]
fn a_window_smaller_than_configured_is_learnt_from_the_refusal_and_the_turn_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    numbered_file(&project.path().join("big.txt"), 1_000);
    // The model reads big.txt until it gets more than a marker back.
    let next = Arc::new(|_: usize, r: &RecordedRequest| {
        let results = r.tool_results();
        let got_it = results.last().is_some_and(|t| !t.starts_with("[elided:"));
        (!got_it).then(|| ("read_file".to_string(), r#"{"path":"big.txt"}"#.to_string()))
    });
    // The server has 3,072 tokens, and says so when it refuses; config.toml says 8,192.
    let server = MockServer::start(vec![]);
    server.respond_with(small_model(3072, "s".into(), next));
    let out = run(
        &server,
        home.path(),
        project.path(),
        Some(8192),
        &["-p", "read big.txt", "--output-format", "stream-json"],
    );
    assert_exit(&out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(r#""type":"context_window","tokens":3072"#),
        "{stdout}"
    );
    let reqs = server.chat_requests();
    let refused = reqs.iter().filter(|r| r.raw_body.len() > 3072 * 4).count();
    assert_eq!(
        refused, 1,
        "only the request sized for the configured window"
    );
    // After the refusal: the result elided, called again, sized for 3,072 tokens.
    let last = reqs.last().unwrap().tool_results();
    assert!(last[0].starts_with("[elided:"), "{}", last[0]);
    assert!(last[1].contains("cut to fit the context window"));
    assert!(
        stdout.contains(r#""result":"answered after 2 calls""#),
        "{stdout}"
    );
}
