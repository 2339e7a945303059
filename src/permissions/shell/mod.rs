//! A careful reader of bash command lines, for approvals: it splits a line into its
//! simple commands (the words of each, after quote removal, its leading variable
//! assignments and its redirections) and names every construct whose effect cannot be
//! read off the text: command and process substitution, here-documents, control
//! structures, a command name that comes from a variable or a glob, wrappers that run
//! another command (`eval`, `sudo`, `xargs`, `bash -c`, `find -exec`, …) and
//! assignments that make a program run other code (`LD_PRELOAD=…`). The other way round,
//! `quote_unless_plain` writes a word so that such a reader reads it back unchanged.
//!
//! It is deliberately conservative: anything it does not understand is a [`Hazard`],
//! and a line with a hazard is never approved by a rule, only by a person. It does not
//! expand anything, never runs anything, and must not know rules, tools or the project.

mod reader;
pub mod semantics;

use reader::Reader;
pub use semantics::{FIND_ACTIONS, HARMLESS_ASSIGNMENTS};

/// What a command line is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Every simple command, in order, including those inside substitutions and
    /// groups (so a deny rule sees them too).
    pub commands: Vec<SimpleCommand>,
    /// Everything that keeps a rule from deciding about the line.
    pub hazards: Vec<Hazard>,
}

impl Parsed {
    /// True when nothing in the line hides what it runs.
    pub fn is_plain(&self) -> bool {
        self.hazards.is_empty()
    }
}

/// One simple command: `NAME=value cmd arg… >file`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` assignments (name, value after quote removal).
    pub assignments: Vec<(String, String)>,
    /// The command name and its arguments, after quote removal.
    pub words: Vec<String>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
}

impl SimpleCommand {
    /// The command name, if there is one.
    pub fn name(&self) -> Option<&str> {
        self.words.first().map(String::as_str)
    }
}

/// A redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// Which way the data flows.
    pub direction: Direction,
    /// The file named (after quote removal).
    pub target: String,
}

/// Which way a redirection moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `<file`: reads the file.
    Read,
    /// `>file`, `>>file`, `&>file`, `<>file`: writes (creates) the file.
    Write,
}

/// A construct whose effect a rule cannot judge from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hazard {
    /// `$(…)` or `` `…` ``: the output of a command becomes part of the line.
    CommandSubstitution,
    /// `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// `<<EOF`: a here-document.
    HereDocument,
    /// `if`, `for`, `while`, `case`, function definitions, `[[ ]]`, `(( ))`, `$(( ))`.
    ControlStructure {
        /// The keyword or construct met.
        what: String,
    },
    /// The command name is not a literal word (`$cmd`, `*.sh`, `{a,b}`).
    ComputedCommandName {
        /// The word as written.
        word: String,
    },
    /// A command that runs another command or code given to it (`eval`, `sudo`,
    /// `xargs`, `bash -c`, `find -exec`, `git -c`, `rg --pre`, …).
    RunsOtherCode {
        /// The command and the part that makes it so.
        what: String,
    },
    /// A word bash expands when it runs: a parameter (`$x`, `${…}`, `${x@P}`), an
    /// arithmetic expansion, or a tilde other than `~`/`~/`. Its value is unknown here.
    Expansion {
        /// The word as read.
        word: String,
    },
    /// A word bash turns into file names or several words: `*`, `?`, `[…]`, `{a,b}`,
    /// `{1..3}`. Which files it names (`-rf`, `.env`) is unknown here.
    Pattern {
        /// The word as read.
        word: String,
    },
    /// An assignment to a variable outside the short list harness9 approves
    /// ([`HARMLESS_ASSIGNMENTS`]): `LD_PRELOAD`, `PATH`, `RUSTFLAGS` and the like make
    /// programs load or run other code.
    Assignment {
        /// The variable.
        name: String,
    },
    /// A simple command with no command: only assignments (`x=…`) or only redirections
    /// (`> file`, which empties the file).
    NotACommand {
        /// What it does instead.
        what: String,
    },
    /// A bash builtin that reads its arguments as variable names (whose subscripts bash
    /// evaluates, running any `$(…)` in them) or as code: `read`, `declare`, `unset`,
    /// `let`, `printf -v`, `test -v`, …
    Builtin {
        /// The builtin and the form used.
        what: String,
    },
    /// `</dev/tcp/HOST/PORT` and the like: bash opens a network connection.
    NetworkRedirection {
        /// The target as written.
        target: String,
    },
    /// Quoting or syntax this reader does not handle (an unterminated quote, `$'…'`,
    /// a file-descriptor variable redirect, …).
    Unsupported {
        /// What it was.
        what: String,
    },
}

impl Hazard {
    /// A few words for a person: why the line can only be approved once.
    pub fn describe(&self) -> String {
        match self {
            Hazard::CommandSubstitution => "it uses command substitution `$(…)`".into(),
            Hazard::ProcessSubstitution => "it uses process substitution `<(…)`".into(),
            Hazard::HereDocument => "it has a here-document".into(),
            Hazard::ControlStructure { what } => format!("it has shell control flow (`{what}`)"),
            Hazard::ComputedCommandName { word } => {
                format!("its command name `{word}` is computed when it runs")
            }
            Hazard::RunsOtherCode { what } => format!("`{what}` runs other code"),
            Hazard::Expansion { word } => {
                format!("`{word}` is expanded when it runs, so its value cannot be judged")
            }
            Hazard::Pattern { word } => {
                format!("`{word}` is a file name pattern, so the words it becomes cannot be judged")
            }
            Hazard::Assignment { name } => format!(
                "it sets {name} for the command (rules approve only {})",
                HARMLESS_ASSIGNMENTS.join(", ")
            ),
            Hazard::NotACommand { what } => format!("it runs no command ({what})"),
            Hazard::Builtin { what } => what.clone(),
            Hazard::NetworkRedirection { target } => {
                format!("its redirection to {target} opens a network connection")
            }
            Hazard::Unsupported { what } => format!("harness9 cannot read {what} safely"),
        }
    }
}

/// Reads a command line.
pub fn parse(line: &str) -> Parsed {
    let mut parsed = Parsed::default();
    Reader::new(line, &mut parsed).list(None);
    dedup(&mut parsed.hazards);
    parsed
}

fn dedup(hazards: &mut Vec<Hazard>) {
    let mut seen: Vec<Hazard> = Vec::with_capacity(hazards.len());
    hazards.retain(|h| {
        if seen.contains(h) {
            false
        } else {
            seen.push(h.clone());
            true
        }
    });
}

/// Words that start a control structure or are reserved where a command name goes.
pub const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "coproc", "[[", "]]", "{", "}", "!", "in",
];

/// `NAME=value` with a valid variable name.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `word` as `sh` reads it back: as it is when every character is `plain` (and it is not
/// empty), else in single quotes, each `'` written `'\''`.
pub fn quote_unless_plain(word: &str, plain: impl Fn(char) -> bool) -> String {
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The first simple command of `line`, for tests; panics when there is none.
#[cfg(test)]
pub(crate) fn first_command(line: &str) -> SimpleCommand {
    parse(line).commands.remove(0)
}

#[cfg(test)]
mod tests;
