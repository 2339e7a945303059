//! The agent loop end to end through the library: a real session (config, skills, prompt,
//! tools, client) against the scripted server, driven with `Op`s and checked through
//! `Event`s and the requests the server received.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::*;
use harness9::agent::Approver;
use harness9::config::Overrides;
use harness9::protocol::{
    ApprovalAsk, ApprovalDecision, ApprovalRequestKind, ErrorKind, Event, Invocation, Op,
    ToolStatus, TurnOutcome,
};
use serde_json::Value;

fn tool_messages(request: &RecordedRequest) -> Vec<Value> {
    request
        .messages()
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .collect()
}

#[tokio::test]
async fn plain_answer_streams_and_completes() {
    let server = MockServer::start(vec![sse(vec![
        text("Hel"),
        text("lo"),
        usage(10, 2),
        finish("stop"),
    ])]);
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    let (outcome, final_text) = s.turn("hi").await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert_eq!(final_text, "Hello");
    let deltas: Vec<_> = s
        .events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Hel", "lo"]);
    let req = &server.chat_requests()[0];
    assert_eq!(req.body["model"], "mock-model");
    assert_eq!(req.header("authorization"), Some("Bearer test-key"));
    let msgs = req.messages();
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[1]["content"], "hi");
}

#[tokio::test]
async fn tool_round_trip_and_parallel_calls_answer_in_call_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta\n").unwrap();
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "call_a", "read_file", r#"{"path":"a.txt"}"#).split_args(2),
            tool_call(1, "call_b", "read_file", r#"{"path":"b.txt"}"#),
            finish("tool_calls"),
        ]),
        answer("both read"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    assert_eq!(s.completed_turn("read both").await, "both read");
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 2);
    let tools = tool_messages(&reqs[1]);
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["tool_call_id"], "call_a");
    assert!(tools[0]["content"].as_str().unwrap().contains("alpha"));
    assert_eq!(tools[1]["tool_call_id"], "call_b");
    assert!(tools[1]["content"].as_str().unwrap().contains("beta"));
    let assistant = reqs[1]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"a.txt"}"#
    );
}

#[tokio::test]
async fn invalid_arguments_and_unknown_tools_are_results_the_model_recovers_from() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "c1", "read_file", r#"{"path": "a.txt""#),
            tool_call(1, "c2", "teleport", r#"{}"#),
            finish("tool_calls"),
        ]),
        answer("recovered"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    assert_eq!(s.completed_turn("go").await, "recovered");
    let tools = tool_messages(&server.chat_requests()[1]);
    let first = tools[0]["content"].as_str().unwrap();
    assert!(first.contains("not a valid JSON object"), "{first}");
    let second = tools[1]["content"].as_str().unwrap();
    assert_has(second, &["unknown tool 'teleport'", "read_file"]);
}

#[tokio::test]
async fn system_prompt_and_tools_are_byte_identical_on_every_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("AGENTS.md"), "Always answer in haiku.\n").unwrap();
    project_skill(dir.path(), "demo", "A demo skill", "Do the demo.\n");
    let server = MockServer::start(vec![
        use_skill_reply("c1", "demo"),
        tool_reply("c2", "list", r#"{}"#),
        answer("one"),
        answer("two"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    s.turn("first").await;
    s.turn("second").await;
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 4);
    let system = reqs[0].message_text(0);
    assert!(system.contains("Always answer in haiku."));
    assert!(system.ends_with(
        "## Available Skills\nUse the `use_skill` tool to load the full content of any skill when needed.\n- demo: A demo skill\n"
    ), "{system}");
    for r in &reqs {
        assert_eq!(r.message_text(0), system);
        assert_eq!(r.body["tools"], reqs[0].body["tools"]);
    }
    let loaded = reqs[1].tool_results()[0].clone();
    assert_has(&loaded, &["<skill-loaded name=\"demo\">", "Do the demo."]);
}

#[tokio::test]
async fn nobody_to_ask_denies_at_once_and_the_file_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        tool_reply("w1", "write_file", r#"{"path":"new.txt","content":"x"}"#),
        answer("could not write"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    let (outcome, _) = s.turn("write it").await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(!dir.path().join("new.txt").exists());
    assert!(
        s.events
            .iter()
            .any(|e| matches!(e, Event::AutoDenied { name, .. } if name == "write_file"))
    );
    let result = server.chat_requests()[1].tool_results()[0].clone();
    assert_has(&result, &["Denied", "auto-edit"]);
}

#[tokio::test]
async fn frontend_approvals_run_deny_with_reason_and_remember_always() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        tool_reply("w1", "write_file", r#"{"path":"a.txt","content":"one\n"}"#),
        tool_reply("b1", "bash", r#"{"command":"echo hi"}"#),
        tool_reply("w2", "write_file", r#"{"path":"b.txt","content":"two\n"}"#),
        tool_reply(
            "w3",
            "write_file",
            r#"{"path":"c.txt","content":"three\n"}"#,
        ),
        answer("done"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path())
        .approver(Approver::Frontend)
        .start();
    s.send("go");
    let ApprovalAsk {
        call_id, request, ..
    } = s.next_approval().await;
    assert_eq!(call_id, "w1");
    let ApprovalRequestKind::Edit {
        diff: Some(diff),
        location: harness9::protocol::Location::Inside,
        ..
    } = request
    else {
        panic!("expected an edit with a diff: {request:?}")
    };
    assert!(diff.contains("+one"), "{diff}");
    s.decide(call_id, ApprovalDecision::Approve);

    let ApprovalAsk { call_id, .. } = s.next_approval().await;
    assert_eq!(call_id, "b1");
    let deny = ApprovalDecision::Deny {
        reason: Some("use the Makefile instead".into()),
    };
    s.decide(call_id, deny);

    let ApprovalAsk { call_id, .. } = s.next_approval().await;
    s.decide(call_id, ApprovalDecision::ApproveForSession);
    // w3 runs without asking: edits are now approved for the session.
    let Event::TurnComplete { outcome, .. } = s
        .until(|e| matches!(e, Event::TurnComplete { .. } | Event::ApprovalRequest(_)))
        .await
    else {
        panic!("asked again after 'always': {:#?}", s.events)
    };
    assert_eq!(outcome, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.txt")).unwrap(),
        "three\n"
    );
    let reqs = server.chat_requests();
    assert!(
        reqs[2]
            .tool_result("b1")
            .contains("use the Makefile instead")
    );
    assert!(s.events.iter().any(|e| matches!(e, Event::ToolCallEnd { name, status: ToolStatus::Denied, .. } if name == "bash")));
}

#[tokio::test]
async fn interrupt_kills_a_running_command_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "b1", "bash", r#"{"command":"echo started; sleep 30"}"#),
            tool_call(1, "b2", "bash", r#"{"command":"echo never"}"#),
            finish("tool_calls"),
        ]),
        answer("next turn"),
    ]);
    let overrides = Overrides {
        approval_mode: Some(harness9::protocol::ApprovalMode::FullAuto),
        ..Default::default()
    };
    let mut s = SessionBuilder::new(&server, dir.path())
        .approver(Approver::Frontend)
        .overrides(overrides)
        .start();
    s.send("run it");
    s.until(|e| matches!(e, Event::ToolOutputDelta { text, .. } if text.contains("started")))
        .await;
    let asked = std::time::Instant::now();
    s.op(Op::Interrupt);
    let Event::TurnComplete { outcome, .. } =
        s.until(|e| matches!(e, Event::TurnComplete { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(outcome, TurnOutcome::Interrupted);
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "interrupt took {:?}",
        asked.elapsed()
    );

    assert_eq!(s.completed_turn("again").await, "next turn");
    let tools = tool_messages(&server.chat_requests()[1]);
    assert_eq!(
        tools.len(),
        2,
        "every call of the interrupted response has a result"
    );
    assert!(
        tools[1]["content"]
            .as_str()
            .unwrap()
            .contains("interrupted")
    );
}

#[tokio::test]
async fn interrupted_stream_keeps_the_partial_answer_marked() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        sse(vec![text("I was say"), text("ing"), finish("stop")]).stall_after(1),
        answer("ok"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path())
        .approver(Approver::Frontend)
        .start();
    s.send("talk");
    s.until(|e| matches!(e, Event::TextDelta { .. })).await;
    s.op(Op::Interrupt);
    let Event::TurnComplete {
        outcome,
        final_text,
        ..
    } = s.until(|e| matches!(e, Event::TurnComplete { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(
        (outcome, final_text.as_str()),
        (TurnOutcome::Interrupted, "I was say")
    );
    s.turn("go on").await;
    let msgs = server.chat_requests()[1].messages();
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        assistant["content"],
        "I was say\n\n[interrupted by the user]"
    );
}

#[tokio::test]
async fn max_turns_stops_a_model_that_never_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let again = || tool_reply("l", "list", "{}");
    let server = MockServer::start(vec![again(), again(), again()]);
    let overrides = Overrides {
        max_turns: Some(2),
        ..Default::default()
    };
    let mut s = SessionBuilder::new(&server, dir.path())
        .overrides(overrides)
        .start();
    let (outcome, _) = s.turn("loop").await;
    assert_eq!(outcome, TurnOutcome::MaxTurnsReached { limit: 2 });
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn usage_is_summed_and_estimated_when_missing() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        sse(vec![text("a"), usage(100, 5), finish("stop")]),
        answer("b"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    s.turn("one").await;
    s.turn("two").await;
    let last = s
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Usage { session, turn, .. } => Some((*session, *turn)),
            _ => None,
        })
        .unwrap();
    assert!(last.1.estimated && last.1.input_tokens > 0);
    assert_eq!(last.0.input_tokens, 100 + last.1.input_tokens);
    assert!(last.0.estimated);
}

#[tokio::test]
async fn provider_failure_fails_the_turn_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        http_error(401).body(r#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#),
        answer("fine now"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    let (outcome, _) = s.turn("one").await;
    let TurnOutcome::Failed { kind, message } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(kind, ErrorKind::Auth);
    assert_has(&message, &["401", &server.url()]);
    assert_eq!(s.completed_turn("two").await, "fine now");
}

#[tokio::test]
async fn clear_and_model_switch_apply_between_turns() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    s.turn("remember me").await;
    s.op(Op::NewConversation);
    s.op(Op::SetModel {
        model: "other".into(),
    });
    s.turn("fresh").await;
    let reqs = server.chat_requests();
    assert_eq!(reqs[1].body["model"], "other");
    let msgs = reqs[1].messages();
    assert_eq!(msgs.len(), 2, "system + the new user message: {msgs:?}");
    s.op(Op::Shutdown);
    s.until(|e| matches!(e, Event::ShutdownComplete { .. }))
        .await;
}

#[tokio::test]
async fn use_skill_unknown_name_lists_the_available_ones_and_slash_commands_send_body_and_args() {
    let dir = tempfile::tempdir().unwrap();
    project_skill(
        dir.path(),
        "go-refactor",
        "Use when refactoring Go code",
        "Run go vet first.\n",
    );
    let server = MockServer::start(vec![
        use_skill_reply("u", "go-refactr"),
        answer("ok"),
        answer("refactored"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    s.turn("load it").await;
    let result = server.chat_requests()[1].tool_results()[0].clone();
    assert!(result.contains("go-refactor"), "{result}");

    let op = harness9::input::route("/go-refactor clean main.go", &s.info.commands)
        .to_op(harness9::protocol::InputOrigin::Typed)
        .unwrap();
    assert!(matches!(op, Op::Invoke(Invocation::Skill { .. })), "{op:?}");
    s.op(op);
    s.until(|e| matches!(e, Event::TurnComplete { .. })).await;
    let msgs = server.chat_requests()[2].messages();
    let last_user = msgs.iter().rev().find(|m| m["role"] == "user").unwrap();
    assert_eq!(last_user["content"], "Run go vet first.\n\nclean main.go");
}

/// Esc at an approval ("no, and stop") sends the interrupt before the denial: the turn
/// ends while it waits, and the model is never asked again.
#[tokio::test]
async fn no_and_stop_at_an_approval_sends_no_further_request() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        tool_reply("b1", "bash", r#"{"command":"make"}"#),
        answer("should never be asked"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path())
        .approver(Approver::Frontend)
        .start();
    s.send("go");
    let ApprovalAsk { call_id, .. } = s.next_approval().await;
    s.op(Op::Interrupt);
    s.decide(call_id, ApprovalDecision::Deny { reason: None });
    let (outcome, _) = s.until_complete().await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    assert_eq!(server.chat_requests().len(), 1);
}

/// `/approvals full-auto` during a session: the next call runs without asking, where
/// the starting mode (suggest, nobody to ask) denied it.
#[tokio::test]
async fn switching_the_approval_mode_holds_for_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let call = || tool_reply("b1", "bash", r#"{"command":"echo switched > out.txt"}"#);
    let server = MockServer::start(vec![call(), answer("denied"), call(), answer("ran")]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    s.turn("first").await;
    assert!(
        !dir.path().join("out.txt").exists(),
        "suggest with nobody to ask denies"
    );
    s.op(Op::SetApprovalMode {
        mode: harness9::protocol::ApprovalMode::FullAuto,
    });
    s.until(|e| matches!(e, Event::ApprovalModeChanged { .. }))
        .await;
    s.turn("again").await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "switched\n"
    );
}
