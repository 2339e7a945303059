//! Secrets kept out of the commands harness9 starts: the real binary runs `env` through
//! the `bash` tool, and the output the model gets back must hold neither the API key
//! (under its own name or any other) nor secret-looking variables, while ordinary ones
//! and the ones the user chose to keep are there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::*;

#[test]
fn the_key_and_secret_looking_variables_never_reach_a_command() {
    let dirs = Dirs::with_config(
        "child_env_keep = [\"CI_JOB_TOKEN\"]\nchild_env_remove = [\"CORP_CREDS\"]\n[headers]\nX-Org = \"org-hdr-value\"\n",
    );
    let (out, tool_output) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "env",
        &["--approval-mode", "full-auto"],
        &[
            ("OPENAI_API_KEY", "sk-test-KEYVALUE"),
            ("KEY_COPY", "sk-test-KEYVALUE"),
            ("HDR_COPY", "org-hdr-value"),
            ("MY_SERVICE_TOKEN", "tok-VALUE"),
            ("DB_PASSWORD", "pw-VALUE"),
            ("CORP_CREDS", "corp-VALUE"),
            ("CI_JOB_TOKEN", "ci-kept"),
            ("ORDINARY", "still-here"),
        ],
    );
    assert_exit(&out, 0);
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
    let dirs = Dirs::new();
    let (out, results) = MockServer::start(vec![]).every_skill_child(
        dirs.home(),
        dirs.project(),
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

/// The widened list through the real binary: secrets by name (the issue's
/// `PGPASSWORD`, `DATABASE_URL`, `SECRET_KEY_BASE`, `SLACK_WEBHOOK_URL`, `SENTRY_DSN`,
/// `*_PAT`, `*_AUTH*`, `*CREDENTIAL*`, `*PRIVATE*`, `*COOKIE*`, in any case) and by value
/// (a URL with a password, token shapes, PEM key text) all go; `CDPATH` goes, and so do
/// `BASH_ENV`/`ENV` and exported functions; ordinary variables stay; a kept pattern
/// keeps.
#[test]
fn secrets_by_name_and_by_value_go_and_ordinary_variables_stay() {
    let dirs = Dirs::with_config("child_env_keep = [\"build_*_token\"]\n");
    let gone = [
        ("PGPASSWORD", "zq-pgpassword"),
        ("DATABASE_URL", "zq-database-url"),
        ("SECRET_KEY_BASE", "zq-secret-key-base"),
        ("SLACK_WEBHOOK_URL", "zq-slack-webhook"),
        ("SENTRY_DSN", "zq-sentry-dsn"),
        ("GITHUB_PAT", "zq-github-pat"),
        ("NPM_AUTH", "zq-npm-auth"),
        ("registry_authtoken", "zq-registry-auth"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "zq-credentials"),
        ("MY_PRIVATE_THING", "zq-private"),
        ("session_cookie", "zq-cookie"),
        ("DEPLOY_TARGET", "postgres://app:zq-url-password@db/prod"),
        ("UPLOAD", "ghp_vTOKENSHAPEabcdefghijklmnopqrstuvwxyz0"),
        ("LOOKS_HARMLESS", "sk-proj-vOPENAISHAPEabcdefghijklmnop"),
        ("SLACKY", "xoxb-12345-vSLACKSHAPE"),
        ("GL", "glpat-vGITLABSHAPEabcdefghij"),
        ("AWS_THING", "AKIAVAWSSHAPE0123456"),
        (
            "SIGNING",
            "-----BEGIN PRIVATE KEY-----\nzq-pem-body\n-----END PRIVATE KEY-----",
        ),
        ("CDPATH", "/zq-cdpath"),
        ("BASH_ENV", "/zq-bash-env"),
        ("ENV", "/zq-env"),
        ("BASH_FUNC_ls%%", "() { echo zq-exported-function; }"),
    ];
    let kept = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("TERM", "xterm-256color".into()),
        ("LANG", "C.UTF-8".into()),
        ("TOKENIZERS_PARALLELISM", "false".into()),
        ("KEYBOARD", "us".into()),
        ("GIT_AUTHOR_NAME", "Ada".into()),
        ("XAUTHORITY", "/run/x".into()),
        ("SSH_AUTH_SOCK", "/run/ssh.sock".into()),
        ("HOMEPAGE", "https://example.com/docs".into()),
        ("BUILD_CI_TOKEN", "kept-by-pattern".into()),
    ];
    let env: Vec<(&str, &str)> = gone
        .iter()
        .copied()
        .chain(kept.iter().map(|(name, value)| (*name, value.as_str())))
        .collect();
    let (out, tool_output) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "env; ls",
        &["--approval-mode", "full-auto"],
        &env,
    );
    assert_exit(&out, 0);
    for (name, value) in gone {
        assert!(
            !tool_output.contains(&format!("{name}=")) && !tool_output.contains("zq-"),
            "{name}={value} reached the command: {tool_output}"
        );
    }
    for (name, value) in &kept {
        assert!(
            tool_output.contains(&format!("{name}={value}\n")),
            "{name} is missing: {tool_output}"
        );
    }
}
