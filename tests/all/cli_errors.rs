//! One convention for every subcommand's failures, checked through the real binary on a
//! table of cases: what was typed names nothing (not found) or cannot be used (usage)
//! → exit 2, nothing on stdout, one `harness9: …` line on stderr; a check that found
//! problems (failed) → exit 1, the findings on stdout, the failure on stderr; an invalid
//! config.toml → exit 2 for every subcommand; a malformed command line → clap's message
//! on stderr, exit 2. Nothing but warnings comes before the failure on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use crate::support::{Dirs, stderr_text, stdout_text, write};

/// What a case expects on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stdout {
    /// Nothing: a failure is never written there.
    Empty,
    /// The command's findings (a report that explains the failure).
    Findings,
}

/// How the last line of stderr is checked.
#[derive(Debug, Clone, Copy)]
enum Message {
    /// Exactly this line.
    Exact(&'static str),
    /// A line starting with this.
    Starts(&'static str),
}

/// One row of the table.
struct Case {
    /// The arguments after `harness9 -C WORK`; `{work}` is replaced with the project.
    args: &'static [&'static str],
    /// What the project and home hold first.
    setup: fn(&Dirs),
    /// The exit code.
    code: i32,
    stdout: Stdout,
    message: Message,
}

fn nothing(_: &Dirs) {}

/// Writes an empty session `id` of the project, as a run would have left it.
fn session_named(env: &Dirs, id: &str) {
    let project = harness9::sessions::project_of(env.project());
    harness9::sessions::SessionStore::new(env.home())
        .create(&harness9::sessions::Header {
            schema: harness9::sessions::record::SCHEMA_VERSION,
            id: harness9::sessions::SessionId::parse(id).unwrap(),
            created_ms: 1_795_455_301_000,
            cwd: project.clone(),
            project,
            model: "m".into(),
            endpoint_host: "127.0.0.1".into(),
            version: "0.1.0".into(),
        })
        .unwrap();
}

fn a_session(env: &Dirs) {
    session_named(env, "20261123-173501-aaaaaa");
}

fn invalid_skills(env: &Dirs) {
    write(
        &env.project().join("skills/spaces/SKILL.md"),
        "---\nname: Bad Name\ndescription: d\n---\nbody\n",
    );
}

fn broken_mcp_json(env: &Dirs) {
    write(&env.project().join(".mcp.json"), "{not json");
}

/// What was typed names nothing or cannot be used: exit 2, nothing on stdout.
const fn refused(args: &'static [&'static str], setup: fn(&Dirs), message: Message) -> Case {
    Case {
        args,
        setup,
        code: 2,
        stdout: Stdout::Empty,
        message,
    }
}

/// A check that found problems: exit 1, its findings on stdout.
const fn findings(args: &'static [&'static str], setup: fn(&Dirs), message: Message) -> Case {
    Case {
        args,
        setup,
        code: 1,
        stdout: Stdout::Findings,
        message,
    }
}

/// What every subcommand says of a session id that matches none.
const NO_SUCH_SESSION: Message =
    Message::Exact("harness9: no session matches \"nosuch\" (harness9 sessions list shows them)");

const NOT_FOUND: &[Case] = &[
    refused(
        &["skills", "show", "nosuch"],
        nothing,
        Message::Exact("harness9: no skill named `nosuch` (no skills found)"),
    ),
    refused(
        &["skills", "validate", "{work}/nosuch"],
        nothing,
        Message::Starts("harness9: cannot validate /"),
    ),
    refused(&["sessions", "show", "nosuch"], a_session, NO_SUCH_SESSION),
    refused(
        &["sessions", "export", "nosuch"],
        a_session,
        NO_SUCH_SESSION,
    ),
    refused(
        &["artifacts", "list"],
        nothing,
        Message::Starts("harness9: no saved session in /"),
    ),
    refused(
        &["artifacts", "get", "chart.png", "--session", "nosuch"],
        a_session,
        NO_SUCH_SESSION,
    ),
    refused(
        &["artifacts", "get", "nosuch.txt"],
        a_session,
        Message::Starts("harness9: no artifact nosuch.txt in this session"),
    ),
    refused(
        &["mcp", "tools", "nosuch"],
        nothing,
        Message::Exact("harness9: no MCP server named `nosuch` is configured (servers: none)"),
    ),
    refused(
        &["mcp", "remove", "nosuch"],
        nothing,
        Message::Exact(
            "harness9: no MCP server named `nosuch` is defined in config.toml or \
             .harness9/config.toml (servers: none)",
        ),
    ),
];

const USAGE: &[Case] = &[
    refused(
        &["sessions", "show", "../x"],
        a_session,
        Message::Starts("harness9: \"../x\" is not a session id"),
    ),
    // The candidates follow on lines of their own.
    refused(
        &["sessions", "show", "2026"],
        two_sessions,
        Message::Starts("  20261123-180000-dddddd"),
    ),
    refused(
        &["artifacts", "get", "chart.png", "--session", "../x"],
        a_session,
        Message::Starts("harness9: \"../x\" is not a session id"),
    ),
    refused(
        &["artifacts", "list", "--session", "2026"],
        two_sessions,
        Message::Starts("  20261123-180000-dddddd"),
    ),
    refused(
        &["mcp", "add", "bad__name", "--", "x"],
        nothing,
        Message::Starts("harness9: MCP server `bad__name`: "),
    ),
    refused(
        &["mcp", "add", "nothing-to-run"],
        nothing,
        Message::Starts("harness9: MCP server `nothing-to-run`: say what to run"),
    ),
];

fn two_sessions(env: &Dirs) {
    a_session(env);
    session_named(env, "20261123-180000-dddddd");
}

const FAILED: &[Case] = &[
    findings(
        &["skills", "validate", "{work}/skills"],
        invalid_skills,
        Message::Exact("harness9: validation found errors (1 failed of 1 skill(s) checked)"),
    ),
    findings(
        &["skills", "show", "Bad Name"],
        invalid_skills,
        Message::Starts("harness9: skill `Bad Name` is invalid: `name`"),
    ),
    findings(
        &["mcp", "list"],
        broken_mcp_json,
        Message::Exact(
            "harness9: the list is incomplete: 1 definition or file could not be loaded \
             (see the warnings)",
        ),
    ),
];

/// The habits Codex and Claude Code users bring: each answered with the harness9 way in
/// one line, exit 2, before anything is read (no endpoint is configured here). Nothing
/// that would run more without asking is accepted.
const PEER_HABITS: &[Case] = &[
    refused(
        &["--yolo"],
        nothing,
        Message::Starts(
            "harness9: --yolo: harness9 has no switch that skips every approval: \
             --approval-mode full-auto runs edits and commands unasked",
        ),
    ),
    refused(
        &["--dangerously-skip-permissions", "fix it"],
        nothing,
        Message::Starts("harness9: --dangerously-skip-permissions: harness9 has no switch"),
    ),
    refused(
        &["--dangerously-bypass-approvals-and-sandbox"],
        nothing,
        Message::Starts("harness9: --dangerously-bypass-approvals-and-sandbox: harness9 has no"),
    ),
    refused(
        &["-p", "hi", "--full-auto"],
        nothing,
        Message::Starts(
            "harness9: --full-auto: Codex's --full-auto is --approval-mode full-auto here",
        ),
    ),
    refused(
        &["-a", "never"],
        nothing,
        Message::Starts("harness9: -a: harness9 chooses what runs unasked with --approval-mode"),
    ),
    refused(
        &["--ask-for-approval=never"],
        nothing,
        Message::Starts("harness9: --ask-for-approval: harness9 chooses what runs unasked"),
    ),
    refused(
        &["--permission-mode", "acceptEdits"],
        nothing,
        Message::Starts("harness9: --permission-mode: harness9 chooses what runs unasked"),
    ),
    refused(
        &["--allowedTools", "Bash"],
        nothing,
        Message::Starts("harness9: --allowedTools: tool permissions are rules in"),
    ),
    refused(
        &["--add-dir", "/tmp"],
        nothing,
        Message::Starts("harness9: --add-dir: harness9 works in one project (-C DIR)"),
    ),
    refused(
        &["-p", "hi", "--json"],
        nothing,
        Message::Starts("harness9: --json: print mode writes JSON with --output-format json"),
    ),
    refused(
        &["--system-prompt", "be brief"],
        nothing,
        Message::Starts("harness9: --system-prompt: project instructions go in AGENTS.md"),
    ),
    refused(
        &["exec", "fix the bug"],
        nothing,
        Message::Exact(
            "harness9: `exec` is Codex's; harness9 runs one prompt and exits with -p: \
             harness9 -p 'fix the bug'",
        ),
    ),
    refused(
        &["exec", "--full-auto", "fix it"],
        nothing,
        Message::Exact(
            "harness9: `exec` is Codex's; harness9 runs one prompt and exits with -p: \
             harness9 -p \"PROMPT\"",
        ),
    ),
    refused(
        &["resume"],
        nothing,
        Message::Exact(
            "harness9: `resume` is Codex's; to go on with a saved session: \
             harness9 --resume (pick one) or harness9 -c (the latest)",
        ),
    ),
    refused(
        &["resume", "--last"],
        nothing,
        Message::Exact("harness9: `resume` is Codex's; to go on with a saved session: harness9 -c"),
    ),
    refused(
        &["resume", "20261123-173501-aaaaaa"],
        nothing,
        Message::Exact(
            "harness9: `resume` is Codex's; to go on with a saved session: \
             harness9 --resume 20261123-173501-aaaaaa",
        ),
    ),
    refused(
        &["login"],
        nothing,
        Message::Starts("harness9: harness9 has no sign-in: it sends the key in OPENAI_API_KEY"),
    ),
    refused(
        &["fix", "the", "bug"],
        nothing,
        Message::Starts(
            "harness9: unexpected word the: a prompt of several words goes in quotes, \
             harness9 \"fix the bug\"",
        ),
    ),
];

fn run(env: &Dirs, args: &[&str]) -> Output {
    let work = env.project().display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("{work}", &work)).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run(&args)
}

/// Runs every case and lists each way one broke the convention.
fn check(cases: &[Case]) {
    let mut broken = Vec::new();
    for case in cases {
        let env = Dirs::new();
        (case.setup)(&env);
        let out = run(&env, case.args);
        let (stdout, stderr) = (stdout_text(&out), stderr_text(&out));
        let mut wrong = Vec::new();
        if out.status.code() != Some(case.code) {
            wrong.push(format!("exit {:?}, not {}", out.status.code(), case.code));
        }
        match case.stdout {
            Stdout::Empty if !stdout.is_empty() => wrong.push("stdout is not empty".into()),
            Stdout::Findings if stdout.is_empty() => wrong.push("stdout is empty".into()),
            _ => {}
        }
        let last = stderr.lines().last().unwrap_or_default();
        let matches = match case.message {
            Message::Exact(line) => last == line,
            Message::Starts(start) => last.starts_with(start),
        };
        if !matches || !stderr.ends_with('\n') {
            wrong.push(format!("stderr ends {last:?}, not {:?}", case.message));
        }
        // Before the failure: only warnings (or an error's own continuation lines).
        let errors = stderr
            .lines()
            .filter(|l| l.starts_with("harness9: ") && !l.starts_with("harness9: warning: "))
            .count();
        if errors != 1 {
            wrong.push(format!("{errors} error lines on stderr"));
        }
        if !wrong.is_empty() {
            broken.push(format!(
                "{:?}: {}\n  stdout: {stdout:?}\n  stderr: {stderr:?}",
                case.args,
                wrong.join("; ")
            ));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn what_names_nothing_is_not_found_exit_2_on_stderr_for_every_subcommand() {
    check(NOT_FOUND);
}

#[test]
fn what_cannot_be_used_is_a_usage_error_exit_2_on_stderr() {
    check(USAGE);
}

#[test]
fn the_peers_flags_and_subcommands_point_the_harness9_way() {
    check(PEER_HABITS);
}

/// The safe spellings of the peers are plain aliases: `-m`, `-r`, `--cd`.
#[test]
fn the_peers_safe_spellings_are_aliases() {
    let env = Dirs::new();
    a_session(&env);
    let work = env.project().display().to_string();
    // `--cd DIR` is `-C DIR`; `-m` is `--model` (a subcommand takes both).
    let out = env.run(&["skills", "list", "--cd", &work, "-m", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_text(&out));
    // `-r` is `--resume`: without a way to pick (stdin is not a terminal), the
    // project's sessions are listed, as `--resume` does.
    let out = env.run(&["-r", "--base-url", "http://127.0.0.1:9/v1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_text(&out));
    assert!(
        stdout_text(&out).contains("20261123-173501-aaaaaa"),
        "{}",
        stdout_text(&out)
    );
}

#[test]
fn a_check_that_finds_problems_exits_1_with_its_findings_on_stdout() {
    check(FAILED);
}

/// An invalid config.toml is the user's to fix: exit 2, one error naming the file, for
/// every subcommand alike.
#[test]
fn an_invalid_config_stops_every_subcommand_the_same_way() {
    let mut broken = Vec::new();
    for args in [
        &["skills", "list"][..],
        &["sessions", "list"],
        &["artifacts", "list"],
        &["permissions", "list"],
        &["mcp", "list"],
    ] {
        let env = Dirs::new();
        write(&env.home().join("config.toml"), "model = [unclosed\n");
        let out = env.run(args);
        let stderr = stderr_text(&out);
        let config = env.home().join("config.toml").display().to_string();
        if out.status.code() != Some(2)
            || !out.stdout.is_empty()
            || stderr.matches("harness9: ").count() != 1
            || !stderr.starts_with(&format!("harness9: {config} is invalid: "))
            || !stderr.contains(&config)
        {
            broken.push(format!("{args:?}: {:?} {stderr:?}", out.status.code()));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// A command line clap cannot parse: its message on stderr, exit 2, for every subcommand.
#[test]
fn a_malformed_command_line_is_a_usage_error_for_every_subcommand() {
    let env = Dirs::new();
    let mut broken = Vec::new();
    for args in [
        &["skills", "nosuch"][..],
        &["skills", "show"],
        &["sessions", "nosuch"],
        &["sessions", "prune", "--older-than", "soon"],
        &["artifacts", "nosuch"],
        &["artifacts", "get"],
        &["permissions", "nosuch"],
        &["mcp", "nosuch"],
        &["mcp", "add", "x", "--env", "no-equals"],
    ] {
        let out = env.run(args);
        let stderr = stderr_text(&out);
        if out.status.code() != Some(2) || !out.stdout.is_empty() || !stderr.starts_with("error: ")
        {
            broken.push(format!("{args:?}: {:?} {stderr:?}", out.status.code()));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// Terminal controls in what was typed (a name a script took from a repository) are
/// quoted in the failure, never sent raw: every subcommand's error goes through one
/// writer that shows them (`^[`).
#[test]
fn controls_in_what_was_typed_never_reach_the_terminal_raw() {
    const HOSTILE: &str = "x\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{9b}31m";
    let env = Dirs::new();
    a_session(&env);
    let path = env.project().join(HOSTILE).display().to_string();
    let mut broken = Vec::new();
    for args in [
        &["skills", "show", HOSTILE][..],
        &["skills", "validate", &path],
        &["sessions", "show", HOSTILE],
        &["sessions", "export", HOSTILE],
        &["artifacts", "get", HOSTILE],
        &["artifacts", "list", "--session", HOSTILE],
        &["mcp", "tools", HOSTILE],
        &["mcp", "remove", HOSTILE],
        &["mcp", "add", HOSTILE, "--", "x"],
    ] {
        let out = env.run(args);
        let bytes = &out.stderr;
        let raw = bytes.contains(&0x1b)
            || bytes.contains(&0x07)
            || bytes
                .windows(2)
                .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1]));
        let stderr = stderr_text(&out);
        if raw || !stderr.contains("PWNED") || out.status.code() != Some(2) {
            broken.push(format!("{args:?}: {:?} {stderr:?}", out.status.code()));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
