//! Tests of the context window: every server format and hostile bodies, the cache, and
//! learning against a local 127.0.0.1 server.

use super::*;
use crate::test_support::assert_contains;
use serde_json::json;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

// ---- /models ----

#[test]
fn models_vllm_openrouter_llamacpp_and_lm_studio() {
    let vllm = json!({"object": "list", "data": [{
        "id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "owned_by": "vllm",
        "root": "Qwen/Qwen2.5-7B-Instruct", "parent": null, "max_model_len": 32768,
        "permission": [{"id": "modelperm-1", "allow_sampling": true}]
    }]});
    assert_eq!(from_models(&vllm, "Qwen/Qwen2.5-7B-Instruct"), Some(32_768));

    let openrouter = json!({"data": [
        {"id": "openai/gpt-4o", "context_length": 128000,
         "top_provider": {"context_length": 128000, "max_completion_tokens": 16384}},
        {"id": "deepseek/deepseek-chat", "context_length": 163840,
         "top_provider": {"context_length": 64000}},
        {"id": "x/only-top", "top_provider": {"context_length": 32000}}
    ]});
    assert_eq!(
        from_models(&openrouter, "deepseek/deepseek-chat"),
        Some(163_840)
    );
    assert_eq!(from_models(&openrouter, "x/only-top"), Some(32_000));
    // Several entries and none matches: no guess.
    assert_eq!(from_models(&openrouter, "anthropic/claude"), None);

    // llama.cpp lists its one model under the file name, whatever the request says.
    let llama = json!({"object": "list", "models": [{"name": "m.gguf"}], "data": [{
        "id": "/models/qwen2.5-coder-7b-q4_k_m.gguf", "object": "model",
        "owned_by": "llamacpp",
        "meta": {"vocab_type": 2, "n_vocab": 152064, "n_ctx_train": 32768,
                 "n_embd": 3584, "n_params": 7615616512_u64, "size": 4677120000_u64}
    }]});
    assert_eq!(from_models(&llama, "gpt-4o"), Some(32_768));
    assert_eq!(
        models_window(&llama, "x"),
        Some((32_768, Served::TrainedOnly))
    );
    let served = json!({"data": [{"id": "m", "meta": {"n_ctx_train": 131072, "n_ctx": 8192}}]});
    assert_eq!(models_window(&served, "m"), Some((8_192, Served::Yes)));

    let lm_studio = json!({"data": [{"id": "qwen3-8b", "state": "loaded",
        "max_context_length": 40960, "loaded_context_length": 8192}]});
    assert_eq!(from_models(&lm_studio, "qwen3-8b"), Some(8_192));
    let lm_unloaded = json!({"data": [{"id": "a", "max_context_length": 40960}, {"id": "b"}]});
    assert_eq!(from_models(&lm_unloaded, "a"), Some(40_960));
}

#[test]
fn models_bodies_without_a_window() {
    let openai = json!({"object": "list", "data": [
        {"id": "gpt-4o", "object": "model", "created": 1715367049, "owned_by": "system"}]});
    assert_eq!(from_models(&openai, "gpt-4o"), None);
    let ollama = json!({"object": "list", "data": [
        {"id": "llama3.1:8b", "object": "model", "created": 1, "owned_by": "library"}]});
    assert_eq!(from_models(&ollama, "llama3.1:8b"), None);
    assert_eq!(from_models(&json!({}), "m"), None);
    assert_eq!(from_models(&json!({"data": []}), "m"), None);
    assert_eq!(from_models(&json!({"data": {"id": "m"}}), "m"), None);
    assert_eq!(from_models(&json!([1, 2]), "m"), None);
    assert_eq!(from_models(&json!("data"), "m"), None);
}

#[test]
fn models_hostile_values_are_refused_or_skipped() {
    let one = |entry: Value| from_models(&json!({ "data": [entry] }), "m");
    assert_eq!(one(json!({"id": "m", "context_length": "8192"})), None);
    assert_eq!(one(json!({"id": "m", "context_length": 8192.5})), None);
    assert_eq!(one(json!({"id": "m", "context_length": 8192.0})), None);
    assert_eq!(one(json!({"id": "m", "context_length": -8192})), None);
    assert_eq!(one(json!({"id": "m", "context_length": 0})), None);
    assert_eq!(one(json!({"id": "m", "context_length": 100_000_001})), None);
    assert_eq!(one(json!({"id": "m", "context_length": u64::MAX})), None);
    assert_eq!(
        one(json!({"id": "m", "context_length": 100_000_000})),
        Some(100_000_000)
    );
    assert_eq!(one(json!({"id": "m", "context_length": true})), None);
    assert_eq!(one(json!({"id": "m", "context_length": null})), None);
    assert_eq!(one(json!({"id": "m", "meta": "n_ctx=4096"})), None);
    assert_eq!(one(json!({"id": "m", "top_provider": 5})), None);
    // A bad preferred field falls through to the next usable one.
    assert_eq!(
        one(json!({"id": "m", "meta": {"n_ctx": 0, "n_ctx_train": 4096}})),
        Some(4096)
    );
    assert_eq!(
        one(json!({"id": "m", "max_model_len": -1, "context_length": 2048})),
        Some(2048)
    );
    // An id of the wrong type matches nothing, but a lone entry is still used.
    assert_eq!(one(json!({"id": 7, "max_model_len": 1024})), Some(1024));
    let two = json!({"data": [{"id": 7, "max_model_len": 1024}, {"id": null}]});
    assert_eq!(from_models(&two, "m"), None);
}

// ---- /props, /api/show ----

#[test]
fn props_bodies() {
    let props = json!({
        "default_generation_settings": {"id": 0, "id_task": -1, "n_ctx": 4096,
            "speculative": false, "is_processing": false,
            "params": {"n_predict": -1, "temperature": 0.8}},
        "total_slots": 4, "model_path": "/models/q.gguf",
        "chat_template": "{% for m in messages %}...", "build_info": "b5000"
    });
    assert_eq!(from_props(&props), Some(4096));
    assert_eq!(
        from_props(&json!({"n_ctx": 8192, "total_slots": 1})),
        Some(8192)
    );
    assert_eq!(
        from_props(&json!({"default_generation_settings": {"n_ctx": 0}, "n_ctx": 2048})),
        Some(2048)
    );
    assert_eq!(
        from_props(&json!({"default_generation_settings": {"n_ctx": "4096"}})),
        None
    );
    assert_eq!(from_props(&json!({"n_ctx": -1})), None);
    assert_eq!(from_props(&json!({"n_ctx": 1e12})), None);
    assert_eq!(
        from_props(&json!({"default_generation_settings": []})),
        None
    );
    assert_eq!(from_props(&json!({})), None);
    assert_eq!(from_props(&json!(null)), None);
}

#[test]
fn ollama_show_bodies() {
    let show = json!({
        "license": "LLAMA 3.1 COMMUNITY LICENSE AGREEMENT ...",
        "modelfile": "FROM /root/.ollama/models/blobs/sha256-x\nPARAMETER num_ctx 8192\n",
        "parameters": "num_ctx                        8192\nstop                           \"<|eot_id|>\"",
        "template": "{{ .Prompt }}",
        "details": {"family": "llama", "parameter_size": "8.0B"},
        "model_info": {"general.architecture": "llama", "llama.context_length": 131072,
                       "llama.embedding_length": 4096}
    });
    assert_eq!(from_ollama_show(&show), Some(8192));
    let no_param = json!({"parameters": "stop \"<|im_end|>\"\ntemperature 0.7",
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
    assert_eq!(from_ollama_show(&no_param), Some(32_768));
    let only_info = json!({"model_info": {"gemma3.context_length": 131072}});
    assert_eq!(from_ollama_show(&only_info), Some(131_072));
}

#[test]
fn ollama_show_hostile_bodies() {
    let bad_param = json!({"parameters": "num_ctx -1\nnum_ctx_extra 5",
        "model_info": {"llama.context_length": 4096}});
    assert_eq!(from_ollama_show(&bad_param), Some(4096));
    for body in [
        json!({"parameters": "num_ctx 0"}),
        json!({"parameters": "num_ctx 8192 tokens"}),
        json!({"parameters": "num_ctx"}),
        json!({"parameters": "num_ctx 99999999999999"}),
        json!({"parameters": {"num_ctx": 8192}}),
        json!({"parameters": "my_num_ctx 8192"}),
        json!({"model_info": {"context_length": 4096}}),
        json!({"model_info": {"x.context_length": "4096"}}),
        json!({"model_info": [4096]}),
        json!({"error": "model 'x' not found"}),
    ] {
        assert_eq!(from_ollama_show(&body), None, "{body}");
    }
}

// ---- rejections ----

#[test]
fn rejections_that_state_the_window() {
    let cases: &[(&str, u64)] = &[
        (
            "This model's maximum context length is 8192 tokens. However, your messages \
          resulted in 9000 tokens. Please reduce the length of the messages.",
            8192,
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested \
          5000 tokens (4000 in the messages, 1000 in the completion).",
            4096,
        ),
        (
            "This endpoint's maximum context length is 163840 tokens. However, you requested \
          about 200000 tokens",
            163_840,
        ),
        (
            "the request exceeds the available context size (2048 tokens)",
            2048,
        ),
        (
            "the request exceeds the available context size ( 4096 tokens ), try increasing it",
            4096,
        ),
        (
            "Trying to keep the first 5000 tokens when context the overflows. However, the \
          model is loaded with context length of only 4096 tokens",
            4096,
        ),
        (
            "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 \
          maximum context length",
            32_768,
        ),
        (
            "The decoder prompt (length 5000) is longer than the maximum model length of 4096. \
          Make sure that `max_model_len` is no smaller than the number of text tokens.",
            4096,
        ),
        (
            "The input token count (1200000) exceeds the maximum number of tokens allowed \
          (1048576).",
            1_048_576,
        ),
        (
            "prompt is too long: 210000 tokens > 200000 maximum",
            200_000,
        ),
        (
            r#"HTTP 400: {"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
            4096,
        ),
        (r#"{"n_ctx": 2048, "error": "context"} trailing text"#, 2048),
    ];
    for (message, window) in cases {
        assert_eq!(from_rejection(message), Some(*window), "{message}");
    }
}

#[test]
fn rejections_that_do_not_state_the_window() {
    let cases = [
        "max_tokens is too large: 10000. This model supports at most 4096 completion \
         tokens, whereas you provided 10000.",
        "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): \
         Limit 30000, Used 28000, Requested 5000.",
        "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 45000.",
        "This model's maximum context length is exceeded.",
        "Your messages resulted in 9000 tokens.",
        "the request exceeds the available context size, try increasing it",
        "This model's maximum context length is 8192 bytes.",
        "This model's maximum context length is 0 tokens.",
        "This model's maximum context length is 99999999999999999999 tokens.",
        "This model's maximum context length is -5 tokens.",
        "longer than the maximum model length of 4096k",
        "longer than the maximum model length of 4096tokens",
        "context_length_exceeded",
        r#"{"error":{"message":"bad","n_ctx":"4096"}}"#,
        r#"{"error":{"message":"bad","n_ctx":0}}"#,
        r#"{"error":{"message":"bad","n_ctx":-1}}"#,
        r#"{"error":{"message":"bad","n_ctx_train":4096}}"#,
        r#"{"error": "n_ctx 4096"}"#,
        "{ not json n_ctx: 4096",
        "",
    ];
    for message in cases {
        assert_eq!(from_rejection(message), None, "{message}");
    }
}

// ---- table ----

#[test]
fn the_table_matches_the_longest_prefix_of_the_last_segment() {
    assert_eq!(known_window("openai/gpt-4o-mini"), Some(128_000));
    assert_eq!(known_window("GPT-4.1-mini"), Some(1_047_576));
    assert_eq!(known_window("gpt-4"), Some(8_192));
    assert_eq!(known_window("gpt-4-turbo-2024-04-09"), Some(128_000));
    assert_eq!(known_window("gpt-5-mini"), Some(400_000));
    assert_eq!(known_window("gpt-5-chat-latest"), Some(128_000));
    assert_eq!(known_window("o1-mini"), Some(128_000));
    assert_eq!(known_window("o3-mini"), Some(200_000));
    assert_eq!(known_window("anthropic/claude-sonnet-4"), Some(200_000));
    assert_eq!(known_window("deepseek-chat"), Some(128_000));
    assert_eq!(known_window("qwen3-coder:30b"), Some(262_144));
    assert_eq!(known_window("qwen2.5-coder:7b"), Some(32_768));
    assert_eq!(known_window("llama3:8b"), Some(8_192));
    assert_eq!(known_window("llama3.1:8b"), Some(131_072));
    assert_eq!(
        known_window("meta-llama/Llama-3.3-70B-Instruct"),
        Some(131_072)
    );
    assert_eq!(known_window("google/gemini-2.5-pro"), Some(1_048_576));
    assert_eq!(known_window("gemma3:4b"), Some(131_072));
    assert_eq!(known_window("gemma2:9b"), Some(8_192));
    assert_eq!(known_window("codestral-latest"), Some(256_000));
    assert_eq!(known_window("mistral-large-latest"), Some(131_072));
    assert_eq!(known_window("phi4-mini"), Some(131_072));
    assert_eq!(known_window("phi4"), Some(16_384));
    assert_eq!(known_window("mystery"), None);
    assert_eq!(known_window(""), None);
    assert_eq!(known_window("gpt-4o/"), None);
}

// ---- cache ----

fn window(tokens: u64, source: WindowSource) -> ContextWindow {
    ContextWindow { tokens, source }
}

#[test]
fn the_cache_keeps_windows_per_endpoint_and_model() {
    let dir = tempfile::tempdir().unwrap();
    let cache = WindowCache::new(dir.path().join("cache/context_windows.json"));
    assert_eq!(cache.get("http://a/v1", "m"), None);
    cache
        .put("http://a/v1/", "m", window(4096, WindowSource::Props))
        .unwrap();
    cache
        .put("http://b/v1", "m", window(8192, WindowSource::Models))
        .unwrap();
    assert_eq!(
        cache.get("http://a/v1", "m"),
        Some(window(4096, WindowSource::Cache))
    );
    assert_eq!(
        cache.get("http://b/v1/", "m"),
        Some(window(8192, WindowSource::Cache))
    );
    assert_eq!(cache.get("http://a/v1", "other"), None);

    let text = std::fs::read_to_string(cache.path()).unwrap();
    let stored: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(stored["http://a/v1 m"]["tokens"], 4096);
    assert_eq!(stored["http://a/v1 m"]["source"], "props");
    assert!(stored["http://a/v1 m"]["learned_ms"].as_u64().unwrap() > 0);
    // Nothing but the cache file is left in the folder.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("cache"))
        .unwrap()
        .collect();
    assert_eq!(names.len(), 1);

    assert!(matches!(
        cache.put("http://a/v1", "m", window(0, WindowSource::Models)),
        Err(CacheError::Implausible { tokens: 0 })
    ));
    assert_eq!(cache.get("http://a/v1", "m").map(|w| w.tokens), Some(4096));
}

/// Sessions learning windows at once (threads here, processes in life): every window
/// is kept, the file is private.
#[test]
fn concurrent_puts_lose_no_window() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache/context_windows.json");
    std::thread::scope(|scope| {
        for t in 0..6 {
            let path = &path;
            scope.spawn(move || {
                let cache = WindowCache::new(path);
                for r in 0..15 {
                    cache
                        .put(
                            "http://a/v1",
                            &format!("m{t}-{r}"),
                            window(4096 + r, WindowSource::Models),
                        )
                        .unwrap();
                }
            });
        }
    });
    let cache = WindowCache::new(&path);
    for t in 0..6 {
        for r in 0..15 {
            assert_eq!(
                cache
                    .get("http://a/v1", &format!("m{t}-{r}"))
                    .map(|w| w.tokens),
                Some(4096 + r),
                "m{t}-{r} lost"
            );
        }
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn corrupt_or_odd_caches_are_ignored_and_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("context_windows.json");
    let cache = WindowCache::new(&path);
    for junk in ["", "{", "[1,2]", "null", "\"x\"", "{\"http://a/v1 m\": 5}"] {
        std::fs::write(&path, junk).unwrap();
        assert_eq!(cache.get("http://a/v1", "m"), None, "{junk}");
    }
    let now = now_ms();
    let odd = json!({
        "http://a/v1 m": {"tokens": 2048, "source": "props", "learned_ms": now},
        "http://a/v1 zero": {"tokens": 0, "source": "props", "learned_ms": now},
        "http://a/v1 neg": {"tokens": -1, "source": "props", "learned_ms": now},
        "http://a/v1 str": {"tokens": "2048", "source": "props", "learned_ms": now},
        "http://a/v1 future": {"tokens": 2048, "source": "props", "learned_ms": now + 86_400_000},
    });
    std::fs::write(&path, odd.to_string()).unwrap();
    assert_eq!(cache.get("http://a/v1", "m").map(|w| w.tokens), Some(2048));
    for model in ["zero", "neg", "str", "future"] {
        assert_eq!(cache.get("http://a/v1", model), None, "{model}");
    }

    std::fs::write(&path, "{{{{ garbage").unwrap();
    cache
        .put("http://a/v1", "m", window(1024, WindowSource::OllamaShow))
        .unwrap();
    assert_eq!(cache.get("http://a/v1", "m").map(|w| w.tokens), Some(1024));

    // A directory where the file should be: nothing read, and put says why.
    let blocked = WindowCache::new(dir.path());
    assert_eq!(blocked.get("http://a/v1", "m"), None);
    assert!(matches!(
        blocked.put("http://a/v1", "m", window(1024, WindowSource::Models)),
        Err(CacheError::Write { .. })
    ));
}

#[test]
fn old_entries_are_not_used_and_the_cache_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    let cache = WindowCache::new(dir.path().join("w.json"));
    let day = 24 * 60 * 60 * 1000;
    let t0 = 1_000 * day;
    cache
        .put_at("u", "m", window(4096, WindowSource::Models), t0)
        .unwrap();
    assert!(cache.get_at("u", "m", t0 + 7 * day).is_some());
    assert_eq!(cache.get_at("u", "m", t0 + 7 * day + 1), None);

    for i in 0..250u64 {
        let model = format!("m{i}");
        cache
            .put_at("u", &model, window(1000 + i, WindowSource::Models), t0 + i)
            .unwrap();
    }
    let stored: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(cache.path()).unwrap()).unwrap();
    assert_eq!(stored.len(), CACHE_MAX_ENTRIES);
    assert_eq!(
        cache.get_at("u", "m49", t0 + 300),
        None,
        "the oldest went first"
    );
    assert_eq!(
        cache.get_at("u", "m50", t0 + 300).map(|w| w.tokens),
        Some(1050)
    );
    assert_eq!(
        cache.get_at("u", "m249", t0 + 300).map(|w| w.tokens),
        Some(1249)
    );

    // Expired entries are dropped on the next write.
    cache
        .put_at(
            "u",
            "late",
            window(1, WindowSource::Rejection),
            t0 + 8 * day,
        )
        .unwrap();
    let stored: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(cache.path()).unwrap()).unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored["u late"]["source"], "rejection");
}

#[test]
fn initial_prefers_config_then_cache_then_table() {
    let dir = tempfile::tempdir().unwrap();
    let cache = WindowCache::new(dir.path().join("w.json"));
    let url = "http://127.0.0.1:8080/v1";
    assert_eq!(initial(None, &cache, url, "mystery"), None);
    assert_eq!(
        initial(None, &cache, url, "gpt-4o"),
        Some(window(128_000, WindowSource::Table))
    );
    cache
        .put(url, "gpt-4o", window(64_000, WindowSource::Models))
        .unwrap();
    assert_eq!(
        initial(None, &cache, url, "gpt-4o"),
        Some(window(64_000, WindowSource::Cache))
    );
    assert_eq!(
        initial(Some(32_000), &cache, url, "gpt-4o"),
        Some(window(32_000, WindowSource::Config))
    );
    assert_eq!(
        initial(Some(0), &cache, url, "gpt-4o"),
        Some(window(64_000, WindowSource::Cache))
    );
}

#[test]
fn sources_serialize_and_describe_themselves() {
    let w = window(8192, WindowSource::OllamaShow);
    assert_eq!(
        serde_json::to_value(w).unwrap(),
        json!({"tokens": 8192, "source": "ollama_show"})
    );
    assert_eq!(WindowSource::Models.describe(), "the endpoint's /v1/models");
    assert_eq!(WindowSource::Table.describe(), "built-in table");
}

// ---- learning over HTTP, against a canned server on 127.0.0.1 ----

/// One request the server saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    /// The request head, lowercased.
    head: String,
    body: String,
}

/// What the server answers on one route.
#[derive(Clone)]
struct Answer {
    status: u16,
    body: String,
    /// Send `Content-Length` (else the body ends when the connection closes).
    with_length: bool,
}

fn ok(body: Value) -> Answer {
    Answer {
        status: 200,
        body: body.to_string(),
        with_length: true,
    }
}

/// A server answering canned bodies by `"METHOD /path"`, 404 for anything else.
struct CannedServer {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl CannedServer {
    async fn start(routes: &[(&str, Answer)]) -> CannedServer {
        let routes: Arc<HashMap<String, Answer>> = Arc::new(
            routes
                .iter()
                .map(|(k, a)| (k.to_string(), a.clone()))
                .collect(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream, routes.clone(), log.clone()));
            }
        });
        CannedServer { addr, seen, task }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn paths(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .map(|s| format!("{} {}", s.method, s.path))
            .collect()
    }
}

impl Drop for CannedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    mut stream: tokio::net::TcpStream,
    routes: Arc<HashMap<String, Answer>>,
    seen: Arc<Mutex<Vec<Seen>>>,
) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let first = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut words = first.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let body = String::from_utf8_lossy(&buf[head_end..]).to_string();
    let answer = routes
        .get(&format!("{method} {path}"))
        .cloned()
        .unwrap_or(Answer {
            status: 404,
            body: "{\"error\":\"not found\"}".into(),
            with_length: true,
        });
    seen.lock().unwrap().push(Seen {
        method,
        path,
        head,
        body,
    });
    let length = if answer.with_length {
        format!("Content-Length: {}\r\n", answer.body.len())
    } else {
        String::new()
    };
    let response = format!(
        "HTTP/1.1 {} X\r\nContent-Type: application/json\r\n{length}Connection: close\r\n\r\n",
        answer.status
    );
    // The client may hang up early on a long body: that is fine.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.write_all(answer.body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn provider(base_url: &str) -> ProviderConfig {
    let mut p = ProviderConfig::new("test", base_url);
    p.api_key = Some("sk-test".into());
    p.extra_headers = vec![("X-Title".into(), "harness9".into())];
    p
}

#[tokio::test]
async fn learns_from_vllm_models_and_stops_there() {
    let server = CannedServer::start(&[(
        "GET /v1/models",
        ok(json!({"object": "list", "data": [
            {"id": "Qwen/Qwen3-8B", "object": "model", "max_model_len": 40960}]})),
    )])
    .await;
    let learned = learn(&provider(&server.base_url()), "Qwen/Qwen3-8B").await;
    assert_eq!(learned, Some(window(40_960, WindowSource::Models)));
    assert_eq!(server.paths(), ["GET /v1/models"]);
    let seen = server.seen.lock().unwrap()[0].clone();
    assert_contains(&seen.head, "authorization: bearer sk-test");
    assert_contains(&seen.head, "x-title: harness9");
}

#[tokio::test]
async fn learns_from_llamacpp_props_when_models_has_no_window() {
    let server = CannedServer::start(&[
        (
            "GET /v1/models",
            ok(json!({"data": [{"id": "m.gguf", "object": "model", "meta": {"n_vocab": 5}}]})),
        ),
        (
            "GET /props",
            ok(json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1})),
        ),
    ])
    .await;
    let learned = learn(&provider(&server.base_url()), "whatever").await;
    assert_eq!(learned, Some(window(4096, WindowSource::Props)));
    assert_eq!(server.paths(), ["GET /v1/models", "GET /props"]);
}

#[tokio::test]
async fn props_beats_a_trained_length_and_the_trained_length_is_the_fallback() {
    let models = ok(json!({"data": [{"id": "m.gguf", "meta": {"n_ctx_train": 131072}}]}));
    let server = CannedServer::start(&[
        ("GET /v1/models", models.clone()),
        (
            "GET /props",
            ok(json!({"default_generation_settings": {"n_ctx": 8192}})),
        ),
    ])
    .await;
    let learned = learn(&provider(&server.base_url()), "m.gguf").await;
    assert_eq!(learned, Some(window(8192, WindowSource::Props)));

    let server = CannedServer::start(&[("GET /v1/models", models)]).await;
    let learned = learn(&provider(&server.base_url()), "m.gguf").await;
    assert_eq!(learned, Some(window(131_072, WindowSource::Models)));
    assert_eq!(
        server.paths(),
        ["GET /v1/models", "GET /props", "POST /api/show"]
    );
}

#[tokio::test]
async fn learns_from_ollama_show_after_two_404s() {
    let server = CannedServer::start(&[(
        "POST /api/show",
        ok(
            json!({"parameters": "num_ctx                        8192\nstop \"<|eot_id|>\"",
                  "model_info": {"llama.context_length": 131072}}),
        ),
    )])
    .await;
    let learned = learn(&provider(&format!("{}/", server.base_url())), "llama3.1:8b").await;
    assert_eq!(learned, Some(window(8192, WindowSource::OllamaShow)));
    assert_eq!(
        server.paths(),
        ["GET /v1/models", "GET /props", "POST /api/show"]
    );
    let show = server.seen.lock().unwrap()[2].clone();
    assert_eq!(
        serde_json::from_str::<Value>(&show.body).unwrap(),
        json!({"model": "llama3.1:8b"})
    );
    for header in [
        "content-type: application/json",
        "authorization: bearer sk-test",
    ] {
        assert_contains(&show.head, header);
    }
}

#[tokio::test]
async fn nothing_answers_and_learn_says_none_quickly() {
    // Every route 404s.
    let server = CannedServer::start(&[]).await;
    let started = std::time::Instant::now();
    assert_eq!(learn(&provider(&server.base_url()), "m").await, None);
    assert_eq!(server.paths().len(), 3);

    // Nobody listens: connections are refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    assert_eq!(
        learn(&provider(&format!("http://{addr}/v1")), "m").await,
        None
    );
    assert!(started.elapsed() < PROBE_TIMEOUT, "{:?}", started.elapsed());

    // No usable base URL at all.
    assert_eq!(learn(&provider(""), "m").await, None);
    assert_eq!(learn(&provider("not a url"), "m").await, None);

    // Not JSON, or JSON with nothing usable.
    let server = CannedServer::start(&[
        (
            "GET /v1/models",
            Answer {
                status: 200,
                body: "<html>".into(),
                with_length: true,
            },
        ),
        ("GET /props", ok(json!({"n_ctx": "4096"}))),
        ("POST /api/show", ok(json!({"error": "model not found"}))),
    ])
    .await;
    assert_eq!(learn(&provider(&server.base_url()), "m").await, None);
}

#[tokio::test]
async fn bodies_over_a_mebibyte_are_ignored() {
    let pad = "x".repeat(MAX_BODY);
    let big_models = json!({"data": [{"id": "m", "max_model_len": 4096, "pad": pad}]});
    let big_props = json!({"n_ctx": 2048, "pad": pad});
    let server = CannedServer::start(&[
        // Without Content-Length: cut off while reading.
        (
            "GET /v1/models",
            Answer {
                with_length: false,
                ..ok(big_models)
            },
        ),
        // With it: refused before reading.
        ("GET /props", ok(big_props)),
        ("POST /api/show", ok(json!({"parameters": "num_ctx 1024"}))),
    ])
    .await;
    let learned = learn(&provider(&server.base_url()), "m").await;
    assert_eq!(learned, Some(window(1024, WindowSource::OllamaShow)));
}

#[tokio::test]
async fn a_key_that_cannot_be_a_header_means_no_requests() {
    let server = CannedServer::start(&[]).await;
    let mut p = provider(&server.base_url());
    p.api_key = Some("bad\nkey".into());
    assert_eq!(learn(&p, "m").await, None);
    assert!(server.paths().is_empty());
}
