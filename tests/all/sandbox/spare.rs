//! A session's confined commands after the first go to a launcher started ahead (the
//! spare, `exec/spare.rs`) as a job: they must run exactly as the first did — the same
//! folder, environment (pagers off, secrets gone), stdin, streams, exit code and
//! confinement — with namespaces and without, and no launcher may outlive the session.

use std::path::Path;
use std::time::{Duration, Instant};

use super::outside_dir;
use crate::support::*;

/// Processes whose environment holds `marker` (the session's `HOME`, unique to the test).
fn processes_with(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'));
            !zombie
                && environ
                    .split(|b| *b == 0)
                    .any(|var| var == marker.as_bytes())
        })
        .collect()
}

fn session(home: &Path, project: &Path, outside: &Path, env: &[(&str, &str)]) -> Vec<String> {
    let look = "pwd; echo \"pager=$PAGER token=${H9_SPARE_TOKEN:-absent}\"; cat; echo stdin-done";
    let calls = [
        look.to_string(),
        look.to_string(),
        "echo out; echo err >&2; exit 3".to_string(),
        format!(
            "touch inside.txt && echo wrote; touch {}/x 2>/dev/null || echo refused",
            outside.display()
        ),
    ];
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, command)| {
            let call = serde_json::json!({ "command": command }).to_string();
            // The model thinks a while before each answer, as models do: the spare the
            // session starts after a command is then usually waiting for the next one
            // (the results must be the same either way).
            sse(vec![
                tool_call(0, &format!("c{i}"), "bash", &call),
                finish("tool_calls"),
            ])
            .delay_headers_ms(150)
        })
        .collect();
    replies.push(sse(vec![text("done"), finish("stop")]));
    let server = MockServer::start(replies);
    let mut cmd = server.harness9(home, project);
    cmd.args(["-p", "go", "--approval-mode", "full-auto"])
        .env("H9_SPARE_TOKEN", "not-for-commands")
        .stdin(std::process::Stdio::null());
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), calls.len() + 1);
    (1..=calls.len())
        .map(|i| {
            requests[i]
                .tool_results()
                .last()
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn later_confined_commands_run_exactly_as_the_first_and_no_launcher_outlives_the_session() {
    for env in [&[][..], &[("HARNESS9_SANDBOX_NO_NAMESPACES", "1")][..]] {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let outside = outside_dir();
        let results = session(home.path(), project.path(), outside.path(), env);
        let first = &results[0];
        let project_path = project.path().canonicalize().unwrap();
        assert!(
            first.contains(&project_path.display().to_string()),
            "{env:?}: {first}"
        );
        assert!(
            first.contains("pager=cat token=absent") && first.contains("stdin-done"),
            "{env:?}: {first}"
        );
        assert_eq!(
            &results[1], first,
            "{env:?}: the second command ran differently"
        );
        let streams = &results[2];
        assert!(
            streams.contains("out") && streams.contains("err") && streams.contains("exit code 3"),
            "{env:?}: {streams}"
        );
        assert!(results[3].contains("wrote"), "{env:?}: {}", results[3]);
        assert!(project.path().join("inside.txt").exists());
        assert!(
            !outside.path().join("x").exists(),
            "{env:?}: a later command wrote outside: {}",
            results[3]
        );
        // The spare started after the last command ends with the session.
        let marker = format!("HOME={}", home.path().display());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !processes_with(&marker).is_empty() {
            assert!(
                Instant::now() < deadline,
                "{env:?}: still running after the session: {:?}",
                processes_with(&marker)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// What a background job the first command left running wrote in `attack.log` while it
/// looked for a waiting spare launcher (one whose command line holds `--job`, but its own
/// namespace's first process, which ran its job already) and tried to hand it a job
/// through `/proc/PID/fd/0`; and the second command's result. The model
/// thinks 2 s before the second call, so the spare started after the first command is
/// waiting meanwhile.
fn hijack_attempt(env: &[(&str, &str)]) -> (String, String) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // A script of the project (a program the rules let run in full-auto).
    let script = project.path().join("attack.sh");
    std::fs::write(
        &script,
        "#!/bin/bash\n\
         end=$((SECONDS+4))\n\
         while [ $SECONDS -lt $end ]; do\n\
           for p in /proc/[0-9]*; do\n\
             [ $p = /proc/1 ] && continue\n\
             case \"$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)\" in\n\
               *--job*) if (printf x > $p/fd/0) 2>/dev/null; then echo \"WROTE $p\";\n\
                        else echo \"denied $p\"; fi; exit;;\n\
             esac\n\
           done\n\
           sleep 0.02\n\
         done\n\
         echo none\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let attacker = "./attack.sh > attack.log 2>&1 &";
    let call = |i: usize, command: &str, think: u64| {
        let args = serde_json::json!({ "command": command }).to_string();
        sse(vec![
            tool_call(0, &format!("c{i}"), "bash", &args),
            finish("tool_calls"),
        ])
        .delay_headers_ms(think)
    };
    let server = MockServer::start(vec![
        call(0, attacker, 0),
        call(1, "echo second", 2_000),
        sse(vec![text("done"), finish("stop")]),
    ]);
    let mut cmd = server.harness9(home.path(), project.path());
    cmd.args(["-p", "go", "--approval-mode", "full-auto"])
        .stdin(std::process::Stdio::null());
    for (name, value) in env {
        cmd.env(name, value);
    }
    assert_exit(&cmd.output().unwrap(), 0);
    let second = server.chat_requests()[2]
        .tool_results()
        .last()
        .cloned()
        .unwrap_or_default();
    let log = project.path().join("attack.log");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if !text.is_empty() || Instant::now() > deadline {
            return (text, second);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_confined_command_cannot_hand_the_waiting_spare_a_job() {
    // With namespaces the spare is outside the command's PID namespace: not even seen.
    let (log, second) = hijack_attempt(&[]);
    assert!(!log.contains("WROTE") && !log.contains("denied"), "{log}");
    assert!(second.contains("second"), "{second}");
    // Without them (Landlock and seccomp only) it is seen, and Landlock refuses to open
    // another process's file descriptors from inside the sandbox.
    let (log, second) = hijack_attempt(&[("HARNESS9_SANDBOX_NO_NAMESPACES", "1")]);
    assert!(!log.contains("WROTE"), "{log}");
    assert!(
        log.contains("denied"),
        "the attacker never saw the spare: {log}"
    );
    assert!(second.contains("second"), "{second}");
}
