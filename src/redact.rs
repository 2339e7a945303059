//! Secret values replaced by a marker before text that may hold them is shown or saved:
//! a provider's error body that echoes the `Authorization` header or another configured
//! header, a model answer or a command's output that printed the key it found. A
//! [`Redactor`] holds the values (trimmed, each with its marker); [`Redactor::redact`]
//! works on text, [`Redactor::redact_json_line`] on one serialized JSON record, where it
//! replaces inside strings only so the record stays valid. The process-wide one for
//! saved sessions is set once at start-up ([`configure_saved`]).
//!
//! It must not know where the values come from or where the text goes.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::Value;

/// The marker that replaces a secret in saved sessions.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this are left alone in saved sessions: a local server's
/// placeholder key (`ollama`, `EMPTY`) is no secret, and replacing every occurrence of
/// a short word would garble what the model wrote.
pub const SAVED_MIN_LEN: usize = 8;

/// One value and what replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Secret {
    value: String,
    /// The value as it appears inside a JSON string.
    json: String,
    marker: &'static str,
}

/// The values to replace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// Longest first, so a value holding another is replaced whole.
    secrets: Vec<Secret>,
}

impl Redactor {
    /// Nothing to replace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value` (trimmed) with `marker`, unless it is shorter than `min_len` bytes
    /// or already there.
    pub fn with(mut self, value: &str, marker: &'static str, min_len: usize) -> Self {
        let value = value.trim();
        if value.len() < min_len.max(1) || self.secrets.iter().any(|s| s.value == value) {
            return self;
        }
        let quoted = serde_json::to_string(value).unwrap_or_default();
        let json = quoted
            .strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .unwrap_or(value)
            .to_string();
        self.secrets.push(Secret {
            value: value.to_string(),
            json,
            marker,
        });
        self.secrets
            .sort_by_key(|s| std::cmp::Reverse(s.value.len()));
        self
    }

    /// Adds every value of `values` with `marker` (see [`Redactor::with`]).
    pub fn with_all<I, S>(self, values: I, marker: &'static str, min_len: usize) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        values
            .into_iter()
            .fold(self, |r, v| r.with(v.as_ref(), marker, min_len))
    }

    /// Whether there is nothing to replace.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every value replaced by its marker (borrowed when none occurs).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in &self.secrets {
            if out.contains(secret.value.as_str()) {
                out = Cow::Owned(out.replace(secret.value.as_str(), secret.marker));
            }
        }
        out
    }

    /// Whether any value occurs in `json` (serialized JSON, or a part of it) as it is
    /// spelled inside a JSON string: the test [`Redactor::redact_json_line`] makes
    /// before it changes anything.
    pub fn occurs_in_json(&self, json: &[u8]) -> bool {
        self.secrets
            .iter()
            .any(|s| memchr::memmem::find(json, s.json.as_bytes()).is_some())
    }

    /// The length in bytes of the longest value as spelled in JSON (0 when there is
    /// none): a part of a line searched with [`Redactor::occurs_in_json`] must overlap
    /// the next by one byte less, so no value is missed across the cut.
    pub fn longest_json(&self) -> usize {
        self.secrets.iter().map(|s| s.json.len()).max().unwrap_or(0)
    }

    /// One serialized JSON record (without its newline) with every value replaced
    /// inside its strings (keys included); unchanged, and not parsed, when no value
    /// occurs in it. Text that is not JSON has the values replaced as they are spelled
    /// in JSON.
    pub fn redact_json_line(&self, line: Vec<u8>) -> Vec<u8> {
        let occurs = match std::str::from_utf8(&line) {
            // A substring search (two-way, linear), as fast as the line can be read.
            Ok(text) => self.secrets.iter().any(|s| text.contains(s.json.as_str())),
            Err(_) => self.secrets.iter().any(|s| {
                line.windows(s.json.len().max(1))
                    .any(|w| w == s.json.as_bytes())
            }),
        };
        if !occurs {
            return line;
        }
        match serde_json::from_slice::<Value>(&line) {
            Ok(mut value) => {
                self.redact_value(&mut value);
                serde_json::to_vec(&value).unwrap_or_else(|_| self.redact_raw(&line))
            }
            Err(_) => self.redact_raw(&line),
        }
    }

    fn redact_value(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Cow::Owned(changed) = self.redact(text) {
                    *text = changed;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.redact_value(&mut v);
                    map.insert(self.redact(&key).into_owned(), v);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn redact_raw(&self, line: &[u8]) -> Vec<u8> {
        let mut text = String::from_utf8_lossy(line).into_owned();
        for secret in &self.secrets {
            text = text.replace(secret.json.as_str(), secret.marker);
        }
        text.into_bytes()
    }
}

static SAVED: OnceLock<Redactor> = OnceLock::new();

/// Sets the redactor for everything saved in session files (the first call wins).
pub fn configure_saved(redactor: Redactor) {
    let _ = SAVED.set(redactor);
}

/// The redactor for saved sessions (empty until [`configure_saved`]).
pub fn saved() -> &'static Redactor {
    static EMPTY: Redactor = Redactor {
        secrets: Vec::new(),
    };
    SAVED.get().unwrap_or(&EMPTY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new()
            .with("  sk-live-0123456789  ", "[api key]", 8)
            .with("quote\"back\\slash", REDACTED, 8)
            .with("short", REDACTED, 8)
            .with("sk-live-0123456789-longer", "[long]", 8)
    }

    #[test]
    fn values_are_trimmed_short_ones_skipped_and_the_longest_wins() {
        let r = redactor();
        assert_eq!(
            r.redact("a sk-live-0123456789 b sk-live-0123456789-longer c short"),
            "a [api key] b [long] c short"
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
        assert!(Redactor::new().with("   ", REDACTED, 0).is_empty());
    }

    #[test]
    fn json_lines_stay_valid_and_hold_no_value() {
        let r = redactor();
        let record = serde_json::json!({
            "type": "message",
            "text": "the key is sk-live-0123456789, and quote\"back\\slash",
            "sk-live-0123456789": [1, 2.5, true, null, {"nested": "x sk-live-0123456789"}],
        });
        let line = serde_json::to_vec(&record).unwrap();
        let out = r.redact_json_line(line);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(!text.contains("sk-live-0123456789"), "{text}");
        assert!(!text.contains("back\\\\slash"), "{text}");
        let parsed: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            parsed["text"], "the key is [api key], and [redacted]",
            "{parsed}"
        );
        assert_eq!(parsed["[api key]"][4]["nested"], "x [api key]");
        assert_eq!(parsed["[api key]"][1], 2.5);
        // Nothing to replace: the very same bytes back.
        let clean = br#"{"type":"message","text":"fine"}"#.to_vec();
        assert_eq!(r.redact_json_line(clean.clone()), clean);
    }
}
