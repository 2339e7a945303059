//! `harness9 skills list|show|validate` end to end: the real binary on a project holding
//! broken skills, checked by its stdout, stderr and exit code as a user or a script sees
//! them.
//! `list`, `show` and `validate` must agree on which skills are invalid and why, and
//! harness9's own frontmatter fields are never reported as unknown.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::{Dirs, stderr_text, stdout_text as stdout, write};

/// A project directory and a `$HARNESS9_HOME` (also `$HOME`) of its own.
struct Project {
    env: Dirs,
}

impl Project {
    /// Skills in `{work}/skills/`: three whose names can never be invoked, a wrong-typed
    /// field, a built-in's name, and one using every field harness9 understands.
    fn troubled() -> Project {
        let p = Project { env: Dirs::new() };
        for (dir, front) in [
            ("spaces", "name: Bad Name With Spaces\ndescription: Spaces"),
            ("dotdot", "name: ../x\ndescription: Dots"),
            ("newline", "name: \"new\\nline\"\ndescription: Newline"),
            (
                "maybe",
                "name: maybe\ndescription: Typed wrong\nuser-invocable: maybe",
            ),
            ("help", "name: help\ndescription: Named like a built-in"),
            (
                "good",
                "name: good\ndescription: Fine\ntrigger: a, b\nuser-invocable: true\n\
                 argument-hint: [file]\nwhen_to_use: w\ncontext: fork\n\
                 disable-model-invocation: false\nallowed-tools: Read",
            ),
        ] {
            write(
                &p.env.project().join("skills").join(dir).join("SKILL.md"),
                &format!("---\n{front}\n---\nBody of {dir}.\n"),
            );
        }
        p
    }

    fn run(&self, args: &[&str]) -> Output {
        self.env.command(&["skills"]).args(args).output().unwrap()
    }

    fn skill_md(&self, dir: &str) -> String {
        self.env
            .project()
            .join("skills")
            .join(dir)
            .join("SKILL.md")
            .display()
            .to_string()
    }
}

fn list_json(p: &Project) -> Value {
    let out = p.run(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// `invalid[]` of `skills list --json` as (path, reason).
fn invalid_of(v: &Value) -> Vec<(String, String)> {
    v["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["path"].as_str().unwrap().to_string(),
                b["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The `name` of each entry of the list `key` of `skills list --json`.
fn names_in<'v>(v: &'v Value, key: &str) -> Vec<&'v str> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

#[test]
fn list_validate_and_show_agree_on_invalid_skills() {
    let p = Project::troubled();
    let v = list_json(&p);
    assert_eq!(names_in(&v, "skills"), ["good", "help", "maybe"], "{v:#}");
    let invalid = invalid_of(&v);
    assert_eq!(
        names_in(&v, "invalid"),
        ["../x", "new\nline", "Bad Name With Spaces"],
        "{v:#}"
    );
    for (path, reason) in &invalid {
        assert!(
            reason.contains("could never be invoked"),
            "{path}: {reason}"
        );
    }
    let status = |name: &str| {
        v["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status("maybe"), serde_json::json!(["warning"]));
    assert_eq!(status("help"), serde_json::json!(["warning"]));
    assert_eq!(status("good"), serde_json::json!(["ok"]));

    // validate: the invalid ones are errors with the same reason, the wrong-typed field
    // and the built-in's name are warnings in the same words as `list`'s.
    let out = p.run(&["validate"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(
        stderr_text(&out),
        "harness9: validation found errors (3 failed of 6 skill(s) checked)\n"
    );
    for (path, reason) in &invalid {
        let line = format!("{path}: error: {reason}");
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    let warnings: Vec<String> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert_eq!(warnings.len(), 5, "{warnings:?}");
    for dir in ["maybe", "help"] {
        let path = p.skill_md(dir);
        let w = warnings
            .iter()
            .find(|w| w.starts_with(&format!("{path}: ")))
            .unwrap();
        let line = w.replacen(": ", ": warning: ", 1);
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    assert!(
        text.ends_with("6 skill(s) checked: 3 failed, 2 warning(s).\n"),
        "{text}"
    );

    // show: the reason, not "no skill named"; the failure on stderr.
    let out = p.run(&["show", "Bad Name With Spaces"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        stderr_text(&out).starts_with("harness9: skill `Bad Name With Spaces` is invalid: "),
        "{out:?}"
    );
    assert!(text.contains("status: invalid\n"), "{text}");
    let reason = &invalid
        .iter()
        .find(|(p, _)| p.contains("spaces"))
        .unwrap()
        .1;
    assert!(text.contains(&format!("invalid: {reason}\n")), "{text}");
    let out = p.run(&["show", "../x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("holds `/`"), "{}", stdout(&out));
    let out = p.run(&["show", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_text(&out),
        "harness9: no skill named `nope`; available: good, help, maybe\n"
    );
    assert_eq!(stdout(&out), "");
}

/// Files this young are read again, not taken from the cache (the cache's 2 s rule), so
/// cache hits on invalid skills are checked in `skills_cache.rs`; this checks that the
/// binary's second run says the same as its first.
#[test]
fn a_second_run_lists_the_same() {
    let p = Project::troubled();
    let cold = list_json(&p);
    let warm = list_json(&p);
    assert_eq!(warm, cold);
    assert_eq!(invalid_of(&warm).len(), 3);
}

#[test]
fn harness9_fields_pass_validation_without_warnings() {
    let p = Project::troubled();
    let out = p.run(&["validate", &p.skill_md("good")]);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (
            Some(0),
            "1 skill(s) checked: 0 failed, 0 warning(s).\n".to_string()
        )
    );
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
    let out = p.run(&["validate", shipped.to_str().unwrap()]);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (
            Some(0),
            "4 skill(s) checked: 0 failed, 0 warning(s).\n".to_string()
        )
    );
}
