//! The MCP client against a real server: the fixture in `examples/mcp_fixture.rs`
//! (built by `cargo test`; built here on demand when a single test target was asked
//! for), started over stdio through [`McpServers`] as a session would.

use crate::test_support::assert_contains;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::cache::IndexCache;
use super::config::{self, ServerFile};
use super::connection::{ConnectContext, McpError, Request};
use super::manager::{McpServers, ServerState};
use super::tools;
use crate::tools::{LoadedTools, Tool, ToolRegistry};

/// The fixture binary, built if missing.
pub(crate) fn fixture() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().unwrap().parent().unwrap();
    let path = debug.join("examples").join("mcp_fixture");
    static BUILT: std::sync::Once = std::sync::Once::new();
    BUILT.call_once(|| {
        if !path.is_file() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = std::process::Command::new(cargo)
                .args(["build", "--example", "mcp_fixture"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .unwrap();
            assert!(status.success(), "cargo build --example mcp_fixture failed");
        }
    });
    path
}

fn server(args: &[&str]) -> ServerFile {
    ServerFile {
        command: Some(fixture().display().to_string()),
        args: args.iter().map(|a| a.to_string()).collect(),
        ..ServerFile::default()
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    servers: McpServers,
    notices: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    log_dir: PathBuf,
}

fn start(defs: &[(&str, ServerFile)]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let home = dir.path().join("home");
    let user: BTreeMap<String, ServerFile> = defs
        .iter()
        .map(|(n, f)| (n.to_string(), f.clone()))
        .collect();
    let setup = config::load(&user, &home.join("config.toml"), &project, &home, &|_| None);
    assert!(setup.warnings.is_empty(), "{:?}", setup.warnings);
    let log_dir = home.join("logs/mcp");
    let servers = McpServers::new(
        setup,
        ConnectContext {
            project,
            log_dir: log_dir.clone(),
            sandbox: None,
            user_home: None,
            env: |_| None,
        },
        IndexCache::new(home.join("cache/mcp-servers.json")),
    );
    let notices = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = notices.clone();
    servers.set_notify(move |m| sink.lock().unwrap().push(m));
    Fixture {
        _dir: dir,
        servers,
        notices,
        log_dir,
    }
}

fn loaded_set() -> LoadedTools {
    ToolRegistry::with_builtins().loaded().clone()
}

async fn call(set: &LoadedTools, registry_name: &str, args: Value) -> crate::tools::ToolOutput {
    let (_dir, ctx) = crate::tools::test_tree(&[]);
    let tool = find(set, registry_name);
    tool.run(args, &ctx).await.unwrap()
}

fn find(set: &LoadedTools, name: &str) -> std::sync::Arc<dyn Tool> {
    set.get(name)
        .unwrap_or_else(|| panic!("no tool {name}; have {set:?}"))
}

#[tokio::test]
async fn loading_a_server_adds_its_tools_with_valid_names_and_normalized_schemas() {
    let f = start(&[("fx", server(&["--instructions", "Use fx for echoing."]))]);
    let set = loaded_set();
    let report = tools::load(&f.servers, "fx", &set).await.unwrap();
    assert_eq!(report.instructions.as_deref(), Some("Use fx for echoing."));
    assert!(
        report.tools.contains(&"mcp__fx__echo".to_string()),
        "{:?}",
        report.tools
    );
    assert!(
        report.tools.contains(&"mcp__fx__bad_name_".to_string()),
        "{:?}",
        report.tools
    );
    assert!(report.tools.contains(&"mcp__fx__resources".to_string()));
    for name in &report.tools {
        assert!(
            name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }
    let weird = find(&set, "mcp__fx__weird_schema").parameters();
    let text = weird.to_string();
    assert!(
        !text.contains("$schema") && !text.contains("$ref") && !text.contains("$defs"),
        "{text}"
    );
    assert_eq!(weird["type"], "object");

    assert_eq!(
        call(&set, "mcp__fx__echo", json!({"text": "hi"}))
            .await
            .content,
        "echo: hi"
    );
    let sum = call(&set, "mcp__fx__add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.content, "5\nStructured result: {\"sum\":5}");
    let fail = call(&set, "mcp__fx__fail", json!({})).await;
    assert!(fail.is_error);
    assert_eq!(fail.content, "the fail tool always fails");
    assert_eq!(
        call(&set, "mcp__fx__bad_name_", Value::Null).await.content,
        "sanitized ok"
    );
    let image = call(&set, "mcp__fx__image", json!({})).await.content;
    assert!(image.contains("[image: image/png"), "{image}");
    assert!(image.contains("read it with mcp__fx__resources"), "{image}");
    let listing = call(&set, "mcp__fx__resources", json!({})).await.content;
    assert!(
        listing.contains("fixture://notes/readme (readme, text/plain)"),
        "{listing}"
    );
    let readme = call(
        &set,
        "mcp__fx__resources",
        json!({"uri": "fixture://notes/readme"}),
    )
    .await;
    assert!(
        readme
            .content
            .contains("Fixture readme: hello from the resource.")
    );
    let missing = call(&set, "mcp__fx__resources", json!({"uri": "fixture://nope"})).await;
    assert!(
        missing.is_error || missing.content.contains("refused"),
        "{missing:?}"
    );
    // A blank uri lists; a uri that is not a string is refused, naming the field.
    let blank = call(&set, "mcp__fx__resources", json!({"uri": "  "})).await;
    assert_eq!(blank.content, listing);
    let refused = call(&set, "mcp__fx__resources", json!({"uri": 5})).await;
    assert!(refused.is_error, "{refused:?}");
    assert_contains(
        &refused.content,
        "Invalid arguments for mcp__fx__resources: field `uri` must be a string",
    );

    // Its stderr went to the log, and the cache learned it for the next session's index.
    let log = std::fs::read_to_string(f.log_dir.join("fx.log")).unwrap();
    assert!(log.contains("fixture fixture starting"), "{log}");
    let memo = f.servers.memo("fx").unwrap();
    assert_eq!(memo.instructions.as_deref(), Some("Use fx for echoing."));
    assert!(memo.tools >= 8);
    assert!(memo.prompts.iter().any(|p| p.name == "greet"));
    assert!(matches!(
        f.servers.statuses()[0].state,
        ServerState::Running { .. }
    ));
}

#[tokio::test]
async fn a_server_that_announces_resources_but_lists_none_gets_no_resources_tool() {
    let f = start(&[("empty", server(&["--no-resources"]))]);
    let set = loaded_set();
    let report = tools::load(&f.servers, "empty", &set).await.unwrap();
    assert!(report.tools.contains(&"mcp__empty__echo".to_string()));
    assert!(
        !report.tools.iter().any(|t| t.ends_with("__resources")),
        "{:?}",
        report.tools
    );
}

#[tokio::test]
async fn a_server_that_fails_to_start_is_named_with_its_stderr() {
    let f = start(&[("db", server(&["--fail-start"]))]);
    let err = f.servers.connection("db").await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, McpError::Start { .. }), "{err:?}");
    assert!(text.contains("MCP server `db` could not start"), "{text}");
    assert!(text.contains("cannot open database /nonexistent"), "{text}");
    assert_eq!(f.notices.lock().unwrap().len(), 1);
    assert!(matches!(
        f.servers.statuses()[0].state,
        ServerState::Failed { .. }
    ));

    let missing = start(&[(
        "nope",
        ServerFile {
            command: Some("/nonexistent/mcp-server".into()),
            ..ServerFile::default()
        },
    )]);
    let err = missing
        .servers
        .connection("nope")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MCP server `nope` could not start: cannot start `/nonexistent/mcp-server`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_dies_is_reported_and_restarted_on_next_use() {
    let f = start(&[("crashy", server(&["--die-after-start"]))]);
    let set = loaded_set();
    tools::load(&f.servers, "crashy", &set).await.unwrap();
    // It exits right after listing its tools: the next call finds it gone.
    let out = call(&set, "mcp__crashy__echo", json!({"text": "x"})).await;
    assert!(out.is_error, "{out:?}");
    assert_contains(&out.content, "MCP server `crashy` stopped");
    assert_contains(&out.content, "crashed on purpose");
    assert_eq!(out.warnings.len(), 1);
    // The next use starts it again (and it answers before dying again).
    let conn = f.servers.connection("crashy").await.unwrap();
    assert!(conn.identity().has_tools);
}

/// Gets prompt `name` of `server`, with nothing to cancel it.
async fn get_prompt(
    servers: &McpServers,
    server: &str,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<Value, McpError> {
    let request = Request::GetPrompt { name, arguments };
    servers
        .request(server, request, &CancellationToken::new())
        .await
}

#[tokio::test]
async fn a_server_that_dies_during_a_prompt_request_is_shown_as_failed() {
    let f = start(&[("crashy", server(&["--die-after-start"]))]);
    // Started (or restarted) for the request, it exits after listing its tools: the
    // prompt request finds it gone, as a tool call would.
    let err = get_prompt(&f.servers, "crashy", "greet", Map::new())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Closed { .. }), "{err:?}");
    match &f.servers.statuses()[0].state {
        ServerState::Failed { error } => assert_contains(error, "MCP server `crashy` stopped"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_hanging_call_times_out_and_cancelling_tells_the_server() {
    let mut slow = server(&[]);
    slow.tool_timeout_secs = Some(1);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cancel.log");
    slow.env = BTreeMap::from([("FIXTURE_CANCEL_LOG".to_string(), log.display().to_string())]);
    let f = start(&[("slow", slow)]);
    let set = loaded_set();
    tools::load(&f.servers, "slow", &set).await.unwrap();

    let out = call(&set, "mcp__slow__slow", json!({"seconds": 30})).await;
    assert!(out.is_error);
    assert_contains(&out.content, "did not answer the call of `slow` within 1 s");

    // Esc: the call ends at once as interrupted, and the server hears of it.
    let (_d, ctx) = crate::tools::test_tree(&[]);
    let tool = find(&set, "mcp__slow__slow");
    let cancel = ctx.cancel.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let result = tool.run(json!({"seconds": 30}), &ctx).await;
    canceller.await.unwrap();
    assert!(matches!(result, Err(crate::tools::ToolFatal::Interrupted)));
    crate::exec::test_support::wait_for("the server to log the cancellation", || {
        std::fs::read_to_string(&log)
            .is_ok_and(|t| t.lines().filter(|l| *l == "cancelled").count() >= 2)
    })
    .await;
}

#[tokio::test]
async fn prompts_and_resources_are_read_as_json() {
    let f = start(&[("fx", server(&[]))]);
    let prompts = f.servers.prompts("fx").await.unwrap();
    let greet = prompts.iter().find(|p| p.name == "greet").unwrap();
    assert_eq!(greet.arguments[0].name, "name");
    assert!(greet.arguments[0].required);
    let mut args = Map::new();
    args.insert("name".into(), json!("Ann"));
    let got = get_prompt(&f.servers, "fx", "greet", args).await.unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "Say hello to Ann");
    let err = get_prompt(&f.servers, "fx", "nope", Map::new())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Refused { .. }), "{err:?}");
}

#[tokio::test]
async fn configured_variables_reach_the_server() {
    let mut def = server(&[]);
    def.env = BTreeMap::from([("MCP_GIVEN".to_string(), "given".to_string())]);
    let f = start(&[("fx", def)]);
    let set = loaded_set();
    tools::load(&f.servers, "fx", &set).await.unwrap();
    let given = call(&set, "mcp__fx__env", json!({"name": "MCP_GIVEN"})).await;
    assert_eq!(given.content, "given");
}
