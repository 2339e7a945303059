//! Real agent definitions from public Claude Code collections (tests/fixtures/agents,
//! copied unchanged, sources in its README.md) list, validate and run through the real
//! binary: every file is a usable definition, what does not map is a warning naming
//! it, and one runs against the scripted server with its own prompt and its tools
//! mapped to harness9's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents")
}

/// A project holding the VoltAgent files in `.claude/agents/voltagent` and the
/// wshobson files in `.harness9/agents/wshobson`.
fn project() -> Dirs {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.project().join(".git")).unwrap();
    for (collection, root) in [
        ("voltagent", ".claude/agents"),
        ("wshobson", ".harness9/agents"),
    ] {
        let to = dirs.project().join(root).join(collection);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(fixtures().join(collection)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
    dirs
}

fn definitions(collection: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures().join(collection))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    names
}

#[test]
fn every_collected_definition_lists_and_validates() {
    let dirs = project();
    let out = dirs.run(&["agents", "list", "--json"]);
    assert_exit(&out, 0);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["invalid"], json!([]), "{doc:#}");
    let listed = doc["agents"].as_array().unwrap();
    let files = definitions("voltagent").len() + definitions("wshobson").len();
    // Every file is listed once, with the two built-ins.
    assert_eq!(listed.len(), files + 2, "{doc:#}");
    let warnings: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    for expected in [
        "tool `WebFetch` names no harness9 tool",
        "tool `TaskCreate` names no harness9 tool",
        "`model` is not supported; a Claude model alias",
        "frontmatter is not valid YAML",
        "tool `pied-piper` is no harness9 tool",
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(expected)),
            "{expected}: {warnings:#?}"
        );
    }
    for collection in ["voltagent", "wshobson"] {
        let out = dirs.run(&[
            "agents",
            "validate",
            fixtures().join(collection).to_str().unwrap(),
        ]);
        assert_exit(&out, 0);
        let text = stdout_text(&out);
        let checked = definitions(collection).len();
        assert!(
            text.contains(&format!("{checked} definition(s) checked: 0 failed")),
            "{text}"
        );
    }
}

#[test]
fn a_collected_definition_runs_with_its_prompt_and_mapped_tools() {
    let dirs = project();
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(
                0,
                "c1",
                "agent",
                &json!({"agent": "code-reviewer", "task": "review src/lib.rs"}).to_string(),
            ),
            tool_call(
                1,
                "c2",
                "agent",
                &json!({"agent": "team-lead", "task": "plan the work"}).to_string(),
            ),
            finish("tool_calls"),
        ]),
        answer("both reported"),
    ]);
    server.respond_with(|request| {
        let system = request.messages()[0]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        (!system.starts_with("You are harness9")).then(|| answer("sub-agent report"))
    });
    let out = server
        .harness9(dirs.home(), dirs.project())
        .args(["-p", "review", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = std::fs::read_to_string(fixtures().join("voltagent/code-reviewer.md")).unwrap();
    let body = text.split_once("\n---\n").unwrap().1.trim();
    let requests = server.chat_requests();
    let reviewer = requests
        .iter()
        .find(|r| r.last_user_text() == "review src/lib.rs")
        .expect("the reviewer ran");
    assert_eq!(reviewer.messages()[0]["content"], body);
    assert_eq!(
        reviewer.tool_names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "grep",
            "bash"
        ]
    );
    let lead = requests
        .iter()
        .find(|r| r.last_user_text() == "plan the work")
        .expect("the team lead ran");
    // `Agent`, `TeamCreate`, `TaskList`… have no counterpart: it gets the rest.
    assert_eq!(lead.tool_names(), ["read_file", "glob", "grep", "bash"]);
    let last = requests.last().unwrap();
    assert!(last.tool_result("c1").contains("sub-agent report"));
    assert!(last.tool_result("c2").contains("sub-agent report"));
    // `model: fable` names no configured provider: the sub-agent says so, and the
    // session's model is used.
    let events = json_lines(&out.stdout);
    assert!(events.iter().any(|e| {
        e["type"] == "sub_agent"
            && e["parent_call_id"] == "c2"
            && e["event"]["type"] == "warning"
            && e["event"]["message"]
                .as_str()
                .unwrap()
                .contains("asks for model `fable`")
    }));
    assert_eq!(lead.body["model"], "m");
}
