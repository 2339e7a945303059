//! Where rules live on disk: the `[permissions]` table of the user's config.toml, the
//! project's `.harness9/permissions.toml` (meant to be committed), and the list of the
//! project file's `allow` rules this user has approved on this machine
//! (`$HARNESS9_HOME/permissions/trusted.json`).
//!
//! A project file comes with the repository, so it is untrusted input: its `deny` and
//! `ask` rules always apply (they only take rights away), but an `allow` rule applies
//! only once this user approved it — by answering "this project" to a prompt (harness9
//! writes the rule and records it) or with `harness9 permissions trust`. Rules are added
//! and removed with `toml_edit`, so a person's comments and layout survive, each change
//! a locked read-change-write ([`crate::private_files::update`]) so that two harness9
//! processes never lose each other's rules or approvals.
//!
//! The rules of `--allow` and `--deny` join the book here too, for one run.
//!
//! It owns the file formats and the trust list; it must not know how a call is judged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ActiveRule, Rule, RuleError, Rulebook};
use crate::private_files::{self, Links, Privacy, UpdateIoError, UpdateMode};
use crate::protocol::{Effect, Source};

/// The project file, relative to the project directory.
pub const PROJECT_FILE: &str = ".harness9/permissions.toml";

/// The `[permissions]` table of config.toml (the same keys as the project file, plus
/// `builtin_rules`).
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UserPermissions {
    /// Rules that run without asking.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules that always ask.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Rules that never run.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Whether the built-in rules (secret files, `.git`, `.harness9`) apply.
    #[serde(default)]
    pub builtin_rules: BuiltinRules,
    /// More secret-file patterns (globs like `**/*.secret`), asked about like the
    /// built-in ones and masked in the sandbox.
    #[serde(default)]
    pub secret_files: Vec<String>,
}

/// The session's secret files: the user's extra patterns (`~/…` in the home folder,
/// relative ones in the project, `**/…` at any depth) and harness9's home.
pub fn secret_files(places: &Places, user: &UserPermissions) -> super::SecretFiles {
    let anchored = |pattern: &String| {
        let escape = |p: &Path| globset::escape(&p.to_string_lossy());
        match (pattern.strip_prefix("~/"), &places.home) {
            (Some(rest), Some(home)) => format!("{}/{rest}", escape(home)),
            _ if pattern.starts_with('/') || pattern.starts_with("**/") => pattern.clone(),
            _ => format!("{}/{pattern}", escape(&places.root)),
        }
    };
    super::SecretFiles {
        extra: user.secret_files.iter().map(anchored).collect(),
        harness_home: Some(places.harness_home.clone()),
    }
}

/// Whether the built-in rules apply (set only in the user's config.toml: a project
/// file cannot switch them off).
#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BuiltinRules {
    /// They apply (the default).
    #[default]
    On,
    /// They do not.
    Off,
}

/// The project file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectRules {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

/// Why rules could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PermissionsError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file is not valid TOML or has unknown keys.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// A rule given with `--allow` or `--deny` cannot be read.
    #[error("{flag} {source}")]
    CommandLine {
        /// The flag (`--allow` or `--deny`).
        flag: &'static str,
        /// The rule and the reason.
        source: RuleError,
    },
    /// A rule cannot be read.
    #[error("{path}: {source}")]
    Rule {
        /// The file.
        path: PathBuf,
        /// The rule and the reason.
        source: RuleError,
    },
}

/// Everything the rule files say, loaded.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The rules in force.
    pub book: Rulebook,
    /// `allow` rules of the project file this user has not approved (not in force).
    pub untrusted: Vec<String>,
    /// The project file.
    pub project_file: PathBuf,
}

/// Where the files are.
#[derive(Debug, Clone)]
pub struct Places {
    /// The user's config.toml (for messages and edits).
    pub user_file: PathBuf,
    /// The working folder (what the mode reads and edits by itself lies beneath it).
    pub project: PathBuf,
    /// The project root ([`crate::project_root`]): the rule file is in its
    /// `.harness9/`, and relative patterns are anchored here.
    pub root: PathBuf,
    /// `$HARNESS9_HOME`.
    pub harness_home: PathBuf,
    /// The user's home directory, for `~/` in patterns.
    pub home: Option<PathBuf>,
}

impl Places {
    /// The project's rule file.
    pub fn project_file(&self) -> PathBuf {
        self.root.join(PROJECT_FILE)
    }

    fn trust_file(&self) -> PathBuf {
        self.harness_home.join("permissions").join("trusted.json")
    }
}

/// Loads the built-in rules, the user's and the project's.
pub fn load(places: &Places, user: &UserPermissions) -> Result<Loaded, PermissionsError> {
    for pattern in &user.secret_files {
        if let Err(e) = globset::Glob::new(pattern) {
            return Err(PermissionsError::Rule {
                path: places.user_file.clone(),
                source: RuleError {
                    rule: format!("secret_files: {pattern}"),
                    reason: format!("not a valid path pattern: {}", e.kind()),
                },
            });
        }
    }
    let mut book = match user.builtin_rules {
        BuiltinRules::On => Rulebook::built_in_for(&secret_files(places, user)),
        BuiltinRules::Off => Rulebook::default(),
    };
    let home = places.home.as_deref();
    let user_source = Source::User {
        path: places.user_file.clone(),
    };
    let lists = [&user.deny, &user.ask, &user.allow];
    for (effect, rule) in parse_rules(lists, &places.user_file, home)? {
        book.push(ActiveRule {
            rule,
            effect,
            source: user_source.clone(),
        });
    }
    let project_file = places.project_file();
    let project = read_project(&project_file)?;
    let trusted = read_trust(places)?;
    let trusted_here = trusted
        .get(&key(&project_file))
        .cloned()
        .unwrap_or_default();
    let project_source = Source::Project {
        path: project_file.clone(),
    };
    let mut untrusted = Vec::new();
    let lists = [&project.deny, &project.ask, &project.allow];
    for (effect, rule) in parse_rules(lists, &project_file, home)? {
        if effect == Effect::Allow && !trusted_here.iter().any(|t| t == rule.text()) {
            untrusted.push(rule.text().to_string());
            continue;
        }
        book.push(ActiveRule {
            rule,
            effect,
            source: project_source.clone(),
        });
    }
    Ok(Loaded {
        book,
        untrusted,
        project_file,
    })
}

/// The rules of `--deny` and `--allow` for one run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CommandLineRules {
    /// `--allow RULE` (repeatable).
    pub allow: Vec<String>,
    /// `--deny RULE` (repeatable).
    pub deny: Vec<String>,
}

/// Adds `rules` to `book` with [`Source::CommandLine`]: they take part in the judgement
/// exactly as config.toml's do (a deny rule wins over any allow rule, wherever either
/// came from). The first that does not parse is the error, naming its flag.
pub fn add_command_line(
    book: &mut Rulebook,
    rules: &CommandLineRules,
    home: Option<&Path>,
) -> Result<(), PermissionsError> {
    let lists = [
        (Effect::Deny, "--deny", &rules.deny),
        (Effect::Allow, "--allow", &rules.allow),
    ];
    for (effect, flag, texts) in lists {
        for text in texts {
            let rule = Rule::parse(text, home)
                .map_err(|source| PermissionsError::CommandLine { flag, source })?;
            book.push(ActiveRule {
                rule,
                effect,
                source: Source::CommandLine,
            });
        }
    }
    Ok(())
}

/// The rules of one file's `deny`, `ask` and `allow` lists (in that order), each with
/// its effect; the first that does not parse is the error, naming `path`.
fn parse_rules(
    [deny, ask, allow]: [&Vec<String>; 3],
    path: &Path,
    home: Option<&Path>,
) -> Result<Vec<(Effect, Rule)>, PermissionsError> {
    let lists = [
        (Effect::Deny, deny),
        (Effect::Ask, ask),
        (Effect::Allow, allow),
    ];
    let mut rules = Vec::new();
    for (effect, texts) in lists {
        for text in texts {
            let rule = Rule::parse(text, home).map_err(|source| PermissionsError::Rule {
                path: path.to_path_buf(),
                source,
            })?;
            rules.push((effect, rule));
        }
    }
    Ok(rules)
}

fn read_project(path: &Path) -> Result<ProjectRules, PermissionsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(|e| PermissionsError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ProjectRules::default()),
        Err(source) => Err(PermissionsError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn read_trust(places: &Places) -> Result<BTreeMap<String, Vec<String>>, PermissionsError> {
    let path = places.trust_file();
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_trust(&path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(source) => Err(PermissionsError::Io { path, source }),
    }
}

fn parse_trust(path: &Path, text: &str) -> Result<BTreeMap<String, Vec<String>>, PermissionsError> {
    serde_json::from_str(text).map_err(|e| PermissionsError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Changes the trust list under its folder's lock (read, change, write, rename), so two
/// harness9 processes answering at once never lose each other's approvals.
fn update_trust(
    places: &Places,
    change: impl FnOnce(&mut BTreeMap<String, Vec<String>>),
) -> Result<(), PermissionsError> {
    let path = places.trust_file();
    let mode = UpdateMode {
        links: Links::Follow,
        privacy: Privacy::Private,
    };
    private_files::update(&path, mode, |old| {
        let mut trust = match old {
            Some(text) => parse_trust(&path, &text)?,
            None => BTreeMap::new(),
        };
        change(&mut trust);
        let text = serde_json::to_string_pretty(&trust).map_err(|e| PermissionsError::Parse {
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok((Some(text), ()))
    })
}

impl From<UpdateIoError> for PermissionsError {
    fn from(e: UpdateIoError) -> Self {
        PermissionsError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

/// Records the project file's current `allow` rules as approved by this user.
pub fn trust_project(places: &Places) -> Result<Vec<String>, PermissionsError> {
    let file = places.project_file();
    let project = read_project(&file)?;
    let home = places.home.as_deref();
    let mut texts = Vec::new();
    for text in &project.allow {
        let rule = Rule::parse(text, home).map_err(|source| PermissionsError::Rule {
            path: file.clone(),
            source,
        })?;
        texts.push(rule.text().to_string());
    }
    update_trust(places, |trust| {
        trust.insert(key(&file), texts.clone());
    })?;
    Ok(texts)
}

/// Adds `rule` to the project file's list for `effect` (creating the file), and, for an
/// `allow` rule, records it as approved by this user.
pub fn add_to_project(places: &Places, effect: Effect, rule: &str) -> Result<(), PermissionsError> {
    let file = places.project_file();
    edit_array(&file, PROJECT_FILE_MODE, None, effect, |array| {
        if !array.iter().any(|v| v.as_str() == Some(rule)) {
            array.push(rule);
        }
    })?;
    if effect == Effect::Allow {
        update_trust(places, |trust| {
            let list = trust.entry(key(&file)).or_default();
            if !list.iter().any(|t| t == rule) {
                list.push(rule.to_string());
            }
        })?;
    }
    Ok(())
}

/// Removes `rule` from the list for `effect` in the file it came from (`[permissions]`
/// of config.toml, or the project file).
pub fn remove_from(
    places: &Places,
    source: &Source,
    effect: Effect,
    rule: &str,
) -> Result<(), PermissionsError> {
    let (file, mode, table) = match source {
        Source::User { path } => (path.clone(), USER_CONFIG_MODE, Some("permissions")),
        Source::Project { path } => (path.clone(), PROJECT_FILE_MODE, None),
        Source::BuiltIn | Source::Session | Source::CommandLine => return Ok(()),
    };
    edit_array(&file, mode, table, effect, |array| {
        array.retain(|v| v.as_str().map(str::trim) != Some(rule));
    })?;
    if matches!(source, Source::Project { .. }) && effect == Effect::Allow {
        update_trust(places, |trust| {
            if let Some(list) = trust.get_mut(&key(&file)) {
                list.retain(|t| t != rule);
            }
        })?;
    }
    Ok(())
}

/// The project's rule file: a link there (a repository's own) is refused, never
/// followed; new files get the umask's permissions.
const PROJECT_FILE_MODE: UpdateMode = UpdateMode {
    links: Links::Refuse,
    privacy: Privacy::Shared,
};

/// The user's config.toml: a link (a dotfiles folder) is followed; a new file is 0600.
const USER_CONFIG_MODE: UpdateMode = UpdateMode {
    links: Links::Follow,
    privacy: Privacy::Private,
};

/// Edits the array `effect` of `table` (or the top level) in `file`, keeping the rest
/// of the file as written, under the lock of [`private_files::update`] (two processes
/// answering at once both get their rule in).
fn edit_array(
    file: &Path,
    mode: UpdateMode,
    table: Option<&str>,
    effect: Effect,
    change: impl FnOnce(&mut toml_edit::Array),
) -> Result<(), PermissionsError> {
    private_files::update(file, mode, |old| {
        let text = edit_text(file, &old.unwrap_or_default(), table, effect, change)?;
        Ok((Some(text), ()))
    })
}

/// `text` with the array changed.
fn edit_text(
    file: &Path,
    text: &str,
    table: Option<&str>,
    effect: Effect,
    change: impl FnOnce(&mut toml_edit::Array),
) -> Result<String, PermissionsError> {
    let parse_error = |message: String| PermissionsError::Parse {
        path: file.to_path_buf(),
        message,
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| parse_error(e.to_string()))?;
    let root = doc.as_table_mut();
    let container = match table {
        None => root,
        Some(name) => root
            .entry(name)
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_mut()
            .ok_or_else(|| parse_error(format!("`{name}` is not a table")))?,
    };
    let array = container
        .entry(effect.as_str())
        .or_insert_with(|| toml_edit::value(toml_edit::Array::new()))
        .as_array_mut()
        .ok_or_else(|| parse_error(format!("`{}` is not a list", effect.as_str())))?;
    change(array);
    array.fmt();
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    fn places(dir: &Path) -> Places {
        let project = dir.join("proj");
        std::fs::create_dir_all(&project).unwrap();
        Places {
            user_file: dir.join("home/config.toml"),
            root: project.clone(),
            project,
            harness_home: dir.join("home"),
            home: None,
        }
    }

    fn texts(book: &Rulebook, effect: Effect, source: fn(&Source) -> bool) -> Vec<String> {
        book.rules()
            .iter()
            .filter(|r| r.effect == effect && source(&r.source))
            .map(|r| r.rule.text().to_string())
            .collect()
    }

    #[test]
    fn project_allow_rules_need_this_users_approval_and_deny_rules_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        std::fs::create_dir_all(p.project.join(".harness9")).unwrap();
        std::fs::write(
            p.project_file(),
            "# team rules\nallow = [\"bash\"]\ndeny = [\"bash(curl:*)\"]\n",
        )
        .unwrap();
        let loaded = load(&p, &UserPermissions::default()).unwrap();
        assert_eq!(loaded.untrusted, vec!["bash"]);
        let is_project = |s: &Source| matches!(s, Source::Project { .. });
        assert!(texts(&loaded.book, Effect::Allow, is_project).is_empty());
        assert_eq!(
            texts(&loaded.book, Effect::Deny, is_project),
            vec!["bash(curl:*)"]
        );

        assert_eq!(trust_project(&p).unwrap(), vec!["bash"]);
        let loaded = load(&p, &UserPermissions::default()).unwrap();
        assert!(loaded.untrusted.is_empty());
        assert_eq!(texts(&loaded.book, Effect::Allow, is_project), vec!["bash"]);

        // A rule added behind harness9's back is not trusted.
        let text = std::fs::read_to_string(p.project_file()).unwrap();
        std::fs::write(
            p.project_file(),
            text.replace("[\"bash\"]", "[\"bash\", \"edit\"]"),
        )
        .unwrap();
        let loaded = load(&p, &UserPermissions::default()).unwrap();
        assert_eq!(loaded.untrusted, vec!["edit"]);
    }

    #[test]
    fn answers_for_the_project_are_written_keeping_comments_and_are_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        add_to_project(&p, Effect::Allow, "bash(cargo test:*)").unwrap();
        std::fs::write(
            p.project_file(),
            format!(
                "# keep me\n{}",
                std::fs::read_to_string(p.project_file()).unwrap()
            ),
        )
        .unwrap();
        add_to_project(&p, Effect::Allow, "bash(cargo fmt:*)").unwrap();
        add_to_project(&p, Effect::Allow, "bash(cargo fmt:*)").unwrap();
        let text = std::fs::read_to_string(p.project_file()).unwrap();
        assert_contains(&text, "# keep me");
        let loaded = load(&p, &UserPermissions::default()).unwrap();
        let is_project = |s: &Source| matches!(s, Source::Project { .. });
        assert_eq!(
            texts(&loaded.book, Effect::Allow, is_project),
            vec!["bash(cargo test:*)", "bash(cargo fmt:*)"]
        );
        remove_from(
            &p,
            &Source::Project {
                path: p.project_file(),
            },
            Effect::Allow,
            "bash(cargo test:*)",
        )
        .unwrap();
        let loaded = load(&p, &UserPermissions::default()).unwrap();
        assert_eq!(
            texts(&loaded.book, Effect::Allow, is_project),
            vec!["bash(cargo fmt:*)"]
        );
    }

    /// Answers given with `p` in several harness9 processes at once: every rule lands
    /// in the project file and in the trust list (each change is a locked
    /// read-change-write; without the lock most are lost).
    #[test]
    fn concurrent_answers_lose_no_rule_and_no_approval() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        std::thread::scope(|scope| {
            for t in 0..6 {
                let p = &p;
                scope.spawn(move || {
                    for r in 0..10 {
                        add_to_project(p, Effect::Allow, &format!("bash(tool{t}x{r}:*)")).unwrap();
                    }
                });
            }
        });
        let loaded = load(&p, &UserPermissions::default()).unwrap();
        let is_project = |s: &Source| matches!(s, Source::Project { .. });
        let mut allowed = texts(&loaded.book, Effect::Allow, is_project);
        allowed.sort();
        assert_eq!(allowed.len(), 60, "{allowed:?}");
        assert!(loaded.untrusted.is_empty(), "{:?}", loaded.untrusted);
    }

    /// A repository's `.harness9/permissions.toml` that is a link to a file outside is
    /// never written through: the answer's rule is refused with the reason.
    #[test]
    fn a_linked_project_file_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        let victim = dir.path().join("bashrc");
        std::fs::write(&victim, "echo hi\n").unwrap();
        std::fs::create_dir_all(p.project.join(".harness9")).unwrap();
        std::os::unix::fs::symlink(&victim, p.project_file()).unwrap();
        let refused = add_to_project(&p, Effect::Allow, "bash(curl:*)").unwrap_err();
        assert_contains(&refused.to_string(), "symbolic link");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "echo hi\n");
        assert!(p.project_file().is_symlink());
        // Nothing was approved either.
        assert!(!p.trust_file().exists());
    }

    #[test]
    fn user_rules_load_and_are_removed_from_config_toml() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        std::fs::create_dir_all(&p.harness_home).unwrap();
        std::fs::write(
            &p.user_file,
            "model = \"m\" # mine\n[permissions]\nallow = [\"bash(ls:*)\", \"read(/usr/**)\"]\n",
        )
        .unwrap();
        let user: UserPermissions = UserPermissions {
            allow: vec!["bash(ls:*)".into(), "read(/usr/**)".into()],
            ..Default::default()
        };
        let loaded = load(&p, &user).unwrap();
        let is_user = |s: &Source| matches!(s, Source::User { .. });
        assert_eq!(texts(&loaded.book, Effect::Allow, is_user).len(), 2);
        remove_from(
            &p,
            &Source::User {
                path: p.user_file.clone(),
            },
            Effect::Allow,
            "bash(ls:*)",
        )
        .unwrap();
        let text = std::fs::read_to_string(&p.user_file).unwrap();
        assert!(
            text.contains("model = \"m\" # mine") && !text.contains("bash(ls:*)"),
            "{text}"
        );
        assert_contains(&text, "read(/usr/**)");
    }

    #[test]
    fn a_bad_rule_or_file_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        std::fs::create_dir_all(p.project.join(".harness9")).unwrap();
        std::fs::write(p.project_file(), "deny = [\"bash(\"]\n").unwrap();
        let e = load(&p, &UserPermissions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("permissions.toml") && e.contains("bash("), "{e}");
        std::fs::write(p.project_file(), "allow = 3\n").unwrap();
        let e = load(&p, &UserPermissions::default())
            .unwrap_err()
            .to_string();
        assert_contains(&e, "permissions.toml");
        std::fs::write(p.project_file(), "builtin_rules = \"off\"\n").unwrap();
        assert!(
            load(&p, &UserPermissions::default()).is_err(),
            "a project cannot switch the built-in rules off"
        );
    }

    #[test]
    fn built_in_rules_can_be_switched_off_by_the_user() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        let on = load(&p, &UserPermissions::default()).unwrap();
        assert_eq!(
            on.book.rules().len(),
            // The built-in patterns, harness9's home, the protected paths.
            super::super::SECRET_FILES.len() + 1 + super::super::PROTECTED_EDITS.len(),
            "every built-in rule parses"
        );
        let off = load(
            &p,
            &UserPermissions {
                builtin_rules: BuiltinRules::Off,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(off.book.rules().is_empty());
    }

    #[test]
    fn the_users_secret_files_are_anchored_where_they_are_written() {
        let p = Places {
            user_file: "/h/config.toml".into(),
            project: "/proj/sub".into(),
            root: "/proj".into(),
            harness_home: "/h".into(),
            home: Some("/home/u".into()),
        };
        let user = UserPermissions {
            secret_files: vec!["~/vault/**".into(), "keys/*.k".into(), "**/*.s".into()],
            ..Default::default()
        };
        let secrets = secret_files(&p, &user);
        assert_eq!(
            secrets.extra,
            ["/home/u/vault/**", "/proj/keys/*.k", "**/*.s"]
        );
        assert_eq!(secrets.harness_home.as_deref(), Some(Path::new("/h")));
        let bad = UserPermissions {
            secret_files: vec!["a[".into()],
            ..Default::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let e = load(&places(dir.path()), &bad).unwrap_err().to_string();
        assert!(e.contains("secret_files: a["), "{e}");
    }
}
