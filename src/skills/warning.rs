//! Warnings about skills found (or not) at discovery: each names the path, the reason and
//! what to do. Discovery never fails; every problem becomes one of these, shown to the
//! user and logged. This module knows nothing of how they are displayed.

use std::fmt;
use std::path::PathBuf;

use super::name::{NameProblem, escaped, suggested_name};

/// One problem found while discovering skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillWarning {
    /// The file or directory concerned.
    pub path: PathBuf,
    /// What is wrong.
    pub kind: WarningKind,
}

/// What is wrong, with the data needed to say what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WarningKind {
    /// A directory below a skills root holds no `SKILL.md` (nor does anything below it).
    NoSkillMd,
    /// A required frontmatter field is missing or empty: the skill is skipped.
    MissingField {
        /// `name` or `description`.
        field: &'static str,
    },
    /// The name can never be invoked (see [`super::name::name_problem`]): the skill
    /// is skipped.
    InvalidName {
        /// The name (trimmed).
        name: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// The description holds a control character other than a line break or a tab
    /// (ESC, a lone carriage return, a C1 control...): it would reach terminals and the
    /// model's index, so the skill is skipped.
    InvalidDescription {
        /// The first such character.
        found: char,
    },
    /// The file has no usable frontmatter block: the skill is skipped.
    BadFrontmatter {
        /// Why (no opening `---`, no closing `---`, not UTF-8).
        reason: String,
    },
    /// The file or directory could not be read.
    Unreadable {
        /// The I/O error.
        error: String,
    },
    /// The YAML did not parse; fields were read line by line and the skill loaded.
    YamlFallback {
        /// The YAML parser's message.
        error: String,
        /// The field whose unquoted value holds `: `, when spotted.
        field: Option<String>,
    },
    /// A field has a value of the wrong type and was ignored.
    BadField {
        /// The field name.
        field: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A skill with the same name and higher precedence wins; this one is shadowed.
    Shadowed {
        /// The shared name.
        name: String,
        /// The winner's `SKILL.md`.
        winner: PathBuf,
    },
    /// The skill's name is also a built-in slash command, which takes precedence.
    BuiltinCollision {
        /// The shared name.
        name: String,
    },
    /// A skills root exists but is not a directory.
    RootNotDirectory,
    /// Directories below this one were not searched: too deep.
    DepthLimit {
        /// The depth limit below a root.
        limit: usize,
    },
    /// The search of this root stopped: too many directories.
    DirLimit {
        /// The directory limit per root.
        limit: usize,
    },
    /// A command file larger than the cap: not read as a command.
    CommandTooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// A link below a commands folder: commands are read without following links.
    CommandLink,
    /// A project commands folder whose real place is outside the project.
    OutsideProject {
        /// Where it really is.
        real: PathBuf,
    },
    /// A command file with no text.
    EmptyCommand,
    /// A frontmatter field harness9 reads but cannot honour.
    Unsupported {
        /// The field.
        field: &'static str,
        /// What happens instead.
        instead: &'static str,
    },
    /// More command files in one commands folder than are read.
    CommandLimit {
        /// The limit.
        limit: usize,
    },
}

impl fmt::Display for SkillWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.kind)
    }
}

/// The reason and what to do, without the path.
impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarningKind::NoSkillMd => write!(
                f,
                "no SKILL.md in this directory or below it; skipped (add a SKILL.md or \
                 move the folder out of the skills directory)"
            ),
            WarningKind::MissingField { field } => write!(
                f,
                "frontmatter has no `{field}`; skill skipped (add `{field}: ...` between \
                 the `---` lines)"
            ),
            WarningKind::InvalidName { name, problem } => {
                write!(
                    f,
                    "`name` \"{}\" {problem}, so it could never be invoked (`/name`, \
                     `use_skill`, the index); skill skipped (rename it",
                    escaped(name)
                )?;
                match suggested_name(name) {
                    s if s.is_empty() => f.write_str(" with letters, digits and hyphens)"),
                    s => write!(f, ", e.g. `name: {s}`)"),
                }
            }
            WarningKind::InvalidDescription { found } => write!(
                f,
                "`description` holds a control character (U+{:04X}) that could steer a \
                 terminal; skill skipped (remove it: line breaks and tabs are fine)",
                u32::from(*found)
            ),
            WarningKind::BadFrontmatter { reason } => write!(
                f,
                "{reason}; skill skipped (start the file with `---`, then `name:` and \
                 `description:`, then a closing `---`)"
            ),
            WarningKind::Unreadable { error } => write!(f, "cannot read: {error}; skipped"),
            WarningKind::YamlFallback { error, field } => {
                let field = field.as_deref().unwrap_or("description");
                write!(
                    f,
                    "frontmatter is not valid YAML ({error}); read it line by line. Quote \
                     the value of `{field}`, e.g. {field}: \"Use when: ...\" (or use a `>-` block)"
                )
            }
            WarningKind::BadField { field, expected } => {
                write!(f, "`{field}` should be {expected}; the field is ignored")
            }
            WarningKind::Shadowed { name, winner } => write!(
                f,
                "skill `{name}` is shadowed by {} (higher precedence); rename one of them \
                 to use both",
                winner.display()
            ),
            WarningKind::BuiltinCollision { name } => write!(
                f,
                "skill `{name}` has the name of a built-in command; `/{name}` runs the \
                 built-in, use `/skill {name}` for the skill (or rename it)"
            ),
            WarningKind::RootNotDirectory => {
                write!(f, "skills root is not a directory; skipped")
            }
            WarningKind::DepthLimit { limit } => write!(
                f,
                "not searched for skills (more than {limit} levels below the root); move \
                 the skills higher or pass the folder with --skills-dir"
            ),
            WarningKind::DirLimit { limit } => write!(
                f,
                "search stopped after {limit} directories; pass a narrower folder with \
                 --skills-dir"
            ),
            WarningKind::CommandTooLarge { limit } => write!(
                f,
                "command file is larger than {limit} bytes; skipped (shorten it)"
            ),
            WarningKind::CommandLink => write!(
                f,
                "a link; commands are read without following links, so it was skipped \
                 (copy the file instead)"
            ),
            WarningKind::OutsideProject { real } => write!(
                f,
                "leads outside the project (to {}); project commands are read only inside \
                 it, so the folder was skipped",
                real.display()
            ),
            WarningKind::EmptyCommand => write!(f, "command file has no text; skipped"),
            WarningKind::Unsupported { field, instead } => {
                write!(f, "`{field}` is not supported; {instead}")
            }
            WarningKind::CommandLimit { limit } => write!(
                f,
                "only the first {limit} command files of this folder were read"
            ),
        }
    }
}
