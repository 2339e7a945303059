//! The window and the model, learned reliably, end to end with the real binary: a fast
//! `-p` run stores the window it learns before it exits (the endpoint asked once over
//! several runs), and with no model configured the start-up probe waits for a loaded
//! local server's slow model list (configurable), saying so when it gives up and sends a
//! hosted model's id instead.

// Test helpers outside #[test] functions fail loudly too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::json;

use crate::support::{Dirs, MockServer, answer, output_of};

/// The binary against `server` with `-p hi` and no model unless `model` is given.
fn p_run(server: &MockServer, dirs: &Dirs, model: Option<&str>) -> Command {
    let mut cmd = server.binary(dirs);
    cmd.env_remove("HARNESS9_MODEL").args(["-p", "hi"]);
    if let Some(model) = model {
        cmd.args(["--model", model]);
    }
    cmd
}

fn models_requests(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/models")
        .count()
}

#[test]
fn a_fast_p_run_stores_the_window_it_learns_before_it_exits() {
    let server = MockServer::start(vec![answer("one"), answer("two"), answer("three")]);
    // The list arrives well after the answer: the run must wait for it to store it.
    server.route_delayed(
        "/v1/models",
        json!({"data": [{"id": "m", "max_model_len": 32768}]}),
        400,
    );
    let dirs = Dirs::new();
    let cache = dirs.home().join("cache").join("context_windows.json");
    let out = output_of(&mut p_run(&server, &dirs, Some("m")));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stored = std::fs::read_to_string(&cache).expect("the window is cached by the first run");
    assert!(stored.contains("32768"), "{stored}");
    for _ in 0..2 {
        let out = output_of(&mut p_run(&server, &dirs, Some("m")));
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    assert_eq!(server.chat_requests().len(), 3);
    assert_eq!(
        models_requests(&server),
        1,
        "later runs start knowing the window"
    );
}

/// A model whose window the built-in table knows (a hosted API's): the run ends with
/// its answer, without waiting for a slow model list that could only refine it.
#[test]
fn a_known_window_is_not_waited_for_at_the_end() {
    let server = MockServer::start(vec![answer("one")]);
    server.route_delayed(
        "/v1/models",
        json!({"data": [{"id": "gpt-4o-mini", "context_length": 128000}]}),
        10_000,
    );
    let dirs = Dirs::new();
    let started = std::time::Instant::now();
    let out = output_of(&mut p_run(&server, &dirs, Some("gpt-4o-mini")));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Waiting would hold the exit until the question gives up (2 s, the window
    // questions' own limit); the answer alone takes a fraction of that.
    assert!(
        started.elapsed() < std::time::Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn with_no_model_configured_a_slow_model_list_is_waited_for() {
    let server = MockServer::start(vec![answer("hello")]);
    // A loaded llama-server or Ollama: 800 ms to list its one model.
    server.route_delayed("/v1/models", json!({"data": [{"id": "local-model"}]}), 800);
    let dirs = Dirs::new();
    let out = output_of(&mut p_run(&server, &dirs, None));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let sent = server.chat_requests();
    assert_eq!(sent[0].body["model"], "local-model");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("using `local-model`"), "{stderr}");
}

#[test]
fn a_probe_that_gives_up_says_it_sends_a_hosted_model_id() {
    let server = MockServer::start(vec![answer("hello")]);
    server.route_delayed("/v1/models", json!({"data": [{"id": "local-model"}]}), 800);
    let dirs = Dirs::with_config("model_probe_timeout_ms = 100\n");
    let out = output_of(&mut p_run(&server, &dirs, None));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(server.chat_requests()[0].body["model"], "gpt-4o-mini");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("did not answer with a model list within 100 ms")
            && stderr.contains("`gpt-4o-mini`, a hosted model's id")
            && stderr.contains("model_probe_timeout_ms"),
        "{stderr}"
    );
}

#[test]
fn a_configured_model_asks_for_no_model_list_before_the_first_request() {
    let server = MockServer::start(vec![answer("hello")]);
    server.route_delayed("/v1/models", json!({"data": [{"id": "m"}]}), 2000);
    let dirs = Dirs::new();
    let out = output_of(&mut p_run(&server, &dirs, Some("m")));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions", "{requests:?}");
}
