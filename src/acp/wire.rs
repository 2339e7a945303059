//! JSON-RPC 2.0 framing for `harness9 acp`: reads newline-delimited messages from the
//! client with a hard cap on a line's length, sorts each into a request, a notification
//! or something to answer with an error, and writes replies and notifications one JSON
//! line at a time.
//!
//! It knows the JSON-RPC envelope and nothing of ACP's methods or of the agent: what a
//! method means is decided by its caller. Everything the client sends is untrusted: a
//! line that is not JSON, too long, or not a JSON-RPC message becomes an error reply,
//! never a panic or a wait for more input than the cap.

use std::io::{self, Write};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::safe_text::SafeWriter;

/// The longest line read as a message (16 MiB): longer ones are skipped to their end
/// and answered with an error, without being held in memory.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// JSON-RPC error codes used here (the standard ones).
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// JSON, but not a request or notification (or too long to read).
    pub const INVALID_REQUEST: i32 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// The method's parameters do not fit it.
    pub const INVALID_PARAMS: i32 = -32602;
    /// The request was understood but failed here.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// ACP's "authentication required": no model endpoint is configured.
    pub const AUTH_REQUIRED: i32 = -32000;
}

/// One line read from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A complete line (without its newline).
    Text(Vec<u8>),
    /// A line longer than [`MAX_LINE`], skipped to its end.
    TooLong,
    /// The client closed its end.
    End,
}

/// Reads the next line, never holding more than `limit` bytes of it.
pub async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, limit: usize) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Text(line),
            });
        }
        let (chunk, found) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..at], Some(at)),
            None => (available, None),
        };
        if !too_long {
            if line.len() + chunk.len() > limit {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = found.map_or(available.len(), |at| at + 1);
        reader.consume(used);
        if found.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
    }
}

/// What a line from the client is.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A call that wants an answer.
    Request {
        /// Its id, echoed in the answer.
        id: Value,
        /// The method.
        method: String,
        /// Its parameters (`null` when absent).
        params: Value,
    },
    /// A call that wants none.
    Notification {
        /// The method.
        method: String,
        /// Its parameters (`null` when absent).
        params: Value,
    },
    /// An answer to a call of ours.
    Response {
        /// The id of our call.
        id: Value,
        /// Its result, or the error object the client answered with.
        outcome: Result<Value, Value>,
    },
    /// A blank line: ignored.
    Blank,
    /// Not a message: answer with this error (id `null` when none could be read).
    Invalid {
        /// The id to answer, when the message had a usable one.
        id: Value,
        /// The error code.
        code: i32,
        /// What was wrong, for people.
        message: String,
    },
}

/// Sorts one line.
pub fn classify(line: &[u8]) -> Incoming {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Incoming::Blank;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Incoming::Invalid {
                id: Value::Null,
                code: code::PARSE_ERROR,
                message: format!("not JSON: {e}"),
            };
        }
    };
    let Value::Object(mut object) = value else {
        return invalid(
            Value::Null,
            "a message is a JSON object (batches are not accepted)",
        );
    };
    let id = object.remove("id");
    // An id is a string or a number; anything else cannot be echoed back.
    let id = match id {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(_) => return invalid(Value::Null, "the id must be a string or a number"),
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return invalid(id.unwrap_or(Value::Null), "\"jsonrpc\" must be \"2.0\"");
    }
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Incoming::Request { id, method, params },
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (Some(_), id) => invalid(id.unwrap_or(Value::Null), "the method must be a string"),
        (None, Some(id)) if object.contains_key("result") || object.contains_key("error") => {
            let outcome = match object.remove("error") {
                Some(error) => Err(error),
                None => Ok(object.remove("result").unwrap_or(Value::Null)),
            };
            Incoming::Response { id, outcome }
        }
        (None, id) => invalid(id.unwrap_or(Value::Null), "a request needs a method"),
    }
}

fn invalid(id: Value, message: &str) -> Incoming {
    Incoming::Invalid {
        id,
        code: code::INVALID_REQUEST,
        message: message.to_string(),
    }
}

/// Writes JSON-RPC messages to the client, one line each, flushed at once. DEL and C1
/// characters are escaped on the way ([`SafeWriter::json`]): the line parses to the
/// same value.
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    /// A writer to `out`.
    pub fn new(out: W) -> Self {
        Writer { out }
    }

    /// Answers request `id` with `result`.
    pub fn result(&mut self, id: &Value, result: &impl serde::Serialize) -> io::Result<()> {
        let result = serde_json::to_value(result).map_err(io::Error::other)?;
        self.line(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    /// Answers request `id` (or `null`) with an error.
    pub fn error(&mut self, id: &Value, code: i32, message: &str) -> io::Result<()> {
        self.line(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        }))
    }

    /// Sends a request of ours (its answer comes back as [`Incoming::Response`]).
    pub fn request(
        &mut self,
        id: &Value,
        method: &str,
        params: &impl serde::Serialize,
    ) -> io::Result<()> {
        let params = serde_json::to_value(params).map_err(io::Error::other)?;
        self.line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: &impl serde::Serialize) -> io::Result<()> {
        let params = serde_json::to_value(params).map_err(io::Error::other)?;
        self.line(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    fn line(&mut self, value: &Value) -> io::Result<()> {
        let mut safe = SafeWriter::json(&mut self.out);
        serde_json::to_writer(&mut safe, value).map_err(io::Error::other)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader, limit).await.unwrap();
            let end = line == Line::End;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_skipped_whole_and_the_next_one_read() {
        let got = lines(b"abc\n0123456789abcdef\nxy\ntail", 8).await;
        assert_eq!(
            got,
            vec![
                Line::Text(b"abc".to_vec()),
                Line::TooLong,
                Line::Text(b"xy".to_vec()),
                Line::Text(b"tail".to_vec()),
                Line::End,
            ]
        );
        assert_eq!(
            lines(b"0123456789", 4).await,
            vec![Line::TooLong, Line::End]
        );
    }

    #[test]
    fn every_kind_of_bad_message_gets_an_error_with_the_right_code() {
        let code_of = |line: &str| match classify(line.as_bytes()) {
            Incoming::Invalid { code, .. } => Some(code),
            _ => None,
        };
        assert_eq!(code_of("{not json"), Some(code::PARSE_ERROR));
        assert_eq!(code_of("\u{0}"), Some(code::PARSE_ERROR));
        assert_eq!(code_of("[1,2]"), Some(code::INVALID_REQUEST));
        assert_eq!(code_of("42"), Some(code::INVALID_REQUEST));
        assert_eq!(
            code_of(r#"{"id":1,"method":"x"}"#),
            Some(code::INVALID_REQUEST)
        );
        assert_eq!(
            code_of(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            Some(code::INVALID_REQUEST)
        );
        assert_eq!(
            code_of(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            Some(code::INVALID_REQUEST)
        );
        assert_eq!(
            code_of(r#"{"jsonrpc":"2.0","id":1}"#),
            Some(code::INVALID_REQUEST)
        );
        assert_eq!(classify(b"  "), Incoming::Blank);
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Incoming::Response {
                id: json!(1),
                outcome: Ok(json!({})),
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"p","error":{"code":1}}"#),
            Incoming::Response {
                id: json!("p"),
                outcome: Err(json!({"code": 1})),
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"m"}"#),
            Incoming::Request {
                id: Value::String("a".into()),
                method: "m".into(),
                params: Value::Null,
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"n","params":[1]}"#),
            Incoming::Notification {
                method: "n".into(),
                params: json!([1]),
            }
        );
    }

    #[test]
    fn replies_are_one_line_with_control_characters_escaped() {
        let mut out = Vec::new();
        Writer::new(&mut out)
            .notify("m", &json!({"text": "a\u{7f}\u{9b}b\nc"}))
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches('\n').count(), 1, "{text}");
        assert!(
            !text.contains('\u{7f}') && !text.contains('\u{9b}'),
            "{text}"
        );
        let back: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(back["params"]["text"], "a\u{7f}\u{9b}b\nc");
    }
}
