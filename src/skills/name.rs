//! Skill names: what keeps a name from ever being invoked ([`name_problem`]: whitespace,
//! separators, `..`, control or invisible characters), and how to show a name that
//! has such characters on one line ([`shown_name`], [`escaped`]) or suggest a usable one
//! ([`suggested_name`]). Asked by the verdict on a skill (`assess`), its warnings and
//! `use_skill`. It knows nothing of files or frontmatter.

use std::borrow::Cow;
use std::fmt;

/// Why a name can never be invoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    /// A control character (a line break, a tab, ...) or an invisible formatting one
    /// (zero-width space, bidirectional override, ...): it breaks the one-line index
    /// and cannot be typed or seen.
    Unprintable {
        /// The first such character.
        found: char,
    },
    /// A space or other whitespace: `/name` would end at it.
    Whitespace,
    /// `/` or `\`: `/a/b` is a path, and `use_skill` refuses separators.
    Separator {
        /// The separator found.
        found: char,
    },
    /// `..`: `use_skill` refuses it (it reads like a path out of the skills root).
    ParentDir,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameProblem::Unprintable { found } => write!(
                f,
                "holds an unprintable character (U+{:04X})",
                u32::from(*found)
            ),
            NameProblem::Whitespace => f.write_str("holds whitespace"),
            NameProblem::Separator { found } => write!(f, "holds `{found}`"),
            NameProblem::ParentDir => f.write_str("holds `..`"),
        }
    }
}

/// Why `name` (already trimmed) can never be invoked, or `None` when it can. Only what
/// breaks invocation counts: uppercase letters, dots, `:` and long names work.
pub fn name_problem(name: &str) -> Option<NameProblem> {
    if let Some(found) = name.chars().find(|&c| unprintable(c)) {
        return Some(NameProblem::Unprintable { found });
    }
    if name.chars().any(char::is_whitespace) {
        return Some(NameProblem::Whitespace);
    }
    if let Some(found) = name.chars().find(|c| matches!(c, '/' | '\\')) {
        return Some(NameProblem::Separator { found });
    }
    if name.contains("..") {
        return Some(NameProblem::ParentDir);
    }
    None
}

/// Control characters and the invisible formatting ones (soft hyphen, zero-width
/// spaces and joiners, bidirectional marks and overrides, word joiner, BOM).
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// A name as one printable token: as it is when it holds no whitespace or unprintable
/// character, else quoted with those escaped (`"new\nline"`), so a report stays one line.
pub fn shown_name(name: &str) -> Cow<'_, str> {
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || unprintable(c)) {
        Cow::Owned(format!("\"{}\"", escaped(name)))
    } else {
        Cow::Borrowed(name)
    }
}

/// `name` with its unprintable characters and whitespace other than a space escaped
/// (`\n`, `\t`, `\u{200b}`); everything else, backslashes and quotes included, as is.
pub fn escaped(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if unprintable(c) || (c.is_whitespace() && c != ' ') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A name in the specification's form close to `name`: lowercase letters and digits,
/// other runs of characters made one hyphen (`Bad Name` → `bad-name`, `../x` → `x`).
/// Empty when nothing of `name` is left.
pub fn suggested_name(name: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() && !unprintable(c) {
            if gap && !out.is_empty() {
                out.push('-');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}
