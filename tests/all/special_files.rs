//! Files that are not regular files, through the real binary: a FIFO (opening one for
//! reading waits for a writer, which hung the session for good), a Unix socket and the
//! devices `/dev/zero` and `/dev/urandom` (endless), named to `read_file`, `edit_file`,
//! `write_file`, `grep` and an `@` mention. Each is refused with a message naming what it
//! is, the run ends well within its deadline, and nothing is written to it. `edit_file`
//! refuses a file over its size cap with what to do instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use serde_json::json;

use crate::support::*;

/// One run of `-p go` in full-auto without a sandbox (so no approval stands in the way,
/// also for a device outside the project) while the model calls `tool` with
/// `arguments`; the call's result as the model got it.
fn one_call(home: &Path, project: &Path, tool: &str, arguments: serde_json::Value) -> String {
    let (out, result) = MockServer::start(vec![]).one_call(
        (home, project),
        (tool, &arguments.to_string()),
        &["--approval-mode", "full-auto", "--sandbox", "off"],
        &[],
    );
    assert_exit(&out, 0);
    result
}

#[test]
fn fifos_sockets_and_devices_are_refused_by_every_file_tool_without_hanging() {
    let dirs = Dirs::new();
    let fifo = dirs.project().join("f.txt");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let socket = dirs.project().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dirs.project().join("zero.txt")).unwrap();
    let specials = [
        ("f.txt", "a named pipe (FIFO)"),
        ("s.sock", "a socket"),
        ("zero.txt", "a character device"),
        ("/dev/zero", "a character device"),
        ("/dev/urandom", "a character device"),
    ];
    let mut tried = 0;
    for (path, kind) in specials {
        for (tool, arguments) in [
            ("read_file", json!({"path": path})),
            (
                "edit_file",
                json!({"path": path, "old_string": "a", "new_string": "b"}),
            ),
            ("write_file", json!({"path": path, "content": "x"})),
            ("grep", json!({"pattern": "x", "path": path})),
        ] {
            let result = one_call(dirs.home(), dirs.project(), tool, arguments);
            assert!(
                result.contains(kind),
                "{tool} {path}: expected a refusal naming {kind}, got: {result}"
            );
            tried += 1;
        }
    }
    assert_eq!(tried, 20);
    // Nothing was written into them, and they are still what they were.
    assert!(fifo.symlink_metadata().unwrap().file_type().is_fifo());
    assert!(
        dirs.project()
            .join("zero.txt")
            .symlink_metadata()
            .unwrap()
            .is_symlink()
    );
    // grep over the whole project skips them and finishes.
    dirs.project_file("a.txt", "x marks\n");
    let result = one_call(dirs.home(), dirs.project(), "grep", json!({"pattern": "x"}));
    assert_eq!(result, "a.txt:1:x marks\n");
}

#[test]
fn mentions_of_fifos_sockets_and_devices_are_refused_without_hanging() {
    let dirs = Dirs::new();
    nix::unistd::mkfifo(
        &dirs.project().join("f.txt"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(dirs.project().join("s.sock")).unwrap();
    for (mention, kind) in [
        ("@f.txt", "a named pipe (FIFO)"),
        ("@s.sock", "a socket"),
        ("@/dev/zero", "a character device"),
    ] {
        let server = MockServer::start(vec![]);
        let mut cmd = server.binary(&dirs);
        cmd.args([
            "-p",
            &format!("see {mention}"),
            "--approval-mode",
            "full-auto",
        ]);
        let out = run_fed(&mut cmd, b"");
        assert_exit(&out, 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(mention) && stderr.contains(kind),
            "{mention}: {stderr}"
        );
        assert!(server.chat_requests().is_empty());
    }
}

#[test]
fn edit_file_refuses_a_file_over_its_cap_and_says_what_to_do() {
    let dirs = Dirs::new();
    let big = dirs.project().join("big.log");
    let line = "0123456789abcdef".repeat(4) + "\n";
    write(&big, &line.repeat(9 * 1024 * 1024 / line.len()));
    let before = std::fs::metadata(&big).unwrap().len();
    let result = one_call(
        dirs.home(),
        dirs.project(),
        "edit_file",
        json!({"path": "big.log", "old_string": "0123", "new_string": "x", "replace_all": true}),
    );
    assert_has(
        &result,
        &["over edit_file's limit of 8388608 bytes", "through bash"],
    );
    assert_eq!(std::fs::metadata(&big).unwrap().len(), before);
}

#[test]
fn a_fifo_named_skill_md_is_reported_with_its_path_not_waited_on() {
    let dirs = Dirs::new();
    let folder = dirs.project().join("skills/evil");
    std::fs::create_dir_all(&folder).unwrap();
    let fifo = folder.join("SKILL.md");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let out = run_fed(
        harness9_cli(dirs.home(), dirs.project()).args(["skills", "list"]),
        b"",
    );
    assert_exit(&out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{}: cannot read", fifo.display())) && stdout.contains("a FIFO"),
        "{stdout}"
    );
}
