//! No terminal injection (issue 13 item 5): the real binary, fed hostile text through
//! every path that reaches stdout or stderr outside the TUI — the answer of `-p`, the
//! `-v` previews of a file read and a command's output, the pipe REPL (and the Markdown
//! character references it decodes), `skills list|show|validate`, `sessions show|export`,
//! a provider's error body and a config error — must write no raw ESC, BEL or C1 CSI,
//! and must show the visible replacement instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support::*;

/// Sets the window title, switches to the alternate screen, hides the cursor, and
/// starts a C1 CSI (U+009B).
const HOSTILE: &str = "\x1b]0;PWNED\x07\x1b[?1049h\x1b[?25l\u{9b}31m";
/// What [`HOSTILE`] must look like once neutralized.
const SHOWN: &str = "^[]0;PWNED^G^[[?1049h^[[?25l<U+009B>31m";
const DEADLINE: Duration = Duration::from_secs(30);

/// Fails when `bytes` hold a raw ESC, BEL or C1 control (as UTF-8, or a lone byte).
fn assert_inert(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !bytes.contains(&0x1b) && !bytes.contains(&0x07),
        "{what}: raw ESC or BEL in {text:?}"
    );
    assert!(
        !bytes
            .windows(2)
            .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1])),
        "{what}: raw C1 control in {text:?}"
    );
    assert!(!text.contains('\u{9b}'), "{what}: {text:?}");
}

fn both_inert(what: &str, out: &Output) {
    assert_inert(&format!("{what} stdout"), &out.stdout);
    assert_inert(&format!("{what} stderr"), &out.stderr);
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run(cmd: &mut Command) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_with_deadline(child, DEADLINE)
}

#[test]
fn print_mode_answer() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![answer(&format!("answer {HOSTILE} end"))]);
    let out = run(server.binary(&dirs).args(["-p", "hi"]));
    assert_exit(&out, 0);
    both_inert("-p", &out);
    assert_eq!(text(&out.stdout), format!("answer {SHOWN} end\n"));
}

#[test]
fn print_mode_json_keeps_the_text_escaped() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![]);
    for format in ["json", "stream-json"] {
        server.push(answer(&format!("answer {HOSTILE}")));
        let out = run(server
            .binary(&dirs)
            .args(["-p", "hi", "--output-format", format]));
        assert_exit(&out, 0);
        both_inert(format, &out);
        let stdout = text(&out.stdout);
        let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(last["result"], format!("answer {HOSTILE}"), "{format}");
    }
}

#[test]
fn verbose_previews_of_a_file_and_a_command() {
    let dirs = Dirs::new();
    dirs.project_file("evil.txt", &format!("{HOSTILE} in a file\n"));
    dirs.project_file(
        "evil.sh",
        "printf '\\033]0;PWNED\\007\\033[?1049h\\033[?25l\\302\\23331m from bash\\n'\n",
    );
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path":"evil.txt"}"#),
        tool_reply("c2", "bash", r#"{"command":"sh evil.sh"}"#),
        answer("done"),
    ]);
    let out = run(server
        .binary(&dirs)
        .args(["-p", "look", "-v", "--approval-mode", "full-auto"]));
    assert_exit(&out, 0);
    both_inert("-p -v", &out);
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{SHOWN} in a file")), "{err}");
    assert!(err.contains(&format!("{SHOWN} from bash")), "{err}");
    // The model still got the exact bytes: only what is shown changes.
    let reqs = server.chat_requests();
    let tool = reqs[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str().map(String::from))
        .unwrap();
    assert!(tool.contains(HOSTILE), "{tool:?}");
}

#[test]
fn pipe_repl_answer_and_character_references() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![sse(vec![
        crate::support::text(&format!("raw {HOSTILE}\n")),
        crate::support::text("ref &#27;]0;PWNED&#7; &#155;31m **bold**\n"),
        finish("stop"),
    ])]);
    let child = spawn_fed(&mut server.binary(&dirs), b"hello\n/model\n");
    let out = wait_with_deadline(child, DEADLINE);
    assert_exit(&out, 0);
    both_inert("pipe REPL", &out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&format!("raw {SHOWN}")), "{stdout}");
    assert!(
        stdout.contains("ref ^[]0;PWNED^G <U+009B>31m bold"),
        "{stdout}"
    );
}

/// A skills root with one skill whose description is an escape written in YAML (so it
/// is invalid) and one valid skill whose body carries raw escapes.
fn hostile_skills(root: &Path) {
    skill(
        root,
        "evil-desc",
        "\"Use it \\e]0;PWNED\\a\\x9b31m now\"",
        "",
        "body\n",
    );
    skill(
        root,
        "evil-body",
        "A fine description",
        "argument-hint: \"[x\\e[?25l]\"\n",
        &format!("Body {HOSTILE} end\n"),
    );
}

#[test]
fn skills_list_show_and_validate() {
    let dirs = Dirs::new();
    let root = dirs.project().join("skills");
    hostile_skills(&root);
    let server = MockServer::start(vec![]);
    let skills = |args: &[&str]| run(server.binary(&dirs).arg("skills").args(args));

    let list = skills(&["list"]);
    both_inert("skills list", &list);
    let stdout = text(&list.stdout);
    assert_has(&stdout, &["evil-body", "invalid"]);

    let json = skills(&["list", "--json"]);
    both_inert("skills list --json", &json);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let reason = doc["invalid"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("U+001B"), "{reason}");

    let show = skills(&["show", "evil-body"]);
    assert_exit(&show, 0);
    both_inert("skills show", &show);
    let stdout = text(&show.stdout);
    assert!(stdout.contains(&format!("Body {SHOWN} end")), "{stdout}");
    assert!(stdout.contains("argument-hint: [x^[[?25l]"), "{stdout}");

    let show_bad = skills(&["show", "evil-desc"]);
    assert_exit(&show_bad, 1);
    both_inert("skills show (invalid)", &show_bad);
    let stdout = text(&show_bad.stdout);
    assert!(
        stdout.contains("invalid: `description` holds a control character (U+001B)"),
        "{stdout}"
    );

    let validate = skills(&["validate", root.to_str().unwrap()]);
    assert_exit(&validate, 1);
    both_inert("skills validate", &validate);
    let stdout = text(&validate.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("evil-desc") && l.contains("error"))
        .unwrap_or_else(|| panic!("no error for evil-desc in {stdout}"));
    assert_has(line, &["SKILL.md", "control character (U+001B)"]);
}

#[test]
fn sessions_show_and_export() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![answer(&format!("saved {HOSTILE}"))]);
    let out = run(server
        .binary(&dirs)
        .args(["-p", &format!("prompt {HOSTILE}")]));
    assert_exit(&out, 0);
    let sessions = |args: &[&str]| run(server.binary(&dirs).arg("sessions").args(args));
    let list = sessions(&["list", "--json"]);
    both_inert("sessions list --json", &list);
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        listed[0]["first_prompt"],
        format!("prompt {HOSTILE}"),
        "JSON keeps the text"
    );

    let table = sessions(&["list"]);
    both_inert("sessions list", &table);

    let show = sessions(&["show", &id]);
    assert_exit(&show, 0);
    both_inert("sessions show", &show);
    let stdout = text(&show.stdout);
    assert!(stdout.contains(&format!("saved {SHOWN}")), "{stdout}");

    let md = sessions(&["export", &id, "--format", "md"]);
    both_inert("sessions export md", &md);
    assert!(text(&md.stdout).contains(SHOWN));

    let json = sessions(&["export", &id, "--format", "json"]);
    both_inert("sessions export json", &json);
    assert!(text(&json.stdout).contains("\\u001b]0;PWNED"));
    serde_json::from_slice::<serde_json::Value>(&json.stdout).unwrap();
}

#[test]
fn a_provider_error_body() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![http_error(400).json_body(serde_json::json!({
        "error": {"message": format!("bad request {HOSTILE}"), "type": "x", "code": null}
    }))]);
    let out = run(server.binary(&dirs).args(["-p", "hi"]));
    assert_exit(&out, 3);
    both_inert("provider error", &out);
    let err = text(&out.stderr);
    assert!(err.contains("bad request ^[]0;PWNED^G"), "{err}");
}

#[test]
fn a_config_error_that_quotes_the_file() {
    let dirs = Dirs::with_config(&format!("model = \"m\"\nbroken {HOSTILE}\n"));
    let server = MockServer::start(vec![]);
    let out = run(server.binary(&dirs).args(["-p", "hi"]));
    assert_exit(&out, 2);
    both_inert("config error", &out);
    let err = text(&out.stderr);
    assert!(err.contains("config.toml is invalid"), "{err}");
    assert!(
        err.contains(&format!("broken {SHOWN}")),
        "the quoted line: {err}"
    );
}
