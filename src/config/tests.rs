//! Tests of configuration resolution: precedence, files, provider settings, the
//! start-up server probe against throwaway 127.0.0.1 servers.

use std::io::{Read, Write};
use std::time::Instant;

use super::probe::*;
use super::*;
use crate::llm::{ReasoningEcho, StreamMode, ToolChoice, UsageReporting};

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

fn home_with(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

/// Overrides naming a fresh temporary directory (the first value) as the workdir.
fn in_workdir() -> (tempfile::TempDir, Overrides) {
    let wd = tempfile::tempdir().unwrap();
    let over = Overrides {
        workdir: Some(wd.path().into()),
        ..Default::default()
    };
    (wd, over)
}

/// Resolves with an endpoint required and no server asked.
fn resolve_plain(
    over: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    Config::resolve(over, env, EndpointNeed::Required, OllamaProbe::Disabled)
}

#[test]
fn a_home_that_is_a_file_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    let env = env_of(&[("HARNESS9_HOME", file.to_str().unwrap())]);
    let over = Overrides {
        workdir: Some(dir.path().into()),
        ..Default::default()
    };
    let err = Config::resolve(&over, &env, EndpointNeed::None, OllamaProbe::Disabled)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("HARNESS9_HOME "), "{err}");
    assert!(err.contains("not-a-dir is not a directory"), "{err}");
    assert_eq!(err.matches("not a directory").count(), 1, "{err}");
}

#[test]
fn skills_roots_that_do_not_exist_are_warnings() {
    let home = home_with("skills_dirs = [\"/nonexistent/from-file\"]\n");
    let h = home.path().to_str().unwrap();
    let wd = tempfile::tempdir().unwrap();
    let present = wd.path().join("present");
    std::fs::create_dir(&present).unwrap();
    let over = Overrides {
        workdir: Some(wd.path().into()),
        skills_dirs: vec![present, "/nonexistent/from-flag".into()],
        ..Default::default()
    };
    let env = env_of(&[
        ("HARNESS9_HOME", h),
        ("SKILLS_ROOT", "/nonexistent/from-env"),
    ]);
    let c = Config::resolve(&over, &env, EndpointNeed::None, OllamaProbe::Disabled).unwrap();
    assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("/nonexistent/from-flag (--skills-dir) does not exist"));
    assert!(c.warnings[1].contains("/nonexistent/from-file (skills_dirs in "));
    assert!(c.warnings[2].contains("/nonexistent/from-env (SKILLS_ROOT)"));
    // They are still searched in order (a root may appear later).
    assert_eq!(c.skills_dirs.len(), 4);
}

#[test]
fn flags_beat_env_beat_file_beat_defaults() {
    let home = home_with("model = \"file-model\"\nbase_url = \"http://file/v1\"\nmax_turns = 7\n");
    let h = home.path().to_str().unwrap();
    let (_wd, over) = in_workdir();

    let env = env_of(&[("HARNESS9_HOME", h)]);
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.model, "file-model");
    assert_eq!(c.provider.base_url, "http://file/v1");
    assert_eq!(c.max_turns, 7);

    let env = env_of(&[
        ("HARNESS9_HOME", h),
        ("HARNESS9_MODEL", "env-model"),
        ("OPENAI_BASE_URL", "http://env/v1/"),
    ]);
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.model, "env-model");
    assert_eq!(c.provider.base_url, "http://env/v1");

    let over = Overrides {
        model: Some("flag-model".into()),
        base_url: Some("http://flag/v1".into()),
        max_turns: Some(3),
        ..over
    };
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(
        (c.model.as_str(), c.provider.base_url.as_str()),
        ("flag-model", "http://flag/v1")
    );
    assert_eq!(c.max_turns, 3);
}

#[test]
fn key_alone_means_openai_and_no_endpoint_says_what_to_set() {
    let home = home_with("");
    let h = home.path().to_str().unwrap();
    let (_wd, over) = in_workdir();
    let env = env_of(&[("HARNESS9_HOME", h), ("OPENAI_API_KEY", "sk-test")]);
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.provider.base_url, DEFAULT_BASE_URL);
    assert_eq!(c.provider.api_key.as_deref(), Some("sk-test"));
    assert_eq!(c.model, DEFAULT_MODEL);

    let env = env_of(&[("HARNESS9_HOME", h)]);
    let err = resolve_plain(&over, &env).unwrap_err().to_string();
    assert!(
        err.contains("OPENAI_API_KEY") && err.contains("--base-url"),
        "{err}"
    );
}

#[test]
fn unknown_keys_and_bad_values_are_reported_with_the_file() {
    let home = home_with("modle = \"x\"\n");
    let h = home.path().to_str().unwrap();
    let env = env_of(&[("HARNESS9_HOME", h), ("OPENAI_API_KEY", "k")]);
    let err = resolve_plain(&Overrides::default(), &env)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("config.toml") && err.contains("modle"),
        "{err}"
    );

    let home = home_with("base_url = \"localhost:8080\"\n");
    let h = home.path().to_str().unwrap();
    let env = env_of(&[("HARNESS9_HOME", h)]);
    let err = resolve_plain(&Overrides::default(), &env)
        .unwrap_err()
        .to_string();
    assert!(err.contains("http://"), "{err}");
}

#[test]
fn provider_quirks_come_from_the_file() {
    let home = home_with(
        "base_url = \"http://x/v1\"\ninclude_usage = false\nstream = false\nsend_reasoning = true\napi_key_env = \"MY_KEY\"\n[headers]\nX-Title = \"harness9\"\n",
    );
    let h = home.path().to_str().unwrap();
    let env = env_of(&[("HARNESS9_HOME", h), ("MY_KEY", "secret")]);
    let (_wd, over) = in_workdir();
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.provider.usage_reporting, UsageReporting::Omit);
    assert_eq!(c.provider.stream_mode, StreamMode::NonStreaming);
    assert_eq!(c.provider.reasoning_echo, ReasoningEcho::Always);
    assert_eq!(c.provider.api_key.as_deref(), Some("secret"));
    assert_eq!(c.provider.api_key_source, "MY_KEY");
    assert_eq!(
        c.provider.extra_headers,
        vec![("X-Title".to_string(), "harness9".to_string())]
    );
}

#[test]
fn missing_workdir_is_an_error() {
    let env = env_of(&[("OPENAI_API_KEY", "k")]);
    let over = Overrides {
        workdir: Some("/definitely/not/here".into()),
        ..Default::default()
    };
    assert!(matches!(
        resolve_plain(&over, &env),
        Err(ConfigError::Workdir { .. })
    ));
}

#[test]
fn skills_root_and_skill_run_lists() {
    let home = home_with(
        "skills_root = \"https://example.com/skills.zip\"\nskill_run_denied_commands = [\"rm\"]\n",
    );
    let h = home.path().to_str().unwrap();
    let (_wd, over) = in_workdir();
    let env = env_of(&[("HARNESS9_HOME", h), ("OPENAI_API_KEY", "k")]);
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(
        c.remote_skills_root.as_deref(),
        Some("https://example.com/skills.zip")
    );
    assert_eq!(c.skills_cache_dir, home.path().join("cache/skills"));
    assert_eq!(c.skill_run_commands.denied, Some(vec!["rm".to_string()]));
    assert!(c.skill_run_commands.allowed.is_none());

    let env = env_of(&[
        ("HARNESS9_HOME", h),
        ("OPENAI_API_KEY", "k"),
        ("SKILLS_ROOT", "/team/skills"),
        ("SKILLS_CACHE_DIR", "/tmp/cache"),
        ("HARNESS9_SKILL_RUN_ALLOWED_COMMANDS", "python3, sh"),
    ]);
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.remote_skills_root, None);
    assert_eq!(
        c.skills_dirs.last().unwrap(),
        &PathBuf::from("/team/skills")
    );
    assert_eq!(c.skills_cache_dir, PathBuf::from("/tmp/cache"));
    assert_eq!(
        c.skill_run_commands.allowed,
        Some(vec!["python3".to_string(), "sh".to_string()])
    );
}

#[test]
fn the_context_window_comes_only_from_the_file() {
    let wd = tempfile::tempdir().unwrap();
    let over = Overrides {
        workdir: Some(wd.path().into()),
        model: Some("gpt-4o".into()),
        ..Default::default()
    };
    let home = home_with("");
    let env = env_of(&[
        ("HARNESS9_HOME", home.path().to_str().unwrap()),
        ("OPENAI_API_KEY", "k"),
    ]);
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.context_window, None, "the table is not consulted here");
    assert_eq!(
        c.context_window_cache,
        home.path().join("cache/context_windows.json")
    );

    let home = home_with("context_window = 32000\n");
    let env = env_of(&[
        ("HARNESS9_HOME", home.path().to_str().unwrap()),
        ("OPENAI_API_KEY", "k"),
    ]);
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.context_window, Some(32_000));
}

#[test]
fn sessions_are_saved_unless_turned_off() {
    let (_wd, over) = in_workdir();
    let resolve = |config: &str, pairs: &[(&str, &str)]| {
        let home = home_with(config);
        let mut all = vec![("HARNESS9_HOME", home.path().to_str().unwrap())];
        all.extend_from_slice(pairs);
        Config::resolve(
            &over,
            &env_of(&all),
            EndpointNeed::None,
            OllamaProbe::Disabled,
        )
    };
    let c = resolve("", &[]).unwrap();
    assert_eq!(c.session_saving, SessionSaving::Enabled);
    assert_eq!(c.sessions_max_bytes, DEFAULT_SESSIONS_MAX_BYTES);
    let c = resolve("sessions = false\nsessions_max_bytes = 5000\n", &[]).unwrap();
    assert_eq!(c.session_saving, SessionSaving::Disabled);
    assert_eq!(c.sessions_max_bytes, 5000);
    let c = resolve("", &[("HARNESS9_SESSIONS", "0")]).unwrap();
    assert_eq!(c.session_saving, SessionSaving::Disabled);
    let c = resolve("sessions = false\n", &[("HARNESS9_SESSIONS", "1")]).unwrap();
    assert_eq!(c.session_saving, SessionSaving::Enabled);
    let err = resolve("", &[("HARNESS9_SESSIONS", "maybe")]).unwrap_err();
    assert!(err.to_string().contains("HARNESS9_SESSIONS"), "{err}");
    assert!(resolve("sessions_max_bytes = 0\n", &[]).is_err());
}

#[test]
fn provider_names() {
    assert_eq!(provider_name_for("https://api.openai.com/v1"), "openai");
    assert_eq!(provider_name_for("http://127.0.0.1:11434/v1"), "ollama");
    assert_eq!(provider_name_for("http://127.0.0.1:9/v1"), "127.0.0.1");
}

// --- provider settings and the default model ---

fn resolve_with(
    config: &str,
    pairs: &[(&str, &str)],
    probe: ServerProbe,
) -> Result<Config, ConfigError> {
    let home = home_with(config);
    let (_wd, over) = in_workdir();
    let mut all = vec![("HARNESS9_HOME", home.path().to_str().unwrap())];
    all.extend_from_slice(pairs);
    Config::resolve(&over, &env_of(&all), EndpointNeed::Required, probe)
}

/// The config with only `base_url = url`, asking the server for its model.
fn probe_at(url: &str) -> Config {
    resolve_with(
        &format!("base_url = \"{url}\"\n"),
        &[],
        ServerProbe::Enabled,
    )
    .unwrap()
}

fn assert_warned(c: &Config, part: &str) {
    assert!(
        c.warnings.iter().any(|w| w.contains(part)),
        "{:?}",
        c.warnings
    );
}

/// A listener that accepts and never answers, and its base URL.
fn silent_server() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    (listener, url)
}

#[test]
fn provider_settings_parse_and_default() {
    let c = resolve_with("base_url = \"http://x/v1\"\n", &[], ServerProbe::Disabled).unwrap();
    assert_eq!(c.provider.auth_header, AuthHeader::Bearer);
    assert!(c.provider.extra_body.is_empty());
    assert_eq!(c.provider.max_output_tokens, None);
    assert_eq!(c.provider.tool_choice, ToolChoice::Auto);

    let c = resolve_with(
        "base_url = \"http://x/v1\"\nauth_header = \"api-key\"\ntool_choice = \"none-sent\"\n\
         max_output_tokens = 4096\n[extra_body]\noptions = { num_ctx = 8192 }\n\
         chat_template_kwargs = { enable_thinking = false }\n",
        &[],
        ServerProbe::Disabled,
    )
    .unwrap();
    assert_eq!(
        c.provider.auth_header,
        AuthHeader::Named {
            name: "api-key".into()
        }
    );
    assert_eq!(c.provider.tool_choice, ToolChoice::Omit);
    assert_eq!(c.provider.max_output_tokens, Some(4096));
    assert_eq!(
        serde_json::Value::Object(c.provider.extra_body.clone()),
        serde_json::json!({
            "options": {"num_ctx": 8192},
            "chat_template_kwargs": {"enable_thinking": false}
        })
    );
    for (text, choice) in [
        ("\"auto\"", ToolChoice::Auto),
        ("\"required\"", ToolChoice::Required),
        (
            "{ function = \"read_file\" }",
            ToolChoice::Function {
                name: "read_file".into(),
            },
        ),
    ] {
        let c = resolve_with(
            &format!("base_url = \"http://x/v1\"\ntool_choice = {text}\n"),
            &[],
            ServerProbe::Disabled,
        )
        .unwrap();
        assert_eq!(c.provider.tool_choice, choice);
    }
    let c = resolve_with(
        "base_url = \"http://x/v1\"\nauth_header = \"Authorization\"\n",
        &[],
        ServerProbe::Disabled,
    )
    .unwrap();
    assert_eq!(c.provider.auth_header, AuthHeader::Bearer);
}

#[test]
fn bad_provider_settings_are_errors_that_name_the_key() {
    let cases = [
        ("auth_header = \"api key\"\n", "auth_header"),
        ("auth_header = \"\"\n", "auth_header"),
        ("[extra_body]\nmodel = \"x\"\n", "extra_body.model"),
        (
            "[extra_body]\nstream_options = {}\n",
            "extra_body.stream_options",
        ),
        (
            "max_output_tokens = 10\n[extra_body]\nmax_tokens = 5\n",
            "extra_body.max_tokens",
        ),
        ("max_output_tokens = 0\n", "max_output_tokens"),
        ("tool_choice = \"none\"\n", "tool_choice"),
        ("extra_body = 3\n", "extra_body"),
    ];
    for (config, key) in cases {
        let err = resolve_with(
            &format!("base_url = \"http://x/v1\"\n{config}"),
            &[],
            ServerProbe::Disabled,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(key), "{config}: {err}");
    }
    let err = resolve_with(
        "base_url = \"http://x/v1\"\n[extra_body]\nmessages = []\n",
        &[],
        ServerProbe::Disabled,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("cannot be overridden"), "{err}");
}

/// Serves `responses` in turn, one connection each, on 127.0.0.1; returns the base URL
/// and the requests it received.
fn serve(responses: Vec<Vec<u8>>) -> (String, std::sync::mpsc::Receiver<String>) {
    let (listener, url) = silent_server();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for response in responses {
            let Ok((mut conn, _)) = listener.accept() else {
                return;
            };
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&request).into_owned());
            let _ = conn.write_all(&response);
        }
    });
    (url, rx)
}

fn list_body(ids: &[&str]) -> String {
    let data: Vec<_> = ids
        .iter()
        .map(|id| serde_json::json!({"id": id, "object": "model"}))
        .collect();
    serde_json::json!({"object": "list", "data": data}).to_string()
}

#[test]
fn the_only_model_the_server_lists_is_used_and_said() {
    let body = list_body(&["qwen3-8b"]);
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (url, requests) = serve(vec![response.into_bytes()]);
    let c = resolve_with(
        &format!("base_url = \"{url}\"\nauth_header = \"api-key\"\n"),
        &[("OPENAI_API_KEY", "k1")],
        ServerProbe::Enabled,
    )
    .unwrap();
    assert_eq!(c.model, "qwen3-8b");
    assert_warned(&c, "using `qwen3-8b`, the only model");
    let request = requests.recv().unwrap();
    assert!(
        request.starts_with("GET /v1/models HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(request.contains("\r\napi-key: k1\r\n"), "{request}");
}

#[test]
fn the_first_of_several_models_is_used_chunked_or_close_delimited() {
    let body = list_body(&["a-model", "b-model", "c-model"]);
    let (half1, half2) = body.split_at(10);
    let chunked = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{half1}\r\n{:x}\r\n{half2}\r\n0\r\n\r\n",
        half1.len(),
        half2.len()
    );
    let closed = format!("HTTP/1.0 200 OK\r\n\r\n{body}");
    let (url, _requests) = serve(vec![chunked.into_bytes(), closed.into_bytes()]);
    for _ in 0..2 {
        let c = probe_at(&url);
        assert_eq!(c.model, "a-model");
        assert_warned(
            &c,
            "using `a-model`, the first of 3 models the server lists",
        );
    }
}

#[test]
fn a_configured_model_asks_nothing_and_openai_keeps_the_default() {
    let (listener, url) = silent_server();
    let c = resolve_with(
        &format!("base_url = \"{url}\"\nmodel = \"mine\"\n"),
        &[],
        ServerProbe::Enabled,
    )
    .unwrap();
    assert_eq!(c.model, "mine");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "no request when a model is set");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    let c = resolve_with("", &[("OPENAI_API_KEY", "k")], ServerProbe::Enabled).unwrap();
    assert_eq!(c.model, DEFAULT_MODEL);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn a_silent_or_failing_server_falls_back_quickly() {
    // Accepts and never answers: given up on after model_probe_timeout_ms.
    let (listener, url) = silent_server();
    let started = Instant::now();
    let c = resolve_with(
        &format!("base_url = \"{url}\"\nmodel_probe_timeout_ms = 200\n"),
        &[],
        ServerProbe::Enabled,
    )
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(c.model, DEFAULT_MODEL);
    assert_warned(&c, "did not answer with a model list within 200 ms");
    let err = resolve_with(
        &format!("base_url = \"{url}\"\nmodel_probe_timeout_ms = 0\n"),
        &[],
        ServerProbe::Enabled,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("model_probe_timeout_ms"), "{err}");
    drop(listener);

    let (url, _requests) = serve(vec![
        b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".to_vec(),
    ]);
    let c = probe_at(&url);
    assert_eq!(c.model, DEFAULT_MODEL);

    let c = resolve_with(
        "base_url = \"https://openrouter.ai/api/v1\"\n",
        &[],
        ServerProbe::Enabled,
    )
    .unwrap();
    assert_eq!(c.model, DEFAULT_MODEL);
    assert_warned(&c, "to openrouter.ai");
}

#[test]
fn responses_are_framed_and_capped() {
    let done = |raw: &str, end| parse_response(raw.as_bytes(), end);
    assert_eq!(
        done("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", End::Open),
        Parsed::Incomplete
    );
    assert_eq!(
        done(
            "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nabcd",
            End::Open
        ),
        Parsed::Done(200, b"ab".to_vec())
    );
    assert_eq!(
        done(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
            End::Closed
        ),
        Parsed::Broken
    );
    assert_eq!(
        done(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
            End::Open
        ),
        Parsed::Done(200, b"abc".to_vec())
    );
    assert_eq!(
        done(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",
            End::Open
        ),
        Parsed::Incomplete
    );
    assert_eq!(done("garbage\r\n\r\n", End::Open), Parsed::Broken);
    assert_eq!(url_host("http://[::1]:8080/v1"), "::1");
    assert_eq!(
        model_lookup_for("https://api.openai.com/v1"),
        ModelLookup::OpenAi
    );
    assert_eq!(
        model_lookup_for("http://[::1]:8080/v1"),
        ModelLookup::PlainHttp
    );
    assert_eq!(
        model_lookup_for("https://openrouter.ai/api/v1"),
        ModelLookup::Tls
    );
    assert_eq!(url_host("https://user@api.openai.com/v1"), "api.openai.com");

    let big = format!(
        "HTTP/1.0 200 OK\r\n\r\n{}",
        "x".repeat(PROBE_RESPONSE_CAP + 10)
    );
    let (url, _requests) = serve(vec![big.into_bytes()]);
    assert_eq!(
        http_get(
            &format!("{url}/models"),
            &[],
            Duration::from_secs(2),
            Duration::from_secs(2)
        ),
        None
    );
}

#[test]
fn wire_is_auto_unless_set_and_responses_owns_its_keys() {
    use crate::llm::{Wire, WireSetting};
    let c = resolve_with("base_url = \"http://x/v1\"\n", &[], ServerProbe::Disabled).unwrap();
    assert_eq!(c.provider.wire, WireSetting::Auto);
    for (text, wire) in [
        ("auto", WireSetting::Auto),
        ("chat", WireSetting::Always { wire: Wire::Chat }),
        (
            "responses",
            WireSetting::Always {
                wire: Wire::Responses,
            },
        ),
    ] {
        let c = resolve_with(
            &format!("base_url = \"http://x/v1\"\nwire = \"{text}\"\n[extra_body]\nreasoning = {{ effort = \"high\" }}\n"),
            &[],
            ServerProbe::Disabled,
        )
        .unwrap();
        assert_eq!(c.provider.wire, wire, "{text}");
    }
    for (config, key) in [
        ("wire = \"grpc\"\n", "wire"),
        (
            "wire = \"responses\"\n[extra_body]\nstore = true\n",
            "extra_body.store",
        ),
        (
            "wire = \"responses\"\n[extra_body]\ninput = []\n",
            "extra_body.input",
        ),
    ] {
        let err = resolve_with(
            &format!("base_url = \"http://x/v1\"\n{config}"),
            &[],
            ServerProbe::Disabled,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(key), "{config}: {err}");
    }
    // On the Chat wire the Responses names are ordinary extra keys.
    let c = resolve_with(
        "base_url = \"http://x/v1\"\n[extra_body]\nstore = true\n",
        &[],
        ServerProbe::Disabled,
    )
    .unwrap();
    assert_eq!(c.provider.extra_body["store"], true);
}

#[test]
fn effort_and_its_dialect_come_from_the_file_and_the_flag_wins() {
    use crate::llm::effort::{DialectChoice, EffortDialect};
    use crate::protocol::Effort;
    let home = home_with(
        "base_url = \"http://x/v1\"\nreasoning_effort = \"low\"\neffort_dialect = \"chat-template-kwargs\"\n",
    );
    let h = home.path().to_str().unwrap();
    let env = env_of(&[("HARNESS9_HOME", h)]);
    let (_wd, over) = in_workdir();
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.provider.reasoning_effort, Some(Effort::Low));
    assert_eq!(c.effort_source, ModelSource::Settings);
    assert_eq!(
        c.provider.effort_dialect,
        DialectChoice::Configured {
            dialect: EffortDialect::ChatTemplateKwargs
        }
    );
    let flagged = Overrides {
        effort: Some(Effort::High),
        ..over.clone()
    };
    let c = resolve_plain(&flagged, &env).unwrap();
    assert_eq!(c.provider.reasoning_effort, Some(Effort::High));
    assert_eq!(c.effort_source, ModelSource::CommandLine);
    // Unset: nothing is sent, and the dialect follows the endpoint.
    let home = home_with("base_url = \"http://x/v1\"\n");
    let h = home.path().to_str().unwrap();
    let c = resolve_plain(&over, &env_of(&[("HARNESS9_HOME", h)])).unwrap();
    assert_eq!(c.provider.reasoning_effort, None);
    assert_eq!(c.provider.effort_dialect, DialectChoice::FromEndpoint);
    // A level that does not exist is an error naming the key.
    for bad in [
        "reasoning_effort = \"max\"\n",
        "effort_dialect = \"anthropic\"\n",
    ] {
        let home = home_with(&format!("base_url = \"http://x/v1\"\n{bad}"));
        let h = home.path().to_str().unwrap();
        let err = resolve_plain(&over, &env_of(&[("HARNESS9_HOME", h)]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("config.toml"), "{err}");
    }
}

#[test]
fn prompt_cache_and_the_cache_write_price_come_from_the_file() {
    use crate::llm::cache::PromptCache;
    let home = home_with(
        "base_url = \"http://x/v1\"\nprompt_cache = \"explicit\"\n[prices.\"m\"]\ninput = 3.0\noutput = 15.0\ncache_write = 3.75\n",
    );
    let h = home.path().to_str().unwrap();
    let env = env_of(&[("HARNESS9_HOME", h)]);
    let (_wd, over) = in_workdir();
    let c = resolve_plain(&over, &env).unwrap();
    assert_eq!(c.provider.prompt_cache, PromptCache::Explicit);
    assert_eq!(c.prices.for_model("m").unwrap().cache_write, Some(3.75));
    let home = home_with("base_url = \"http://x/v1\"\n");
    let h = home.path().to_str().unwrap();
    let c = resolve_plain(&over, &env_of(&[("HARNESS9_HOME", h)])).unwrap();
    assert_eq!(c.provider.prompt_cache, PromptCache::Auto);
    for bad in [
        "prompt_cache = \"always\"\n",
        "[prices.\"m\"]\ninput = 1.0\noutput = 1.0\ncache_write = -1.0\n",
    ] {
        let home = home_with(&format!("base_url = \"http://x/v1\"\n{bad}"));
        let h = home.path().to_str().unwrap();
        assert!(
            resolve_plain(&over, &env_of(&[("HARNESS9_HOME", h)])).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn hooks_in_config_toml_are_the_users_and_bad_entries_are_warnings() {
    let config = r#"base_url = "http://127.0.0.1:9/v1"
model = "m"

[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "guard.sh"
on_error = "deny"

[[hooks.PreTooluse]]
[[hooks.PreTooluse.hooks]]
type = "command"
command = "typo.sh"
"#;
    let c = resolve_with(config, &[], ServerProbe::Disabled).unwrap();
    let chosen = c.user_hooks.select(
        crate::hooks::Event::PreToolUse,
        crate::hooks::Target::Tool { name: "bash" },
    );
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0].hook.command, "guard.sh");
    assert_eq!(
        chosen[0].hook.origin.kind,
        crate::hooks::OriginKind::UserConfig
    );
    assert_warned(&c, "`PreTooluse` is not a hook event");
    assert_warned(&c, "config.toml");
    let none = resolve_with(
        "base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
        &[],
        ServerProbe::Disabled,
    )
    .unwrap();
    assert!(none.user_hooks.is_empty());
}
