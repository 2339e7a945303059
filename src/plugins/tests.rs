//! Tests of the plugin format, reading a plugin folder, the store (add, trust, remove)
//! and what trusted plugins bring.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::manifest::{PathsOrInline, Source};
use super::*;
use crate::hooks::{Event as HookEvent, OriginKind, Target};
use crate::mcp::config::{McpTransport, ServerOrigin};
use crate::test_support::{temp_tree, write_tree};

fn no_env(_: &str) -> Option<String> {
    None
}

fn real(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

const MANIFEST: &str = r#"{"name": "demo", "version": "1.2.0", "description": "d",
  "author": {"name": "A"}, "commands": "./more-commands", "hooks": ["./extra/hooks.json"],
  "mcpServers": "./servers.json", "unknownKey": 1}"#;

#[test]
fn a_manifest_reads_claude_codes_fields_and_ignores_others() {
    let m = parse_manifest(MANIFEST).unwrap();
    assert_eq!(m.name, "demo");
    assert_eq!(m.version.as_deref(), Some("1.2.0"));
    assert_eq!(m.author.as_deref(), Some("A"));
    assert_eq!(m.commands.0, ["./more-commands"]);
    assert_eq!(
        m.hooks,
        Some(PathsOrInline::Paths(vec!["./extra/hooks.json".into()]))
    );
    assert_eq!(
        m.mcp_servers,
        Some(PathsOrInline::Paths(vec!["./servers.json".into()]))
    );
}

#[test]
fn a_manifest_without_a_usable_name_is_refused_with_why() {
    assert_eq!(parse_manifest("{}"), Err(Problem::MissingName));
    for bad in ["../x", "a/b", "", ".hidden", "x y", "-opt"] {
        let text = serde_json::json!({ "name": bad }).to_string();
        assert!(
            matches!(parse_manifest(&text), Err(Problem::BadName { .. })),
            "{bad}"
        );
    }
    assert!(matches!(
        parse_manifest(r#"{"name": "x", "commands": 3}"#),
        Err(Problem::WrongShape {
            key: "commands",
            ..
        })
    ));
    assert!(matches!(parse_manifest("[1]"), Err(Problem::Parse { .. })));
}

#[test]
fn a_marketplace_lists_relative_github_and_git_sources_and_reports_the_rest() {
    let text = r#"{"name": "m", "owner": {"name": "o"}, "plugins": [
      {"name": "a", "source": "./plugins/a"},
      {"name": "b", "source": {"source": "github", "repo": "owner/b"}},
      {"name": "c", "source": {"source": "url", "url": "https://example.com/c.git"}},
      {"name": "d", "source": {"source": "npm", "package": "d"}},
      {"name": "e", "source": {"source": "github", "repo": "--upload-pack=x"}},
      {"name": "../f", "source": "./f"},
      {"source": "./g"}
    ]}"#;
    let m = parse_marketplace(text).unwrap();
    assert_eq!(m.owner.as_deref(), Some("o"));
    let sources: Vec<&Source> = m.plugins.iter().map(|p| &p.source).collect();
    assert_eq!(
        sources,
        [
            &Source::Relative {
                path: "./plugins/a".into()
            },
            &Source::Git {
                url: "https://github.com/owner/b.git".into()
            },
            &Source::Git {
                url: "https://example.com/c.git".into()
            },
        ]
    );
    let bad: Vec<usize> = m.problems.iter().map(|(i, _)| *i).collect();
    assert_eq!(bad, [3, 4, 5, 6]);
}

#[test]
fn git_urls_never_start_with_a_dash() {
    assert!(manifest::is_git_url("file:///tmp/x.git"));
    assert!(manifest::is_git_url("git@github.com:o/r.git"));
    assert!(!manifest::is_git_url("-uhttps://x"));
    assert!(!manifest::is_git_url("./local/path"));
    assert!(!manifest::is_git_url("/abs/path"));
}

fn demo_plugin() -> tempfile::TempDir {
    temp_tree(&[
        (".claude-plugin/plugin.json", MANIFEST),
        (
            "commands/hello.md",
            "---\ndescription: Say hello\n---\nSay hello.\n",
        ),
        ("more-commands/bye.md", "Say bye.\n"),
        ("agents/reviewer.md", "---\nname: reviewer\n---\nReview.\n"),
        (
            "skills/tidy/SKILL.md",
            "---\nname: tidy\ndescription: t\n---\nTidy.\n",
        ),
        (
            "hooks/hooks.json",
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash",
               "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/guard.sh"}]}],
               "NoSuchEvent": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
        ),
        (
            "extra/hooks.json",
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "p"}]}]}}"#,
        ),
        (
            "servers.json",
            r#"{"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db",
               "args": ["--root", "${CLAUDE_PLUGIN_ROOT}"], "env": {"K": "${HOME_X:-d}"}},
               "bad name!": {"command": "x"}}}"#,
        ),
    ])
}

#[test]
fn a_plugin_folder_gives_its_components_and_names_every_bad_entry() {
    let dir = demo_plugin();
    let root = real(&dir);
    let folder = inspect(&root, &no_env).unwrap();
    assert_eq!(
        folder.command_dirs,
        [root.join("commands"), root.join("more-commands")]
    );
    assert_eq!(folder.agent_dirs, [root.join("agents")]);
    assert_eq!(folder.skill_dirs, [root.join("skills")]);
    assert_eq!(folder.counts.commands, 2);
    assert_eq!(folder.counts.skills, 1);
    assert_eq!(folder.counts.agents, 1);
    assert_eq!(folder.counts.hooks, 1);
    assert_eq!(folder.counts.mcp_servers, 1);
    // The hook is the plugin's, its root set for CLAUDE_PLUGIN_ROOT, its text untouched.
    let chosen = folder
        .hooks
        .select(HookEvent::PreToolUse, Target::Tool { name: "bash" });
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0].hook.command, "${CLAUDE_PLUGIN_ROOT}/guard.sh");
    assert_eq!(chosen[0].hook.origin.kind, OriginKind::Plugin);
    assert_eq!(chosen[0].hook.plugin_root.as_deref(), Some(root.as_path()));
    // The MCP server's paths are expanded, its origin names the plugin.
    let db = &folder.mcp_servers[0];
    let McpTransport::Stdio {
        command, args, env, ..
    } = &db.transport
    else {
        panic!("{db:?}")
    };
    assert_eq!(command, &format!("{}/bin/db", root.display()));
    assert_eq!(args[1], root.display().to_string());
    assert_eq!(env["K"], "d");
    // Python writes no bytecode into the trusted folder.
    assert_eq!(env["PYTHONDONTWRITEBYTECODE"], "1");
    assert!(matches!(&db.origin, ServerOrigin::Plugin { plugin, .. } if plugin == "demo"));
    // Every entry that could not be used is named with its file.
    let problems: Vec<String> = folder.problems.iter().map(ToString::to_string).collect();
    let all = problems.join("\n");
    assert_eq!(problems.len(), 3, "{all}");
    assert!(
        all.contains("hooks/hooks.json") && all.contains("NoSuchEvent"),
        "{all}"
    );
    assert!(
        all.contains("extra/hooks.json") && all.contains("`prompt`"),
        "{all}"
    );
    assert!(
        all.contains("servers.json") && all.contains("bad name!"),
        "{all}"
    );
}

#[test]
fn component_paths_never_leave_the_plugin_or_pass_a_link() {
    let outside = temp_tree(&[("commands/evil.md", "Evil.\n"), ("hooks.json", "{}")]);
    let dir = temp_tree(&[(
        ".claude-plugin/plugin.json",
        r#"{"name": "p", "commands": ["../x", "/etc", "./linked", "./linked/commands", "./gone"],
            "hooks": "./linked/hooks.json", "agents": "./notes.md"}"#,
    )]);
    let root = real(&dir);
    write_tree(&root, &[("notes.md", "n")]);
    symlink(outside.path(), root.join("linked")).unwrap();
    // A default folder that is a link is refused too.
    symlink(outside.path().join("commands"), root.join("commands")).unwrap();
    let folder = inspect(&root, &no_env).unwrap();
    assert!(folder.command_dirs.is_empty(), "{:?}", folder.command_dirs);
    assert!(folder.agent_dirs.is_empty());
    assert!(folder.hooks.is_empty());
    let kinds: Vec<&Problem> = folder.problems.iter().map(|p| &p.problem).collect();
    assert!(kinds.contains(&&Problem::Link), "{kinds:?}");
    assert!(kinds.contains(&&Problem::OutsidePlugin {
        path: "../x".into()
    }));
    assert!(kinds.contains(&&Problem::OutsidePlugin {
        path: "/etc".into()
    }));
    assert!(kinds.contains(&&Problem::Missing {
        path: "./gone".into()
    }));
    // the default `commands` link, `./linked`, `./linked/commands`, the hooks file
    assert_eq!(
        kinds.iter().filter(|k| ***k == Problem::Link).count(),
        4,
        "{kinds:?}"
    );
}

#[test]
fn a_manifest_that_is_a_link_or_too_large_is_not_read() {
    let outside = temp_tree(&[("plugin.json", r#"{"name": "x"}"#)]);
    let dir = temp_tree(&[("keep", "")]);
    let root = real(&dir);
    std::fs::create_dir(root.join(".claude-plugin")).unwrap();
    symlink(
        outside.path().join("plugin.json"),
        root.join(".claude-plugin/plugin.json"),
    )
    .unwrap();
    let e = inspect(&root, &no_env).unwrap_err();
    assert!(matches!(e.problem, Problem::Unreadable { .. }), "{e}");
    let big = format!(
        r#"{{"name": "x", "description": "{}"}}"#,
        "a".repeat(1 << 21)
    );
    let dir = temp_tree(&[(".claude-plugin/plugin.json", big.as_str())]);
    let e = inspect(&real(&dir), &no_env).unwrap_err();
    assert!(matches!(e.problem, Problem::TooLarge { .. }), "{e}");
}

fn store_home() -> (tempfile::TempDir, PluginStore) {
    let home = tempfile::tempdir().unwrap();
    let store = PluginStore::new(home.path());
    (home, store)
}

#[test]
fn add_copies_without_links_and_trust_holds_only_for_the_files_trusted() {
    let dir = demo_plugin();
    let src = real(&dir);
    let secret = temp_tree(&[("id_rsa", "SECRET")]);
    symlink(secret.path().join("id_rsa"), src.join("commands/key.md")).unwrap();
    let (home, store) = store_home();
    let added = store
        .add(&src.display().to_string(), None, Path::new("/"), &no_env)
        .unwrap();
    let root = home.path().join("plugins/demo");
    assert_eq!(added.installed.root, root);
    assert_eq!(added.installed.standing, Standing::NotTrusted);
    assert!(added.skipped.iter().any(|s| s.problem == Problem::Link));
    assert!(!root.join("commands/key.md").exists());
    assert!(root.join("commands/hello.md").is_file());
    let hash = added.installed.hash.clone().unwrap();
    // Trusting a hash other than the files' now trusts nothing.
    assert!(store.trust("demo", "sha256:other", &no_env).is_err());
    assert_eq!(
        store.get("demo", &no_env).unwrap().standing,
        Standing::NotTrusted
    );
    assert!(matches!(
        store.trust("demo", &hash, &no_env).unwrap(),
        TrustOutcome::Trusted { .. }
    ));
    assert_eq!(
        store.get("demo", &no_env).unwrap().standing,
        Standing::Trusted
    );
    // Any change untrusts it: content, a new file, the executable bit, a link.
    let changes: [&dyn Fn(); 4] = [
        &|| write_tree(&root, &[("commands/hello.md", "Changed.\n")]),
        &|| write_tree(&root, &[("new.txt", "x")]),
        &|| {
            use std::os::unix::fs::PermissionsExt;
            let p = root.join("servers.json");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        },
        &|| symlink("/etc/passwd", root.join("agents/l.md")).unwrap(),
    ];
    for change in changes {
        let now = store.get("demo", &no_env).unwrap();
        store
            .trust("demo", now.hash.as_ref().unwrap(), &no_env)
            .unwrap();
        change();
        let after = store.get("demo", &no_env).unwrap();
        assert_eq!(after.standing, Standing::ChangedSinceTrust);
    }
    // Loading: only a trusted plugin brings anything.
    let untrusted = load_in_force(home.path(), &no_env);
    assert!(untrusted.skill_dirs.is_empty() && untrusted.hooks.is_empty());
    assert!(untrusted.mcp_servers.is_empty() && untrusted.agent_roots().is_empty());
    assert!(untrusted.warnings.iter().any(|w| w.contains("demo")));
    assert_eq!(untrusted.plugins.len(), 1);
    let now = store.get("demo", &no_env).unwrap();
    store
        .trust("demo", now.hash.as_ref().unwrap(), &no_env)
        .unwrap();
    let trusted = load_in_force(home.path(), &no_env);
    assert_eq!(trusted.skill_dirs.len(), 1);
    assert_eq!(trusted.skill_dirs[0].commands.len(), 2);
    assert_eq!(trusted.hooks.count(HookEvent::PreToolUse), 1);
    assert_eq!(trusted.mcp_servers.len(), 1);
    assert_eq!(
        trusted.agent_roots(),
        [("demo".to_string(), root.join("agents"))]
    );
    // Remove takes the folder and the record.
    store.remove("demo").unwrap();
    assert!(!root.exists());
    assert!(matches!(
        store.get("demo", &no_env),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(store.remove("../x"), Err(StoreError::Plugin(_))));
}

#[test]
fn a_marketplace_entry_is_added_by_name_and_never_through_a_link_out() {
    let outside = demo_plugin();
    let market = temp_tree(&[
        (
            ".claude-plugin/marketplace.json",
            r#"{"name": "m", "plugins": [
                {"name": "demo", "source": "./plugins/demo"},
                {"name": "linked", "source": "./plugins/linked"},
                {"name": "up", "source": "./plugins/../../x"}]}"#,
        ),
        (
            "plugins/demo/.claude-plugin/plugin.json",
            r#"{"name": "demo"}"#,
        ),
        ("plugins/demo/commands/a.md", "A.\n"),
    ]);
    let mroot = real(&market);
    symlink(outside.path(), mroot.join("plugins/linked")).unwrap();
    let (_home, store) = store_home();
    let src = mroot.display().to_string();
    assert!(matches!(
        store.add(&src, None, Path::new("/"), &no_env),
        Err(StoreError::NameNeeded { .. })
    ));
    assert!(matches!(
        store.add(&src, Some("nope"), Path::new("/"), &no_env),
        Err(StoreError::NotListed { .. })
    ));
    for hostile in ["linked", "up"] {
        let e = store
            .add(&src, Some(hostile), Path::new("/"), &no_env)
            .unwrap_err();
        assert!(matches!(e, StoreError::Plugin(_)), "{hostile}: {e}");
    }
    let file = mroot.join(".claude-plugin/marketplace.json");
    let added = store
        .add(
            &file.display().to_string(),
            Some("demo"),
            Path::new("/"),
            &no_env,
        )
        .unwrap();
    assert_eq!(added.installed.record.name, "demo");
    assert!(matches!(
        store.add(&src, Some("demo"), Path::new("/"), &no_env),
        Err(StoreError::Exists { .. })
    ));
    // Nothing is left behind by the failed adds.
    let left: Vec<_> = std::fs::read_dir(_home.path().join("plugins"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn a_trusted_plugins_commands_join_the_catalog_labelled_and_lose_a_clash_reported() {
    use crate::skills::{Catalog, DiscoveryOptions, PluginDirs, RootKind, WarningKind};
    let dir = temp_tree(&[
        ("home/commands/commit.md", "My own commit.\n"),
        (
            "plugin/commands/commit.md",
            "---\ndescription: Theirs\n---\nCommit.\n",
        ),
        (
            "plugin/commands/hello.md",
            "---\ndescription: Say hello\n---\nHello.\n",
        ),
        ("plugin/commands/git/push.md", "Push it.\n"),
        (
            "plugin/skills/tidy/SKILL.md",
            "---\nname: tidy\ndescription: Tidy up\n---\nTidy.\n",
        ),
        ("work/.keep", ""),
    ]);
    let root = real(&dir);
    let options = DiscoveryOptions {
        workdir: root.join("work"),
        harness9_home: root.join("home"),
        plugins: vec![PluginDirs {
            plugin: "demo".into(),
            skills: vec![root.join("plugin/skills")],
            commands: vec![root.join("plugin/commands")],
        }],
        ..DiscoveryOptions::default()
    };
    let c = Catalog::discover_uncached(&options);
    let hello = c.get("hello").unwrap();
    assert_eq!(hello.description, "Say hello (plugin:demo)");
    assert_eq!(hello.root.kind, RootKind::Plugin);
    assert!(hello.user_invocable());
    assert_eq!(
        c.get("push").unwrap().description,
        "Push it. (plugin:demo:git)"
    );
    assert_eq!(c.get("tidy").unwrap().root.kind, RootKind::Plugin);
    // The user's own /commit wins; the plugin's is shadowed and reported.
    assert_eq!(c.get("commit").unwrap().root.kind, RootKind::User);
    assert!(c.warnings().iter().any(|w| matches!(
        &w.kind,
        WarningKind::Shadowed { name, .. } if name == "commit"
    ) && w.path.starts_with(root.join("plugin"))));
}

#[test]
fn add_skips_fifos_and_refuses_a_plugin_past_the_limits() {
    let dir = temp_tree(&[(".claude-plugin/plugin.json", r#"{"name": "piped"}"#)]);
    let src = real(&dir);
    nix::unistd::mkfifo(&src.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (home, store) = store_home();
    let added = store
        .add(&src.display().to_string(), None, Path::new("/"), &no_env)
        .unwrap();
    assert!(added.skipped.iter().any(|s| s.problem == Problem::Special));
    assert!(!home.path().join("plugins/piped/pipe").exists());
    // Deeper than the limit: nothing is added, no staging folder is left.
    let deep = temp_tree(&[(".claude-plugin/plugin.json", r#"{"name": "deep"}"#)]);
    let mut path = real(&deep);
    for _ in 0..=fetch::MAX_DEPTH + 1 {
        path.push("d");
    }
    write_tree(&path, &[("f", "x")]);
    let e = store
        .add(
            &deep.path().display().to_string(),
            None,
            Path::new("/"),
            &no_env,
        )
        .unwrap_err();
    assert!(matches!(e, StoreError::Fetch(_)), "{e}");
    let left: Vec<_> = std::fs::read_dir(home.path().join("plugins"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}"); // piped/ and installed.json
}

#[test]
fn a_listed_file_in_a_folder_read_anyway_is_covered_and_others_are_named() {
    let dir = temp_tree(&[
        (
            ".claude-plugin/plugin.json",
            r#"{"name": "p", "commands": ["./commands/a.md", "./more/b.md"],
                "agents": ["./agents/helper.md", "./notes.md"]}"#,
        ),
        ("commands/a.md", "A.\n"),
        ("more/b.md", "B.\n"),
        ("agents/helper.md", "H.\n"),
        ("notes.md", "N.\n"),
    ]);
    let root = real(&dir);
    let folder = inspect(&root, &no_env).unwrap();
    assert_eq!(folder.command_dirs, [root.join("commands")]);
    assert_eq!(folder.agent_dirs, [root.join("agents")]);
    let kinds: Vec<&Problem> = folder.problems.iter().map(|p| &p.problem).collect();
    assert_eq!(
        kinds,
        [
            &Problem::CommandFile {
                path: "./more/b.md".into()
            },
            &Problem::ComponentFile {
                path: "./notes.md".into()
            },
        ]
    );
}
