//! What harness9 keeps under its home is private to the user: after a real session that
//! starts an MCP server, the logs (`logs/harness9.log`, `logs/mcp/NAME.log`), the
//! session file and the learned-window cache are 0600 and their folders 0700, the home
//! itself too — also when an older version left the folders 0755 and the log 0644.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use crate::support::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every file beneath `dir` (and `dir` itself among the folders).
fn walk(dir: &Path) -> (Vec<std::path::PathBuf>, Vec<std::path::PathBuf>) {
    let (mut files, mut dirs) = (Vec::new(), vec![dir.to_path_buf()]);
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path.clone());
                todo.push(path);
            } else {
                files.push(path);
            }
        }
    }
    (files, dirs)
}

#[test]
fn logs_sessions_and_caches_are_0600_in_0700_folders() {
    let dirs = Dirs::new();
    dirs.home_file(
        "config.toml",
        &mcp_fixture_table("fx", &["--stderr-noise"], ""),
    );
    // What an older version left: a wide home, logs folder and log file.
    dirs.home_file("logs/harness9.log", "old line\n");
    set_mode(&dirs.home().join("logs"), 0o755);
    set_mode(&dirs.home().join("logs/harness9.log"), 0o644);
    std::fs::create_dir_all(dirs.home().join("sessions")).unwrap();
    set_mode(&dirs.home().join("sessions"), 0o755);
    set_mode(dirs.home(), 0o755);

    let server = MockServer::start(vec![use_skill_reply("c1", "mcp:fx"), answer("done")]);
    // The home folder of the user is elsewhere (it is never tightened itself).
    let user_home = tempfile::tempdir().unwrap();
    set_mode(user_home.path(), 0o755);
    let out = server
        .binary(&dirs)
        .env("HOME", user_home.path())
        .env("HARNESS9_LOG", "debug")
        .args(["-p", "go", "--approval-mode", "full-auto"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);

    for file in [
        "logs/harness9.log",
        "logs/mcp/fx.log",
        "cache/context_windows.json",
    ] {
        let path = dirs.home().join(file);
        if file.starts_with("cache") && !path.exists() {
            continue;
        }
        assert_eq!(mode(&path), 0o600, "{file}");
    }
    for dir in ["", "logs", "logs/mcp", "sessions"] {
        assert_eq!(mode(&dirs.home().join(dir)), 0o700, "{dir}");
    }
    assert_eq!(mode(user_home.path()), 0o755);
    let (files, dirs) = walk(&dirs.home().join("sessions"));
    assert!(!files.is_empty(), "no session saved");
    for file in files {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    for dir in dirs {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
}
