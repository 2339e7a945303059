//! Permission rules: `allow`, `ask` and `deny` patterns per tool, from the built-in set
//! (secret files, `.git` and `.harness9`), the user's config.toml, the project's
//! `.harness9/permissions.toml` and the answers given in this session, and the judgement
//! of one call against all of them: deny wins over ask over allow, destructive
//! commands ask unless a rule names them exactly, and a command line whose effect the
//! shell reader cannot see (substitution, `eval`, …) is never allowed by a rule.
//!
//! It owns the rule book and what a judgement says ([`Judgement`]); it must not know the
//! approval mode's defaults (the approval policy in `agent::approval` combines the two),
//! how a frontend asks, or the TOML files' layout (`files.rs`).

use std::fmt;
use std::path::{Path, PathBuf};

pub mod commands;
pub mod files;
pub mod rule;
pub mod shell;

pub use rule::{Rule, RuleError};

use crate::paths;
use shell::{Direction, Parsed, SimpleCommand};

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
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::BuiltIn => f.write_str("built-in"),
            Source::User { path } | Source::Project { path } => write!(f, "{}", path.display()),
            Source::Session => f.write_str("this session"),
        }
    }
}

/// A rule in force, with its effect and origin.
#[derive(Debug, Clone)]
pub struct ActiveRule {
    /// The rule.
    pub rule: Rule,
    /// What it does.
    pub effect: Effect,
    /// Where it came from.
    pub source: Source,
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

/// What a call touches, as rules see it.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A command line run in `cwd`.
    Command {
        /// The line.
        line: &'a str,
        /// Where it runs.
        cwd: &'a Path,
    },
    /// A file read.
    Read {
        /// The path (absolute).
        path: &'a Path,
    },
    /// A call judged by its tool's name alone (an MCP server's tool).
    Call,
    /// A file created or changed.
    Edit {
        /// The path (absolute).
        path: &'a Path,
    },
}

/// What the rules say about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// A deny rule matched.
    Deny {
        /// The rule.
        rule: String,
        /// Its origin.
        source: Source,
    },
    /// It must be asked about, whatever the mode.
    Ask(AskBecause),
    /// Allow rules (or the safe list, where the caller allows it) cover all of it.
    Allow,
    /// No rule decides; the approval mode does. `offer` is what an "always" answer
    /// would add.
    Undecided {
        /// What "always" would add, or why it cannot be offered.
        offer: Offer,
    },
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
    /// A deny rule exists for the tool but cannot see what this line runs.
    Opaque {
        /// Why the line is opaque.
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

/// Whether the read-only command list counts as allowed (the `auto-edit` mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnlyCommands {
    /// Known read-only commands run without asking.
    Allowed,
    /// They are asked about like any other.
    Asked,
}

/// The built-in secret-file patterns (`ask` for every tool, even in `full-auto`).
pub const SECRET_FILES: &[&str] = &[
    "**/.env*",
    "**/*.pem",
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    "**/*.keystore",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
    "**/.netrc",
    "**/.npmrc",
    "**/.pypirc",
    "**/.pgpass",
    "**/.git-credentials",
    "**/.ssh/**",
    "**/.aws/credentials",
    "**/.config/gcloud/**",
    "**/.azure/**",
    "**/.kube/config",
    "**/.docker/config.json",
];

/// True when `path` matches a built-in secret-file pattern (for tools that read many
/// files at once, like `grep`, and skip those).
pub fn is_secret_file(path: &Path) -> bool {
    static SET: std::sync::OnceLock<Option<globset::GlobSet>> = std::sync::OnceLock::new();
    let set = SET.get_or_init(|| {
        let mut builder = globset::GlobSetBuilder::new();
        for pattern in SECRET_FILES {
            let glob = globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .ok()?;
            builder.add(glob);
        }
        builder.build().ok()
    });
    // The patterns are constants a test compiles; a set that failed to build would
    // skip nothing, and the rules would still ask.
    set.as_ref().is_some_and(|set| set.is_match(path))
}

/// Built-in `ask` rules for edits: files that run code or grant permissions later
/// (git hooks and config; harness9's own permission file).
pub const PROTECTED_EDITS: &[&str] = &["edit(**/.git/**)", "edit(.harness9/**)"];

/// The permission rules and where they live, as the session starts.
#[derive(Debug, Clone)]
pub struct PermissionsSetup {
    /// The rules in force.
    pub book: Rulebook,
    /// The project file's `allow` rules this user has not approved (not in force).
    pub untrusted: Vec<String>,
    /// Where the rule files are.
    pub places: files::Places,
    /// Temp folders (where `rm -r` is not destructive).
    pub temp: Vec<PathBuf>,
}

impl PermissionsSetup {
    /// Loads the rule files for `project` (see [`files::load`]).
    pub fn load(
        places: files::Places,
        user: &files::UserPermissions,
    ) -> Result<Self, files::PermissionsError> {
        let loaded = files::load(&places, user)?;
        let mut temp = vec![std::env::temp_dir()];
        if !temp.iter().any(|t| t == Path::new("/tmp")) {
            temp.push(PathBuf::from("/tmp"));
        }
        Ok(PermissionsSetup {
            book: loaded.book,
            untrusted: loaded.untrusted,
            places,
            temp,
        })
    }

    /// Built-in rules only, for a project directory (tests and tools that load no files).
    pub fn built_in(project: &Path, harness_home: &Path) -> Self {
        PermissionsSetup {
            book: Rulebook::built_in(),
            untrusted: Vec::new(),
            places: files::Places {
                user_file: harness_home.join("config.toml"),
                project: project.to_path_buf(),
                harness_home: harness_home.to_path_buf(),
                home: None,
            },
            temp: vec![std::env::temp_dir()],
        }
    }
}

/// Every rule in force.
#[derive(Debug, Clone, Default)]
pub struct Rulebook {
    rules: Vec<ActiveRule>,
}

impl Rulebook {
    /// The built-in rules.
    pub fn built_in() -> Rulebook {
        let mut book = Rulebook::default();
        for pattern in SECRET_FILES {
            book.push_built_in(&format!("*({pattern})"));
        }
        for rule in PROTECTED_EDITS {
            book.push_built_in(rule);
        }
        book
    }

    fn push_built_in(&mut self, text: &str) {
        // The built-in texts are constants checked by a test; one that failed to parse
        // would only be missing from the list.
        if let Ok(rule) = Rule::parse(text, None) {
            self.rules.push(ActiveRule {
                rule,
                effect: Effect::Ask,
                source: Source::BuiltIn,
            });
        }
    }

    /// Adds a rule.
    pub fn push(&mut self, rule: ActiveRule) {
        let duplicate = self.rules.iter().any(|r| {
            r.rule.text() == rule.rule.text() && r.effect == rule.effect && r.source == rule.source
        });
        if !duplicate {
            self.rules.push(rule);
        }
    }

    /// Every rule, numbered as [`Rulebook::remove`] expects.
    pub fn list(&self) -> Vec<RuleView> {
        self.rules
            .iter()
            .enumerate()
            .map(|(i, r)| RuleView {
                number: i + 1,
                rule: r.rule.text().to_string(),
                effect: r.effect,
                source: r.source.clone(),
            })
            .collect()
    }

    /// Removes rule `number` (1-based) and returns it.
    pub fn remove(&mut self, number: usize) -> Option<ActiveRule> {
        (number >= 1 && number <= self.rules.len()).then(|| self.rules.remove(number - 1))
    }

    /// The rules in force.
    pub fn rules(&self) -> &[ActiveRule] {
        &self.rules
    }

    /// Judges a call to `tool`; `project` is the project directory, `temp` the temp
    /// folders (where `rm -r` is not destructive).
    pub fn judge(
        &self,
        tool: &str,
        subject: Subject<'_>,
        project: &Path,
        temp: &[&Path],
        read_only: ReadOnlyCommands,
    ) -> Judgement {
        match subject {
            Subject::Command { line, cwd } => {
                self.judge_command(tool, line, cwd, project, temp, read_only)
            }
            Subject::Read { path } | Subject::Edit { path } => {
                self.judge_path(tool, path, project, matches!(subject, Subject::Edit { .. }))
            }
            Subject::Call => self.judge_call(tool),
        }
    }

    /// A call judged by its tool alone: rules that name the tool (or, for an MCP tool,
    /// its server: `mcp__NAME`) without a pattern; "always" offers the tool's name.
    fn judge_call(&self, tool: &str) -> Judgement {
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(hit) = self.first(effect, |r| r.covers_every_call(tool)) {
                return verdict_of(hit);
            }
        }
        if self
            .first(Effect::Allow, |r| r.covers_every_call(tool))
            .is_some()
        {
            return Judgement::Allow;
        }
        Judgement::Undecided {
            offer: Offer::Rules {
                rules: vec![tool.to_string()],
            },
        }
    }

    fn first(&self, effect: Effect, mut matches: impl FnMut(&Rule) -> bool) -> Option<&ActiveRule> {
        self.rules
            .iter()
            .find(|r| r.effect == effect && matches(&r.rule))
    }

    fn judge_path(&self, tool: &str, path: &Path, project: &Path, edit: bool) -> Judgement {
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(hit) = self.first(effect, |r| r.matches_path(tool, path, project)) {
                return verdict_of(hit);
            }
        }
        if self
            .first(Effect::Allow, |r| r.matches_path(tool, path, project))
            .is_some()
        {
            return Judgement::Allow;
        }
        let inside = paths::normalize(path).starts_with(project);
        let rule = match (edit, inside) {
            (true, true) => "edit(**)".to_string(),
            (true, false) => format!("edit({})", path.display()),
            (false, _) => {
                let dir = path.parent().unwrap_or(path);
                format!("read({}/**)", dir.display())
            }
        };
        Judgement::Undecided {
            offer: Offer::Rules { rules: vec![rule] },
        }
    }

    fn judge_command(
        &self,
        tool: &str,
        line: &str,
        cwd: &Path,
        project: &Path,
        temp: &[&Path],
        read_only: ReadOnlyCommands,
    ) -> Judgement {
        let parsed = shell::parse(line);
        // Deny, then ask: any simple command (substitutions included) or any file it
        // names or writes.
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(hit) = self.command_hit(effect, tool, &parsed, cwd, project) {
                return verdict_of(hit);
            }
        }
        if let Some(why) = self.opaque_to_deny_rules(tool, &parsed) {
            return Judgement::Ask(AskBecause::Opaque { why });
        }
        for command in &parsed.commands {
            if let Some(what) = commands::destructive(command, cwd, project, temp) {
                let named = self
                    .rules
                    .iter()
                    .any(|r| r.effect == Effect::Allow && r.rule.names_exactly(tool, command));
                if !named {
                    return Judgement::Ask(AskBecause::Destructive {
                        what,
                        exact_rule: rule::exact_rule(tool, command),
                    });
                }
            }
        }
        if let Some(hazard) = parsed.hazards.first() {
            return Judgement::Undecided {
                offer: Offer::OnceOnly {
                    why: hazard.describe(),
                },
            };
        }
        if let Some(target) = writes_outside(&parsed, cwd, project, temp) {
            return Judgement::Undecided {
                offer: Offer::OnceOnly {
                    why: format!("it writes to {target}, outside the project"),
                },
            };
        }
        let mut proposed = Vec::new();
        for command in &parsed.commands {
            let allowed = self
                .rules
                .iter()
                .any(|r| r.effect == Effect::Allow && r.rule.matches_command(tool, command))
                || (read_only == ReadOnlyCommands::Allowed && commands::is_read_only(command));
            if !allowed
                && let Some(rule) = rule::proposed_prefix(tool, command)
                && !proposed.contains(&rule)
            {
                proposed.push(rule);
            }
        }
        if proposed.is_empty() && !parsed.commands.is_empty() {
            Judgement::Allow
        } else if proposed.is_empty() {
            Judgement::Undecided {
                offer: Offer::OnceOnly {
                    why: "it runs no command".into(),
                },
            }
        } else {
            Judgement::Undecided {
                offer: Offer::Rules { rules: proposed },
            }
        }
    }

    /// The first rule with `effect` that matches a command of the line, a file one of
    /// its words names (`*(…)` rules), or a file it writes (`edit(…)` and `*(…)` rules).
    fn command_hit(
        &self,
        effect: Effect,
        tool: &str,
        parsed: &Parsed,
        cwd: &Path,
        project: &Path,
    ) -> Option<&ActiveRule> {
        self.rules.iter().filter(|r| r.effect == effect).find(|r| {
            parsed.commands.iter().any(|command| {
                r.rule.matches_command(tool, command)
                    || (*r.rule.tools() == rule::ToolSelector::Any
                        && named_paths(command, cwd)
                            .any(|p| r.rule.matches_path(tool, &p, project)))
                    || command
                        .redirects
                        .iter()
                        .filter(|redirect| redirect.direction == Direction::Write)
                        .any(|redirect| {
                            let path = paths::absolute(&redirect.target, cwd);
                            r.rule.matches_path("write_file", &path, project)
                        })
            })
        })
    }

    /// When deny rules exist for `tool` and the line hides what it runs, why.
    fn opaque_to_deny_rules(&self, tool: &str, parsed: &Parsed) -> Option<String> {
        let has_deny = self.rules.iter().any(|r| {
            r.effect == Effect::Deny
                && r.rule.covers_tool(tool)
                && *r.rule.tools() != rule::ToolSelector::Any
        });
        if !has_deny {
            return None;
        }
        parsed
            .hazards
            .iter()
            .find(|h| {
                matches!(
                    h,
                    shell::Hazard::RunsOtherCode { .. }
                        | shell::Hazard::ComputedCommandName { .. }
                        | shell::Hazard::Unsupported { .. }
                        | shell::Hazard::HereDocument
                )
            })
            .map(|h| {
                format!(
                    "{}, so the deny rules for `{tool}` cannot see what it runs",
                    h.describe()
                )
            })
    }
}

/// The rule list as plain text (for `/permissions`, the REPL and
/// `harness9 permissions list`): one line per rule with its number, effect and origin,
/// then the project file's unapproved `allow` rules.
pub fn describe_list(rules: &[RuleView], untrusted: &[String], project_file: &Path) -> String {
    let width = rules
        .iter()
        .map(|r| r.rule.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    if rules.is_empty() {
        out.push_str("No permission rules are in force.\n");
    }
    for r in rules {
        out.push_str(&format!(
            "{:>3}  {:<5}  {:<width$}  {}\n",
            r.number,
            r.effect.as_str(),
            r.rule,
            r.source
        ));
    }
    if !untrusted.is_empty() {
        out.push_str(&format!(
            "\nNot in force: allow rules in {} you have not approved on this machine \
             (`harness9 permissions trust` approves them):\n",
            project_file.display()
        ));
        for rule in untrusted {
            out.push_str(&format!("       allow  {rule}\n"));
        }
    }
    out.push_str(
        "\nDeny wins over ask over allow. Remove one with /permissions remove N; \
         add rules under [permissions] in config.toml or in .harness9/permissions.toml.\n",
    );
    out
}

fn verdict_of(hit: &ActiveRule) -> Judgement {
    match hit.effect {
        Effect::Deny => Judgement::Deny {
            rule: hit.rule.text().to_string(),
            source: hit.source.clone(),
        },
        _ => Judgement::Ask(AskBecause::Rule {
            rule: hit.rule.text().to_string(),
            source: hit.source.clone(),
        }),
    }
}

/// Every path a simple command's arguments and redirections may name: each argument
/// (and the value of `--opt=value`), resolved against `cwd`.
fn named_paths<'a>(
    command: &'a SimpleCommand,
    cwd: &'a Path,
) -> impl Iterator<Item = PathBuf> + 'a {
    let args = command.words.iter().skip(1).flat_map(|word| {
        let value = word.split_once('=').map(|(_, v)| v.trim_start_matches('@'));
        std::iter::once(word.as_str()).chain(value)
    });
    let redirects = command.redirects.iter().map(|r| r.target.as_str());
    args.chain(redirects)
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .map(move |w| paths::absolute(w, cwd))
}

/// The first file a redirection writes outside the project and the temp folders.
fn writes_outside(parsed: &Parsed, cwd: &Path, project: &Path, temp: &[&Path]) -> Option<String> {
    const HARMLESS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];
    parsed
        .commands
        .iter()
        .flat_map(|c| c.redirects.iter())
        .filter(|r| r.direction == Direction::Write)
        .find(|r| {
            let path = paths::normalize(&paths::absolute(&r.target, cwd));
            !(HARMLESS.iter().any(|h| path == Path::new(h))
                || path.starts_with(project)
                || temp.iter().any(|t| path.starts_with(t)))
        })
        .map(|r| r.target.clone())
}

#[cfg(test)]
mod tests;
