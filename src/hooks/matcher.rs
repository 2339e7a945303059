//! A hook group's `matcher`, as Claude Code reads it: missing, empty or `*` takes every
//! firing; a text of only letters, digits, `_` and `|` is a list of exact names
//! (`Edit|Write`, case matters); anything else is a regular expression searched
//! anywhere in the name (`Notebook.*`, `mcp__github__.*`). A tool is matched by
//! harness9's name and by Claude Code's (`bash` and `Bash`, `read_file` and `Read`…), so
//! hooks written for Claude Code match unchanged.
//!
//! It knows names and patterns; it must not know tools or how hooks run.

use regex::{Regex, RegexBuilder};

use super::Target;
use super::input::claude_tool_name;

/// The longest matcher accepted, in bytes.
pub const MAX_MATCHER_BYTES: usize = 1024;
/// The most memory a compiled matcher may take (the regex crate's size limit).
const MAX_COMPILED_BYTES: usize = 1 << 20;

/// Which firings a group is for.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Every firing.
    Any,
    /// Firings whose name is one of these, exactly.
    Names {
        /// The names.
        names: Vec<String>,
    },
    /// Firings whose name contains a match of this pattern.
    Pattern {
        /// The compiled pattern.
        regex: Regex,
    },
    /// A matcher that could not be compiled: it takes every firing, so that a guard
    /// under it denies rather than never running.
    Broken {
        /// The matcher as written.
        text: String,
        /// Why it could not be compiled.
        reason: String,
    },
}

/// Why a matcher could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatcherError {
    /// It is longer than [`MAX_MATCHER_BYTES`].
    #[error("the matcher is {len} bytes long; at most {MAX_MATCHER_BYTES} are accepted")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// It is not a regular expression the regex crate accepts (or compiles too large).
    #[error("the matcher is not a valid regular expression: {reason}")]
    Regex {
        /// The regex crate's message.
        reason: String,
    },
}

impl Matcher {
    /// The matcher written as `text` (`None`: the key was missing).
    pub fn compile(text: Option<&str>) -> Result<Matcher, MatcherError> {
        let Some(text) = text else {
            return Ok(Matcher::Any);
        };
        if text.len() > MAX_MATCHER_BYTES {
            return Err(MatcherError::TooLong { len: text.len() });
        }
        if text.is_empty() || text == "*" {
            return Ok(Matcher::Any);
        }
        if text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
        {
            let names = text
                .split('|')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            return Ok(Matcher::Names { names });
        }
        RegexBuilder::new(text)
            .size_limit(MAX_COMPILED_BYTES)
            .dfa_size_limit(MAX_COMPILED_BYTES)
            .build()
            .map(|regex| Matcher::Pattern { regex })
            .map_err(|e| MatcherError::Regex {
                reason: e.to_string(),
            })
    }

    /// Whether a firing about `target` runs this group's hooks.
    pub fn takes(&self, target: Target<'_>) -> bool {
        match target {
            Target::Nothing => true,
            Target::Kind { kind } => self.takes_name(kind),
            Target::Tool { name } => {
                self.takes_name(name) || claude_tool_name(name).is_some_and(|n| self.takes_name(n))
            }
        }
    }

    fn takes_name(&self, name: &str) -> bool {
        match self {
            Matcher::Any | Matcher::Broken { .. } => true,
            Matcher::Names { names } => names.iter().any(|n| n == name),
            Matcher::Pattern { regex } => regex.is_match(name),
        }
    }

    /// Why the matcher is broken, when it is.
    pub fn broken_reason(&self) -> Option<&str> {
        match self {
            Matcher::Broken { reason, .. } => Some(reason),
            Matcher::Any | Matcher::Names { .. } | Matcher::Pattern { .. } => None,
        }
    }
}
