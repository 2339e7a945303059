//! The sandbox through the real binary: a scripted model runs commands with `bash` under
//! `full-auto`, and what happened on disk and on a loopback listener shows what the
//! sandbox allowed — writes beneath the project and the temp folders, reads anywhere,
//! nothing else: no writes outside (directly, through a symlink, through
//! `/proc/self/root`), no TCP or UDP socket. `--sandbox off` lifts it; a system without
//! Landlock (simulated) refuses `full-auto` unless `--sandbox off` was given.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::Output;

use crate::support::*;

mod confinement;
mod spare;

/// A folder outside the project and outside the temp folders (which the sandbox lets
/// commands write): beneath the target directory, unless the checkout itself lives in
/// /tmp (then /var/tmp, else the home directory).
fn outside_dir() -> tempfile::TempDir {
    let candidates = [
        Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        Some(std::path::PathBuf::from("/var/tmp")),
        std::env::var_os("HOME").map(std::path::PathBuf::from),
    ];
    for dir in candidates.into_iter().flatten() {
        let dir = match dir.canonicalize() {
            Ok(dir) => dir,
            Err(_) => continue,
        };
        if dir.starts_with("/tmp") || dir.starts_with(std::env::temp_dir()) {
            continue;
        }
        if let Ok(made) = tempfile::tempdir_in(&dir) {
            return made;
        }
    }
    panic!("no writable folder outside /tmp to test writes outside the sandbox with")
}

/// How many refusals `text` reports: by Landlock (`Permission denied`) or by the
/// read-only file system the namespaces build.
fn denials(text: &str) -> usize {
    text.matches("Permission denied").count() + text.matches("Read-only file system").count()
}

/// One `-p --approval-mode full-auto` run (plus `args`) in which the model makes one
/// bash call; the output and what the model got back.
fn run_bash(dirs: &Dirs, command: &str, args: &[&str]) -> (Output, String) {
    let args = [&["--approval-mode", "full-auto"], args].concat();
    MockServer::start(vec![]).one_bash_call(dirs.home(), dirs.project(), command, &args, &[])
}

#[test]
fn writes_outside_the_project_and_temp_folders_are_denied() {
    let dirs = Dirs::new();
    let outside = outside_dir();
    let o = outside.path().display();
    let scratch = format!("/tmp/harness9-sandbox-test-{}", std::process::id());
    let command = format!(
        "touch {o}/direct; ln -s {o} link && touch link/via-symlink; \
         touch /proc/self/root{o}/via-proc; echo in > inside.txt; echo t > {scratch}; \
         cat /etc/hostname > /dev/null && echo read-ok; touch {o}/last"
    );
    let (out, tool) = run_bash(&dirs, &command, &[]);
    assert_exit(&out, 0);
    for name in ["direct", "via-symlink", "via-proc", "last"] {
        assert!(
            !outside.path().join(name).exists(),
            "{name} was written: {tool}"
        );
    }
    assert_eq!(denials(&tool), 4, "{tool}");
    assert!(dirs.project().join("inside.txt").exists(), "{tool}");
    assert!(Path::new(&scratch).exists(), "{tool}");
    std::fs::remove_file(&scratch).unwrap();
    assert!(tool.contains("read-ok"), "{tool}");
    assert!(
        tool.contains("[harness9 sandbox: this command ran under --sandbox workspace-write")
            && tool.contains("--sandbox off")
            && tool.contains("writable_paths"),
        "{tool}"
    );
}

#[test]
fn no_socket_reaches_even_a_loopback_listener() {
    let dirs = Dirs::new();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let command = format!(
        "echo hi > /dev/tcp/127.0.0.1/{}; echo hi > /dev/udp/127.0.0.1/{}",
        tcp.local_addr().unwrap().port(),
        udp.local_addr().unwrap().port()
    );
    let (_, tool) = run_bash(&dirs, &command, &[]);
    // The command has ended: anything it sent is there by now.
    assert_eq!(
        tcp.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "{tool}"
    );
    let mut buf = [0u8; 16];
    assert_eq!(
        udp.recv(&mut buf).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "{tool}"
    );
    assert_eq!(
        tool.matches("socket: Operation not permitted").count(),
        2,
        "{tool}"
    );
    assert!(tool.contains("network = \"allow\""), "{tool}");

    // Allowed in config.toml, the same command connects.
    dirs.home_file("config.toml", "[sandbox]\nnetwork = \"allow\"\n");
    let (_, tool) = run_bash(&dirs, &command, &[]);
    tcp.set_nonblocking(false).unwrap();
    assert!(tcp.accept().is_ok(), "{tool}");
}

#[test]
fn read_only_refuses_writes_in_the_project_too_and_off_lifts_the_sandbox() {
    let dirs = Dirs::new();
    let (_, tool) = run_bash(&dirs, "echo x > inside.txt", &["--sandbox", "read-only"]);
    assert!(!dirs.project().join("inside.txt").exists(), "{tool}");
    assert!(tool.contains("--sandbox read-only"), "{tool}");

    let outside = outside_dir();
    let target = outside.path().join("made");
    let (_, tool) = run_bash(
        &dirs,
        &format!("touch {}", target.display()),
        &["--sandbox", "off"],
    );
    assert!(target.exists(), "{tool}");
}

#[test]
fn without_landlock_full_auto_needs_an_explicit_sandbox_off() {
    let dirs = Dirs::new();
    let unavailable = [("HARNESS9_SANDBOX_UNAVAILABLE", "1")];
    let server = MockServer::start(vec![]);
    let refused = output_of(
        server
            .binary(&dirs)
            .env("HARNESS9_SANDBOX_UNAVAILABLE", "1")
            .args(["-p", "go", "--approval-mode", "full-auto"]),
    );
    assert_exit(&refused, 2);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_has(&stderr, &["sandbox", "--sandbox off"]);
    assert!(server.chat_requests().is_empty(), "nothing was sent");

    // An explicit sandbox that cannot be had is refused too.
    let refused = output_of(
        server
            .binary(&dirs)
            .env("HARNESS9_SANDBOX_UNAVAILABLE", "1")
            .args(["-p", "go", "--approval-mode", "auto-edit"])
            .args(["--sandbox", "workspace-write"]),
    );
    assert_exit(&refused, 2);

    // With --sandbox off it runs, unconfined.
    let outside = outside_dir();
    let target = outside.path().join("made");
    let (out, tool) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        &format!("touch {}", target.display()),
        &["--approval-mode", "full-auto", "--sandbox", "off"],
        &unavailable,
    );
    assert_exit(&out, 0);
    assert!(target.exists(), "{tool}");

    // auto-edit by default says once that commands would run unconfined, and then asks
    // before each (denied unattended): it runs commands by itself only in the sandbox.
    let (out, tool) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "ls",
        &["--approval-mode", "auto-edit"],
        &unavailable,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("commands run unconfined").count(),
        1,
        "{stderr}"
    );
    assert!(tool.contains("only inside the sandbox"), "{tool}");
}

#[test]
fn truncating_renaming_and_hard_linking_out_of_the_project_are_denied() {
    let dirs = Dirs::new();
    let outside = outside_dir();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let command = format!(
        // (truncate(2) through python: the `truncate` program is a destructive command,
        // which asks in every mode before the sandbox would be tried.)
        "python3 -c 'import os,sys; os.truncate(sys.argv[1], 0)' {v}; mv {v} ./stolen; \
         ln {v} ./hard; echo x > here; mv here {o}/moved; rm -f {v}",
        v = victim.display(),
        o = outside.path().display()
    );
    let (_, tool) = run_bash(&dirs, &command, &[]);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "keep me",
        "{tool}"
    );
    // `mv` may leave a copy behind (reading is allowed); the file itself stays.
    assert!(victim.exists(), "{tool}");
    assert!(!dirs.project().join("hard").exists(), "{tool}");
    assert!(!outside.path().join("moved").exists(), "{tool}");
    assert!(dirs.project().join("here").exists(), "{tool}");
    assert!(tool.contains("[harness9 sandbox:"), "{tool}");
}

/// The sandbox launcher run directly (`harness9 __harness9-sandbox-exec ARGS`).
fn launch(args: &[&str]) -> Output {
    output_of(sandbox_launcher().args(args))
}

#[test]
fn the_launcher_runs_nothing_it_cannot_confine() {
    let bad = launch(&["--mode", "sideways", "--", "true"]);
    assert_exit(&bad, 126);
    assert!(
        String::from_utf8_lossy(&bad.stderr).starts_with("harness9 sandbox: "),
        "{bad:?}"
    );
    let read_only = ["--mode", "read-only", "--project", "/"];
    let missing = launch(&[&read_only[..], &["--", "no-such-program-h9"]].concat());
    assert_eq!(missing.status.code(), Some(127), "{missing:?}");
    let confined = ["--network", "allow", "--", "sh", "-c", "echo confined"];
    let ok = launch(&[&read_only[..], &confined].concat());
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "confined\n", "{ok:?}");
}

/// The other kinds of child are confined too: a skill's inline `` !`cmd` ``, a
/// tools.json tool and `skill_run` each try to write outside the project.
#[test]
fn skill_commands_are_confined_like_bash() {
    let dirs = Dirs::new();
    let outside = outside_dir();
    let o = outside.path().display();
    let (out, results) = MockServer::start(vec![]).every_skill_child(
        dirs.home(),
        dirs.project(),
        (
            "writer",
            &format!("touch {o}/inline 2>&1; echo inline-ran"),
            &format!("#!/bin/sh\ntouch {o}/script-$1 2>&1\necho script-ran\n"),
        ),
        &[],
    );
    assert_exit(&out, 0);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].contains("inline-ran"), "{results:?}");
    assert!(
        results[1].contains("script-ran") && results[2].contains("script-ran"),
        "{results:?}"
    );
    assert_eq!(
        results.iter().filter(|r| denials(r) > 0).count(),
        3,
        "{results:?}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

/// `skill_run` in a sandboxed session writes only in its workspace: its `OUTPUT_DIR`
/// and `WORK_DIR` work (and the file comes back), while the project (writable for
/// `bash`), `/tmp`, the skill's folder and a project file linked in as an input are not.
#[test]
fn skill_run_writes_only_in_its_workspace() {
    let dirs = Dirs::new();
    let dir = project_skill(dirs.project(), "maker", "Makes files", "Body\n");
    let p = dirs.project().display();
    let command = format!(
        "echo made > \"$OUTPUT_DIR/r.txt\" && echo w > \"$WORK_DIR/w\" && echo $TMPDIR > \"$TMPDIR/t\" && echo ok; \
         touch {p}/in-project 2>&1; touch /tmp/harness9-skill-run-escape 2>&1; \
         touch {}/in-skill 2>&1; cat \"$WORK_DIR/inputs/data.txt\"; \
         echo x >> \"$WORK_DIR/inputs/data.txt\" 2>&1; true",
        dir.display()
    );
    std::fs::write(dirs.project().join("data.txt"), "original\n").unwrap();
    let call = serde_json::json!({
        "skill": "maker",
        "command": command,
        "output_files": ["$OUTPUT_DIR/*"],
        "inputs": [{"from": "workspace://data.txt", "mode": "link"}],
    });
    let server = MockServer::start(vec![
        tool_reply("c1", "skill_run", &call.to_string()),
        answer("done"),
    ]);
    let out = server.run(&dirs, &["-p", "go", "--approval-mode", "full-auto"]);
    assert_exit(&out, 0);
    let result = server.chat_requests()[1].tool_results().join("\n");
    assert!(result.contains("ok\\n"), "{result}");
    assert!(result.contains("\"path\":\"out/r.txt\""), "{result}");
    // The three writes outside, and one through the linked input.
    assert_eq!(denials(&result), 4, "{result}");
    assert!(result.contains("original\\n"), "the link reads: {result}");
    assert!(result.contains("\"mode\":\"link\""), "{result}");
    assert_eq!(
        std::fs::read_to_string(dirs.project().join("data.txt")).unwrap(),
        "original\n"
    );
    assert!(!dirs.project().join("in-project").exists());
    assert!(!dir.join("in-skill").exists());
    assert!(!Path::new("/tmp/harness9-skill-run-escape").exists());
}
