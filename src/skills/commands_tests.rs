//! The command files' tests: naming and namespaces, precedence against skills and
//! between folders, hostile and broken files reported with their reason, links never
//! followed, and `allowed-tools` mapped to harness9's rules.

use std::path::Path;

use super::*;
use crate::skills::Catalog;
use crate::test_support::{project_catalog, write, write_skill};

fn cmd(root: &Path, rel: &str, text: &str) {
    write(&root.join(".claude/commands").join(rel), text);
}

fn reason_for<'c>(catalog: &'c Catalog, file: &str) -> &'c WarningKind {
    let bad = catalog
        .invalid()
        .iter()
        .find(|b| b.path.ends_with(file))
        .unwrap_or_else(|| panic!("{file} not reported: {:?}", catalog.invalid()));
    assert!(
        catalog
            .warnings()
            .iter()
            .any(|w| w.path == bad.path && w.kind == bad.reason),
        "the reason is a warning too"
    );
    &bad.reason
}

#[test]
fn a_command_is_a_skill_named_after_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    cmd(
        tmp.path(),
        "review.md",
        "---\nname: ignored\ndescription: Review a change\nargument-hint: [pr]\n\
         allowed-tools: Bash(git diff:*), Read\n---\nReview $ARGUMENTS\n",
    );
    cmd(
        tmp.path(),
        "plain.md",
        "\n# Fix the build\n\nThen run the tests.\n",
    );
    let c = project_catalog(tmp.path());
    let review = c.get("review").unwrap();
    assert!(c.get("ignored").is_none());
    assert_eq!(review.description, "Review a change");
    assert_eq!(review.frontmatter.argument_hint(), Some("[pr]"));
    assert_eq!(
        review.frontmatter.allowed_tools,
        ["Bash(git diff:*)", "Read"]
    );
    assert!(review.user_invocable() && review.model_invocable());
    assert_eq!(review.load_body().unwrap(), "Review $ARGUMENTS");
    assert!(review.folder().is_none());
    let plain = c.get("plain").unwrap();
    assert_eq!(plain.description, "Fix the build");
    // Without a `description` Claude Code does not offer a command to the model.
    assert!(plain.user_invocable() && !plain.model_invocable());
    assert_eq!(
        plain.load_body().unwrap(),
        "# Fix the build\n\nThen run the tests."
    );
    let index = c.index(8_000).text.unwrap();
    assert!(
        index.contains("review") && !index.contains("plain"),
        "{index}"
    );
}

#[test]
fn disable_model_invocation_keeps_a_command_out_of_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    cmd(
        tmp.path(),
        "deploy.md",
        "---\ndescription: Deploy\ndisable-model-invocation: true\n---\nDeploy now\n",
    );
    let c = project_catalog(tmp.path());
    let deploy = c.get("deploy").unwrap();
    assert!(deploy.user_invocable() && !deploy.model_invocable());
}

#[test]
fn hostile_frontmatter_is_reported_with_path_and_reason_never_loaded() {
    let tmp = tempfile::tempdir().unwrap();
    let big = format!(
        "---\ndescription: big\n---\n{}",
        "x".repeat(MAX_COMMAND_BYTES)
    );
    let files: Vec<(&str, String)> = vec![
        (
            "unclosed.md",
            "---\ndescription: never closed\nbody\n".into(),
        ),
        (
            "escape.md",
            "---\ndescription: \"title \\e]0;pwned\\a\"\n---\nbody\n".into(),
        ),
        ("first-line-escape.md", "\u{1b}]0;pwned\u{7}\nbody\n".into()),
        ("my cmd.md", "---\ndescription: spaces\n---\nbody\n".into()),
        ("big.md", big),
        ("empty.md", "---\ndescription: nothing\n---\n\n".into()),
        ("blank.md", "   \n\n".into()),
    ];
    for (name, text) in &files {
        cmd(tmp.path(), name, text);
    }
    std::fs::write(
        tmp.path().join(".claude/commands/latin1.md"),
        b"caf\xe9 command\n",
    )
    .unwrap();
    // A billion-laughs document and a list instead of a mapping still parse (within
    // the YAML budgets) into a usable command or a report, never a hang or a panic.
    let mut laughs = String::from("---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for i in 0..12 {
        let prev = if i == 0 {
            "a".to_string()
        } else {
            format!("l{}", i - 1)
        };
        laughs.push_str(&format!(
            "l{i}: &l{i} [*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
    }
    laughs.push_str("---\nLaugh.\n");
    cmd(tmp.path(), "laughs.md", &laughs);
    cmd(tmp.path(), "list.md", "---\n- a\n- b\n---\nList body\n");
    let c = project_catalog(tmp.path());
    assert!(matches!(
        reason_for(&c, "unclosed.md"),
        WarningKind::BadFrontmatter { .. }
    ));
    assert!(matches!(
        reason_for(&c, "escape.md"),
        WarningKind::InvalidDescription { found: '\u{1b}' }
    ));
    assert!(matches!(
        reason_for(&c, "first-line-escape.md"),
        WarningKind::InvalidDescription { .. }
    ));
    assert!(matches!(
        reason_for(&c, "my cmd.md"),
        WarningKind::InvalidName { .. }
    ));
    assert_eq!(
        reason_for(&c, "big.md"),
        &WarningKind::CommandTooLarge {
            limit: MAX_COMMAND_BYTES
        }
    );
    assert_eq!(reason_for(&c, "empty.md"), &WarningKind::EmptyCommand);
    assert_eq!(reason_for(&c, "blank.md"), &WarningKind::EmptyCommand);
    assert!(matches!(
        reason_for(&c, "latin1.md"),
        WarningKind::Unreadable { .. }
    ));
    for usable in ["laughs", "list"] {
        let skill = c.get(usable).unwrap_or_else(|| panic!("{usable}"));
        assert!(!skill.model_invocable(), "{usable}: no description given");
    }
    let names: Vec<&str> = c.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["laughs", "list"]);
}

#[test]
fn subfolders_label_but_do_not_rename_and_the_nearer_file_wins() {
    let tmp = tempfile::tempdir().unwrap();
    cmd(tmp.path(), "frontend/build.md", "Build the frontend\n");
    cmd(tmp.path(), "frontend/lint.md", "Lint the frontend\n");
    cmd(tmp.path(), "backend/db/migrate.md", "Migrate\n");
    cmd(tmp.path(), "build.md", "Build everything\n");
    let c = project_catalog(tmp.path());
    let build = c.get("build").unwrap();
    assert_eq!(build.description, "Build everything");
    let lint = c.get("lint").unwrap();
    assert_eq!(lint.description, "Lint the frontend (project:frontend)");
    assert_eq!(
        c.get("migrate").unwrap().description,
        "Migrate (project:backend:db)"
    );
    let shadowed = &c.shadowed()[0];
    assert!(shadowed.path.ends_with("frontend/build.md"));
    assert!(
        matches!(&shadowed.status, SkillStatus::Shadowed { by } if by.ends_with(".claude/commands/build.md"))
    );
}

#[test]
fn skills_win_over_commands_and_the_working_folder_over_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let sub = root.join("services/api");
    write_skill(&root, "ship", "", "The skill body");
    cmd(&root, "ship.md", "The command body\n");
    cmd(&root, "test.md", "Root tests\n");
    cmd(&sub, "test.md", "API tests\n");
    write(&root.join(".agents/commands/agents.md"), "From .agents\n");
    let c = Catalog::discover_uncached(&DiscoveryOptions {
        workdir: sub.clone(),
        project_root: root.clone(),
        harness9_home: root.join("h9"),
        ..DiscoveryOptions::default()
    });
    // The root's skills/ is found from the sub folder too.
    assert_eq!(c.get("ship").unwrap().kind, SkillKind::Folder);
    assert_eq!(c.get("test").unwrap().description, "API tests");
    assert_eq!(c.get("agents").unwrap().description, "From .agents");
    let lost: Vec<&Path> = c.shadowed().iter().map(|s| s.path.as_path()).collect();
    assert!(lost.contains(&root.join(".claude/commands/ship.md").as_path()));
    assert!(lost.contains(&root.join(".claude/commands/test.md").as_path()));
}

#[test]
fn user_commands_come_from_the_homes() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let home = tmp.path().join("home");
    write(&home.join(".claude/commands/mine.md"), "Mine\n");
    write(&tmp.path().join("h9/commands/ours.md"), "Ours\n");
    cmd(&project, "mine.md", "The project's\n");
    let c = Catalog::discover_uncached(&DiscoveryOptions {
        workdir: project.clone(),
        harness9_home: tmp.path().join("h9"),
        user_home: Some(home),
        ..DiscoveryOptions::default()
    });
    // Project commands win over the user's, as in Claude Code.
    assert_eq!(c.get("mine").unwrap().description, "The project's");
    assert_eq!(c.get("mine").unwrap().root.kind, RootKind::Project);
    assert_eq!(c.get("ours").unwrap().root.kind, RootKind::User);
}

#[test]
fn links_are_never_followed_and_a_folder_leading_out_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    let outside = tmp.path().join("outside");
    write(&outside.join("secret.md"), "Outside text\n");
    write(&outside.join("cmds/far.md"), "Far\n");
    cmd(&project, "ok.md", "Fine\n");
    let folder = project.join(".claude/commands");
    std::os::unix::fs::symlink(outside.join("secret.md"), folder.join("leak.md")).unwrap();
    std::os::unix::fs::symlink(&outside, folder.join("sub")).unwrap();
    // A whole commands folder that is a link out of the project.
    std::fs::create_dir_all(project.join(".agents")).unwrap();
    std::os::unix::fs::symlink(outside.join("cmds"), project.join(".agents/commands")).unwrap();
    let c = project_catalog(&project);
    let names: Vec<&str> = c.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    let warned = |end: &str, kind: &WarningKind| {
        c.warnings()
            .iter()
            .any(|w| w.path.ends_with(end) && &w.kind == kind)
    };
    assert!(
        warned("leak.md", &WarningKind::CommandLink),
        "{:?}",
        c.warnings()
    );
    assert!(warned("sub", &WarningKind::CommandLink));
    assert!(
        c.warnings()
            .iter()
            .any(|w| w.path.ends_with(".agents/commands")
                && matches!(w.kind, WarningKind::OutsideProject { .. }))
    );
}

#[test]
fn the_body_is_read_again_without_following_a_link_put_in_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    cmd(tmp.path(), "swap.md", "Original\n");
    write(&tmp.path().join("secret.txt"), "SECRET\n");
    let c = project_catalog(tmp.path());
    let skill = c.get("swap").unwrap();
    let file = tmp.path().join(".claude/commands/swap.md");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("secret.txt"), &file).unwrap();
    let err = skill.load_body().unwrap_err().to_string();
    assert!(!err.contains("SECRET"), "{err}");
}

#[test]
fn the_model_field_is_reported_unsupported() {
    let tmp = tempfile::tempdir().unwrap();
    cmd(
        tmp.path(),
        "fast.md",
        "---\ndescription: d\nmodel: claude-3-5-haiku-20241022\n---\nGo\n",
    );
    let c = project_catalog(tmp.path());
    assert_eq!(c.get("fast").unwrap().status, SkillStatus::Warning);
    assert!(
        c.warnings()
            .iter()
            .any(|w| matches!(w.kind, WarningKind::Unsupported { field: "model", .. }))
    );
}

#[test]
fn allowed_tools_map_to_harness9_rules() {
    let allowed: Vec<String> = [
        "Bash(git add:*)",
        "Bash",
        "Read",
        "Edit(src/**)",
        "MultiEdit",
        "Write",
        "Grep",
        "Glob",
        "LS",
        "read_file(docs/**)",
        "mcp__github__create_issue",
        "WebFetch",
        "Task",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (rules, unknown) = grant_rules(&allowed);
    assert_eq!(
        rules,
        [
            "bash(git add:*)",
            "bash",
            "read",
            "edit(src/**)",
            "edit",
            "write_file",
            "grep",
            "glob",
            "list",
            "read_file(docs/**)",
            "mcp__github__create_issue"
        ]
    );
    assert_eq!(unknown, ["WebFetch", "Task"]);
    for rule in rules {
        crate::permissions::Rule::parse(&rule, None).unwrap();
    }
}
