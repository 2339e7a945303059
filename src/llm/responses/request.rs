//! The Responses API request body: the system prompt as `instructions`, the conversation
//! as `input` items (messages, the encrypted reasoning items a turn produced, its
//! `function_call`s and their `function_call_output`s), flat function tools,
//! `store: false` with `include: ["reasoning.encrypted_content"]`, `stream`,
//! `max_output_tokens` and the configured `extra_body` keys it does not own. Borrowing
//! from the conversation, like the Chat wire's body. It must not know HTTP or how the
//! answer is read.

use serde::Serialize;
use serde_json::Value;

use crate::images::ImageData;
use crate::llm::cache::CacheRoute;
use crate::llm::{ChatRequest, Message, ProviderConfig, StreamMode, ToolCall, ToolChoice};
use crate::protocol::Effort;

/// Top-level keys this body sets itself; an `extra_body` key of the same name is skipped.
pub const OWNED_KEYS: &[&str] = &[
    "model",
    "instructions",
    "input",
    "tools",
    "tool_choice",
    "store",
    "stream",
    "include",
    "max_output_tokens",
];

/// What `include` asks for: the reasoning items' encrypted content, which is the only
/// way to hand reasoning back when nothing is stored on the server.
const INCLUDE: [&str; 1] = ["reasoning.encrypted_content"];

/// The request body.
#[derive(Debug, Serialize)]
pub struct RequestBody<'a> {
    model: &'a str,
    /// The session's system prompt. It is built once per session, so these bytes open
    /// every request of the session alike and the provider's prefix cache can hold them.
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<InputItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<FunctionTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    /// Nothing is kept on the server: every request carries the whole conversation.
    store: bool,
    stream: bool,
    include: [&'static str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    /// `--output-schema` asked of the server (`structured_output = "json-schema"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Value>,
    #[serde(flatten)]
    extras: Extras<'a>,
}

/// One input item.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum InputItem<'a> {
    Message {
        #[serde(rename = "type")]
        kind: &'static str,
        role: &'static str,
        content: &'a str,
    },
    /// A user message with images: `input_text` then one `input_image` each.
    MessageParts {
        #[serde(rename = "type")]
        kind: &'static str,
        role: &'static str,
        content: Vec<ContentPart<'a>>,
    },
    FunctionCall {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        output: &'a str,
    },
    /// A reasoning item exactly as the provider returned it.
    Verbatim(&'a Value),
}

/// One part of a message's content.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentPart<'a> {
    InputText { text: std::borrow::Cow<'a, str> },
    InputImage { image_url: &'a str },
}

/// A function tool, flat (`name` and `parameters` beside `type`).
#[derive(Debug, Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    /// The Responses API makes function tools strict unless told otherwise, and strict
    /// mode refuses schemas with optional properties, which most tools have.
    strict: bool,
}

impl<'a> RequestBody<'a> {
    /// The body for `req`, streaming or not as `mode` says.
    pub fn new(req: &ChatRequest<'a>, config: &'a ProviderConfig, mode: StreamMode) -> Self {
        let (instructions, rest) = match req.messages.split_first() {
            Some((Message::System { content }, rest)) => (Some(content.as_str()), rest),
            _ => (None, req.messages),
        };
        let mut input = Vec::with_capacity(rest.len() + 4);
        for message in rest {
            push_items(&mut input, message, &config.base_url, req.images);
        }
        RequestBody {
            model: req.model,
            instructions,
            input,
            tools: req
                .tools
                .iter()
                .map(|t| FunctionTool {
                    kind: "function",
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                    strict: false,
                })
                .collect(),
            tool_choice: if req.tools.is_empty() {
                None
            } else {
                tool_choice(&config.tool_choice)
            },
            store: false,
            stream: mode == StreamMode::Sse,
            include: INCLUDE,
            max_output_tokens: config.max_output_tokens,
            text: config
                .structured_output
                .asked(req.output_schema)
                .map(|schema| {
                    serde_json::json!({
                        "format": {"type": "json_schema", "name": "output", "schema": schema},
                    })
                }),
            extras: Extras {
                cache_key: match config.prompt_cache.route(&config.base_url, req.model) {
                    CacheRoute::CacheKey => req.cache_key,
                    CacheRoute::Breakpoints | CacheRoute::Nothing => None,
                },
                effort: req.effort,
                extra_body: &config.extra_body,
            },
        }
    }

    /// The body as JSON bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(self)
    }
}

/// The items one message becomes. An assistant message gives its reasoning items first
/// (only those that can go back: Responses `reasoning` items carrying
/// `encrypted_content`, since with `store: false` an item without it names nothing the
/// server holds and is refused; and only when text or calls follow them, which the API
/// requires), then its text, then its calls.
fn push_items<'a>(
    input: &mut Vec<InputItem<'a>>,
    message: &'a Message,
    base_url: &str,
    images: &'a ImageData,
) {
    let message_item = |role, content| InputItem::Message {
        kind: "message",
        role,
        content,
    };
    match message {
        // A system message after the first (none today) keeps its place as the
        // developer's.
        Message::System { content } => input.push(message_item("developer", content)),
        Message::User {
            content,
            images: refs,
        } if !refs.is_empty() => {
            let mut parts = vec![ContentPart::InputText {
                text: content.as_str().into(),
            }];
            parts.extend(refs.iter().map(|image| match images.url(image) {
                Some(url) => ContentPart::InputImage { image_url: url },
                None => ContentPart::InputText {
                    text: crate::llm::wire::missing_image_text(&image.name).into(),
                },
            }));
            input.push(InputItem::MessageParts {
                kind: "message",
                role: "user",
                content: parts,
            });
        }
        Message::User { content, .. } => input.push(message_item("user", content)),
        Message::Tool {
            tool_call_id,
            content,
        } => input.push(InputItem::FunctionCallOutput {
            kind: "function_call_output",
            call_id: tool_call_id,
            output: content,
        }),
        Message::Assistant {
            content,
            reasoning,
            tool_calls,
        } => {
            // A reasoning item must be followed by what it led to: a message with
            // nothing after it (an answer cut off) sends none.
            let followed = !content.is_empty() || !tool_calls.is_empty();
            if let Some(reasoning) = reasoning
                .as_ref()
                .filter(|r| followed && r.goes_back_to(base_url))
            {
                input.extend(
                    reasoning
                        .details
                        .iter()
                        .filter(|item| is_returnable_reasoning(item))
                        .map(InputItem::Verbatim),
                );
            }
            if !content.is_empty() {
                input.push(message_item("assistant", content));
            }
            input.extend(tool_calls.iter().map(function_call));
        }
    }
}

fn function_call(call: &ToolCall) -> InputItem<'_> {
    InputItem::FunctionCall {
        kind: "function_call",
        call_id: &call.id,
        name: &call.name,
        arguments: &call.arguments,
    }
}

/// A Responses `reasoning` item with its encrypted content (other wires' reasoning
/// details, such as OpenRouter's `reasoning.text`, are never sent here).
pub(crate) fn is_returnable_reasoning(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("reasoning")
        && item.get("encrypted_content").is_some_and(Value::is_string)
}

/// `tool_choice` as the Responses API spells it (a forced function is flat).
fn tool_choice(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::Auto => Some("auto".into()),
        ToolChoice::Omit => None,
        ToolChoice::Required => Some("required".into()),
        ToolChoice::Function { name } => {
            Some(serde_json::json!({"type": "function", "name": name}))
        }
    }
}

/// The keys that come from provider settings: `prompt_cache_key` on a cache-key route
/// (the session id), the effort as `reasoning.effort` (merged into an `extra_body`
/// `reasoning` object such as `{summary = "auto"}`, the effort winning), then the
/// configured `extra_body` keys, but never one this body sets.
#[derive(Debug)]
struct Extras<'a> {
    cache_key: Option<&'a str>,
    effort: Option<Effort>,
    extra_body: &'a serde_json::Map<String, Value>,
}

impl Serialize for Extras<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        if let Some(key) = self.cache_key {
            map.serialize_entry("prompt_cache_key", key)?;
        }
        let level = self.effort.map(|effort| match effort {
            Effort::Off => "none",
            other => other.as_str(),
        });
        if let Some(level) = level {
            let mut reasoning = match self.extra_body.get("reasoning") {
                Some(Value::Object(configured)) => configured.clone(),
                _ => serde_json::Map::new(),
            };
            reasoning.insert("effort".into(), Value::from(level));
            map.serialize_entry("reasoning", &reasoning)?;
        }
        for (key, value) in self.extra_body.iter().filter(|(k, _)| {
            let set_here = OWNED_KEYS.contains(&k.as_str())
                || (k.as_str() == "prompt_cache_key" && self.cache_key.is_some())
                || (k.as_str() == "reasoning" && level.is_some());
            !set_here
        }) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
