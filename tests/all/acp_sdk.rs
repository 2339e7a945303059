//! A real ACP client drives `harness9 acp`: the official TypeScript SDK
//! (`@agentclientprotocol/sdk`, vendored with its one dependency under
//! `tests/fixtures/acp-client/vendor/`, see its SOURCE.md) runs
//! `tests/fixtures/acp-client/drive.mjs` through initialize → session/new →
//! session/prompt (an edit: a tool call with a diff, a permission request the client
//! answers, the file read from and written through the client) → session/cancel, then
//! a second `harness9 acp` that session/loads the saved session (replayed) and answers
//! one more prompt. The SDK validates every message against ACP's
//! schema. The test fails if `node` is missing, a vendored tarball is not the one
//! recorded, or the script fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::support::*;

/// The vendored packages: tarball, the folder it goes to under `node_modules`, and its
/// SHA-256 (as SOURCE.md records it).
const PACKAGES: [(&str, &str, &str); 2] = [
    (
        "agentclientprotocol-sdk-2.4.0.tgz",
        "@agentclientprotocol/sdk",
        "87acc66d5824f88d8913702f85cf74c997526bbffb06fce15a9f0d637566ca8d",
    ),
    (
        "zod-3.25.76.tgz",
        "zod",
        "9e1f1a05f0dd0c1dab64ee91ceb9bf55cd44d35368c70edda80a2fdc70a88377",
    ),
];

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp-client")
}

/// Unpacks the npm tarball `bytes` (every entry under `package/`) into `into`.
fn unpack(bytes: &[u8], into: &Path) {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().into_owned();
        let inside = path.strip_prefix("package").unwrap().to_path_buf();
        assert!(
            inside
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            "{path:?}"
        );
        let to = into.join(inside);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        if entry.header().entry_type().is_file() {
            entry.unpack(&to).unwrap();
        }
    }
}

#[test]
fn the_official_acp_client_drives_harness9_through_edit_permission_cancel_and_load() {
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.as_ref().is_ok_and(|out| out.status.success()),
        "this test needs node (20 or later) on PATH: {node:?}"
    );
    let client = tempfile::tempdir().unwrap();
    for (tarball, name, sha256) in PACKAGES {
        let bytes = std::fs::read(fixture().join("vendor").join(tarball)).unwrap();
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(digest, sha256, "{tarball} is not the vendored release");
        unpack(&bytes, &client.path().join("node_modules").join(name));
    }
    // Node resolves packages from the script's own folder.
    let script = client.path().join("drive.mjs");
    std::fs::copy(fixture().join("drive.mjs"), &script).unwrap();

    let server = MockServer::start(vec![]);
    let dirs = Dirs::new();
    dirs.project_file("greeting.txt", "hello on disk\n");
    server.push(tool_reply(
        "edit-1",
        "edit_file",
        r#"{"path":"greeting.txt","old_string":"hello","new_string":"goodbye"}"#,
    ));
    server.push(answer("Changed."));
    server.push(sse(vec![text("Let me think")]).stall_after(1));
    server.push(answer("Loaded and answered."));

    let harness9 = server.binary(&dirs);
    let mut cmd = Command::new("node");
    cmd.arg(&script)
        .arg(env!("CARGO_BIN_EXE_harness9"))
        .arg(dirs.project())
        .current_dir(client.path())
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in harness9.get_envs() {
        if let Some(value) = value {
            cmd.env(name, value);
        }
    }
    let child = cmd.spawn().unwrap();
    let out = wait_with_deadline(child, Duration::from_secs(60));
    let (stdout, stderr) = (stdout_text(&out), stderr_text(&out));
    assert!(
        out.status.success(),
        "the ACP client failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        summary["steps"],
        serde_json::json!([
            "initialize",
            "session/new",
            "session/prompt",
            "session/cancel",
            "session/load",
            "session/prompt after load"
        ]),
        "{summary}"
    );
    assert_eq!(summary["agentExit"], 0, "{summary}");
    // The edit went through the client's buffer and is on disk too.
    assert_eq!(
        std::fs::read_to_string(dirs.project().join("greeting.txt")).unwrap(),
        "goodbye from the unsaved buffer\n"
    );
    // The loaded session's prompt went to the model with the conversation before it.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    let last = requests[3].body.to_string();
    assert!(
        last.contains("change the greeting") && last.contains("one more thing"),
        "{last}"
    );
}
