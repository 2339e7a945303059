//! Reasoning as a provider returned it: the readable text, the wire field it came in,
//! and the structured items some providers require back verbatim (OpenRouter's
//! `reasoning_details` with signatures, the Responses API's `reasoning` items with
//! `encrypted_content`). Owns the value and its saved form (which also reads the plain
//! string older session files hold); it must not know how any wire sends it back.

use serde::{Deserialize, Deserializer, Serialize};

/// Reasoning that came with one assistant message.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
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
        }
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
            } => Reasoning {
                text,
                field,
                details,
            },
        })
    }
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
        };
        let saved = serde_json::to_string(&r).unwrap();
        let back: Reasoning = serde_json::from_str(&saved).unwrap();
        assert_eq!(back, r);
        let plain =
            serde_json::to_string(&Reasoning::text("x", ReasoningField::default())).unwrap();
        assert_eq!(plain, r#"{"text":"x"}"#);
    }
}
