//! The two files of Claude Code's plugin format as data: `.claude-plugin/plugin.json`
//! (a plugin's name, version, description, author and the optional component paths
//! `commands`, `agents`, `skills`, `hooks`, `mcpServers`) and
//! `.claude-plugin/marketplace.json` (a catalogue: name, owner, `plugins[]` each with a
//! `source` — a relative folder, a GitHub repository or a git URL). Unknown keys are
//! ignored, as Claude Code ignores them; a key of the wrong shape is a [`Problem`].
//!
//! It knows the formats; it must not know where files are read from or what loads them.

use serde::Deserialize;
use serde_json::Value;

use super::Problem;

/// A plugin's name: ASCII letters, digits, `-` and `_`, starting with a letter or a
/// digit, at most [`MAX_NAME_CHARS`] long. It names a folder, so nothing else is taken.
pub const MAX_NAME_CHARS: usize = 64;

/// Whether `name` can name a plugin (and so a folder below `$HARNESS9_HOME/plugins`).
pub fn check_name(name: &str) -> Result<(), Problem> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Problem::BadName {
            name: name.chars().take(80).collect(),
        })
    }
}

/// Where a component's extra files are, as `plugin.json` writes it: one path or several.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraPaths(pub Vec<String>);

/// A component written either as paths to files or folders, or inline as JSON (`hooks`
/// and `mcpServers` may be either).
#[derive(Debug, Clone, PartialEq)]
pub enum PathsOrInline {
    /// Relative paths inside the plugin.
    Paths(Vec<String>),
    /// The configuration itself.
    Inline(Value),
}

/// `plugin.json`, the fields harness9 uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The plugin's name.
    pub name: String,
    /// Its version, if given.
    pub version: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Who wrote it (the `name` of `author`).
    pub author: Option<String>,
    /// Command files or folders besides `commands/`.
    pub commands: ExtraPaths,
    /// Agent files or folders besides `agents/`.
    pub agents: ExtraPaths,
    /// Skill folders besides `skills/`.
    pub skills: ExtraPaths,
    /// Hook files besides `hooks/hooks.json`, or hooks inline.
    pub hooks: Option<PathsOrInline>,
    /// MCP server files besides `.mcp.json`, or servers inline.
    pub mcp_servers: Option<PathsOrInline>,
}

/// Reads `plugin.json`'s text.
pub fn parse_manifest(text: &str) -> Result<Manifest, Problem> {
    let value: Value = serde_json::from_str(text).map_err(|e| Problem::Parse {
        reason: e.to_string(),
    })?;
    let Value::Object(map) = value else {
        return Err(Problem::Parse {
            reason: "it is not a JSON object".into(),
        });
    };
    let name = match map.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err(wrong("name", "a string")),
        None => return Err(Problem::MissingName),
    };
    check_name(&name)?;
    let text_field = |key: &'static str| match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(wrong(key, "a string")),
    };
    let author = match map.get("author") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(a)) => a.get("name").and_then(Value::as_str).map(str::to_string),
        Some(_) => return Err(wrong("author", "an object with a name")),
    };
    Ok(Manifest {
        version: text_field("version")?,
        description: text_field("description")?,
        author,
        commands: ExtraPaths(paths(map.get("commands"), "commands")?),
        agents: ExtraPaths(paths(map.get("agents"), "agents")?),
        skills: ExtraPaths(paths(map.get("skills"), "skills")?),
        hooks: paths_or_inline(map.get("hooks"), "hooks")?,
        mcp_servers: paths_or_inline(map.get("mcpServers"), "mcpServers")?,
        name,
    })
}

fn wrong(key: &'static str, expected: &'static str) -> Problem {
    Problem::WrongShape { key, expected }
}

fn paths(value: Option<&Value>, key: &'static str) -> Result<Vec<String>, Problem> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                _ => Err(wrong(key, "a path or a list of paths")),
            })
            .collect(),
        Some(_) => Err(wrong(key, "a path or a list of paths")),
    }
}

fn paths_or_inline(
    value: Option<&Value>,
    key: &'static str,
) -> Result<Option<PathsOrInline>, Problem> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(_)) => Ok(value.cloned().map(PathsOrInline::Inline)),
        other => paths(other, key).map(|p| Some(PathsOrInline::Paths(p))),
    }
}

/// Where a marketplace entry's plugin comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A folder relative to the marketplace's root (`./plugins/name`).
    Relative {
        /// The path as written.
        path: String,
    },
    /// A git repository (a GitHub `owner/repo` made a URL, or a URL as written).
    Git {
        /// What `git clone` is given.
        url: String,
    },
}

/// One entry of a marketplace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The plugin's name in the marketplace.
    pub name: String,
    /// Its description there.
    pub description: Option<String>,
    /// Where it comes from.
    pub source: Source,
}

/// `marketplace.json`, the fields harness9 uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Marketplace {
    /// The marketplace's name.
    pub name: String,
    /// Its owner's name.
    pub owner: Option<String>,
    /// The entries that can be used, in the order written.
    pub plugins: Vec<Listed>,
    /// Entries that cannot, each with its position and why.
    pub problems: Vec<(usize, Problem)>,
}

#[derive(Debug, Deserialize)]
struct RawMarketplace {
    name: String,
    #[serde(default)]
    owner: Option<Value>,
    #[serde(default)]
    plugins: Vec<Value>,
}

/// Reads `marketplace.json`'s text: every usable entry, and why each other one is not.
pub fn parse_marketplace(text: &str) -> Result<Marketplace, Problem> {
    let raw: RawMarketplace = serde_json::from_str(text).map_err(|e| Problem::Parse {
        reason: e.to_string(),
    })?;
    let owner = raw.owner.as_ref().and_then(|o| match o {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => m.get("name").and_then(Value::as_str).map(str::to_string),
        _ => None,
    });
    let mut plugins = Vec::new();
    let mut problems = Vec::new();
    for (i, entry) in raw.plugins.iter().enumerate() {
        match listed(entry) {
            Ok(l) => plugins.push(l),
            Err(p) => problems.push((i, p)),
        }
    }
    Ok(Marketplace {
        name: raw.name,
        owner,
        plugins,
        problems,
    })
}

fn listed(entry: &Value) -> Result<Listed, Problem> {
    let name = entry
        .get("name")
        .and_then(Value::as_str)
        .ok_or(Problem::MissingName)?;
    check_name(name)?;
    let source = match entry.get("source") {
        Some(Value::String(s)) if is_git_url(s) => Source::Git { url: s.clone() },
        Some(Value::String(s)) => Source::Relative { path: s.clone() },
        Some(Value::Object(m)) => {
            let kind = m.get("source").and_then(Value::as_str).unwrap_or_default();
            match kind {
                "github" => {
                    let repo = m
                        .get("repo")
                        .and_then(Value::as_str)
                        .filter(|r| github_repo(r))
                        .ok_or_else(|| wrong("source.repo", "`owner/name`"))?;
                    Source::Git {
                        url: format!("https://github.com/{repo}.git"),
                    }
                }
                "url" | "git" => {
                    let url = m
                        .get("url")
                        .and_then(Value::as_str)
                        .filter(|u| is_git_url(u))
                        .ok_or_else(|| wrong("source.url", "a git URL"))?;
                    Source::Git {
                        url: url.to_string(),
                    }
                }
                other => {
                    return Err(Problem::UnsupportedSource {
                        kind: other.chars().take(40).collect(),
                    });
                }
            }
        }
        _ => return Err(wrong("source", "a relative path or a source object")),
    };
    Ok(Listed {
        name: name.to_string(),
        description: entry
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        source,
    })
}

fn github_repo(repo: &str) -> bool {
    let mut parts = repo.split('/');
    let ok = |p: Option<&str>| {
        p.is_some_and(|p| {
            !p.is_empty()
                && !p.starts_with('.')
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
    };
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

/// Whether `text` is a git URL harness9 clones (`https://`, `http://`, `ssh://`,
/// `git://`, `file://`, or scp-like `user@host:path`), never an option (`-…`).
pub fn is_git_url(text: &str) -> bool {
    if text.starts_with('-') || text.chars().any(char::is_control) {
        return false;
    }
    const SCHEMES: [&str; 5] = ["https://", "http://", "ssh://", "git://", "file://"];
    SCHEMES.iter().any(|s| text.starts_with(s))
        || text
            .split_once(':')
            .is_some_and(|(host, _)| host.contains('@') && !host.contains('/'))
}
