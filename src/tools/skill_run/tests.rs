//! Tests for `skill_run`: environment, folders, refusals, timeouts, output files and
//! the allow and deny lists.
use super::*;
use crate::skills::Catalog;
use crate::test_support::{assert_contains, roots_catalog, write};
use crate::tools::{Tool, assert_error, prepared, test_context};
use serde_json::json;
use std::sync::Arc;

/// What a call would touch; a call whose arguments do not parse asks for nothing.
pub(super) fn access(tool: &SkillRun, args: &Value, ctx: &ToolContext) -> Access {
    match tool.prepare(args.clone()) {
        Ok(call) => call.access(ctx),
        Err(_) => Access::ReadOnly,
    }
}
use tokio::time::Instant;

/// A skills root with skill `demo` (with a `scripts/` folder) and `other`.
pub(super) struct Fixture {
    _root: tempfile::TempDir,
    _empty: tempfile::TempDir,
    pub(super) project: tempfile::TempDir,
    catalog: Arc<Catalog>,
    pub(super) demo_dir: PathBuf,
}

pub(super) fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    for name in ["demo", "other"] {
        let dir = root.path().join(name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        write(
            &dir.join("SKILL.md"),
            &format!("---\nname: {name}\ndescription: Use for tests\n---\nBody\n"),
        );
    }
    let empty = tempfile::tempdir().unwrap();
    let catalog = roots_catalog(empty.path(), vec![root.path().to_path_buf()], Vec::new());
    assert!(catalog.get("demo").is_some(), "{:?}", catalog.warnings());
    let demo_dir = std::fs::canonicalize(root.path().join("demo")).unwrap();
    Fixture {
        _root: root,
        _empty: empty,
        project: tempfile::tempdir().unwrap(),
        catalog: Arc::new(catalog),
        demo_dir,
    }
}

impl Fixture {
    pub(super) fn tool(&self, commands: CommandLists) -> SkillRun {
        SkillRun::new(self.catalog.clone(), commands)
    }
    pub(super) fn ctx(&self) -> ToolContext {
        test_context(self.project.path())
    }
    /// Runs an unrestricted `skill_run` with `args` in the project.
    pub(super) async fn run(&self, args: Value) -> ToolOutput {
        self.tool(unrestricted())
            .run(args, &self.ctx())
            .await
            .unwrap()
    }
}

/// Runs `command` in skill `demo` with `tool`.
async fn run_demo(tool: &SkillRun, ctx: &ToolContext, command: &str) -> ToolOutput {
    let args = json!({"skill": "demo", "command": command});
    tool.run(args, ctx).await.unwrap()
}

pub(super) fn unrestricted() -> CommandLists {
    CommandLists::default()
}

pub(super) fn report(out: &ToolOutput) -> Value {
    serde_json::from_str(&out.content).unwrap_or_else(|e| panic!("{e}: {}", out.content))
}

/// The values of `keys` in each object of the array `items`, one row per object
/// (`null` where a key is missing).
pub(super) fn rows(items: &Value, keys: &[&str]) -> Value {
    let items = items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items}"));
    items
        .iter()
        .map(|item| keys.iter().map(|k| item[*k].clone()).collect::<Value>())
        .collect()
}

use crate::exec::test_support::expect_killed;
use crate::tools::cancel_and_expect_interrupted;

#[tokio::test]
async fn runs_in_a_workspace_copy_of_the_skill_with_the_design_s_variables() {
    let f = fixture();
    write(&f.demo_dir.join("scripts/tool.sh"), "echo tool\n");
    let out = f
        .run(json!({
            "skill": "demo",
            "command": "pwd; echo \"$SKILL_NAME|$SKILL_DIR|$GREETING\"; echo \"$WORKSPACE_DIR\"; \
                        echo \"$SKILLS_DIR|$WORK_DIR|$OUTPUT_DIR|$RUN_DIR|$TMPDIR\"; \
                        ls \"$WORK_DIR\" | tr '\\n' ' '; echo; ls . | tr '\\n' ' '; echo; \
                        echo changed > SKILL.md; touch new-file; echo oops >&2; exit 3",
            "env": {"GREETING": "hi there"}
        }))
        .await;
    assert!(out.is_error, "exit 3 is an error");
    let r = report(&out);
    let stdout = r["stdout"].as_str().unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let ws = PathBuf::from(lines[2]);
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    assert!(ws.starts_with(&temp), "{}", ws.display());
    let staged = ws.join("skills/demo");
    assert_eq!(lines[0], staged.display().to_string(), "runs in the copy");
    assert_eq!(lines[1], format!("demo|{}|hi there", staged.display()));
    let p = |rel: &str| ws.join(rel).display().to_string();
    assert_eq!(
        lines[3],
        [
            p("skills"),
            p("work"),
            p("out"),
            lines[3].split('|').nth(3).unwrap().to_string(),
            p("tmp")
        ]
        .join("|")
    );
    assert!(
        lines[3]
            .split('|')
            .nth(3)
            .unwrap()
            .starts_with(&p("runs/run-"))
    );
    assert_eq!(
        lines[4], "inputs ",
        "the work folder starts with its inputs folder"
    );
    assert_eq!(lines[5], "SKILL.md inputs out scripts work ");
    assert_eq!(r["stderr"], "oops\n");
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["timed_out"], false);
    assert!(r["duration_ms"].is_u64());
    assert!(r.get("files").is_none());
    assert!(!ws.exists(), "the workspace is removed after the call");
    // The skill's own folder is never changed, whatever the command writes in its copy.
    let original = std::fs::read_to_string(f.demo_dir.join("SKILL.md")).unwrap();
    assert!(original.starts_with("---\nname: demo"), "{original}");
    assert!(!f.demo_dir.join("new-file").exists());

    // cwd below the skill folder, in the copy; each call gets its own workspace.
    let out = f
        .run(json!({"skill": "demo", "command": "pwd; sh tool.sh", "cwd": "scripts"}))
        .await;
    assert!(!out.is_error, "{}", out.content);
    let stdout = report(&out)["stdout"].as_str().unwrap().to_string();
    assert!(stdout.ends_with("/skills/demo/scripts\ntool\n"), "{stdout}");
    assert!(!stdout.starts_with(&ws.display().to_string()));
}

#[tokio::test]
async fn refuses_escapes_unknown_skills_and_reserved_variables() {
    let f = fixture();
    std::os::unix::fs::symlink(f.project.path(), f.demo_dir.join("out")).unwrap();
    let tool = f.tool(unrestricted());
    let ctx = f.ctx();
    let cases = [
        (
            json!({"skill": "demo", "command": "pwd", "cwd": ".."}),
            "outside the skill",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "cwd": "scripts/../../other"}),
            "outside the skill",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "cwd": "out"}),
            "outside the skill",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "cwd": "/tmp"}),
            "relative",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "cwd": "nope"}),
            "does not exist",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "env": {"SKILL_DIR": "/"}}),
            "set by skill_run",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "env": {"LD_PRELOAD": "x.so"}}),
            "refused",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "env": {"PATH": "/tmp"}}),
            "refused",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "env": {"N": 1}}),
            "must be a string",
        ),
        (
            json!({"skill": "demo", "command": "pwd", "output_files": ["../x"]}),
            "relative to the workspace",
        ),
        (
            json!({"skill": "dem", "command": "pwd"}),
            "Unknown skill \"dem\". Available skills: demo, other",
        ),
        (
            json!({"skill": "../demo", "command": "pwd"}),
            "without path separators",
        ),
        (json!({"skill": "demo", "command": " "}), "command is empty"),
        (json!({"skill": "demo"}), "missing field `command`"),
    ];
    for (args, expected) in cases {
        assert_eq!(access(&tool, &args, &ctx), Access::ReadOnly, "{args}");
        let out = tool.run(args.clone(), &ctx).await.unwrap();
        assert!(out.is_error, "{args}");
        assert!(out.content.contains(expected), "{args}: {}", out.content);
    }
    // A `..` that stays inside is fine.
    let out = tool
        .run(
            json!({"skill": "demo", "command": "pwd", "cwd": "scripts/.."}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
}

#[tokio::test]
async fn access_declares_the_command_with_its_variables_and_folder() {
    let f = fixture();
    let tool = f.tool(unrestricted());
    assert_eq!(
        prepared(
            &tool,
            json!({"skill": "demo", "command": "./run.sh", "cwd": "scripts", "env": {"MODE": "fast lane"}})
        )
        .access(&f.ctx()),
        Access::NeedsApproval(ApprovalRequestKind::Command {
            command: "MODE='fast lane' ./run.sh".into(),
            cwd: f.demo_dir.join("scripts"),
        })
    );
    assert_eq!(
        prepared(
            &tool,
            json!({"skill": "demo", "command": "make all\nmake test"})
        )
        .summary(),
        "demo: make all ..."
    );
}

#[tokio::test]
async fn timeout_kills_the_group_and_returns_promptly() {
    let f = fixture();
    let started = Instant::now();
    let out = f
        .run(json!({
            "skill": "demo",
            "command": "sleep 300 & echo $! > \"$PIDS/bg.pid\"; echo started; sleep 300",
            "env": {"PIDS": f.project.path().to_str().unwrap()},
            "timeout": 1
        }))
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.is_error);
    let r = report(&out);
    assert_eq!(r["timed_out"], true);
    assert_eq!(r["exit_code"], Value::Null);
    assert_eq!(r["stdout"], "started\n");
    expect_killed(
        &f.project.path().join("bg.pid"),
        "the background job to die",
    )
    .await;
}

#[tokio::test]
async fn leftovers_are_killed_when_the_command_exits() {
    let f = fixture();
    let out = f
        .run(json!({
            "skill": "demo",
            "command": "sleep 300 >/dev/null 2>&1 & echo $! > \"$PIDS/bg.pid\"; echo done",
            "env": {"PIDS": f.project.path().to_str().unwrap()}
        }))
        .await;
    assert!(!out.is_error, "{}", out.content);
    expect_killed(&f.project.path().join("bg.pid"), "the leftover job to die").await;
}

#[tokio::test]
async fn cancel_returns_promptly_kills_the_group_and_removes_the_work_folder() {
    let f = fixture();
    let tool = Arc::new(f.tool(unrestricted()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut ctx = f.ctx();
    ctx.live_output = Some(tx);
    let cancel = ctx.cancel.clone();
    let pids = f.project.path().to_str().unwrap().to_string();
    let task = tokio::spawn({
        let tool = tool.clone();
        async move {
            tool.run(
                json!({
                    "skill": "demo",
                    "command": "sleep 300 & echo $! > \"$PIDS/bg.pid\"; echo \"$WORK_DIR\"; sleep 300",
                    "env": {"PIDS": pids}
                }),
                &ctx,
            )
            .await
        }
    });
    let mut seen = String::new();
    while !seen.ends_with('\n') {
        seen.push_str(&rx.recv().await.unwrap());
    }
    let work = PathBuf::from(seen.trim_end());
    assert!(work.is_dir());
    cancel_and_expect_interrupted(&cancel, task).await;
    expect_killed(
        &f.project.path().join("bg.pid"),
        "the background job to die",
    )
    .await;
    assert!(!work.exists());
}

#[tokio::test]
async fn output_files_come_back_inline_with_mime_types_and_limits() {
    let f = fixture();
    let tool = f.tool(unrestricted());
    let command = "printf 'a,b\\n1,2\\n' > \"$OUTPUT_DIR/table.csv\"; \
                   printf '\\211PNG\\r\\n\\032\\n\\000' > \"$OUTPUT_DIR/dot.png\"; \
                   printf 'plain' > \"$OUTPUT_DIR/notes\"; \
                   mkdir \"$OUTPUT_DIR/deep\"; echo '{}' > \"$OUTPUT_DIR/deep/x.json\"; \
                   echo skipped > \"$WORK_DIR/elsewhere.txt\"";
    let out = f.run(json!({"skill": "demo", "command": command, "output_files": ["output/*", "$OUTPUT_DIR/**/*.json"]})).await;
    assert!(!out.is_error, "{}", out.content);
    let r = report(&out);
    assert_eq!(
        rows(&r["files"], &["path", "mime", "encoding"]),
        json!([
            ["out/deep/x.json", "application/json", "utf-8"],
            ["out/dot.png", "image/png", "base64"],
            ["out/notes", "text/plain", "utf-8"],
            ["out/table.csv", "text/csv", "utf-8"],
        ])
    );
    let files = r["files"].as_array().unwrap();
    assert_eq!(files[1]["content"], "iVBORw0KGgoA");
    assert_eq!(files[1]["size"], 9);
    assert_eq!(files[3]["content"], "a,b\n1,2\n");
    assert!(r.get("files_omitted").is_none());

    // Count limit: 25 files, 20 returned, the rest named.
    let out = f.run(json!({"skill": "demo", "command": "cd \"$OUTPUT_DIR\" && for i in $(seq 10 34); do echo $i > f$i.txt; done", "output_files": ["out/*.txt"]})).await;
    let r = report(&out);
    assert_eq!(r["files"].as_array().unwrap().len(), MAX_FILES);
    assert_eq!(r["files"][19]["path"], "out/f29.txt");
    let omitted = r["files_omitted"].as_array().unwrap();
    assert_eq!(omitted.len(), 5);
    assert_eq!(omitted[0]["path"], "out/f30.txt");
    assert!(
        omitted[0]["reason"].as_str().unwrap().contains("20 files"),
        "{}",
        omitted[0]
    );

    // Byte limit: the whole report stays within the output limit.
    let mut ctx = f.ctx();
    ctx.limits.max_output_bytes = 6_000;
    let out = tool
        .run(
            json!({"skill": "demo", "command": "head -c 1000 /dev/zero | tr '\\0' a > \"$OUTPUT_DIR/a.txt\"; head -c 4000 /dev/zero > \"$OUTPUT_DIR/b.bin\"; seq 1 5000", "output_files": ["output/*"]}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(out.content.len() <= 6_000, "{}", out.content.len());
    let r = report(&out);
    assert_eq!(r["files"][0]["path"], "out/a.txt");
    assert_eq!(r["files"].as_array().unwrap().len(), 1);
    assert_eq!(r["files_omitted"][0]["path"], "out/b.bin");
    assert_eq!(r["files_omitted"][0]["size"], 4000);
    assert!(
        r["files_omitted"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("too large"),
        "{}",
        r["files_omitted"][0]
    );
    let stdout = r["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("1\n2\n") && stdout.ends_with("5000\n"));
    assert!(stdout.contains(" cut ...]"), "stdout keeps head and tail");
}

fn lists(allowed: Option<&[&str]>, denied: Option<&[&str]>) -> CommandLists {
    let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    CommandLists {
        allowed: allowed.map(owned),
        denied: denied.map(owned),
    }
}

#[tokio::test]
async fn allow_list_runs_listed_plain_commands_without_a_shell() {
    let f = fixture();
    let tool = f.tool(lists(Some(&["echo", "printf"]), None));
    assert!(TypedTool::description(&tool).contains("Allowed: echo, printf."));
    let ctx = f.ctx();
    let out = run_demo(&tool, &ctx, "echo \"a;b\" '$HOME' c\\ d").await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(report(&out)["stdout"], "a;b $HOME c d\n");
    let out = run_demo(&tool, &ctx, "/bin/echo hi").await;
    assert_eq!(report(&out)["stdout"], "hi\n");
    assert!(matches!(
        prepared(&tool, json!({"skill": "demo", "command": "echo hi"})).access(&ctx),
        Access::NeedsApproval(_)
    ));

    let refused = [
        (
            "ls -la",
            "`ls` is not on skill_run's allow list. Allowed commands: echo, printf.",
        ),
        ("echo a; ls", "`;` is shell syntax"),
        ("echo a && ls", "`&&` is shell syntax"),
        ("echo a | cat", "`|` is shell syntax"),
        ("echo a > x", "`>` is shell syntax"),
        ("echo < x", "`<` is shell syntax"),
        ("echo $(id)", "`$(` is shell syntax"),
        ("echo `id`", "`` ` `` is shell syntax"),
        ("echo \"$HOME\"", "`$` is shell syntax"),
        ("echo *.md", "`*` is shell syntax"),
        ("echo a\nls", "newline"),
        ("X=1 echo", "variable assignment"),
        ("echo 'open", "unterminated"),
    ];
    for (command, expected) in refused {
        let args = json!({"skill": "demo", "command": command});
        assert_eq!(access(&tool, &args, &ctx), Access::ReadOnly, "{command}");
        let out = tool.run(args, &ctx).await.unwrap();
        assert!(out.is_error, "{command}");
        let expected = expected.replace("`` ` ``", "```");
        assert!(
            out.content.contains(&expected),
            "{command}: {}",
            out.content
        );
    }
}

#[tokio::test]
async fn deny_list_refuses_denied_commands_and_wins_over_allow() {
    let f = fixture();
    let ctx = f.ctx();
    let tool = f.tool(lists(None, Some(&["rm", "bash"])));
    for command in ["rm -rf scripts", "/bin/rm x", "bash -c id"] {
        let out = run_demo(&tool, &ctx, command).await;
        assert!(
            out.is_error && out.content.contains("deny list"),
            "{command}: {}",
            out.content
        );
    }
    assert!(f.demo_dir.join("scripts").is_dir());
    let out = run_demo(&tool, &ctx, "echo ok").await;
    assert_eq!(report(&out)["stdout"], "ok\n");
    let out = run_demo(&tool, &ctx, "echo a | cat").await;
    assert_contains(&out.content, "shell syntax");

    let tool = f.tool(lists(Some(&["rm"]), Some(&["rm"])));
    let out = run_demo(&tool, &ctx, "rm x").await;
    assert_contains(&out.content, "deny list");

    // A program that does not exist is an error for the model, not a failure.
    let tool = f.tool(lists(Some(&["no-such-program-h9"]), None));
    let out = run_demo(&tool, &ctx, "no-such-program-h9").await;
    assert_error(&out, "Failed to start");
}

#[test]
fn schema_is_concise() {
    let f = fixture();
    for commands in [
        unrestricted(),
        lists(Some(&["python3", "node", "make"]), None),
    ] {
        let tool = f.tool(commands);
        let wire = json!({
            "type": "function",
            "function": {
                "name": TypedTool::name(&tool),
                "description": TypedTool::description(&tool),
                "parameters": TypedTool::parameters(&tool),
            }
        })
        .to_string();
        eprintln!("skill_run schema: {} bytes", wire.len());
        // Every request carries it: at most 1,024 bytes until `inputs` and `outputs`
        // joined (1,063 unrestricted now, 1,134 with this allow list).
        assert!(wire.len() <= 1152, "{} bytes", wire.len());
    }
}
