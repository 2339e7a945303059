//! Tests for `skill_run`'s declarative inputs: each scheme, where inputs land, what
//! the approval policy is asked, and every refusal.
use std::path::Path;

use serde_json::{Value, json};

use super::tests::{access, fixture, report, unrestricted};
use crate::protocol::ApprovalRequestKind;
use crate::test_support::write;
use crate::tools::Access;

fn command(access: &Access) -> bool {
    matches!(
        access,
        Access::NeedsApproval(ApprovalRequestKind::Command { .. })
    )
}

#[tokio::test]
async fn inputs_bring_project_skill_and_host_files_into_the_workspace() {
    let f = fixture();
    let project = std::fs::canonicalize(f.project.path()).unwrap();
    write(&project.join("data.csv"), "a,b\n1,2\n");
    write(&project.join("data/a.txt"), "A");
    write(&project.join("data/.env"), "SECRET=1");
    write(&project.join("data/skip.log"), "ignored");
    write(&project.join(".gitignore"), "*.log\n");
    let other = f.demo_dir.parent().unwrap().join("other");
    write(&other.join("scripts/helper.sh"), "echo helper\n");
    let host = tempfile::tempdir().unwrap();
    let host_dir = std::fs::canonicalize(host.path()).unwrap();
    write(&host_dir.join("notes.txt"), "host notes");
    let args = json!({
        "skill": "demo",
        "command": "cat \"$WORK_DIR/inputs/data.csv\"; ls -A \"$WORK_DIR/d\" | tr '\\n' ' '; echo; \
                    sh inputs/helper.sh; cat out/n.txt",
        "inputs": [
            {"from": "workspace://data.csv"},
            {"from": "workspace://data", "to": "work/d"},
            {"from": "skill://other/scripts/helper.sh", "to": "inputs/helper.sh"},
            {"from": format!("host://{}/notes.txt", host_dir.display()), "to": "$OUTPUT_DIR/n.txt", "mode": "link"},
        ],
        "output_files": ["out/n.txt"]
    });
    // The policy is asked about each read (the skill's file needs nothing), then the
    // command.
    let Access::All(parts) = access(&f.tool(unrestricted()), &args, &f.ctx()) else {
        panic!("a combined access");
    };
    assert_eq!(parts[0], Access::ReadInside(project.join("data.csv")));
    assert_eq!(parts[1], Access::ReadInside(project.join("data")));
    assert_eq!(
        parts[2],
        Access::NeedsApproval(ApprovalRequestKind::ReadOutside {
            path: host_dir.join("notes.txt")
        })
    );
    assert!(command(&parts[3]) && parts.len() == 4, "{parts:?}");

    let out = f.run(args).await;
    assert!(!out.is_error, "{}", out.content);
    let r = report(&out);
    assert_eq!(r["stdout"], "a,b\n1,2\na.txt \nhelper\nhost notes");
    let staged = r["inputs"].as_array().unwrap();
    let summary: Vec<(&str, &str, u64)> = staged
        .iter()
        .map(|s| {
            (
                s["to"].as_str().unwrap(),
                s["mode"].as_str().unwrap(),
                s["files"].as_u64().unwrap(),
            )
        })
        .collect();
    // Without a sandbox a link is a copy, so the command cannot write through it.
    assert_eq!(
        summary,
        [
            ("work/inputs/data.csv", "copy", 1),
            ("work/d", "copy", 1),
            ("work/inputs/helper.sh", "copy", 1),
            ("out/n.txt", "copy", 1)
        ]
    );
    // A secret file in a folder is left out and named; ignored files are not copied.
    assert_eq!(
        staged[1]["skipped"],
        json!([".env (a secret file: name it to include it)"])
    );
    assert_eq!(r["files"][0]["content"], "host notes");
    assert_eq!(
        std::fs::read_to_string(host_dir.join("notes.txt")).unwrap(),
        "host notes"
    );
}

#[tokio::test]
async fn a_host_path_inside_the_project_is_a_read_inside() {
    let f = fixture();
    let project = std::fs::canonicalize(f.project.path()).unwrap();
    write(&project.join("x.txt"), "x");
    let args = json!({"skill": "demo", "command": "true",
        "inputs": [{"from": format!("host://{}", project.join("x.txt").display())}]});
    let Access::All(parts) = access(&f.tool(unrestricted()), &args, &f.ctx()) else {
        panic!()
    };
    assert_eq!(parts[0], Access::ReadInside(project.join("x.txt")));
}

#[tokio::test]
async fn inputs_are_refused_with_the_reason_and_nothing_runs() {
    let f = fixture();
    let project = std::fs::canonicalize(f.project.path()).unwrap();
    write(&project.join("ok.txt"), "ok");
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), project.join("escape")).unwrap();
    let marker = project.join("ran");
    let input = |spec: Value| json!({"skill": "demo", "command": format!("touch {}", marker.display()), "inputs": [spec]});
    let cases = [
        (
            input(json!({"from": "workspace://../x"})),
            "may not hold `..`",
        ),
        (
            input(json!({"from": "workspace://escape"})),
            "leads outside",
        ),
        (
            input(json!({"from": "workspace:///etc/passwd"})),
            "relative to its root",
        ),
        (
            input(json!({"from": "workspace://missing.txt"})),
            "No such file",
        ),
        (
            input(json!({"from": "skill://nope/x"})),
            "no skill named \"nope\"",
        ),
        (
            input(json!({"from": "skill://other/../demo/SKILL.md"})),
            "may not hold `..`",
        ),
        (input(json!({"from": "host://etc/passwd"})), "absolute"),
        (
            input(json!({"from": "artifact://report@2"})),
            "does not save them yet",
        ),
        (input(json!({"from": "ftp://x"})), "use workspace://"),
        (
            input(json!({"from": "workspace://ok.txt", "to": "/tmp/x"})),
            "relative to the workspace",
        ),
        (
            input(json!({"from": "workspace://ok.txt", "to": "work/../../x"})),
            "may not hold `..`",
        ),
        (
            input(json!({"from": "workspace://ok.txt", "to": "skills/demo/x"})),
            "read-only copy",
        ),
        (
            input(json!({"from": "workspace://ok.txt", "mode": "move"})),
            "unknown variant",
        ),
        (
            json!({"skill": "demo", "command": "true", "inputs": [
                {"from": "workspace://ok.txt", "to": "work/a"},
                {"from": "workspace://ok.txt", "to": "work/a/b"}]}),
            "both land on",
        ),
    ];
    let tool = f.tool(unrestricted());
    for (args, expected) in cases {
        assert_eq!(access(&tool, &args, &f.ctx()), Access::ReadOnly, "{args}");
        let out = f.run(args.clone()).await;
        assert!(out.is_error, "{args}");
        assert!(out.content.contains(expected), "{args}: {}", out.content);
    }
    assert!(
        !Path::new(&marker).exists(),
        "no refused call ran its command"
    );
}
