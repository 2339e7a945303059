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

use std::path::{Path, PathBuf};

use crate::protocol::{AskBecause, Effect, Offer, RuleView, Source};

pub mod destructive;
pub mod files;
pub mod git_repo;
mod judge;
mod lazy_glob;
pub mod peel;
pub mod readonly;
pub mod reads;
pub mod resolve;
pub mod rule;
pub mod shell;

pub use rule::{Rule, RuleError};

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
    /// A web request to `domain` (lowercased host): `tool(DOMAIN)` rules match it.
    Fetch {
        /// The host.
        domain: &'a str,
    },
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
    /// Allow rules, or what the mode runs by itself, cover all of it.
    Allow {
        /// Whether the mode's own lists were needed.
        by: AllowedBy,
    },
    /// No rule decides; the approval mode does. `offer` is what an "always" answer
    /// would add.
    Undecided {
        /// What "always" would add, or why it cannot be offered.
        offer: Offer,
    },
}

/// Whether a call was allowed by rules alone or needed what the approval mode runs by
/// itself (its read-only commands, its edits inside the project). Ordered from weaker
/// to stronger: a line is as allowed as its weakest part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AllowedBy {
    /// Some part runs only because the mode runs it.
    Mode,
    /// Allow rules cover all of it.
    Rules,
}

/// Whether the read-only command list counts as allowed (the `auto-edit` mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnlyCommands {
    /// Known read-only commands run without asking.
    Allowed,
    /// They are asked about like any other.
    Asked,
}

/// Whether edits inside the project run without asking (so a redirection writing a
/// project file is like any edit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectEdits {
    /// They run (`auto-edit`, `full-auto`).
    Allowed,
    /// They are asked about (`suggest`).
    Asked,
}

/// What the approval mode runs by itself, as far as rules are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeRuns {
    /// The read-only commands.
    pub read_only_commands: ReadOnlyCommands,
    /// Edits inside the project.
    pub project_edits: ProjectEdits,
}

impl ModeRuns {
    /// Nothing runs by itself (`suggest`).
    pub const NOTHING: ModeRuns = ModeRuns {
        read_only_commands: ReadOnlyCommands::Asked,
        project_edits: ProjectEdits::Asked,
    };
    /// Read-only commands and project edits run (`auto-edit`, `full-auto`).
    pub const READS_AND_EDITS: ModeRuns = ModeRuns {
        read_only_commands: ReadOnlyCommands::Allowed,
        project_edits: ProjectEdits::Allowed,
    };
}

/// Where a call is judged: the project, the temp folders (where `rm -r` is not
/// destructive), what the mode runs by itself and whether commands can read secret files.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The working folder: what the mode may read and edit by itself lies beneath it.
    pub project: &'a Path,
    /// The project root ([`crate::project_root`]): where the project's rule file lives,
    /// so relative patterns (the rule file's, the user's, `edit(.harness9/**)`) are
    /// anchored here, and mean the same from any folder of the project.
    pub root: &'a Path,
    /// The temp folders.
    pub temp: &'a [&'a Path],
    /// What the mode runs by itself.
    pub mode: ModeRuns,
    /// Whether commands see the contents of secret files.
    pub secrets: SecretReads,
}

/// Whether the commands of this session can read secret files they do not name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretReads {
    /// The sandbox masks them: a command that reads a whole tree gets nothing of them.
    Masked,
    /// Commands see them: folders a command reads recursively are walked for them.
    Visible,
}

/// The built-in secret-file patterns (`ask` for every tool, even in `full-auto`),
/// matched without regard to case.
pub const SECRET_FILES: &[&str] = &[
    "**/.env*",
    "**/*.pem",
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    "**/*.keystore",
    "**/*.jks",
    "**/*.kdbx",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
    "**/.netrc",
    "**/_netrc",
    "**/.npmrc",
    "**/.pypirc",
    "**/.pgpass",
    "**/.git-credentials",
    "**/.htpasswd",
    "**/.vault-token",
    "**/.ssh/**",
    "**/.gnupg/**",
    "**/.aws/**",
    "**/.config/gcloud/**",
    "**/.config/gh/hosts.yml",
    "**/.azure/**",
    "**/.kube/config",
    "**/kubeconfig",
    "**/*.kubeconfig",
    "**/.docker/config.json",
    "**/.cargo/credentials",
    "**/.cargo/credentials.toml",
    "**/.gem/credentials",
    "**/.terraformrc",
    "**/.terraform.d/credentials.tfrc.json",
    "**/*.tfstate",
    "**/*.tfstate.backup",
    "**/*.tfvars",
    "**/credentials.json",
    "**/*service-account*.json",
    "**/*service_account*.json",
    "**/client_secret*.json",
    "**/secrets.yaml",
    "**/secrets.yml",
    "**/secrets.json",
    "**/secrets.toml",
    "**/.password-store/**",
    "/proc/*/environ",
    "/proc/*/task/*/environ",
    "/proc/*/mem",
    "/proc/*/task/*/mem",
    "/etc/shadow*",
    "/etc/gshadow*",
];

/// The session's secret files beyond the built-in patterns: the user's `secret_files`
/// (config.toml `[permissions]`) and harness9's own home, whose config.toml holds header
/// values and whose sessions hold everything said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretFiles {
    /// More glob patterns, written like the built-in ones.
    pub extra: Vec<String>,
    /// `$HARNESS9_HOME`.
    pub harness_home: Option<PathBuf>,
}

impl SecretFiles {
    /// Every pattern: the built-in ones, the user's, and harness9's home.
    pub fn patterns(&self) -> Vec<String> {
        let mut all: Vec<String> = SECRET_FILES.iter().map(|p| p.to_string()).collect();
        all.extend(self.extra.iter().cloned());
        if let Some(home) = &self.harness_home {
            let home = globset::escape(&crate::paths::normalize(home).to_string_lossy());
            all.push(format!("{}/**", home.trim_end_matches('/')));
        }
        all
    }
}

static SECRET_SET: std::sync::OnceLock<Option<globset::GlobSet>> = std::sync::OnceLock::new();
static CONFIGURED: std::sync::OnceLock<SecretFiles> = std::sync::OnceLock::new();

/// Sets the session's secret files, once, at start-up (before the first call of
/// [`is_secret_file`]; later calls change nothing).
pub fn configure_secret_files(files: SecretFiles) {
    let _ = CONFIGURED.set(files);
}

/// True when `path` matches a secret-file pattern, without regard to case (for tools
/// that read many files at once, like `grep`, and skip those, and for the sandbox's
/// masks).
pub fn is_secret_file(path: &Path) -> bool {
    let set = SECRET_SET.get_or_init(|| {
        let configured = CONFIGURED.get().cloned().unwrap_or_default();
        let mut builder = globset::GlobSetBuilder::new();
        for pattern in configured.patterns() {
            // A user's pattern that does not compile was refused when config.toml was
            // read; the built-in ones are checked by a test.
            if let Ok(glob) = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .case_insensitive(true)
                .build()
            {
                builder.add(glob);
            }
        }
        builder.build().ok()
    });
    // A set that failed to build would skip nothing, and the rules would still ask.
    set.as_ref().is_some_and(|set| set.is_match(path))
}

/// Built-in `ask` rules for edits: files that run code or grant permissions later
/// (git hooks and config; harness9's own permission file).
pub const PROTECTED_EDITS: &[&str] = &["edit(**/.git/**)", "edit(**/.git)", "edit(.harness9/**)"];

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
        configure_secret_files(files::secret_files(&places, user));
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
                root: project.to_path_buf(),
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
    /// The built-in rules with the default secret files only.
    pub fn built_in() -> Rulebook {
        Rulebook::built_in_for(&SecretFiles::default())
    }

    /// The built-in rules: `ask` for every secret file (`secrets`' patterns) and for
    /// edits of the protected paths.
    pub fn built_in_for(secrets: &SecretFiles) -> Rulebook {
        let mut book = Rulebook::default();
        for pattern in secrets.patterns() {
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

    /// The first allow rule that names `host` itself for `tool` (`web_fetch(HOST)`, not
    /// `web_fetch` or `web_fetch(*.DOMAIN)`): what lets a fetch reach an internal address.
    pub fn allow_naming_host(&self, tool: &str, host: &str) -> Option<&ActiveRule> {
        self.first(Effect::Allow, |r| r.names_host(tool, host))
    }

    /// The first rule with `effect` for which `matches` holds.
    fn first(&self, effect: Effect, mut matches: impl FnMut(&Rule) -> bool) -> Option<&ActiveRule> {
        self.rules
            .iter()
            .find(|r| r.effect == effect && matches(&r.rule))
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

#[cfg(test)]
mod attack_tests;
#[cfg(test)]
mod tests;
