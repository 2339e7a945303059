//! Tests of `harness9 mcp`: listing, tools, adding, removing and trusting servers, on
//! fixture configs and the fixture server.

use super::tools::{DESCRIPTION_CHARS, first_line, prompt_usage};
use super::*;
use crate::mcp::config::{self, MCP_JSON, McpSetup, ServerOrigin};
use crate::mcp::connection::PromptInfo;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

fn setup_in(dir: &Path) -> (Files, McpSetup) {
    let project = dir.join("p");
    std::fs::create_dir_all(&project).unwrap();
    let home = dir.join("home");
    let files = Files {
        user_config: home.join("config.toml"),
        project: project.clone(),
    };
    let user: BTreeMap<String, ServerFile> = match std::fs::read_to_string(&files.user_config) {
        Ok(text) => {
            #[derive(serde::Deserialize)]
            struct User {
                #[serde(default)]
                mcp_servers: BTreeMap<String, ServerFile>,
            }
            toml::from_str::<User>(&text).unwrap().mcp_servers
        }
        Err(_) => BTreeMap::new(),
    };
    let setup = config::load(&user, &files.user_config, &project, &home, &|_| None);
    (files, setup)
}

fn stdio(command: &str, args: &[&str]) -> ServerFile {
    ServerFile {
        command: Some(command.into()),
        args: args.iter().map(|a| a.to_string()).collect(),
        ..ServerFile::default()
    }
}

fn add_to(dir: &Path, name: &str, scope: Scope, server: ServerFile, force: bool) -> String {
    let (files, setup) = setup_in(dir);
    let mut out = Vec::new();
    let request = AddRequest {
        name: name.into(),
        scope,
        server,
        force,
    };
    add(&setup, &files, &request, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn add_keeps_comments_and_places_servers_together() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = setup_in(dir.path());
    std::fs::create_dir_all(files.user_config.parent().unwrap()).unwrap();
    std::fs::write(
        &files.user_config,
        "# my settings\nmodel = \"m\" # pinned\n\n# servers\n[mcp_servers.a]\ncommand = \"a\"\n\n[sandbox]\nmode = \"off\"\n",
    )
    .unwrap();
    let mut env = ServerFile {
        env: BTreeMap::from([("K".to_string(), "v w".to_string())]),
        preload: Some(true),
        ..stdio("uvx", &["mcp-server-time", "--local-timezone=UTC"])
    };
    env.env_vars = vec!["TOKEN".into()];
    let shown = add_to(dir.path(), "b", Scope::User, env, false);
    assert!(shown.contains("[mcp_servers.b]"), "{shown}");
    let text = std::fs::read_to_string(&files.user_config).unwrap();
    assert!(
        text.starts_with("# my settings\nmodel = \"m\" # pinned\n"),
        "{text}"
    );
    let a = text.find("[mcp_servers.a]").unwrap();
    let b = text.find("[mcp_servers.b]").unwrap();
    let sandbox = text.find("[sandbox]").unwrap();
    assert!(a < b && b < sandbox, "{text}");
    assert!(text.contains("env = { K = \"v w\" }"), "{text}");
    let (_, setup) = setup_in(dir.path());
    assert!(setup.warnings.is_empty(), "{:?}", setup.warnings);
    let b = setup.get("b").unwrap();
    assert_eq!(b.target(), "uvx mcp-server-time --local-timezone=UTC");
    assert_eq!(b.preload, config::Preload::AtStart);

    // A second add of the name is refused; --force replaces it in place.
    let (files, setup) = setup_in(dir.path());
    let request = AddRequest {
        name: "a".into(),
        scope: Scope::User,
        server: stdio("x", &[]),
        force: false,
    };
    let e = add(&setup, &files, &request, &mut Vec::new()).unwrap_err();
    assert_eq!(e.kind(), Kind::Usage);
    assert!(e.to_string().contains("--force"), "{e}");
    add_to(dir.path(), "a", Scope::User, stdio("x", &[]), true);
    let text = std::fs::read_to_string(&files.user_config).unwrap();
    assert!(
        text.contains("# servers\n[mcp_servers.a]\ncommand = \"x\""),
        "{text}"
    );
}

#[test]
fn add_refuses_what_load_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let (files, setup) = setup_in(dir.path());
    for (name, server) in [
        ("bad__name", stdio("x", &[])),
        (
            "ftp",
            ServerFile {
                url: Some("ftp://x".into()),
                ..ServerFile::default()
            },
        ),
        (
            "both",
            ServerFile {
                url: Some("http://x".into()),
                ..stdio("x", &[])
            },
        ),
        ("none", ServerFile::default()),
    ] {
        let request = AddRequest {
            name: name.into(),
            scope: Scope::User,
            server,
            force: false,
        };
        let e = add(&setup, &files, &request, &mut Vec::new()).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage, "{name}: {e}");
    }
    assert!(!files.user_config.exists());
}

#[test]
fn a_project_server_added_by_the_user_is_approved_and_removed_again() {
    let dir = tempfile::tempdir().unwrap();
    let shown = add_to(
        dir.path(),
        "git",
        Scope::Project,
        stdio("uvx", &["g"]),
        false,
    );
    assert!(shown.contains("approved on this machine"), "{shown}");
    let (files, setup) = setup_in(dir.path());
    let git = setup.get("git").unwrap();
    assert!(matches!(git.origin, ServerOrigin::Project { .. }));
    assert_eq!(git.trust, Trust::Trusted);
    // Replacing it approves the new definition, not the old one twice.
    add_to(
        dir.path(),
        "git",
        Scope::Project,
        stdio("uvx", &["h"]),
        true,
    );
    let (_, setup) = setup_in(dir.path());
    assert_eq!(setup.get("git").unwrap().trust, Trust::Trusted);
    let list = std::fs::read_to_string(&setup.trust_file).unwrap();
    assert_eq!(list.matches("uvx").count(), 1, "{list}");

    let mut out = Vec::new();
    remove(&setup, &files, "git", None, &mut out).unwrap();
    let (_, setup) = setup_in(dir.path());
    assert!(setup.get("git").is_none());
    let e = remove(&setup, &files, "git", None, &mut Vec::new()).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
}

#[test]
fn mcp_json_servers_are_not_edited() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = setup_in(dir.path());
    std::fs::write(
        files.project.join(MCP_JSON),
        r#"{"mcpServers": {"fs": {"command": "npx"}}}"#,
    )
    .unwrap();
    let (files, setup) = setup_in(dir.path());
    let e = remove(&setup, &files, "fs", None, &mut Vec::new()).unwrap_err();
    assert_eq!(e.kind(), Kind::Usage);
    assert!(e.to_string().contains("does not edit"), "{e}");
}

#[test]
fn prompts_and_descriptions_are_shown_briefly() {
    let prompt: PromptInfo = serde_json::from_value(json!({
        "name": "greet",
        "arguments": [{"name": "name", "required": true}, {"name": "style"}]
    }))
    .unwrap();
    assert_eq!(prompt_usage("fx", &prompt), "/fx:greet name* style");
    assert_eq!(first_line("\n  One.\nTwo."), "One.");
    assert_eq!(
        first_line(&"x".repeat(500)).chars().count(),
        DESCRIPTION_CHARS
    );
    let mut out = Vec::new();
    table(
        &[
            ["a\u{1b}".to_string(), "b".to_string()],
            ["ccc".to_string(), "d".to_string()],
        ],
        &mut out,
    )
    .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "  a^[  b\n  ccc  d\n");
}
