//! Tests of the hook configuration: formats, matchers, hostile files and input shape.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::*;

fn origin(kind: OriginKind) -> Origin {
    Origin {
        kind,
        path: PathBuf::from("/p/.claude/settings.json"),
    }
}

fn json_hooks(text: &str) -> (HookSet, Vec<HookFileError>) {
    parse_json_settings(text, &origin(OriginKind::ClaudeSettings))
}

fn commands(set: &HookSet, event: Event, target: Target<'_>) -> Vec<String> {
    set.select(event, target)
        .iter()
        .map(|s| s.hook.command.clone())
        .collect()
}

fn tool(name: &str) -> Target<'_> {
    Target::Tool { name }
}

#[test]
fn claude_settings_load_with_other_keys_ignored() {
    let (set, problems) = json_hooks(
        r#"{"permissions": {"allow": ["Bash(ls)"]}, "model": "x",
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "guard.sh", "timeout": 5, "on_error": "deny"},
                {"type": "command", "command": "log.sh", "description": "logs"}]}],
              "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}]}}"#,
    );
    assert!(problems.is_empty(), "{problems:?}");
    let chosen = set.select(Event::PreToolUse, tool("bash"));
    assert_eq!(chosen.len(), 2);
    assert_eq!(chosen[0].hook.timeout, Duration::from_secs(5));
    assert_eq!(chosen[0].hook.on_error, OnError::Deny);
    assert_eq!(chosen[1].hook.timeout, DEFAULT_TIMEOUT);
    assert_eq!(chosen[1].hook.on_error, OnError::Continue);
    assert!(commands(&set, Event::PreToolUse, tool("read_file")).is_empty());
    assert_eq!(commands(&set, Event::Stop, Target::Nothing), ["stop.sh"]);
    assert_eq!(set.count(Event::PreToolUse), 2);
    assert!(!set.is_empty());
}

#[test]
fn a_settings_file_without_hooks_loads_nothing_and_says_nothing() {
    for text in [r#"{}"#, r#"{"hooks": null}"#, r#"{"hooks": {}}"#] {
        let (set, problems) = json_hooks(text);
        assert!(set.is_empty() && problems.is_empty(), "{text}");
    }
}

#[test]
fn matchers_take_harness9_and_claude_code_names() {
    let cases: &[(&str, &str, bool)] = &[
        ("Bash", "bash", true),
        ("bash", "bash", true),
        ("Bash", "Bash", true),
        ("BASH", "bash", false),
        ("Bash", "bash_extra", false),
        ("Edit|Write", "edit_file", true),
        ("Edit|Write", "write_file", true),
        ("Edit|Write", "read_file", false),
        ("Edit|MultiEdit|Write", "write_file", true),
        ("Read", "read_file", true),
        ("Glob", "glob", true),
        ("Grep", "grep", true),
        ("LS", "list", true),
        ("*", "anything", true),
        ("", "anything", true),
        ("mcp__github__.*", "mcp__github__create_issue", true),
        ("mcp__github__.*", "mcp__gitlab__create_issue", false),
        // A bare prefix is a name, as in Claude Code: it matches no tool.
        ("mcp__github", "mcp__github__create_issue", false),
        ("mcp__.*__write.*", "mcp__fs__write_file", true),
        ("Notebook.*", "NotebookEdit", true),
        ("^Bash$", "bash", true),
        ("^Bash$", "Bashful", false),
    ];
    for (matcher, name, expected) in cases {
        let m = Matcher::compile(Some(matcher)).unwrap();
        assert_eq!(m.takes(tool(name)), *expected, "{matcher} vs {name}");
    }
    assert!(Matcher::compile(None).unwrap().takes(tool("x")));
}

#[test]
fn kind_matchers_take_the_kind_and_prompt_events_ignore_matchers() {
    let (set, problems) = json_hooks(
        r#"{"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "s"}]}],
            "UserPromptSubmit": [{"matcher": "never", "hooks": [{"type": "command", "command": "p"}]}]}}"#,
    );
    assert!(problems.is_empty());
    assert_eq!(
        commands(&set, Event::SessionStart, Target::Kind { kind: "startup" }),
        ["s"]
    );
    assert!(commands(&set, Event::SessionStart, Target::Kind { kind: "resume" }).is_empty());
    assert_eq!(
        commands(&set, Event::UserPromptSubmit, Target::Nothing),
        ["p"]
    );
}

#[test]
fn every_event_name_round_trips_and_others_are_reported() {
    for event in Event::ALL {
        assert_eq!(Event::from_name(event.name()), Some(event));
    }
    assert_eq!(Event::from_name("pretooluse"), None);
    let (set, problems) = json_hooks(
        r#"{"hooks": {"preToolUse": [{"hooks": [{"type": "command", "command": "x"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "y"}]}]}}"#,
    );
    assert_eq!(set.count(Event::Stop), 1, "the good event still loads");
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].problem,
        Problem::UnknownEvent {
            event: "preToolUse".into()
        }
    );
    assert!(
        problems[0]
            .to_string()
            .starts_with("/p/.claude/settings.json: ")
    );
}

#[test]
fn unusable_entries_are_each_reported_never_dropped_silently() {
    let (set, problems) = json_hooks(
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "prompt", "prompt": "judge"},
            {"type": "http", "url": "http://x"},
            {"type": "command"},
            {"type": "command", "command": "   "},
            {"type": "command", "command": "t", "timeout": -1},
            {"type": "command", "command": "u", "timeout": 1e300},
            {"type": "command", "command": "v", "on_error": "Deny"},
            {"type": "command", "command": "ok"}]}]}}"#,
    );
    let kinds: Vec<&Problem> = problems.iter().map(|p| &p.problem).collect();
    assert!(matches!(kinds[0], Problem::UnsupportedType { kind, .. } if kind == "prompt"));
    assert!(matches!(kinds[1], Problem::UnsupportedType { kind, .. } if kind == "http"));
    assert!(matches!(kinds[2], Problem::MissingCommand { .. }));
    assert!(matches!(kinds[3], Problem::MissingCommand { .. }));
    assert!(matches!(kinds[4], Problem::BadTimeout { .. }));
    assert!(matches!(kinds[5], Problem::BadTimeout { .. }));
    assert!(matches!(kinds[6], Problem::BadOnError { .. }));
    assert_eq!(kinds.len(), 7);
    let chosen = set.select(Event::PreToolUse, tool("bash"));
    let names: Vec<&str> = chosen.iter().map(|s| s.hook.command.as_str()).collect();
    assert_eq!(names, ["t", "u", "v", "ok"]);
    assert!(
        chosen[..2]
            .iter()
            .all(|s| s.hook.timeout == DEFAULT_TIMEOUT)
    );
    // A misspelt on_error fails closed: the hook is a guard.
    assert_eq!(chosen[2].hook.on_error, OnError::Deny);
}

#[test]
fn a_matcher_that_does_not_compile_keeps_its_guards_which_take_every_call() {
    for bad in ["Bash(", "[z-a]", "(a{1000}){1000}{1000}"] {
        let text = json!({"hooks": {"PreToolUse": [{"matcher": bad, "hooks": [
            {"type": "command", "command": "guard", "on_error": "deny"},
            {"type": "command", "command": "plain"}]}]}})
        .to_string();
        let (set, problems) = json_hooks(&text);
        assert_eq!(problems.len(), 1, "{bad}");
        assert!(matches!(problems[0].problem, Problem::BadMatcher { .. }));
        let chosen = set.select(Event::PreToolUse, tool("read_file"));
        assert_eq!(chosen.len(), 1, "{bad}: only the guard is kept");
        assert_eq!(chosen[0].hook.command, "guard");
        assert!(chosen[0].broken.is_some());
    }
    let long = "a".repeat(2000);
    assert!(matches!(
        Matcher::compile(Some(&long)),
        Err(MatcherError::TooLong { len: 2000 })
    ));
}

#[test]
fn hostile_json_is_reported_with_the_reason() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_hooks = format!(r#"{{"hooks": {deep}}}"#);
    for text in [
        "",
        "not json",
        r#"{"hooks": "rm -rf /"}"#,
        r#"{"hooks": {"PreToolUse": {"matcher": "Bash"}}}"#,
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"command": "no type"}]}]}}"#,
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": 7}]}]}}"#,
        r#"{"hooks": {"PreToolUse": [{"matcher": ["Bash"], "hooks": []}]}}"#,
        deep.as_str(),
        deep_hooks.as_str(),
        "[1, 2]",
    ] {
        let (set, problems) = json_hooks(text);
        assert!(set.is_empty(), "{text:.60}");
        assert_eq!(problems.len(), 1, "{text:.60}");
        assert!(
            matches!(problems[0].problem, Problem::Parse { .. }),
            "{text:.60}: {:?}",
            problems[0]
        );
        assert_eq!(problems[0].path, Path::new("/p/.claude/settings.json"));
    }
}

#[test]
fn no_more_than_the_cap_of_hooks_load_from_one_file() {
    let hooks: Vec<_> = (0..300)
        .map(|i| json!({"type": "command", "command": format!("h{i}")}))
        .collect();
    let text = json!({"hooks": {"Stop": [{"hooks": hooks}]}}).to_string();
    let (set, problems) = json_hooks(&text);
    assert_eq!(set.count(Event::Stop), config::MAX_HOOKS_PER_FILE);
    assert!(matches!(
        problems[..],
        [HookFileError {
            problem: Problem::TooMany { .. },
            ..
        }]
    ));
}

#[test]
fn toml_hooks_read_the_same_shape_bare_or_under_hooks() {
    let bare = r#"
[[PreToolUse]]
matcher = "Edit|Write"
[[PreToolUse.hooks]]
type = "command"
command = "fmt.sh"
timeout = 2.5
on_error = "deny"
"#;
    let wrapped = r#"
[[hooks.PreToolUse]]
matcher = "Edit|Write"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "fmt.sh"
timeout = 2.5
on_error = "deny"
"#;
    for text in [bare, wrapped] {
        let (set, problems) = parse_toml_text(text, &origin(OriginKind::ProjectToml));
        assert!(problems.is_empty(), "{problems:?}");
        let chosen = set.select(Event::PreToolUse, tool("write_file"));
        assert_eq!(chosen.len(), 1);
        assert_eq!(chosen[0].hook.timeout, Duration::from_millis(2500));
        assert_eq!(chosen[0].hook.on_error, OnError::Deny);
    }
    let (set, problems) = parse_toml_text("[[PreToolUse]\n", &origin(OriginKind::ProjectToml));
    assert!(set.is_empty());
    assert!(matches!(problems[0].problem, Problem::Parse { .. }));
}

#[test]
fn project_hooks_are_not_in_force_before_trust() {
    let (mut set, _) = parse_toml_text(
        "[[Stop]]\n[[Stop.hooks]]\ntype = \"command\"\ncommand = \"project\"\n",
        &origin(OriginKind::ProjectToml),
    );
    let (user, _) = parse_toml_text(
        "[[Stop]]\n[[Stop.hooks]]\ntype = \"command\"\ncommand = \"user\"\n",
        &origin(OriginKind::UserConfig),
    );
    set.extend(user);
    let untrusted = set.in_force(ProjectTrust::Untrusted);
    assert_eq!(commands(&untrusted, Event::Stop, Target::Nothing), ["user"]);
    let trusted = set.in_force(ProjectTrust::Trusted);
    assert_eq!(
        commands(&trusted, Event::Stop, Target::Nothing),
        ["project", "user"]
    );
}

#[test]
fn one_command_configured_twice_runs_once_and_a_guard_copy_wins() {
    let (set, _) = json_hooks(
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "same"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "same", "on_error": "deny"}]}]}}"#,
    );
    let chosen = set.select(Event::PreToolUse, tool("bash"));
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0].hook.on_error, OnError::Deny);
}

#[test]
fn tool_input_takes_claude_code_shape_and_back() {
    let ours = json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"});
    let theirs = claude_tool_input("edit_file", &ours);
    assert_eq!(
        theirs,
        json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"})
    );
    assert_eq!(harness9_tool_input("edit_file", &theirs), ours);
    let bash = json!({"command": "ls", "timeout_secs": 3});
    let theirs = claude_tool_input("bash", &bash);
    assert_eq!(theirs, json!({"command": "ls", "timeout": 3000}));
    assert_eq!(harness9_tool_input("bash", &theirs), bash);
    let mcp = json!({"path": "kept"});
    assert_eq!(claude_tool_input("mcp__s__t", &mcp), mcp);
    assert_eq!(claude_tool_name("bash"), Some("Bash"));
    assert_eq!(harness9_tool_name("Write"), Some("write_file"));
    assert_eq!(claude_tool_name("mcp__s__t"), None);
}

#[test]
fn hook_input_has_claude_code_field_names() {
    let input = HookInput::tool(
        Event::PreToolUse,
        "sid",
        "/t.jsonl",
        PathBuf::from("/w"),
        "bash",
        &json!({"command": "rm -rf /"}),
        None,
    );
    let value = serde_json::to_value(&input).unwrap();
    assert_eq!(
        value,
        json!({"session_id": "sid", "transcript_path": "/t.jsonl", "cwd": "/w",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "rm -rf /"}})
    );
    let stop = HookInput::new(
        Event::Stop,
        "sid",
        "",
        PathBuf::from("/w"),
        Detail::Stop {
            stop_hook_active: true,
            last_assistant_message: Some("done".into()),
        },
    );
    let value = serde_json::to_value(&stop).unwrap();
    assert_eq!(value["stop_hook_active"], json!(true));
    assert_eq!(value["last_assistant_message"], json!("done"));
    assert_eq!(value["hook_event_name"], json!("Stop"));
}

mod files {
    use std::os::unix::fs::symlink;

    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::create_dir_all(dir.path().join(".harness9")).unwrap();
        dir
    }

    const STOP_JSON: &str =
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s"}]}]}}"#;

    #[test]
    fn the_three_project_files_load_in_order_with_their_origin() {
        let dir = project();
        std::fs::write(
            dir.path().join(".harness9/hooks.toml"),
            "[[Stop]]\n[[Stop.hooks]]\ntype = \"command\"\ncommand = \"toml\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".claude/settings.json"),
            STOP_JSON.replace("\"s\"", "\"shared\""),
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".claude/settings.local.json"),
            STOP_JSON.replace("\"s\"", "\"local\""),
        )
        .unwrap();
        let (set, problems) = load_project(dir.path());
        assert!(problems.is_empty(), "{problems:?}");
        let chosen = set.select(Event::Stop, Target::Nothing);
        let got: Vec<(&str, OriginKind)> = chosen
            .iter()
            .map(|s| (s.hook.command.as_str(), s.hook.origin.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("toml", OriginKind::ProjectToml),
                ("shared", OriginKind::ClaudeSettings),
                ("local", OriginKind::ClaudeLocalSettings)
            ]
        );
        assert!(set.in_force(ProjectTrust::Untrusted).is_empty());
    }

    #[test]
    fn no_files_no_problems() {
        let dir = tempfile::tempdir().unwrap();
        let (set, problems) = load_project(dir.path());
        assert!(set.is_empty() && problems.is_empty());
    }

    #[test]
    fn links_fifos_and_oversized_or_binary_files_are_refused_and_reported() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("settings.json");
        std::fs::write(&target, STOP_JSON).unwrap();

        // A link as the file, a dangling link, a linked folder on the way.
        let linked_file = project();
        symlink(&target, linked_file.path().join(".claude/settings.json")).unwrap();
        let dangling = project();
        symlink(
            outside.path().join("absent.json"),
            dangling.path().join(".claude/settings.json"),
        )
        .unwrap();
        let linked_dir = tempfile::tempdir().unwrap();
        symlink(outside.path(), linked_dir.path().join(".claude")).unwrap();
        // A FIFO: refused without blocking.
        let fifo = project();
        nix::unistd::mkfifo(
            &fifo.path().join(".claude/settings.json"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        // Too large, and not UTF-8.
        let large = project();
        std::fs::write(
            large.path().join(".claude/settings.json"),
            format!("{{\"x\": \"{}\"}}", "a".repeat(MAX_FILE_BYTES)),
        )
        .unwrap();
        let binary = project();
        std::fs::write(
            binary.path().join(".claude/settings.json"),
            b"{\"\xff\": 1}",
        )
        .unwrap();

        for (name, dir) in [
            ("linked file", linked_file.path()),
            ("dangling link", dangling.path()),
            ("linked folder", linked_dir.path()),
            ("fifo", fifo.path()),
            ("large", large.path()),
            ("binary", binary.path()),
        ] {
            let (set, problems) = load_project(dir);
            assert!(set.is_empty(), "{name}: nothing loads");
            // A linked .claude refuses both settings files; otherwise one is wrong.
            let expected = if name == "linked folder" { 2 } else { 1 };
            assert_eq!(problems.len(), expected, "{name}: {problems:?}");
            assert!(
                problems[0].path.ends_with(".claude/settings.json"),
                "{name}: {:?}",
                problems[0].path
            );
            assert!(
                matches!(
                    problems[0].problem,
                    Problem::Unreadable { .. } | Problem::TooLarge { .. }
                ),
                "{name}: {:?}",
                problems[0]
            );
        }
    }

    #[test]
    fn a_project_reached_through_a_link_still_loads() {
        let dir = project();
        std::fs::write(dir.path().join(".claude/settings.json"), STOP_JSON).unwrap();
        let links = tempfile::tempdir().unwrap();
        let via = links.path().join("via");
        symlink(dir.path(), &via).unwrap();
        let (set, problems) = load_project(&via);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(set.count(Event::Stop), 1);
    }
}
