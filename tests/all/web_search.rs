//! `web_search` through the real binary against a scripted model and a 127.0.0.1 fake
//! SearXNG: not offered until a backend is configured; a search nobody approves is
//! denied headless (the backend hears nothing); a `web_search` rule allows it and the
//! results arrive as untrusted data; a result the model then fetches is judged again
//! by web_fetch's own rule.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::web_server::{Answer, WebServer};

use crate::support::*;

/// A fake SearXNG answering the query `harness9 docs` with one result, `result`.
fn searxng(result: &str) -> WebServer {
    let json = serde_json::json!({"results": [
        {"title": "harness9 documentation", "url": result, "content": "How to configure it."}
    ]});
    WebServer::start(vec![(
        "/search?q=harness9+docs&format=json",
        Answer::ok("application/json", json.to_string()),
    )])
}

fn config(search: &WebServer, rules: &str) -> Dirs {
    Dirs::with_config(&format!(
        "[web_search]\nsearxng_url = \"{}\"\n\n[permissions]\nallow = [{rules}]\n",
        search.url("/")
    ))
}

#[test]
fn web_search_is_offered_only_with_a_backend() {
    let dirs = Dirs::new();
    let server = MockServer::start(vec![answer("hi")]);
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_exit(&out, 0);
    let names = server.chat_requests()[0].tool_names();
    assert!(names.contains(&"web_fetch".to_string()), "{names:?}");
    assert!(!names.contains(&"web_search".to_string()), "{names:?}");
    let search = searxng("https://example.org/");
    let server = MockServer::start(vec![answer("hi")]);
    server.run(&config(&search, ""), &["-p", "hi"]);
    let names = server.chat_requests()[0].tool_names();
    assert!(names.contains(&"web_search".to_string()), "{names:?}");
}

#[test]
fn a_search_nobody_approves_is_denied_headless_in_every_mode() {
    let search = searxng("https://example.org/");
    let dirs = config(&search, "");
    for mode in ["suggest", "auto-edit", "full-auto"] {
        let (out, tool) = MockServer::start(vec![]).one_call(
            (dirs.home(), dirs.project()),
            ("web_search", r#"{"query": "harness9 docs"}"#),
            &["--approval-mode", mode],
            &[],
        );
        assert_has(&tool, &["Denied", "web_search"]);
        assert!(!tool.contains("documentation"), "{mode}: {tool}");
        assert_has(&stderr_text(&out), &["denied web_search"]);
    }
    assert!(search.heads().is_empty(), "{:?}", search.heads());
}

#[test]
fn a_rule_allows_the_search_and_a_result_is_fetched_only_by_its_own_rule() {
    let page = WebServer::start(vec![("/doc", Answer::ok("text/plain", "the page"))]);
    let search = searxng(&page.url("/doc"));
    let dirs = config(&search, "\"web_search\"");
    let server = MockServer::start(vec![]);
    let fetch = serde_json::json!({ "url": page.url("/doc") }).to_string();
    server.push(tool_reply(
        "c1",
        "web_search",
        r#"{"query": "harness9 docs"}"#,
    ));
    server.push(tool_reply("c2", "web_fetch", &fetch));
    server.push(answer("done"));
    let out = server.run(&dirs, &["-p", "go"]);
    assert_exit(&out, 0);
    let results: Vec<String> = server
        .chat_requests()
        .iter()
        .flat_map(|r| r.tool_results())
        .collect();
    assert_has(
        &results[0],
        &[
            "harness9 documentation",
            &page.url("/doc"),
            "How to configure it.",
            "<untrusted_search_results>",
        ],
    );
    assert_eq!(search.heads().len(), 1);
    // The search rule does not fetch: web_fetch has no rule here, so it is denied.
    assert_has(results.last().unwrap(), &["Denied"]);
    assert!(page.heads().is_empty(), "{:?}", page.heads());
}
