//! Two harness9 processes never lose or interleave each other's writes: many
//! `harness9 mcp add` at once, to the user's config.toml and to the project's
//! `.harness9/config.toml` (which also approves each server in
//! `$HARNESS9_HOME/mcp/trusted.json`), all land; and a saved session is written by one
//! process at a time (`--resume` of a session another harness9 has open is refused,
//! naming that process).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::*;

const DEADLINE: Duration = Duration::from_secs(60);

fn mcp_add(home: &Path, project: &Path, name: &str, scope: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HARNESS9_HOME", home)
        .args([
            "mcp",
            "add",
            name,
            "--scope",
            scope,
            "--",
            "some-server",
            name,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `count` processes started together, each adding its own server; all must succeed.
fn add_at_once(home: &Path, project: &Path, scope: &str, count: usize) -> Vec<String> {
    let names: Vec<String> = (0..count).map(|i| format!("{scope}{i}")).collect();
    let children: Vec<Child> = names
        .iter()
        .map(|name| mcp_add(home, project, name, scope).spawn().unwrap())
        .collect();
    for child in children {
        let out = wait_with_deadline(child, DEADLINE);
        assert_exit(&out, 0);
    }
    names
}

#[test]
fn concurrent_mcp_adds_all_land_in_the_config_and_the_trust_list() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "# my settings\nmodel = \"m\"\n",
    )
    .unwrap();
    let names = add_at_once(home.path(), project.path(), "user", 12);
    let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert!(text.starts_with("# my settings\nmodel = \"m\"\n"), "{text}");
    for name in &names {
        assert!(
            text.contains(&format!("[mcp_servers.{name}]")),
            "{name} lost: {text}"
        );
    }

    let names = add_at_once(home.path(), project.path(), "project", 12);
    let project_file =
        std::fs::read_to_string(project.path().join(".harness9/config.toml")).unwrap();
    let trust = std::fs::read_to_string(home.path().join("mcp/trusted.json")).unwrap();
    for name in &names {
        assert!(
            project_file.contains(&format!("[mcp_servers.{name}]")),
            "{name} lost: {project_file}"
        );
        assert!(
            trust.contains(&format!("[\\\"{name}\\\"")),
            "{name}'s approval lost: {trust}"
        );
    }
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(project.path().join(".harness9"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}
