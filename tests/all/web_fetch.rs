//! `web_fetch` through the real binary against a scripted model and a 127.0.0.1 web
//! server: a fetch nobody approves is denied headless in every mode (nothing reaches the
//! server), a `web_fetch(HOST)` rule allows it, a deny rule wins over an allow rule, a
//! redirect to another host is reported and reaching that host is judged again, and the
//! request carries neither the provider key nor the configured headers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use crate::web_server::{Answer, WebServer};

use crate::support::*;

const KEY: &str = "sk-live-PROVIDER-KEY-7731";
const HEADER_VALUE: &str = "team-header-secret-4410";

fn page_server() -> WebServer {
    WebServer::start(vec![(
        "/doc",
        Answer::ok(
            "text/html",
            "<html><body><h2>Install</h2><p>Run <code>make</code>.</p></body></html>",
        ),
    )])
}

/// One `-p` run in `dirs` (plus `args`) in which the model fetches `url` once; the
/// output and what the model got back. The provider key is [`KEY`].
fn one_fetch(dirs: &Dirs, url: &str, args: &[&str]) -> (Output, String) {
    let call = serde_json::json!({ "url": url }).to_string();
    MockServer::start(vec![]).one_call(
        (dirs.home(), dirs.project()),
        ("web_fetch", &call),
        args,
        &[("OPENAI_API_KEY", KEY)],
    )
}

#[test]
fn a_fetch_nobody_approves_is_denied_headless_in_every_mode() {
    let web = page_server();
    let dirs = Dirs::new();
    for mode in ["suggest", "auto-edit", "full-auto"] {
        let (out, tool) = one_fetch(&dirs, &web.url("/doc"), &["--approval-mode", mode]);
        assert!(!tool.contains("Install"), "{mode}: {tool}");
        assert_has(&tool, &["Denied"]);
        assert_has(
            &stderr_text(&out),
            &["denied web_fetch", "web_fetch(127.0.0.1)"],
        );
    }
    assert!(web.heads().is_empty(), "{:?}", web.heads());
}

#[test]
fn a_host_rule_allows_it_and_the_page_arrives_as_markdown_without_key_or_headers() {
    let web = page_server();
    let dirs = Dirs::with_config(&format!(
        "[headers]\n\"X-Team\" = \"{HEADER_VALUE}\"\n\n[permissions]\nallow = [\"web_fetch(127.0.0.1)\"]\n"
    ));
    let (out, tool) = one_fetch(&dirs, &web.url("/doc"), &[]);
    assert_exit(&out, 0);
    assert_has(
        &tool,
        &[
            "## Install",
            "Run `make`.",
            "Status: 200 OK",
            "<untrusted_web_content>",
        ],
    );
    let heads = web.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    for head in &heads {
        assert!(!head.contains(KEY), "{head}");
        assert!(!head.contains(HEADER_VALUE), "{head}");
        assert!(
            !head.to_ascii_lowercase().contains("authorization"),
            "{head}"
        );
        assert!(!head.to_ascii_lowercase().contains("x-team"), "{head}");
    }
}

#[test]
fn a_deny_rule_for_the_host_wins_over_allowing_the_whole_tool() {
    let web = page_server();
    let dirs = Dirs::with_config("[permissions]\nallow = [\"web_fetch\"]\n");
    dirs.project_file(
        ".harness9/permissions.toml",
        "deny = [\"web_fetch(127.0.0.1)\"]\n",
    );
    let (out, tool) = one_fetch(&dirs, &web.url("/doc"), &["--approval-mode", "full-auto"]);
    assert!(!tool.contains("Install"), "{tool}");
    assert_has(&tool, &["deny web_fetch(127.0.0.1)"]);
    assert_has(
        &stderr_text(&out),
        &["refused by the rule `deny web_fetch(127.0.0.1)`"],
    );
    assert!(web.heads().is_empty(), "{:?}", web.heads());
    // Another host is not named by the deny rule: the allow rule runs the call, but a
    // rule for the whole tool names no host, so localhost's loopback address is refused.
    let (_, tool) = one_fetch(
        &dirs,
        &format!("http://localhost:{}/doc", web.addr.port()),
        &[],
    );
    assert_has(
        &tool,
        &["localhost resolves to 127.0.0.1", "web_fetch(localhost)"],
    );
    assert!(!tool.contains("Install"), "{tool}");
    assert!(web.heads().is_empty(), "{:?}", web.heads());
}

#[test]
fn a_wildcard_rule_never_opens_the_internal_network_and_a_named_host_does() {
    let web = page_server();
    let port = web.addr.port();
    let dirs =
        Dirs::with_config("[permissions]\nallow = [\"web_fetch\", \"web_fetch(*.localhost)\"]\n");
    for url in [
        format!("http://127.0.0.1:{port}/doc"),
        format!("http://2130706433:{port}/doc"),
        format!("http://0x7f.0.0.1:{port}/doc"),
        format!("http://[::ffff:127.0.0.1]:{port}/doc"),
        format!("http://localhost:{port}/doc"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ] {
        let (out, tool) = one_fetch(&dirs, &url, &[]);
        assert_exit(&out, 0);
        assert_has(
            &tool,
            &["not fetched:", "only when an allow rule names this host"],
        );
        assert!(!tool.contains("Install"), "{url}: {tool}");
    }
    assert!(web.heads().is_empty(), "{:?}", web.heads());
    // The rule that names the address lets its every spelling through.
    let named = Dirs::with_config("[permissions]\nallow = [\"web_fetch(127.0.0.1)\"]\n");
    let (_, tool) = one_fetch(&named, &format!("http://2130706433:{port}/doc"), &[]);
    assert_has(&tool, &["## Install", "URL: http://127.0.0.1:"]);
    let named = Dirs::with_config("[permissions]\nallow = [\"web_fetch(localhost)\"]\n");
    let (_, tool) = one_fetch(&named, &format!("http://localhost:{port}/doc"), &[]);
    assert_has(&tool, &["## Install"]);
    assert_eq!(web.heads().len(), 2, "{:?}", web.heads());
}

#[test]
fn web_fetch_uses_no_proxy_from_the_environment() {
    let web = page_server();
    let proxy = WebServer::start(vec![]);
    let dirs = Dirs::with_config("[permissions]\nallow = [\"web_fetch(127.0.0.1)\"]\n");
    let model = MockServer::start(vec![]);
    // The model's endpoint is reached by the name NO_PROXY exempts; the page by its
    // address, which every proxy variable would send through the proxy.
    let endpoint = model.url().replace("127.0.0.1", "localhost");
    let proxy_url = format!("http://{}", proxy.addr);
    let call = serde_json::json!({ "url": web.url("/doc") }).to_string();
    let (out, tool) = model.one_call(
        (dirs.home(), dirs.project()),
        ("web_fetch", &call),
        &[],
        &[
            ("OPENAI_BASE_URL", &endpoint),
            ("NO_PROXY", "localhost"),
            ("HTTP_PROXY", &proxy_url),
            ("http_proxy", &proxy_url),
            ("ALL_PROXY", &proxy_url),
        ],
    );
    assert_exit(&out, 0);
    assert_has(&tool, &["## Install"]);
    assert!(proxy.heads().is_empty(), "{:?}", proxy.heads());
    assert_eq!(web.heads().len(), 1);
}

#[test]
fn a_redirect_to_another_host_is_judged_again() {
    let target = page_server();
    let elsewhere = format!("http://localhost:{}/doc", target.addr.port());
    let web = WebServer::start(vec![("/away", Answer::redirect(&elsewhere))]);
    let dirs = Dirs::with_config("[permissions]\nallow = [\"web_fetch(127.0.0.1)\"]\n");
    let server = MockServer::start(vec![]);
    let first = serde_json::json!({ "url": web.url("/away") }).to_string();
    let second = serde_json::json!({ "url": elsewhere }).to_string();
    server.push(tool_reply("c1", "web_fetch", &first));
    server.push(tool_reply("c2", "web_fetch", &second));
    server.push(answer("done"));
    let out = server.run(&dirs, &["-p", "go"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    let results: Vec<String> = requests.iter().flat_map(|r| r.tool_results()).collect();
    let followed = results.iter().find(|r| r.contains("Redirected")).unwrap();
    assert_has(followed, &["Redirected to another host", &elsewhere]);
    let judged = results.last().unwrap();
    assert_has(judged, &["Denied"]);
    assert!(!judged.contains("Install"), "{judged}");
    // The page on the other host was never requested.
    assert!(target.heads().is_empty(), "{:?}", target.heads());
    assert_has(&stderr_text(&out), &["web_fetch(localhost)"]);
}

#[test]
fn a_non_http_url_is_refused_before_anything_is_asked() {
    let dirs = Dirs::new();
    dirs.project_file("notes.txt", "local secret");
    let url = format!("file://{}/notes.txt", dirs.project().display());
    let (_, tool) = one_fetch(&dirs, &url, &["--approval-mode", "full-auto"]);
    assert_has(&tool, &["only http and https"]);
    assert!(!tool.contains("local secret"), "{tool}");
}
