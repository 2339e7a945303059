//! The walk below the agents folders: every `*.md` file (in name order, files before
//! subfolders, hidden entries and `README.md` skipped) read as a definition.
//!
//! Repository input: a project folder is read only where it really is inside the
//! project, links below a folder are never followed (reported instead), files are
//! opened without following links and read up to [`MAX_DEFINITION_BYTES`], and the
//! depth and the number of files per folder are capped. Every file that is not a usable
//! definition is reported with its path and why. It knows files, not precedence.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::problem::AgentProblem;
use super::{
    AgentDefinition, AgentRoot, AgentWarning, InvalidAgent, MAX_DEFINITION_BYTES, MAX_DEPTH,
    MAX_PER_ROOT, Origin, Places,
};

/// What the walk found, in precedence order.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub agents: Vec<AgentDefinition>,
    pub invalid: Vec<InvalidAgent>,
    pub warnings: Vec<AgentWarning>,
}

impl Found {
    fn warn(&mut self, path: &Path, problem: AgentProblem) {
        self.warnings.push(AgentWarning {
            path: path.to_path_buf(),
            problem,
        });
    }
}

/// Searches every root of `places`.
pub(super) fn discover(places: &Places) -> Found {
    let boundary = std::fs::canonicalize(places.project_boundary()).ok();
    let mut found = Found::default();
    for root in places.roots() {
        walk_root(&root, boundary.as_deref(), &mut found);
    }
    found
}

/// Reads `paths` as given (files, or folders searched like a root), for `validate`.
pub(super) fn discover_paths(paths: &[PathBuf]) -> Found {
    let mut found = Found::default();
    for path in paths {
        let root = AgentRoot {
            path: path.as_path().into(),
            origin: Origin::Extra,
        };
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_file() => {
                let mut walk = Walk {
                    root: &root,
                    read: 0,
                    found: &mut found,
                };
                // The folder it is in, resolved; the file itself is opened without
                // following a link.
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
                let real = std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
                    .map(|dir| dir.join(path.file_name().unwrap_or_default()));
                match real {
                    Ok(real) => walk.file(path.clone(), real),
                    Err(e) => {
                        let error = e.to_string();
                        walk.found.warn(path, AgentProblem::Unreadable { error });
                    }
                }
            }
            Ok(m) if m.file_type().is_symlink() => found.warn(path, AgentProblem::Link),
            _ => walk_root(&root, None, &mut found),
        }
    }
    found
}

fn walk_root(root: &AgentRoot, boundary: Option<&Path>, found: &mut Found) {
    let real = match std::fs::canonicalize(&root.path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            let error = e.to_string();
            return found.warn(&root.path, AgentProblem::Unreadable { error });
        }
    };
    if !real.is_dir() {
        return found.warn(&root.path, AgentProblem::RootNotDirectory);
    }
    if root.origin == Origin::Project && !boundary.is_some_and(|b| real.starts_with(b)) {
        return found.warn(&root.path, AgentProblem::OutsideProject { real });
    }
    let mut walk = Walk {
        root,
        read: 0,
        found,
    };
    walk.folder(&root.path, &real, 0);
}

struct Walk<'a> {
    root: &'a AgentRoot,
    read: usize,
    found: &'a mut Found,
}

impl Walk<'_> {
    /// The definitions of one folder (`shown` as found, `real` where it is), then its
    /// subfolders, each in name order.
    fn folder(&mut self, shown: &Path, real: &Path, depth: usize) {
        let entries = match std::fs::read_dir(real) {
            Ok(entries) => entries,
            Err(e) => {
                let error = e.to_string();
                return self.found.warn(shown, AgentProblem::Unreadable { error });
            }
        };
        let mut files = Vec::new();
        let mut folders = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let text = name.to_string_lossy();
            if text.starts_with('.') {
                continue;
            }
            let markdown = text.ends_with(".md") && !text.eq_ignore_ascii_case("README.md");
            // The kind of the entry itself: a link is a link, never what it points at.
            match entry.file_type() {
                Ok(t) if t.is_symlink() && (markdown || real.join(&name).is_dir()) => {
                    self.found.warn(&shown.join(&name), AgentProblem::Link);
                }
                Ok(t) if t.is_symlink() => {}
                Ok(t) if t.is_dir() => folders.push(name),
                Ok(t) if t.is_file() && markdown => files.push(name),
                _ => {}
            }
        }
        files.sort();
        folders.sort();
        for name in files {
            if self.read >= MAX_PER_ROOT {
                let limit = MAX_PER_ROOT;
                return self.found.warn(shown, AgentProblem::CountLimit { limit });
            }
            self.read += 1;
            self.file(shown.join(&name), real.join(&name));
        }
        for name in folders {
            let (shown, real) = (shown.join(&name), real.join(&name));
            if depth + 1 > MAX_DEPTH {
                let limit = MAX_DEPTH;
                self.found.warn(&shown, AgentProblem::DepthLimit { limit });
                continue;
            }
            self.folder(&shown, &real, depth + 1);
        }
    }

    fn file(&mut self, shown: PathBuf, real: PathBuf) {
        let parsed = read_capped(&real)
            .map_err(|p| (None, p))
            .and_then(|text| super::parse_file(&text, &shown, self.root.origin));
        match parsed {
            Ok((agent, notes)) => {
                for problem in notes {
                    self.found.warn(&shown, problem);
                }
                self.found.agents.push(agent);
            }
            Err((name, reason)) => {
                self.found.warn(&shown, reason.clone());
                self.found.invalid.push(InvalidAgent {
                    name,
                    path: shown,
                    origin: self.root.origin,
                    reason,
                });
            }
        }
    }
}

/// Reads a definition without following links, up to [`MAX_DEFINITION_BYTES`].
fn read_capped(real: &Path) -> Result<String, AgentProblem> {
    let unreadable = |e: &dyn std::fmt::Display| AgentProblem::Unreadable {
        error: e.to_string(),
    };
    let file = crate::nofollow::open_read(real).map_err(|e| unreadable(&e))?;
    let mut bytes = Vec::new();
    let cap = u64::try_from(MAX_DEFINITION_BYTES).unwrap_or(u64::MAX);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(&e))?;
    if bytes.len() > MAX_DEFINITION_BYTES {
        return Err(AgentProblem::TooLarge {
            limit: MAX_DEFINITION_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| unreadable(&"not UTF-8 text"))
}

/// [`read_capped`], for the module's tests.
#[cfg(test)]
pub(super) fn read_capped_for_test(real: &Path) -> Result<String, AgentProblem> {
    read_capped(real)
}
