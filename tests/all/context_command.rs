//! What the model's context holds, shown three ways through the real binary against the
//! scripted server: `harness9 context` (text and `--json`: the instruction files with
//! bytes, tokens and what was shortened, the skill roots, the MCP index, and the system
//! prompt and tools a session sends, checked against what a session really sent, with
//! nothing sent to the endpoint), `/context` in a piped session (the nested file a read
//! attached is listed), and stream-json's `session_configured` listing the instruction
//! files (a resumed session's nested ones too). The TUI's `/context` is in
//! `tui_e2e/context.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

use crate::support::*;

/// A project with a root `AGENTS.md` of 150 bytes, a nested `pkg/AGENTS.md` and one
/// skill; `config` is its config.toml (a small cap shortens the root's file, and then
/// leaves nothing for the nested one: they share it).
fn project(config: &str) -> Dirs {
    let dirs = Dirs::with_config(config);
    dirs.project_file("AGENTS.md", &format!("ROOT {}\n", "r".repeat(144)));
    dirs.project_file("pkg/AGENTS.md", "PKG-RULE\n");
    dirs.project_file("pkg/a.rs", "fn a() {}\n");
    project_skill(dirs.project(), "demo", "A demo skill", "body\n");
    dirs
}

fn root(dirs: &Dirs) -> std::path::PathBuf {
    dirs.project().canonicalize().unwrap()
}

#[test]
fn the_subcommand_reports_what_a_session_sends_without_sending_anything() {
    let dirs = project("instructions_max_bytes = 100\n");
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(&dirs, &["context"]);
    assert_exit(&out, 0);
    let text = stdout_text(&out);
    let agents = root(&dirs).join("AGENTS.md");
    assert_has(
        &text,
        &[
            "Instruction files (they share a cap of 100 bytes):",
            &format!(
                "  {}  150 bytes, about 25 tokens (system prompt); shortened: 100 of 150 bytes shown",
                agents.display()
            ),
            &format!("  {}  1 skill", root(&dirs).join("skills").display()),
            "MCP index: 0 bytes, about 0 tokens (0 servers)",
            "  system prompt  ",
            "  tools          ",
            "  conversation   about 0 tokens",
        ],
    );
    assert!(!text.contains("pkg/AGENTS.md"), "not attached yet: {text}");
    let out = server.run(&dirs, &["context", "--json"]);
    assert_exit(&out, 0);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(server.chat_requests().is_empty(), "nothing was asked");

    // A session started here sends exactly that system prompt and those tools.
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_exit(&out, 0);
    let first = &server.chat_requests()[0];
    let system = first.message_text(0);
    let request = &report["request"];
    assert_eq!(request["system_prompt_bytes"], system.len());
    assert_eq!(request["system_prompt_tokens"], system.len().div_ceil(4));
    assert_eq!(request["tools"], first.tool_names().len());
    let tools_bytes: usize = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let f = &t["function"];
            f["name"].as_str().unwrap().len()
                + f["description"].as_str().unwrap().len()
                + f["parameters"].to_string().len()
        })
        .sum();
    assert_eq!(request["tools_bytes"], tools_bytes);
    let file = &report["instructions"][0];
    assert_eq!(file["path"], agents.display().to_string());
    assert_eq!(
        (
            &file["origin"],
            &file["bytes"],
            &file["shown"],
            &file["shortened"]
        ),
        (
            &Value::from("project"),
            &Value::from(150),
            &Value::from(100),
            &Value::from(true)
        )
    );
    assert_eq!(report["instructions"].as_array().unwrap().len(), 1);
    assert_eq!(report["skill_roots"][0]["skills"], 1);
}

#[test]
fn context_in_a_piped_session_lists_the_nested_file_a_read_attached() {
    let dirs = project("");
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path": "pkg/a.rs"}"#),
        answer("read it"),
    ]);
    let out = run_fed(&mut server.binary(&dirs), b"read pkg/a.rs\n/context\n");
    assert_exit(&out, 0);
    let text = stdout_text(&out);
    assert_has(
        &text,
        &[
            "Context:",
            &format!(
                "{}  9 bytes, about 3 tokens (attached to a tool result)",
                root(&dirs).join("pkg/AGENTS.md").display()
            ),
            "conversation   about ",
        ],
    );
    assert_eq!(server.chat_requests().len(), 2, "/context asks nothing");
}

fn session_configured(out: &std::process::Output) -> Value {
    let events = json_lines(&out.stdout);
    let found = events.iter().find(|e| e["type"] == "session_configured");
    found.cloned().unwrap_or_else(|| panic!("{events:?}"))
}

#[test]
fn stream_json_session_configured_lists_the_instruction_files() {
    let dirs = project("");
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path": "pkg/a.rs"}"#),
        answer("read it"),
        answer("again"),
    ]);
    let out = server.run(&dirs, &["-p", "go", "--output-format", "stream-json"]);
    assert_exit(&out, 0);
    let agents = root(&dirs).join("AGENTS.md").display().to_string();
    let files = session_configured(&out)["instructions"].clone();
    assert_eq!(files.as_array().unwrap().len(), 1, "{files}");
    assert_eq!(files[0]["path"], agents);
    assert_eq!(files[0]["bytes"], 150);
    assert_eq!(files[0]["shortened"], false);
    // Resumed, the nested file the conversation holds is in force too.
    let out = server.run(
        &dirs,
        &["-c", "-p", "more", "--output-format", "stream-json"],
    );
    assert_exit(&out, 0);
    let files = session_configured(&out)["instructions"].clone();
    let paths: Vec<&str> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let nested = root(&dirs).join("pkg/AGENTS.md").display().to_string();
    assert_eq!(paths, [agents.as_str(), nested.as_str()]);
    assert_eq!(files[1]["origin"], "nested");
    assert_eq!(files[1]["shortened"], false);
}
