//! Secrets kept out of the commands harness9 starts: the real binary runs `env` through
//! the `bash` tool, and the output the model gets back must hold neither the API key
//! (under its own name or any other) nor secret-looking variables, while ordinary ones
//! and the ones the user chose to keep are there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use crate::support::*;

#[test]
fn the_key_and_secret_looking_variables_never_reach_a_command() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &home.path().join("config.toml"),
        "child_env_keep = [\"CI_JOB_TOKEN\"]\nchild_env_remove = [\"CORP_CREDS\"]\n[headers]\nX-Org = \"org-hdr-value\"\n",
    );
    let server = MockServer::start(vec![
        sse(vec![
            tool_call(0, "c1", "bash", r#"{"command":"env"}"#),
            finish("tool_calls"),
        ]),
        sse(vec![text("done"), finish("stop")]),
    ]);
    let out = server
        .harness9(home.path(), project.path())
        .env("OPENAI_API_KEY", "sk-test-KEYVALUE")
        .env("KEY_COPY", "sk-test-KEYVALUE")
        .env("HDR_COPY", "org-hdr-value")
        .env("MY_SERVICE_TOKEN", "tok-VALUE")
        .env("DB_PASSWORD", "pw-VALUE")
        .env("CORP_CREDS", "corp-VALUE")
        .env("CI_JOB_TOKEN", "ci-kept")
        .env("ORDINARY", "still-here")
        .args(["-p", "show the environment", "--approval-mode", "full-auto"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let reqs = server.chat_requests();
    let tool_output = reqs[1].tool_results().remove(0);
    assert!(tool_output.contains("ORDINARY=still-here"), "{tool_output}");
    assert!(
        tool_output.contains("CI_JOB_TOKEN=ci-kept"),
        "{tool_output}"
    );
    for secret in [
        "sk-test-KEYVALUE",
        "org-hdr-value",
        "tok-VALUE",
        "pw-VALUE",
        "corp-VALUE",
    ] {
        assert!(
            !tool_output.contains(secret),
            "{secret} leaked: {tool_output}"
        );
    }
}

/// The other three kinds of child: a skill's inline `` !`env` ``, a tools.json tool and
/// `skill_run` — each prints its environment, and none holds the key.
#[test]
fn no_kind_of_child_sees_the_key() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (out, results) = MockServer::start(vec![]).every_skill_child(
        home.path(),
        project.path(),
        ("envy", "env", "#!/bin/sh\nenv\n"),
        &[
            ("OPENAI_API_KEY", "sk-test-KEYVALUE"),
            ("KEY_COPY", "sk-test-KEYVALUE"),
            ("MY_SERVICE_TOKEN", "tok-VALUE"),
            ("ORDINARY", "still-here"),
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(results.len(), 3, "{results:?}");
    for (kind, result) in ["inline !`env`", "tools.json tool", "skill_run"]
        .iter()
        .zip(&results)
    {
        assert!(result.contains("ORDINARY=still-here"), "{kind}: {result}");
        for secret in ["sk-test-KEYVALUE", "tok-VALUE"] {
            assert!(!result.contains(secret), "{kind} leaked {secret}: {result}");
        }
    }
}
