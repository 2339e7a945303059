//! Tests for `skill_run`'s declarative inputs: each scheme, where inputs land, what
//! the approval policy is asked, and every refusal.
use std::path::Path;

use serde_json::{Value, json};

use super::tests::{access, fixture, report, rows, unrestricted};
use crate::protocol::ApprovalRequestKind;
use crate::test_support::write;
use crate::tools::{Access, Tool};

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
            path: host_dir.join("notes.txt"),
            via: None,
        })
    );
    assert!(command(&parts[3]) && parts.len() == 4, "{parts:?}");

    let out = f.run(args).await;
    assert!(!out.is_error, "{}", out.content);
    let r = report(&out);
    assert_eq!(r["stdout"], "a,b\n1,2\na.txt \nhelper\nhost notes");
    // Without a sandbox a link is a copy, so the command cannot write through it.
    assert_eq!(
        rows(&r["inputs"], &["to", "mode", "files"]),
        json!([
            ["work/inputs/data.csv", "copy", 1],
            ["work/d", "copy", 1],
            ["work/inputs/helper.sh", "copy", 1],
            ["out/n.txt", "copy", 1],
        ])
    );
    let staged = r["inputs"].as_array().unwrap();
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
    // Where an input comes from.
    let sources = [
        ("workspace://../x", "may not hold `..`"),
        ("workspace://escape", "leads outside"),
        ("workspace:///etc/passwd", "relative to its root"),
        ("workspace://missing.txt", "No such file"),
        ("skill://nope/x", "no skill named \"nope\""),
        ("skill://other/../demo/SKILL.md", "may not hold `..`"),
        ("host://etc/passwd", "absolute"),
        ("artifact://report@2", "this one is not saved"),
        ("ftp://x", "use workspace://"),
    ];
    // Where a good file goes, and how.
    let placements = [
        (json!({"to": "/tmp/x"}), "relative to the workspace"),
        (json!({"to": "work/../../x"}), "may not hold `..`"),
        (json!({"to": "skills/demo/x"}), "read-only copy"),
        (json!({"mode": "move"}), "unknown variant"),
    ];
    let mut cases: Vec<(Value, &str)> = Vec::new();
    for (from, why) in sources {
        cases.push((input(json!({ "from": from })), why));
    }
    for (mut spec, why) in placements {
        spec["from"] = json!("workspace://ok.txt");
        cases.push((input(spec), why));
    }
    cases.push((
        json!({"skill": "demo", "command": "true", "inputs": [
            {"from": "workspace://ok.txt", "to": "work/a"},
            {"from": "workspace://ok.txt", "to": "work/a/b"}]}),
        "both land on",
    ));
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

/// A FIFO or a device named as an input is refused when staged, never read: opening
/// the FIFO would block the call, copying `/dev/zero` would fill the workspace.
#[tokio::test]
async fn fifos_and_devices_are_refused_as_inputs() {
    let f = fixture();
    let project = std::fs::canonicalize(f.project.path()).unwrap();
    nix::unistd::mkfifo(
        &project.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    for (from, kind) in [
        ("workspace://pipe", "a named pipe (FIFO)"),
        ("host:///dev/zero", "a character device"),
    ] {
        let args = json!({"skill": "demo", "command": "true", "inputs": [{"from": from}]});
        let out = tokio::time::timeout(std::time::Duration::from_secs(20), f.run(args))
            .await
            .expect("refused at once");
        assert!(
            out.is_error && out.content.contains(kind),
            "{from}: {}",
            out.content
        );
    }
}

/// The files of `out` a command made: `a.txt` (small), `big.bin` (60,000 bytes),
/// `c.csv`.
const MAKE_OUTPUTS: &str = "printf hello > \"$OUTPUT_DIR/a.txt\"; \
    head -c 60000 /dev/zero > \"$OUTPUT_DIR/big.bin\"; printf 'x,y\\n' > \"$OUTPUT_DIR/c.csv\"";

fn outputs_call(outputs: Value) -> Value {
    json!({"skill": "demo", "command": MAKE_OUTPUTS, "outputs": outputs})
}

fn listed(r: &Value) -> Vec<(String, bool, Option<String>)> {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f.get("content").is_some(),
                f["note"]
                    .as_str()
                    .map(|n| n.split(' ').take(3).collect::<Vec<_>>().join(" ")),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_outputs_manifest_lists_every_file_and_inlines_what_fits() {
    let f = fixture();
    let r = report(
        &f.run(outputs_call(json!({"globs": ["$OUTPUT_DIR/*"]})))
            .await,
    );
    assert_eq!(
        listed(&r),
        [
            ("out/a.txt".to_string(), true, None),
            (
                "out/big.bin".to_string(),
                false,
                Some("too large to".to_string())
            ),
            ("out/c.csv".to_string(), true, None),
        ]
    );
    assert_eq!(r["files"][1]["size"], 60000);
    assert_eq!(r["files"][1]["mime"], "application/octet-stream");
    // Names only.
    let r = report(
        &f.run(outputs_call(json!({"globs": ["out/*"], "inline": false})))
            .await,
    );
    assert!(
        listed(&r)
            .iter()
            .all(|(_, content, note)| !content && note.is_none())
    );
    assert_eq!(r["files"][2]["mime"], "text/csv");
    // The limits: files, bytes per file, bytes in all; what is over is omitted, named.
    let r = report(
        &f.run(outputs_call(json!({"globs": ["out/*"], "max_files": 2})))
            .await,
    );
    assert_eq!(listed(&r).len(), 2);
    assert_eq!(r["files_omitted"][0]["path"], "out/c.csv");
    assert_eq!(r["files_omitted"][0]["reason"], "over the limit of 2 files");
    let r = report(
        &f.run(outputs_call(
            json!({"globs": ["out/*"], "max_file_bytes": 100}),
        ))
        .await,
    );
    assert_eq!(r["files_omitted"][0]["path"], "out/big.bin");
    assert_eq!(
        r["files_omitted"][0]["reason"],
        "over the limit of 100 bytes per file"
    );
    let r = report(
        &f.run(outputs_call(
            json!({"globs": ["out/*"], "max_total_bytes": 9}),
        ))
        .await,
    );
    assert_eq!(listed(&r).len(), 2, "a.txt and c.csv fit in 9 bytes: {r}");
    assert_eq!(
        r["files_omitted"][0]["reason"],
        "over the limit of 9 bytes in all"
    );
    // The older fields: omit_inline_content lists names only.
    let out = f
        .run(
            json!({"skill": "demo", "command": MAKE_OUTPUTS, "output_files": ["out/a.txt"],
            "omit_inline_content": true}),
        )
        .await;
    assert_eq!(
        listed(&report(&out)),
        [("out/a.txt".to_string(), false, None)]
    );
}

#[tokio::test]
async fn outputs_are_refused_with_the_reason() {
    let f = fixture();
    let cases = [
        (
            json!({"output_files": ["out/*"], "outputs": {"globs": ["out/*"]}}),
            "not both",
        ),
        (json!({"outputs": {"globs": ["../x"]}}), "outputs.globs"),
        (
            json!({"outputs": {"globs": ["out/*"], "max_files": 0}}),
            "at least 1",
        ),
        (
            json!({"outputs": {"globs": ["out/*"], "max_files": 101}}),
            "max_files is at most 100",
        ),
        (
            json!({"outputs": {"globs": ["out/*"], "max_total_bytes": 1_000_000_000}}),
            "at most 67108864",
        ),
        (
            json!({"outputs": {"globs": ["out/*"], "save": true}}),
            "needs a saved session",
        ),
        (
            json!({"outputs": {"globs": ["out/*"], "name_template": "p/"}}),
            "set saving on too",
        ),
        (
            json!({"output_files": ["out/*"], "save_as_artifacts": true}),
            "needs a saved session",
        ),
        (
            json!({"output_files": ["out/*"], "artifact_prefix": "p/"}),
            "set saving on too",
        ),
        (json!({"save_as_artifacts": true}), "give some"),
        (
            json!({"outputs": {"globs": ["out/*"], "colour": "red"}}),
            "unknown field",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = json!({"skill": "demo", "command": "true"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        let out = f.run(args.clone()).await;
        assert!(out.is_error, "{args}");
        assert!(out.content.contains(expected), "{args}: {}", out.content);
    }
}

#[tokio::test]
async fn saved_outputs_become_versioned_artifacts_that_inputs_read_back() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = f.ctx();
    ctx.artifacts = Some(crate::artifacts::ArtifactStore::new(
        dir.path().join("s.artifacts"),
    ));
    let tool = f.tool(unrestricted());
    let make = |text: &str| {
        json!({"skill": "demo", "command": format!("printf '{text}' > \"$OUTPUT_DIR/chart.txt\""),
            "outputs": {"globs": ["out/*"], "save": true, "name_template": "plots/"}})
    };
    let r = report(&tool.run(make("first"), &ctx).await.unwrap());
    assert_eq!(
        r["artifact_files"],
        json!([{"name": "plots/chart.txt", "version": 1}])
    );
    let r = report(&tool.run(make("second"), &ctx).await.unwrap());
    assert_eq!(
        r["artifact_files"],
        json!([{"name": "plots/chart.txt", "version": 2}])
    );
    // The older fields save too.
    let older = json!({"skill": "demo", "command": "echo x > \"$OUTPUT_DIR/y.txt\"",
        "output_files": ["out/y.txt"], "save_as_artifacts": true, "omit_inline_content": true});
    let r = report(&tool.run(older, &ctx).await.unwrap());
    assert_eq!(
        r["artifact_files"],
        json!([{"name": "y.txt", "version": 1}])
    );
    assert!(r["files"][0].get("content").is_none());
    // artifact:// inputs: the latest version, or the one named.
    let read = |from: &str| {
        json!({"skill": "demo", "command": "cat \"$WORK_DIR/inputs/chart.txt\"",
            "inputs": [{"from": from}]})
    };
    for (from, stdout) in [
        ("artifact://plots/chart.txt", "second"),
        ("artifact://plots/chart.txt@1", "first"),
    ] {
        let r = report(&tool.run(read(from), &ctx).await.unwrap());
        assert_eq!(r["stdout"], stdout, "{from}");
    }
    let missing = tool
        .run(read("artifact://plots/chart.txt@3"), &ctx)
        .await
        .unwrap();
    assert!(missing.is_error);
    assert!(
        missing.content.contains(
            "no artifact plots/chart.txt@3 in this session (saved: plots/chart.txt, y.txt)"
        ),
        "{}",
        missing.content
    );
}
