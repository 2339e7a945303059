//! The start-up server probe: the one small blocking HTTP/1.1 GET harness9 makes before
//! any runtime exists, to find a local Ollama and, when no model is configured, the
//! model a plain-HTTP server lists. Bodies are read to a cap (fixed-length, chunked or
//! close-delimited) within a deadline.
//!
//! It must not know anything of the agent, the model client or the config file; it
//! returns what it found and the caller decides.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::*;

/// How the model list of an endpoint can be asked for at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ModelLookup {
    /// api.openai.com: [`DEFAULT_MODEL`] is right, nothing is asked.
    OpenAi,
    /// A plain-HTTP endpoint (local servers): `GET {base_url}/models`.
    PlainHttp,
    /// Another https endpoint: the start-up probe speaks no TLS, so nothing is asked.
    Tls,
}

pub(super) fn model_lookup_for(base_url: &str) -> ModelLookup {
    if url_host(base_url).eq_ignore_ascii_case("api.openai.com") {
        ModelLookup::OpenAi
    } else if base_url.starts_with("http://") {
        ModelLookup::PlainHttp
    } else {
        ModelLookup::Tls
    }
}

/// The host of a URL (without port or brackets).
pub(super) fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    authority.split(':').next().unwrap_or(authority)
}

pub(super) const CHOOSE_HINT: &str =
    "set --model, HARNESS9_MODEL or model in config.toml to choose";

/// The model to use when none is configured, and a note saying which was picked and why.
/// `listed` is what a found Ollama already listed.
pub(super) fn default_model(
    provider: &ProviderConfig,
    listed: Option<Vec<String>>,
    wait: Duration,
) -> (String, Option<String>) {
    let default = || DEFAULT_MODEL.to_string();
    let listed = match (listed, model_lookup_for(&provider.base_url)) {
        (Some(models), _) => Some(models),
        (None, ModelLookup::OpenAi) => return (default(), None),
        (None, ModelLookup::Tls) => {
            let note = format!(
                "no model configured: sending `{DEFAULT_MODEL}` to {} ({CHOOSE_HINT})",
                url_host(&provider.base_url)
            );
            return (default(), Some(note));
        }
        (None, ModelLookup::PlainHttp) => probe_models(provider, wait),
    };
    let url = format!("{}/models", provider.base_url);
    match listed {
        None => (
            default(),
            Some(format!(
                "no model configured and {url} did not answer with a model list within {} \
                 ms: sending `{DEFAULT_MODEL}`, a hosted model's id, which a local server \
                 may refuse ({CHOOSE_HINT}, or raise model_probe_timeout_ms)",
                wait.as_millis()
            )),
        ),
        Some(models) => match models.as_slice() {
            [] => (
                default(),
                Some(format!(
                    "no model configured and {url} lists none: sending `{DEFAULT_MODEL}` \
                     ({CHOOSE_HINT})"
                )),
            ),
            [only] => (
                only.clone(),
                Some(format!(
                    "no model configured: using `{only}`, the only model the server lists \
                     ({CHOOSE_HINT})"
                )),
            ),
            [first, ..] => (
                first.clone(),
                Some(format!(
                    "no model configured: using `{first}`, the first of {} models the server \
                     lists ({CHOOSE_HINT})",
                    models.len()
                )),
            ),
        },
    }
}

/// A local Ollama found by [`probe_ollama`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaFound {
    /// Its OpenAI-compatible base URL.
    pub base_url: String,
    /// The model ids it lists, in its order.
    pub models: Vec<String>,
}

/// Checks whether Ollama answers on 127.0.0.1:11434 (a short plain-HTTP GET of
/// `/v1/models`): `connect` to connect, four times that for the whole answer.
pub fn probe_ollama(connect: Duration) -> Option<OllamaFound> {
    let base_url = format!("http://{OLLAMA_ADDR}/v1");
    let (status, body) = http_get(&format!("{base_url}/models"), &[], connect, connect * 4)?;
    if status != 200 {
        return None;
    }
    Some(OllamaFound {
        models: model_ids(&body).unwrap_or_default(),
        base_url,
    })
}

/// Asks `GET {base_url}/models` of a plain-HTTP endpoint, with its key and extra
/// headers, within `timeout` in all. `None` when it does not answer 200 with an
/// OpenAI-style list (`{"data": [{"id": ...}]}`) in time.
pub fn probe_models(provider: &ProviderConfig, timeout: Duration) -> Option<Vec<String>> {
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(key) = &provider.api_key {
        let key = key.trim();
        headers.push(match &provider.auth_header {
            AuthHeader::Bearer => ("Authorization".into(), format!("Bearer {key}")),
            AuthHeader::Named { name } => (name.clone(), key.to_string()),
        });
    }
    headers.extend(provider.extra_headers.iter().cloned());
    let url = format!("{}/models", provider.base_url);
    let (status, body) = http_get(&url, &headers, timeout, timeout)?;
    if status != 200 {
        return None;
    }
    model_ids(&body)
}

/// The ids of an OpenAI-style model list.
pub(super) fn model_ids(body: &[u8]) -> Option<Vec<String>> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    crate::llm::window::model_ids(&value)
}

/// A tiny blocking HTTP/1.1 GET of a plain `http://` URL for the start-up probes: status
/// and body, or `None` on any failure. Connecting may take `connect`; everything,
/// connecting included, must be done within `total`. Bodies with a `Content-Length`,
/// chunked or ending at close are read, up to [`PROBE_RESPONSE_CAP`] bytes. Headers whose
/// name or value could break the request (control characters) are not sent.
pub(super) fn http_get(
    url: &str,
    headers: &[(String, String)],
    connect: Duration,
    total: Duration,
) -> Option<(u16, Vec<u8>)> {
    let deadline = Instant::now() + total;
    let rest = url.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = url_host(url);
    // `host:port` or `[v6]:port`; no port is 80.
    let after_host = match authority.rsplit_once(']') {
        Some((_, rest)) => rest,
        None => authority,
    };
    let port = match after_host.rsplit_once(':') {
        Some((_, port)) => port.parse().ok()?,
        None => 80,
    };
    let addr: SocketAddr = (host, port).to_socket_addrs().ok()?.next()?;
    let remaining = |now: Instant| {
        deadline
            .checked_duration_since(now)
            .filter(|d| !d.is_zero())
    };
    let mut stream =
        TcpStream::connect_timeout(&addr, connect.min(remaining(Instant::now())?)).ok()?;
    stream.set_write_timeout(remaining(Instant::now())).ok()?;
    let mut request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\n\
         Connection: close\r\n"
    );
    let clean = |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_control());
    for (name, value) in headers {
        if clean(name) && !name.contains(':') && (value.is_empty() || clean(value)) {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).ok()?;

    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match parse_response(&raw, End::Open) {
            Parsed::Done(status, body) => return Some((status, body)),
            Parsed::Broken => return None,
            Parsed::Incomplete => {}
        }
        stream.set_read_timeout(remaining(Instant::now())).ok()?;
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return match parse_response(&raw, End::Closed) {
                Parsed::Done(status, body) => Some((status, body)),
                Parsed::Broken | Parsed::Incomplete => None,
            };
        }
        raw.extend_from_slice(&buf[..n]);
        if raw.len() > PROBE_RESPONSE_CAP {
            return None;
        }
    }
}

/// Whether the server has closed the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// More may come.
    Open,
    /// Everything has been read.
    Closed,
}

/// What the bytes of a response read so far amount to.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Parsed {
    /// More is needed.
    Incomplete,
    /// Not a usable HTTP response.
    Broken,
    /// Status and body.
    Done(u16, Vec<u8>),
}

pub(super) fn parse_response(raw: &[u8], end: End) -> Parsed {
    let Some(head_end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return match end {
            End::Open => Parsed::Incomplete,
            End::Closed => Parsed::Broken,
        };
    };
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let body = &raw[head_end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = match status_line.split(' ').collect::<Vec<_>>().as_slice() {
        [version, code, ..] if version.starts_with("HTTP/1.") => code.parse::<u16>().ok(),
        _ => None,
    };
    let Some(status) = status else {
        return Parsed::Broken;
    };
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let (name, value) = (name.trim(), value.trim());
            if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.to_ascii_lowercase().contains("chunked");
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            }
        }
    }
    if chunked {
        return match (dechunk(body), end) {
            (Some(decoded), _) => Parsed::Done(status, decoded),
            (None, End::Closed) => Parsed::Broken,
            (None, End::Open) => Parsed::Incomplete,
        };
    }
    match (length, end) {
        (Some(n), _) if body.len() >= n => Parsed::Done(status, body[..n].to_vec()),
        (Some(_), End::Closed) => Parsed::Broken,
        (Some(_), End::Open) | (None, End::Open) => Parsed::Incomplete,
        (None, End::Closed) => Parsed::Done(status, body.to_vec()),
    }
}

/// Decodes a chunked body; `None` until the last (empty) chunk has arrived, or when the
/// framing is broken.
pub(super) fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if data.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}
