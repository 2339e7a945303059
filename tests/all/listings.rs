//! The listings frontends show travel through the contract: `/skills` and `/mcp` are
//! `Op`s answered by events of plain data (at once, even while a turn waits), and the
//! slash commands a frontend routes and completes with arrive in `SessionInfo` and again
//! as `Event::SlashCommands` whenever they change (skills reloaded, an MCP server's
//! prompts learnt). A frontend holding only what these events carried routes exactly
//! what the agent can run.

// Test helpers outside #[test] functions fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use harness9::agent::Approver;
use harness9::input::{Routed, route};
use harness9::protocol::{
    ApprovalDecision, Event, Invocation, McpHealth, McpUse, Op, SkillNote, SlashCommands,
};

use crate::support::{
    MockServer, Session, SessionBuilder, finish, mcp_fixture_table, skill, sse, text, tool_call,
};

/// Asks for `op`'s listing and waits for the event `pick` takes.
async fn ask<T>(s: &mut Session, op: Op, pick: impl Fn(&Event) -> Option<T>) -> T {
    s.op(op);
    let event = s.until(|e| pick(e).is_some()).await;
    pick(&event).unwrap()
}

fn skill_list(e: &Event) -> Option<harness9::protocol::SkillListing> {
    match e {
        Event::SkillList(listing) => Some(listing.clone()),
        _ => None,
    }
}

fn mcp_list(e: &Event) -> Option<Vec<harness9::protocol::McpServerEntry>> {
    match e {
        Event::McpServerList { servers } => Some(servers.clone()),
        _ => None,
    }
}

fn slash_commands(e: &Event) -> Option<SlashCommands> {
    match e {
        Event::SlashCommands(commands) => Some(commands.clone()),
        _ => None,
    }
}

#[tokio::test]
async fn skills_are_listed_with_what_the_session_loaded_even_while_a_turn_waits() {
    let dir = tempfile::tempdir().unwrap();
    skill(
        &dir.path().join("skills"),
        "go-refactor",
        "Use when refactoring Go code",
        "argument-hint: \"[file]\"\n",
        "Run go vet first.\n",
    );
    let server = MockServer::start(vec![
        sse(vec![text("refactored"), finish("stop")]),
        sse(vec![
            tool_call(0, "b1", "bash", r#"{"command":"make"}"#),
            finish("tool_calls"),
        ]),
        sse(vec![text("not run"), finish("stop")]),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path())
        .approver(Approver::Frontend)
        .start();
    let names: Vec<&str> = s
        .info
        .commands
        .skills
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    assert_eq!(names, ["go-refactor"]);

    let before = ask(&mut s, Op::ListSkills, skill_list).await;
    assert_eq!(
        before.skills[0].notes,
        [SkillNote::Root(harness9::protocol::SkillOrigin::Project)]
    );
    assert_eq!(before.skills[0].argument_hint.as_deref(), Some("[file]"));

    s.invoke("go-refactor", "main.go").await;
    // A turn waiting for an approval holds the session state: the listing is answered
    // anyway, and shows the skill the last turn loaded.
    s.send("build it");
    let Event::ApprovalRequest(asked) = s.until(|e| matches!(e, Event::ApprovalRequest(_))).await
    else {
        unreachable!()
    };
    let during = ask(&mut s, Op::ListSkills, skill_list).await;
    assert!(
        during.skills[0].notes.contains(&SkillNote::Loaded),
        "{during:?}"
    );
    let ended = s
        .events
        .iter()
        .filter(|e| matches!(e, Event::TurnComplete { .. }))
        .count();
    assert_eq!(ended, 1, "the listing came while the second turn waited");
    s.op(Op::Approval {
        call_id: asked.call_id,
        decision: ApprovalDecision::Deny { reason: None },
    });
    s.until_complete().await;
}

#[tokio::test]
async fn mcp_servers_are_listed_and_their_learnt_prompts_become_slash_commands() {
    let project = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![sse(vec![text("hi"), finish("stop")])]);
    let mut s = SessionBuilder::new(&server, project.path())
        .config_toml(&mcp_fixture_table("fx", &[], "preload = true"))
        .start();
    // Nothing was learnt before this session: the server is known, its prompts not yet.
    let at_start = &s.info.commands;
    assert_eq!(at_start.mcp_servers.len(), 1);
    assert_eq!(at_start.mcp_servers[0].usable, McpUse::Usable);
    assert!(at_start.mcp_prompts.is_empty());
    assert!(matches!(
        route("/fx:greet Ann", at_start),
        Routed::Invoke(_)
    ));
    assert!(
        matches!(route("/fx:", at_start), Routed::Error(e) if e.contains("none yet")),
        "no prompt is known yet"
    );

    // The preloaded server starts in the background; what it says of itself arrives as
    // new slash commands, and the listing shows it running with its prompts.
    let learnt = s.until(|e| slash_commands(e).is_some()).await;
    let commands = slash_commands(&learnt).unwrap();
    let greet = commands
        .mcp_prompts
        .iter()
        .find(|p| p.server == "fx" && p.name == "greet")
        .expect("greet learnt");
    assert!(
        greet
            .arguments
            .iter()
            .any(|a| a.name == "name" && a.required)
    );
    let Routed::Error(e) = route("/fx:", &commands) else {
        panic!("`/fx:` alone is a usage error")
    };
    assert!(e.contains("/fx:greet"), "{e}");
    let completed = harness9::input::completions("/fx:g", &commands);
    assert_eq!(completed[0].0, "fx:greet");

    let servers = ask(&mut s, Op::ListMcpServers, mcp_list).await;
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].name, "mcp:fx");
    assert_eq!(servers[0].health, McpHealth::Fine);
    assert!(servers[0].state.starts_with("running"), "{servers:?}");
    assert!(
        servers[0]
            .prompts
            .iter()
            .any(|p| p == "/fx:greet <name> [style]"),
        "{servers:?}"
    );
    s.turn("hello").await;
}

#[tokio::test]
async fn a_skill_added_while_the_session_runs_routes_only_after_the_commands_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    skill(&skills, "alpha", "First skill", "", "Alpha body\n");
    let server = MockServer::start(vec![sse(vec![text("ran gamma"), finish("stop")])]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    let at_start = s.info.commands.clone();
    skill(&skills, "gamma", "Brand new", "", "Gamma body\n");
    assert!(matches!(route("/gamma x", &at_start), Routed::Error(_)));

    // The new commands come before the reload's report, so a frontend that waits for
    // the report routes its next line with them.
    s.op(Op::ReloadSkills);
    let commands = s.until(|e| slash_commands(e).is_some()).await;
    let commands = slash_commands(&commands).unwrap();
    s.until(|e| matches!(e, Event::SkillsReloaded { .. })).await;
    let Routed::Invoke(invocation) = route("/gamma x", &commands) else {
        panic!("gamma is a slash command now")
    };
    assert_eq!(
        invocation,
        Invocation::Skill {
            name: "gamma".into(),
            args: "x".into()
        }
    );
    s.op(Op::Invoke(invocation));
    s.until_complete().await;
    // The skill's turn tells the model of the new skill, as a plain message would.
    let sent = server.chat_requests()[0].last_user_text();
    assert!(
        sent.starts_with("[skills changed since the list in the system prompt: + gamma"),
        "{sent}"
    );
    assert!(sent.ends_with("]\n\nGamma body\n\nx"), "{sent}");
    let listing = ask(&mut s, Op::ListSkills, skill_list).await;
    let names: Vec<&str> = listing.skills.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["alpha", "gamma"]);
}
