//! `harness9 agents list|show|validate` end to end: the real binary on a project holding
//! good and broken agent definitions, checked by stdout, stderr and the exit code as a
//! user or a script sees them. `list` and `validate` must agree on what is broken and
//! why; nothing from a definition reaches the terminal raw.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

use crate::support::{Dirs, stderr_text, stdout_text as stdout};

fn project() -> Dirs {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.project().join(".git")).unwrap();
    dirs.project_file(
        ".claude/agents/reviewer.md",
        "---\nname: code-reviewer\ndescription: Reviews code. Use after changes.\n\
         tools: Read, Grep, Glob, Bash, WebFetch\nmodel: sonnet\ncolor: blue\n---\n\
         You are a senior reviewer.\n",
    );
    dirs.project_file(
        ".harness9/agents/bad.md",
        "---\nname: bad name\ndescription: x\n---\nbody\n",
    );
    dirs.project_file(".agents/agents/deep/none.md", "no frontmatter at all\n");
    dirs.project_file(
        ".claude/agents/escape.md",
        "---\nname: esc\ndescription: fine\nnote\u{1b}]0;pwned\u{7}: x\n---\nbody \u{1b}[2J\n",
    );
    dirs.home_file(
        "agents/helper.md",
        "---\nname: helper\ndescription: A user agent.\nmaxTurns: 3\n---\nHelp.\n",
    );
    dirs
}

#[test]
fn list_shows_built_ins_files_and_every_broken_one_with_why() {
    let dirs = project();
    let out = dirs.run(&["agents", "list"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr_text(&out));
    for needle in [
        "explore ",
        "general ",
        "code-reviewer",
        "helper",
        "bad name",
        "invalid",
        "holds whitespace",
        "does not start with a `---` frontmatter line",
        "tool `WebFetch` names no harness9 tool",
        "`model` is not supported",
    ] {
        assert!(text.contains(needle), "{needle} missing in\n{text}");
    }
    assert!(
        !text.contains('\u{1b}'),
        "an escape reached the terminal:\n{text}"
    );
    let json = dirs.run(&["agents", "list", "--json"]);
    let doc: Value = serde_json::from_str(&stdout(&json)).unwrap();
    let names: Vec<&str> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["explore", "general", "code-reviewer", "esc", "helper"]
    );
    assert_eq!(doc["invalid"].as_array().unwrap().len(), 2);
    assert_eq!(doc["index"]["present"], true);
}

#[test]
fn show_prints_the_settings_and_prompt_and_unknown_names_fail() {
    let dirs = project();
    let out = dirs.run(&["agents", "show", "helper"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("max turns: 3") && text.contains("\nHelp.\n"),
        "{text}"
    );
    let esc = dirs.run(&["agents", "show", "esc"]);
    assert!(!stdout(&esc).contains('\u{1b}'), "{}", stdout(&esc));
    let explore = stdout(&dirs.run(&["agents", "show", "explore"]));
    assert!(explore.contains("permission mode: plan"), "{explore}");
    let missing = dirs.run(&["agents", "show", "nobody"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr_text(&missing).contains("no agent named `nobody`"));
    let bad = dirs.run(&["agents", "show", "bad name"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stdout(&bad).contains("holds whitespace"),
        "{}",
        stdout(&bad)
    );
}

#[test]
fn validate_fails_on_errors_and_passes_clean_files() {
    let dirs = project();
    let out = dirs.run(&["agents", "validate"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("bad.md: error: `name` \"bad name\" holds whitespace"),
        "{text}"
    );
    assert!(text.contains("none.md: error:"), "{text}");
    assert!(text.contains("reviewer.md: warning:"), "{text}");
    assert!(text.contains("2 failed"), "{text}");
    let good = dirs.project().join(".claude/agents/reviewer.md");
    let one = dirs.run(&["agents", "validate", good.to_str().unwrap()]);
    assert_eq!(one.status.code(), Some(0), "{}", stdout(&one));
    assert!(stdout(&one).contains("1 definition(s) checked: 0 failed, 2 warning(s)."));
    let nowhere = dirs.run(&["agents", "validate", "/no/such/file.md"]);
    assert_eq!(nowhere.status.code(), Some(2));
}
