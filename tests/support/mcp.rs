//! The MCP test server (`examples/mcp_fixture.rs`) for tests that configure harness9
//! with it: where cargo built it, built on demand when only one test target was built.

use std::path::PathBuf;

/// The fixture binary (`target/debug/examples/mcp_fixture`), built if missing.
pub fn mcp_fixture() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().unwrap().parent().unwrap().to_path_buf();
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

/// A `[mcp_servers.NAME]` table running the fixture with `args`, plus `extra` lines.
pub fn mcp_fixture_table(name: &str, args: &[&str], extra: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[mcp_servers.{name}]\ncommand = {:?}\nargs = [{}]\n{extra}\n",
        mcp_fixture().display().to_string(),
        args.join(", ")
    )
}
