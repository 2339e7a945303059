//! The model client: sends one provider-neutral request over the wire its settings pick
//! (Chat Completions, or the Responses API through `responses/`), reads the answer as
//! Server-Sent Events (or one JSON body), reports text and reasoning as they arrive,
//! retries transient failures and returns a [`Completion`] or a classified [`LlmError`].
//! It owns the HTTP details (headers, timeouts, cancellation) and the stream state; it
//! must not know about the agent loop, tools' behaviour or terminals.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::answer::{AnswerState, Flow};
use super::chat_answer::ChatAnswer;
use super::echo::{self, Echo, EchoMemory, Learned};
use super::error::{Limit, Site};
use super::reasoning::readable_text;
use super::responses::stream::{ResponsesState, parse_body as parse_responses_body};
use super::retry::{Jitter, StopReason, Verdict, parse_retry_after, verdict};
use super::sse::SseParser;
use super::wire::{ChatChunk, RequestBody, ToolCallAccumulator, finish_reason};
use super::{AuthHeader, ChatRequest, Completion, LlmError, ProviderConfig, StreamEvent};
use super::{Reasoning, ReasoningField, StreamMode, Wire};

/// Longest SSE line accepted (a whole tool-call argument can arrive in one line).
const MAX_SSE_LINE: usize = 16 << 20;
/// Longest error body read from a failed response.
const MAX_ERROR_BODY: usize = 64 << 10;
/// How long to wait for usage and `[DONE]` once a finish_reason has arrived.
const AFTER_FINISH_WAIT: Duration = Duration::from_secs(5);
/// Longest non-streaming body read.
const MAX_JSON_BODY: usize = 64 << 20;

/// A client for one provider. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Client {
    config: ProviderConfig,
    site: Site,
    /// The same site with the Responses endpoint (`{base_url}/responses`).
    responses_site: Site,
    headers: HeaderMap,
    /// Built on first use or by a set-up thread; the error text when it cannot be built.
    http: Arc<OnceLock<Result<reqwest::Client, String>>>,
    /// What refusals taught about echoing reasoning, per model (`None`: nothing), read
    /// from the file in [`ProviderConfig::reasoning_memory`] once per model and kept
    /// here, so a request does not read the file again.
    learned: std::sync::Mutex<std::collections::HashMap<String, Option<Learned>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// `http://` only: no root certificates are loaded.
    PlainHttp,
    /// `https://` with the platform's root certificates.
    Tls,
}

fn build_http(connect_timeout: Duration, transport: Transport) -> Result<reqwest::Client, String> {
    crate::http::builder(transport == Transport::PlainHttp)
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| e.to_string())
}

impl Client {
    /// A client for `config`. Fails when the base URL or a header cannot be used.
    pub fn new(config: ProviderConfig) -> Result<Client, LlmError> {
        let base_url = config.base_url.trim_end_matches('/').to_string();
        let site = Site {
            provider: config.name.clone(),
            endpoint: format!("{base_url}/chat/completions"),
            base_url: base_url.clone(),
            key_source: config.api_key_source.clone(),
            key_sent: config.api_key.is_some(),
            secrets: secrets_of(&config),
        };
        let url = reqwest::Url::parse(&site.endpoint).map_err(|e| {
            LlmError::config(
                &site,
                &format!("the base URL `{base_url}` is not a URL ({e})"),
            )
        })?;
        let headers = request_headers(&config, &site)?;
        let responses_site = Site {
            endpoint: format!("{base_url}/responses"),
            ..site.clone()
        };

        let http = Arc::new(OnceLock::new());
        let connect_timeout = config.connect_timeout;
        if url.scheme() == "http" {
            // Plain HTTP (local servers): cheap, build it now.
            let _ = http.set(build_http(connect_timeout, Transport::PlainHttp));
        } else {
            // Loading the system's root certificates takes tens of milliseconds: do it on
            // a thread while the rest of start-up runs; the first request waits for it.
            let cell = Arc::clone(&http);
            let spawned = std::thread::Builder::new()
                .name("harness9-tls-setup".into())
                .spawn(move || {
                    cell.get_or_init(|| build_http(connect_timeout, Transport::Tls));
                });
            if let Err(e) = spawned {
                tracing::debug!("could not start the TLS set-up thread ({e}); doing it lazily");
            }
        }
        Ok(Client {
            config,
            site,
            responses_site,
            headers,
            http,
            learned: Default::default(),
        })
    }

    /// The HTTP client, waiting for its set-up when it is still running.
    fn http(&self) -> Result<&reqwest::Client, LlmError> {
        let transport = if self.site.endpoint.starts_with("http://") {
            Transport::PlainHttp
        } else {
            Transport::Tls
        };
        let built = self
            .http
            .get_or_init(|| build_http(self.config.connect_timeout, transport));
        built.as_ref().map_err(|e| {
            LlmError::config(
                &self.site,
                &format!("could not set up the HTTP client: {e}"),
            )
        })
    }

    /// The provider settings this client uses.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// The URL Chat Completions requests go to.
    pub fn endpoint(&self) -> &str {
        &self.site.endpoint
    }

    /// The wire a request for `model` goes over.
    pub fn wire_for(&self, model: &str) -> Wire {
        self.config.wire.for_model(&self.config.base_url, model)
    }

    /// The URL a request for `model` goes to.
    pub fn endpoint_for(&self, model: &str) -> &str {
        &self.site_for(self.wire_for(model)).endpoint
    }

    fn site_for(&self, wire: Wire) -> &Site {
        match wire {
            Wire::Chat => &self.site,
            Wire::Responses => &self.responses_site,
        }
    }

    /// Whether requests for `model` send earlier reasoning back, and why.
    pub fn echo_for(&self, model: &str) -> (Echo, echo::EchoBecause) {
        let mut known = self.learned.lock().unwrap_or_else(|p| p.into_inner());
        let learned = *known.entry(model.to_string()).or_insert_with(|| {
            let memory = EchoMemory::new(self.config.reasoning_memory.as_ref()?);
            memory.get(&self.site.base_url, model)
        });
        drop(known);
        echo::decide(
            self.config.reasoning_echo,
            learned,
            &self.site.base_url,
            model,
        )
    }

    /// Keeps what a refusal taught about `model`, here and in the memory file.
    fn learn(&self, model: &str, learned: Learned) {
        self.learned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(model.to_string(), Some(learned));
        if let Some(path) = &self.config.reasoning_memory
            && let Err(e) = EchoMemory::new(path).put(&self.site.base_url, model, learned)
        {
            tracing::warn!("could not remember how {model} wants its reasoning: {e}");
        }
    }

    /// Sends `req` and returns the finished answer. Text and reasoning are reported
    /// through `on_event` as they stream in, and [`StreamEvent::Retrying`] before each
    /// retry (the caller drops what streamed in the failed attempt). When `cancel` fires
    /// the request is dropped at once and an [`ErrorKind::Interrupted`] error returned.
    ///
    /// [`ErrorKind::Interrupted`]: crate::protocol::ErrorKind::Interrupted
    pub async fn complete(
        &self,
        req: ChatRequest<'_>,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        let wire = self.wire_for(req.model);
        let site = self.site_for(wire);
        let mut mode = self.config.stream_mode;
        let (mut echo, because) = self.echo_for(req.model);
        // The echo is turned the other way at most once per request, on a refusal that
        // says it was wrong (and never against `send_reasoning`); the Responses wire
        // sends its own reasoning items and has nothing to turn.
        let mut echo_turned = because == echo::EchoBecause::Configured || wire == Wire::Responses;
        let mut body = self.request_bytes(&req, mode, wire, echo)?;
        let carries_images = req.messages.iter().any(|m| !m.images().is_empty());
        let mut jitter = Jitter::from_clock();
        let mut attempt = 1u32;
        let started = Instant::now();
        let total = self.config.total_timeout;
        loop {
            // What this attempt streams: kept out here so an interrupted or failed
            // attempt hands it back in its error ([`LlmError::take_partial`]), and the
            // caller need not gather a second copy of a long answer as it streams.
            let mut streamed: Box<dyn AnswerState> = match wire {
                Wire::Chat => Box::<ChatAnswer>::default(),
                Wire::Responses => Box::<ResponsesState>::default(),
            };
            // Each attempt gets its own limit, cut short by what is left of the total.
            let left = total.saturating_sub(started.elapsed());
            let (allowed, limit) = if self.config.attempt_timeout <= left {
                (self.config.attempt_timeout, Limit::Attempt)
            } else {
                (left, Limit::Total)
            };
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(LlmError::interrupted(site, req.model)),
                r = timeout(allowed, self.attempt(&body, mode, wire, req.model, on_event, streamed.as_mut())) => {
                    r.unwrap_or_else(|_| {
                        let shown = match limit {
                            Limit::Total => total,
                            _ => allowed,
                        };
                        Err(LlmError::deadline(site, req.model, limit, shown))
                    })
                }
            };
            // Reasoning is marked with the provider it came from, so it only ever goes
            // back there.
            let source = || Some(self.config.base_url.clone());
            let error = match result {
                Ok(mut completion) => {
                    if let Some(reasoning) = completion.reasoning.as_mut() {
                        reasoning.source = source();
                    }
                    return Ok(completion);
                }
                Err(e) => {
                    let mut partial = streamed.take_partial();
                    partial.reasoning.source = source();
                    let e = if carries_images {
                        e.of_request_with_images()
                    } else {
                        e
                    };
                    e.with_partial(partial)
                }
            };
            if error.kind() == crate::protocol::ErrorKind::Interrupted || error.is_total_timeout() {
                return Err(error.with_attempts(attempt));
            }
            if !echo_turned
                && let Some(learned) = echo::lesson(echo, error.status(), error.provider_message())
            {
                tracing::info!(
                    model = req.model,
                    ?learned,
                    "the provider refused the reasoning echo as sent; asking again the other way"
                );
                echo_turned = true;
                echo = learned.echo();
                self.learn(req.model, learned);
                body = self.request_bytes(&req, mode, wire, echo)?;
                attempt += 1;
                // Said to the user, as any retry is; remembered for the model.
                on_event(StreamEvent::Retrying {
                    attempt,
                    delay: Duration::ZERO,
                    reason: match learned {
                        Learned::Required => format!(
                            "{} wants the model's reasoning sent back; asking again with it \
                             (remembered for {})",
                            self.config.name, req.model
                        ),
                        Learned::Refused => format!(
                            "{} refuses reasoning sent back; asking again without it \
                             (remembered for {})",
                            self.config.name, req.model
                        ),
                    },
                });
                continue;
            }
            if error.is_empty_stream() && mode == StreamMode::Sse {
                // A 200 stream with no data at all (llama-cpp-python does this when the
                // prompt overflows): ask once more without streaming, and report what
                // the server says then.
                tracing::debug!(
                    attempt,
                    "empty event stream; asking again without streaming"
                );
                mode = StreamMode::NonStreaming;
                body = self.request_bytes(&req, mode, wire, echo)?;
                attempt += 1;
                continue;
            }
            let delay = match verdict(&self.config.retry, &error, attempt, &mut jitter) {
                Verdict::Retry { delay } => delay,
                Verdict::Stop {
                    reason: StopReason::WaitTooLong { cap, .. },
                } => return Err(error.with_attempts(attempt).with_wait_refused(cap)),
                Verdict::Stop { .. } => return Err(error.with_attempts(attempt)),
            };
            if started.elapsed() + delay >= total {
                return Err(error.with_attempts(attempt).with_total_spent(total));
            }
            tracing::debug!(attempt, ?delay, error = %error, "retrying model request");
            on_event(StreamEvent::Retrying {
                attempt: attempt + 1,
                delay,
                reason: error.short_reason(),
            });
            // The caller drops what the failed attempt streamed; so does the error.
            drop(error);
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {
                    return Err(LlmError::interrupted(site, req.model).with_attempts(attempt));
                }
                _ = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }

    /// The request body as JSON bytes, streaming or not.
    fn request_bytes(
        &self,
        req: &ChatRequest<'_>,
        mode: StreamMode,
        wire: Wire,
        echo: Echo,
    ) -> Result<Vec<u8>, LlmError> {
        let bytes = if wire == Wire::Responses {
            super::responses::RequestBody::new(req, &self.config, mode).to_bytes()
        } else if mode == self.config.stream_mode {
            RequestBody::new(req, &self.config, echo).to_bytes()
        } else {
            let mut config = self.config.clone();
            config.stream_mode = mode;
            RequestBody::new(req, &config, echo).to_bytes()
        };
        bytes.map_err(|e| LlmError::internal(self.site_for(wire), req.model, &e.to_string()))
    }

    /// One attempt: send, check the status, read the answer.
    async fn attempt(
        &self,
        body: &[u8],
        mode: StreamMode,
        wire: Wire,
        model: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        streamed: &mut dyn AnswerState,
    ) -> Result<Completion, LlmError> {
        let site = self.site_for(wire);
        let idle = self.config.idle_timeout;
        let mut headers = self.headers.clone();
        if mode != self.config.stream_mode {
            headers.insert(ACCEPT, HeaderValue::from_static(accept_for(mode)));
        }
        let send = self
            .http()?
            .post(&site.endpoint)
            .headers(headers)
            .body(body.to_vec())
            .send();
        let mut response = match timeout(idle, send).await {
            Err(_) => {
                return Err(LlmError::timeout(site, model, idle, "response headers"));
            }
            Ok(Err(e)) => return Err(LlmError::network(site, model, &error_chain(&e))),
            Ok(Ok(r)) => r,
        };

        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            // A body that cannot be read still leaves a useful status error.
            let body = self
                .read_body(&mut response, site, model, MAX_ERROR_BODY)
                .await
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&body);
            return Err(LlmError::http(
                site,
                model,
                status.as_u16(),
                &text,
                retry_after,
            ));
        }

        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let json_body = content_type.contains("json") && !content_type.contains("event-stream");
        let streaming = mode == StreamMode::Sse && !json_body;
        if streaming {
            self.read_stream(&mut response, site, model, on_event, streamed)
                .await
        } else {
            let body = self
                .read_body(&mut response, site, model, MAX_JSON_BODY)
                .await?;
            match wire {
                Wire::Chat => self.parse_json_body(&body, model, on_event),
                Wire::Responses => parse_responses_body(&body, site, model, on_event),
            }
        }
    }

    /// Reads a whole body, chunk by chunk under the idle timeout, up to `limit` bytes.
    async fn read_body(
        &self,
        response: &mut reqwest::Response,
        site: &Site,
        model: &str,
        limit: usize,
    ) -> Result<Vec<u8>, LlmError> {
        let idle = self.config.idle_timeout;
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk(response, site, model, idle, idle).await? {
            body.extend_from_slice(&chunk);
            if body.len() >= limit {
                body.truncate(limit);
                break;
            }
        }
        Ok(body)
    }

    /// The next piece of the body, waiting at most `wait`; a timeout names `limit`.
    async fn next_chunk(
        &self,
        response: &mut reqwest::Response,
        site: &Site,
        model: &str,
        wait: Duration,
        limit: Duration,
    ) -> Result<Option<impl std::ops::Deref<Target = [u8]>>, LlmError> {
        match timeout(wait, response.chunk()).await {
            Err(_) => Err(LlmError::timeout(site, model, limit, "the answer")),
            Ok(Err(e)) => Err(LlmError::broken(site, model, &error_chain(&e))),
            Ok(Ok(chunk)) => Ok(chunk),
        }
    }

    async fn read_stream(
        &self,
        response: &mut reqwest::Response,
        site: &Site,
        model: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        state: &mut dyn AnswerState,
    ) -> Result<Completion, LlmError> {
        let idle = self.config.idle_timeout;
        let mut parser = SseParser::new(MAX_SSE_LINE);
        // The idle timer runs from the last progress: any bytes until the first data
        // event (a server may send keep-alive comments while it reads the prompt), then
        // only bytes of data, so a proxy that sends nothing but comments cannot hold
        // the attempt forever.
        let mut last_progress = Instant::now();
        loop {
            // Once the model has finished, only usage and `[DONE]` are still to come:
            // do not wait long for them, and do not throw the answer away without them.
            let limit = if state.finished() {
                idle.min(AFTER_FINISH_WAIT)
            } else {
                idle
            };
            let wait = limit.saturating_sub(last_progress.elapsed());
            let chunk = match self.next_chunk(response, site, model, wait, limit).await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) if state.finished() => {
                    tracing::debug!(error = %e, "stream broke after the finish; keeping the answer");
                    return Ok(state.take_completion());
                }
                Err(e) => return Err(e),
            };
            let head = state.head_mut();
            if head.len() < 512 {
                head.extend(chunk.iter().take(512 - head.len()));
            }
            let progress = parser.progress();
            let events = parser
                .feed(&chunk)
                .map_err(|e| LlmError::protocol(site, model, &e.to_string()))?;
            if state.events() == 0 || parser.progress() != progress {
                last_progress = Instant::now();
            }
            for event in events {
                if state.handle(event, site, model, on_event)? == Flow::Done {
                    return Ok(state.take_completion());
                }
            }
        }
        let events = parser
            .finish()
            .map_err(|e| LlmError::protocol(site, model, &e.to_string()))?;
        for event in events {
            // These events had no blank line after them: the stream ended inside them.
            // One that cannot be read was cut off, like a connection reset mid-event.
            match state.handle(event, site, model, on_event) {
                Ok(Flow::Done) => return Ok(state.take_completion()),
                Ok(Flow::More) => {}
                Err(e) if e.kind() == crate::protocol::ErrorKind::Protocol => {
                    tracing::debug!(error = %e, "the stream ended inside an event");
                    return Err(LlmError::cut(site, model));
                }
                Err(e) => return Err(e),
            }
        }
        if state.finished() {
            Ok(state.take_completion())
        } else if state.events() == 0 && parser.foreign_lines() == 0 {
            // Empty, or only keep-alive comments: an event stream that said nothing.
            Err(LlmError::empty_stream(site, model))
        } else if state.events() == 0 {
            // Not an event stream at all: maybe one JSON body with a wrong content type.
            Err(Self::not_a_stream(site, state.head_mut(), model))
        } else {
            Err(LlmError::cut(site, model))
        }
    }

    fn not_a_stream(site: &Site, head: &[u8], model: &str) -> LlmError {
        let text = String::from_utf8_lossy(head);
        LlmError::protocol(
            site,
            model,
            &format!("expected an event stream, got: {}", text.trim()),
        )
    }

    /// A non-streaming body: `choices[0].message`, or an error object.
    fn parse_json_body(
        &self,
        body: &[u8],
        model: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        let chunk: ChatChunk = serde_json::from_slice(body).map_err(|e| {
            let head = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
            LlmError::protocol(
                &self.site,
                model,
                &format!("the body is not chat-completion JSON ({e}): {head}"),
            )
        })?;
        if let Some(error) = &chunk.error {
            return Err(LlmError::in_stream(&self.site, model, error));
        }
        let usage = chunk.reported_usage();
        let Some(choice) = chunk
            .choices
            .into_iter()
            .find(|c| c.index.unwrap_or(0) == 0)
        else {
            return Err(LlmError::protocol(
                &self.site,
                model,
                "the body has no choices",
            ));
        };
        let mut message = choice.message.or(choice.delta).unwrap_or_default();
        let text = message.content.clone().unwrap_or_default();
        let details = std::mem::take(&mut message.reasoning_details);
        let reasoning = match message.reasoning_piece() {
            Some((text, field)) => Some(Reasoning::text(text, field)),
            None if !details.is_empty() => Some(Reasoning::text(
                readable_text(&details),
                ReasoningField::Reasoning,
            )),
            None => None,
        }
        .map(|r| Reasoning { details, ..r });
        if let Some(r) = reasoning.as_ref().filter(|r| !r.text.is_empty()) {
            on_event(StreamEvent::Reasoning(r.text.clone()));
        }
        if !text.is_empty() {
            on_event(StreamEvent::Text(text.clone()));
        }
        let mut calls = ToolCallAccumulator::new();
        message.tool_calls.iter().for_each(|d| calls.push(d));
        Ok(Completion {
            text,
            reasoning,
            tool_calls: calls.finish(),
            finish_reason: choice.finish_reason.as_deref().and_then(finish_reason),
            usage,
        })
    }
}

/// The headers of every request: content type, accept, auth and the extra ones.
fn request_headers(config: &ProviderConfig, site: &Site) -> Result<HeaderMap, LlmError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        ACCEPT,
        HeaderValue::from_static(accept_for(config.stream_mode)),
    );
    add_provider_headers(&mut headers, config)
        .map_err(|e| LlmError::config(site, &e.to_string()))?;
    Ok(headers)
}

/// The Accept header for a way of asking.
fn accept_for(mode: StreamMode) -> &'static str {
    match mode {
        StreamMode::Sse => "text/event-stream",
        StreamMode::NonStreaming => "application/json",
    }
}

/// Why a provider's key or extra headers cannot be sent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HeaderError {
    /// The API key has characters a header cannot carry.
    #[error("the API key from {source_name} contains characters that cannot go in a header")]
    ApiKey {
        /// Where the key came from.
        source_name: String,
    },
    /// The `auth_header` name is not a valid header name (config.toml checks it too).
    #[error("auth_header `{name}` is not a valid header name; fix auth_header in config")]
    AuthName {
        /// The name as configured.
        name: String,
    },
    /// An extra header's name or value is invalid.
    #[error("extra header `{name}` has an invalid {part}; fix extra_headers in config")]
    Extra {
        /// The header's name as configured.
        name: String,
        /// `name` or `value`.
        part: &'static str,
    },
}

/// The values a provider's error body must never show as sent back: the key (trimmed,
/// as it is sent) and the values of the configured headers.
fn secrets_of(config: &ProviderConfig) -> crate::redact::Redactor {
    /// A four-character value is still replaced in an error message; shorter ones would
    /// garble it.
    const MIN: usize = 4;
    let redactor = match &config.api_key {
        Some(key) => crate::redact::Redactor::new().with(key, "[api key]", MIN),
        None => crate::redact::Redactor::new(),
    };
    redactor.with_all(
        config.extra_headers.iter().map(|(_, value)| value),
        "[header value]",
        MIN,
    )
}

/// Adds what the provider wants on every request: its key (marked sensitive) as
/// `Authorization: Bearer <key>` or raw in the header `auth_header` names, then its extra
/// headers, each replacing a header of the same name.
pub(crate) fn add_provider_headers(
    headers: &mut HeaderMap,
    config: &ProviderConfig,
) -> Result<(), HeaderError> {
    if let Some(key) = &config.api_key {
        let key = key.trim();
        let (name, text) = match &config.auth_header {
            AuthHeader::Bearer => (AUTHORIZATION, format!("Bearer {key}")),
            AuthHeader::Named { name } => (
                HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| HeaderError::AuthName { name: name.clone() })?,
                key.to_string(),
            ),
        };
        let mut value = HeaderValue::from_str(&text).map_err(|_| HeaderError::ApiKey {
            source_name: config.api_key_source.clone(),
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    for (name, value) in &config.extra_headers {
        let bad = |part| HeaderError::Extra {
            name: name.clone(),
            part,
        };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("name"))?;
        let value = HeaderValue::from_str(value).map_err(|_| bad("value"))?;
        headers.insert(name, value);
    }
    Ok(())
}

/// The innermost causes of a reqwest error, which say what actually went wrong
/// ("Connection refused") rather than "error sending request".
fn error_chain(error: &reqwest::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    if error.is_timeout() {
        parts.push("connection timed out".into());
    }
    parts.last().cloned().unwrap_or_default()
}

#[cfg(test)]
mod auth_header_tests {
    use super::*;

    #[test]
    fn the_key_goes_in_the_configured_header() {
        let mut config = ProviderConfig::new("p", "http://x/v1");
        config.api_key = Some(" secret ".into());
        let mut headers = HeaderMap::new();
        add_provider_headers(&mut headers, &config).unwrap();
        assert_eq!(headers[AUTHORIZATION], "Bearer secret");
        assert!(headers[AUTHORIZATION].is_sensitive());

        config.auth_header = AuthHeader::Named {
            name: "api-key".into(),
        };
        let mut headers = HeaderMap::new();
        add_provider_headers(&mut headers, &config).unwrap();
        assert_eq!(headers["api-key"], "secret");
        assert!(headers["api-key"].is_sensitive());
        assert!(headers.get(AUTHORIZATION).is_none());

        config.auth_header = AuthHeader::Named {
            name: "bad name".into(),
        };
        let err = add_provider_headers(&mut HeaderMap::new(), &config).unwrap_err();
        assert!(err.to_string().contains("bad name"), "{err}");
    }
}
