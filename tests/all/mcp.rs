//! MCP servers through the real binary, with the fixture server
//! (`examples/mcp_fixture.rs`): loading a server changes the next request's tools and
//! never the system prompt; its calls ask in `suggest` and `auto-edit` (so `-p` denies
//! them) unless a rule allows them, and run in `full-auto` unless a rule denies them; its
//! prompts are slash commands whose text is never expanded; a server that cannot start
//! is a warning naming it with its stderr; and nothing starts before it is needed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use crate::support::*;

/// `harness9 -p PROMPT ARGS` in `dirs` against `server`.
fn run(server: &MockServer, dirs: &Dirs, prompt: &str, args: &[&str]) -> Output {
    server.run(dirs, &[&["-p", prompt], args].concat())
}

#[test]
fn loading_a_server_changes_the_next_requests_tools_and_never_the_system_prompt() {
    let dirs = Dirs::with_config(&mcp_fixture_table(
        "fx",
        &["--instructions", "Echo and add numbers."],
        "",
    ));
    let server = MockServer::start(vec![
        use_skill_reply("c1", "mcp:fx"),
        tool_reply("c2", "mcp__fx__echo", r#"{"text":"hi"}"#),
        tool_reply("c3", "unload_skill", r#"{"skill_name":"mcp:fx"}"#),
        answer("done"),
    ]);
    let out = run(&server, &dirs, "go", &["--approval-mode", "full-auto"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    let prompt = requests[0].message_text(0);
    // Nothing was started for the first request, so its line comes from configuration.
    assert!(prompt.contains("## MCP Servers\n"), "{prompt}");
    assert!(prompt.contains("\n- mcp:fx\n"), "{prompt}");
    for r in &requests {
        assert_eq!(r.message_text(0), prompt, "the system prompt changed");
    }
    let has_echo = |r: &RecordedRequest| r.tool_names().contains(&"mcp__fx__echo".to_string());
    assert!(!has_echo(&requests[0]));
    assert!(has_echo(&requests[1]) && has_echo(&requests[2]));
    assert!(!has_echo(&requests[3]), "{:?}", requests[3].tool_names());
    let loaded = &requests[1].tool_results()[0];
    assert!(
        loaded.contains("<mcp-server-loaded name=\"fx\">"),
        "{loaded}"
    );
    assert!(loaded.contains("Echo and add numbers."), "{loaded}");
    assert_eq!(requests[2].tool_results()[1], "echo: hi");
    // The server's stderr went to its log, not to the user.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("fixture fixture starting"), "{stderr}");
    let log = std::fs::read_to_string(dirs.home().join("logs/mcp/fx.log")).unwrap();
    assert!(log.contains("fixture fixture starting"), "{log}");

    // The next session's index line says what the server said of itself.
    let again = MockServer::start(vec![answer("ok")]);
    assert_exit(&run(&again, &dirs, "hi", &[]), 0);
    let prompt = again.chat_requests()[0].message_text(0);
    assert!(
        prompt.contains("\n- mcp:fx: Echo and add numbers. ("),
        "{prompt}"
    );
}

/// One `-p` run in which the model loads `fx` and calls its `echo`; the tool result.
fn echo_call(dirs: &Dirs, args: &[&str]) -> (Output, String) {
    let server = MockServer::start(vec![
        use_skill_reply("c1", "mcp:fx"),
        tool_reply("c2", "mcp__fx__echo", r#"{"text":"hi"}"#),
        answer("done"),
    ]);
    let out = run(&server, dirs, "go", args);
    let result = server
        .chat_requests()
        .get(2)
        .and_then(|r| r.tool_results().get(1).cloned())
        .unwrap_or_default();
    (out, result)
}

#[test]
fn mcp_tools_ask_unless_allowed_and_run_in_full_auto_unless_denied() {
    let table = mcp_fixture_table("fx", &[], "");
    let dirs = Dirs::with_config(&table);
    for mode in ["suggest", "auto-edit"] {
        let (out, result) = echo_call(&dirs, &["--approval-mode", mode]);
        assert!(
            result.starts_with("Denied: the MCP tool `echo` of server `fx`"),
            "{mode}: {result}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("MCP tool `echo` of server `fx` needs approval"),
            "{stderr}"
        );
    }
    let (_, result) = echo_call(&dirs, &["--approval-mode", "full-auto"]);
    assert_eq!(result, "echo: hi");

    // A rule for the whole server allows it in suggest; a deny rule wins in full-auto.
    dirs.home_file(
        "config.toml",
        &format!("[permissions]\nallow = [\"mcp__fx\"]\n\n{table}"),
    );
    let (_, result) = echo_call(&dirs, &["--approval-mode", "suggest"]);
    assert_eq!(result, "echo: hi");
    dirs.home_file(
        "config.toml",
        &format!("[permissions]\ndeny = [\"mcp__fx__echo\"]\n\n{table}"),
    );
    let (_, result) = echo_call(&dirs, &["--approval-mode", "full-auto"]);
    assert!(
        result.contains("Denied by the permission rule `deny mcp__fx__echo`"),
        "{result}"
    );
}

#[test]
fn a_prompt_is_a_slash_command_whose_text_is_never_expanded() {
    let dirs = Dirs::with_config(&mcp_fixture_table("fx", &[], ""));
    let server = MockServer::start(vec![answer("hello Ann")]);
    let out = run(&server, &dirs, "/fx:greet Ann pirate", &[]);
    assert_exit(&out, 0);
    assert_eq!(
        server.chat_requests()[0].last_user_text(),
        "Say hello to Ann in a pirate way"
    );

    let marker = dirs.project().join("pwned");
    let server = MockServer::start(vec![answer("no")]);
    let out = run(
        &server,
        &dirs,
        "/fx:shell",
        &["--approval-mode", "full-auto"],
    );
    assert_exit(&out, 0);
    let sent = server.chat_requests()[0].last_user_text();
    assert_has(&sent, &["!`touch /tmp/mcp_fixture_pwned`", "$ARGUMENTS"]);
    assert!(!marker.exists());

    // A missing required argument fails the turn with the prompt's usage.
    let server = MockServer::start(vec![]);
    let out = run(&server, &dirs, "/fx:greet", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/fx:greet needs name; usage: /fx:greet <name> [style]"),
        "{stderr}"
    );
    assert!(server.chat_requests().is_empty());
    assert_ne!(out.status.code(), Some(0));
}

#[test]
fn a_server_that_cannot_start_is_named_with_its_stderr_and_nothing_starts_early() {
    let dirs = Dirs::with_config(&format!(
        "{}{}",
        mcp_fixture_table("db", &["--fail-start"], ""),
        mcp_fixture_table("idle", &[], "")
    ));
    let server = MockServer::start(vec![use_skill_reply("c1", "mcp:db"), answer("done")]);
    let out = run(&server, &dirs, "go", &["--approval-mode", "full-auto"]);
    assert_exit(&out, 0);
    let result = &server.chat_requests()[1].tool_results()[0];
    assert!(
        result.contains("MCP server `db` could not start"),
        "{result}"
    );
    assert!(
        result.contains("cannot open database /nonexistent"),
        "{result}"
    );
    // The user hears of it once: the model's tool result is not shown as an error too.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("MCP server `db` could not start").count(),
        1,
        "{stderr}"
    );
    // The server nobody loaded never ran.
    assert!(!dirs.home().join("logs/mcp/idle.log").exists());

    // The user's own `/db:PROMPT` fails with the reason, said once (the error, no
    // notice besides it), and asks the model nothing.
    let out = run(&server, &dirs, "/db:hello", &[]);
    assert_exit(&out, 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("MCP server `db` could not start").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("error: MCP server `db` could not start"),
        "{stderr}"
    );
    assert_eq!(server.chat_requests().len(), 2);
}

#[test]
fn piped_input_cannot_be_added_to_an_mcp_prompt() {
    let dirs = Dirs::with_config(&mcp_fixture_table("fx", &[], ""));
    let server = MockServer::start(vec![]);
    let out = run_fed(
        server.binary(&dirs).args(["-p", "/fx:review"]),
        b"some diff\n",
    );
    assert_exit(&out, 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("piped input cannot be added"), "{stderr}");
    assert!(server.chat_requests().is_empty());
}

/// Waits (at most 30 s) until `owner` counts as loaded, which a background load marks
/// once its tools are in: asks for `/mcp`'s listing until its entry says so.
async fn until_tools_of(s: &mut Session, owner: &str) {
    use harness9::protocol::{Event, Op};
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        s.op(Op::ListMcpServers);
        let Event::McpServerList { servers } =
            s.until(|e| matches!(e, Event::McpServerList { .. })).await
        else {
            unreachable!("until returns a matching event")
        };
        if servers
            .iter()
            .any(|e| e.name == owner && e.state.ends_with(", loaded"))
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{owner}'s tools never loaded"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_preloaded_server_starts_in_the_background_and_comes_back_after_clear() {
    let project = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    let mut s = SessionBuilder::new(&server, project.path())
        .config_toml(&mcp_fixture_table("pre", &[], "preload = true"))
        .start();
    until_tools_of(&mut s, "mcp:pre").await;
    s.turn("hi").await;
    s.op(harness9::protocol::Op::NewConversation);
    s.until(|e| matches!(e, harness9::protocol::Event::ConversationCleared))
        .await;
    until_tools_of(&mut s, "mcp:pre").await;
    s.turn("again").await;
    let requests = server.chat_requests();
    for r in &requests {
        assert!(
            r.tool_names().contains(&"mcp__pre__echo".to_string()),
            "{:?}",
            r.tool_names()
        );
    }
    assert_eq!(requests[0].message_text(0), requests[1].message_text(0));
}

/// Waits (at most 20 s) until `file` holds `text`; fails saying `never` when not.
async fn until_file_holds(file: &Path, text: &str, never: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(file).is_ok_and(|t| t.contains(text)) {
        assert!(std::time::Instant::now() < deadline, "{never}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn interrupting_a_hanging_mcp_call_ends_the_turn_and_tells_the_server() {
    use harness9::protocol::{Event, Op, TurnOutcome};
    let project = tempfile::tempdir().unwrap();
    let log = project.path().join("cancel.log");
    let server = MockServer::start(vec![
        use_skill_reply("c1", "mcp:fx"),
        tool_reply("c2", "mcp__fx__slow", r#"{"seconds":60}"#),
    ]);
    let extra = format!(
        "env = {{ FIXTURE_CANCEL_LOG = {:?} }}",
        log.display().to_string()
    );
    let mut s = SessionBuilder::new(&server, project.path())
        .config_toml(&format!(
            "approval_mode = \"full-auto\"\n{}",
            mcp_fixture_table("fx", &[], &extra)
        ))
        .start();
    s.send("go");
    s.until(|e| matches!(e, Event::ToolCallBegin { name, .. } if name == "mcp__fx__slow"))
        .await;
    // The call has reached the server before it is interrupted.
    until_file_holds(&log, "slow started", "the call never reached the server").await;
    s.op(Op::Interrupt);
    let (outcome, _) = s.until_complete().await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    until_file_holds(
        &log,
        "\ncancelled",
        "the server never heard of the cancellation",
    )
    .await;
}

/// The first request of a session in `dirs` (a fresh scripted server answering "ok").
fn first_request(dirs: &Dirs) -> RecordedRequest {
    let server = MockServer::start(vec![sse(vec![text("ok"), finish("stop")])]);
    assert_exit(&run(&server, dirs, "hi", &[]), 0);
    server.chat_requests().remove(0)
}

#[test]
fn five_servers_add_at_most_a_kilobyte_to_every_request_and_each_line_names_its_server() {
    let long = "Tells the time in any zone. It also converts between zones, lists the zones \
                it knows and explains daylight saving rules in detail.";
    let mut table = String::new();
    for i in 1..=5 {
        let instructions = if i == 1 {
            long.to_string()
        } else {
            format!("Scripted test server {i}.")
        };
        table.push_str(&mcp_fixture_table(
            &format!("s{i}"),
            &["--instructions", &instructions, "--tools", "12"],
            "",
        ));
    }
    let dirs = Dirs::with_config(&table);
    let none = first_request(&Dirs::new()).raw_body.len();
    // Never started: the lines come from configuration alone.
    let cold = first_request(&dirs);
    assert!(
        cold.raw_body.len() <= none + 1024,
        "{} > {none} + 1024",
        cold.raw_body.len()
    );
    // Started once: the lines say what each server said of itself, and its tool count.
    let loads: Vec<Reply> = (1..=5)
        .map(|i| {
            sse(vec![
                tool_call(
                    0,
                    &format!("c{i}"),
                    "use_skill",
                    &format!(r#"{{"skill_name":"mcp:s{i}"}}"#),
                ),
                finish("tool_calls"),
            ])
        })
        .chain([sse(vec![text("done"), finish("stop")])])
        .collect();
    let server = MockServer::start(loads);
    assert_exit(&run(&server, &dirs, "load", &[]), 0);
    let loaded = server.chat_requests();
    assert!(
        loaded[5]
            .tool_names()
            .contains(&"mcp__s5__echo".to_string()),
        "{:?}",
        loaded[5].tool_names()
    );
    let warm = first_request(&dirs);
    assert!(
        warm.raw_body.len() <= none + 1024,
        "{} > {none} + 1024",
        warm.raw_body.len()
    );
    let prompt = warm.message_text(0);
    assert!(
        prompt.contains("\n- mcp:s1: Tells the time in any zone. (20 tools)\n"),
        "{prompt}"
    );
    for i in 2..=5 {
        assert!(
            prompt.contains(&format!(
                "\n- mcp:s{i}: Scripted test server {i}. (20 tools)"
            )),
            "{prompt}"
        );
    }
    // use_skill and unload_skill travel with it, saying what they do with a server.
    let names = warm.tool_names();
    assert!(
        names.contains(&"use_skill".to_string()) && names.contains(&"unload_skill".to_string())
    );
}
