//! The `agent` tool end to end through the real binary (`-p`, stream-json) against the
//! scripted server: agent calls of one response run side by side (three `explore`
//! agents whose replies each take a second finish in about one), their events carry
//! the call that started them, a read-only agent cannot change a file even by `bash`,
//! a definition's tools are all it gets, and a session without definitions sends the
//! same first request as before (no index, no `agent` tool).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// The sub-agents' requests are told apart by their system prompt.
fn system_prompt(request: &RecordedRequest) -> String {
    request.messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn is_explore(request: &RecordedRequest) -> bool {
    system_prompt(request).starts_with("You are a read-only exploration agent")
}

fn agent_call(index: u32, id: &str, agent: &str, task: &str) -> Ev {
    tool_call(
        index,
        id,
        "agent",
        &json!({"agent": agent, "task": task}).to_string(),
    )
}

/// A project with one agent definition (so the `agent` tool is offered).
fn project_with_definition() -> Dirs {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.project().join(".git")).unwrap();
    dirs.project_file(
        ".claude/agents/reviewer.md",
        "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep\n---\n\
         You are a code reviewer.\n",
    );
    dirs
}

fn run_p(server: &MockServer, dirs: &Dirs, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    let out = server
        .harness9(dirs.home(), dirs.project())
        .args(["-p", "go", "--output-format", "stream-json"])
        .args(extra)
        .output()
        .unwrap();
    let events = json_lines(&out.stdout);
    (out, events)
}

#[test]
fn three_explore_agents_run_side_by_side_and_their_events_interleave() {
    let dirs = project_with_definition();
    let server = MockServer::start(vec![
        sse(vec![
            agent_call(0, "c1", "explore", "one"),
            agent_call(1, "c2", "explore", "two"),
            agent_call(2, "c3", "explore", "three"),
            finish("tool_calls"),
        ]),
        answer("all three done"),
    ]);
    server.respond_with(|request| {
        is_explore(request).then(|| {
            let task = request.last_user_text();
            answer(&format!("explored {task}")).delay_headers_ms(1000)
        })
    });
    let started = Instant::now();
    let (out, events) = run_p(&server, &dirs, &[]);
    let elapsed = started.elapsed();
    assert_exit(&out, 0);
    // Three one-second sub-agents one after the other would take over three seconds.
    assert!(elapsed < Duration::from_millis(2500), "took {elapsed:?}");
    let explores = server
        .chat_requests()
        .iter()
        .filter(|r| is_explore(r))
        .count();
    assert_eq!(explores, 3);

    // Every sub-agent event names its call; each sub-agent starts after its call began
    // and ends before its call ended; all three calls began before the first ended.
    let mut position: HashMap<(String, String), usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let key = match e["type"].as_str().unwrap() {
            "tool_call_begin" | "tool_call_end" if e["name"] == "agent" => (
                e["type"].as_str().unwrap().to_string(),
                e["call_id"].as_str().unwrap().to_string(),
            ),
            "sub_agent" => {
                assert_eq!(e["skill"], "explore");
                let kind = e["event"]["type"].as_str().unwrap();
                if !matches!(kind, "turn_started" | "turn_complete") {
                    continue;
                }
                (
                    kind.to_string(),
                    e["parent_call_id"].as_str().unwrap().to_string(),
                )
            }
            _ => continue,
        };
        assert!(position.insert(key.clone(), i).is_none(), "{key:?} twice");
    }
    let at = |kind: &str, id: &str| position[&(kind.to_string(), id.to_string())];
    for id in ["c1", "c2", "c3"] {
        assert!(at("tool_call_begin", id) < at("turn_started", id));
        assert!(at("turn_started", id) < at("turn_complete", id));
        assert!(at("turn_complete", id) < at("tool_call_end", id));
        assert!(at("tool_call_begin", id) < at("tool_call_end", "c1"));
    }
    assert!(at("tool_call_end", "c1") < at("tool_call_end", "c2"));
    assert!(at("tool_call_end", "c2") < at("tool_call_end", "c3"));
    // Each result reached the model under its own call.
    let last = server
        .chat_requests()
        .into_iter()
        .rfind(|r| !is_explore(r))
        .unwrap();
    for (id, task) in [("c1", "one"), ("c2", "two"), ("c3", "three")] {
        assert!(
            last.tool_result(id).contains(&format!("explored {task}")),
            "{id}"
        );
    }
}

#[test]
fn the_cap_holds_parallel_agents_back() {
    let dirs = project_with_definition();
    dirs.home_file("config.toml", "max_parallel_agents = 1\n");
    let server = MockServer::start(vec![
        sse(vec![
            agent_call(0, "c1", "explore", "one"),
            agent_call(1, "c2", "explore", "two"),
            finish("tool_calls"),
        ]),
        answer("done"),
    ]);
    server.respond_with(|request| {
        is_explore(request).then(|| answer("explored").delay_headers_ms(300))
    });
    let (out, events) = run_p(&server, &dirs, &[]);
    assert_exit(&out, 0);
    // One at a time: the second sub-agent starts only after the first finished.
    let index = |kind: &str, id: &str| {
        events
            .iter()
            .position(|e| {
                e["type"] == "sub_agent" && e["parent_call_id"] == id && e["event"]["type"] == kind
            })
            .unwrap()
    };
    assert!(index("turn_complete", "c1") < index("turn_started", "c2"));
}

#[test]
fn explore_cannot_change_a_file_even_through_bash() {
    let dirs = project_with_definition();
    let server = MockServer::start(vec![
        sse(vec![
            agent_call(0, "c1", "explore", "try"),
            finish("tool_calls"),
        ]),
        answer("done"),
    ]);
    server.respond_with(|request| {
        if !is_explore(request) {
            return None;
        }
        Some(match request.tool_results().len() {
            0 => bash_reply("b1", "touch made-by-explore; echo rc=$?"),
            1 => tool_reply(
                "w1",
                "write_file",
                &json!({"path": "written.txt", "content": "x"}).to_string(),
            ),
            _ => answer("could not"),
        })
    });
    // full-auto: the session itself would run both without asking.
    let (out, _) = run_p(&server, &dirs, &["--approval-mode", "full-auto"]);
    assert_exit(&out, 0);
    assert!(!dirs.project().join("made-by-explore").exists());
    assert!(!dirs.project().join("written.txt").exists());
    let explore: Vec<RecordedRequest> = server
        .chat_requests()
        .into_iter()
        .filter(is_explore)
        .collect();
    let tools = explore[0].tool_names();
    assert_eq!(tools, ["read_file", "glob", "list", "grep", "bash"]);
    let results = explore.last().unwrap().tool_results();
    assert!(results[0].contains("rc=1"), "{results:?}");
    assert!(
        results[1].contains("unknown tool 'write_file'"),
        "{results:?}"
    );
}

#[test]
fn a_definition_gets_its_tools_and_prompt_only() {
    let dirs = project_with_definition();
    let server = MockServer::start(vec![
        sse(vec![
            agent_call(0, "c1", "code-reviewer", "review src"),
            finish("tool_calls"),
        ]),
        answer("reviewed"),
        answer("done"),
    ]);
    let (out, _) = run_p(&server, &dirs, &[]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    let main_prompt = system_prompt(&requests[0]);
    assert!(main_prompt.contains("## Available Agents"), "{main_prompt}");
    assert!(
        main_prompt.contains("- code-reviewer: Reviews code."),
        "{main_prompt}"
    );
    assert!(requests[0].tool_names().contains(&"agent".to_string()));
    assert_eq!(system_prompt(&requests[1]), "You are a code reviewer.");
    assert_eq!(requests[1].tool_names(), ["read_file", "grep"]);
    assert_eq!(requests[1].last_user_text(), "review src");
    assert!(requests[2].tool_result("c1").contains("reviewed"));
}

#[test]
fn without_definitions_the_first_request_has_no_index_and_no_agent_tool() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.project().join(".git")).unwrap();
    let server = MockServer::start(vec![answer("hi")]);
    let (out, _) = run_p(&server, &dirs, &[]);
    assert_exit(&out, 0);
    let first = &server.chat_requests()[0];
    assert!(!system_prompt(first).contains("Agents"));
    assert_eq!(
        first.tool_names(),
        [
            "read_file",
            "view_image",
            "write_file",
            "edit_file",
            "glob",
            "list",
            "grep",
            "bash",
            "web_fetch",
            "update_plan"
        ]
    );
}

#[test]
fn usage_names_what_each_sub_agent_consumed() {
    let dirs = project_with_definition();
    let server = MockServer::start(vec![
        sse(vec![
            agent_call(0, "c1", "explore", "one"),
            agent_call(1, "c2", "explore", "two"),
            agent_call(2, "c3", "code-reviewer", "three"),
            finish("tool_calls"),
        ]),
        answer("done"),
    ]);
    server.respond_with(|request| {
        (!system_prompt(request).starts_with("You are harness9"))
            .then(|| sse(vec![text("report"), usage(1000, 10), finish("stop")]))
    });
    let mut cmd = server.harness9(dirs.home(), dirs.project());
    let child = spawn_fed(&mut cmd, b"go\n/usage\n");
    let out = wait_with_deadline(child, Duration::from_secs(30));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("sub-agent explore (2 runs): 2000 in, 20 out"),
        "{all}"
    );
    assert!(
        all.contains("sub-agent code-reviewer (1 run): 1000 in, 10 out"),
        "{all}"
    );
}

#[test]
fn a_sub_agent_cannot_start_sub_agents() {
    let dirs = project_with_definition();
    let server = MockServer::start(vec![
        sse(vec![
            agent_call(0, "c1", "general", "do it"),
            finish("tool_calls"),
        ]),
        // The general agent tries to delegate anyway.
        sse(vec![
            agent_call(0, "n1", "explore", "nested"),
            finish("tool_calls"),
        ]),
        answer("did it myself"),
        answer("done"),
    ]);
    let (out, _) = run_p(&server, &dirs, &[]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4, "no nested sub-agent ran");
    let general = &requests[1];
    assert!(system_prompt(general).starts_with("You are a sub-agent"));
    let tools = general.tool_names();
    assert!(!tools.contains(&"agent".to_string()), "{tools:?}");
    assert!(tools.contains(&"write_file".to_string()), "{tools:?}");
    assert!(
        requests[2]
            .tool_result("n1")
            .contains("unknown tool 'agent'")
    );
}
