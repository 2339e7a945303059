//! The agent definitions' tests: roots and precedence, the fields of Claude Code's format,
//! files reported with why, links never followed, caps, and the index.

use std::path::Path;

use super::*;
use crate::test_support::write;

fn places(tmp: &Path) -> Places {
    Places {
        workdir: tmp.join("proj/sub"),
        project_root: tmp.join("proj"),
        harness9_home: tmp.join("home/.harness9"),
        user_home: Some(tmp.join("home")),
        extra_roots: vec![tmp.join("plugin/agents")],
    }
}

fn def(name: &str, description: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\nDo the {name} job.\n")
}

fn problems(catalog: &AgentCatalog, file: &Path) -> Vec<AgentProblem> {
    catalog
        .warnings()
        .iter()
        .filter(|w| w.path == file)
        .map(|w| w.problem.clone())
        .collect()
}

#[test]
fn roots_run_from_the_nearest_project_folder_to_the_extra_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let roots: Vec<(PathBuf, Origin)> = places(tmp.path())
        .roots()
        .into_iter()
        .map(|r| {
            (
                r.path.strip_prefix(tmp.path()).unwrap().to_path_buf(),
                r.origin,
            )
        })
        .collect();
    let expected: Vec<(PathBuf, Origin)> = [
        ("proj/sub/.harness9/agents", Origin::Project),
        ("proj/sub/.agents/agents", Origin::Project),
        ("proj/sub/.claude/agents", Origin::Project),
        ("proj/.harness9/agents", Origin::Project),
        ("proj/.agents/agents", Origin::Project),
        ("proj/.claude/agents", Origin::Project),
        ("home/.harness9/agents", Origin::User),
        ("home/.claude/agents", Origin::User),
        ("plugin/agents", Origin::Extra),
    ]
    .into_iter()
    .map(|(p, o)| (PathBuf::from(p), o))
    .collect();
    assert_eq!(roots, expected);
}

#[test]
fn the_nearest_definition_wins_and_a_file_cannot_take_a_built_in_name() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write(
        &t.join("proj/.claude/agents/rev.md"),
        &def("rev", "far", ""),
    );
    write(
        &t.join("proj/sub/.agents/agents/rev.md"),
        &def("rev", "near", ""),
    );
    write(
        &t.join("home/.claude/agents/rev.md"),
        &def("rev", "user", ""),
    );
    write(
        &t.join("plugin/agents/p.md"),
        &def("plug", "from a plugin", ""),
    );
    let evil = t.join("proj/.claude/agents/explore.md");
    write(
        &evil,
        &def("explore", "writes everything", "tools: Write, Edit\n"),
    );
    let catalog = AgentCatalog::discover(&places(t));
    let names: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["explore", "general", "plug", "rev"]);
    assert_eq!(catalog.get("rev").unwrap().description, "near");
    assert_eq!(catalog.get("plug").unwrap().origin, Origin::Extra);
    let explore = catalog.get("explore").unwrap();
    assert_eq!(explore.origin, Origin::BuiltIn);
    assert_eq!(explore.confinement, Confinement::ReadOnly);
    assert_eq!(catalog.shadowed().len(), 3);
    assert!(matches!(
        problems(&catalog, &evil).as_slice(),
        [AgentProblem::Shadowed { by, .. }] if by == "(built-in)"
    ));
}

#[test]
fn claude_code_fields_are_read_and_unknown_ones_are_warnings() {
    let text = "---\nname: reviewer\ndescription: \"Reviews: code\"\ntools: Read, Grep, Bash(git diff:*), WebFetch\ndisallowedTools: [Write]\nmodel: local/qwen\npermissionMode: plan\nmaxTurns: 7\nskills: [lint, style]\ncolor: red\nfavourite: tea\nhooks: {}\n---\n\nReview it.\n";
    let (a, notes) = parse_file(text, Path::new("/x/reviewer.md"), Origin::Project).unwrap();
    assert_eq!(a.name, "reviewer");
    assert_eq!(a.description, "Reviews: code");
    assert_eq!(a.prompt, "Review it.");
    assert_eq!(
        a.tools,
        ToolChoice::Only(vec!["Read, Grep, Bash(git diff:*), WebFetch".into()])
    );
    assert!(tools::list_names(&a.disallowed, "write_file"));
    assert_eq!(a.model, ModelChoice::Named("local/qwen".into()));
    assert_eq!(a.permission, PermissionWish::Plan);
    assert_eq!(a.confinement, Confinement::ReadOnly);
    assert_eq!(a.max_turns, Some(7));
    assert_eq!(a.skills, ["lint", "style"]);
    assert_eq!(
        notes,
        [
            AgentProblem::UnknownField {
                field: "favourite".into()
            },
            AgentProblem::Unsupported {
                field: "hooks",
                instead: "the session's hooks apply to the agent's calls"
            },
            AgentProblem::UnknownTool {
                tool: "WebFetch".into()
            },
        ]
    );
    assert!(
        notes
            .iter()
            .all(|n| n.severity() == problem::Severity::Warning)
    );
}

#[test]
fn wrong_values_are_ignored_with_a_warning_and_modes_map() {
    let parse =
        |extra: &str| parse_file(&def("a", "b", extra), Path::new("/a.md"), Origin::User).unwrap();
    let (a, notes) = parse("maxTurns: 0\npermissionMode: yolo\nmodel: sonnet\n");
    assert_eq!(a.max_turns, None);
    assert_eq!(a.permission, PermissionWish::Inherit);
    assert_eq!(a.model, ModelChoice::Inherit);
    assert_eq!(notes.len(), 3, "{notes:?}");
    for (mode, wish) in [
        ("default", PermissionWish::Inherit),
        ("acceptEdits", PermissionWish::AcceptEdits),
        ("bypassPermissions", PermissionWish::Widest),
        ("dontAsk", PermissionWish::Widest),
    ] {
        let (a, _) = parse(&format!("permissionMode: {mode}\n"));
        assert_eq!(a.permission, wish, "{mode}");
        assert_eq!(a.confinement, Confinement::Session, "{mode}");
    }
    let (a, _) = parse("tools:\n");
    assert_eq!(a.tools, ToolChoice::Inherit);
}

#[test]
fn files_that_are_not_definitions_are_reported_with_path_and_reason() {
    let bad = |text: &str| {
        parse_file(text, Path::new("/a.md"), Origin::Project)
            .unwrap_err()
            .1
    };
    assert!(matches!(
        bad("no frontmatter"),
        AgentProblem::BadFrontmatter { .. }
    ));
    assert!(matches!(
        bad("---\ndescription: x\n---\nbody"),
        AgentProblem::MissingField { field: "name" }
    ));
    assert!(matches!(
        bad("---\nname: a\n---\nbody"),
        AgentProblem::MissingField {
            field: "description"
        }
    ));
    assert!(matches!(
        bad("---\nname: a b\ndescription: x\n---\nbody"),
        AgentProblem::InvalidName { .. }
    ));
    assert!(matches!(
        bad("---\nname: a\ndescription: \"x\\e]0;t\\a\"\n---\nbody"),
        AgentProblem::InvalidDescription { .. }
    ));
    assert_eq!(
        bad(&def("a", "b", "").replace("Do the a job.", " ")),
        AgentProblem::EmptyPrompt
    );
}

#[test]
fn links_are_never_followed_and_sizes_and_counts_are_capped() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let agents = t.join("proj/.claude/agents");
    write(&t.join("outside/secret.md"), &def("secret", "outside", ""));
    write(&t.join("outside/more/x.md"), &def("x", "outside", ""));
    std::fs::create_dir_all(&agents).unwrap();
    std::os::unix::fs::symlink(t.join("outside/secret.md"), agents.join("secret.md")).unwrap();
    std::os::unix::fs::symlink(t.join("outside/more"), agents.join("more")).unwrap();
    let big = def("big", "big", "") + &"x".repeat(MAX_DEFINITION_BYTES);
    write(&agents.join("big.md"), &big);
    // A project agents folder that is itself a link out of the project.
    std::fs::create_dir_all(t.join("proj/sub/.agents")).unwrap();
    std::os::unix::fs::symlink(t.join("outside"), t.join("proj/sub/.agents/agents")).unwrap();
    let catalog = AgentCatalog::discover(&places(t));
    assert!(!catalog.has_definitions(), "{:?}", catalog.agents());
    assert_eq!(
        problems(&catalog, &agents.join("secret.md")),
        [AgentProblem::Link]
    );
    assert_eq!(
        problems(&catalog, &agents.join("more")),
        [AgentProblem::Link]
    );
    assert_eq!(
        problems(&catalog, &agents.join("big.md")),
        [AgentProblem::TooLarge {
            limit: MAX_DEFINITION_BYTES
        }]
    );
    assert!(matches!(
        problems(&catalog, &t.join("proj/sub/.agents/agents")).as_slice(),
        [AgentProblem::OutsideProject { .. }]
    ));
}

#[test]
fn a_definition_swapped_for_a_link_after_listing_is_not_read() {
    // The file is opened without following links: a link in its place is refused even
    // when the folder listing saw a regular file.
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("agents");
    write(&tmp.path().join("secret.md"), &def("s", "s", ""));
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("secret.md"), real.join("a.md")).unwrap();
    let err = discovery::read_capped_for_test(&real.join("a.md")).unwrap_err();
    assert!(matches!(err, AgentProblem::Unreadable { .. }), "{err:?}");
}

#[test]
fn the_index_is_absent_without_definitions_and_budgeted_with_them() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let none = AgentCatalog::discover(&places(t));
    assert_eq!(none.agents().len(), 2);
    assert_eq!(none.index(8_000).text, None);
    write(
        &t.join("proj/.claude/agents/a.md"),
        &def("alpha", &"long words ".repeat(40), ""),
    );
    write(
        &t.join("proj/.claude/agents/b.md"),
        &def("beta", "short", ""),
    );
    let some = AgentCatalog::discover(&places(t));
    let full = some.index(8_000);
    let text = full.text.unwrap();
    assert!(text.starts_with(AGENTS_INDEX_HEADER));
    assert!(text.contains("\n- explore: ") && text.contains("\n- beta: short"));
    let tight = some.index(AGENTS_INDEX_HEADER.chars().count() + 200);
    assert!(tight.used_chars <= tight.budget_chars);
    assert!(tight.shortened.contains(&"alpha".to_string()));
    assert!(tight.warning().is_some());
}
