//! [`SharedText`]: a model's answer held once and shared by every owner of it — the
//! conversation's assistant message, the turn's final text, the event that tells the
//! frontend — so a long answer is one allocation however many hold it. It reads as a
//! `str` and is written (serde) as a plain JSON string, so the records and events that
//! carry it keep their shape.
//!
//! It lives at the floor so that the event contract and the model client can both name
//! it; it knows nothing of either.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Text shared without copying: cloning it copies a pointer. Made from a `String`
/// without copying the bytes (the `String` is moved behind the `Arc`).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedText(Arc<String>);

impl SharedText {
    /// The text as a `str`.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The text as an owned `String`: moved out when nothing else holds it, copied
    /// otherwise.
    pub fn into_string(self) -> String {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| shared.as_ref().clone())
    }

    /// The text to change in place: copied first when another owner shares it (so
    /// they keep what they had).
    pub fn make_mut(&mut self) -> &mut String {
        Arc::make_mut(&mut self.0)
    }

    /// Whether `self` and `other` are the same allocation (tests).
    pub fn shares(&self, other: &SharedText) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        SharedText(Arc::new(text))
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        SharedText(Arc::new(text.to_string()))
    }
}

impl From<&String> for SharedText {
    fn from(text: &String) -> Self {
        SharedText(Arc::new(text.clone()))
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for SharedText {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(SharedText::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_becomes_shared_text_without_copying_its_bytes() {
        let text = "a long answer".repeat(1000);
        let bytes = text.as_ptr();
        let shared = SharedText::from(text);
        assert_eq!(shared.as_ptr(), bytes);
        let again = shared.clone();
        assert!(again.shares(&shared));
        assert_eq!(again.as_ptr(), bytes);
    }

    #[test]
    fn it_is_written_and_read_as_a_plain_json_string() {
        let shared = SharedText::from("say \"hi\"\n");
        let json = serde_json::to_string(&shared).unwrap();
        assert_eq!(json, r#""say \"hi\"\n""#);
        let back: SharedText = serde_json::from_str(&json).unwrap();
        assert_eq!(back, shared);
        assert_eq!(back, "say \"hi\"\n");
    }

    #[test]
    fn into_string_moves_the_only_copy_out() {
        let shared = SharedText::from("x".repeat(100));
        let bytes = shared.as_ptr();
        let owned = shared.into_string();
        assert_eq!(owned.as_ptr(), bytes);
        let shared = SharedText::from("y".repeat(100));
        let other = shared.clone();
        assert_eq!(shared.into_string(), *other);
    }
}
