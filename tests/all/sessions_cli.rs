//! `harness9 sessions list|show|export|prune` end to end: the real binary with a
//! `$HARNESS9_HOME` of its own, on session files written through the library's store,
//! checked by stdout, stderr, exit code and the files left behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, SystemTime};

use harness9::llm::{Message, ToolCall};
use harness9::protocol::TurnOutcome;
use harness9::sessions::record::SCHEMA_VERSION;
use harness9::sessions::{Header, Record, SessionId, SessionStore, project_of};

use crate::support::{Dirs, stderr_text as stderr, stdout_text as stdout};

/// A `$HARNESS9_HOME` (also `$HOME`) and a project folder of their own.
struct Home {
    env: Dirs,
}

impl Home {
    fn new() -> Home {
        Home { env: Dirs::new() }
    }

    fn project(&self) -> PathBuf {
        project_of(self.env.project())
    }

    /// Writes a session of one turn (prompt, a `bash` call and its output, an answer)
    /// under `project` and returns its file.
    fn session(&self, id: &str, project: &Path, prompt: &str) -> PathBuf {
        let store = SessionStore::new(self.env.home());
        let header = Header {
            schema: SCHEMA_VERSION,
            id: SessionId::parse(id).unwrap(),
            created_ms: 1_795_455_301_000,
            cwd: project.to_path_buf(),
            project: project.to_path_buf(),
            model: "mock-model".into(),
            endpoint_host: "127.0.0.1:8080".into(),
            version: "0.1.0".into(),
        };
        let writer = store.create(&header).unwrap();
        for record in [
            Record::SystemPrompt {
                prompt: "system".into(),
            },
            Record::Message {
                turn: 1,
                message: Message::User {
                    images: Vec::new(),
                    content: prompt.into(),
                },
            },
            Record::Message {
                turn: 1,
                message: Message::Assistant {
                    content: Default::default(),
                    reasoning: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "bash".into(),
                        arguments: r#"{"command":"cargo test"}"#.into(),
                    }],
                },
            },
            Record::Message {
                turn: 1,
                message: Message::Tool {
                    tool_call_id: "c1".into(),
                    content: "test result: ok. 3 passed".into(),
                },
            },
            Record::Message {
                turn: 1,
                message: Message::Assistant {
                    content: "All tests pass.".into(),
                    reasoning: None,
                    tool_calls: Vec::new(),
                },
            },
            Record::TurnEnd {
                turn: 1,
                outcome: TurnOutcome::Completed,
            },
        ] {
            writer.append(&record).unwrap();
        }
        writer.path().to_path_buf()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.env.command(&["sessions"]).args(args).output().unwrap()
    }
}

const A: &str = "20261123-173501-aaaaaa";
const B: &str = "20261124-090000-bbbbbb";
const ELSEWHERE: &str = "20261125-120000-cccccc";

#[test]
fn an_empty_list_says_where_it_looked() {
    let h = Home::new();
    let out = h.run(&["list"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout(&out),
        format!(
            "no saved sessions for {} (harness9 sessions list --all shows every project)\n",
            h.project().display()
        )
    );
    let out = h.run(&["list", "--json"]);
    assert_eq!(stdout(&out).trim(), "[]");
}

#[test]
fn list_shows_this_projects_sessions_and_all_shows_every_project() {
    let h = Home::new();
    h.session(A, &h.project(), "Fix the failing test");
    h.session(B, &h.project(), "Second task");
    h.session(ELSEWHERE, Path::new("/some/other/project"), "Elsewhere");

    let out = h.run(&["list"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("ID ") && lines[0].ends_with("FIRST PROMPT"),
        "{text}"
    );
    assert!(
        !text.contains(ELSEWHERE) && !text.contains("PROJECT"),
        "{text}"
    );
    for (id, prompt) in [(A, "Fix the failing test"), (B, "Second task")] {
        let row = lines.iter().find(|l| l.starts_with(id)).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        // id, date, time, turns, model, prompt...
        assert_eq!(cols[3], "1", "{row}");
        assert_eq!(cols[4], "mock-model", "{row}");
        assert!(row.ends_with(prompt), "{row}");
    }

    let out = h.run(&["list", "--all"]);
    let text = stdout(&out);
    assert!(
        lines_with(&text, ELSEWHERE).contains("/some/other/project"),
        "{text}"
    );
    assert!(text.lines().next().unwrap().contains("PROJECT"), "{text}");

    let out = h.run(&["list", "--all", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let listed = v.as_array().unwrap();
    assert_eq!(listed.len(), 3, "{v:#}");
    let other = listed.iter().find(|s| s["id"] == ELSEWHERE).unwrap();
    assert_eq!(other["project"], "/some/other/project");
    assert_eq!(other["first_prompt"], "Elsewhere");
    assert_eq!(other["turns"], 1);
    assert_eq!(other["model"], "mock-model");
    assert!(other["bytes"].as_u64().unwrap() > 0);
}

fn lines_with(text: &str, needle: &str) -> String {
    text.lines().filter(|l| l.contains(needle)).collect()
}

#[test]
fn show_prints_the_header_and_a_short_transcript() {
    let h = Home::new();
    h.session(A, &h.project(), "Fix the failing test");
    let out = h.run(&["show", "20261123"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text.starts_with(&format!("id: {A}\nfile: ")), "{text}");
    for needle in [
        "\nmodel: mock-model\n",
        "\nendpoint: 127.0.0.1:8080\n",
        "\nturns: 1\n",
        "### Turn 1\n\n> Fix the failing test\n",
        "- **bash** `cargo test`\n",
        "All tests pass.\n",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from\n{text}");
    }
    // The brief transcript leaves tool output out.
    assert!(!text.contains("3 passed"), "{text}");
}

#[test]
fn unknown_ambiguous_and_malformed_ids_fail_on_stderr_with_exit_2() {
    let h = Home::new();
    h.session(A, &h.project(), "one");
    h.session("20261123-180000-dddddd", &h.project(), "two");
    let out = h.run(&["show", "abc"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        stderr(&out),
        "harness9: no session matches \"abc\" (harness9 sessions list shows them)\n"
    );
    assert!(stdout(&out).is_empty());
    let out = h.run(&["export", "20261123"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.starts_with("harness9: \"20261123\" matches 2 sessions; type more of the id:\n"),
        "{err}"
    );
    assert!(
        err.contains(&format!("\n  {A}\n")) && err.contains("\n  20261123-180000-dddddd"),
        "{err}"
    );
    let out = h.run(&["show", "../x"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("is not a session id"), "{out:?}");
}

#[test]
fn export_writes_markdown_to_a_file_and_json_to_stdout() {
    let h = Home::new();
    h.session(A, &h.project(), "Fix the failing test");
    let file = h.env.project().join("session.md");
    let out = h.run(&["export", A, "-o", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).is_empty(), "{out:?}");
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.starts_with(&format!("# Session {A}\n")), "{md}");
    assert!(
        md.contains("**bash** `cargo test`\n\n```\ntest result: ok. 3 passed\n```\n"),
        "{md}"
    );
    assert!(md.contains("> Fix the failing test\n"), "{md}");

    let out = h.run(&["export", "20261123-17", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["header"]["id"], A);
    let records = v["records"].as_array().unwrap();
    assert_eq!(records.len(), 6);
    assert_eq!(
        records[3]["message"]["content"],
        "test result: ok. 3 passed"
    );
}

#[test]
fn prune_removes_old_sessions_and_dry_run_only_lists_them() {
    let h = Home::new();
    let old = h.session(A, &h.project(), "old work");
    let fresh = h.session(B, &h.project(), "new work");
    let forty_days = Duration::from_secs(40 * 86_400);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(SystemTime::now() - forty_days)
        .unwrap();

    let out = h.run(&["prune", "--older-than", "30d", "--dry-run"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text.starts_with(&format!("would remove {A} (last used ")),
        "{text}"
    );
    assert!(
        text.contains("1 session(s) unused for more than 30d would be removed"),
        "{text}"
    );
    assert!(old.exists());

    let out = h.run(&["prune", "--older-than", "30d"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text.contains("removed 1 session(s) unused for more than 30d"),
        "{text}"
    );
    assert!(!old.exists() && fresh.exists());

    let out = h.run(&["prune", "--older-than", "30d"]);
    assert_eq!(stdout(&out), "no sessions unused for more than 30d\n");
    let out = h.run(&["prune", "--older-than", "soon"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("invalid age \"soon\""), "{out:?}");
}
