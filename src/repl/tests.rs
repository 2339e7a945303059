//! The REPL loop against a scripted fake agent: routing, built-ins, failures, approvals
//! and shutdown, with piped input read from bytes.

use crate::test_support::assert_contains;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Notify;

use super::render::SharedWriter;
use super::*;
use crate::protocol::ApprovalMode;
use crate::protocol::{
    ApprovalRequestKind, HistoryItem, ResumedSession, SessionListing, TurnOutcome,
};
use crate::skills::Catalog;

/// A fake agent: answers each input with "echo: TEXT"; "fail" fails the turn, "ask"
/// asks for approval and answers with the decision, "slow" waits for an interrupt. It
/// has two saved sessions ([`saved_sessions`]); resuming "nope" fails, any other id
/// resumes [`resumed_session`]; exports go to the file asked for, under `/p`.
fn fake_agent() -> (AgentHandle, tokio::task::JoinHandle<Vec<Op>>) {
    fake_agent_notifying(Arc::new(Notify::new()))
}

/// [`fake_agent`], notifying `slow_started` when a "slow" turn starts.
fn fake_agent_notifying(
    slow_started: Arc<Notify>,
) -> (AgentHandle, tokio::task::JoinHandle<Vec<Op>>) {
    let (ops_tx, mut ops_rx) = mpsc::unbounded_channel::<Op>();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut seen = Vec::new();
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 2,
            ..Default::default()
        };
        let mut session = Usage::default();
        while let Some(op) = ops_rx.recv().await {
            seen.push(op.clone());
            let send = |e: Event| {
                let _ = ev_tx.send(e);
            };
            match op {
                Op::UserInput { text, .. } => {
                    send(Event::TurnStarted { text: text.clone() });
                    let outcome = match text.as_str() {
                        "fail" => TurnOutcome::Failed {
                            kind: ErrorKind::Server,
                            message: "500 from mock".into(),
                        },
                        "ask" => {
                            send(Event::ApprovalRequest(crate::protocol::ApprovalAsk {
                                call_id: "c1".into(),
                                name: "bash".into(),
                                request: ApprovalRequestKind::Command {
                                    command: "ls".into(),
                                    cwd: PathBuf::from("/p"),
                                },
                                because: None,
                                offer: crate::protocol::Offer::Rules {
                                    rules: vec!["bash(ls:*)".into()],
                                },
                            }));
                            let Some(answer) = ops_rx.recv().await else {
                                break;
                            };
                            seen.push(answer.clone());
                            send(Event::TextDelta {
                                text: format!("{answer:?}"),
                            });
                            TurnOutcome::Completed
                        }
                        "slow" => {
                            send(Event::TextDelta {
                                text: "working\n".into(),
                            });
                            slow_started.notify_one();
                            let Some(next) = ops_rx.recv().await else {
                                break;
                            };
                            seen.push(next.clone());
                            TurnOutcome::Interrupted
                        }
                        _ => {
                            send(Event::TextDelta {
                                text: format!("echo: {text}"),
                            });
                            TurnOutcome::Completed
                        }
                    };
                    session.add(&usage);
                    send(Event::Usage {
                        turn: usage,
                        session,
                        context_tokens: Some(10),
                    });
                    send(Event::TurnComplete {
                        outcome,
                        final_text: Default::default(),
                        usage,
                        requests: 1,
                    });
                }
                Op::Shutdown => {
                    send(Event::ShutdownComplete { usage: session });
                    break;
                }
                other => {
                    if let Some(answer) = fake_answer(other) {
                        send(answer);
                    }
                }
            }
        }
        seen
    });
    (
        AgentHandle {
            ops: ops_tx,
            events: ev_rx,
        },
        task,
    )
}

/// What [`fake_agent`] answers to an op other than a turn or `Shutdown` (`None`: it
/// answers nothing).
fn fake_answer(op: Op) -> Option<Event> {
    match op {
        Op::NewConversation => Some(Event::ConversationCleared),
        Op::SetModel { model } => Some(Event::ModelChanged { model }),
        Op::SetEffort { effort } => Some(Event::EffortChanged { effort }),
        Op::ListModels => Some(Event::ModelList(crate::protocol::ModelList {
            current: "m1".into(),
            providers: Vec::new(),
        })),
        Op::Compact { .. } => Some(Event::Warning {
            message: "there is nothing to compact yet".into(),
        }),
        Op::ListSessions => Some(Event::SessionList {
            sessions: saved_sessions(),
        }),
        Op::Resume { id } if id == "nope" => Some(Event::Warning {
            message: "could not resume: no session matches \"nope\"".into(),
        }),
        Op::Resume { id } => Some(Event::SessionResumed(Box::new(resumed_session(&id)))),
        Op::Export { format, path } => {
            let name = format!("harness9-session-x.{}", format.extension());
            Some(Event::Exported {
                path: PathBuf::from("/p").join(path.unwrap_or(PathBuf::from(name))),
            })
        }
        Op::ListPermissions => Some(Event::Permissions {
            rules: vec![crate::protocol::RuleView {
                number: 1,
                rule: "bash(cargo test:*)".into(),
                effect: crate::protocol::Effect::Allow,
                source: crate::protocol::Source::Session,
            }],
            untrusted: vec!["bash".into()],
            project_file: PathBuf::from("/p/.harness9/permissions.toml"),
        }),
        Op::RemovePermission { number } => Some(Event::Warning {
            message: format!("there is no rule {number}"),
        }),
        Op::SetApprovalMode { mode } => Some(Event::ApprovalModeChanged { mode }),
        Op::ReloadSkills => Some(Event::SkillsReloaded {
            changes: crate::protocol::SkillChanges {
                added: vec![("fresh".into(), "New one".into())],
                ..Default::default()
            },
            skills: 3,
            warnings: vec!["/s/broken/SKILL.md: no frontmatter".into()],
            trigger: crate::protocol::ReloadTrigger::Asked,
        }),
        Op::ListSkills => Some(Event::SkillList(crate::skills::listing::listing(
            &Catalog::empty(),
            8_000,
            &[],
        ))),
        Op::ListMcpServers => Some(Event::McpServerList {
            servers: Vec::new(),
        }),
        Op::ListPlugins => Some(Event::PluginList(crate::protocol::PluginListing::default())),
        Op::ListHooks => Some(Event::HookList(crate::protocol::HookListing::default())),
        Op::Status => Some(Event::Status(Box::new(crate::protocol::StatusReport {
            model: "m".into(),
            effort: None,
            provider: "127.0.0.1:8080".into(),
            context_window: None,
            approval_mode: crate::protocol::ApprovalMode::Suggest,
            sandbox: crate::protocol::SandboxState::Off,
            session: crate::protocol::SavedState::NotSaved,
            instructions: Vec::new(),
            skills: crate::protocol::Counted {
                total: 0,
                active: 0,
            },
            mcp_servers: crate::protocol::Counted {
                total: 0,
                active: 0,
            },
            usage: crate::protocol::Usage::default(),
            context_tokens: None,
        }))),
        Op::Context => Some(Event::Context(Box::new(crate::protocol::ContextReport {
            instructions: Vec::new(),
            instructions_max_bytes: 32_768,
            skill_roots: Vec::new(),
            mcp_servers: 0,
            mcp_index_bytes: 0,
            system_prompt_bytes: 800,
            tools: 12,
            tools_bytes: 6_000,
            conversation_tokens: 0,
            request_tokens: 1_700,
            window: None,
        }))),
        Op::Approval { .. }
        | Op::Interrupt
        | Op::Invoke(_)
        | Op::Undo
        | Op::Diff
        | Op::UserInput { .. }
        | Op::Shell { .. }
        | Op::ListRewindPoints
        | Op::Rewind { .. }
        | Op::Shutdown => None,
    }
}

fn saved_sessions() -> Vec<SessionListing> {
    let listing = |id: &str, turns, prompt: Option<&str>| SessionListing {
        id: id.into(),
        modified_ms: 1_795_455_301_000,
        turns,
        model: "m0".into(),
        first_prompt: prompt.map(str::to_string),
    };
    vec![
        listing("20261123-173501-a3f9c2", 2, Some("fix the\nparser")),
        listing("20261122-090000-000001", 1, None),
    ]
}

/// A session of four turns, each a prompt, a tool call and an answer.
fn resumed_session(id: &str) -> ResumedSession {
    let mut history = Vec::new();
    for i in 1..=4 {
        history.push(HistoryItem::User {
            text: format!("question {i}"),
        });
        history.push(HistoryItem::ToolCall {
            name: "read_file".into(),
            arguments: format!("{{\"path\":\"f{i}.rs\"}}"),
        });
        history.push(HistoryItem::Assistant {
            text: format!("answer {i}\nwith a second line"),
        });
    }
    ResumedSession {
        id: format!("{id}-full"),
        model: "m0".into(),
        turns: 4,
        loaded_skills: Vec::new(),
        history,
        notes: vec!["skill `old` is no longer installed".into()],
    }
}

fn info() -> SessionInfo {
    SessionInfo {
        model: "m1".into(),
        workdir: PathBuf::from("/p"),
        home: PathBuf::from("/h"),
        approval_mode: ApprovalMode::Suggest,
        commands: SlashCommands::default(),
        context_window: Some(1000),
        startup_warnings: vec!["a skill did not load".into()],
        images: crate::images::ImageIntake::Accept { max_bytes: 1 << 20 },
    }
}

struct Run {
    summary: ReplSummary,
    out: String,
    err: String,
    ops: Vec<Op>,
}

/// A piped REPL over `handle` reading `input`, writing answers to `stdout` (whose
/// reader `reader` watches); the sender delivers Ctrl-Cs.
fn piped_repl<O: Write>(
    handle: AgentHandle,
    input: &'static [u8],
    format: OutputFormat,
    stdout: O,
    reader: crate::sink::ReaderWatch,
) -> (Repl<O, Vec<u8>>, mpsc::UnboundedSender<()>) {
    let renderer = ReplRenderer::new(
        format,
        Activity::Shown,
        MarkdownStyle::Plain,
        stdout,
        Vec::new(),
    );
    let replies = source::spawn_line_reader(io::BufReader::new(input));
    let (interrupt, interrupts) = mpsc::unbounded_channel();
    let repl = Repl::new(
        handle,
        info(),
        ReplInput::Piped,
        renderer,
        None,
        replies,
        interrupts,
        reader,
    );
    (repl, interrupt)
}

async fn run_piped(input: &'static [u8], format: OutputFormat) -> Run {
    let (handle, agent) = fake_agent();
    let (repl, _keep) = piped_repl(handle, input, format, Vec::new(), Default::default());
    let (out, err) = repl.renderer.writers();
    let summary = tokio::time::timeout(std::time::Duration::from_secs(10), repl.run())
        .await
        .unwrap()
        .unwrap();
    let text =
        |w: SharedWriter<Vec<u8>>| w.with(|v| String::from_utf8_lossy(v).into_owned()).unwrap();
    Run {
        summary,
        out: text(out),
        err: text(err),
        ops: agent.await.unwrap(),
    }
}

/// [`run_piped`] in the text format.
async fn run_text(input: &'static [u8]) -> Run {
    run_piped(input, OutputFormat::Text).await
}

fn user_inputs(ops: &[Op]) -> Vec<&str> {
    ops.iter()
        .filter_map(|op| match op {
            Op::UserInput { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn each_line_is_one_turn_and_eof_shuts_down() {
    let run = run_text(b"first\n\n   \nsecond \\\nline\nthird").await;
    assert_eq!(user_inputs(&run.ops), ["first", "second \nline", "third"]);
    assert_eq!(run.ops.last(), Some(&Op::Shutdown));
    // Markdown drops the space that ends a line.
    assert_eq!(run.out, "echo: first\necho: second\nline\necho: third\n");
    assert_contains(&run.err, "warning: a skill did not load");
    assert_eq!(run.summary.failure, None);
    assert_eq!(run.summary.usage.input_tokens, 30);
}

#[tokio::test]
async fn unknown_commands_and_failed_turns_do_not_stop_the_session() {
    let run = run_text(b"/nope\nfail\nafter\n").await;
    assert_eq!(user_inputs(&run.ops), ["fail", "after"]);
    assert_contains(&run.err, "unknown command `/nope`");
    assert_contains(&run.err, "error: 500 from mock");
    assert_eq!(run.out, "echo: after\n");
    assert_eq!(run.summary.failure, Some(ErrorKind::Server));
}

#[tokio::test]
async fn builtins_act_and_answer() {
    let run =
        run_text(b"/model\n/model m2\n/model\n/clear\n/usage\n/help\n/skills\n/exit\nnever\n")
            .await;
    assert!(run.ops.contains(&Op::SetModel { model: "m2".into() }));
    assert!(run.ops.contains(&Op::NewConversation));
    assert!(user_inputs(&run.ops).is_empty(), "/exit stops reading");
    let out = &run.out;
    let m1 = out.find("model: m1").unwrap();
    let m2 = out.rfind("model: m2").unwrap();
    assert!(m1 < m2, "{out}");
    assert!(
        out.contains("new conversation") && out.contains("tokens this session: 0 in"),
        "{out}"
    );
    assert!(
        out.contains("/help") && out.contains("No skills found"),
        "{out}"
    );
}

#[tokio::test]
async fn skills_reload_asks_the_agent_and_reports_changes_and_problems() {
    let run = run_text(b"/skills reload\n/skills again\nafter\n").await;
    assert!(run.ops.contains(&Op::ReloadSkills));
    let all = format!("{}{}", run.out, run.err);
    assert!(
        all.contains("Skills changed: + fresh (now 3 skills)"),
        "{all}"
    );
    assert!(
        all.contains("warning: /s/broken/SKILL.md: no frontmatter"),
        "{all}"
    );
    assert!(all.contains("unknown /skills argument `again`"), "{all}");
    assert_eq!(
        user_inputs(&run.ops),
        ["after"],
        "the reload was waited for"
    );
}

#[tokio::test]
async fn json_format_writes_one_result_per_turn_and_keeps_notices_on_stderr() {
    let run = run_piped(b"a\n/model\nfail\n", OutputFormat::Json).await;
    let values: Vec<serde_json::Value> = run
        .out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(values.len(), 2, "{}", run.out);
    assert_eq!(values[0]["is_error"], false);
    assert_eq!(values[1]["error"]["kind"], "server");
    assert!(run.err.contains("model: m1"));
}

#[tokio::test]
async fn pipe_mode_denies_approval_requests_itself() {
    let run = run_text(b"ask\n").await;
    assert!(
        run.ops.iter().any(|op| matches!(
            op,
            Op::Approval {
                decision: ApprovalDecision::Deny { .. },
                ..
            }
        )),
        "{:?}",
        run.ops
    );
    assert_contains(&run.err, "denied bash");
}

#[tokio::test]
async fn ctrl_c_in_a_pipe_stops_the_turn_and_the_input() {
    let slow_started = Arc::new(Notify::new());
    let (handle, agent) = fake_agent_notifying(slow_started.clone());
    let (repl, int_tx) = piped_repl(
        handle,
        b"slow\nnever\n",
        OutputFormat::Text,
        Vec::new(),
        Default::default(),
    );
    let running = tokio::spawn(repl.run());
    // Interrupt once the turn has started: the fake agent waits for the next op.
    slow_started.notified().await;
    int_tx.send(()).unwrap();
    let summary = tokio::time::timeout(std::time::Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let ops = agent.await.unwrap();
    assert_eq!(summary.failure, Some(ErrorKind::Interrupted));
    assert_eq!(user_inputs(&ops), ["slow"]);
    assert_eq!(ops[1], Op::Interrupt);
    assert_eq!(ops.last(), Some(&Op::Shutdown));
}

#[tokio::test]
async fn a_reader_that_goes_away_stops_the_turn_and_the_input() {
    use crate::sink::tests::ClosingPipe;
    let (handle, agent) = fake_agent();
    // `| head -c 0`: the first byte of the answer finds the pipe closed.
    let stdout = Sink::new(ClosingPipe {
        written: Vec::new(),
        limit: 0,
    });
    let reader = stdout.watch();
    let (repl, _keep) = piped_repl(handle, b"slow\nnever\n", OutputFormat::Text, stdout, reader);
    let summary = tokio::time::timeout(std::time::Duration::from_secs(10), repl.run())
        .await
        .unwrap()
        .unwrap();
    let ops = agent.await.unwrap();
    assert_eq!(summary.reader, ReaderState::Gone);
    assert_eq!(user_inputs(&ops), ["slow"], "no input is read for nobody");
    assert_eq!(ops[1], Op::Interrupt);
    assert_eq!(ops.last(), Some(&Op::Shutdown));
}

#[test]
fn colours_only_on_a_terminal_without_no_color() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    assert_eq!(
        markdown_style(true, &env(&[("TERM", "xterm")])),
        MarkdownStyle::Ansi
    );
    assert_eq!(markdown_style(false, &env(&[])), MarkdownStyle::Plain);
    assert_eq!(
        markdown_style(true, &env(&[("NO_COLOR", "1")])),
        MarkdownStyle::Plain
    );
    assert_eq!(
        markdown_style(true, &env(&[("NO_COLOR", "")])),
        MarkdownStyle::Ansi
    );
    assert_eq!(
        markdown_style(true, &env(&[("TERM", "dumb")])),
        MarkdownStyle::Plain
    );
}

#[tokio::test]
async fn resume_lists_then_resumes_with_a_recap_and_export_says_where() {
    let run = run_text(b"/resume\n/resume 20261123\nafter\n/export json out.json\n/export\n").await;
    assert_eq!(
        run.ops[..3],
        [
            Op::ListSessions,
            Op::Resume {
                id: "20261123".into()
            },
            // A line from a pipe is piped text: its mentions are never read.
            Op::UserInput {
                text: "after".into(),
                origin: crate::protocol::InputOrigin::Piped,
                piped: None,
                images: Vec::new(),
            },
        ]
    );
    let out = &run.out;
    assert!(
        out.contains("saved sessions, newest first:\n  20261123-173501-a3f9c2  2026-11-23 17:35  2 turns  m0  fix the parser\n  20261122-090000-000001  2026-11-23 17:35  1 turn   m0  (no prompt)\nresume one with /resume ID"),
        "{out}"
    );
    // The last six history items, one line each, then the session and its notes.
    let recap = "… 6 earlier\n\
                 you: question 3\n\
                 ↳ read_file {\"path\":\"f3.rs\"}\n\
                 model: answer 3 with a second line\n\
                 you: question 4\n\
                 ↳ read_file {\"path\":\"f4.rs\"}\n\
                 model: answer 4 with a second line\n\
                 resumed session 20261123-full (4 turns, model m0)\n\
                 note: skill `old` is no longer installed\n\
                 echo: after\n";
    assert!(out.contains(recap), "{out}");
    assert!(out.contains("exported to /p/out.json\n"), "{out}");
    assert!(
        out.ends_with("exported to /p/harness9-session-x.md\n"),
        "{out}"
    );
    assert!(run.ops.contains(&Op::Export {
        format: crate::protocol::ExportFormat::Json,
        path: Some(PathBuf::from("out.json")),
    }));
    assert_eq!(run.summary.failure, None);
}

#[tokio::test]
async fn a_resume_that_fails_is_a_warning_and_the_session_goes_on() {
    let run = run_text(b"/resume nope\nafter\n").await;
    assert_contains(
        &run.err,
        "warning: could not resume: no session matches \"nope\"",
    );
    assert_eq!(run.out, "echo: after\n");
    assert_eq!(run.summary.failure, None);
}

#[tokio::test]
async fn stream_json_carries_the_session_events_and_no_recap() {
    let run = run_piped(
        b"/resume\n/resume 20261123\n/export\n",
        OutputFormat::StreamJson,
    )
    .await;
    let types: Vec<String> = run
        .out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["type"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        types,
        [
            "start",
            "warning",
            "session_list",
            "session_resumed",
            "exported"
        ],
        "{}",
        run.out
    );
    for text in ["resumed session", "saved sessions", "exported to", "you: "] {
        assert!(!run.out.contains(text), "{}", run.out);
        assert!(!run.err.contains(text), "{}", run.err);
    }
}

/// A REPL driven with stream-json lines from `input`, over the fake agent, to its end.
async fn run_driven(input: &'static [u8]) -> Run {
    let (handle, agent) = fake_agent();
    let renderer = ReplRenderer::new(
        OutputFormat::StreamJson,
        Activity::Hidden,
        MarkdownStyle::Plain,
        Vec::new(),
        Vec::new(),
    )
    .with_input_schema(Some(INPUT_SCHEMA_VERSION));
    let replies = source::spawn_driver_reader(io::BufReader::new(input));
    let (_keep, interrupts) = mpsc::unbounded_channel();
    let repl = Repl::new(
        handle,
        info(),
        ReplInput::StreamJson,
        renderer,
        None,
        replies,
        interrupts,
        Default::default(),
    );
    let (out, err) = repl.renderer.writers();
    let summary = tokio::time::timeout(std::time::Duration::from_secs(10), repl.run())
        .await
        .unwrap()
        .unwrap();
    let text =
        |w: SharedWriter<Vec<u8>>| w.with(|v| String::from_utf8_lossy(v).into_owned()).unwrap();
    Run {
        summary,
        out: text(out),
        err: text(err),
        ops: agent.await.unwrap(),
    }
}

#[tokio::test]
async fn a_driver_s_messages_run_in_order_and_none_after_exit() {
    let run = run_driven(
        br#"{"type":"user","schema_version":1,"text":"one"}
{"type":"user","schema_version":1,"text":"/nosuch"}
{"type":"user","schema_version":1,"text":"two"}
{"type":"user","schema_version":1,"text":"/exit"}
{"type":"user","schema_version":1,"text":"never"}
"#,
    )
    .await;
    assert_eq!(user_inputs(&run.ops), ["one", "two"]);
    assert_eq!(run.ops.last(), Some(&Op::Shutdown));
    assert_eq!(run.summary.failure, None);
    let start: serde_json::Value = serde_json::from_str(run.out.lines().next().unwrap()).unwrap();
    assert_eq!(start["input_schema_version"], INPUT_SCHEMA_VERSION);
    // The unknown command is an error naming its line.
    let error = run
        .out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "error")
        .unwrap();
    assert_eq!(error["input_line"], 2, "{error}");
}

#[tokio::test]
async fn an_answer_sent_before_its_request_names_nothing_and_never_approves_it() {
    // The answer comes before the message that makes the fake agent ask (lines are
    // handled in order, so it is read before the request exists, whatever the timing):
    // it names nothing pending, and the request is denied when the input ends.
    let run = run_driven(
        br#"{"type":"approval","schema_version":1,"call_id":"c1","decision":"allow_once"}
{"type":"user","schema_version":1,"text":"ask"}
"#,
    )
    .await;
    assert!(run.out.contains(r#""input_line":1"#), "{}", run.out);
    assert!(
        run.out.contains("no approval request with call_id"),
        "{}",
        run.out
    );
    assert!(
        run.ops.iter().any(|op| matches!(
            op,
            Op::Approval {
                decision: ApprovalDecision::Deny { .. },
                ..
            }
        )),
        "{:?}",
        run.ops
    );
    assert!(!run.ops.iter().any(|op| matches!(
        op,
        Op::Approval {
            decision: ApprovalDecision::Approve,
            ..
        }
    )));
}
