//! Claude Code commands as skills: every `*.md` file below a commands folder
//! ([`super::DiscoveryOptions::command_roots`]) is a user-invocable skill of the kind
//! [`SkillKind::Command`], named after its file (`review.md` → `/review`). Subfolders
//! organise but do not rename, as Claude Code documents it: `frontend/build.md` is
//! `/build`, its description labelled `(project:frontend)`. The frontmatter is optional;
//! without a `description` the first line of the body describes the command, and such a
//! command is never offered to the model (Claude Code offers only commands with a
//! `description`).
//!
//! Command files are repository input. A folder is read only where it really is inside
//! the project (a project commands folder that is a link out of it is skipped), links
//! below it are never followed, files are opened without following links (again when
//! the body is read) and read up to [`MAX_COMMAND_BYTES`]; the depth and the number of
//! files read per folder are capped. Every file that is not a command is reported with
//! its path and why, like a broken `SKILL.md`.
//!
//! It knows files and frontmatter; it must not know the agent, the model or terminals.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::assess::{self, Verdict};
use super::frontmatter::{self, Frontmatter, HeadError};
use super::warning::{SkillWarning, WarningKind};
use super::{
    CommandFile, DescribedBy, DiscoveryOptions, InvalidSkill, LazyFrontmatter, RootKind, Skill,
    SkillError, SkillKind, SkillRoot, SkillStatus,
};

/// The largest command file read, in bytes.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// How many subfolder levels below a commands folder are searched.
pub const MAX_COMMAND_DEPTH: usize = 4;
/// How many command files are read below one commands folder.
pub const MAX_COMMANDS_PER_ROOT: usize = 1_000;
/// The longest description taken from a body's first line, in characters.
const FIRST_LINE_CHARS: usize = 200;

/// The commands found, in precedence order (nearest folder first), with the files that
/// are not commands and the warnings.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub skills: Vec<Skill>,
    pub invalid: Vec<InvalidSkill>,
    pub warnings: Vec<SkillWarning>,
}

/// Searches every commands folder of `options`.
pub(super) fn discover(options: &DiscoveryOptions) -> Found {
    let boundary = std::fs::canonicalize(options.project_boundary()).ok();
    let mut found = Found::default();
    for root in options.command_roots() {
        walk_root(&root, boundary.as_deref(), &[], &mut found);
    }
    // A trusted plugin's commands come last, labelled by the plugin.
    for plugin in &options.plugins {
        let label = [plugin.plugin.clone()];
        for dir in &plugin.commands {
            let root = SkillRoot {
                path: dir.as_path().into(),
                kind: RootKind::Plugin,
            };
            walk_root(&root, None, &label, &mut found);
        }
    }
    found
}

fn warn(found: &mut Found, path: &Path, kind: WarningKind) {
    found.warnings.push(SkillWarning {
        path: path.to_path_buf(),
        kind,
    });
}

fn walk_root(root: &SkillRoot, boundary: Option<&Path>, label: &[String], found: &mut Found) {
    let real = match std::fs::canonicalize(&root.path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            let error = e.to_string();
            return warn(found, &root.path, WarningKind::Unreadable { error });
        }
    };
    if !real.is_dir() {
        return warn(found, &root.path, WarningKind::RootNotDirectory);
    }
    if root.kind == RootKind::Project && !boundary.is_some_and(|b| real.starts_with(b)) {
        return warn(found, &root.path, WarningKind::OutsideProject { real });
    }
    let mut walk = Walk {
        root,
        read: 0,
        found,
    };
    walk.folder(&root.path, &real, label, 0);
}

struct Walk<'a> {
    root: &'a SkillRoot,
    read: usize,
    found: &'a mut Found,
}

impl Walk<'_> {
    /// Reads the command files of one folder (`shown` as found, `real` where it is),
    /// then its subfolders, each in name order: a file wins over one of the same name
    /// in a subfolder.
    fn folder(&mut self, shown: &Path, real: &Path, namespace: &[String], depth: usize) {
        let entries = match std::fs::read_dir(real) {
            Ok(entries) => entries,
            Err(e) => {
                let error = e.to_string();
                return warn(self.found, shown, WarningKind::Unreadable { error });
            }
        };
        let mut files = Vec::new();
        let mut folders = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            // The kind of the entry itself: a link is a link, never what it points at.
            match entry.file_type() {
                Ok(t)
                    if t.is_symlink()
                        && (name.to_string_lossy().ends_with(".md")
                            || real.join(&name).is_dir()) =>
                {
                    warn(self.found, &shown.join(&name), WarningKind::CommandLink);
                }
                Ok(t) if t.is_dir() => folders.push(name),
                Ok(t) if t.is_file() && name.to_string_lossy().ends_with(".md") => files.push(name),
                _ => {}
            }
        }
        files.sort();
        folders.sort();
        for name in files {
            if self.read >= MAX_COMMANDS_PER_ROOT {
                let limit = MAX_COMMANDS_PER_ROOT;
                return warn(self.found, shown, WarningKind::CommandLimit { limit });
            }
            self.read += 1;
            self.file(shown.join(&name), real.join(&name), namespace);
        }
        for name in folders {
            let (shown, real) = (shown.join(&name), real.join(&name));
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            if depth + 1 > MAX_COMMAND_DEPTH {
                let limit = MAX_COMMAND_DEPTH;
                warn(self.found, &shown, WarningKind::DepthLimit { limit });
                continue;
            }
            let mut inner = namespace.to_vec();
            inner.push(name.to_string_lossy().into_owned());
            self.folder(&shown, &real, &inner, depth + 1);
        }
    }

    fn file(&mut self, shown: PathBuf, real: PathBuf, namespace: &[String]) {
        let mut notes = Vec::new();
        let outcome = command(&shown, &real, namespace, self.root, &mut notes);
        for kind in notes {
            warn(self.found, &shown, kind);
        }
        match outcome {
            Ok(skill) => self.found.skills.push(skill),
            Err((name, reason)) => {
                warn(self.found, &shown, reason.clone());
                self.found.invalid.push(InvalidSkill {
                    name,
                    path: shown,
                    root: self.root.clone(),
                    reason,
                });
            }
        }
    }
}

/// Reads a command file without following links, up to [`MAX_COMMAND_BYTES`].
fn read_capped(real: &Path) -> Result<String, WarningKind> {
    let file = crate::nofollow::open_read(real).map_err(|e| WarningKind::Unreadable {
        error: e.to_string(),
    })?;
    let mut bytes = Vec::new();
    let cap = u64::try_from(MAX_COMMAND_BYTES).unwrap_or(u64::MAX);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| WarningKind::Unreadable {
            error: e.to_string(),
        })?;
    if bytes.len() > MAX_COMMAND_BYTES {
        return Err(WarningKind::CommandTooLarge {
            limit: MAX_COMMAND_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| WarningKind::Unreadable {
        error: "not UTF-8 text".into(),
    })
}

/// A command's text as (frontmatter, parse notes, body): the frontmatter is optional.
fn split(text: &str) -> Result<(Frontmatter, Vec<frontmatter::ParseNote>, String), WarningKind> {
    match frontmatter::split(text) {
        Ok((yaml, body)) => {
            let (fm, notes) = frontmatter::parse(&yaml);
            Ok((fm, notes, body))
        }
        Err(HeadError::NoFrontmatter) => {
            let (fm, notes) = frontmatter::parse("");
            Ok((fm, notes, text.replace("\r\n", "\n")))
        }
        Err(e) => Err(WarningKind::BadFrontmatter {
            reason: e.to_string(),
        }),
    }
}

/// The body of a command file (read now, without following links), trimmed.
pub fn load_body(shown: &Path, real: &Path) -> Result<String, SkillError> {
    let reason = |kind: WarningKind| SkillError::Frontmatter {
        path: shown.to_path_buf(),
        reason: kind.to_string(),
    };
    let text = read_capped(real).map_err(reason)?;
    let (_, _, body) = split(&text).map_err(reason)?;
    Ok(body.trim().to_string())
}

/// The first line of a body with text, as a description: Markdown heading marks
/// removed, cut to [`FIRST_LINE_CHARS`].
fn first_line(body: &str) -> Option<String> {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())?;
    Some(line.chars().take(FIRST_LINE_CHARS).collect())
}

/// The skill a command file makes, with notes for problems that leave it usable; or the
/// name (when there is one) and why it is not a command.
fn command(
    shown: &Path,
    real: &Path,
    namespace: &[String],
    root: &SkillRoot,
    notes: &mut Vec<WarningKind>,
) -> Result<Skill, (Option<String>, WarningKind)> {
    let name = shown
        .file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_string);
    let text = read_capped(real).map_err(|k| (name.clone(), k))?;
    let (mut fm, parse_notes, body) = split(&text).map_err(|k| (name.clone(), k))?;
    let Some(name) = name else {
        return Err((
            None,
            WarningKind::Unreadable {
                error: "the file name is not UTF-8".into(),
            },
        ));
    };
    let given = fm.description.clone().filter(|d| !d.trim().is_empty());
    let (description, described_by) = match given {
        Some(d) => (d, DescribedBy::Frontmatter),
        None => match first_line(&body) {
            Some(line) => (line, DescribedBy::FirstLine),
            None => return Err((Some(name), WarningKind::EmptyCommand)),
        },
    };
    let description = match namespace {
        [] => description,
        parts => format!("{description} ({}:{})", root.kind, parts.join(":")),
    };
    let assessment = assess::assess_fields(Some(&name), Some(&description), parse_notes);
    notes.extend(assessment.warnings);
    let (name, description) = match assessment.verdict {
        Verdict::Usable { name, description } => (name, description),
        Verdict::Invalid { reason } => return Err((Some(name), reason)),
    };
    if fm.extra.contains_key("model") {
        notes.push(WarningKind::Unsupported {
            field: "model",
            instead: "the command runs with the session's model (switch with /model)",
        });
    }
    if body.trim().is_empty() {
        return Err((Some(name), WarningKind::EmptyCommand));
    }
    // The file's name is the command's name, whatever a `name` field says.
    fm.name = Some(name.clone());
    fm.description = Some(description.clone());
    Ok(Skill {
        dir: shown.parent().map(Path::to_path_buf).unwrap_or_default(),
        path: shown.to_path_buf(),
        root: root.clone(),
        frontmatter: LazyFrontmatter::parsed(fm),
        status: if notes.is_empty() {
            SkillStatus::Ok
        } else {
            SkillStatus::Warning
        },
        kind: SkillKind::Command(CommandFile {
            real: real.to_path_buf(),
            namespace: (!namespace.is_empty()).then(|| namespace.join(":")),
            described_by,
        }),
        name,
        description,
    })
}

/// A command's `allowed-tools` in harness9's rule syntax: Claude Code's tool names
/// mapped (`Bash(git add:*)` → `bash(git add:*)`, `Read` → `read`, the tools that read
/// files; `Edit`/`MultiEdit` → `edit`, the tools that change files; `Write` →
/// `write_file`, `Grep`, `Glob`, `LS`), harness9's own tool names and `mcp__…` names
/// kept. Returns the rules and the entries that name no harness9 tool (not granted).
pub fn grant_rules(allowed: &[String]) -> (Vec<String>, Vec<String>) {
    let mut rules = Vec::new();
    let mut unknown = Vec::new();
    for entry in allowed.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let (base, spec) = match entry.split_once('(') {
            Some((base, rest)) => (base.trim(), Some(rest)),
            None => (entry, None),
        };
        let tool = match base.to_ascii_lowercase().as_str() {
            "bash" => "bash",
            "read" => "read",
            "edit" | "multiedit" => "edit",
            "write" => "write_file",
            "grep" => "grep",
            "glob" => "glob",
            "ls" | "list" => "list",
            "read_file" => "read_file",
            "edit_file" => "edit_file",
            "write_file" => "write_file",
            _ if base.starts_with("mcp__") => base,
            _ => {
                unknown.push(entry.to_string());
                continue;
            }
        };
        rules.push(match spec {
            Some(rest) => format!("{tool}({rest}"),
            None => tool.to_string(),
        });
    }
    (rules, unknown)
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
