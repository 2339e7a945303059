//! `--output-schema FILE` (docs/CI.md): the final answer of a turn must be one JSON
//! value valid against the schema. The schema is read once, at start, and compiled
//! with `boon` (drafts 4 to 2020-12); it must be self-contained: no loader is given,
//! so a `$ref` to a file or a URL is refused when the schema is compiled, and nothing
//! is ever fetched. An answer is the JSON value itself (surrounding whitespace allowed,
//! or one fenced ```json block and nothing else); what is wrong with it is worded for
//! the model's one repair.
//!
//! It owns reading, compiling and checking; it must not know the wire, the frontends
//! or exit codes.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why a schema cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OutputSchemaError {
    /// The file could not be read.
    #[error("--output-schema {path}: cannot read it")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("--output-schema {path}: not JSON: {message}")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's words.
        message: String,
    },
    /// The JSON is not a schema boon can compile (or it refers outside itself).
    #[error("--output-schema {path}: not a usable JSON Schema: {message}")]
    NotASchema {
        /// The file.
        path: PathBuf,
        /// The compiler's words.
        message: String,
    },
}

/// The largest schema file read (a schema is a few KB; this is far beyond any).
const MAX_SCHEMA_BYTES: u64 = 1 << 20;

/// A compiled schema the final answer must satisfy.
pub struct OutputSchema {
    /// The schema as written (sent to providers that take it).
    value: Value,
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

/// A loader that loads nothing: the schema must be self-contained.
struct NoLoader;

impl boon::UrlLoader for NoLoader {
    fn load(&self, url: &str) -> Result<Value, Box<dyn std::error::Error>> {
        Err(format!("{url}: the schema must be self-contained (no $ref to files or URLs)").into())
    }
}

/// What the check of an answer found.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    /// Valid: the value.
    Valid(Value),
    /// Not valid: why, for the model and the user.
    Invalid(String),
}

impl OutputSchema {
    /// Reads and compiles the schema in `path`.
    pub fn load(path: &Path) -> Result<OutputSchema, OutputSchemaError> {
        use std::io::Read;
        let read = |source| OutputSchemaError::Read {
            path: path.to_path_buf(),
            source,
        };
        let file = crate::plain_file::open(path).map_err(read)?;
        let mut text = String::new();
        file.take(MAX_SCHEMA_BYTES)
            .read_to_string(&mut text)
            .map_err(read)?;
        let value: Value = serde_json::from_str(&text).map_err(|e| OutputSchemaError::NotJson {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        OutputSchema::compile(value).map_err(|message| OutputSchemaError::NotASchema {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Compiles `value` as a schema.
    pub fn compile(value: Value) -> Result<OutputSchema, String> {
        const HERE: &str = "harness9:output-schema.json";
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler.use_loader(Box::new(NoLoader));
        compiler
            .add_resource(HERE, value.clone())
            .map_err(|e| format!("{e:#}"))?;
        let index = compiler
            .compile(HERE, &mut schemas)
            .map_err(|e| format!("{e:#}"))?;
        Ok(OutputSchema {
            value,
            schemas,
            index,
        })
    }

    /// The schema as written.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Checks a final answer.
    pub fn check(&self, answer: &str) -> Checked {
        let Some(value) = json_of(answer) else {
            return Checked::Invalid(
                "the answer is not a JSON value: it must be the JSON itself, with no other text"
                    .into(),
            );
        };
        match self.schemas.validate(&value, self.index) {
            Ok(()) => Checked::Valid(value),
            Err(e) => Checked::Invalid(format!("the JSON does not match the schema: {e}")),
        }
    }

    /// The message asking the model to repair an answer, once.
    pub fn repair_request(&self, why: &str) -> String {
        format!(
            "Your answer cannot be used: {why}.\n\nAnswer again with only one JSON value valid \
             against this JSON Schema (no other text, no code fence):\n{}",
            self.value
        )
    }
}

/// The JSON value an answer is: the whole trimmed text, or the inside of one fenced
/// block that is the whole answer.
fn json_of(answer: &str) -> Option<Value> {
    let text = answer.trim();
    if let Ok(value) = serde_json::from_str(text) {
        return Some(value);
    }
    let inside = text
        .strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))?
        .strip_suffix("```")?;
    serde_json::from_str(inside.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> OutputSchema {
        OutputSchema::compile(json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["pass", "fail"]}, "score": {"type": "integer"}},
            "required": ["verdict"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn a_valid_answer_is_its_value_fenced_or_not() {
        let s = schema();
        let want = Checked::Valid(json!({"verdict": "pass"}));
        assert_eq!(s.check(" {\"verdict\": \"pass\"}\n"), want);
        assert_eq!(s.check("```json\n{\"verdict\": \"pass\"}\n```"), want);
    }

    #[test]
    fn an_invalid_answer_says_why() {
        let s = schema();
        let Checked::Invalid(why) = s.check("{\"verdict\": \"maybe\"}") else {
            panic!("must be invalid");
        };
        assert!(why.contains("does not match"), "{why}");
        assert!(matches!(
            s.check("Sure! {\"verdict\": \"pass\"}"),
            Checked::Invalid(_)
        ));
        assert!(matches!(
            s.check("{\"verdict\": \"pass\", \"x\": 1}"),
            Checked::Invalid(_)
        ));
        assert!(s.repair_request("bad").contains("\"verdict\""));
    }

    #[test]
    fn a_schema_that_refers_outside_itself_or_is_no_schema_is_refused() {
        let outside = OutputSchema::compile(json!({"$ref": "file:///etc/passwd"}));
        assert!(outside.is_err());
        let remote = OutputSchema::compile(json!({"$ref": "http://127.0.0.1:9/s.json"}));
        assert!(remote.is_err());
        assert!(OutputSchema::compile(json!({"type": 12})).is_err());
        let inner = OutputSchema::compile(json!({
            "$defs": {"v": {"type": "string"}}, "$ref": "#/$defs/v"
        }));
        assert!(inner.is_ok(), "a reference inside the schema is fine");
    }
}
