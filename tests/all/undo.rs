//! `/diff` and `/undo` through the real binary in pipe mode: a turn changes files with
//! `bash` (no edit tool involved), `/diff` shows it, `/undo` puts the files back and
//! removes what the turn created, and the model hears of it with the next message;
//! ignored files stay as they are.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::*;

#[test]
fn undo_puts_back_what_a_command_changed_and_the_model_hears_of_it() {
    let dirs = Dirs::new();
    let p = dirs.project();
    write(&p.join("keep.txt"), "original\n");
    write(&p.join("gone.txt"), "still here\n");
    write(&p.join(".gitignore"), "build/\n");
    write(&p.join("build/out"), "old build\n");
    let command = "printf 'changed\\n' > keep.txt && rm gone.txt && printf 'new\\n' > made.txt \
                   && printf 'new build\\n' > build/out";
    let server = MockServer::start(vec![
        tool_reply(
            "c1",
            "bash",
            &serde_json::json!({ "command": command }).to_string(),
        ),
        answer("changed them"),
        answer("noted"),
    ]);
    let child = spawn_fed(
        server
            .harness9(dirs.home(), p)
            .args(["--no-tui", "--approval-mode", "full-auto"]),
        b"change the files\n/diff\n/undo\nwhat now?\n",
    );
    let out = wait_with_deadline(child, std::time::Duration::from_secs(60));
    assert_exit(&out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("-original\n+changed"), "{stdout}");
    assert!(stdout.contains("+++ b/made.txt"), "{stdout}");
    assert!(stdout.contains("Undid the last turn's changes: put back 2 file(s): gone.txt, keep.txt; removed 1 file(s) it created: made.txt."), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(p.join("keep.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.join("gone.txt")).unwrap(),
        "still here\n"
    );
    assert!(!p.join("made.txt").exists());
    // Ignored files are not the undo's business.
    assert_eq!(
        std::fs::read_to_string(p.join("build/out")).unwrap(),
        "new build\n"
    );
    // The model is told with the next message, and nothing is left under the home.
    let last = server.chat_requests().last().unwrap().last_user_text();
    assert!(last.starts_with("[The user ran /undo"), "{last}");
    assert!(last.ends_with("what now?"), "{last}");
    let snapshots = dirs.home().join("snapshots");
    assert!(
        std::fs::read_dir(&snapshots).map_or(true, |d| d.count() == 0),
        "the store outlived the session"
    );
}

/// Runs the binary in pipe mode in `dirs` against `server` (plus `args`), feeding `stdin`.
fn pipe(server: &MockServer, dirs: &Dirs, args: &[&str], stdin: &str) -> std::process::Output {
    let child = spawn_fed(
        server
            .harness9(dirs.home(), dirs.project())
            .args(["--no-tui"])
            .args(args),
        stdin.as_bytes(),
    );
    let out = wait_with_deadline(child, std::time::Duration::from_secs(60));
    assert_exit(&out, 0);
    out
}

/// A model that makes one bash call running `command`, then answers.
fn one_command(command: &str) -> Vec<Reply> {
    vec![
        tool_reply(
            "c1",
            "bash",
            &serde_json::json!({ "command": command }).to_string(),
        ),
        answer("done"),
    ]
}

#[test]
fn an_undo_is_saved_so_a_resumed_session_tells_the_model() {
    let dirs = Dirs::new();
    let server = MockServer::start(one_command("printf 'x\\n' > made.txt"));
    pipe(
        &server,
        &dirs,
        &["--approval-mode", "full-auto"],
        "make it\n/undo\n",
    );
    assert!(!dirs.project().join("made.txt").exists());
    let server = MockServer::start(vec![answer("ok")]);
    pipe(&server, &dirs, &["-c"], "is made.txt there?\n");
    let last = server.chat_requests()[0].last_user_text();
    assert!(last.starts_with("[The user ran /undo"), "{last}");
    assert!(last.contains("made.txt"), "{last}");
    assert!(last.ends_with("is made.txt there?"), "{last}");
}

#[test]
fn undo_removes_the_folders_it_created_and_then_says_nothing_is_left() {
    let dirs = Dirs::new();
    let server = MockServer::start(one_command(
        "mkdir -p new/deep && printf 'x\\n' > new/deep/f",
    ));
    let out = pipe(
        &server,
        &dirs,
        &["--approval-mode", "full-auto"],
        "make it\n/undo\n/undo\n",
    );
    assert!(
        !dirs.project().join("new").exists(),
        "the folders it made are gone"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("removed 2 empty folder(s) it created: new, new/deep"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("no turn of this session changed a file"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Nothing left to undo: the turn that changed files was undone already"),
        "{stdout}"
    );
}

#[test]
fn a_skill_run_right_after_an_undo_carries_the_note() {
    let dirs = Dirs::new();
    project_skill(
        dirs.project(),
        "hello",
        "Say hello",
        "Say hello to the user.",
    );
    let mut replies = one_command("printf 'x\\n' > made.txt");
    replies.push(answer("hello!"));
    let server = MockServer::start(replies);
    pipe(
        &server,
        &dirs,
        &["--approval-mode", "full-auto"],
        "make it\n/undo\n/hello\n",
    );
    let last = server.chat_requests().last().unwrap().last_user_text();
    assert!(last.starts_with("[The user ran /undo"), "{last}");
    assert!(last.contains("Say hello to the user."), "{last}");
}

/// The pipe REPL with its standard input kept open: lines are sent one at a time and
/// what it printed (stdout and stderr) is waited on.
struct LiveRepl {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    said: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl LiveRepl {
    fn start(cmd: &mut std::process::Command) -> LiveRepl {
        use std::process::Stdio;
        let mut child = cmd
            .args(["--no-tui"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let readers: [Box<dyn std::io::Read + Send>; 2] = [
            Box::new(child.stdout.take().unwrap()),
            Box::new(child.stderr.take().unwrap()),
        ];
        for mut reader in readers {
            let said = said.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    said.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            });
        }
        let stdin = child.stdin.take();
        LiveRepl { child, stdin, said }
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn said(&self) -> String {
        String::from_utf8_lossy(&self.said.lock().unwrap()).into_owned()
    }

    fn wait_for(&self, text: &str) {
        let start = std::time::Instant::now();
        while !self.said().contains(text) {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(60),
                "timed out waiting for {text:?}; so far:\n{}",
                self.said()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Closes standard input and waits for the exit; returns all it printed.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{status:?}\n{}", self.said());
                break;
            }
            if start.elapsed() > std::time::Duration::from_secs(60) {
                let _ = self.child.kill();
                panic!("the REPL did not exit; so far:\n{}", self.said());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The readers see the end of both pipes once the process is gone.
        let start = std::time::Instant::now();
        while std::sync::Arc::strong_count(&self.said) > 1
            && start.elapsed() < std::time::Duration::from_secs(10)
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self.said()
    }
}

/// Every entry under `dir` (links not followed): content or link target, and mode.
fn picture(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u32, Vec<u8>)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(here) = stack.pop() {
        for entry in std::fs::read_dir(&here).unwrap() {
            let path = entry.unwrap().path();
            let meta = path.symlink_metadata().unwrap();
            let bytes = if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_dir() {
                stack.push(path.clone());
                b"<dir>".to_vec()
            } else {
                std::fs::read(&path).unwrap()
            };
            out.push((path, meta.permissions().mode(), bytes));
        }
    }
    out.sort();
    out
}

/// A turn rewrites `sub/f.txt`, deletes `sub/gone.txt`, creates `sub/new.txt` and the
/// folder `sub/made/`; then, outside harness9, `sub/` is swapped for a link to a folder
/// outside the project holding the same files as after the turn (so a check reading
/// through the link would find nothing changed). `/undo` puts nothing back: the folder
/// outside is byte for byte as it was, the project's other file too, and the user is
/// told why.
#[test]
fn undo_puts_nothing_back_through_a_folder_swapped_for_a_link_out_of_the_project() {
    let o = Outside::new();
    let (p, outside) = (o.project(), o.outside());
    write(&p.join("sub/f.txt"), "before\n");
    write(&p.join("sub/gone.txt"), "was here\n");
    write(&p.join("top.txt"), "top before\n");
    let command = "printf 'after\\n' > sub/f.txt && rm sub/gone.txt && printf 'made\\n' > \
                   sub/new.txt && mkdir sub/made && printf 'top after\\n' > top.txt";
    let server = MockServer::start(one_command(command));
    let mut repl = LiveRepl::start(
        server
            .harness9(o.dirs.home(), &p)
            .args(["--approval-mode", "full-auto"]),
    );
    repl.send("change the files");
    // `/diff` answers once the turn has ended and its picture is taken.
    repl.send("/diff");
    repl.wait_for("+++ b/sub/new.txt");
    // Then something outside harness9 swaps the folder for a link out of the project.
    for (name, text) in [("f.txt", "after\n"), ("new.txt", "made\n")] {
        write(&outside.join(name), text);
    }
    std::fs::create_dir(outside.join("made")).unwrap();
    std::fs::remove_dir_all(p.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, p.join("sub")).unwrap();
    let outside_before = picture(&outside);
    repl.send("/undo");
    let said = repl.finish();
    assert!(
        said.contains(
            "Nothing was undone; a symbolic link stands on the way now to sub/f.txt, \
             sub/gone.txt, sub/new.txt, sub/made (it could lead out of the project); nothing \
             was put back through it."
        ),
        "{said}"
    );
    assert_eq!(
        picture(&outside),
        outside_before,
        "the folder outside changed"
    );
    assert!(!outside.join("gone.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.join("top.txt")).unwrap(),
        "top after\n",
        "the whole undo is refused"
    );
}
