//! Reading and parsing the YAML frontmatter at the top of a `SKILL.md`.
//!
//! This module owns the bounded read of a file's head (it stops at the closing `---`
//! line and never reads the body), the split of a whole file into frontmatter and body,
//! the YAML parse (serde-saphyr with depth and size budgets) and the line-by-line
//! fallback for hand-written frontmatter that is not strict YAML. It knows nothing of
//! roots, precedence or the catalog: it turns bytes into a [`Frontmatter`] plus notes.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::Value;

/// The largest frontmatter read at start-up, in bytes. A file whose closing `---` is not
/// found within this many bytes is reported, not loaded.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// The first read of a `SKILL.md` asks for this many bytes (nine in ten real-world
/// frontmatters fit); later reads double, up to 16 KiB.
const FIRST_READ_BYTES: usize = 512;

/// Everything a skill's frontmatter says, as typed fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frontmatter {
    /// `name`: the skill's identifier (required).
    pub name: Option<String>,
    /// `description`: when to use it (required), exactly as YAML reads it.
    pub description: Option<String>,
    /// `trigger`: keywords, documentation only (never matched automatically).
    pub trigger: Option<String>,
    /// `when_to_use` / `when-to-use`: extra guidance on when to use the skill.
    pub when_to_use: Option<String>,
    /// `allowed-tools`: tools the skill expects to use (string or list in the file).
    pub allowed_tools: Vec<String>,
    /// `user-invocable`: false hides the skill from slash commands (default true).
    pub user_invocable: bool,
    /// `disable-model-invocation`: true leaves the skill out of the index and
    /// `use_skill` (default false); users can still invoke it.
    pub disable_model_invocation: bool,
    /// `argument-hint`: how to call it, e.g. `[file]` (a YAML list is joined back).
    pub argument_hint: Option<String>,
    /// `context`: `fork` runs the skill in a sub-agent (decided by
    /// [`crate::skills::invoke::RunMode`]); other values run it in the conversation.
    pub context: Option<String>,
    /// `license`.
    pub license: Option<String>,
    /// `compatibility`: environment requirements.
    pub compatibility: Option<String>,
    /// `metadata`: free-form map (kept as parsed).
    pub metadata: Option<Value>,
    /// Every other field, kept and ignored.
    pub extra: BTreeMap<String, Value>,
}

impl Frontmatter {
    fn empty() -> Self {
        Frontmatter {
            user_invocable: true,
            ..Frontmatter::default()
        }
    }
}

/// The head of a file up to and including its closing `---` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The YAML text between the `---` lines (BOM removed, CRLF normalised to LF).
    pub yaml: String,
    /// Bytes read from the file to find it.
    pub bytes_read: u64,
}

/// Why the head of a file could not be read as frontmatter.
#[derive(Debug, thiserror::Error)]
pub enum HeadError {
    /// The file does not start with a `---` line.
    #[error("does not start with a `---` frontmatter line")]
    NoFrontmatter,
    /// No closing `---` line within the size limit (or before the end of the file).
    #[error("no closing `---` line within the first {limit} bytes")]
    Unclosed {
        /// The limit that was searched.
        limit: usize,
    },
    /// The frontmatter is not UTF-8.
    #[error("frontmatter is not valid UTF-8")]
    NotUtf8,
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads only the frontmatter of a file: reads in small, growing chunks and stops as soon
/// as the closing `---` line is in the buffer, or at [`MAX_FRONTMATTER_BYTES`].
/// `bytes_read` is added to even when reading fails.
pub fn read_head(reader: &mut dyn Read, bytes_read: &mut u64) -> Result<Head, HeadError> {
    let mut buf: Vec<u8> = Vec::with_capacity(FIRST_READ_BYTES);
    let mut chunk = FIRST_READ_BYTES;
    let mut eof = false;
    loop {
        let start = buf.len();
        let want = chunk.min(MAX_FRONTMATTER_BYTES + 8 - start);
        buf.resize(start + want, 0);
        let n = loop {
            match reader.read(&mut buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    buf.truncate(start);
                    return Err(HeadError::Io(e));
                }
            }
        };
        buf.truncate(start + n);
        *bytes_read += n as u64;
        if n == 0 {
            eof = true;
        }
        match locate(&buf, eof) {
            Located::Found {
                yaml_start,
                yaml_end,
                ..
            } => {
                let yaml = std::str::from_utf8(&buf[yaml_start..yaml_end])
                    .map_err(|_| HeadError::NotUtf8)?;
                return Ok(Head {
                    yaml: yaml.replace("\r\n", "\n"),
                    bytes_read: *bytes_read,
                });
            }
            Located::NoOpening => return Err(HeadError::NoFrontmatter),
            Located::NeedMore if eof || buf.len() >= MAX_FRONTMATTER_BYTES => {
                return Err(HeadError::Unclosed {
                    limit: MAX_FRONTMATTER_BYTES,
                });
            }
            Located::NeedMore => chunk = (chunk * 2).min(16 * 1024),
        }
    }
}

enum Located {
    Found {
        yaml_start: usize,
        yaml_end: usize,
        body_start: usize,
    },
    NoOpening,
    NeedMore,
}

/// Finds the frontmatter in the first bytes of a file. With `eof` false, an incomplete
/// last line is not trusted.
fn locate(buf: &[u8], eof: bool) -> Located {
    let bom = if buf.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut lines = Lines { buf, pos: bom, eof };
    match lines.next() {
        None if !eof && is_prefix_of_opening(&buf[bom..]) => Located::NeedMore,
        None => Located::NoOpening,
        Some((line, _, _)) if !is_delimiter(line) => Located::NoOpening,
        Some((_, _, yaml_start)) => {
            for (line, line_start, next) in lines {
                if is_delimiter(line) {
                    return Located::Found {
                        yaml_start,
                        yaml_end: line_start,
                        body_start: next,
                    };
                }
            }
            Located::NeedMore
        }
    }
}

fn is_prefix_of_opening(bytes: &[u8]) -> bool {
    let trimmed_len = bytes.len().min(3);
    bytes[..trimmed_len] == b"---"[..trimmed_len]
        && bytes[trimmed_len..]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// A `---` line, allowing trailing spaces and a CR.
fn is_delimiter(line: &[u8]) -> bool {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b' ' | b'\t' | b'\r') {
        end -= 1;
    }
    &line[..end] == b"---"
}

/// Complete lines of a buffer: (line without `\n`, its start, the next line's start).
struct Lines<'a> {
    buf: &'a [u8],
    pos: usize,
    eof: bool,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (&'a [u8], usize, usize);
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let start = self.pos;
        match self.buf[start..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                self.pos = start + i + 1;
                Some((&self.buf[start..start + i], start, self.pos))
            }
            None if self.eof => {
                self.pos = self.buf.len();
                Some((&self.buf[start..], start, self.pos))
            }
            None => None,
        }
    }
}

/// Splits a whole file into (frontmatter YAML, body). CRLF becomes LF and a BOM is
/// dropped; the body is everything after the closing `---` line, untrimmed.
pub fn split(text: &str) -> Result<(String, String), HeadError> {
    let bytes = text.as_bytes();
    match locate(bytes, true) {
        Located::Found {
            yaml_start,
            yaml_end,
            body_start,
        } => {
            let yaml = text[yaml_start..yaml_end].replace("\r\n", "\n");
            let body = text[body_start..].replace("\r\n", "\n");
            Ok((yaml, body))
        }
        Located::NoOpening => Err(HeadError::NoFrontmatter),
        Located::NeedMore => Err(HeadError::Unclosed { limit: text.len() }),
    }
}

/// What [`ParseNote::BadField`] says a field should be: `expected` is always one of these
/// (the discovery cache stores the position in this list).
pub const EXPECTED: [&str; 3] = [EXPECT_STRING, EXPECT_TOOLS, EXPECT_BOOL];
const EXPECT_STRING: &str = "a string";
const EXPECT_TOOLS: &str = "a string or a list of strings";
const EXPECT_BOOL: &str = "true or false";

/// A note about the frontmatter that did not stop the skill from loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseNote {
    /// The YAML did not parse; `name` and `description` were read line by line.
    Fallback {
        /// The YAML parser's message (first line).
        error: String,
        /// The field whose unquoted value holds `: `, when one was spotted.
        field: Option<String>,
    },
    /// A field has a value of the wrong type and was ignored.
    BadField {
        /// The field name as written.
        field: String,
        /// What was expected.
        expected: &'static str,
    },
}

/// Parses frontmatter YAML. Never fails: YAML that does not parse falls back to reading
/// top-level `key: value` lines, with a [`ParseNote::Fallback`].
pub fn parse(yaml: &str) -> (Frontmatter, Vec<ParseNote>) {
    if let Some(map) = parse_simple(yaml) {
        return from_map(map);
    }
    match parse_yaml(yaml) {
        Ok(map) => from_map(map),
        // `argument-hint: [issue] [priority]`, as Claude Code documents it, is not
        // YAML (a list followed by text): read as the text it is meant to be.
        Err(_) if let Some(Ok(map)) = quoted_hint(yaml).map(|y| parse_yaml(&y)) => from_map(map),
        Err(error) => {
            let (fm, mut notes) = from_map(fallback_map(yaml));
            let field = colon_field(yaml);
            notes.insert(0, ParseNote::Fallback { error, field });
            (fm, notes)
        }
    }
}

/// Parses frontmatter YAML into its raw map, as [`parse`] reads it before typing the
/// fields: strict YAML, else top-level `key: value` lines with the parser's message.
/// For other files in the same Markdown-with-frontmatter shape (agent definitions).
pub fn parse_map(yaml: &str) -> (serde_json::Map<String, Value>, Option<String>) {
    if let Some(map) = parse_simple(yaml) {
        return (map, None);
    }
    match parse_yaml(yaml) {
        Ok(map) => (map, None),
        Err(error) => (fallback_map(yaml), Some(error)),
    }
}

/// `yaml` with an unquoted `argument-hint` value that starts with `[` quoted, when
/// there is one.
fn quoted_hint(yaml: &str) -> Option<String> {
    let mut changed = false;
    let lines: Vec<String> = yaml
        .lines()
        .map(|line| match top_level_pair(line) {
            Some((key @ ("argument-hint" | "argument_hint"), rest))
                if rest.trim().starts_with('[') =>
            {
                changed = true;
                format!("{key}: '{}'", rest.trim().replace('\'', "''"))
            }
            _ => line.to_string(),
        })
        .collect();
    changed.then(|| lines.join("\n"))
}

/// Strict YAML parse into a map, within budgets suited to a few kilobytes of metadata.
pub fn parse_yaml(yaml: &str) -> Result<serde_json::Map<String, Value>, String> {
    if yaml.trim().is_empty() {
        return Ok(serde_json::Map::new());
    }
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: Some(MAX_FRONTMATTER_BYTES),
            max_depth: 32,
            max_nodes: 20_000,
            max_events: 50_000,
            max_aliases: 256,
            max_anchors: 256,
            max_documents: 1,
            max_total_scalar_bytes: MAX_FRONTMATTER_BYTES,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
    };
    // Like the reference loaders, which see the frontmatter without its last line
    // break: a `>` or `|` block that ends the frontmatter keeps no trailing newline.
    let yaml = yaml.trim_end_matches(['\n', '\r']);
    let value: Value = serde_saphyr::from_str_with_options(yaml, options).map_err(|e| {
        e.to_string()
            .lines()
            .next()
            .unwrap_or("invalid YAML")
            .to_string()
    })?;
    match value {
        Value::Object(mut map) => {
            clip_final_block(yaml, &mut map);
            Ok(map)
        }
        Value::Null => Ok(serde_json::Map::new()),
        _ => Err("frontmatter is not a mapping of `key: value` fields".to_string()),
    }
}

/// The fast path for the common case, frontmatter made only of `key: plain text` lines
/// whose values any YAML parser reads as exactly that text (or as `true`/`false`/null).
/// `None` as soon as anything needs the real parser: indentation, lists, blocks, quotes,
/// comments after values, `: ` inside a value, values that may be numbers.
fn parse_simple(yaml: &str) -> Option<serde_json::Map<String, Value>> {
    let mut map = serde_json::Map::new();
    for line in yaml.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, rest) = top_level_pair(line)?;
        let v = rest.trim();
        let value = match v {
            "" | "~" | "null" | "Null" | "NULL" => Value::Null,
            "true" | "True" | "TRUE" => Value::Bool(true),
            "false" | "False" | "FALSE" => Value::Bool(false),
            _ if plain_text(v) => Value::String(v.to_string()),
            _ => return None,
        };
        map.insert(key.to_string(), value);
    }
    Some(map)
}

/// True when a plain YAML scalar reads as exactly `v` (a string, not a number, not
/// something with structure or a comment).
fn plain_text(v: &str) -> bool {
    let Some(first) = v.bytes().next() else {
        return false;
    };
    let starts_special = b"-?:,[]{}#&*!|>'\"%@`+.".contains(&first) || first.is_ascii_digit();
    !starts_special
        && !v.contains(": ")
        && !v.contains(" #")
        && !v.ends_with(':')
        && !v.contains('\t')
        && v.chars().all(|c| !c.is_control())
}

/// A `|` or `>` block (clip chomping) that ends the frontmatter has no final line break
/// to keep: the reference loaders (PyYAML) return it without one, serde-saphyr with one.
fn clip_final_block(yaml: &str, map: &mut serde_json::Map<String, Value>) {
    let Some((key, raw)) = yaml.lines().rev().find_map(top_level_pair) else {
        return;
    };
    let header = raw.trim();
    let is_clip_block = (header.starts_with('|') || header.starts_with('>'))
        && !header.split('#').next().unwrap_or("").contains(['+', '-']);
    if let (true, Some(Value::String(v))) = (is_clip_block, map.get_mut(key))
        && v.ends_with('\n')
    {
        v.pop();
    }
}

fn from_map(map: serde_json::Map<String, Value>) -> (Frontmatter, Vec<ParseNote>) {
    let mut fm = Frontmatter::empty();
    let mut notes = Vec::new();
    for (key, value) in map {
        let mut text = |slot: &mut Option<String>| match scalar_text(&value) {
            Some(s) => *slot = Some(s),
            None if value.is_null() => {}
            None => notes.push(ParseNote::BadField {
                field: key.clone(),
                expected: EXPECT_STRING,
            }),
        };
        match key.as_str() {
            "name" => text(&mut fm.name),
            "description" => text(&mut fm.description),
            "trigger" => text(&mut fm.trigger),
            "when_to_use" | "when-to-use" => text(&mut fm.when_to_use),
            "context" => text(&mut fm.context),
            "license" => text(&mut fm.license),
            "compatibility" => text(&mut fm.compatibility),
            "argument-hint" | "argument_hint" => match &value {
                Value::Array(items) => {
                    let parts: Vec<String> = items.iter().map(hint_item).collect();
                    fm.argument_hint = Some(parts.join(" "));
                }
                _ => text(&mut fm.argument_hint),
            },
            "allowed-tools" | "allowed_tools" => match tool_list(&value) {
                Some(list) => fm.allowed_tools = list,
                None => notes.push(ParseNote::BadField {
                    field: key.clone(),
                    expected: EXPECT_TOOLS,
                }),
            },
            "user-invocable" | "user_invocable" => match boolean(&value) {
                Some(b) => fm.user_invocable = b,
                None => notes.push(ParseNote::BadField {
                    field: key.clone(),
                    expected: EXPECT_BOOL,
                }),
            },
            "disable-model-invocation" | "disable_model_invocation" => match boolean(&value) {
                Some(b) => fm.disable_model_invocation = b,
                None => notes.push(ParseNote::BadField {
                    field: key.clone(),
                    expected: EXPECT_BOOL,
                }),
            },
            "metadata" => fm.metadata = Some(value),
            _ => {
                fm.extra.insert(key, value);
            }
        }
    }
    (fm, notes)
}

/// A scalar as text: strings as they are, numbers and booleans spelled out.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `argument-hint: [file]` is a YAML list holding `file`: give the brackets back.
fn hint_item(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(hint_item).collect();
            format!("[{}]", inner.join(" "))
        }
        other => format!("[{}]", scalar_text(other).unwrap_or_default()),
    }
}

fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(true),
            "false" | "no" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// `allowed-tools` as a list: a YAML list, or a string split at commas and at spaces
/// outside parentheses (`Bash(git diff:*) Read, Grep`).
fn tool_list(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::String(s) => Some(split_tools(s)),
        Value::Array(items) => items
            .iter()
            .map(scalar_text)
            .collect::<Option<Vec<_>>>()
            .map(|v| {
                v.into_iter()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            }),
        _ => None,
    }
}

fn split_tools(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' if depth == 0 => push_tool(&mut out, &mut cur),
            c if c.is_whitespace() && depth == 0 => push_tool(&mut out, &mut cur),
            c => cur.push(c),
        }
    }
    push_tool(&mut out, &mut cur);
    out
}

fn push_tool(out: &mut Vec<String>, cur: &mut String) {
    let t = cur.trim();
    if !t.is_empty() {
        out.push(t.to_string());
    }
    cur.clear();
}

/// Line-by-line reading of top-level `key: value` lines, for frontmatter that is not
/// strict YAML. Handles quoted values, `|` and `>` blocks and indented continuation
/// lines; everything after the first `: ` of a line is its value.
fn fallback_map(yaml: &str) -> serde_json::Map<String, Value> {
    let mut map = serde_json::Map::new();
    let lines: Vec<&str> = yaml.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let Some((key, raw)) = top_level_pair(line) else {
            continue;
        };
        let raw = raw.trim();
        // Indented lines that follow belong to this value.
        let mut cont: Vec<&str> = Vec::new();
        while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with([' ', '\t'])) {
            cont.push(lines[i]);
            i += 1;
        }
        while cont.last().is_some_and(|l| l.trim().is_empty()) {
            cont.pop();
        }
        let value = if raw.starts_with('|') || raw.starts_with('>') {
            block_scalar(raw, &cont)
        } else if cont.is_empty() {
            unquote(raw)
        } else {
            let mut parts = vec![raw.to_string()];
            parts.extend(cont.iter().map(|l| l.trim().to_string()));
            unquote(
                &parts
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        };
        map.insert(key.to_string(), Value::String(value));
    }
    map
}

fn top_level_pair(line: &str) -> Option<(&str, &str)> {
    if line.starts_with([' ', '\t', '#', '-']) {
        return None;
    }
    let colon = line.find(':')?;
    let key = &line[..colon];
    let valid = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let rest = &line[colon + 1..];
    (valid && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some((key, rest))
}

fn block_scalar(header: &str, lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        .map(|l| if l.len() >= indent { &l[indent..] } else { "" })
        .collect();
    if header.starts_with('|') {
        body.join("\n")
    } else {
        let mut out = String::new();
        for l in body {
            if l.is_empty() {
                out.push('\n');
            } else {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push(' ');
                }
                out.push_str(l);
            }
        }
        out
    }
}

fn unquote(raw: &str) -> String {
    let raw = raw.trim();
    let quoted = raw.len() >= 2
        && ((raw.starts_with('"') && raw.ends_with('"'))
            || (raw.starts_with('\'') && raw.ends_with('\'')));
    if quoted {
        raw[1..raw.len() - 1].to_string()
    } else {
        raw.to_string()
    }
}

/// The first top-level field whose unquoted value contains `: ` (the usual reason hand-
/// written frontmatter fails to parse).
fn colon_field(yaml: &str) -> Option<String> {
    yaml.lines().find_map(|line| {
        let (key, rest) = top_level_pair(line)?;
        let v = rest.trim();
        let quoted = v.starts_with('"') || v.starts_with('\'');
        (!quoted && (v.contains(": ") || v.ends_with(':'))).then(|| key.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Head, HeadError> {
        let mut n = 0;
        read_head(&mut text.as_bytes(), &mut n)
    }

    #[test]
    fn claude_codes_argument_hints_read_as_text() {
        let (fm, notes) =
            parse("description: Fix it\nargument-hint: [pr-number] [priority] [assignee]\n");
        assert_eq!(notes, []);
        assert_eq!(
            fm.argument_hint.as_deref(),
            Some("[pr-number] [priority] [assignee]")
        );
        assert_eq!(fm.description.as_deref(), Some("Fix it"));
        // A real list still reads as a list joined back.
        let (fm, notes) = parse("argument-hint: [a, b]\n");
        assert_eq!(
            (fm.argument_hint.as_deref(), notes),
            (Some("[a] [b]"), vec![])
        );
    }

    #[test]
    fn reads_plain_frontmatter() {
        let h = head("---\nname: a\ndescription: b\n---\nbody\n").unwrap();
        assert_eq!(h.yaml, "name: a\ndescription: b\n");
        let (fm, notes) = parse(&h.yaml);
        assert_eq!(fm.name.as_deref(), Some("a"));
        assert_eq!(fm.description.as_deref(), Some("b"));
        assert!(fm.user_invocable);
        assert!(notes.is_empty());
    }

    #[test]
    fn accepts_crlf_and_bom() {
        let text = "\u{FEFF}---\r\nname: a\r\ndescription: b c\r\n---\r\nbody\r\n";
        let h = head(text).unwrap();
        assert_eq!(h.yaml, "name: a\ndescription: b c\n");
        let (fm, _) = parse(&h.yaml);
        assert_eq!(fm.description.as_deref(), Some("b c"));
        let (_, body) = split(text).unwrap();
        assert_eq!(body, "body\n");
    }

    #[test]
    fn no_frontmatter_and_unclosed_are_errors() {
        assert!(matches!(head("# Title\n"), Err(HeadError::NoFrontmatter)));
        assert!(matches!(head(""), Err(HeadError::NoFrontmatter)));
        assert!(matches!(
            head("---\nname: a\n"),
            Err(HeadError::Unclosed { .. })
        ));
        let huge = format!("---\nname: a\n{}", "x: y\n".repeat(20_000));
        assert!(matches!(head(&huge), Err(HeadError::Unclosed { .. })));
    }

    #[test]
    fn closing_line_without_newline_at_eof() {
        let h = head("---\nname: a\ndescription: b\n---").unwrap();
        assert_eq!(h.yaml, "name: a\ndescription: b\n");
    }

    #[test]
    fn stops_reading_at_the_closing_line() {
        let text = format!(
            "---\nname: a\ndescription: b\n---\n{}",
            "body ".repeat(100_000)
        );
        let mut n = 0;
        read_head(&mut text.as_bytes(), &mut n).unwrap();
        assert!(n <= 1024, "read {n} bytes");
    }

    #[test]
    fn literal_and_folded_blocks() {
        let (fm, _) = parse("name: a\ndescription: |-\n  line one\n  line two\n");
        assert_eq!(fm.description.as_deref(), Some("line one\nline two"));
        let (fm, _) = parse("name: a\ndescription: >\n  folded one\n  folded two\n");
        assert_eq!(fm.description.as_deref(), Some("folded one folded two"));
        let (fm, _) = parse("description: >\n  folded one\n  folded two\nname: a\n");
        assert_eq!(fm.description.as_deref(), Some("folded one folded two\n"));
    }

    #[test]
    fn unquoted_colon_falls_back_with_a_note() {
        let yaml = "name: deploy\ndescription: Use when: deploying to prod\nlicense: MIT\n";
        let (fm, notes) = parse(yaml);
        assert_eq!(fm.name.as_deref(), Some("deploy"));
        assert_eq!(
            fm.description.as_deref(),
            Some("Use when: deploying to prod")
        );
        assert_eq!(fm.license.as_deref(), Some("MIT"));
        match &notes[0] {
            ParseNote::Fallback { field, .. } => assert_eq!(field.as_deref(), Some("description")),
            other => panic!("unexpected note {other:?}"),
        }
    }

    #[test]
    fn argument_hint_list_and_allowed_tools_forms() {
        let (fm, notes) =
            parse("argument-hint: [file]\nallowed-tools: Read, Bash(git diff:*) Grep\n");
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(fm.argument_hint.as_deref(), Some("[file]"));
        assert_eq!(fm.allowed_tools, vec!["Read", "Bash(git diff:*)", "Grep"]);
        let (fm, _) =
            parse("argument-hint: <required-arg> [optional-arg]\nallowed-tools: [Read, Glob]\n");
        assert_eq!(
            fm.argument_hint.as_deref(),
            Some("<required-arg> [optional-arg]")
        );
        assert_eq!(fm.allowed_tools, vec!["Read", "Glob"]);
        let (fm, _) = parse("allowed-tools:\n  - Read\n  - Bash(ls:*)\n");
        assert_eq!(fm.allowed_tools, vec!["Read", "Bash(ls:*)"]);
    }

    #[test]
    fn booleans_metadata_and_extra_fields() {
        let yaml = "name: a\ndescription: b\nuser-invocable: false\ndisable-model-invocation: true\n\
                    when-to-use: sometimes\nmetadata:\n  tags: [x, y]\nversion: 1.0.0\nmodel: opus\n";
        let (fm, notes) = parse(yaml);
        assert!(notes.is_empty());
        assert!(!fm.user_invocable);
        assert!(fm.disable_model_invocation);
        assert_eq!(fm.when_to_use.as_deref(), Some("sometimes"));
        assert_eq!(fm.metadata, Some(serde_json::json!({"tags": ["x", "y"]})));
        assert_eq!(
            fm.extra.get("version"),
            Some(&Value::String("1.0.0".into()))
        );
        assert!(fm.extra.contains_key("model"));
    }

    #[test]
    fn fast_path_agrees_with_the_yaml_parser() {
        for yaml in [
            "name: a\ndescription: Use when refactoring Go code — team conventions\n",
            "name: a\n# comment\n\ndescription: C# and F# tips, 50% off\nuser-invocable: false\n",
            "name: a\ndescription: x\nlicense:\nversion: ~\nflag: True\n",
            "name: a\nname: b\ndescription: last wins\n",
        ] {
            let fast = parse_simple(yaml).unwrap();
            assert_eq!(Ok(fast), parse_yaml(yaml), "{yaml}");
        }
        for yaml in [
            "name: a\ndescription: \"quoted\"\n",
            "version: 1.0\n",
            "description: a: b\n",
            "description: x # comment\n",
            "allowed-tools:\n  - Read\n",
            "description: >\n  folded\n",
            "argument-hint: [file]\n",
            "name: -x\n",
            "name: .inf\n",
        ] {
            assert_eq!(parse_simple(yaml), None, "{yaml}");
        }
    }

    #[test]
    fn wrong_types_are_noted() {
        let (fm, notes) = parse("name: [a, b]\ndescription: ok\nuser-invocable: maybe\n");
        assert_eq!(fm.name, None);
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn deep_nesting_is_refused_by_the_budget_and_falls_back() {
        let yaml = format!(
            "name: a\ndescription: b\nx: {}{}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let (fm, notes) = parse(&yaml);
        assert_eq!(fm.name.as_deref(), Some("a"));
        assert!(matches!(notes[0], ParseNote::Fallback { .. }));
    }

    #[test]
    fn split_keeps_the_body_untrimmed() {
        let (yaml, body) = split("---\nname: a\n---\n\n# Title\n\ntext\n").unwrap();
        assert_eq!(yaml, "name: a\n");
        assert_eq!(body, "\n# Title\n\ntext\n");
    }
}
