//! The project root through the real binary: started in a subfolder of a repository,
//! harness9 takes the repository's permission file, `.mcp.json` and session folder (a
//! subfolder's own copies are not project files), trust given from one folder is the
//! trust of the same files from any other, the root's `.harness9/` stays protected
//! from a subfolder, and a relative rule of the root's file means the root's folders.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use crate::support::*;

impl Repo {
    /// `harness9 -C FOLDER ARGS…`, no server.
    fn cli(&self, folder: &Path, args: &[&str]) -> Output {
        harness9_cli(self.dirs.home(), folder)
            .args(args)
            .output()
            .unwrap()
    }

    /// One `-p` run in `folder` in which the model makes one call; what it got back.
    fn one_call(&self, folder: &Path, call: (&str, &str), args: &[&str]) -> (Output, String) {
        MockServer::start(vec![]).one_call((self.dirs.home(), folder), call, args, &[])
    }
}

fn write_call(path: &str, content: &str) -> String {
    serde_json::json!({ "path": path, "content": content }).to_string()
}

#[test]
fn from_a_subfolder_the_permission_file_and_its_trust_are_the_roots() {
    let repo = Repo::new();
    let root_file = repo.root().join(".harness9/permissions.toml");
    write(&root_file, "allow = [\"bash(echo:*)\"]\n");
    // A subfolder's own file is not the project's: it is never read.
    write(
        &repo.sub().join(".harness9/permissions.toml"),
        "allow = [\"bash(touch:*)\"]\n",
    );
    let list = repo.cli(&repo.sub(), &["permissions", "list"]);
    assert_exit(&list, 0);
    let text = stdout_text(&list);
    assert_has(&text, &["Not in force", "bash(echo:*)"]);
    assert!(!text.contains("touch"), "{text}");

    let trust = repo.cli(&repo.sub(), &["permissions", "trust"]);
    assert_exit(&trust, 0);
    // Approved from the subfolder, the same file is approved from the root.
    for folder in [repo.root(), repo.sub()] {
        let call = serde_json::json!({ "command": "echo from-root-rule" }).to_string();
        let (_, got) = repo.one_call(&folder, ("bash", &call), &[]);
        assert!(
            got.contains("from-root-rule") && !got.contains("Denied"),
            "{got}"
        );
    }
}

#[test]
fn the_roots_harness9_folder_stays_protected_from_a_subfolder() {
    let repo = Repo::new();
    let root_file = repo.root().join(".harness9/permissions.toml");
    write(&root_file, "deny = [\"bash(curl:*)\"]\n");
    // Even a user's rule allowing every edit in the repository does not reach it.
    repo.dirs.home_file(
        "config.toml",
        &format!(
            "[permissions]\nallow = [\"edit({}/**)\"]\n",
            repo.root().display()
        ),
    );
    let call = write_call("../.harness9/permissions.toml", "allow = [\"bash\"]\n");
    let (_, got) = repo.one_call(
        &repo.sub(),
        ("write_file", &call),
        &["--approval-mode", "full-auto"],
    );
    assert!(got.contains("Denied"), "{got}");
    assert_eq!(
        std::fs::read_to_string(&root_file).unwrap(),
        "deny = [\"bash(curl:*)\"]\n"
    );
}

#[test]
fn a_relative_rule_of_the_roots_file_means_the_roots_folder_from_anywhere() {
    let repo = Repo::new();
    write(
        &repo.root().join(".harness9/permissions.toml"),
        "allow = [\"edit(docs/**)\"]\n",
    );
    assert_exit(&repo.cli(&repo.sub(), &["permissions", "trust"]), 0);
    let (_, got) = repo.one_call(
        &repo.sub(),
        ("write_file", &write_call("../docs/a.md", "a")),
        &[],
    );
    assert!(!got.contains("Denied"), "{got}");
    assert!(repo.root().join("docs/a.md").is_file());
    let (_, got) = repo.one_call(
        &repo.sub(),
        ("write_file", &write_call("docs/b.md", "b")),
        &[],
    );
    assert!(got.contains("Denied"), "{got}");
    assert!(!repo.sub().join("docs/b.md").exists());
}

#[test]
fn from_a_subfolder_mcp_servers_and_their_trust_are_the_roots() {
    let repo = Repo::new();
    let fixture = mcp_fixture().display().to_string();
    let servers = |name: &str| {
        serde_json::json!({"mcpServers": {name: {"command": fixture, "args": ["--name", name]}}})
            .to_string()
    };
    write(&repo.root().join(".mcp.json"), &servers("rooted"));
    write(&repo.sub().join(".mcp.json"), &servers("decoy"));
    let list = repo.cli(&repo.sub(), &["mcp", "list"]);
    assert_exit(&list, 0);
    let text = stdout_text(&list);
    assert_has(&text, &["rooted  not approved (harness9 mcp trust)"]);
    assert!(!text.contains("decoy"), "{text}");

    assert_exit(&repo.cli(&repo.sub(), &["mcp", "trust"]), 0);
    let list = repo.cli(&repo.root(), &["mcp", "list"]);
    assert_has(&stdout_text(&list), &["rooted  ok — 8 tools"]);

    // A repository nested inside (its own `.git`) is a project of its own: the outer
    // approval does not reach it, nor do the outer servers.
    let nested = repo.sub().join("vendored");
    std::fs::create_dir_all(nested.join(".git")).unwrap();
    write(&nested.join(".mcp.json"), &servers("rooted"));
    let list = repo.cli(&nested, &["mcp", "list"]);
    assert_has(&stdout_text(&list), &["rooted  not approved"]);
}

#[test]
fn sessions_from_a_subfolder_are_filed_under_the_root() {
    let repo = Repo::new();
    let server = MockServer::start(vec![answer("one"), answer("two")]);
    for folder in [repo.root(), repo.sub()] {
        let out = output_of(
            server
                .harness9(repo.dirs.home(), &folder)
                .args(["-p", "hi"]),
        );
        assert_exit(&out, 0);
    }
    let folders: Vec<_> = std::fs::read_dir(repo.dirs.home().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let files = std::fs::read_dir(&folders[0]).unwrap().count();
    assert_eq!(files, 2, "{folders:?}");
}
