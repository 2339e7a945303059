//! The model's context window: how many tokens one request may hold, and where that
//! number came from. This module owns reading it out of what endpoints say (an
//! OpenAI-compatible `/models` list, llama.cpp's `/props`, Ollama's `/api/show`, a
//! provider's "context length exceeded" error), the built-in table of well-known model
//! families, the small on-disk cache of learned windows, and the order in which these
//! are consulted ([`initial`] at start-up, [`learn`] over HTTP).
//!
//! It must not know about the agent, sessions or terminals: callers hand it a provider,
//! a model id and a cache path, and decide themselves when to learn and what to do with
//! the answer.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;

use super::ProviderConfig;
use super::client::add_provider_headers;

/// The largest window accepted from anywhere; bigger numbers are taken for garbage.
const MAX_TOKENS: u64 = 100_000_000;
/// Connect and total time allowed to each request [`learn`] makes.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Bodies larger than this are ignored by [`learn`].
const MAX_BODY: usize = 1 << 20;
/// Cached windows older than this are not used.
const CACHE_MAX_AGE_MS: u64 = 7 * 24 * 60 * 60 * 1000;
/// At most this many cache entries are kept (the oldest go first).
const CACHE_MAX_ENTRIES: usize = 200;
/// A cache file larger than this is taken for garbage.
const CACHE_MAX_BYTES: u64 = 1 << 20;

use crate::protocol::WindowSource;

/// A context window in tokens and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ContextWindow {
    /// Tokens one request may hold (prompt and answer together).
    pub tokens: u64,
    /// Where the number came from.
    pub source: WindowSource,
}

/// `n` when it is a plausible window: 1 to 100 million.
fn plausible(n: u64) -> Option<u64> {
    (1..=MAX_TOKENS).contains(&n).then_some(n)
}

/// A JSON integer that is a plausible window (not a float, string or negative number).
fn tokens_in(value: Option<&Value>) -> Option<u64> {
    value?.as_u64().and_then(plausible)
}

/// Whether a window from `/models` is what the server serves or only what the model was
/// trained for (llama.cpp's `n_ctx_train`, which a server may cut down with `-c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    Yes,
    TrainedOnly,
}

/// The window of `model` in an OpenAI-compatible `/models` body: the `data[]` entry whose
/// `id` is `model` (or the only entry, since llama.cpp lists its one model under a file
/// name). Reads, in this order, llama.cpp's `meta.n_ctx`, vLLM's `max_model_len`, LM
/// Studio's `loaded_context_length`, OpenRouter's `context_length` and
/// `top_provider.context_length`, LM Studio's `max_context_length`, then llama.cpp's
/// `meta.n_ctx_train`. Only integers from 1 to 100 million count.
pub fn from_models(body: &Value, model: &str) -> Option<u64> {
    models_window(body, model).map(|(tokens, _)| tokens)
}

fn models_window(body: &Value, model: &str) -> Option<(u64, Served)> {
    let data = body.get("data")?.as_array()?;
    let entry = data
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(model))
        .or(match data.as_slice() {
            [only] => Some(only),
            _ => None,
        })?;
    let meta = entry.get("meta");
    let served = [
        meta.and_then(|m| m.get("n_ctx")),
        entry.get("max_model_len"),
        entry.get("loaded_context_length"),
        entry.get("context_length"),
        entry
            .get("top_provider")
            .and_then(|p| p.get("context_length")),
        entry.get("max_context_length"),
    ];
    served
        .into_iter()
        .find_map(tokens_in)
        .map(|n| (n, Served::Yes))
        .or_else(|| {
            tokens_in(meta.and_then(|m| m.get("n_ctx_train"))).map(|n| (n, Served::TrainedOnly))
        })
}

/// The window in a llama.cpp `/props` body: `default_generation_settings.n_ctx` (what
/// one request may use), else the top-level `n_ctx`.
pub fn from_props(body: &Value) -> Option<u64> {
    tokens_in(
        body.get("default_generation_settings")
            .and_then(|s| s.get("n_ctx")),
    )
    .or_else(|| tokens_in(body.get("n_ctx")))
}

/// The window in an Ollama `/api/show` body: `num_ctx` in the `parameters` text (what
/// the server runs the model with), else a `model_info` key ending in
/// `.context_length` (what the model was trained for).
pub fn from_ollama_show(body: &Value) -> Option<u64> {
    let parameter = body
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                match (words.next(), words.next(), words.next()) {
                    (Some("num_ctx"), Some(n), None) => n.parse().ok().and_then(plausible),
                    _ => None,
                }
            })
        });
    parameter.or_else(|| {
        body.get("model_info")?
            .as_object()?
            .iter()
            .filter(|(key, _)| key.ends_with(".context_length"))
            .find_map(|(_, value)| tokens_in(Some(value)))
    })
}

/// Phrases that put the window right after them, each with what must follow the number
/// (`""`: anything but more digits or letters). Matched on the lowercased message.
const REJECTION_PHRASES: &[(&str, &str)] = &[
    // OpenAI, vLLM, DeepSeek, Groq, OpenRouter: "maximum context length is 8192 tokens".
    ("maximum context length is ", "token"),
    // llama.cpp: "the request exceeds the available context size (2048 tokens)".
    ("available context size (", "token"),
    // LM Studio: "the model is loaded with context length of only 4096 tokens".
    ("context length of only ", "token"),
    // Mistral: "too large for model with 32768 maximum context length".
    ("too large for model with ", "maximum context length"),
    // vLLM: "is longer than the maximum model length of 4096."
    ("longer than the maximum model length of ", ""),
    // Gemini: "exceeds the maximum number of tokens allowed (1048576)".
    ("exceeds the maximum number of tokens allowed (", ")"),
    // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
    ("tokens > ", "maximum"),
];

/// The window stated in a provider's "context length exceeded" error text, or in the
/// `n_ctx` of a JSON error body (llama.cpp). `None` unless the number is clearly the
/// window: output-token limits, rate limits and the request's own size never count.
pub fn from_rejection(message: &str) -> Option<u64> {
    let lower = message.to_ascii_lowercase();
    REJECTION_PHRASES
        .iter()
        .find_map(|(before, after)| {
            lower
                .match_indices(before)
                .find_map(|(at, _)| number_then(&lower[at + before.len()..], after))
        })
        .or_else(|| rejection_json(message))
}

/// The number at the start of `text` (after spaces) when `after` follows it.
fn number_then(text: &str, after: &str) -> Option<u64> {
    let text = text.trim_start();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 12 {
        return None;
    }
    let rest = &text[digits..];
    let follows = if after.is_empty() {
        !rest.starts_with(|c: char| c.is_ascii_alphanumeric())
    } else {
        rest.trim_start().starts_with(after)
    };
    follows
        .then(|| text[..digits].parse().ok())
        .flatten()
        .and_then(plausible)
}

/// `n_ctx` (top-level or under `error`) of the first JSON object in `message`.
fn rejection_json(message: &str) -> Option<u64> {
    let start = message.find('{')?;
    let value = serde_json::Deserializer::from_str(&message[start..])
        .into_iter::<Value>()
        .next()?
        .ok()?;
    tokens_in(value.get("n_ctx")).or_else(|| tokens_in(value.get("error")?.get("n_ctx")))
}

/// Context windows of well-known model families, by lowercased prefix of the model id's
/// last path segment (the longest matching prefix wins). Where a family's sizes differ
/// (Qwen3's 32K native against 128K with YaRN), the documented native window is used.
const KNOWN_WINDOWS: &[(&str, u64)] = &[
    // OpenAI
    ("gpt-3.5-turbo", 16_385),
    ("gpt-4", 8_192),
    ("gpt-4-32k", 32_768),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-1106", 128_000),
    ("gpt-4-0125", 128_000),
    ("gpt-4-vision", 128_000),
    ("gpt-4o", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.5", 128_000),
    ("gpt-5", 400_000),
    ("gpt-5-chat", 128_000),
    ("gpt-oss", 131_072),
    ("o1", 200_000),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("codex-mini", 200_000),
    // Anthropic
    ("claude", 200_000),
    // DeepSeek
    ("deepseek", 128_000),
    // Qwen
    ("qwen", 32_768),
    ("qwen-plus", 131_072),
    ("qwen2.5", 32_768),
    ("qwen2.5-coder", 32_768),
    ("qwen3", 32_768),
    ("qwen3-coder", 262_144),
    ("qwq", 131_072),
    // Meta
    ("llama3", 8_192),
    ("llama-3", 8_192),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama-3.3", 131_072),
    // Google
    ("gemini", 1_048_576),
    ("gemini-1.5-pro", 2_097_152),
    ("gemma", 8_192),
    ("gemma3", 131_072),
    ("gemma-3", 131_072),
    ("gemma3n", 32_768),
    ("gemma-3n", 32_768),
    // Mistral
    ("mistral", 32_768),
    ("mistral-large", 131_072),
    ("mistral-medium", 131_072),
    ("mistral-nemo", 131_072),
    ("open-mistral-nemo", 131_072),
    ("ministral", 131_072),
    ("mixtral", 32_768),
    ("codestral", 256_000),
    ("codestral-22b", 32_768),
    ("devstral", 131_072),
    // Microsoft
    ("phi3", 4_096),
    ("phi-3", 4_096),
    ("phi3.5", 131_072),
    ("phi-3.5", 131_072),
    ("phi4", 16_384),
    ("phi-4", 16_384),
    ("phi4-mini", 131_072),
    ("phi-4-mini", 131_072),
    // Others often served through OpenRouter
    ("grok-3", 131_072),
    ("grok-4", 256_000),
    ("kimi-k2", 131_072),
    ("glm-4.5", 131_072),
];

/// The window of a well-known model family: the longest prefix of the built-in table
/// matching the lowercased last path segment of `model` (`openai/gpt-4o-mini` is
/// `gpt-4o-mini`; Ollama tags such as `llama3.1:8b` match `llama3.1`).
pub fn known_window(model: &str) -> Option<u64> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN_WINDOWS
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, tokens)| *tokens)
}

/// The window start-up can know without the network: `configured` (config.toml), else
/// a fresh cached one, else the built-in table. Costs one small file read at most.
pub fn initial(
    configured: Option<u64>,
    cache: &WindowCache,
    base_url: &str,
    model: &str,
) -> Option<ContextWindow> {
    let window = |tokens, source| ContextWindow { tokens, source };
    configured
        .and_then(plausible)
        .map(|t| window(t, WindowSource::Config))
        .or_else(|| cache.get(base_url, model))
        .or_else(|| known_window(model).map(|t| window(t, WindowSource::Table)))
}

/// Asks the endpoint for the window of `model`, each request within 2 s (connect and
/// total), stopping at the first that tells: `GET {base_url}/models`, then llama.cpp's
/// `GET {root}/props`, then Ollama's `POST {root}/api/show`, where `root` is the base URL
/// without a trailing `/v1`. The provider's key and extra headers go with each request,
/// as with the chat client. When `/models` only gives llama.cpp's `n_ctx_train`, the
/// later requests are still made (the server may serve less) and it is the fallback.
/// Bodies over 1 MiB are ignored. Never fails: `None` when nothing tells.
pub async fn learn(provider: &ProviderConfig, model: &str) -> Option<ContextWindow> {
    let base = provider.base_url.trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let scheme = reqwest::Url::parse(base).ok()?.scheme().to_string();
    let client = probe_client(scheme == "http").await?;
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    if let Err(e) = add_provider_headers(&mut headers, provider) {
        tracing::debug!("not asking for the context window: {e}");
        return None;
    }
    let ask = |request: reqwest::RequestBuilder| fetch_json(request.headers(headers.clone()));
    let found = |tokens, source| Some(ContextWindow { tokens, source });

    let mut trained_only = None;
    if let Some(body) = ask(client.get(format!("{base}/models"))).await {
        match models_window(&body, model) {
            Some((tokens, Served::Yes)) => return found(tokens, WindowSource::Models),
            Some((tokens, Served::TrainedOnly)) => trained_only = Some(tokens),
            None => {}
        }
    }
    let props = ask(client.get(format!("{root}/props"))).await;
    if let Some(tokens) = props.as_ref().and_then(from_props) {
        return found(tokens, WindowSource::Props);
    }
    let show = client
        .post(format!("{root}/api/show"))
        .header(CONTENT_TYPE, "application/json")
        .body(serde_json::json!({ "model": model }).to_string());
    if let Some(tokens) = ask(show).await.as_ref().and_then(from_ollama_show) {
        return found(tokens, WindowSource::OllamaShow);
    }
    trained_only.and_then(|tokens| found(tokens, WindowSource::Models))
}

/// The model ids the endpoint lists (`GET {base_url}/models`, OpenAI's
/// `{"data": [{"id": …}]}`), asked like [`learn`] asks (the provider's headers, within
/// the probe's time, bodies up to 1 MiB). `None` when it does not answer with a list.
pub async fn listed_models(provider: &ProviderConfig) -> Option<Vec<String>> {
    let base = provider.base_url.trim_end_matches('/');
    let scheme = reqwest::Url::parse(base).ok()?.scheme().to_string();
    let client = probe_client(scheme == "http").await?;
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    add_provider_headers(&mut headers, provider).ok()?;
    let body = fetch_json(client.get(format!("{base}/models")).headers(headers)).await?;
    model_ids(&body)
}

/// The ids of an OpenAI-style model list (`{"data": [{"id": …}]}`), empty ids left out.
pub fn model_ids(list: &serde_json::Value) -> Option<Vec<String>> {
    let data = list.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id")?.as_str())
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// A client for the probes, set up like the model client. Loading root certificates
/// for https takes tens of milliseconds, so that happens off the async threads.
async fn probe_client(plain_http: bool) -> Option<reqwest::Client> {
    let build = move || {
        crate::http::builder(plain_http)
            .connect_timeout(PROBE_TIMEOUT)
            .timeout(PROBE_TIMEOUT)
            .build()
    };
    let built = if plain_http {
        build()
    } else {
        tokio::task::spawn_blocking(build).await.ok()?
    };
    built
        .inspect_err(|e| tracing::debug!("no HTTP client for the context window: {e}"))
        .ok()
}

/// The JSON body of a successful answer within [`PROBE_TIMEOUT`], read up to
/// [`MAX_BODY`]; `None` on any failure, a larger body or one that is not JSON.
async fn fetch_json(request: reqwest::RequestBuilder) -> Option<Value> {
    let read = async {
        let mut response = request.send().await.ok()?;
        let too_long = response
            .content_length()
            .is_some_and(|n| n > MAX_BODY as u64);
        if !response.status().is_success() || too_long {
            tracing::debug!(url = %response.url(), status = %response.status(), "no context window here");
            return None;
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            if body.len() + chunk.len() > MAX_BODY {
                tracing::debug!(url = %response.url(), "answer too long for a context window");
                return None;
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).ok()
    };
    tokio::time::timeout(PROBE_TIMEOUT, read)
        .await
        .ok()
        .flatten()
}

/// Why a learned window could not be cached.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The number is not a plausible window (0 or above 100 million).
    #[error("{tokens} tokens is not a plausible context window")]
    Implausible {
        /// The number given.
        tokens: u64,
    },
    /// The cache file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file (or its temporary sibling).
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

impl From<crate::private_files::UpdateIoError> for CacheError {
    fn from(e: crate::private_files::UpdateIoError) -> Self {
        CacheError::Write {
            path: e.path,
            source: e.source,
        }
    }
}

/// One cached window.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct CacheEntry {
    tokens: u64,
    source: String,
    learned_ms: u64,
}

/// Learned windows on disk: one JSON object keyed by `"{base_url} {model}"`, each entry
/// `{ "tokens": N, "source": "models", "learned_ms": ms }`. A missing, unreadable or
/// corrupt file is an empty cache; entries older than seven days are not used; at most
/// 200 entries are kept. Writes go through a temporary file and a rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowCache {
    path: PathBuf,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn cache_key(base_url: &str, model: &str) -> String {
    format!("{} {model}", base_url.trim_end_matches('/'))
}

fn fresh(entry: &CacheEntry, now_ms: u64) -> bool {
    now_ms
        .checked_sub(entry.learned_ms)
        .is_some_and(|age| age <= CACHE_MAX_AGE_MS)
}

impl WindowCache {
    /// The cache kept in `path` (harness9 uses `$HARNESS9_HOME/cache/context_windows.json`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        WindowCache { path: path.into() }
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cached window of `model` at `base_url`, when one was learned in the last seven
    /// days. Its source is [`WindowSource::Cache`].
    pub fn get(&self, base_url: &str, model: &str) -> Option<ContextWindow> {
        self.get_at(base_url, model, now_ms())
    }

    fn get_at(&self, base_url: &str, model: &str, now_ms: u64) -> Option<ContextWindow> {
        let entry = self.load().remove(&cache_key(base_url, model))?;
        let tokens = plausible(entry.tokens).filter(|_| fresh(&entry, now_ms))?;
        Some(ContextWindow {
            tokens,
            source: WindowSource::Cache,
        })
    }

    /// Records `window` for `model` at `base_url`, replacing what was there; drops entries
    /// older than seven days and the oldest beyond 200. A corrupt file is overwritten.
    pub fn put(
        &self,
        base_url: &str,
        model: &str,
        window: ContextWindow,
    ) -> Result<(), CacheError> {
        self.put_at(base_url, model, window, now_ms())
    }

    fn put_at(
        &self,
        base_url: &str,
        model: &str,
        window: ContextWindow,
        now_ms: u64,
    ) -> Result<(), CacheError> {
        let tokens = plausible(window.tokens).ok_or(CacheError::Implausible {
            tokens: window.tokens,
        })?;
        let source = serde_json::to_value(window.source)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        // Read, change and write under the folder's lock: two sessions learning windows
        // at once keep both.
        let mode = crate::private_files::UpdateMode {
            links: crate::private_files::Links::Follow,
            privacy: crate::private_files::Privacy::Private,
        };
        let path = self.path.clone();
        crate::private_files::update(&self.path, mode, |old| {
            let mut entries = old
                .filter(|t| t.len() as u64 <= CACHE_MAX_BYTES)
                .map(|t| parse_entries(t.as_bytes()))
                .unwrap_or_default();
            // Only old entries go: one a concurrent writer stamped a moment after this
            // call's `now_ms` is not from the future.
            entries.retain(|_, e| now_ms.saturating_sub(e.learned_ms) <= CACHE_MAX_AGE_MS);
            entries.insert(
                cache_key(base_url, model),
                CacheEntry {
                    tokens,
                    source,
                    learned_ms: now_ms,
                },
            );
            while entries.len() > CACHE_MAX_ENTRIES {
                let oldest = entries
                    .iter()
                    .min_by_key(|(_, e)| e.learned_ms)
                    .map(|(k, _)| k.clone());
                match oldest {
                    Some(key) => entries.remove(&key),
                    None => break,
                };
            }
            let text = serde_json::to_string_pretty(&entries).map_err(|e| CacheError::Write {
                path,
                source: io::Error::other(e),
            })?;
            Ok((Some(text), ()))
        })
    }

    /// Every well-formed entry in the file; nothing when it is missing, unreadable,
    /// too large or not a JSON object.
    fn load(&self) -> BTreeMap<String, CacheEntry> {
        let mut text = Vec::new();
        let read = std::fs::File::open(&self.path)
            .and_then(|f| f.take(CACHE_MAX_BYTES + 1).read_to_end(&mut text));
        if read.is_err() || text.len() as u64 > CACHE_MAX_BYTES {
            return BTreeMap::new();
        }
        parse_entries(&text)
    }
}

/// Every well-formed entry of a cache file's text; nothing when it is not a JSON object.
fn parse_entries(text: &[u8]) -> BTreeMap<String, CacheEntry> {
    let Ok(object) = serde_json::from_slice::<serde_json::Map<String, Value>>(text) else {
        return BTreeMap::new();
    };
    object
        .into_iter()
        .filter_map(|(key, value)| Some((key, serde_json::from_value(value).ok()?)))
        .collect()
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
