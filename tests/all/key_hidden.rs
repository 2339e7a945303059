//! The API key and the other secrets of harness9's environment are unreadable from the
//! commands it starts: the real binary runs a `bash` call that reads its parent's
//! (harness9's) `/proc/PID/environ`, `cmdline` and `status`, then scans every readable
//! mapping of its memory through `/proc/PID/maps` and `/proc/PID/mem`, as root and as an
//! unprivileged user, with the sandbox on and off. The probe builds each secret from two
//! pieces so that the command line (which harness9 holds) never spells it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::support::*;

/// The key, a secret by name and a secret by value, each as the two halves the probe
/// joins.
const SECRETS: [(&str, &str, &str); 3] = [
    ("OPENAI_API_KEY", "sk-test-HIDDEN", "keyABCDEFGHIJKLMNOP"),
    ("MY_SERVICE_TOKEN", "tok-hidden-", "VALUE-0123456789"),
    (
        "DEPLOY_TARGET",
        "postgres://app:hunter2-hidden@",
        "db.internal/prod",
    ),
];

/// A bash line printing, for each secret, `NAME where count` for the parent's environ,
/// cmdline and memory (readable mappings), then whether environ and maps could be read
/// at all and the parent's dumpable flag as `status` shows it.
fn probe() -> String {
    let mut line = String::from(
        "scan() { n=0; while read -r range perms _; do case $perms in r*) \
         s=$((16#${range%-*})); e=$((16#${range#*-})); \
         if dd if=/proc/$PPID/mem bs=4096 skip=$((s/4096)) count=$(((e-s)/4096)) 2>/dev/null \
         | grep -q -a -F \"$1\"; then n=$((n+1)); fi;; esac; done < /proc/$PPID/maps 2>/dev/null; \
         echo $n; }\n",
    );
    for (name, a, b) in SECRETS {
        line.push_str(&format!(
            "v='{a}''{b}'\n\
             echo \"{name} environ $(tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c -F \"$v\")\"\n\
             echo \"{name} cmdline $(tr '\\0' '\\n' < /proc/$PPID/cmdline 2>/dev/null | grep -c -F \"$v\")\"\n\
             echo \"{name} memory $(scan \"$v\")\"\n"
        ));
    }
    line.push_str(
        "cat /proc/$PPID/environ > /dev/null 2>&1 && echo 'environ readable' || echo 'environ refused'\n\
         cat /proc/$PPID/maps > /dev/null 2>&1 && echo 'maps readable' || echo 'maps refused'\n\
         tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c '^OPENAI_API_KEY=$' | sed 's/^/empty key entries /'\n",
    );
    line
}

/// Runs `harness9 -p` as `user` with `sandbox`, the model making one bash call with the
/// probe; returns the tool result.
fn probe_as(user: User, sandbox: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    // The built-in secret rules already ask before any command naming
    // `/proc/*/environ` runs; they are off here so the probe reaches the layer this test
    // is about: what a command that does run finds in harness9's process.
    std::fs::write(
        home.join("config.toml"),
        "[permissions]\nbuiltin_rules = \"off\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(&project).unwrap();
    if user == User::Nobody {
        for path in [dir.path(), &home, &project] {
            std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    }
    let server = MockServer::start(vec![bash_reply("c1", &probe()), answer("done")]);
    let mut cmd = server.harness9(&home, &project);
    cmd.args([
        "-p",
        "go",
        "--approval-mode",
        "full-auto",
        "--sandbox",
        sandbox,
    ]);
    for (name, a, b) in SECRETS {
        cmd.env(name, format!("{a}{b}"));
    }
    let out = output_of(&mut as_user(cmd, user));
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(
        requests.len(),
        2,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    requests[1].tool_results().remove(0)
}

/// The count the probe printed for `name` in `place`.
fn count(result: &str, name: &str, place: &str) -> u32 {
    let prefix = format!("{name} {place} ");
    result
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in: {result}"))
        .trim()
        .parse()
        .unwrap()
}

fn assert_hidden(result: &str, places: &[&str]) {
    for (name, _, _) in SECRETS {
        for place in places {
            assert_eq!(count(result, name, place), 0, "{name} in {place}: {result}");
        }
    }
}

/// An unprivileged user, sandbox off or on: harness9 is non-dumpable, so its own
/// commands cannot open its environ, maps or mem at all.
#[test]
fn an_unprivileged_users_commands_cannot_read_harness9_at_all() {
    for sandbox in ["off", "workspace-write"] {
        let result = probe_as(User::Nobody, sandbox);
        assert!(result.contains("environ refused"), "{sandbox}: {result}");
        assert!(result.contains("maps refused"), "{sandbox}: {result}");
        assert_hidden(&result, &["environ", "cmdline", "memory"]);
    }
}

/// Root reads every process's environ: the values there are overwritten (the key's
/// entry reads `OPENAI_API_KEY=`). In the sandbox harness9 is not even there to read:
/// the command's parent is the sandbox's own first process, in a PID namespace of its
/// own, and its environ is refused.
#[test]
fn roots_commands_find_the_environment_block_overwritten() {
    let sandboxed = probe_as(User::Root, "workspace-write");
    assert!(sandboxed.contains("environ refused"), "{sandboxed}");
    assert_hidden(&sandboxed, &["environ", "cmdline", "memory"]);

    let unconfined = probe_as(User::Root, "off");
    assert!(unconfined.contains("empty key entries 1"), "{unconfined}");
    assert_hidden(&unconfined, &["environ", "cmdline"]);
    // The probe is real: root outside any sandbox can still read harness9's memory,
    // where the key lives while it is in use (docs/SECURITY.md names this limit).
    assert!(
        count(&unconfined, "OPENAI_API_KEY", "memory") > 0,
        "{unconfined}"
    );
}

/// The commands of every kind still run with an ordinary environment after the block
/// was overwritten; this only checks the home folder is where it was (the block's other
/// entries are untouched).
#[test]
fn the_rest_of_the_environment_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    // (The built-in rule asking about `/proc/*/environ` is off: this is about the block.)
    std::fs::write(
        dir.path().join("config.toml"),
        "[permissions]\nbuiltin_rules = \"off\"\n",
    )
    .unwrap();
    // Unconfined: in the sandbox, harness9's process is not visible to read.
    let (out, tool) = MockServer::start(vec![]).one_bash_call(
        dir.path(),
        Path::new(&project),
        "echo \"home=$HOME ordinary=$ORDINARY\"; tr '\\0' '\\n' < /proc/$PPID/environ | grep -c '^ORDINARY=still-here$'",
        &["--approval-mode", "full-auto", "--sandbox", "off"],
        &[("ORDINARY", "still-here"), ("DB_PASSWORD", "pw-VALUE-123")],
    );
    assert_exit(&out, 0);
    assert!(
        tool.contains(&format!(
            "home={} ordinary=still-here",
            dir.path().display()
        )),
        "{tool}"
    );
    assert!(tool.contains("\n1\n"), "{tool}");
    assert!(!tool.contains("pw-VALUE-123"), "{tool}");
}

/// A secret the user passes to an MCP server on purpose (`env_vars`) still reaches it
/// with its value, although harness9's own environment block no longer holds it;
/// secrets it was not given do not.
#[test]
fn a_secret_named_for_an_mcp_server_still_reaches_it() {
    let dirs = Dirs::with_config(&mcp_fixture_table(
        "fx",
        &[],
        "env_vars = [\"GITHUB_TOKEN\"]",
    ));
    let server = MockServer::start(vec![
        use_skill_reply("c1", "mcp:fx"),
        sse(vec![
            tool_call(0, "c2", "mcp__fx__env", r#"{"name":"GITHUB_TOKEN"}"#),
            tool_call(1, "c3", "mcp__fx__env", r#"{"name":"OTHER_TOKEN"}"#),
            finish("tool_calls"),
        ]),
        answer("done"),
    ]);
    let out = output_of(
        server
            .binary(&dirs)
            .env("GITHUB_TOKEN", "gh-token-for-the-server")
            .env("OTHER_TOKEN", "not-for-the-server")
            .args(["-p", "go", "--approval-mode", "full-auto"]),
    );
    assert_exit(&out, 0);
    let results = server.chat_requests()[2].tool_results();
    assert_eq!(
        results[1..],
        vec!["gh-token-for-the-server".to_string(), "<unset>".to_string()],
    );
}

/// `/proc/PID/cmdline` is readable by every user whatever the dumpable flag: arguments
/// that hold a secret (a base URL with a password, a prompt quoting the key or a token)
/// are overwritten there, the others stay.
#[test]
fn arguments_holding_secrets_are_hidden_from_the_command_line() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![
        bash_reply("c1", "tr '\\0' '\\n' < /proc/$PPID/cmdline"),
        answer("done"),
    ]);
    let url = server
        .url()
        .replace("http://", "http://user:url-pass-SECRET@");
    let prompt =
        "use the key sk-test-ARGkeyABCDEFGHIJKLMNOP and ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let out = output_of(
        server
            .binary(&dirs)
            .env("OPENAI_API_KEY", "sk-test-ARGkeyABCDEFGHIJKLMNOP")
            .args([
                "--base-url",
                &url,
                "-p",
                prompt,
                "--approval-mode",
                "full-auto",
                // Unconfined: in the sandbox, harness9's process is not visible to read.
                "--sandbox",
                "off",
            ]),
    );
    assert_exit(&out, 0);
    let cmdline = server.chat_requests()[1].tool_results().remove(0);
    for secret in ["url-pass-SECRET", "sk-test-ARGkey", "ghp_abcdef"] {
        assert!(!cmdline.contains(secret), "{secret}: {cmdline}");
    }
    assert!(cmdline.contains("--base-url\n****"), "{cmdline}");
    assert!(cmdline.contains("--approval-mode\nfull-auto"), "{cmdline}");
}
