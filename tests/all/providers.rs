//! Named providers end to end: the real binary, piped, against two scripted servers.
//! `/model NAME/model` moves the session to the second server with its own key (the
//! first key never reaches it), a model it does not list is refused with its list,
//! `/model` alone lists both servers' models and names a failing one, `--model
//! NAME/model` starts there while a model id with a slash of its own stays a model id,
//! and `-c` resumes on the provider and model the session last used.

// Test helpers outside #[test] functions fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::{Dirs, MockServer, answer, spawn_fed, wait_with_deadline};

const DEADLINE: Duration = Duration::from_secs(30);
const FIRST_KEY: &str = "first-key-AAAA1111";
const SECOND_KEY: &str = "second-key-BBBB2222";

/// A config naming `second` (keyed by `SECOND_KEY`) and, when given, `broken` (a port
/// nothing listens on).
fn config(second: &MockServer, broken: Option<u16>) -> Dirs {
    let mut toml = format!(
        "[providers.second]\nbase_url = \"{}\"\napi_key_env = \"SECOND_KEY\"\n",
        second.url()
    );
    if let Some(port) = broken {
        toml.push_str(&format!(
            "[providers.broken]\nbase_url = \"http://127.0.0.1:{port}/v1\"\n"
        ));
    }
    Dirs::with_config(&toml)
}

/// The binary on `first` (the top-level endpoint, key `FIRST_KEY`), piped.
fn harness9(first: &MockServer, dirs: &Dirs, args: &[&str]) -> Command {
    let mut cmd = first.binary(dirs);
    cmd.env("OPENAI_API_KEY", FIRST_KEY)
        .env("SECOND_KEY", SECOND_KEY)
        .env("HARNESS9_MODEL", "m")
        .args(args);
    cmd
}

fn pipe(cmd: &mut Command, stdin: &str) -> (Option<i32>, String, String) {
    let out = wait_with_deadline(spawn_fed(cmd, stdin.as_bytes()), DEADLINE);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Everything a server was sent: paths, headers and bodies.
fn seen(server: &MockServer) -> String {
    server
        .requests()
        .iter()
        .map(|r| format!("{} {} {:?} {}", r.method, r.path, r.headers, r.raw_body))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn model_name_slash_model_moves_the_session_with_its_own_key_and_resume_keeps_it() {
    let first = MockServer::start(vec![answer("from-first")]);
    let second = MockServer::start(vec![answer("from-second"), answer("resumed-on-second")]);
    second.route(
        "/v1/models",
        json!({"data": [{"id": "m2"}, {"id": "other"}]}),
    );
    let dirs = config(&second, None);
    let (code, stdout, stderr) = pipe(
        &mut harness9(&first, &dirs, &[]),
        "hello\n/model second/m2\nagain\n",
    );
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(
        stdout.contains("from-first") && stdout.contains("from-second"),
        "{stdout}"
    );
    assert!(stdout.contains("model: second/m2"), "{stdout}");

    let to_first = first.chat_requests();
    assert_eq!(to_first.len(), 1);
    assert_eq!(
        to_first[0].header("authorization"),
        Some("Bearer first-key-AAAA1111")
    );
    let to_second = second.chat_requests();
    assert_eq!(to_second.len(), 1);
    assert_eq!(to_second[0].body["model"], "m2");
    assert_eq!(
        to_second[0].header("authorization"),
        Some("Bearer second-key-BBBB2222")
    );
    // The conversation went along; the first key did not, in any request (the model
    // list asked before the switch included).
    assert_eq!(
        to_second[0].conversation(),
        vec![
            ("user".into(), "hello".into()),
            ("assistant".into(), "from-first".into()),
            ("user".into(), "again".into()),
        ]
    );
    let everything = seen(&second);
    assert!(everything.contains("/v1/models"), "{everything}");
    assert!(!everything.contains(FIRST_KEY), "{everything}");

    // `-c` resumes on the provider and model the session last used.
    let (code, stdout, stderr) = pipe(&mut harness9(&first, &dirs, &["-c"]), "third\n");
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(stdout.contains("resumed-on-second"), "{stdout}\n{stderr}");
    assert_eq!(
        first.chat_requests().len(),
        1,
        "nothing more went to the first server"
    );
    let last = second.chat_requests().pop().unwrap();
    assert_eq!(last.body["model"], "m2");
    assert_eq!(
        last.header("authorization"),
        Some("Bearer second-key-BBBB2222")
    );
    assert!(!seen(&second).contains(FIRST_KEY));
}

#[test]
fn an_unlisted_model_is_refused_with_the_list_and_model_alone_lists_every_provider() {
    let first = MockServer::start(vec![answer("still-first")]);
    first.route(
        "/v1/models",
        json!({"data": [{"id": "m"}, {"id": "m-big"}]}),
    );
    let second = MockServer::start(vec![]);
    second.route("/v1/models", json!({"data": [{"id": "m2"}]}));
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dirs = config(&second, Some(port));
    let (code, stdout, stderr) = pipe(
        &mut harness9(&first, &dirs, &[]),
        "/model second/nope\n/model\nhello\n",
    );
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let all = format!("{stdout}\n{stderr}");
    assert!(
        all.contains("provider `second` lists no model `nope`") && all.contains("it lists: m2"),
        "{all}"
    );
    // The listing: each provider's models as /model takes them, the failing one named.
    for line in [
        "model: m",
        "default (2 models):",
        "  m-big",
        "second (1 model):",
        "  second/m2",
    ] {
        assert!(all.contains(line), "{line:?} missing:\n{all}");
    }
    assert!(all.contains("broken: cannot list models: "), "{all}");
    // The refused switch changed nothing.
    assert!(stdout.contains("still-first"), "{stdout}");
    assert!(second.chat_requests().is_empty());
    assert!(!seen(&second).contains(FIRST_KEY));
}

#[test]
fn dash_dash_model_name_slash_model_starts_there_and_other_slashes_are_model_ids() {
    let first = MockServer::start(vec![answer("first-answer")]);
    let second = MockServer::start(vec![answer("second-answer")]);
    let dirs = config(&second, None);
    let mut on_second = harness9(
        &first,
        &dirs,
        &["--model", "second/anthropic/claude-x", "-p", "hi"],
    );
    let (code, stdout, stderr) = pipe(&mut on_second, "");
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(stdout.contains("second-answer"), "{stdout}");
    let sent = second.chat_requests();
    assert_eq!(sent[0].body["model"], "anthropic/claude-x");
    assert_eq!(
        sent[0].header("authorization"),
        Some("Bearer second-key-BBBB2222")
    );
    assert!(
        first.requests().is_empty(),
        "nothing asked of the first server"
    );
    assert!(!seen(&second).contains(FIRST_KEY));

    let mut plain = harness9(
        &first,
        &dirs,
        &["--model", "anthropic/claude-x", "-p", "hi"],
    );
    let (code, stdout, stderr) = pipe(&mut plain, "");
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(stdout.contains("first-answer"), "{stdout}");
    assert_eq!(first.chat_requests()[0].body["model"], "anthropic/claude-x");
}
