//! The input side of two-way stream-json (`--input-format stream-json`): the versioned
//! schema of the JSON lines a driving program writes to stdin (a user message, an
//! approval answer, an interrupt, an approval mode change, the end of input), and how
//! one line is parsed (`source.rs` reads stdin into them on a thread of its own).
//!
//! Everything on stdin is untrusted: a line that is not UTF-8, not JSON, too long (over
//! [`MAX_LINE`], skipped to its end without being held), of an unknown type or version,
//! or with fields that do not fit its type becomes an [`InputProblem`] naming the line,
//! never a panic or a wait for more than the cap. It knows the schema (documented in
//! docs/HEADLESS.md) and nothing of the agent: what a line does is the REPL's.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::protocol::{ApprovalMode, ImageInput};

/// The version of the input lines' schema; every line carries it as `schema_version`.
pub const INPUT_SCHEMA_VERSION: u64 = 1;

/// The longest input line read (16 MiB): a longer one is skipped to its end, never held
/// whole, and reported.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// `--input-format`: how stdin is read in print and pipe modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum InputFormat {
    /// Text: the prompt (`-p`), or one turn per line (pipe mode).
    #[default]
    Text,
    /// One JSON object per line: user messages, approval answers, interrupts, approval
    /// mode changes and the end of input (docs/HEADLESS.md).
    StreamJson,
}

/// One line the driver sent, understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverLine {
    /// `user`: a message, routed as a pipe-mode line (a turn, `/skill args`, a built-in
    /// command), after the turns before it.
    User {
        /// The message.
        text: String,
        /// Its images: files read as `--image` reads them, or bytes decoded from the
        /// line (of the type the line named).
        images: Vec<ImageInput>,
    },
    /// `approval`: the answer to an `approval_request` event.
    Approval {
        /// The request's `call_id`.
        call_id: String,
        /// What the driver decided.
        answer: DriverAnswer,
    },
    /// `interrupt`: stop the running turn.
    Interrupt,
    /// `set_mode`: switch the approval mode.
    SetMode {
        /// The new mode.
        mode: ApprovalMode,
    },
    /// `end`: no more input; the run ends once the messages sent have been answered.
    End,
}

/// The driver's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverAnswer {
    /// `allow_once`: run this call.
    AllowOnce,
    /// `allow_session`: run it and add the rules the request offered for this session.
    AllowSession,
    /// `deny`: do not run it; the model is told, with the reason when one is given.
    Deny {
        /// Words for the model.
        reason: Option<String>,
    },
    /// `approve_plan`: approve a plan (`exit_plan`) and carry it out in this mode.
    ApprovePlan {
        /// The mode to leave plan mode for.
        mode: ApprovalMode,
    },
}

/// Why an input line was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputProblem {
    /// The bytes are not UTF-8.
    #[error("not UTF-8 text; ignored")]
    NotUtf8,
    /// Longer than [`MAX_LINE`].
    #[error("longer than {max} bytes; ignored", max = MAX_LINE)]
    TooLong,
    /// Not JSON.
    #[error("not JSON ({0}); ignored")]
    NotJson(String),
    /// JSON, but not an object.
    #[error("not a JSON object; ignored")]
    NotObject,
    /// No `type`, or one that is not a string.
    #[error("no \"type\" string; ignored")]
    NoType,
    /// A `type` this version does not know.
    #[error("unknown type {0:?} (expected user, approval, interrupt, set_mode or end); ignored")]
    UnknownType(String),
    /// No `schema_version`.
    #[error("no \"schema_version\" (this harness9 reads {INPUT_SCHEMA_VERSION}); ignored")]
    NoVersion,
    /// A `schema_version` other than [`INPUT_SCHEMA_VERSION`].
    #[error(
        "schema_version {0} is not supported (this harness9 reads {INPUT_SCHEMA_VERSION}); ignored"
    )]
    WrongVersion(String),
    /// The fields do not fit the type.
    #[error("{kind}: {message}; ignored")]
    Fields {
        /// The line's type.
        kind: &'static str,
        /// What is wrong, as serde words it.
        message: String,
    },
    /// One of a user message's images is not one (or not as the line said).
    #[error("user: image {number}: {reason}; the message was not sent")]
    Image {
        /// Which, counted from 1.
        number: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A user message with nothing in it.
    #[error("user: the text is empty; nothing was sent")]
    EmptyText,
}

/// `user`'s fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFields {
    text: String,
    /// Images: `{"path": …}` or `{"data": base64, "media_type": …}` each.
    #[serde(default)]
    images: Vec<ImageField>,
}

/// One image of a `user` line, as written.
#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum ImageField {
    /// A file, read as `--image FILE` reads it (relative to the project).
    Path {
        /// Its path.
        path: std::path::PathBuf,
    },
    /// The image's bytes in base64, and its MIME type.
    Data {
        /// Standard base64.
        data: String,
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
    },
}

/// A line's images, each checked as far as the line can tell: base64 that decodes to
/// an image of the type named (the size cap and the files are judged by the agent).
fn images(fields: Vec<ImageField>) -> Result<Vec<ImageInput>, InputProblem> {
    fields
        .into_iter()
        .enumerate()
        .map(|(i, field)| match field {
            ImageField::Path { path } => Ok(ImageInput::File { path }),
            ImageField::Data { data, media_type } => {
                let name = format!("image {}", i + 1);
                // The line is at most MAX_LINE bytes, so its image is less.
                crate::images::from_base64(&data, Some(&media_type), &name, MAX_LINE as u64)
                    .map(|image| ImageInput::Bytes {
                        bytes: image.bytes,
                        name: image.name,
                    })
                    .map_err(|e| InputProblem::Image {
                        number: i + 1,
                        reason: e.to_string(),
                    })
            }
        })
        .collect()
}

/// `approval`'s decision names.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum DecisionName {
    AllowOnce,
    AllowSession,
    Deny,
    ApprovePlan,
}

/// `approval`'s fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalFields {
    call_id: String,
    decision: DecisionName,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    mode: Option<ApprovalMode>,
}

/// `set_mode`'s fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeFields {
    mode: ApprovalMode,
}

/// The fields of a line that has none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoFields {}

/// Understands one line (without its newline): `None` for a blank line.
pub fn parse(bytes: &[u8]) -> Result<Option<DriverLine>, InputProblem> {
    let text = std::str::from_utf8(bytes).map_err(|_| InputProblem::NotUtf8)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| InputProblem::NotJson(e.to_string()))?;
    let Value::Object(mut object) = value else {
        return Err(InputProblem::NotObject);
    };
    let Some(Value::String(kind)) = object.remove("type") else {
        return Err(InputProblem::NoType);
    };
    // The type is checked before the version: a line of a type no version has is named
    // as such.
    let kind: &'static str = match kind.as_str() {
        "user" => "user",
        "approval" => "approval",
        "interrupt" => "interrupt",
        "set_mode" => "set_mode",
        "end" => "end",
        _ => return Err(InputProblem::UnknownType(kind)),
    };
    match object.remove("schema_version") {
        None => return Err(InputProblem::NoVersion),
        Some(v) if v.as_u64() == Some(INPUT_SCHEMA_VERSION) => {}
        Some(v) => return Err(InputProblem::WrongVersion(v.to_string())),
    }
    let line = match kind {
        "user" => {
            let fields: UserFields = fields(kind, object)?;
            if fields.text.trim().is_empty() {
                return Err(InputProblem::EmptyText);
            }
            DriverLine::User {
                images: images(fields.images)?,
                text: fields.text,
            }
        }
        "approval" => approval(fields(kind, object)?)?,
        "set_mode" => {
            let fields: ModeFields = fields(kind, object)?;
            DriverLine::SetMode { mode: fields.mode }
        }
        "interrupt" => {
            let NoFields {} = fields(kind, object)?;
            DriverLine::Interrupt
        }
        _ => {
            let NoFields {} = fields(kind, object)?;
            DriverLine::End
        }
    };
    Ok(Some(line))
}

/// The rest of a line's object as `kind`'s fields.
fn fields<T: serde::de::DeserializeOwned>(
    kind: &'static str,
    object: Map<String, Value>,
) -> Result<T, InputProblem> {
    serde_json::from_value(Value::Object(object)).map_err(|e| InputProblem::Fields {
        kind,
        message: e.to_string(),
    })
}

/// An `approval` line: a mode only with `approve_plan` (and never `plan`), a reason only
/// with `deny`.
fn approval(fields: ApprovalFields) -> Result<DriverLine, InputProblem> {
    let wrong = |message: &str| InputProblem::Fields {
        kind: "approval",
        message: message.to_string(),
    };
    let answer = match (fields.decision, fields.mode, fields.reason) {
        (DecisionName::ApprovePlan, None, _) => {
            return Err(wrong(
                "approve_plan needs a mode (suggest, auto-edit or full-auto)",
            ));
        }
        (DecisionName::ApprovePlan, Some(ApprovalMode::Plan), _) => {
            return Err(wrong(
                "a plan is carried out in suggest, auto-edit or full-auto, not plan",
            ));
        }
        (DecisionName::ApprovePlan, Some(_), Some(_)) => {
            return Err(wrong("a reason goes only with deny"));
        }
        (DecisionName::ApprovePlan, Some(mode), None) => DriverAnswer::ApprovePlan { mode },
        (_, Some(_), _) => return Err(wrong("a mode goes only with approve_plan")),
        (DecisionName::Deny, None, reason) => DriverAnswer::Deny { reason },
        (_, None, Some(_)) => return Err(wrong("a reason goes only with deny")),
        (DecisionName::AllowOnce, None, None) => DriverAnswer::AllowOnce,
        (DecisionName::AllowSession, None, None) => DriverAnswer::AllowSession,
    };
    Ok(DriverLine::Approval {
        call_id: fields.call_id,
        answer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Result<Option<DriverLine>, InputProblem> {
        parse(text.as_bytes())
    }

    #[test]
    fn every_type_of_line_is_understood() {
        assert_eq!(
            line(r#"{"type":"user","schema_version":1,"text":"hi"}"#),
            Ok(Some(DriverLine::User {
                text: "hi".into(),
                images: vec![]
            }))
        );
        // "\x89PNG\r\n\x1a\n" in base64, and a file.
        assert_eq!(
            line(
                r#"{"type":"user","schema_version":1,"text":"see","images":[{"path":"a.png"},{"data":"iVBORw0KGgo=","media_type":"image/png"}]}"#
            ),
            Ok(Some(DriverLine::User {
                text: "see".into(),
                images: vec![
                    ImageInput::File {
                        path: "a.png".into()
                    },
                    ImageInput::Bytes {
                        bytes: b"\x89PNG\r\n\x1a\n".to_vec(),
                        name: "image 2".into()
                    }
                ]
            }))
        );
        assert_eq!(
            line(
                r#"{"type":"approval","schema_version":1,"call_id":"c1","decision":"allow_once"}"#
            ),
            Ok(Some(DriverLine::Approval {
                call_id: "c1".into(),
                answer: DriverAnswer::AllowOnce
            }))
        );
        assert_eq!(
            line(
                r#"{"type":"approval","schema_version":1,"call_id":"c1","decision":"deny","reason":"no"}"#
            ),
            Ok(Some(DriverLine::Approval {
                call_id: "c1".into(),
                answer: DriverAnswer::Deny {
                    reason: Some("no".into())
                }
            }))
        );
        assert_eq!(
            line(
                r#"{"type":"approval","schema_version":1,"call_id":"p","decision":"approve_plan","mode":"auto-edit"}"#
            ),
            Ok(Some(DriverLine::Approval {
                call_id: "p".into(),
                answer: DriverAnswer::ApprovePlan {
                    mode: ApprovalMode::AutoEdit
                }
            }))
        );
        assert_eq!(
            line(r#"{"schema_version":1,"type":"set_mode","mode":"full-auto"}"#),
            Ok(Some(DriverLine::SetMode {
                mode: ApprovalMode::FullAuto
            }))
        );
        assert_eq!(
            line(r#"{"type":"interrupt","schema_version":1}"#),
            Ok(Some(DriverLine::Interrupt))
        );
        assert_eq!(
            line(r#"{"type":"end","schema_version":1}"#),
            Ok(Some(DriverLine::End))
        );
        assert_eq!(line("  \r"), Ok(None));
    }

    #[test]
    fn each_kind_of_bad_line_is_named() {
        use InputProblem::*;
        assert_eq!(parse(b"\xff{}"), Err(NotUtf8));
        assert!(matches!(line("{nope"), Err(NotJson(_))));
        // Nesting deep enough to exhaust a recursive parser's stack is refused whole.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(line(&deep), Err(NotJson(_))));
        assert_eq!(line("[1]"), Err(NotObject));
        assert_eq!(line(r#"{"schema_version":1}"#), Err(NoType));
        assert_eq!(line(r#"{"type":7,"schema_version":1}"#), Err(NoType));
        assert_eq!(
            line(r#"{"type":"hack","schema_version":1}"#),
            Err(UnknownType("hack".into()))
        );
        assert_eq!(line(r#"{"type":"end"}"#), Err(NoVersion));
        assert_eq!(
            line(r#"{"type":"end","schema_version":2}"#),
            Err(WrongVersion("2".into()))
        );
        assert_eq!(
            line(r#"{"type":"end","schema_version":"1"}"#),
            Err(WrongVersion("\"1\"".into()))
        );
        // An image that is none, or not the type named, or not base64.
        for (image, says) in [
            (
                r#"{"data":"aGVsbG8=","media_type":"image/png"}"#,
                "not an image",
            ),
            (
                r#"{"data":"iVBORw0KGgo=","media_type":"image/gif"}"#,
                "said to be image/gif",
            ),
            (r#"{"data":"!!!!","media_type":"image/png"}"#, "base64"),
        ] {
            let got = line(&format!(
                r#"{{"type":"user","schema_version":1,"text":"x","images":[{{"path":"a.png"}},{image}]}}"#
            ));
            match got {
                Err(Image { number: 2, reason }) => assert!(reason.contains(says), "{reason}"),
                other => panic!("{image}: {other:?}"),
            }
        }
        assert_eq!(
            line(r#"{"type":"user","schema_version":1,"text":"  "}"#),
            Err(EmptyText)
        );
        for bad in [
            r#"{"type":"user","schema_version":1}"#,
            r#"{"type":"user","schema_version":1,"text":"x","txet":"y"}"#,
            r#"{"type":"user","schema_version":1,"text":"x","images":{"path":"a.png"}}"#,
            r#"{"type":"user","schema_version":1,"text":"x","images":[{"path":"a.png","data":"x"}]}"#,
            r#"{"type":"user","schema_version":1,"text":"x","images":[{"data":"iVBORw0KGgo="}]}"#,
            r#"{"type":"user","schema_version":1,"text":"x","images":["a.png"]}"#,
            r#"{"type":"interrupt","schema_version":1,"now":true}"#,
            r#"{"type":"set_mode","schema_version":1,"mode":"yolo"}"#,
            r#"{"type":"approval","schema_version":1,"call_id":"c","decision":"maybe"}"#,
            r#"{"type":"approval","schema_version":1,"decision":"deny"}"#,
            r#"{"type":"approval","schema_version":1,"call_id":"c","decision":"approve_plan"}"#,
            r#"{"type":"approval","schema_version":1,"call_id":"c","decision":"approve_plan","mode":"plan"}"#,
            r#"{"type":"approval","schema_version":1,"call_id":"c","decision":"allow_once","mode":"suggest"}"#,
            r#"{"type":"approval","schema_version":1,"call_id":"c","decision":"allow_once","reason":"x"}"#,
        ] {
            assert!(matches!(line(bad), Err(Fields { .. })), "{bad}");
        }
    }
}
