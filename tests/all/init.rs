//! `/init` end to end through the real binary against the scripted server: the request
//! carries the facts gathered from the project, and AGENTS.md is written only through an
//! approved edit — asked about even in full-auto, refused in print mode (nobody to ask),
//! never written when declined, an existing file never overwritten without a yes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::support::*;

/// A project with a Cargo.toml, a Makefile, a README and a CONTRIBUTING file.
fn project(dirs: &Dirs) {
    dirs.project_file("Cargo.toml", "[package]\nname = \"demo\"\n");
    dirs.project_file("Makefile", "check:\n\tcargo test\nlint:\n\tcargo clippy\n");
    dirs.project_file("README.md", "# Demo\nA demo crate.\n");
    dirs.project_file("CONTRIBUTING.md", "Run make check before a PR.\n");
    dirs.project_file("src/main.rs", "fn main() {}\n");
}

/// The model's reply writing AGENTS.md.
fn write_agents(id: &str, content: &str) -> Reply {
    tool_reply(
        id,
        "write_file",
        &serde_json::json!({ "path": "AGENTS.md", "content": content }).to_string(),
    )
}

fn agents(project: &Path) -> Option<String> {
    std::fs::read_to_string(project.join("AGENTS.md")).ok()
}

#[test]
fn print_mode_sends_the_facts_and_writes_nothing_even_in_full_auto() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    project(&dirs);
    let server = MockServer::start(vec![write_agents("w1", "# New\n"), answer("declined")]);
    let out = server.run(
        &dirs,
        &["-p", "/init keep it short", "--approval-mode", "full-auto"],
    );
    assert_exit(&out, 0);
    assert_eq!(
        agents(dirs.project()),
        None,
        "AGENTS.md was written unasked"
    );
    let requests = server.chat_requests();
    let user = requests[0].message_text(1);
    assert_has(
        &user,
        &[
            "propose an AGENTS.md",
            "The user adds: keep it short",
            "<file path=\"Cargo.toml\">",
            "make check",
            "make lint",
            "Run make check before a PR.",
            "src/main.rs",
        ],
    );
    let result = requests[1].tool_result("w1");
    assert!(result.to_lowercase().contains("denied"), "{result}");
}

#[test]
fn an_existing_agents_md_is_shown_and_never_overwritten_unasked() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    project(&dirs);
    dirs.project_file("AGENTS.md", "# Old rules\n");
    let server = MockServer::start(vec![write_agents("w1", "# Replaced\n"), answer("ok")]);
    let out = server.run(&dirs, &["-p", "/init", "--approval-mode", "full-auto"]);
    assert_exit(&out, 0);
    assert_eq!(agents(dirs.project()).as_deref(), Some("# Old rules\n"));
    let user = server.chat_requests()[0].message_text(1);
    assert_has(&user, &["already exists", "# Old rules", "edit_file"]);
}

#[test]
fn in_a_terminal_the_write_is_asked_with_its_diff_declined_then_approved() {
    let dirs = Dirs::with_config("max_retries = 0\n");
    project(&dirs);
    let server = MockServer::start(vec![
        write_agents("w1", "# Declined text\n"),
        answer("left it"),
        write_agents("w2", "# Agents\nRun make check.\n"),
        answer("wrote it"),
    ]);
    let cmd = harness9_pty_command(
        &server.url(),
        dirs.home(),
        dirs.project(),
        &["--no-tui", "--approval-mode", "full-auto"],
    );
    let mut pty = Terminal::spawn(cmd, (40, 100), 0, |_, _, _| {});
    pty.wait_for_prompt_line(">");
    pty.send("/init\r");
    pty.wait_for_text("+# Declined text");
    pty.wait_for_text("[n]o");
    pty.send("n\r");
    pty.wait_for_text("left it");
    assert_eq!(agents(dirs.project()), None, "a declined write was made");
    pty.wait_for_prompt_line(">");
    pty.send("/init\r");
    pty.wait_for_text("+Run make check.");
    pty.send("y\r");
    pty.wait_for_text("wrote it");
    pty.wait_for_prompt_line(">");
    pty.send("\x04");
    assert!(pty.wait_exit().success(), "{}", pty.contents());
    assert_eq!(
        agents(dirs.project()).as_deref(),
        Some("# Agents\nRun make check.\n")
    );
}
