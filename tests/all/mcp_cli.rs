//! `harness9 mcp list|tools|add|remove|trust` end to end: the real binary with a
//! `$HARNESS9_HOME` and a project of its own, against the scripted MCP server
//! (`examples/mcp_fixture.rs`), checked by stdout, stderr, the files written and the
//! exit code as a user or a script sees them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{
    Dirs, assert_exit, assert_has, stderr_text as stderr, stdout_text as stdout, write,
};

/// The fixture server's path.
fn fixture() -> String {
    crate::support::mcp_fixture().display().to_string()
}

/// A `$HARNESS9_HOME` (also `$HOME`) and a project directory.
struct Env(Dirs);

impl Env {
    fn new() -> Env {
        Env(Dirs::new())
    }

    /// A home whose config.toml (the user's) holds `toml`.
    fn with_user_config(toml: &str) -> Env {
        Env(Dirs::with_config(toml))
    }

    fn mcp(&self, args: &[&str]) -> Output {
        self.0.command(&["mcp"]).args(args).output().unwrap()
    }

    /// Runs `harness9 mcp ARGS…` and checks that it was refused (exit 2) with `why` on
    /// stderr.
    fn refused(&self, args: &[&str], why: &str) {
        let out = self.mcp(args);
        assert_exit(&out, 2);
        assert_has(&stderr(&out), &[why]);
    }

    fn user_config(&self) -> PathBuf {
        self.0.home().join("config.toml")
    }

    fn project(&self) -> &Path {
        self.0.project()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn add_list_tools_and_remove_user_servers() {
    let fx = fixture();
    let env = Env::with_user_config("# my settings\nmodel = \"m\" # pinned\n");

    let out = env.mcp(&["add", "fx", "--", &fx, "--name", "fx"]);
    assert_exit(&out, 0);
    assert_has(&stdout(&out), &["[mcp_servers.fx]"]);
    assert_has(&stdout(&out), &[&env.user_config().display().to_string()]);
    let out = env.mcp(&[
        "add",
        "web",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "X-Team=core",
        "--bearer-token-env",
        "H9_TEST_UNSET_TOKEN",
    ]);
    assert_exit(&out, 0);
    let text = read(&env.user_config());
    assert!(
        text.starts_with("# my settings\nmodel = \"m\" # pinned\n"),
        "{text}"
    );
    assert!(
        text.contains("[mcp_servers.fx]\ncommand = ")
            && text.contains("args = [\"--name\", \"fx\"]"),
        "{text}"
    );
    assert!(
        text.contains(
            "[mcp_servers.web]\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { X-Team = \"core\" }\n\
             bearer_token_env = \"H9_TEST_UNSET_TOKEN\""
        ),
        "{text}"
    );

    // The name is taken.
    env.refused(&["add", "fx", "--", "true"], "--force");

    let out = env.mcp(&["list"]);
    assert_exit(&out, 0);
    let listing = stdout(&out);
    assert!(
        listing.contains("fx  ok — 8 tools, 3 prompts (fx 1.0.0)"),
        "{listing}"
    );
    assert_has(&listing, &["web  failed — ", "H9_TEST_UNSET_TOKEN"]);
    assert!(listing.contains("http://127.0.0.1:9/mcp"), "{listing}");

    let out = env.mcp(&["tools", "fx"]);
    assert_exit(&out, 0);
    let tools = stdout(&out);
    assert!(!tools.contains('\u{1b}'), "raw escape in {tools:?}");
    assert!(
        tools.contains("Echoes the text back (^[[31mred^[[0m)."),
        "{tools}"
    );
    for line in [
        "mcp__fx__echo",
        "mcp__fx__bad_name_     bad name!",
        "/fx:greet name* style  Greets someone.",
        "mcp__fx__resources",
    ] {
        assert!(tools.contains(line), "{line} missing from:\n{tools}");
    }

    env.refused(&["tools", "nope"], "servers: fx, web");

    let out = env.mcp(&["remove", "web"]);
    assert_exit(&out, 0);
    let text = read(&env.user_config());
    assert!(
        !text.contains("[mcp_servers.web]") && text.contains("[mcp_servers.fx]"),
        "{text}"
    );
    assert!(text.starts_with("# my settings\n"), "{text}");
    env.refused(&["remove", "web"], "no MCP server named `web`");
}

#[test]
fn project_servers_wait_for_approval_but_not_the_users_own() {
    let env = Env::new();
    let fx = fixture();
    let mcp_json = serde_json::json!({"mcpServers": {"shared": {
        "command": fx, "args": ["--name", "${H9_TEST_NAME:-shared}"],
        "env": {"SHARED_SECRET": "hunter2"}
    }}});
    write(&env.project().join(".mcp.json"), &mcp_json.to_string());

    let out = env.mcp(&["list"]);
    assert_exit(&out, 0);
    assert_has(
        &stdout(&out),
        &["shared  not approved (harness9 mcp trust)"],
    );
    assert_has(&stdout(&out), &["--name shared"]);

    let out = env.mcp(&["add", "mine", "--scope", "project", "--", &fx]);
    assert_exit(&out, 0);
    assert_has(&stdout(&out), &["approved on this machine"]);
    let file = env.project().join(".harness9/config.toml");
    assert!(
        read(&file).starts_with("[mcp_servers.mine]\ncommand = "),
        "{}",
        read(&file)
    );

    let out = env.mcp(&["list", "--json"]);
    assert_exit(&out, 0);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by_name = |name: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing from {list}"))
            .clone()
    };
    let mine = by_name("mine");
    assert_eq!(mine["state"], "ok", "{mine}");
    assert_eq!(mine["scope"], "project");
    assert_eq!(mine["tools"], 8);
    assert_eq!(mine["prompts"], 3);
    assert_eq!(mine["resources"], true);
    assert_eq!(mine["server"], "fixture 1.0.0");
    assert_eq!(mine["file"], file.display().to_string());
    let shared = by_name("shared");
    assert_eq!(shared["state"], "not_approved", "{shared}");
    assert_eq!(shared["scope"], "mcp_json");
    assert_eq!(shared["transport"], "stdio");
    assert!(shared["tools"].is_null() && shared["error"].is_null());

    let out = env.mcp(&["trust"]);
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(
        said.contains("SHARED_SECRET") && !said.contains("hunter2"),
        "{said}"
    );
    assert!(said.contains("mine (already approved)"), "{said}");
    assert!(said.contains("Approved 2 MCP servers"), "{said}");

    let out = env.mcp(&["list"]);
    assert_has(&stdout(&out), &["shared  ok — 8 tools"]);

    // harness9 does not edit .mcp.json.
    env.refused(&["remove", "shared"], "does not edit");
}

#[test]
fn a_failing_server_is_listed_as_failed_and_its_tools_fail() {
    let fx = fixture();
    let env = Env::with_user_config(&format!(
        "[mcp_servers.broken]\ncommand = {fx:?}\nargs = [\"--fail-start\"]\n"
    ));
    let out = env.mcp(&["list"]);
    assert_exit(&out, 0);
    let listing = stdout(&out);
    assert_has(&listing, &["broken  failed — ", "cannot open database"]);

    let out = env.mcp(&["tools", "broken"]);
    assert_exit(&out, 1);
    assert_has(&stderr(&out), &["cannot open database"]);

    // A project file that cannot be read: the listing is given, but incomplete.
    write(&env.project().join(".mcp.json"), "{not json");
    let out = env.mcp(&["list"]);
    assert_exit(&out, 1);
    assert_has(&stdout(&out), &["broken  failed"]);
    let err = stderr(&out);
    assert!(err.contains(".mcp.json: not valid"), "{err}");
    assert!(
        err.ends_with(
            "harness9: the list is incomplete: 1 definition or file could not be loaded \
             (see the warnings)\n"
        ),
        "{err}"
    );
}
