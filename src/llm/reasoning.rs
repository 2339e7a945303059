//! Reasoning as a provider returned it: the readable text, the wire field it came in,
//! and the structured items some providers require back verbatim (OpenRouter's
//! `reasoning_details` with signatures, the Responses API's `reasoning` items with
//! `encrypted_content`). Owns the value and its saved form (which also reads the plain
//! string older session files hold); it must not know how any wire sends it back.

use serde::{Deserialize, Deserializer, Serialize};

/// Reasoning that came with one assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Reasoning {
    /// The readable reasoning text, as streamed (shown as a thought; may be empty when a
    /// provider returns only encrypted or structured reasoning).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The wire field the text arrived in, so an echo uses the same name.
    #[serde(default, skip_serializing_if = "ReasoningField::is_default")]
    pub field: ReasoningField,
    /// Structured items that must go back byte for byte, in the order received.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<serde_json::Value>,
    /// The base URL of the provider that returned it: reasoning goes back only to the
    /// provider it came from (a session that switched providers keeps it, but signatures
    /// and encrypted items of one provider mean nothing to another). `None` in sessions
    /// saved before it was kept: sent wherever the echo says, as then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The field reasoning text arrives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningField {
    /// `reasoning_content` (DeepSeek, vLLM, llama.cpp).
    #[default]
    ReasoningContent,
    /// `reasoning` (OpenRouter, Ollama).
    Reasoning,
    /// The Responses API: the text is its reasoning summary and `details` its
    /// `reasoning` output items, which only that wire sends back (never the Chat wire,
    /// should a session move from one to the other).
    ResponsesItems,
}

impl ReasoningField {
    fn is_default(&self) -> bool {
        *self == ReasoningField::default()
    }
}

impl Reasoning {
    /// Reasoning that is only text, received in `field`.
    pub fn text(text: impl Into<String>, field: ReasoningField) -> Self {
        Reasoning {
            text: text.into(),
            field,
            details: Vec::new(),
            source: None,
        }
    }

    /// Whether it may go back to the provider at `base_url` (the one it came from, or any
    /// when its source is not known).
    pub fn goes_back_to(&self, base_url: &str) -> bool {
        self.source
            .as_deref()
            .is_none_or(|source| source == base_url)
    }

    /// Whether there is nothing to show or send back.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.details.is_empty()
    }

    /// Bytes held, for size estimates.
    pub fn len(&self) -> usize {
        self.text.len()
            + self
                .details
                .iter()
                .map(|d| d.to_string().len())
                .sum::<usize>()
    }
}

impl From<&str> for Reasoning {
    /// Text-only reasoning in the default field (`reasoning_content`).
    fn from(text: &str) -> Self {
        Reasoning::text(text, ReasoningField::default())
    }
}

/// The saved forms: an object (today's) or a plain string (session files written before
/// structured reasoning was kept).
#[derive(Deserialize)]
#[serde(untagged)]
enum SavedReasoning {
    Text(String),
    Full {
        #[serde(default)]
        text: String,
        #[serde(default)]
        field: ReasoningField,
        #[serde(default)]
        details: Vec<serde_json::Value>,
        #[serde(default)]
        source: Option<String>,
    },
}

impl<'de> Deserialize<'de> for Reasoning {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match SavedReasoning::deserialize(deserializer)? {
            SavedReasoning::Text(text) => Reasoning::text(text, ReasoningField::default()),
            SavedReasoning::Full {
                text,
                field,
                details,
                source,
            } => Reasoning {
                text,
                field,
                details,
                source,
            },
        })
    }
}

/// The string fields of a `reasoning_details` item that stream in pieces and are joined
/// in order (OpenRouter: "the complete reasoning sequence is built by concatenating all
/// chunks in order"); every other field is taken from the first piece that has it.
const JOINED_FIELDS: &[&str] = &["text", "summary", "data", "signature"];

/// Streamed `reasoning_details` pieces merged into whole items: a piece joins the item
/// with the same `index` (and the same `type`, when both say one), else it starts a new
/// item. Items keep the order they first appeared in and their fields the order they
/// first came in; `format`, `type`, `id` and every other field are kept as the provider
/// sent them. A piece that is not an object is kept whole as an item of its own.
#[derive(Debug, Default)]
pub struct DetailsAccumulator {
    items: Vec<serde_json::Value>,
}

impl DetailsAccumulator {
    /// True when no piece has arrived.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds one piece; returns the readable text it adds (its `text` or `summary`).
    pub fn push(&mut self, piece: serde_json::Value) -> Option<String> {
        let serde_json::Value::Object(piece) = piece else {
            self.items.push(piece);
            return None;
        };
        let readable = ["text", "summary"]
            .iter()
            .find_map(|k| piece.get(*k).and_then(|v| v.as_str()))
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        let same_item = |item: &serde_json::Value| {
            let index = piece.get("index").filter(|i| !i.is_null());
            let same_type = match (item.get("type"), piece.get("type")) {
                (Some(a), Some(b)) if !a.is_null() && !b.is_null() => a == b,
                _ => true,
            };
            index.is_some() && item.get("index") == index && same_type
        };
        match self.items.iter_mut().rev().find(|item| same_item(item)) {
            Some(serde_json::Value::Object(item)) => {
                for (key, value) in piece {
                    match (item.get_mut(&key), value) {
                        (None, value) => {
                            item.insert(key, value);
                        }
                        (Some(old), value) if old.is_null() => *old = value,
                        (Some(serde_json::Value::String(old)), serde_json::Value::String(more))
                            if JOINED_FIELDS.contains(&key.as_str()) =>
                        {
                            old.push_str(&more)
                        }
                        _ => {}
                    }
                }
            }
            _ => self.items.push(serde_json::Value::Object(piece)),
        }
        readable
    }

    /// The whole items, in order.
    pub fn finish(self) -> Vec<serde_json::Value> {
        self.items
    }
}

/// The readable text of whole `reasoning_details` items (their `text` or `summary`), for
/// showing when a provider sent no plain reasoning text.
pub fn readable_text(details: &[serde_json::Value]) -> String {
    details
        .iter()
        .filter_map(|d| {
            ["text", "summary"]
                .iter()
                .find_map(|k| d.get(*k).and_then(|v| v.as_str()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_string_form_reads_as_text() {
        let r: Reasoning = serde_json::from_str(r#""why""#).unwrap();
        assert_eq!(r, Reasoning::text("why", ReasoningField::ReasoningContent));
    }

    #[test]
    fn object_form_round_trips_details_verbatim() {
        let r = Reasoning {
            text: "t".into(),
            field: ReasoningField::Reasoning,
            details: vec![serde_json::json!({"type": "reasoning.text", "signature": "c2ln"})],
            source: Some("https://openrouter.ai/api/v1".into()),
        };
        let saved = serde_json::to_string(&r).unwrap();
        let back: Reasoning = serde_json::from_str(&saved).unwrap();
        assert_eq!(back, r);
        let plain =
            serde_json::to_string(&Reasoning::text("x", ReasoningField::default())).unwrap();
        assert_eq!(plain, r#"{"text":"x"}"#);
    }

    #[test]
    fn streamed_details_merge_by_index_keeping_signatures_and_fields() {
        use serde_json::json;
        let mut acc = DetailsAccumulator::default();
        let pieces = [
            json!({"type": "reasoning.text", "text": "", "signature": "", "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "reasoning.text", "text": "Let me ", "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "reasoning.text", "text": "think.", "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "reasoning.text", "signature": "c2lnLTE=", "format": "anthropic-claude-v1", "index": 0}),
            json!({"type": "reasoning.encrypted", "data": "ZW5j", "id": "r-1", "format": "anthropic-claude-v1", "index": 1}),
            json!({"type": "reasoning.summary", "summary": "short", "id": null, "format": "openai-responses-v1", "index": 1}),
            json!("odd"),
        ];
        let texts: Vec<Option<String>> = pieces.into_iter().map(|p| acc.push(p)).collect();
        assert_eq!(texts[1].as_deref(), Some("Let me "));
        assert_eq!(texts[3], None);
        let items = acc.finish();
        assert_eq!(
            serde_json::to_string(&items).unwrap(),
            concat!(
                r#"[{"type":"reasoning.text","text":"Let me think.","signature":"c2lnLTE=","format":"anthropic-claude-v1","index":0},"#,
                r#"{"type":"reasoning.encrypted","data":"ZW5j","id":"r-1","format":"anthropic-claude-v1","index":1},"#,
                r#"{"type":"reasoning.summary","summary":"short","id":null,"format":"openai-responses-v1","index":1},"odd"]"#
            )
        );
        assert_eq!(readable_text(&items), "Let me think.short");
    }
}
