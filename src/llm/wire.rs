//! The Chat Completions wire format: the request body we send and the lenient shapes we
//! accept back (streamed chunks and the non-streaming body), plus the accumulator that
//! merges streamed tool-call pieces into whole calls. Only this file knows the JSON field
//! names. Every response field is optional and unknown values are kept, because
//! "OpenAI-compatible" servers differ in the details. It must not know about HTTP,
//! retries or how events are shown.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::cache::{CacheRoute, breakpoints};
use super::{
    ChatRequest, Echo, FinishReason, Message, ProviderConfig, Reasoning, ReasoningField,
    StreamMode, ToolCall, UsageReporting,
};
use crate::images::ImageData;
use crate::protocol::Usage;

// ---------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------

/// The request body, borrowing from the caller's conversation.
#[derive(Debug, Serialize)]
pub struct RequestBody<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    /// Sent only with tools, as [`ToolChoice`] says.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<serde_json::Value>,
    /// `--output-schema` asked of the server (`structured_output = "json-schema"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<serde_json::Value>,
    /// `max_tokens` and the configured `extra_body` keys (see [`ProviderExtras`]).
    #[serde(flatten)]
    provider_extras: ProviderExtras<'a>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    /// A string, `""` for an assistant message with only tool calls: some servers
    /// (llama-cpp-python) answer 500 to `null` and fail when the field is missing. A
    /// prompt-cache breakpoint makes it one text part carrying the marker.
    content: WireContent<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<&'a str>,
    /// OpenRouter's structured reasoning, sent back exactly as it was received.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_details: Option<&'a [Value]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

/// A message's text as sent: a plain string, or, where a prompt-cache breakpoint goes
/// ([`CacheRoute::Breakpoints`]), one text part with `cache_control`.
#[derive(Debug)]
enum WireContent<'a> {
    /// `"content": "…"`.
    Plain(&'a str),
    /// `"content": [{"type": "text", "text": "…", "cache_control": {"type": "ephemeral"}}]`.
    Breakpoint(&'a str),
    /// A user message with images: its text part (with the breakpoint when `cached`),
    /// then one `{"type": "image_url", "image_url": {"url": "data:…"}}` part each.
    WithImages {
        text: &'a str,
        cached: bool,
        images: Vec<WireImage<'a>>,
    },
}

/// One image of a message as sent.
#[derive(Debug)]
enum WireImage<'a> {
    /// Its data URL.
    Url(&'a str),
    /// It could not be read back: a text part says so, naming it.
    Missing(&'a str),
}

impl<'a> WireImage<'a> {
    /// The images of `message` with what `data` read back for them.
    fn of(message: &'a Message, data: &'a ImageData) -> Vec<WireImage<'a>> {
        message
            .images()
            .iter()
            .map(|image| match data.url(image) {
                Some(url) => WireImage::Url(url),
                None => WireImage::Missing(&image.name),
            })
            .collect()
    }
}

/// The words sent in place of an image that could not be read back.
pub(crate) fn missing_image_text(name: &str) -> String {
    format!(
        "[image {name}: it could not be read back from the session's store, so it is not shown]"
    )
}

impl Serialize for WireContent<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeStruct};
        #[derive(Serialize)]
        struct Ephemeral {
            #[serde(rename = "type")]
            kind: &'static str,
        }
        struct Part<'a>(&'a str, bool);
        impl Serialize for Part<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut part = serializer.serialize_struct("Part", 3)?;
                part.serialize_field("type", "text")?;
                part.serialize_field("text", self.0)?;
                if self.1 {
                    part.serialize_field("cache_control", &Ephemeral { kind: "ephemeral" })?;
                }
                part.end()
            }
        }
        #[derive(Serialize)]
        struct Url<'a> {
            url: &'a str,
        }
        struct ImagePart<'a>(&'a str);
        impl Serialize for ImagePart<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut part = serializer.serialize_struct("ImagePart", 2)?;
                part.serialize_field("type", "image_url")?;
                part.serialize_field("image_url", &Url { url: self.0 })?;
                part.end()
            }
        }
        match self {
            WireContent::Plain(text) => serializer.serialize_str(text),
            WireContent::Breakpoint(text) => {
                let mut parts = serializer.serialize_seq(Some(1))?;
                parts.serialize_element(&Part(text, true))?;
                parts.end()
            }
            WireContent::WithImages {
                text,
                cached,
                images,
            } => {
                let mut parts = serializer.serialize_seq(Some(1 + images.len()))?;
                parts.serialize_element(&Part(text, *cached))?;
                for image in images {
                    match image {
                        WireImage::Url(url) => parts.serialize_element(&ImagePart(url))?,
                        WireImage::Missing(name) => {
                            parts.serialize_element(&Part(&missing_image_text(name), false))?;
                        }
                    }
                }
                parts.end()
            }
        }
    }
}

#[derive(Debug, Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

impl<'a> RequestBody<'a> {
    /// The body for `req` as `config` wants it sent, with earlier reasoning echoed or not.
    pub fn new(req: &ChatRequest<'a>, config: &'a ProviderConfig, echo: Echo) -> Self {
        let stream = config.stream_mode == StreamMode::Sse;
        let stream_options = (stream && config.usage_reporting == UsageReporting::Request)
            .then_some(StreamOptions {
                include_usage: true,
            });
        let route = config.prompt_cache.route(&config.base_url, req.model);
        let marked = match route {
            CacheRoute::Breakpoints => breakpoints(req.messages),
            CacheRoute::CacheKey | CacheRoute::Nothing => Vec::new(),
        };
        RequestBody {
            model: req.model,
            messages: req
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let cached = marked.contains(&i);
                    let content = if cached {
                        WireContent::Breakpoint
                    } else {
                        WireContent::Plain
                    };
                    // Reasoning goes back only to the provider it came from.
                    let echo = match m {
                        Message::Assistant {
                            reasoning: Some(r), ..
                        } if !r.goes_back_to(&config.base_url) => Echo::Omit,
                        _ => echo,
                    };
                    let mut message = WireMessage::new(m, echo, content);
                    if let Message::User { content, images } = m
                        && !images.is_empty()
                    {
                        message.content = WireContent::WithImages {
                            text: content,
                            cached,
                            images: WireImage::of(m, req.images),
                        };
                    }
                    message
                })
                .collect(),
            tools: req
                .tools
                .iter()
                .map(|t| WireTool {
                    kind: "function",
                    function: WireFunction {
                        name: &t.name,
                        description: &t.description,
                        parameters: &t.parameters,
                    },
                })
                .collect(),
            stream,
            stream_options,
            tool_choice: if req.tools.is_empty() {
                None
            } else {
                config.tool_choice.wire_value()
            },
            response_format: config
                .structured_output
                .asked(req.output_schema)
                .map(|schema| {
                    serde_json::json!({
                        "type": "json_schema",
                        "json_schema": {"name": "output", "schema": schema},
                    })
                }),
            provider_extras: ProviderExtras::new(config, req, route),
        }
    }

    /// The body as JSON bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(self)
    }
}

impl<'a> WireMessage<'a> {
    fn new(message: &'a Message, echo: Echo, wrap: fn(&'a str) -> WireContent<'a>) -> Self {
        let plain = |role, content: &'a str| WireMessage {
            role,
            content: wrap(content),
            reasoning_content: None,
            reasoning: None,
            reasoning_details: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        };
        match message {
            Message::System { content } => plain("system", content),
            Message::User { content, .. } => plain("user", content),
            Message::Tool {
                tool_call_id,
                content,
            } => WireMessage {
                tool_call_id: Some(tool_call_id),
                ..plain("tool", content)
            },
            Message::Assistant {
                content,
                reasoning,
                tool_calls,
            } => WireMessage {
                tool_calls: tool_calls
                    .iter()
                    .map(|c| WireToolCall {
                        id: &c.id,
                        kind: "function",
                        function: WireFunctionCall {
                            name: &c.name,
                            arguments: &c.arguments,
                        },
                    })
                    .collect(),
                ..echoed(plain("assistant", content), reasoning.as_ref(), echo)
            },
        }
    }
}

/// `message` with `reasoning` on it when it is echoed: OpenRouter's `reasoning_details`
/// verbatim when there are any, else the text in the field it arrived in.
fn echoed<'a>(
    message: WireMessage<'a>,
    reasoning: Option<&'a Reasoning>,
    echo: Echo,
) -> WireMessage<'a> {
    let Some(reasoning) =
        reasoning.filter(|r| echo != Echo::Omit && r.field != ReasoningField::ResponsesItems)
    else {
        return message;
    };
    if !reasoning.details.is_empty() {
        return WireMessage {
            reasoning_details: Some(&reasoning.details),
            ..message
        };
    }
    if echo == Echo::DetailsOnly {
        return message;
    }
    let text = Some(reasoning.text.as_str()).filter(|t| !t.is_empty());
    match reasoning.field {
        ReasoningField::ReasoningContent => WireMessage {
            reasoning_content: text,
            ..message
        },
        ReasoningField::Reasoning => WireMessage {
            reasoning: text,
            ..message
        },
        ReasoningField::ResponsesItems => message,
    }
}

// ---------------------------------------------------------------------------------------
// Request: provider settings (max_output_tokens, extra_body)
// ---------------------------------------------------------------------------------------

/// Top-level body keys harness9 sets itself; `extra_body` may not set them (config.toml
/// rejects them, and they are skipped here as well so a body never has a key twice).
pub const OWNED_BODY_KEYS: &[&str] = &[
    "model",
    "messages",
    "tools",
    "tool_choice",
    "stream",
    "stream_options",
];

/// The body keys that come from provider settings rather than from the conversation:
/// `max_tokens` when `max_output_tokens` is set, the reasoning effort's fields in its
/// dialect ([`super::effort`]), then every `extra_body` key that is not one of
/// [`OWNED_BODY_KEYS`] (an `extra_body` `max_tokens` is skipped when `max_output_tokens`
/// is set; config.toml rejects having both). Where `extra_body` has an object under an
/// effort's key (`chat_template_kwargs`, `reasoning`), the two objects are merged, the
/// effort's entries winning; any other value under that key gives way to the effort.
#[derive(Debug)]
struct ProviderExtras<'a> {
    max_tokens: Option<u32>,
    /// `prompt_cache_key`, on [`CacheRoute::CacheKey`] routes.
    cache_key: Option<&'a str>,
    effort: Vec<(&'static str, Value)>,
    extra_body: &'a serde_json::Map<String, Value>,
}

impl<'a> ProviderExtras<'a> {
    fn new(config: &'a ProviderConfig, req: &ChatRequest<'a>, route: CacheRoute) -> Self {
        let effort = req.effort.map_or_else(Vec::new, |effort| {
            config
                .effort_dialect
                .dialect(&config.base_url, req.model)
                .fields(effort, req.model)
        });
        ProviderExtras {
            max_tokens: config.max_output_tokens,
            cache_key: match route {
                CacheRoute::CacheKey => req.cache_key,
                CacheRoute::Breakpoints | CacheRoute::Nothing => None,
            },
            effort,
            extra_body: &config.extra_body,
        }
    }

    fn takes(&self, key: &str) -> bool {
        let owned = OWNED_BODY_KEYS.contains(&key);
        let set_by_max_output_tokens = key == "max_tokens" && self.max_tokens.is_some();
        let set_by_effort = self.effort.iter().any(|(k, _)| *k == key);
        let set_by_cache = key == "prompt_cache_key" && self.cache_key.is_some();
        !owned && !set_by_max_output_tokens && !set_by_effort && !set_by_cache
    }
}

impl Serialize for ProviderExtras<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        if let Some(n) = self.max_tokens {
            map.serialize_entry("max_tokens", &n)?;
        }
        if let Some(key) = self.cache_key {
            map.serialize_entry("prompt_cache_key", key)?;
        }
        for (key, value) in &self.effort {
            match (self.extra_body.get(*key), value) {
                (Some(Value::Object(configured)), Value::Object(ours)) => {
                    let mut merged = configured.clone();
                    merged.extend(ours.iter().map(|(k, v)| (k.clone(), v.clone())));
                    map.serialize_entry(key, &merged)?;
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        for (key, value) in self.extra_body.iter().filter(|(k, _)| self.takes(k)) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

// ---------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------

/// One streamed chunk, or the whole non-streaming body: both have `choices`, `usage` and
/// possibly `error`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ChatChunk {
    /// The choices (we only ask for one).
    #[serde(deserialize_with = "null_as_default")]
    pub choices: Vec<Choice>,
    /// Token counts, usually in a last chunk with no choices.
    pub usage: Option<WireUsage>,
    /// llama.cpp's `timings`, which carry the server's own token counts even when no
    /// `usage` is sent.
    pub timings: Option<WireTimings>,
    /// An error the provider reported instead of (or in the middle of) an answer.
    pub error: Option<Value>,
}

impl ChatChunk {
    /// The server's token counts: `usage`, else llama.cpp's `timings`.
    pub fn reported_usage(&self) -> Option<Usage> {
        match (&self.usage, &self.timings) {
            (Some(usage), _) => Some(usage.to_usage()),
            (None, Some(timings)) => timings.to_usage(),
            (None, None) => None,
        }
    }
}

/// llama.cpp's `timings`: prompt tokens evaluated now (`prompt_n`), taken from its cache
/// (`cache_n`), and generated (`predicted_n`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct WireTimings {
    /// Prompt tokens evaluated for this request.
    #[serde(deserialize_with = "lenient_u64")]
    pub prompt_n: Option<u64>,
    /// Prompt tokens reused from the server's cache.
    #[serde(deserialize_with = "lenient_u64")]
    pub cache_n: Option<u64>,
    /// Tokens generated.
    #[serde(deserialize_with = "lenient_u64")]
    pub predicted_n: Option<u64>,
}

impl WireTimings {
    /// The counts as usage, when the prompt count is there.
    pub fn to_usage(&self) -> Option<Usage> {
        let evaluated = self.prompt_n?;
        let cached = self.cache_n.unwrap_or(0);
        Some(Usage {
            input_tokens: evaluated + cached,
            output_tokens: self.predicted_n.unwrap_or(0),
            cached_input_tokens: cached,
            cache_write_tokens: 0,
            estimated: false,
            cost: None,
        })
    }
}

/// One choice of a chunk.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Choice {
    /// Which choice this is (0 when absent).
    #[serde(deserialize_with = "lenient_u32")]
    pub index: Option<u32>,
    /// What this chunk adds (streaming).
    pub delta: Option<Delta>,
    /// The whole message (non-streaming).
    pub message: Option<Delta>,
    /// Why the model stopped, on the last chunk.
    #[serde(deserialize_with = "lenient_string")]
    pub finish_reason: Option<String>,
}

/// A message or a piece of one.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delta {
    /// Answer text.
    #[serde(deserialize_with = "lenient_string")]
    pub content: Option<String>,
    /// Reasoning text (DeepSeek, vLLM, ...).
    #[serde(deserialize_with = "lenient_string")]
    pub reasoning_content: Option<String>,
    /// Reasoning text (OpenRouter, Ollama, ...).
    #[serde(deserialize_with = "lenient_string")]
    pub reasoning: Option<String>,
    /// Tool-call pieces.
    #[serde(deserialize_with = "null_as_default")]
    pub tool_calls: Vec<ToolCallDelta>,
    /// OpenRouter's structured reasoning: whole items (a message) or pieces of them by
    /// `index` (a delta); kept as received.
    #[serde(deserialize_with = "array_or_nothing")]
    pub reasoning_details: Vec<Value>,
}

impl Delta {
    /// The reasoning text of this piece, from whichever field the provider uses.
    pub fn reasoning_text(&self) -> Option<&str> {
        self.reasoning_piece().map(|(text, _)| text)
    }

    /// The reasoning text of this piece with the field it came in.
    pub fn reasoning_piece(&self) -> Option<(&str, ReasoningField)> {
        [
            (&self.reasoning_content, ReasoningField::ReasoningContent),
            (&self.reasoning, ReasoningField::Reasoning),
        ]
        .into_iter()
        .find_map(|(text, field)| {
            text.as_deref()
                .filter(|s| !s.is_empty())
                .map(|text| (text, field))
        })
    }
}

/// A piece of one tool call.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct ToolCallDelta {
    /// Which call this piece belongs to.
    #[serde(deserialize_with = "lenient_u32")]
    pub index: Option<u32>,
    /// The call's id, usually on the first piece only.
    #[serde(deserialize_with = "lenient_string")]
    pub id: Option<String>,
    /// Name and arguments.
    pub function: Option<FunctionDelta>,
}

/// The function part of a tool-call piece.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct FunctionDelta {
    /// The tool name.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// A piece of the JSON arguments text (an object is accepted and re-serialized).
    #[serde(deserialize_with = "arguments_text")]
    pub arguments: Option<String>,
}

/// Usage as the wire carries it, in every shape servers use: the Chat API's
/// `prompt_tokens`/`completion_tokens`, the Responses API's and Anthropic's
/// `input_tokens`/`output_tokens`; cache reads as `prompt_tokens_details.cached_tokens`
/// (OpenAI, OpenRouter), `input_tokens_details.cached_tokens` (Responses),
/// `cache_read_input_tokens` (Anthropic, LiteLLM) or `prompt_cache_hit_tokens`
/// (DeepSeek); cache writes as `prompt_tokens_details.cache_write_tokens` (OpenRouter)
/// or `cache_creation_input_tokens` (Anthropic, LiteLLM).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct WireUsage {
    /// Prompt tokens (Chat API), cached and written ones included.
    #[serde(deserialize_with = "lenient_u64")]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens (Chat API).
    #[serde(deserialize_with = "lenient_u64")]
    pub completion_tokens: Option<u64>,
    /// Input tokens (Responses API: cached ones included; Anthropic: cache reads and
    /// writes not included).
    #[serde(deserialize_with = "lenient_u64")]
    pub input_tokens: Option<u64>,
    /// Output tokens (Responses API, Anthropic).
    #[serde(deserialize_with = "lenient_u64")]
    pub output_tokens: Option<u64>,
    /// OpenAI- and OpenRouter-style cache details.
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// Responses-style cache details.
    pub input_tokens_details: Option<PromptTokensDetails>,
    /// Anthropic-style cache reads.
    #[serde(deserialize_with = "lenient_u64")]
    pub cache_read_input_tokens: Option<u64>,
    /// Anthropic-style cache writes.
    #[serde(deserialize_with = "lenient_u64")]
    pub cache_creation_input_tokens: Option<u64>,
    /// DeepSeek-style cache hits.
    #[serde(deserialize_with = "lenient_u64")]
    pub prompt_cache_hit_tokens: Option<u64>,
    /// DeepSeek-style cache misses.
    #[serde(deserialize_with = "lenient_u64")]
    pub prompt_cache_miss_tokens: Option<u64>,
    /// What the request cost in US dollars, when the provider says (OpenRouter's
    /// `usage.cost`); kept as JSON so an odd value is ignored, not an error.
    pub cost: Option<serde_json::Value>,
}

/// `usage.prompt_tokens_details` (and the Responses API's `input_tokens_details`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct PromptTokensDetails {
    /// Prompt tokens served from the provider's cache.
    #[serde(deserialize_with = "lenient_u64")]
    pub cached_tokens: Option<u64>,
    /// Prompt tokens written to the provider's cache (OpenRouter).
    #[serde(deserialize_with = "lenient_u64")]
    pub cache_write_tokens: Option<u64>,
}

impl WireUsage {
    /// The provider-neutral usage (not an estimate): input counts every prompt token,
    /// read from and written to the cache included, whichever shape the server used.
    pub fn to_usage(&self) -> Usage {
        let details = |d: &Option<PromptTokensDetails>| d.clone().unwrap_or_default();
        let (chat, responses) = (
            details(&self.prompt_tokens_details),
            details(&self.input_tokens_details),
        );
        let cached = chat
            .cached_tokens
            .or(responses.cached_tokens)
            .or(self.cache_read_input_tokens)
            .or(self.prompt_cache_hit_tokens)
            .unwrap_or(0);
        let written = chat
            .cache_write_tokens
            .or(self.cache_creation_input_tokens)
            .unwrap_or(0);
        let input = match (self.prompt_tokens, self.input_tokens) {
            (Some(prompt), _) => prompt,
            // The Responses API counts cached tokens in `input_tokens`.
            (None, Some(input)) if self.input_tokens_details.is_some() => input,
            // Anthropic's `input_tokens` leaves out what was read from or written to
            // the cache.
            (None, Some(input)) => {
                input
                    + self.cache_read_input_tokens.unwrap_or(0)
                    + self.cache_creation_input_tokens.unwrap_or(0)
            }
            (None, None) => {
                self.prompt_cache_hit_tokens.unwrap_or(0)
                    + self.prompt_cache_miss_tokens.unwrap_or(0)
            }
        };
        Usage {
            input_tokens: input,
            output_tokens: self.completion_tokens.or(self.output_tokens).unwrap_or(0),
            cached_input_tokens: cached.min(input),
            cache_write_tokens: written.min(input.saturating_sub(cached.min(input))),
            estimated: false,
            cost: self.reported_cost(),
        }
    }

    /// `usage.cost` in micro-dollars, when it is a sane number of dollars (a price the
    /// user configured still wins: [`crate::cost::PriceTable::priced`]).
    fn reported_cost(&self) -> Option<crate::protocol::Cost> {
        let dollars = self.cost.as_ref()?.as_f64()?;
        let micros = dollars * 1_000_000.0;
        (micros.is_finite() && (0.0..1e15).contains(&micros))
            .then(|| crate::protocol::Cost::from_micros(micros.round() as u64))
    }
}

/// Reads a finish_reason; empty strings mean "not yet".
pub fn finish_reason(raw: &str) -> Option<FinishReason> {
    Some(match raw {
        "" => return None,
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    })
}

/// What an error object says, pulled out of the shapes providers use:
/// `{"error": {"message", "type", "code"}}`, `{"error": "text"}`, `{"message": ...}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The human message.
    pub message: String,
    /// `type` and `code` strings, for classification.
    pub codes: Vec<String>,
    /// A numeric `code` that looks like an HTTP status.
    pub status: Option<u16>,
}

impl ErrorInfo {
    /// Reads an `error` value (object or string).
    pub fn from_error_value(value: &Value) -> ErrorInfo {
        match value {
            Value::String(s) => ErrorInfo {
                message: s.clone(),
                ..ErrorInfo::default()
            },
            Value::Object(map) => {
                let mut info = ErrorInfo::default();
                for key in ["message", "detail", "msg"] {
                    if let Some(Value::String(s)) = map.get(key) {
                        info.message = s.clone();
                        break;
                    }
                }
                if info.message.is_empty() {
                    if let Some(inner) = map.get("error") {
                        return ErrorInfo::from_error_value(inner);
                    }
                    info.message = value.to_string();
                }
                for key in ["type", "code", "status"] {
                    match map.get(key) {
                        Some(Value::String(s)) => info.codes.push(s.clone()),
                        Some(Value::Number(n)) => {
                            info.status = n.as_u64().and_then(|n| u16::try_from(n).ok())
                        }
                        _ => {}
                    }
                }
                info
            }
            other => ErrorInfo {
                message: other.to_string(),
                ..ErrorInfo::default()
            },
        }
    }

    /// Reads an HTTP error body: JSON with an `error` (or a bare message), or text.
    pub fn from_body(body: &str) -> ErrorInfo {
        match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(map)) if map.contains_key("error") => {
                ErrorInfo::from_error_value(&map["error"])
            }
            Ok(v @ Value::Object(_)) => ErrorInfo::from_error_value(&v),
            _ => ErrorInfo {
                message: body.trim().to_string(),
                ..ErrorInfo::default()
            },
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tool-call accumulation
// ---------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<u32>,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Merges tool-call pieces into whole calls: by `index`, or by `id` when the index is
/// missing, or onto the latest call when both are missing.
#[derive(Debug, Default)]
pub struct ToolCallAccumulator {
    calls: Vec<PartialCall>,
}

impl ToolCallAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when no piece has arrived.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Adds one piece.
    pub fn push(&mut self, delta: &ToolCallDelta) {
        let slot = self.slot_for(delta);
        let call = &mut self.calls[slot];
        if call.id.is_none() {
            call.id = delta.id.clone().filter(|id| !id.is_empty());
        }
        if call.index.is_none() {
            call.index = delta.index;
        }
        if let Some(f) = &delta.function {
            if let Some(name) = f.name.as_deref().filter(|n| !n.is_empty()) {
                // Some servers repeat the whole name on every piece; others stream it.
                if call.name != name {
                    call.name.push_str(name);
                }
            }
            if let Some(args) = &f.arguments {
                call.arguments.push_str(args);
            }
        }
    }

    fn slot_for(&mut self, delta: &ToolCallDelta) -> usize {
        let id = delta.id.as_deref().filter(|id| !id.is_empty());
        let found = match (delta.index, id) {
            // Same index but another id: a server that numbers every call 0.
            (Some(index), Some(id)) => self.calls.iter().rposition(|c| {
                c.index == Some(index) && c.id.as_deref().is_none_or(|known| known == id)
            }),
            (Some(index), None) => self.calls.iter().rposition(|c| c.index == Some(index)),
            (None, Some(id)) => self.calls.iter().position(|c| c.id.as_deref() == Some(id)),
            (None, None) => self.calls.len().checked_sub(1),
        };
        found.unwrap_or_else(|| {
            self.calls.push(PartialCall::default());
            self.calls.len() - 1
        })
    }

    /// The whole calls in index order (arrival order where there is no index), with
    /// `{}` for empty arguments and `call_<n>` ids where the server sent none.
    pub fn finish(self) -> Vec<ToolCall> {
        let mut calls: Vec<PartialCall> = self
            .calls
            .into_iter()
            .filter(|c| !(c.name.is_empty() && c.arguments.trim().is_empty() && c.id.is_none()))
            .collect();
        if calls.iter().all(|c| c.index.is_some()) {
            calls.sort_by_key(|c| c.index);
        }
        calls
            .into_iter()
            .enumerate()
            .map(|(n, c)| ToolCall {
                id: c.id.unwrap_or_else(|| format!("call_{n}")),
                name: c.name,
                arguments: if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                },
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Lenient field readers
// ---------------------------------------------------------------------------------------

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Strings stay strings, numbers and booleans become their text, anything else is absent.
fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    })
}

/// Arguments as text: a string as is, an object or array serialized, null absent.
fn arguments_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

/// An array's items; anything else (null, an object) is nothing.
fn array_or_nothing<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items,
        _ => Vec::new(),
    })
}

fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

fn lenient_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Ok(lenient_u64(d)?.and_then(|n| u32::try_from(n).ok()))
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
