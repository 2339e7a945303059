//! The model client: everything that knows HTTP, Server-Sent Events and the wire names of
//! the OpenAI-compatible Chat Completions API (`wire.rs`) and of OpenAI's Responses API
//! (`responses/`, chosen per request by `wire_kind.rs`) lives under this module, and
//! nothing outside it does. Callers hand it provider-neutral [`Message`]s and [`ToolSpec`]s and get back a
//! [`Completion`] plus [`StreamEvent`]s as the answer streams in.
//!
//! Provider differences are data ([`ProviderConfig`]), not copies of the client. This
//! module must not know about tools' behaviour, skills, the agent loop or terminals.

mod answer;
pub mod cache;
mod chat_answer;
pub mod client;
pub mod echo;
pub mod effort;
pub mod error;
pub mod models;
pub mod reasoning;
pub mod responses;
pub mod retry;
pub mod sse;
pub mod window;
pub mod wire;
pub mod wire_kind;

use std::time::Duration;

pub use client::Client;
pub use echo::{Echo, EchoMemory, ReasoningEcho};
pub use error::{LlmError, PartialAnswer};
pub use reasoning::{Reasoning, ReasoningField};
pub use wire_kind::{Wire, WireSetting};

use crate::images::{ImageData, ImageRef};
use crate::protocol::{Effort, SharedText, Usage};

/// One message of a conversation, independent of any wire format. Its serde form is the
/// one saved in session files (docs/SESSIONS.md), not what goes over the wire.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The system prompt.
    System {
        /// Prompt text.
        content: String,
    },
    /// What the user said (or an expanded skill invocation).
    User {
        /// Message text.
        content: String,
        /// Images sent with it, by reference: their bytes are in the session's
        /// [`crate::images::ImageStore`] and read back for each request.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageRef>,
    },
    /// What the model said, with the tools it asked for.
    Assistant {
        /// Visible answer text (may be empty), shared with the turn's final text and the
        /// event that shows it rather than copied.
        content: SharedText,
        /// Reasoning the provider returned, kept so it can be sent back when the
        /// provider requires it ([`echo::decide`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<Reasoning>,
        /// Tool calls in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: String,
        /// The output the model sees.
        content: String,
    },
}

impl Message {
    /// A user message of text alone.
    pub fn user(content: impl Into<String>) -> Message {
        Message::User {
            content: content.into(),
            images: Vec::new(),
        }
    }

    /// The images a message refers to (only a user message has any).
    pub fn images(&self) -> &[ImageRef] {
        match self {
            Message::User { images, .. } => images,
            Message::System { .. } | Message::Assistant { .. } | Message::Tool { .. } => &[],
        }
    }
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call (generated when the provider sent none).
    pub id: String,
    /// Tool name as the model wrote it.
    pub name: String,
    /// The JSON arguments as text, exactly as streamed (`{}` when the model sent none).
    pub arguments: String,
}

/// A tool as the model sees it: name, description and JSON-schema parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// One request: what to send, provider-neutral.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// Model id.
    pub model: &'a str,
    /// The whole conversation, system prompt first.
    pub messages: &'a [Message],
    /// Tools offered to the model (may be empty).
    pub tools: &'a [ToolSpec],
    /// The reasoning effort to ask for (`None`: no effort field is sent).
    pub effort: Option<Effort>,
    /// The session's id, sent as `prompt_cache_key` where the provider caches by key
    /// ([`cache::CacheRoute::CacheKey`]).
    pub cache_key: Option<&'a str>,
    /// The bytes of the images `messages` refer to, read back for this request
    /// ([`crate::images::NO_IMAGES`] when there are none).
    pub images: &'a ImageData,
    /// `--output-schema`'s schema, for the main conversation's requests: sent as the
    /// provider's structured output when [`ProviderConfig::structured_output`] says so.
    pub output_schema: Option<&'a serde_json::Value>,
}

/// `structured_output` in config.toml: whether a request held to `--output-schema`
/// asks the server for JSON of that schema (harness9 checks the answer either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StructuredOutput {
    /// Nothing is asked of the server (the default: not every server takes it).
    #[default]
    Off,
    /// Chat Completions' `response_format` `json_schema`, the Responses API's
    /// `text.format` `json_schema`.
    JsonSchema,
}

impl StructuredOutput {
    /// The schema to ask the server for, if any.
    pub fn asked(self, schema: Option<&serde_json::Value>) -> Option<&serde_json::Value> {
        match self {
            StructuredOutput::Off => None,
            StructuredOutput::JsonSchema => schema,
        }
    }
}

/// What streams out of a request while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Answer text.
    Text(String),
    /// Reasoning text (`reasoning_content` or `reasoning` deltas).
    Reasoning(String),
    /// The attempt failed and will be retried after `delay`: drop what streamed so far.
    Retrying {
        /// The attempt about to be made (2 for the first retry).
        attempt: u32,
        /// Wait before it.
        delay: Duration,
        /// What went wrong, for people.
        reason: String,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// A natural end of the answer.
    Stop,
    /// The model wants tools run.
    ToolCalls,
    /// The output token limit was hit.
    Length,
    /// The provider filtered the answer.
    ContentFilter,
    /// Any other value the provider sent, kept as is.
    Other(String),
}

/// A finished model response.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completion {
    /// The whole answer text.
    pub text: String,
    /// The whole reasoning, when any was streamed.
    pub reasoning: Option<Reasoning>,
    /// Tool calls in index order, arguments complete.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped, when the provider said.
    pub finish_reason: Option<FinishReason>,
    /// Usage as the provider reported it, or `None` when it sent none.
    pub usage: Option<Usage>,
}

/// How the response is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamMode {
    /// `stream: true` and Server-Sent Events (the default).
    #[default]
    Sse,
    /// `stream: false` and one JSON body, for servers that cannot stream.
    NonStreaming,
}

/// Whether `stream_options.include_usage` is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageReporting {
    /// Ask the server for a final usage chunk (the default).
    #[default]
    Request,
    /// Do not send `stream_options` (servers that reject it).
    Omit,
}

/// Whether and how `tool_choice` is sent when a request offers tools.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// `"tool_choice": "auto"` (the default): some servers (llama-cpp-python's
    /// function-calling formats) treat a missing `tool_choice` as "none".
    #[default]
    Auto,
    /// Do not send `tool_choice` (servers that reject it).
    Omit,
    /// `"tool_choice": "required"`: the model must call a tool.
    Required,
    /// `{"type": "function", "function": {"name": …}}`: the model must call this tool
    /// (the only way to force a call on llama-cpp-python's function-calling formats,
    /// which refuse `"required"`).
    Function {
        /// The tool's name.
        name: String,
    },
}

impl ToolChoice {
    /// The wire value, or `None` when the field is not sent.
    pub fn wire_value(&self) -> Option<serde_json::Value> {
        match self {
            ToolChoice::Auto => Some("auto".into()),
            ToolChoice::Omit => None,
            ToolChoice::Required => Some("required".into()),
            ToolChoice::Function { name } => Some(serde_json::json!({
                "type": "function",
                "function": {"name": name},
            })),
        }
    }
}

/// Retry schedule for transient failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = no retries).
    pub max_retries: u32,
    /// Delay before the first retry; doubles each time, with jitter.
    pub base_delay: Duration,
    /// Upper bound for one computed delay.
    pub max_delay: Duration,
    /// Upper bound for a server's Retry-After; longer waits are not honoured and the
    /// error is returned instead, saying how long the server asked for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// Everything that differs between providers, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// A name for messages ("openai", "ollama", or the host).
    pub name: String,
    /// Base URL up to and including the API version, e.g. `https://api.openai.com/v1`;
    /// requests go to `{base_url}/chat/completions` (or `{base_url}/responses`, [`Wire`]).
    pub base_url: String,
    /// Bearer token, if any.
    pub api_key: Option<String>,
    /// Where the key came from, for error messages ("OPENAI_API_KEY").
    pub api_key_source: String,
    /// Extra headers sent with every request.
    pub extra_headers: Vec<(String, String)>,
    /// Whether to ask for usage in the stream.
    pub usage_reporting: UsageReporting,
    /// Streaming or not.
    pub stream_mode: StreamMode,
    /// Whether reasoning goes back in later requests (`send_reasoning`; decided per
    /// model when unset, [`echo::decide`]).
    pub reasoning_echo: ReasoningEcho,
    /// Where what providers taught about echoing reasoning is remembered
    /// (`$HARNESS9_HOME/cache/reasoning_echo.json`); `None` remembers nothing.
    pub reasoning_memory: Option<std::path::PathBuf>,
    /// Retry schedule.
    pub retry: RetryPolicy,
    /// Fail an attempt when nothing arrives for this long: before the first data event
    /// any bytes count (keep-alive comments included), after it only data does.
    pub idle_timeout: Duration,
    /// Fail an attempt when the connection is not made within this long.
    pub connect_timeout: Duration,
    /// The header the API key goes in (`auth_header` in config.toml).
    pub auth_header: AuthHeader,
    /// Top-level keys merged into every chat request body (`extra_body` in config.toml).
    /// Keys the request itself sets ([`wire::OWNED_BODY_KEYS`]) are never taken from here.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Sent as `max_tokens` when set (`max_output_tokens` in config.toml).
    pub max_output_tokens: Option<u32>,
    /// Whether `tool_choice` is sent with tools (default [`ToolChoice::Auto`]).
    pub tool_choice: ToolChoice,
    /// Fail an attempt that takes longer than this in all, however steadily it streams
    /// (default 10 minutes).
    pub attempt_timeout: Duration,
    /// Stop retrying, and fail, when all attempts of one request together would take
    /// longer than this (default 15 minutes).
    pub total_timeout: Duration,
    /// The wire protocol (`wire` in config.toml; chosen per model when unset).
    pub wire: WireSetting,
    /// The reasoning effort a session starts with (`reasoning_effort` in config.toml;
    /// `None`: no effort field is sent until `/effort` sets one).
    pub reasoning_effort: Option<Effort>,
    /// Which body field carries the effort (`effort_dialect` in config.toml).
    pub effort_dialect: effort::DialectChoice,
    /// Which requests carry prompt-cache markers (`prompt_cache` in config.toml).
    pub prompt_cache: cache::PromptCache,
    /// Whether the model takes images (`images` in config.toml).
    pub images: ImageSupport,
    /// Whether `--output-schema` is asked of the server (`structured_output`).
    pub structured_output: StructuredOutput,
}

/// Whether a provider's model takes images (`images` in config.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImageSupport {
    /// Unset: images are sent, and a refusal is its own error
    /// ([`crate::protocol::ErrorKind::ImagesRefused`]).
    #[default]
    Try,
    /// `images = true`.
    Yes,
    /// `images = false`: nothing is attached, and `view_image` is not offered.
    No,
}

impl ImageSupport {
    /// Whether images may be sent.
    pub fn sends_images(self) -> bool {
        self != ImageSupport::No
    }
}

/// Which header carries the API key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AuthHeader {
    /// `Authorization: Bearer <key>` (the default).
    #[default]
    Bearer,
    /// `<name>: <key>`, the raw key in a header of its own (Azure OpenAI's `api-key`).
    Named {
        /// The header name, already checked to be a valid one.
        name: String,
    },
}

impl ProviderConfig {
    /// A provider at `base_url` with default settings and no key.
    pub fn new(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        ProviderConfig {
            name: name.into(),
            base_url: base_url.into(),
            api_key: None,
            api_key_source: "OPENAI_API_KEY".to_string(),
            extra_headers: Vec::new(),
            usage_reporting: UsageReporting::default(),
            stream_mode: StreamMode::default(),
            reasoning_echo: ReasoningEcho::default(),
            reasoning_memory: None,
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(15),
            auth_header: AuthHeader::default(),
            extra_body: serde_json::Map::new(),
            max_output_tokens: None,
            tool_choice: ToolChoice::default(),
            attempt_timeout: Duration::from_secs(10 * 60),
            total_timeout: Duration::from_secs(15 * 60),
            wire: WireSetting::default(),
            reasoning_effort: None,
            effort_dialect: effort::DialectChoice::default(),
            prompt_cache: cache::PromptCache::default(),
            images: ImageSupport::default(),
            structured_output: StructuredOutput::default(),
        }
    }
}
