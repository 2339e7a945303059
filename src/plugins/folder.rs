//! One plugin folder read as repository input: its `.claude-plugin/plugin.json`, the
//! default component places (`commands/`, `agents/`, `skills/`, `hooks/hooks.json`,
//! `.mcp.json`) and the extra ones `plugin.json` names (Claude Code's rule: they add to
//! the defaults). No link is followed (a component path with a link on its way is
//! refused), every file is read through `nofollow` and capped, and every entry that
//! cannot be used is a [`PluginError`] naming the file and why; the rest still loads.
//!
//! It knows the layout; it must not know whether the plugin is trusted or where it is
//! installed.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::manifest::{self, Manifest, PathsOrInline};
use super::{PluginError, Problem};
use crate::hooks::{Event as HookEvent, HookSet, Matcher, Origin, OriginKind};
use crate::mcp::config::McpServerConfig;
use crate::nofollow::{self, FileError, FileKind};

/// The largest manifest, hook or MCP file read, in bytes.
pub const MAX_JSON_BYTES: u64 = 1024 * 1024;
/// How deep the component counts look below a component folder.
const MAX_COUNT_DEPTH: usize = 6;

/// A plugin folder as read.
#[derive(Debug, Clone)]
pub struct PluginFolder {
    /// The folder (resolved).
    pub root: PathBuf,
    /// `plugin.json`.
    pub manifest: Manifest,
    /// Command folders that exist.
    pub command_dirs: Vec<PathBuf>,
    /// Agent folders that exist (for the delegation issue's roots).
    pub agent_dirs: Vec<PathBuf>,
    /// Skill folders that exist.
    pub skill_dirs: Vec<PathBuf>,
    /// Its hooks, marked as the plugin's (`CLAUDE_PLUGIN_ROOT` set when they run).
    pub hooks: HookSet,
    /// Its MCP servers, `${CLAUDE_PLUGIN_ROOT}` expanded.
    pub mcp_servers: Vec<McpServerConfig>,
    /// How many command files, skills and agent files it holds.
    pub counts: Counts,
    /// Everything that could not be used.
    pub problems: Vec<PluginError>,
}

/// What a plugin contributes, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// `*.md` files below its command folders.
    pub commands: usize,
    /// Folders holding a `SKILL.md` below its skill folders.
    pub skills: usize,
    /// `*.md` files below its agent folders.
    pub agents: usize,
    /// Hook commands.
    pub hooks: usize,
    /// MCP servers.
    pub mcp_servers: usize,
}

/// One hook as `trust` shows it: what runs, when.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookLine {
    /// The event.
    pub event: &'static str,
    /// The matcher as written (`*` for every firing).
    pub matcher: String,
    /// The command line.
    pub command: String,
}

impl PluginFolder {
    /// Every hook, event by event.
    pub fn hook_lines(&self) -> Vec<HookLine> {
        let mut lines = Vec::new();
        for (event, groups) in self.hooks.events() {
            for group in groups {
                for hook in &group.hooks {
                    lines.push(HookLine {
                        event: event.name(),
                        matcher: matcher_text(&group.matcher),
                        command: hook.command.clone(),
                    });
                }
            }
        }
        lines
    }
}

fn matcher_text(matcher: &Matcher) -> String {
    match matcher {
        Matcher::Any => "*".into(),
        Matcher::Names { names } => names.join("|"),
        Matcher::Pattern { regex } => regex.as_str().to_string(),
        Matcher::Broken { text, .. } => text.clone(),
    }
}

/// Reads the plugin at `root` (resolved by the caller). An error when there is no
/// usable `plugin.json`; otherwise the plugin with every problem found.
pub fn inspect(
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PluginFolder, PluginError> {
    let manifest_path = root.join(".claude-plugin").join("plugin.json");
    let at = |problem| PluginError {
        path: manifest_path.clone(),
        problem,
    };
    let text = read_json(&manifest_path).map_err(at)?.ok_or_else(|| {
        at(Problem::Missing {
            path: ".claude-plugin/plugin.json".into(),
        })
    })?;
    let manifest = manifest::parse_manifest(&text).map_err(at)?;
    let mut folder = PluginFolder {
        root: root.to_path_buf(),
        command_dirs: Vec::new(),
        agent_dirs: Vec::new(),
        skill_dirs: Vec::new(),
        hooks: HookSet::new(),
        mcp_servers: Vec::new(),
        counts: Counts::default(),
        problems: Vec::new(),
        manifest,
    };
    let manifest = folder.manifest.clone();
    folder.command_dirs = folders(
        root,
        "commands",
        &manifest.commands.0,
        &mut folder.problems,
        Kind::Commands,
    );
    folder.agent_dirs = folders(
        root,
        "agents",
        &manifest.agents.0,
        &mut folder.problems,
        Kind::Other,
    );
    folder.skill_dirs = folders(
        root,
        "skills",
        &manifest.skills.0,
        &mut folder.problems,
        Kind::Other,
    );
    load_hooks(&mut folder, manifest.hooks.as_ref());
    load_mcp(&mut folder, manifest.mcp_servers.as_ref(), env);
    folder.counts = Counts {
        commands: folder
            .command_dirs
            .iter()
            .map(|d| count(d, CountWhat::MdFiles, 0))
            .sum(),
        skills: folder
            .skill_dirs
            .iter()
            .map(|d| count(d, CountWhat::Skills, 0))
            .sum(),
        agents: folder
            .agent_dirs
            .iter()
            .map(|d| count(d, CountWhat::MdFiles, 0))
            .sum(),
        hooks: HookEvent::ALL.iter().map(|e| folder.hooks.count(*e)).sum(),
        mcp_servers: folder.mcp_servers.len(),
    };
    Ok(folder)
}

/// The text of a JSON file read without following links, capped; `None` when absent.
pub fn read_json(real: &Path) -> Result<Option<String>, Problem> {
    let file = match nofollow::open_read(real) {
        Ok(file) => file,
        Err(FileError::NotFound) => return Ok(None),
        Err(e) => {
            return Err(Problem::Unreadable {
                reason: e.to_string(),
            });
        }
    };
    let mut bytes = Vec::new();
    file.take(MAX_JSON_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Problem::Unreadable {
            reason: e.to_string(),
        })?;
    if bytes.len() as u64 > MAX_JSON_BYTES {
        return Err(Problem::TooLarge {
            limit: MAX_JSON_BYTES,
        });
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Problem::Unreadable {
            reason: "not UTF-8 text".into(),
        })
}

/// Where a relative component path leads inside `root`, checked entry by entry without
/// following links: `Ok(None)` when nothing is there.
pub fn inside(root: &Path, written: &str) -> Result<Option<(PathBuf, FileKind)>, Problem> {
    let relative = Path::new(written);
    let outside = || Problem::OutsidePlugin {
        path: written.chars().take(200).collect(),
    };
    let mut here = root.to_path_buf();
    let mut kind = FileKind::Directory;
    for part in relative.components() {
        match part {
            Component::CurDir => continue,
            Component::Normal(name) => {
                if kind != FileKind::Directory {
                    return Ok(None);
                }
                here.push(name);
                match nofollow::kind_of(&here) {
                    Ok(Some(FileKind::Symlink)) => return Err(Problem::Link),
                    Ok(Some(k)) => kind = k,
                    Ok(None) => return Ok(None),
                    Err(e) => {
                        return Err(Problem::Unreadable {
                            reason: e.to_string(),
                        });
                    }
                }
            }
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(outside());
            }
        }
    }
    if here == root {
        return Err(outside());
    }
    Ok(Some((here, kind)))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Commands,
    Other,
}

/// The default folder `default` and the extra paths, those that are folders.
fn folders(
    root: &Path,
    default: &str,
    extra: &[String],
    problems: &mut Vec<PluginError>,
    kind: Kind,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let push = |out: &mut Vec<PathBuf>, path: PathBuf| {
        if !out.contains(&path) {
            out.push(path);
        }
    };
    match inside(root, default) {
        Ok(Some((path, FileKind::Directory))) => push(&mut out, path),
        Ok(_) => {}
        Err(problem) => problems.push(PluginError {
            path: root.join(default),
            problem,
        }),
    }
    for written in extra {
        let problem = match inside(root, written) {
            Ok(Some((path, FileKind::Directory))) => {
                push(&mut out, path);
                continue;
            }
            // A file in a folder read anyway (motlin's plugins list each command and
            // agent file of their default folders): covered, nothing to say.
            Ok(Some((path, FileKind::Regular)))
                if path
                    .parent()
                    .is_some_and(|dir| out.iter().any(|d| d == dir)) =>
            {
                continue;
            }
            Ok(Some((_, FileKind::Regular))) => match kind {
                Kind::Commands => Problem::CommandFile {
                    path: written.clone(),
                },
                Kind::Other => Problem::ComponentFile {
                    path: written.clone(),
                },
            },
            Ok(Some(_)) => Problem::Special,
            Ok(None) => Problem::Missing {
                path: written.clone(),
            },
            Err(problem) => problem,
        };
        problems.push(PluginError {
            path: root.join(".claude-plugin").join("plugin.json"),
            problem,
        });
    }
    out
}

#[derive(Clone, Copy)]
enum CountWhat {
    MdFiles,
    Skills,
}

fn count(dir: &Path, what: CountWhat, depth: usize) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for entry in entries.flatten() {
        let Ok(t) = entry.file_type() else { continue };
        let name = entry.file_name();
        match what {
            CountWhat::MdFiles if t.is_file() && name.to_string_lossy().ends_with(".md") => n += 1,
            CountWhat::Skills if t.is_file() && name == "SKILL.md" && depth > 0 => n += 1,
            _ if t.is_dir()
                && depth < MAX_COUNT_DEPTH
                && !name.to_string_lossy().starts_with('.') =>
            {
                n += count(&entry.path(), what, depth + 1);
            }
            _ => {}
        }
    }
    n
}

fn load_hooks(folder: &mut PluginFolder, spec: Option<&PathsOrInline>) {
    let root = folder.root.clone();
    let mut files = vec!["hooks/hooks.json".to_string()];
    match spec {
        Some(PathsOrInline::Paths(paths)) => files.extend(paths.iter().cloned()),
        Some(PathsOrInline::Inline(block)) => {
            let text = serde_json::json!({ "hooks": block }).to_string();
            let path = root.join(".claude-plugin").join("plugin.json");
            hooks_from(folder, &text, path);
        }
        None => {}
    }
    files.dedup_by(|a, b| Path::new(a.as_str()) == Path::new(b.as_str()));
    for (i, written) in files.iter().enumerate() {
        let found = inside(&root, written).and_then(|found| match found {
            Some((path, FileKind::Regular)) => read_json(&path).map(|t| t.map(|t| (path, t))),
            Some(_) => Err(Problem::Special),
            None if i == 0 => Ok(None),
            None => Err(Problem::Missing {
                path: written.clone(),
            }),
        });
        match found {
            Ok(Some((path, text))) => hooks_from(folder, &text, path),
            Ok(None) => {}
            Err(problem) => folder.problems.push(PluginError {
                path: root.join(written),
                problem,
            }),
        }
    }
}

fn hooks_from(folder: &mut PluginFolder, text: &str, path: PathBuf) {
    let origin = Origin {
        kind: OriginKind::Plugin,
        path,
    };
    let (mut set, wrong) = crate::hooks::parse_json_settings(text, &origin);
    set.mark_plugin(&folder.root);
    folder.hooks.extend(set);
    for e in wrong {
        folder.problems.push(PluginError {
            path: e.path,
            problem: Problem::Hook {
                reason: e.problem.to_string(),
            },
        });
    }
}

fn load_mcp(
    folder: &mut PluginFolder,
    spec: Option<&PathsOrInline>,
    env: &dyn Fn(&str) -> Option<String>,
) {
    let root = folder.root.clone();
    let mut sources: Vec<(PathBuf, Value)> = Vec::new();
    let mut files = vec![".mcp.json".to_string()];
    match spec {
        Some(PathsOrInline::Paths(paths)) => files.extend(paths.iter().cloned()),
        Some(PathsOrInline::Inline(value)) => {
            sources.push((
                root.join(".claude-plugin").join("plugin.json"),
                value.clone(),
            ));
        }
        None => {}
    }
    files.dedup_by(|a, b| Path::new(a.as_str()) == Path::new(b.as_str()));
    for (i, written) in files.iter().enumerate() {
        let found = inside(&root, written).and_then(|found| match found {
            Some((path, FileKind::Regular)) => read_json(&path).map(|t| t.map(|t| (path, t))),
            Some(_) => Err(Problem::Special),
            None if i == 0 => Ok(None),
            None => Err(Problem::Missing {
                path: written.clone(),
            }),
        });
        let parsed = found.and_then(|found| {
            found
                .map(|(path, text)| {
                    serde_json::from_str::<Value>(&text)
                        .map(|v| (path, v))
                        .map_err(|e| Problem::Parse {
                            reason: e.to_string(),
                        })
                })
                .transpose()
        });
        match parsed {
            Ok(Some(source)) => sources.push(source),
            Ok(None) => {}
            Err(problem) => folder.problems.push(PluginError {
                path: root.join(written),
                problem,
            }),
        }
    }
    let name = folder.manifest.name.clone();
    for (path, value) in sources {
        // `{"mcpServers": {...}}` as a project's `.mcp.json`, or the servers themselves.
        let servers = match value {
            Value::Object(mut map) => match map.remove("mcpServers") {
                Some(Value::Object(inner)) => inner,
                Some(_) => {
                    folder.problems.push(PluginError {
                        path,
                        problem: Problem::WrongShape {
                            key: "mcpServers",
                            expected: "an object",
                        },
                    });
                    continue;
                }
                None => map,
            },
            _ => {
                folder.problems.push(PluginError {
                    path,
                    problem: Problem::WrongShape {
                        key: "mcpServers",
                        expected: "an object",
                    },
                });
                continue;
            }
        };
        let (servers, wrong) =
            crate::mcp::config::plugin_servers(servers, &path, &name, &root, env);
        folder.mcp_servers.extend(servers);
        folder
            .problems
            .extend(wrong.into_iter().map(|reason| PluginError {
                path: path.clone(),
                problem: Problem::Mcp { reason },
            }));
    }
}
