//! A user's second hour outside the TUI, through the real binary against the scripted
//! server: the command line's prompt (`harness9 "fix the bug"`) as the first turn, the
//! resume hint on exit, `/status`, and the REPL's and `-p`'s rough edges (tool
//! activity without `-v`, answers kept apart, Markdown markers, `/model` names the
//! server does not list, `/resume` not offering the session in use). The TUI's side is
//! in `tui_e2e/habits.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use crate::support::{Dirs, MockServer, answer, spawn_fed, wait_with_deadline, write};

const DEADLINE: Duration = Duration::from_secs(30);

/// What a run printed and how it ended.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// The binary against `server` in `dirs` with `args`, stdin piped from `stdin`.
pub fn piped(server: &MockServer, dirs: &Dirs, args: &[&str], stdin: &str) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.args(["--base-url", &server.url(), "--model", "m", "-C"])
        .arg(dirs.project())
        .args(args)
        .env("OPENAI_API_KEY", "test")
        .env("HARNESS9_HOME", dirs.home())
        .env_remove("OPENAI_BASE_URL")
        .env_remove("HARNESS9_MODEL")
        .env_remove("NO_COLOR");
    let out = wait_with_deadline(spawn_fed(&mut cmd, stdin.as_bytes()), DEADLINE);
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `harness9 "PROMPT"` with stdin piped: the prompt is the first turn, as typed (its
/// `@path` is read), and each piped line a turn after it (a piped `@path` is data).
#[test]
fn the_command_lines_prompt_is_the_first_turn_then_each_piped_line() {
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    let dirs = Dirs::new();
    write(&dirs.project().join("notes.txt"), "NOTES-BODY\n");
    let out = piped(
        &server,
        &dirs,
        &["look at @notes.txt"],
        "and @notes.txt again\n",
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.starts_with("one\n"), "{}", out.stdout);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "{}", out.stderr);
    let first = requests[0].last_user_text();
    assert!(first.starts_with("look at @notes.txt"), "{first}");
    assert!(
        first.contains("NOTES-BODY"),
        "the typed mention is read: {first}"
    );
    let second = requests[1].last_user_text();
    assert!(second.starts_with("and @notes.txt again"), "{second}");
    assert!(
        !second.contains("NOTES-BODY"),
        "a piped line is data: {second}"
    );
}

/// A subcommand's name is the subcommand; after `--` it is a prompt like any other.
#[test]
fn a_subcommands_name_after_double_dash_is_a_prompt() {
    let server = MockServer::start(vec![answer("ok")]);
    let dirs = Dirs::new();
    let out = piped(&server, &dirs, &["--", "skills"], "");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(server.chat_requests()[0].last_user_text(), "skills");
    // `-p` stays one-shot and takes no second prompt.
    let out = piped(&server, &dirs, &["-p", "one", "two"], "");
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(server.chat_requests().len(), 1);
}

/// The ids of the sessions saved under `dirs`' home.
fn saved_ids(dirs: &Dirs) -> Vec<String> {
    let mut ids = Vec::new();
    let Ok(projects) = std::fs::read_dir(dirs.home().join("sessions")) else {
        return ids;
    };
    for project in projects {
        for file in std::fs::read_dir(project.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                ids.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    ids
}

/// After a session with turns, the exact command that goes on with it (on stderr, the
/// answers alone on stdout); a session where nothing was said, or not saved, gets none.
#[test]
fn the_repl_says_how_to_continue_a_session_that_has_turns() {
    let server = MockServer::start(vec![answer("one")]);
    let dirs = Dirs::new();
    let out = piped(&server, &dirs, &[], "hello\n");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let ids = saved_ids(&dirs);
    assert_eq!(ids.len(), 1);
    let project = dirs.project().display().to_string();
    let hint = format!(
        "To continue this session, run harness9 -C {project} --resume {}",
        ids[0]
    );
    assert_eq!(
        out.stderr.lines().last(),
        Some(hint.as_str()),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("To continue"), "{}", out.stdout);

    let empty = Dirs::new();
    let out = piped(&server, &empty, &[], "");
    assert!(!out.stderr.contains("To continue"), "{}", out.stderr);
    let out = piped(&server, &empty, &["--no-session"], "hello\n");
    assert!(!out.stderr.contains("To continue"), "{}", out.stderr);
}

/// `/status` tells the session's state: the model, the provider's host, the window,
/// approvals, sandbox, the saved session and its file, the instruction files, skills,
/// MCP servers and tokens; `/help` lists it.
#[test]
fn status_tells_the_sessions_state() {
    let server = MockServer::start(vec![answer("one")]);
    let dirs = Dirs::new();
    write(&dirs.project().join("AGENTS.md"), "Use tabs.\n");
    let out = piped(
        &server,
        &dirs,
        &["--approval-mode", "auto-edit", "--sandbox", "off"],
        "hello\n/status\n/help\n",
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let ids = saved_ids(&dirs);
    assert_eq!(ids.len(), 1);
    let host = server.url();
    let host = host
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let agents = dirs.project().join("AGENTS.md").display().to_string();
    let line = |label: &str| {
        out.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line in {}", out.stdout))
            .to_string()
    };
    assert!(line("model ").ends_with(" m"), "{}", out.stdout);
    assert!(line("provider ").ends_with(&host), "{}", out.stdout);
    assert!(
        line("context window ").contains("unknown"),
        "{}",
        out.stdout
    );
    assert!(line("approvals ").contains("auto-edit"), "{}", out.stdout);
    assert!(line("sandbox ").contains("off"), "{}", out.stdout);
    let session = line("session ");
    assert!(
        session.contains(&ids[0]) && session.contains(".jsonl"),
        "{session}"
    );
    assert!(line("instructions ").ends_with(&agents), "{}", out.stdout);
    assert!(line("skills ").contains("0 found"), "{}", out.stdout);
    assert!(
        line("MCP servers ").contains("0 configured"),
        "{}",
        out.stdout
    );
    assert!(line("tokens ").contains(" in, "), "{}", out.stdout);
    assert!(line("/status ").contains("provider"), "/help lists it");
}

/// `/model NAME` takes only a name the endpoint lists, when it lists any; an endpoint
/// that lists nothing is taken at its word.
#[test]
fn model_refuses_a_name_the_endpoint_does_not_list() {
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    server.route(
        "/v1/models",
        serde_json::json!({"data": [{"id": "m"}, {"id": "other"}]}),
    );
    let dirs = Dirs::new();
    let out = piped(
        &server,
        &dirs,
        &[],
        "/model nope\nhello\n/model other\nagain\n",
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "the endpoint lists no model `nope`; the model is unchanged (it lists: m, other)"
        ),
        "{}",
        out.stderr
    );
    let models: Vec<String> = server
        .chat_requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["m", "other"]);

    let unlisted = MockServer::start(vec![answer("one")]);
    let out = piped(&unlisted, &Dirs::new(), &[], "/model anything\nhello\n");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(unlisted.chat_requests()[0].body["model"], "anything");
}

/// `skills list` reports the index budget a session here really uses: with no model
/// configured, the session takes the one the endpoint lists (its window unknown: the
/// default budget), and so does the listing.
#[test]
fn skills_list_reports_the_budget_the_session_uses() {
    let server = MockServer::start(vec![]);
    server.route(
        "/v1/models",
        serde_json::json!({"data": [{"id": "local-model"}]}),
    );
    let dirs = Dirs::new();
    crate::support::project_skill(dirs.project(), "demo", "A demo skill", "Do it.\n");
    let mut cmd = dirs.command(&["--base-url", &server.url(), "skills", "list"]);
    let listed = crate::support::output_of(&mut cmd);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let mut session = Command::new(env!("CARGO_BIN_EXE_harness9"));
    session
        .args(["--base-url", &server.url(), "-C"])
        .arg(dirs.project())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HARNESS9_HOME", dirs.home())
        .env("HOME", dirs.home());
    let out = wait_with_deadline(spawn_fed(&mut session, b"/skills\n"), DEADLINE);
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    let budget_of = |text: &str, after: &str| {
        let line = text
            .lines()
            .find(|l| l.contains(after))
            .unwrap_or_else(|| panic!("{text}"));
        let at = line.find(" of ").unwrap() + 4;
        line[at..].split(' ').next().unwrap().to_string()
    };
    assert_eq!(
        budget_of(&listed, "Index:"),
        budget_of(&shown, "index:"),
        "skills list:\n{listed}\n/skills:\n{shown}"
    );
}

/// `--no-tui` on a terminal: one line per tool call on stderr without `-v` (nothing
/// else there shows what runs); the answer after it.
#[test]
fn the_terminal_repl_shows_one_line_per_tool_call_without_verbose() {
    let server = MockServer::start(vec![
        crate::support::tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#),
        answer("Read it."),
    ]);
    let dirs = Dirs::new();
    write(&dirs.project().join("notes.txt"), "NOTES\n");
    let cmd = crate::support::harness9_pty_command(
        &server.url(),
        dirs.home(),
        dirs.project(),
        &["--no-tui"],
    );
    let mut pty = crate::support::Terminal::spawn(cmd, (30, 100), 0, |_, _, _| {});
    pty.wait_for_text("/help for commands");
    pty.send("read the notes\r");
    pty.wait_for_text("Read it.");
    let screen = pty.contents();
    let calls: Vec<&str> = screen.lines().filter(|l| l.starts_with("→ ")).collect();
    assert_eq!(calls.len(), 1, "{screen}");
    assert!(calls[0].starts_with("→ read_file"), "{screen}");
    assert!(!screen.contains("✓"), "results stay for -v:\n{screen}");
    pty.wait_for_prompt_line(">");
    pty.send("\x04");
    pty.wait_exit();
}

/// `-p` shows the answer as pipe mode does (the same renderer: markers removed, code
/// indented); `--raw` keeps the model's Markdown in both.
#[test]
fn print_mode_renders_markdown_as_pipe_mode_does_and_raw_keeps_it() {
    const MARKDOWN: &str = "# Title\n\nFirst **bold** and `code`.\n\n```\nlet x = 1;\n```\n";
    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    let run = |args: &[&str], stdin: &str| {
        server.push(answer(MARKDOWN));
        let out = piped(&server, &dirs, args, stdin);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        out.stdout
    };
    let printed = run(&["-p", "hi"], "");
    let piped_out = run(&[], "hi\n");
    assert_eq!(printed, piped_out);
    assert!(
        !printed.contains("**") && !printed.contains("```"),
        "{printed}"
    );
    assert!(printed.contains("First bold and code."), "{printed}");
    let raw_printed = run(&["-p", "hi", "--raw"], "");
    let raw_piped = run(&["--raw"], "hi\n");
    assert_eq!(raw_printed, MARKDOWN);
    assert_eq!(raw_piped, MARKDOWN);
}

/// `/resume` offers the project's other sessions, never the one in use.
#[test]
fn resume_does_not_offer_the_session_in_use() {
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    let dirs = Dirs::new();
    let out = piped(&server, &dirs, &[], "first\n");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let earlier = saved_ids(&dirs);
    assert_eq!(earlier.len(), 1);
    let out = piped(&server, &dirs, &[], "second\n/resume\n");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let now: Vec<String> = saved_ids(&dirs)
        .into_iter()
        .filter(|id| *id != earlier[0])
        .collect();
    assert_eq!(now.len(), 1);
    assert!(out.stdout.contains(&earlier[0]), "{}", out.stdout);
    assert!(
        !out.stdout.contains(&now[0]),
        "the session in use is offered:\n{}",
        out.stdout
    );
}

/// `sessions list` shows what was typed (`/skill args`), not the skill's expanded body.
#[test]
fn sessions_list_shows_the_slash_command_as_typed() {
    let server = MockServer::start(vec![answer("reviewed")]);
    let dirs = Dirs::new();
    crate::support::project_skill(
        dirs.project(),
        "review",
        "Review a file",
        "EXPANDED-BODY: review the code carefully.\n",
    );
    let out = piped(&server, &dirs, &[], "/review main.go\n");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        server.chat_requests()[0]
            .last_user_text()
            .contains("EXPANDED-BODY")
    );
    let listed = crate::support::output_of(&mut dirs.command(&["sessions", "list"]));
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(listed.contains("/review main.go"), "{listed}");
    assert!(!listed.contains("EXPANDED-BODY"), "{listed}");
    let json = crate::support::output_of(&mut dirs.command(&["sessions", "list", "--json"]));
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json[0]["first_prompt"], "/review main.go");
}

/// A subcommand's `--help` lists the setting flags that mean something there only; the
/// others still parse (a script's flags never break it).
#[test]
fn a_subcommands_help_lists_only_its_own_flags() {
    let dirs = Dirs::new();
    let help = |args: &[&str]| {
        let out = dirs.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for args in [
        &["sessions", "list", "--help"][..],
        &["artifacts", "get", "-h"],
        &["help", "permissions", "list"],
    ] {
        let text = help(args);
        assert!(text.contains("--cwd"), "{args:?}:\n{text}");
        for flag in [
            "--approval-mode",
            "--sandbox",
            "--model",
            "--max-turns",
            "--verbose",
        ] {
            assert!(!text.contains(flag), "{args:?} lists {flag}:\n{text}");
        }
    }
    let skills = help(&["skills", "list", "--help"]);
    assert!(
        skills.contains("--skills-dir") && !skills.contains("--sandbox"),
        "{skills}"
    );
    let out = dirs.run(&["sessions", "list", "--approval-mode", "full-auto"]);
    assert_eq!(out.status.code(), Some(0));
}
