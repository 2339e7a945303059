//! The permission rules' values that cross the contract: a rule's [`Effect`] and
//! [`Source`], a rule as frontends list it ([`RuleView`]), why a call is asked about
//! ([`AskBecause`]) and what an "always" answer would add ([`Offer`]). Plain data: the
//! rules themselves and their judgement live in `permissions`.

use std::fmt;
use std::path::PathBuf;

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Runs without asking (in every approval mode).
    Allow,
    /// Asks every time, even in `full-auto`.
    Ask,
    /// Never runs; the model is told which rule refused it.
    Deny,
}

impl Effect {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
}

/// Where a rule comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// harness9's own defaults (secret files, `.git`, `.harness9`).
    BuiltIn,
    /// The user's config.toml.
    User {
        /// The file.
        path: PathBuf,
    },
    /// The project's `.harness9/permissions.toml`.
    Project {
        /// The file.
        path: PathBuf,
    },
    /// An answer given in this session.
    Session,
    /// `--allow` / `--deny` on the command line, for this run only.
    CommandLine,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::BuiltIn => f.write_str("built-in"),
            Source::User { path } | Source::Project { path } => write!(f, "{}", path.display()),
            Source::Session => f.write_str("this session"),
            Source::CommandLine => f.write_str("the command line"),
        }
    }
}

/// One line of the rule list frontends show.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuleView {
    /// Its number in the list (1-based), for removing it.
    pub number: usize,
    /// The rule as written.
    pub rule: String,
    /// What it does.
    pub effect: Effect,
    /// Where it came from.
    pub source: Source,
}

/// Why a call must be asked about regardless of the approval mode.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AskBecause {
    /// An ask rule matched.
    Rule {
        /// The rule.
        rule: String,
        /// Its origin.
        source: Source,
    },
    /// The command destroys work; only an exact rule runs it without asking.
    Destructive {
        /// What it destroys.
        what: String,
        /// The exact rule that would allow it.
        exact_rule: String,
    },
    /// harness9 cannot see what this line runs (a computed command name, a command
    /// string it cannot read, `ssh`, …), so neither deny rules nor the destructive
    /// check can judge it.
    Opaque {
        /// Why the line is opaque.
        why: String,
    },
    /// A hook (PreToolUse `ask`) asked for the user's confirmation.
    Hook {
        /// Which hook, and its reason.
        why: String,
    },
    /// It would run without asking only because the approval mode runs such calls,
    /// and the mode runs them only inside the sandbox, which this session does not have.
    Unconfined {
        /// What is missing.
        why: String,
    },
}

/// What an "always" answer would add.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Offer {
    /// These allow rules.
    Rules {
        /// The rules, as written.
        rules: Vec<String>,
    },
    /// Nothing: this call can only be approved once.
    OnceOnly {
        /// Why.
        why: String,
    },
}
