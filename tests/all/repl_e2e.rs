//! The line REPL end to end: the real binary with piped stdin against the scripted
//! server (several turns, a skill slash command, an unknown command, a provider failure
//! and its exit code, json and stream-json output, resuming a saved session with
//! `/resume`), and in a pseudo-terminal (history, Tab completion, Ctrl-C cancelling a
//! running turn, Ctrl-D).

// Test helpers outside #[test] functions fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::{
    Dirs, MockServer, Terminal, answer, assert_exit, bash_reply, finish, first_line_then_close,
    harness9_pty_command, http_error, json_lines, project_skill, skill, spawn_fed, sse, text,
    tool_call, tool_reply, wait_with_deadline,
};
use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(30);

/// The approval question on the prompt line.
const ALLOW: &str = "allow? [y]es once / [n]o / [a]lways this session / [p]roject:";

/// The line REPL's runs in the shared [`Dirs`] (methods of this file only).
impl Dirs {
    /// Asserts that the input history in the home holds `expected` (comment lines aside).
    fn assert_history(&self, expected: &[&str]) {
        let history = std::fs::read_to_string(self.home().join("history")).unwrap();
        let entries: Vec<&str> = history.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(entries, expected, "history file:\n{history}");
    }

    /// [`Dirs::pipe`], and asserts that the binary exited with 0 (showing its stderr).
    fn pipe_ok(&self, server: &MockServer, extra: &[&str], stdin: &str) -> Output {
        let out = self.pipe(server, extra, stdin);
        assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
        out
    }

    /// Runs the binary here with `stdin` piped in, against `server`, and waits (with a
    /// deadline) for it to exit.
    fn pipe(&self, server: &MockServer, extra: &[&str], stdin: &str) -> Output {
        let child = spawn_fed(&mut harness9(server, self, extra), stdin.as_bytes());
        let out = wait_with_deadline(child, DEADLINE);
        Output {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The binary in pipe mode against `server`, in `dirs`, with `extra` arguments.
fn harness9(server: &MockServer, dirs: &Dirs, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.args(["--base-url", &server.url(), "--model", "m", "-C"])
        .arg(dirs.project())
        .args(extra)
        .env("OPENAI_API_KEY", "test")
        .env("HARNESS9_HOME", dirs.home())
        .env_remove("OPENAI_BASE_URL")
        .env_remove("HARNESS9_MODEL")
        .env_remove("NO_COLOR");
    cmd
}

#[test]
fn a_retried_answer_leaves_only_the_final_attempt_on_stdout() {
    let cut = sse(vec![text("PARTIAL-CUT\n"), text("more"), finish("stop")]).cut_after(2);
    let server = MockServer::start(vec![cut, answer("FULL ANSWER")]);
    let dirs = Dirs::new();
    let out = dirs.pipe_ok(&server, &[], "question\n");
    assert_eq!(out.stdout, "FULL ANSWER\n", "stderr: {}", out.stderr);
    assert_eq!(
        server.chat_requests().len(),
        2,
        "the cut attempt was retried"
    );
}

#[test]
fn several_turns_in_one_run_share_the_conversation() {
    let server = MockServer::start(vec![answer("one"), answer("two"), answer("three")]);
    let dirs = Dirs::new();
    let out = dirs.pipe_ok(&server, &[], "first\n\nsecond\nthird\n");
    // Successive answers are kept apart by one blank line.
    assert_eq!(out.stdout, "one\n\ntwo\n\nthree\n");
    assert_eq!(server.chat_requests()[0].last_user_text(), "first");
    server.assert_conversation(
        3,
        &[
            ("user", "first"),
            ("assistant", "one"),
            ("user", "second"),
            ("assistant", "two"),
            ("user", "third"),
        ],
    );
}

/// The ids of the sessions saved under `home`.
fn saved_ids(home: &Path) -> Vec<String> {
    let mut ids = Vec::new();
    let Ok(projects) = std::fs::read_dir(home.join("sessions")) else {
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

#[test]
fn resume_by_id_prefix_goes_on_with_the_saved_conversation() {
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    let dirs = Dirs::new();
    dirs.pipe_ok(&server, &[], "first question\n");
    let ids = saved_ids(dirs.home());
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = &ids[0];
    let prefix = &id[..id.len() - 2];
    let out = dirs.pipe_ok(
        &server,
        &[],
        &format!("/resume {prefix}\nsecond question\n"),
    );
    assert_eq!(
        out.stdout,
        format!("you: first question\nmodel: one\nresumed session {id} (1 turn, model m)\n\ntwo\n")
    );
    server.assert_conversation(
        2,
        &[
            ("user", "first question"),
            ("assistant", "one"),
            ("user", "second question"),
        ],
    );
}

#[test]
fn a_line_ending_in_backslash_continues_on_the_next() {
    let server = MockServer::start(vec![answer("ok")]);
    let dirs = Dirs::new();
    dirs.pipe_ok(&server, &[], "line one \\\nline two\n");
    assert_eq!(
        server.chat_requests()[0].last_user_text(),
        "line one \nline two"
    );
}

#[test]
fn a_skill_slash_command_sends_the_body_and_the_arguments() {
    let server = MockServer::start(vec![answer("reviewed"), answer("again")]);
    let dirs = Dirs::new();
    let skills = tempfile::tempdir().unwrap();
    skill(
        skills.path(),
        "review",
        "Review a file for bugs",
        "",
        "Review the code carefully.\n",
    );
    let out = dirs.pipe_ok(
        &server,
        &["--skills-dir", skills.path().to_str().unwrap()],
        "/review main.go\n/skill review lib.rs\n",
    );
    assert_eq!(out.stdout, "reviewed\n\nagain\n");
    let requests = server.chat_requests();
    assert_eq!(
        requests[0].last_user_text(),
        "Review the code carefully.\n\nmain.go"
    );
    assert_eq!(
        requests[1].last_user_text(),
        "Review the code carefully.\n\nlib.rs"
    );
}

#[test]
fn an_unknown_command_is_reported_and_the_next_line_answered() {
    let server = MockServer::start(vec![answer("hello back")]);
    let dirs = Dirs::new();
    let out = dirs.pipe_ok(&server, &[], "/nosuchthing now\nhello\n");
    assert!(
        out.stderr.contains("unknown command `/nosuchthing`"),
        "stderr: {}",
        out.stderr
    );
    assert_eq!(out.stdout, "hello back\n");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].last_user_text(), "hello");
}

#[test]
fn a_provider_failure_is_reported_the_session_goes_on_and_the_exit_code_says_so() {
    let server = MockServer::start(vec![
        answer("first answer"),
        http_error(500),
        answer("third answer"),
    ]);
    let dirs = Dirs::with_config("max_retries = 0\n");
    let out = dirs.pipe(&server, &[], "one\ntwo\nthree\n");
    assert_eq!(
        out.stdout, "first answer\n\nthird answer\n",
        "stderr: {}",
        out.stderr
    );
    assert!(out.stderr.contains("error:"), "stderr: {}", out.stderr);
    assert_eq!(server.chat_requests().len(), 3);
    // A provider that keeps failing (5xx after retries) exits 4 (docs/HEADLESS.md).
    assert_eq!(out.code, Some(4), "stderr: {}", out.stderr);
}

#[test]
fn json_output_is_one_result_object_per_turn() {
    let server = MockServer::start(vec![answer("alpha"), answer("beta")]);
    let dirs = Dirs::new();
    let out = dirs.pipe_ok(&server, &["--output-format", "json"], "a\n/model\nb\n");
    let values = json_lines(&out.stdout);
    assert_eq!(values.len(), 2, "stdout: {}", out.stdout);
    for (v, expected) in values.iter().zip(["alpha", "beta"]) {
        assert_eq!(v["type"], "result");
        assert_eq!(v["schema_version"], 3);
        assert_eq!(v["result"], expected);
        assert_eq!(v["is_error"], false);
        assert_eq!(v["model"], "m");
        assert!(v["usage"]["input_tokens"].is_u64());
    }
    assert!(
        out.stderr.contains("model: m"),
        "built-in output stays off stdout: {}",
        out.stderr
    );
}

#[test]
fn stream_json_output_is_one_event_per_line_in_order() {
    let server = MockServer::start(vec![
        sse(vec![text("Hel"), text("lo"), finish("stop")]),
        answer("again"),
    ]);
    let dirs = Dirs::new();
    let out = dirs.pipe_ok(
        &server,
        &["--output-format", "stream-json"],
        "hi\n/nope\nmore\n",
    );
    let values = json_lines(&out.stdout);
    let types: Vec<&str> = values
        .iter()
        .map(|v| v["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(types[0], "start", "{types:?}");
    assert_eq!(values[0]["schema_version"], 3);
    let deltas: String = values
        .iter()
        .filter(|v| v["type"] == "text_delta")
        .map(|v| v["text"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(deltas, "Helloagain");
    let results: Vec<&Value> = values.iter().filter(|v| v["type"] == "result").collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["result"], "Hello");
    assert_eq!(results[1]["result"], "again");
    // Each turn: turn_started, then its deltas, then turn_complete and its result.
    let first = |t: &str| types.iter().position(|x| *x == t).unwrap();
    assert!(first("turn_started") < first("text_delta"));
    assert!(first("text_delta") < first("turn_complete"));
    assert!(first("turn_complete") < first("result"));
    // The unknown command is an error line in the stream, between the two turns.
    let error = types.iter().position(|t| *t == "error").unwrap();
    let results_at: Vec<usize> = types
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == "result")
        .map(|(i, _)| i)
        .collect();
    assert!(results_at[0] < error && error < results_at[1], "{types:?}");
    // Consumers read the last line: the last result, carrying the session's total.
    assert_eq!(types.last(), Some(&"result"), "{types:?}");
    let session = &values.last().unwrap()["session_usage"];
    assert!(session["input_tokens"].as_u64().unwrap() > 0, "{session}");
}

#[test]
fn a_reader_that_closes_stdout_stops_the_session_quietly() {
    // The first answer is far more than a pipe holds: it cannot all be written before
    // the reader goes, and the second line must never be sent.
    let long: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    let server = MockServer::start(vec![answer(&long), answer("never")]);
    let dirs = Dirs::new();
    let child = spawn_fed(&mut harness9(&server, &dirs, &[]), b"first\nsecond\n");
    let (first, out) = first_line_then_close(child, DEADLINE);
    assert_eq!(first, "line 0\n");
    assert_exit(&out, 0);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(server.chat_requests().len(), 1, "no turn for nobody");
}

// ---------------------------------------------------------------------------------------
// In a pseudo-terminal
// ---------------------------------------------------------------------------------------

/// The binary in a pseudo-terminal, with its screen kept by vt100.
struct Pty(Terminal);

impl std::ops::Deref for Pty {
    type Target = Terminal;
    fn deref(&self) -> &Terminal {
        &self.0
    }
}

impl std::ops::DerefMut for Pty {
    fn deref_mut(&mut self) -> &mut Terminal {
        &mut self.0
    }
}

impl Pty {
    /// `harness9 --no-tui` in `dirs`, against `server`, once it shows its first prompt.
    fn spawn(server: &MockServer, dirs: &Dirs) -> Pty {
        let (home, work) = (dirs.home(), dirs.project());
        let cmd = harness9_pty_command(&server.url(), home, work, &["--no-tui"]);
        let pty = Pty(Terminal::spawn(cmd, (30, 100), 0, |_, _, _| {}));
        pty.wait_for_prompt_line(">");
        pty
    }

    /// Types `input` and Enter, then waits for `shows` on the screen and for the prompt
    /// line `prompt`.
    fn line(&self, input: &str, shows: &str, prompt: &str) {
        self.send(&format!("{input}\r"));
        self.wait_for_text(shows);
        self.wait_for_prompt_line(prompt);
    }
}

#[test]
fn terminal_history_completion_and_ctrl_c() {
    let server = MockServer::start(vec![
        answer("hi there"),
        sse(vec![text("partial answer"), text(" never"), finish("stop")]).stall_after(1),
        answer("after answer"),
    ]);
    let dirs = Dirs::new();
    let mut pty = Pty::spawn(&server, &dirs);

    // A turn.
    pty.line("hello", "hi there", ">");

    // Tab completes a built-in; Ctrl-C clears the line while idle.
    pty.send("/he\t");
    pty.wait_for_prompt_line("> /help");
    pty.send("\x03");
    pty.wait_for_prompt_line(">");
    // Tab on an ambiguous prefix lists the candidates with their descriptions.
    pty.send("/\t");
    pty.wait_for_text("Show commands and skills");
    pty.wait_for_text("Start a new conversation");
    pty.send("\x03");
    pty.wait_for_prompt_line(">");

    // Ctrl-C cancels a running turn (the stream stalls after its first delta).
    pty.send("long task\r");
    pty.wait_for_text("partial answer");
    pty.send("\x03");
    pty.wait_for_text("interrupted");
    pty.wait_for_prompt_line(">");

    // The session goes on.
    pty.line("after", "after answer", ">");

    // Ctrl-D quits; an interrupted turn is not a failure.
    pty.send("\x04");
    let status = pty.wait_exit();
    assert!(
        status.success(),
        "exit {status:?}; screen:\n{}",
        pty.contents()
    );
    assert!(!pty.contents().contains(" never"));

    dirs.assert_history(&["hello", "long task", "after"]);

    // The history is there in the next session: Up recalls the last input.
    let server2 = MockServer::start(vec![]);
    let mut pty = Pty::spawn(&server2, &dirs);
    pty.send("\x1b[A");
    pty.wait_for_prompt_line("> after");
    pty.send("\x03");
    pty.wait_for_prompt_line(">");
    pty.send("\x04");
    assert!(pty.wait_exit().success());
}

#[test]
fn terminal_approvals_are_asked_inline() {
    let server = MockServer::start(vec![
        bash_reply("call_yes", "echo approved-output"),
        answer("ran it"),
        bash_reply("call_no", "echo denied-output"),
        answer("did not run it"),
    ]);
    let dirs = Dirs::new();
    let mut pty = Pty::spawn(&server, &dirs);

    pty.line("run something", "$ echo approved-output", ALLOW);
    pty.line("y", "ran it", ">");

    pty.line("run another", "$ echo denied-output", ALLOW);
    pty.line("n", "did not run it", ">");
    pty.send("\x04");
    assert!(pty.wait_exit().success());

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[1]
            .tool_result("call_yes")
            .contains("approved-output"),
        "{:?}",
        requests[1].messages()
    );
    let denied = requests[3].tool_result("call_no");
    assert!(
        !denied.contains("denied-output") && denied.to_lowercase().contains("denied"),
        "{denied}"
    );
    // Answers are not inputs: the history holds only the prompts.
    dirs.assert_history(&["run something", "run another"]);
}

/// The reported bypass: after "always" for `echo`, a command chained to an echo or
/// hidden in a substitution must be asked about again, and "always" names its scope.
#[test]
fn always_for_echo_does_not_cover_what_is_chained_or_substituted() {
    let dirs = Dirs::new();
    let chained = dirs.project().join("chained");
    let substituted = dirs.project().join("substituted");
    let server = MockServer::start(vec![
        bash_reply("call_1", "echo hi"),
        answer("first done"),
        bash_reply(
            "call_2",
            &format!("echo innocent; touch {}", chained.display()),
        ),
        answer("second done"),
        bash_reply(
            "call_3",
            &format!("echo $(touch {})", substituted.display()),
        ),
        answer("third done"),
    ]);
    let mut pty = Pty::spawn(&server, &dirs);

    pty.line("one", "adds: bash(echo:*)", ALLOW);
    pty.line("a", "first done", ">");

    pty.line("two", "adds: bash(touch:*)", ALLOW);
    pty.line("n", "second done", ">");

    pty.line(
        "three",
        "\"always\" is not offered: it uses command substitution",
        ALLOW,
    );
    pty.line("n", "third done", ">");
    pty.send("\x04");
    assert!(pty.wait_exit().success());
    assert!(!chained.exists() && !substituted.exists());
}

/// Skills added, edited and removed while a session runs: a command the model runs
/// changes the skills folder; `/skills reload` reports it; the next message carries
/// the note for the model; the system prompt is byte-identical in every request; and a
/// removed skill can no longer be loaded while a new one can.
#[test]
fn skills_changed_mid_session_are_noticed_and_the_system_prompt_stays() {
    let dirs = Dirs::new();
    let skills = dirs.project().join("skills");
    skill(&skills, "alpha", "First skill", "", "Alpha body\n");
    skill(&skills, "beta", "Second skill", "", "Beta body\n");
    let change = "mkdir -p skills/gamma && \
        printf -- '---\\nname: gamma\\ndescription: Brand new\\n---\\nGamma body\\n' > skills/gamma/SKILL.md && \
        printf -- '---\\nname: alpha\\ndescription: First skill, improved\\n---\\nNew alpha\\n' > skills/alpha/SKILL.md && \
        rm skills/beta/SKILL.md && rmdir skills/beta";
    let bash = serde_json::json!({ "command": change }).to_string();
    let server = MockServer::start(vec![
        tool_reply("c1", "bash", &bash),
        answer("changed them"),
        sse(vec![
            tool_call(0, "c2", "use_skill", r#"{"skill_name":"gamma"}"#),
            tool_call(1, "c3", "use_skill", r#"{"skill_name":"beta"}"#),
            finish("tool_calls"),
        ]),
        answer("done"),
    ]);
    let out = dirs.pipe_ok(
        &server,
        &["--approval-mode", "full-auto"],
        "change the skills\n/skills reload\nuse the new one\n",
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("Skills changed: + gamma, ~ alpha, − beta (now 2 skills)"),
        "{all}"
    );
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    let system = |i: usize| requests[i].messages()[0]["content"].clone();
    for i in 1..4 {
        assert_eq!(
            system(i),
            system(0),
            "request {i}: the system prompt changed"
        );
    }
    let asked = requests[2].last_user_text();
    assert!(
        asked.starts_with(
            "[skills changed since the list in the system prompt: + gamma: Brand new; \
             ~ alpha: First skill, improved; − beta."
        ) && asked.ends_with("use the new one"),
        "{asked}"
    );
    let results = requests[3].tool_results();
    let [.., gamma, beta] = results.as_slice() else {
        panic!("{results:?}")
    };
    assert!(gamma.contains("Gamma body"), "{results:?}");
    assert_eq!(
        beta,
        "Unknown skill \"beta\". Available skills: alpha, gamma"
    );
}

/// `/skills` and `/mcp` are answered by the agent and printed as they always were; a
/// skill a command adds mid-session runs as `/name` once `/skills reload` has sent the
/// REPL its new slash commands; in stream-json, stdout carries none of these listings
/// (they are the REPL's own questions: their text goes to stderr).
#[test]
fn listings_come_from_the_agent_and_a_reloaded_skill_runs_as_a_slash_command() {
    let make_gamma = serde_json::json!({
        "command": "mkdir -p skills/gamma && \
            printf -- '---\\nname: gamma\\ndescription: Brand new\\n---\\nGamma body\\n' \
            > skills/gamma/SKILL.md"
    })
    .to_string();
    let input = "make gamma\n/skills reload\n/gamma now\n/skills\n/mcp\n";
    for format in ["text", "stream-json"] {
        let dirs = Dirs::with_config(&crate::support::mcp_fixture_table("fx", &[], ""));
        project_skill(dirs.project(), "alpha", "First skill", "Alpha body\n");
        let server = MockServer::start(vec![
            sse(vec![
                tool_call(0, "c1", "bash", &make_gamma),
                finish("tool_calls"),
            ]),
            answer("made"),
            answer("ran gamma"),
        ]);
        let args = ["--approval-mode", "full-auto", "--output-format", format];
        let out = dirs.pipe(&server, &args, input);
        assert_eq!(out.code, Some(0), "{format}: stderr: {}", out.stderr);
        // The skill's turn tells the model of the new skill, as a plain message would.
        let sent = server.chat_requests()[2].last_user_text();
        assert!(
            sent.starts_with("[skills changed since the list in the system prompt: + gamma")
                && sent.ends_with("]\n\nGamma body\n\nnow"),
            "{format}: {sent}"
        );
        let listings = match format {
            "text" => &out.stdout,
            _ => &out.stderr,
        };
        for shown in [
            "Skills (2):",
            "/alpha  [ok, project]  First skill",
            "/gamma  [ok, project, loaded]  Brand new",
            "MCP servers (1):\n  mcp:fx  not started\n",
        ] {
            assert!(
                listings.contains(shown),
                "{format}: {shown:?} in {listings}"
            );
        }
        if format == "stream-json" {
            for line in out.stdout.lines() {
                let value: Value = serde_json::from_str(line).unwrap();
                let kind = value["type"].as_str().unwrap_or_default();
                assert!(
                    !["skill_list", "mcp_server_list", "slash_commands"].contains(&kind),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn piped_markdown_tables_print_as_aligned_columns_wrapped_to_the_width() {
    let table = "Sizes:\n\n| file | notes |\n|:--|--:|\n| **main.rs** | the entry point, which parses the flags and starts a session |\n| lib.rs | 12 |\n\nDone.";
    let server = MockServer::start(vec![answer(table)]);
    let dirs = Dirs::new();
    let mut cmd = harness9(&server, &dirs, &[]);
    cmd.env("COLUMNS", "40");
    let out = wait_with_deadline(spawn_fed(&mut cmd, b"sizes?\n"), DEADLINE);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    assert!(
        !stdout.contains("|:--"),
        "the delimiter row is drawn as a rule:\n{stdout}"
    );
    assert!(
        !stdout.contains("**"),
        "inline Markdown rendered:\n{stdout}"
    );
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with(['|', '+']))
        .collect();
    assert!(rows.len() >= 6, "{stdout}");
    for row in &rows {
        assert_eq!(
            row.chars().count(),
            rows[0].chars().count(),
            "aligned:\n{stdout}"
        );
        assert!(row.chars().count() <= 40, "within COLUMNS:\n{stdout}");
    }
    let cells = rows.join(" ");
    for word in "the entry point, which parses the flags and starts a session".split(' ') {
        assert!(cells.contains(word), "{word} cut:\n{stdout}");
    }
    assert!(stdout.contains("| main.rs "), "{stdout}");
    assert!(stdout.trim_end().ends_with("Done."), "{stdout}");
}
