//! Saved sessions end to end with the real binary: a session killed with SIGKILL at any
//! moment resumes with everything but the record in flight; `-c` and `--resume` bring
//! back the conversation, the loaded skills and a note when the system prompt changed;
//! a session whose project folder is gone still resumes by id.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::Value;

fn user_texts(request: &RecordedRequest) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(String::from))
        .collect()
}

/// The one session file of a home.
fn session_file(home: &Path) -> std::path::PathBuf {
    let mut files = Vec::new();
    for project in std::fs::read_dir(home.join("sessions")).unwrap() {
        for file in std::fs::read_dir(project.unwrap().path()).unwrap() {
            files.push(file.unwrap().path());
        }
    }
    assert_eq!(files.len(), 1, "{files:?}");
    files.pop().unwrap()
}

#[test]
fn fifty_sessions_killed_at_random_moments_resume_with_nothing_lost_but_the_record_in_flight() {
    for run in 0..50u64 {
        let dirs = Dirs::new();
        // Each turn: a command, its output, an answer; the server falls back to "done".
        let mut replies = Vec::new();
        for t in 0..12 {
            replies.push(bash_reply(&format!("c{t}"), &format!("echo out {t}")));
            replies.push(answer(&format!("answer {t}")));
        }
        let server = MockServer::start(replies);
        let prompts: String = (0..12).map(|t| format!("prompt {t}\n")).collect();
        let mut child = spawn_fed(
            server.binary(&dirs).args(["--approval-mode", "full-auto"]),
            prompts.as_bytes(),
        );
        // A different moment each run: after the k-th request, at once or a little later.
        let k = 1 + (run * 7 % 11) as usize;
        server.wait_for_chat_requests(k, Duration::from_secs(20));
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_micros(run * 37 % 900) {
            std::hint::spin_loop();
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let seen: Vec<String> =
            server
                .chat_requests()
                .iter()
                .flat_map(user_texts)
                .fold(Vec::new(), |mut all, t| {
                    if !all.contains(&t) {
                        all.push(t);
                    }
                    all
                });

        // Every complete line of the file is a record; only the last may be torn.
        let saved = std::fs::read_to_string(session_file(dirs.home())).unwrap();
        let lines: Vec<&str> = saved.split_inclusive('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            let complete = line.ends_with('\n');
            let parses = serde_json::from_str::<Value>(line.trim_end()).is_ok();
            assert!(
                parses || (!complete && i == lines.len() - 1),
                "run {run} line {i}: {line}"
            );
        }

        let server2 = MockServer::start(vec![answer("resumed")]);
        let out = server2.run(&dirs, &["-c", "-p", "after the crash"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {run}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sent = user_texts(&server2.chat_requests()[0]);
        for prompt in &seen {
            assert!(
                sent.contains(prompt),
                "run {run}: {prompt:?} lost; sent {sent:?}"
            );
        }
        assert_eq!(sent.last().map(String::as_str), Some("after the crash"));
    }
}

#[test]
fn a_resumed_session_has_its_skills_and_says_when_the_prompt_changed() {
    let dirs = Dirs::new();
    skill(
        &dirs.project().join(".agents/skills"),
        "demo",
        "Use for demos.",
        "",
        "Always say DEMO.",
    );
    let server = MockServer::start(vec![use_skill_reply("u1", "demo"), answer("loaded")]);
    assert_exit(&server.run(&dirs, &["-p", "load the demo skill"]), 0);

    // Today's prompt differs: the project now has an AGENTS.md.
    dirs.project_file("AGENTS.md", "Use tabs.\n");
    let server2 = MockServer::start(vec![answer("again")]);
    let out = server2.run(
        &dirs,
        &["-c", "-p", "go on", "--output-format", "stream-json"],
    );
    assert_exit(&out, 0);
    let lines = json_lines(&out.stdout);
    let resumed = lines
        .iter()
        .find(|l| l["type"] == "session_resumed")
        .unwrap();
    assert_eq!(resumed["loaded_skills"], serde_json::json!(["demo"]));
    assert!(
        resumed["notes"][0]
            .as_str()
            .unwrap()
            .contains("system prompt"),
        "{resumed}"
    );
    let request = &server2.chat_requests()[0];
    let system = request.message_text(0);
    assert!(system.contains("Use tabs."), "today's prompt is sent");
    let body = request.body.to_string();
    assert!(
        body.contains("Always say DEMO."),
        "the skill's instructions are still there"
    );
}

#[test]
fn a_session_whose_project_is_gone_resumes_by_id_prefix() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![answer("first")]);
    let out = server.run(&dirs, &["-p", "remember 42", "--output-format", "json"]);
    assert_exit(&out, 0);
    let id = session_file(dirs.home())
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    drop(dirs.project);
    let elsewhere = Dirs {
        home: dirs.home,
        project: tempfile::tempdir().unwrap(),
    };
    let server2 = MockServer::start(vec![answer("42")]);
    let out = server2.run(&elsewhere, &["--resume", &id[..18], "-p", "what number?"]);
    assert_exit(&out, 0);
    let sent = user_texts(&server2.chat_requests()[0]);
    assert_eq!(
        sent,
        vec!["remember 42".to_string(), "what number?".to_string()]
    );

    // -c in a project without sessions is a usage error that says where to look.
    let out = server2.run(&elsewhere, &["-c", "-p", "x"]);
    assert_exit(&out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("sessions list --all"));
}
