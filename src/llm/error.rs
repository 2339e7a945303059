//! Model-request failures: one error type that carries its [`ErrorKind`], the provider,
//! the endpoint, the HTTP status when there was one and the provider's own words, and
//! that says in its `Display` what failed, where, and what to do. Classification of HTTP
//! statuses and error bodies (quota, context length, unknown model...) lives here. It
//! must not know how requests are sent or retried, and it never holds the API key.

use std::time::Duration;

use super::wire::ErrorInfo;
use crate::protocol::ErrorKind;

/// Longest provider message kept in an error (bodies can be whole HTML pages).
const MAX_MESSAGE_CHARS: usize = 400;

/// Where a request went, for error messages. Built once per client.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub provider: String,
    pub endpoint: String,
    pub base_url: String,
    pub key_source: String,
    pub key_sent: bool,
    /// The key and the configured header values, only used to scrub them out of
    /// messages; never stored in an error.
    pub secrets: crate::redact::Redactor,
}

/// A classified model-request failure (boxed: it travels through every `Result`).
#[derive(Debug, thiserror::Error)]
#[error("{}", self.0.describe())]
pub struct LlmError(Box<Details>);

#[derive(Debug)]
struct Details {
    kind: ErrorKind,
    provider: String,
    endpoint: String,
    base_url: String,
    key_source: String,
    key_sent: bool,
    model: String,
    status: Option<u16>,
    message: String,
    attempts: u32,
    retry_after: Option<Duration>,
    /// Set when the client did not wait for `retry_after` because it is over this cap.
    wait_cap: Option<Duration>,
    cut: bool,
    retry: RetryBudget,
    /// The time limit that was hit, for timeouts.
    limit: Option<Limit>,
    /// Set when retries stopped because the next one would pass the total timeout.
    total_spent: Option<Duration>,
    stream: StreamFault,
    /// What the failed attempt had streamed before it ended (an interrupted answer is
    /// kept), moved here rather than copied.
    partial: Option<Box<PartialAnswer>>,
}

/// The text and reasoning an attempt streamed before it failed or was interrupted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PartialAnswer {
    /// The answer text streamed so far.
    pub text: String,
    /// The reasoning streamed so far, with the field it came in.
    pub reasoning: super::Reasoning,
}

/// A time limit of a request, each with its own setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// No data for too long ([`ProviderConfig::idle_timeout`](super::ProviderConfig)).
    Idle,
    /// One attempt took too long in all (`attempt_timeout`).
    Attempt,
    /// All attempts of one request took too long (`total_timeout`).
    Total,
}

impl Limit {
    /// The config.toml key that changes this limit.
    fn setting(self) -> &'static str {
        match self {
            Limit::Idle => "idle_timeout_secs",
            Limit::Attempt => "attempt_timeout_secs",
            Limit::Total => "total_timeout_secs",
        }
    }
}

/// What was wrong with a 200 event stream, beside its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamFault {
    /// Nothing particular.
    None,
    /// It ended without a single data event (empty, or keep-alive comments only).
    Empty,
}

/// How many retries a failure deserves, beside what its kind says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryBudget {
    /// What the kind says: transient kinds get the policy's retries, others none.
    ByKind,
    /// One retry at most: a 5xx whose body is a request-validation error is most likely
    /// a problem with the request, but a flaky server gets one more chance.
    Once,
}

impl LlmError {
    fn at(site: &Site, model: &str, kind: ErrorKind, message: &str) -> LlmError {
        LlmError(Box::new(Details {
            kind,
            provider: site.provider.clone(),
            endpoint: site.endpoint.clone(),
            base_url: site.base_url.clone(),
            key_source: site.key_source.clone(),
            key_sent: site.key_sent,
            model: model.to_string(),
            status: None,
            message: clean_message(message, &site.secrets),
            attempts: 1,
            retry_after: None,
            wait_cap: None,
            cut: false,
            retry: RetryBudget::ByKind,
            limit: None,
            total_spent: None,
            stream: StreamFault::None,
            partial: None,
        }))
    }

    /// A non-success HTTP answer, classified from its status and body.
    pub(crate) fn http(
        site: &Site,
        model: &str,
        status: u16,
        body: &str,
        retry_after: Option<Duration>,
    ) -> LlmError {
        let info = ErrorInfo::from_body(body);
        let kind = classify_http(status, &info);
        let mut e = LlmError::at(site, model, kind, &info.message);
        e.0.status = Some(status);
        e.0.retry_after = retry_after;
        if status >= 500 && kind == ErrorKind::BadRequest {
            e.0.retry = RetryBudget::Once;
        }
        e
    }

    /// This failure of a request that carried images, as the refusal of the images it
    /// is when the server's words say so: a 4xx or 5xx (or an error in the stream) whose
    /// message names images, vision, multimodal input or the content part's type. It is
    /// not retried.
    pub(crate) fn of_request_with_images(mut self) -> LlmError {
        let refusable = matches!(
            self.0.kind,
            ErrorKind::BadRequest | ErrorKind::Server | ErrorKind::Protocol
        );
        if refusable && mentions_images(&self.0.message.to_lowercase()) {
            self.0.kind = ErrorKind::ImagesRefused;
            self.0.retry = RetryBudget::ByKind;
        }
        self
    }

    /// An error object the provider sent inside a stream or a 200 body.
    pub(crate) fn in_stream(site: &Site, model: &str, error: &serde_json::Value) -> LlmError {
        let info = ErrorInfo::from_error_value(error);
        let kind = classify_stream(&info);
        let mut e = LlmError::at(site, model, kind, &info.message);
        e.0.status = info.status.filter(|s| (400..600).contains(s));
        e
    }

    /// The endpoint could not be reached or the connection broke.
    pub(crate) fn network(site: &Site, model: &str, detail: &str) -> LlmError {
        LlmError::at(site, model, ErrorKind::Network, detail)
    }

    /// The connection broke while the answer was being read.
    pub(crate) fn broken(site: &Site, model: &str, detail: &str) -> LlmError {
        let mut e = LlmError::at(site, model, ErrorKind::Network, detail);
        e.0.cut = true;
        e
    }

    /// The stream ended before the model finished.
    pub(crate) fn cut(site: &Site, model: &str) -> LlmError {
        let mut e = LlmError::at(
            site,
            model,
            ErrorKind::Network,
            "the stream ended before the model finished its answer",
        );
        e.0.cut = true;
        e
    }

    /// No bytes for longer than the idle timeout.
    pub(crate) fn timeout(site: &Site, model: &str, idle: Duration, waiting_for: &str) -> LlmError {
        let detail = format!(
            "no data for {} while waiting for {waiting_for}",
            human_duration(idle)
        );
        let mut e = LlmError::at(site, model, ErrorKind::Timeout, &detail);
        e.0.limit = Some(Limit::Idle);
        e
    }

    /// An attempt, or all attempts together, took longer than `limit` allows.
    pub(crate) fn deadline(site: &Site, model: &str, limit: Limit, allowed: Duration) -> LlmError {
        let detail = match limit {
            Limit::Idle => format!("no data for {}", human_duration(allowed)),
            Limit::Attempt => format!("one attempt may take {}", human_wait(allowed)),
            Limit::Total => format!(
                "one request, with its retries, may take {}",
                human_wait(allowed)
            ),
        };
        let mut e = LlmError::at(site, model, ErrorKind::Timeout, &detail);
        e.0.limit = Some(limit);
        e
    }

    /// A 200 event stream that ended without a single data event.
    pub(crate) fn empty_stream(site: &Site, model: &str) -> LlmError {
        let mut e = LlmError::at(
            site,
            model,
            ErrorKind::Protocol,
            "the event stream ended without any data",
        );
        e.0.stream = StreamFault::Empty;
        e
    }

    /// Whether this is a 200 event stream that carried no data at all.
    pub(crate) fn is_empty_stream(&self) -> bool {
        self.0.stream == StreamFault::Empty
    }

    /// Whether this timeout is the total one (no retry can follow it).
    pub(crate) fn is_total_timeout(&self) -> bool {
        self.0.limit == Some(Limit::Total)
    }

    /// Records that no further retry was made because it would pass `total`.
    pub(crate) fn with_total_spent(mut self, total: Duration) -> LlmError {
        self.0.total_spent = Some(total);
        self
    }

    /// The answer is not a chat completion.
    pub(crate) fn protocol(site: &Site, model: &str, detail: &str) -> LlmError {
        LlmError::at(site, model, ErrorKind::Protocol, detail)
    }

    /// The caller cancelled the request.
    pub(crate) fn interrupted(site: &Site, model: &str) -> LlmError {
        LlmError::at(site, model, ErrorKind::Interrupted, "")
    }

    /// The provider settings cannot make a valid request (bad header, bad URL).
    pub(crate) fn config(site: &Site, detail: &str) -> LlmError {
        LlmError::at(site, "", ErrorKind::BadRequest, detail)
    }

    /// A failure inside harness9 (the request could not be serialized).
    pub(crate) fn internal(site: &Site, model: &str, detail: &str) -> LlmError {
        LlmError::at(site, model, ErrorKind::Internal, detail)
    }

    /// Keeps what the attempt streamed before it ended, when it streamed anything.
    pub(crate) fn with_partial(mut self, partial: PartialAnswer) -> LlmError {
        if !partial.text.is_empty() || !partial.reasoning.is_empty() {
            self.0.partial = Some(Box::new(partial));
        }
        self
    }

    /// Takes what the last attempt streamed before it failed or was interrupted (the
    /// answer the user saw so far), leaving none.
    pub fn take_partial(&mut self) -> Option<PartialAnswer> {
        self.0.partial.take().map(|p| *p)
    }

    pub(crate) fn with_attempts(mut self, attempts: u32) -> LlmError {
        self.0.attempts = attempts;
        self
    }

    /// Records that the server's Retry-After was not waited for because it is longer
    /// than `cap` (the message then says both).
    pub(crate) fn with_wait_refused(mut self, cap: Duration) -> LlmError {
        self.0.wait_cap = Some(cap);
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The provider name from the config.
    pub fn provider(&self) -> &str {
        &self.0.provider
    }

    /// The URL the request went to.
    pub fn endpoint(&self) -> &str {
        &self.0.endpoint
    }

    /// The HTTP status, when the server answered with one.
    pub fn status(&self) -> Option<u16> {
        self.0.status
    }

    /// The provider's own message (or the failure detail), trimmed and without the key.
    pub fn provider_message(&self) -> &str {
        &self.0.message
    }

    /// How many attempts were made before giving up.
    pub fn attempts(&self) -> u32 {
        self.0.attempts
    }

    /// The server's Retry-After, when it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        self.0.retry_after
    }

    /// Whether another attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        self.0.retry == RetryBudget::Once
            || matches!(
                self.0.kind,
                ErrorKind::Network | ErrorKind::Timeout | ErrorKind::Server | ErrorKind::RateLimit
            )
    }

    /// How many retries this failure deserves beside what its kind says.
    pub(crate) fn retry_budget(&self) -> RetryBudget {
        self.0.retry
    }

    /// A short reason for a retry notice.
    pub(crate) fn short_reason(&self) -> String {
        match self.0.status {
            Some(s) => format!("{} (HTTP {s})", self.0.what()),
            None => self.0.what(),
        }
    }
}

impl Details {
    fn what(&self) -> String {
        match self.kind {
            ErrorKind::Auth => "the API key was refused".into(),
            ErrorKind::ModelNotFound => format!("model `{}` was not found", self.model),
            ErrorKind::BadRequest => "the request was rejected".into(),
            ErrorKind::ImagesRefused => format!("model `{}` does not take images", self.model),
            ErrorKind::ContextTooLong => {
                format!("the conversation is too long for model `{}`", self.model)
            }
            ErrorKind::RateLimit => "the provider is rate-limiting requests".into(),
            ErrorKind::Quota => "the account's quota or credit is exhausted".into(),
            ErrorKind::Server => "the provider failed".into(),
            ErrorKind::Network if self.cut => "the connection broke mid-answer".into(),
            ErrorKind::Network => "the endpoint could not be reached".into(),
            ErrorKind::Timeout => match self.limit {
                Some(Limit::Attempt) => "the answer took too long (attempt timeout)".into(),
                Some(Limit::Total) => {
                    "the request took too long with its retries (total timeout)".into()
                }
                Some(Limit::Idle) | None => "the endpoint stopped sending (idle timeout)".into(),
            },
            ErrorKind::Protocol => "the answer is not a chat completion".into(),
            ErrorKind::Interrupted => "the request was interrupted".into(),
            ErrorKind::MaxTurns
            | ErrorKind::TimeLimit
            | ErrorKind::CostLimit
            | ErrorKind::OutputSchema
            | ErrorKind::OutputLimit
            | ErrorKind::ContentFilter
            | ErrorKind::Skill
            | ErrorKind::HookBlocked
            | ErrorKind::Usage
            | ErrorKind::Internal => "the request failed".into(),
        }
    }

    fn todo(&self) -> String {
        let waits = matches!(
            self.kind,
            ErrorKind::RateLimit | ErrorKind::Server | ErrorKind::Timeout
        );
        if let Some(wait) = self.retry_after.filter(|_| waits) {
            let asked = format!(
                "The provider asks to wait {} before the next request",
                human_wait(wait)
            );
            return match self.wait_cap {
                Some(cap) => format!(
                    "{asked} (longer than the {} harness9 waits by itself, so it did not retry)",
                    human_wait(cap)
                ),
                None => asked,
            };
        }
        match self.kind {
            ErrorKind::Auth if self.key_sent => format!(
                "Check {} (the API key harness9 sends to this endpoint)",
                self.key_source
            ),
            ErrorKind::Auth => format!("No API key was sent: set {}", self.key_source),
            ErrorKind::ModelNotFound => {
                "Pick a model the endpoint serves: --model or HARNESS9_MODEL".into()
            }
            ErrorKind::BadRequest if self.retry == RetryBudget::Once => {
                "The server could not read the request harness9 sent (a validation error, \
                 though it answered with a server error); the message above says which field"
                    .into()
            }
            ErrorKind::BadRequest => "The endpoint refused the request as sent; if it rejects \
                 stream_options or tools, change the provider settings in config.toml"
                .into(),
            ErrorKind::ImagesRefused => format!(
                "Use a model that takes images (a vision model), or set images = false for \
                 the {} provider in config.toml so none are sent; the message was not \
                 answered, send it again without its images",
                self.provider
            ),
            ErrorKind::ContextTooLong => "Run /compact or start a new conversation, or use a \
                 larger context window (a local server's context size, such as llama-server -c \
                 or Ollama's num_ctx, or a model with a larger window)"
                .into(),
            ErrorKind::RateLimit => "Wait a minute and try again".into(),
            ErrorKind::Quota => format!(
                "Add credit or raise the quota of the account behind {}",
                self.key_source
            ),
            ErrorKind::Server => "The provider is having trouble; try again later".into(),
            ErrorKind::Network if self.cut => {
                "The connection dropped before the answer was complete; try again".into()
            }
            ErrorKind::Network => format!(
                "Is the server running at {}? Check --base-url or OPENAI_BASE_URL",
                self.base_url
            ),
            ErrorKind::Timeout => match self.limit {
                Some(limit @ Limit::Idle) => format!(
                    "The server may be overloaded or the model very slow (keep-alive comments \
                     do not count as data once the answer started); try again, or raise {} \
                     in config.toml",
                    limit.setting()
                ),
                Some(limit) => format!(
                    "The model may be very slow or the answer very long; raise {} in \
                     config.toml",
                    limit.setting()
                ),
                None => "The server may be overloaded or the model very slow; try again".into(),
            },
            ErrorKind::Protocol => "Check that --base-url points at an OpenAI-compatible API \
                 (it usually ends in /v1)"
                .into(),
            ErrorKind::Interrupted
            | ErrorKind::MaxTurns
            | ErrorKind::TimeLimit
            | ErrorKind::CostLimit
            | ErrorKind::OutputSchema
            | ErrorKind::OutputLimit
            | ErrorKind::ContentFilter
            | ErrorKind::Skill
            | ErrorKind::HookBlocked
            | ErrorKind::Usage
            | ErrorKind::Internal => String::new(),
        }
    }

    fn describe(&self) -> String {
        let mut s = format!("{}: {} at {}", self.provider, self.what(), self.endpoint);
        if let Some(status) = self.status {
            s.push_str(&format!(" (HTTP {status})"));
        }
        if self.attempts > 1 {
            s.push_str(&format!(" after {} attempts", self.attempts));
        }
        if !self.message.is_empty() {
            s.push_str(": ");
            s.push_str(&self.message);
        }
        let mut todo = self.todo();
        if let Some(total) = self.total_spent {
            let stop = format!(
                "No more retries: the next one would pass the {} of {}",
                Limit::Total.setting(),
                human_wait(total)
            );
            todo = if todo.is_empty() {
                stop
            } else {
                format!("{stop}. {todo}")
            };
        }
        if !todo.is_empty() {
            if !s.ends_with('.') {
                s.push('.');
            }
            s.push(' ');
            s.push_str(&todo);
            s.push('.');
        }
        s
    }
}

fn human_duration(d: Duration) -> String {
    if d.as_millis() < 1000 || d.subsec_millis() != 0 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs())
    }
}

/// A wait in the units a person would use: `800 ms`, `45 s`, `2 min 30 s`, `24 h`,
/// `3 days 4 h` (the two largest units, a partial second rounded up).
pub(crate) fn human_wait(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        return format!("{} ms", d.as_millis());
    }
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    let (big, big_unit, small, small_unit) = match secs {
        0..120 => return format!("{secs} s"),
        120..3600 => (secs / 60, "min", secs % 60, "s"),
        3600..172_800 => (secs / 3600, "h", secs % 3600 / 60, "min"),
        _ => (secs / 86_400, "days", secs % 86_400 / 3600, "h"),
    };
    if small == 0 {
        format!("{big} {big_unit}")
    } else {
        format!("{big} {big_unit} {small} {small_unit}")
    }
}

/// Scrubs the key and header values out of a provider message (as sent, and again
/// once runs of whitespace are one space), then trims and shortens it.
fn clean_message(message: &str, secrets: &crate::redact::Redactor) -> String {
    let message = secrets.redact(message);
    let joined = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut m = secrets.redact(&joined).into_owned();
    if m.chars().count() > MAX_MESSAGE_CHARS {
        m = m.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
    }
    m
}

fn haystack(info: &ErrorInfo) -> String {
    let mut s = info.message.to_lowercase();
    for c in &info.codes {
        s.push(' ');
        s.push_str(&c.to_lowercase());
    }
    s
}

fn mentions_quota(text: &str) -> bool {
    ["insufficient_quota", "quota", "billing", "credit"]
        .iter()
        .any(|w| text.contains(w))
}

/// Whether an error text says the conversation does not fit the model's context
/// window, in the words of the servers people use: OpenAI and Azure OpenAI
/// (`context_length_exceeded`, "maximum context length"), llama.cpp's llama-server
/// ("exceeds the available context size"), llama-cpp-python ("exceed context window"),
/// vLLM ("maximum context length", "longer than the maximum model length"), Ollama ("the
/// input length exceeds the context length"), LM Studio ("greater than the context
/// length", "Cannot truncate prompt with n_keep"), OpenRouter and DeepSeek ("maximum
/// context length"), Anthropic-style "prompt is too long". A complaint about the
/// output limit (`max_tokens` too large) is not one, even when it names the context.
fn mentions_context(text: &str) -> bool {
    if mentions_output_limit(text) {
        return false;
    }
    [
        "context_length_exceeded",
        "context length",
        "maximum context",
        "context window",
        "context size",
        "exceed_context_size",
        "maximum model length",
        "prompt is too long",
        "cannot truncate prompt",
        "input token count",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Whether an error text is about the requested output length (`max_tokens` too large),
/// which a shorter conversation does not fix.
fn mentions_output_limit(text: &str) -> bool {
    ["max_tokens", "max_completion_tokens", "max_new_tokens"]
        .iter()
        .any(|w| text.contains(w))
        && text.contains("too large")
}

/// Whether an error text refuses image input, in the words of the servers people use:
/// OpenAI ("Invalid content type. image_url is only supported by certain models"),
/// vLLM ("is not a multimodal model"), llama.cpp's llama-server ("image input is not
/// supported"), Ollama and LM Studio ("does not support images"), Mistral ("Image input
/// is not supported"), DeepSeek and other strict schemas ("unknown variant
/// `image_url`, expected `text`"), Groq ("content must be a string").
fn mentions_images(text: &str) -> bool {
    [
        "image",
        "vision",
        "multimodal",
        "multi-modal",
        "content type",
        "content must be a string",
        "expected `text`",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Whether an error text is a request-validation failure (pydantic, FastAPI) that some
/// servers (llama-cpp-python) send with a 500.
fn mentions_validation(text: &str) -> bool {
    [
        "validation error",
        "input should be",
        "field required",
        "value is not a valid",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// The kind of a non-success HTTP answer.
pub(crate) fn classify_http(status: u16, info: &ErrorInfo) -> ErrorKind {
    let text = haystack(info);
    match status {
        402 => ErrorKind::Quota,
        429 | 403 if mentions_quota(&text) => ErrorKind::Quota,
        // A rate limit is a rate limit, whatever tokens it mentions.
        429 => ErrorKind::RateLimit,
        400..=499 if text.contains("insufficient_quota") => ErrorKind::Quota,
        // Some servers (Ollama, proxies such as OpenRouter passing on an upstream 400)
        // send an overflow with a 5xx: it is still not fixed by trying again.
        400..=599 if mentions_context(&text) => ErrorKind::ContextTooLong,
        401 | 403 => ErrorKind::Auth,
        404 if text.contains("model") => ErrorKind::ModelNotFound,
        404 => ErrorKind::Protocol,
        408 => ErrorKind::Timeout,
        400..=499 => ErrorKind::BadRequest,
        500..=599 if mentions_validation(&text) => ErrorKind::BadRequest,
        500..=599 => ErrorKind::Server,
        _ => ErrorKind::Protocol,
    }
}

/// The kind of an error object found inside a stream.
pub(crate) fn classify_stream(info: &ErrorInfo) -> ErrorKind {
    if let Some(status) = info.status.filter(|s| (400..600).contains(s)) {
        return classify_http(status, info);
    }
    let text = haystack(info);
    if mentions_quota(&text) {
        ErrorKind::Quota
    } else if mentions_context(&text) {
        ErrorKind::ContextTooLong
    } else if text.contains("rate_limit") || text.contains("rate limit") {
        ErrorKind::RateLimit
    } else if text.contains("model_not_found") {
        ErrorKind::ModelNotFound
    } else if text.contains("invalid_api_key") || text.contains("authentication") {
        ErrorKind::Auth
    } else if text.contains("invalid_request") {
        ErrorKind::BadRequest
    } else {
        ErrorKind::Server
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        Site {
            provider: "openai".into(),
            endpoint: "https://api.example.com/v1/chat/completions".into(),
            base_url: "https://api.example.com/v1".into(),
            key_source: "OPENAI_API_KEY".into(),
            key_sent: true,
            secrets: crate::redact::Redactor::new()
                .with("sk-secret-123", "[api key]", 4)
                .with("org-header-value", "[header value]", 4),
        }
    }

    fn http(status: u16, body: &str) -> LlmError {
        LlmError::http(&site(), "gpt-x", status, body, None)
    }

    #[test]
    fn statuses_are_classified() {
        assert_eq!(http(401, "{}").kind(), ErrorKind::Auth);
        assert_eq!(http(403, "forbidden").kind(), ErrorKind::Auth);
        assert_eq!(
            http(404, r#"{"error":{"message":"The model `gpt-x` does not exist","code":"model_not_found"}}"#).kind(),
            ErrorKind::ModelNotFound
        );
        assert_eq!(http(404, "Not Found").kind(), ErrorKind::Protocol);
        assert_eq!(
            http(400, r#"{"error":{"message":"bad"}}"#).kind(),
            ErrorKind::BadRequest
        );
        assert_eq!(http(422, "unprocessable").kind(), ErrorKind::BadRequest);
        assert_eq!(
            http(400, r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#).kind(),
            ErrorKind::ContextTooLong
        );
        assert_eq!(http(429, "slow down").kind(), ErrorKind::RateLimit);
        assert_eq!(
            http(429, r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#).kind(),
            ErrorKind::Quota
        );
        assert_eq!(http(402, "pay up").kind(), ErrorKind::Quota);
        assert_eq!(http(503, "overloaded").kind(), ErrorKind::Server);
    }

    /// Context overflows as real servers word them (bodies written for this test after
    /// the servers' documented and reported messages), and near-misses that are not.
    #[test]
    fn context_overflows_of_real_servers_are_context_too_long() {
        let overflows: &[(&str, u16, &str)] = &[
            (
                "OpenAI",
                400,
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            ),
            (
                "OpenAI (newer wording)",
                400,
                r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
            ),
            (
                "Azure OpenAI",
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9021 tokens (8021 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            ),
            (
                "llama.cpp llama-server",
                400,
                r#"{"error":{"code":400,"message":"request (2332 tokens) exceeds the available context size (2048 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":2332,"n_ctx":2048}}"#,
            ),
            (
                "llama-cpp-python",
                400,
                r#"{"error":{"message":"Requested tokens (2285) exceed context window of 2048","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            ),
            (
                "llama-cpp-python (message only)",
                500,
                r#"{"detail":"Requested tokens (4100) exceed context window of 4096"}"#,
            ),
            (
                "vLLM",
                400,
                r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
            ),
            (
                "vLLM (V1 engine)",
                400,
                r#"{"object":"error","message":"The decoder prompt (length 5016) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.","type":"BadRequestError","param":null,"code":400}"#,
            ),
            (
                "Ollama",
                500,
                r#"{"error":"the input length exceeds the context length"}"#,
            ),
            (
                "Ollama (OpenAI endpoint)",
                400,
                r#"{"error":{"message":"the input length exceeds the context length","type":"invalid_request_error","param":null,"code":null}}"#,
            ),
            (
                "LM Studio",
                400,
                r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input"}"#,
            ),
            (
                "LM Studio (n_keep)",
                400,
                r#"{"error":{"message":"Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"}}"#,
            ),
            (
                "OpenRouter",
                400,
                r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140212 tokens (140212 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#,
            ),
            (
                "OpenRouter passing on an upstream overflow",
                502,
                r#"{"error":{"message":"ConnectionError: This model's maximum context length is 16000 tokens. However, you requested 17165 tokens.","code":502,"metadata":{"provider_name":"DeepInfra"}}}"#,
            ),
            (
                "DeepSeek",
                400,
                r#"{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
            ),
            (
                "Anthropic-compatible",
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210344 tokens > 200000 maximum"}}"#,
            ),
        ];
        for (server, status, body) in overflows {
            let e = http(*status, body);
            assert_eq!(e.kind(), ErrorKind::ContextTooLong, "{server}: {e}");
            assert!(!e.is_retryable(), "{server}");
            let s = e.to_string();
            assert!(!s.contains("stream_options"), "{server}: {s}");
            assert!(s.contains("/compact"), "{server}: {s}");
        }

        let near_misses: &[(&str, u16, &str, ErrorKind)] = &[
            (
                "OpenAI tokens-per-minute limit",
                429,
                r#"{"error":{"message":"Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
                ErrorKind::RateLimit,
            ),
            (
                "Azure token rate limit",
                429,
                r#"{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded token rate limit of your current pricing tier. Please retry after 6 seconds."}}"#,
                ErrorKind::RateLimit,
            ),
            (
                "Groq tokens-per-minute limit",
                413,
                r#"{"error":{"message":"Request too large for model `llama-3.3-70b` on tokens per minute (TPM): Limit 6000, Requested 7012, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}"#,
                ErrorKind::BadRequest,
            ),
            (
                "OpenAI max_tokens too large",
                400,
                r#"{"error":{"message":"max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whichever is lower.","type":"invalid_request_error","param":"max_tokens","code":"invalid_value"}}"#,
                ErrorKind::BadRequest,
            ),
            (
                "vLLM max_tokens too large",
                400,
                r#"{"object":"error","message":"'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's maximum context length is 8192 tokens and your request has 1210 input tokens (8192 > 8192 - 1210).","type":"BadRequestError","code":400}"#,
                ErrorKind::BadRequest,
            ),
        ];
        for (what, status, body, kind) in near_misses {
            assert_eq!(http(*status, body).kind(), *kind, "{what}");
        }
    }

    #[test]
    fn a_validation_error_in_a_5xx_is_a_bad_request_retried_once() {
        let body = r#"{"detail":[{"type":"string_type","loc":["body","messages",2,"content"],"msg":"Input should be a valid string","input":null}]}"#;
        let e = http(500, body);
        assert_eq!(e.kind(), ErrorKind::BadRequest);
        assert!(e.is_retryable());
        assert_eq!(e.retry_budget(), RetryBudget::Once);
        let s = e.to_string();
        assert!(!s.contains("having trouble"), "{s}");
        assert!(s.contains("validation error"), "{s}");
        for body in [
            "1 validation error for ChatCompletionRequest\nmessages.2.content\n  Input should be a valid string",
            r#"{"error":{"message":"messages -> 0 -> role: field required"}}"#,
        ] {
            assert_eq!(http(500, body).kind(), ErrorKind::BadRequest, "{body}");
        }
        // A plain 500 stays a provider failure; a 4xx validation error is not retried.
        assert_eq!(http(500, "Internal Server Error").kind(), ErrorKind::Server);
        assert!(!http(422, body).is_retryable());
    }

    #[test]
    fn only_transient_kinds_are_retryable() {
        assert!(http(500, "").is_retryable());
        assert!(http(429, "").is_retryable());
        assert!(!http(401, "").is_retryable());
        assert!(!http(429, "quota").is_retryable());
        assert!(LlmError::cut(&site(), "m").is_retryable());
    }

    #[test]
    fn in_stream_errors_are_classified() {
        let e = LlmError::in_stream(
            &site(),
            "m",
            &serde_json::json!({"message": "Overloaded", "type": "overloaded_error"}),
        );
        assert_eq!(e.kind(), ErrorKind::Server);
        let e = LlmError::in_stream(
            &site(),
            "m",
            &serde_json::json!({"message": "x", "code": 429}),
        );
        assert_eq!((e.kind(), e.status()), (ErrorKind::RateLimit, Some(429)));
        let e = LlmError::in_stream(&site(), "m", &serde_json::json!("context_length_exceeded"));
        assert_eq!(e.kind(), ErrorKind::ContextTooLong);
    }

    #[test]
    fn display_says_what_where_status_and_what_to_do_without_the_key() {
        let e = http(
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-secret-123"}}"#,
        )
        .with_attempts(1);
        let s = e.to_string();
        assert!(s.contains("the API key was refused"), "{s}");
        assert!(
            s.contains("https://api.example.com/v1/chat/completions"),
            "{s}"
        );
        assert!(s.contains("HTTP 401"), "{s}");
        assert!(s.contains("Check OPENAI_API_KEY"), "{s}");
        assert!(!s.contains("sk-secret-123"), "{s}");

        // A server that reflects what it was sent: the Authorization header, a custom
        // header, whitespace changed on the way.
        let s = http(
            400,
            r#"{"error":{"message":"bad request; headers: authorization=Bearer sk-secret-123\n x-org=org-header-value"}}"#,
        )
        .to_string();
        assert!(!s.contains("sk-secret-123"), "{s}");
        assert!(!s.contains("org-header-value"), "{s}");
        assert!(s.contains("Bearer [api key]"), "{s}");
        assert!(s.contains("x-org=[header value]"), "{s}");

        let s = http(404, r#"{"error":{"message":"model not found"}}"#).to_string();
        assert!(s.contains("--model or HARNESS9_MODEL"), "{s}");
        let s = LlmError::network(&site(), "m", "Connection refused")
            .with_attempts(5)
            .to_string();
        assert!(s.contains("after 5 attempts"), "{s}");
        assert!(
            s.contains("Is the server running at https://api.example.com/v1?"),
            "{s}"
        );
    }

    #[test]
    fn waits_read_like_a_person_would_say_them() {
        let w = |secs| human_wait(Duration::from_secs(secs));
        assert_eq!(human_wait(Duration::from_millis(800)), "800 ms");
        assert_eq!(human_wait(Duration::from_millis(1500)), "2 s");
        assert_eq!(w(60), "60 s");
        assert_eq!(w(150), "2 min 30 s");
        assert_eq!(w(600), "10 min");
        assert_eq!(w(5400), "1 h 30 min");
        assert_eq!(w(86_400), "24 h");
        assert_eq!(w(3 * 86_400 + 4 * 3600 + 59), "3 days 4 h");
    }

    #[test]
    fn a_retry_after_is_said_in_the_error_instead_of_a_guess() {
        let ra = |status, secs| {
            LlmError::http(
                &site(),
                "m",
                status,
                "slow down",
                Some(Duration::from_secs(secs)),
            )
        };
        let s = ra(429, 86_400)
            .with_wait_refused(Duration::from_secs(60))
            .to_string();
        for part in [
            "The provider asks to wait 24 h before the next request",
            "longer than the 60 s harness9 waits by itself",
        ] {
            assert!(s.contains(part), "{s}");
        }
        assert!(!s.contains("Wait a minute"), "{s}");

        let s = ra(503, 30).with_attempts(5).to_string();
        assert!(
            s.contains("asks to wait 30 s before the next request."),
            "{s}"
        );
        assert!(!s.contains("harness9 waits"), "{s}");

        // Without a Retry-After, the usual advice.
        assert!(http(429, "slow down").to_string().contains("Wait a minute"));
        // A quota error is not helped by waiting, whatever the header says.
        let s = LlmError::http(
            &site(),
            "m",
            429,
            r#"{"error":{"message":"quota","type":"insufficient_quota"}}"#,
            Some(Duration::from_secs(10)),
        )
        .to_string();
        assert!(s.contains("Add credit"), "{s}");
    }

    #[test]
    fn long_bodies_are_shortened() {
        let body = "x".repeat(10_000);
        assert!(http(502, &body).provider_message().chars().count() <= MAX_MESSAGE_CHARS + 1);
    }
}
