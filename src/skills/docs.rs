//! A skill's documents: the `.md` and `.txt` files in its folder other than the top
//! `SKILL.md` (`references/` included), found by the one folder walk
//! ([`super::folder`]) and named by paths relative to the folder. This module owns
//! listing them, resolving a requested path (absolute paths, `..` and symlinks leading
//! outside the folder are refused), reading them into `<skill-doc path="...">` blocks
//! within a size budget, and the per-skill selection ([`DocSelection`]: which documents
//! were handed to the conversation).
//!
//! Documents enter the conversation as tool results: the system prompt never changes.
//! It knows skills and files; it must not know tools or the agent loop.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Deserialize;

use super::Skill;
use super::folder::{self, WalkLimits};

/// Documents listed per skill at most.
pub const MAX_DOCS: usize = 200;
/// Folder depth searched below the skill folder.
pub const MAX_DOC_DEPTH: usize = 4;

/// One document of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocEntry {
    /// Relative to the skill folder, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// The documents of the skill in `dir`, sorted by path; `true` when the walk stopped at
/// a limit before seeing everything.
pub fn list_docs(dir: &Path) -> (Vec<DocEntry>, bool) {
    let limits = WalkLimits {
        max_depth: MAX_DOC_DEPTH,
        max_files: MAX_DOCS,
    };
    let listing = folder::walk(dir, "", limits, &is_document);
    let docs = listing
        .files
        .into_iter()
        .map(|f| DocEntry {
            path: f.path,
            size: f.size,
        })
        .collect();
    (docs, listing.truncated)
}

/// `.md` or `.txt` (any case), and not the skill's own `SKILL.md`.
pub fn is_document(rel: &str) -> bool {
    let ext = Path::new(rel)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    matches!(ext.as_deref(), Some("md" | "txt")) && rel != "SKILL.md"
}

/// A requested document path that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocPathError {
    /// Nothing was given.
    #[error("an empty document path")]
    Empty,
    /// An absolute path.
    #[error("`{0}` is absolute; give a path relative to the skill folder")]
    Absolute(String),
    /// A path with a `..` component.
    #[error("`{0}` uses `..`; document paths must stay inside the skill folder")]
    ParentDir(String),
    /// Not a `.md`/`.txt` file, or the skill's `SKILL.md`.
    #[error("`{0}` is not a document (a .md or .txt file other than SKILL.md)")]
    NotADocument(String),
    /// No such file.
    #[error("`{0}` does not exist in the skill folder")]
    NotFound(String),
    /// It resolves (through a symlink) outside the skill folder.
    #[error("`{0}` resolves outside the skill folder")]
    Outside(String),
    /// The skill is a command: it has no folder, so no documents.
    #[error("`{0}`: a command has no documents")]
    NoFolder(String),
}

/// Resolves `requested` against the skill folder `dir`: the normalised relative path
/// (`/`-separated, `./` dropped) and the canonical file.
pub fn resolve_doc(dir: &Path, requested: &str) -> Result<(String, PathBuf), DocPathError> {
    let requested = requested.trim();
    let path = Path::new(requested);
    if requested.is_empty() {
        return Err(DocPathError::Empty);
    }
    if path.is_absolute() {
        return Err(DocPathError::Absolute(requested.to_string()));
    }
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => return Err(DocPathError::ParentDir(requested.to_string())),
        }
    }
    let rel = parts.join("/");
    if rel.is_empty() {
        return Err(DocPathError::Empty);
    }
    if !is_document(&rel) {
        return Err(DocPathError::NotADocument(rel));
    }
    let root = std::fs::canonicalize(dir).map_err(|_| DocPathError::NotFound(rel.clone()))?;
    let real =
        std::fs::canonicalize(root.join(&rel)).map_err(|_| DocPathError::NotFound(rel.clone()))?;
    if !real.starts_with(&root) {
        return Err(DocPathError::Outside(rel));
    }
    if !real.is_file() {
        return Err(DocPathError::NotADocument(rel));
    }
    Ok((rel, real))
}

/// Documents read for the conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocText {
    /// The `<skill-doc path="...">` blocks, one per included document.
    pub text: String,
    /// Included documents, in order.
    pub included: Vec<String>,
    /// Documents left out, with the reason.
    pub left_out: Vec<(String, String)>,
}

/// Reads `docs` (already resolved: relative path and file) in order; a document that
/// does not fit what is left of `budget` bytes is left out, and later, smaller ones
/// may still fit.
pub fn read_docs(docs: &[(String, PathBuf)], budget: usize) -> DocText {
    let mut out = DocText::default();
    for (rel, file) in docs {
        let wrapper = format!("<skill-doc path=\"{rel}\">\n\n</skill-doc>\n").len();
        let size = std::fs::metadata(file).map_or(0, |m| m.len());
        let need = usize::try_from(size)
            .unwrap_or(usize::MAX)
            .saturating_add(wrapper);
        if out.text.len().saturating_add(need) > budget {
            out.left_out.push((
                rel.clone(),
                format!(
                    "{size} bytes, over what is left of the size cap ({} bytes); read it with \
                     read_file at {}",
                    budget.saturating_sub(out.text.len()),
                    file.display()
                ),
            ));
            continue;
        }
        match crate::plain_file::read(file) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let text = text.trim_end();
                out.text.push_str(&format!(
                    "<skill-doc path=\"{rel}\">\n{text}\n</skill-doc>\n"
                ));
                out.included.push(rel.clone());
            }
            Err(e) => out
                .left_out
                .push((rel.clone(), format!("cannot read: {e}"))),
        }
    }
    out
}

/// How `skill_select_docs` changes a selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SelectMode {
    /// Add documents to the selection.
    Add,
    /// Make the selection exactly these documents.
    Replace,
    /// Empty the selection.
    Clear,
}

/// Which documents of each skill were handed to the conversation. Cheap to clone
/// (shared).
#[derive(Debug, Clone, Default)]
pub struct DocSelection(Arc<Mutex<BTreeMap<String, Vec<String>>>>);

impl DocSelection {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Vec<String>>> {
        // Every update is one insert or remove: a poisoned lock holds a whole state.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The selected documents of `skill`, in selection order.
    pub fn selected(&self, skill: &str) -> Vec<String> {
        self.lock().get(skill).cloned().unwrap_or_default()
    }

    fn set(&self, skill: &str, docs: Vec<String>) {
        let mut map = self.lock();
        if docs.is_empty() {
            map.remove(skill);
        } else {
            map.insert(skill.to_string(), docs);
        }
    }

    /// Forgets the selection of `skill`.
    pub fn forget(&self, skill: &str) {
        self.lock().remove(skill);
    }

    /// Forgets every selection (a new conversation).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Applies `mode` with `requested` documents: checks every path first (a bad one
    /// changes nothing), reads the newly selected ones within `budget` bytes and records
    /// the new selection (documents left out are not selected).
    pub fn change(
        &self,
        skill: &Skill,
        mode: SelectMode,
        requested: &[String],
        budget: usize,
    ) -> Result<Selected, DocPathError> {
        let mut wanted: Vec<(String, PathBuf)> = Vec::new();
        if mode != SelectMode::Clear {
            for r in requested {
                let folder = skill
                    .folder()
                    .ok_or_else(|| DocPathError::NoFolder(r.clone()))?;
                let resolved = resolve_doc(folder, r)?;
                if !wanted.iter().any(|(rel, _)| *rel == resolved.0) {
                    wanted.push(resolved);
                }
            }
        }
        let prior = self.selected(&skill.name);
        let (already, fresh): (Vec<_>, Vec<_>) =
            wanted.into_iter().partition(|(rel, _)| prior.contains(rel));
        let already: Vec<String> = already.into_iter().map(|(rel, _)| rel).collect();
        let docs = read_docs(&fresh, budget);
        let (kept, dropped): (Vec<String>, Vec<String>) = match mode {
            SelectMode::Add => (prior, Vec::new()),
            SelectMode::Replace => prior.into_iter().partition(|p| already.contains(p)),
            SelectMode::Clear => (Vec::new(), prior),
        };
        let mut now = kept;
        now.extend(docs.included.iter().cloned());
        self.set(&skill.name, now.clone());
        Ok(Selected {
            docs,
            already,
            dropped,
            now,
        })
    }
}

/// What a selection change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// The newly selected documents' text, and what was left out.
    pub docs: DocText,
    /// Requested documents that were selected already (their text is earlier in the
    /// conversation).
    pub already: Vec<String>,
    /// Documents no longer selected.
    pub dropped: Vec<String>,
    /// The selection now.
    pub now: Vec<String>,
}

impl Selected {
    /// Lines for the model about what changed, then the documents' text.
    pub fn render(&self, skill: &str) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        if !self.docs.included.is_empty() {
            line(format!(
                "Selected documents of skill \"{skill}\" (text below): {}.",
                self.docs.included.join(", ")
            ));
        }
        if !self.already.is_empty() {
            line(format!(
                "Already selected (their text is earlier in the conversation): {}.",
                self.already.join(", ")
            ));
        }
        for (rel, reason) in &self.docs.left_out {
            line(format!("Left out {rel}: {reason}."));
        }
        if !self.dropped.is_empty() {
            line(format!(
                "No longer selected: {} (disregard their text from earlier in the conversation).",
                self.dropped.join(", ")
            ));
        }
        line(if self.now.is_empty() {
            format!("Selection of skill \"{skill}\" is now empty.")
        } else {
            format!(
                "Selection of skill \"{skill}\" is now: {}.",
                self.now.join(", ")
            )
        });
        if !self.docs.text.is_empty() {
            out.push('\n');
            out.push_str(self.docs.text.trim_end());
        }
        out.trim_end().to_string()
    }
}

/// Writes skills `pdf` (documents at the top, in `references/` and deeper, files that
/// are not documents, a hidden folder, a symlink to `secret.md` outside it) and `other`
/// under `root/skills`, and `root/secret.md` (tests here and of the document tools).
#[cfg(test)]
pub(crate) fn write_test_skills(root: &Path) {
    crate::test_support::write_tree(
        root,
        &[
            (
                "skills/pdf/SKILL.md",
                "---\nname: pdf\ndescription: PDFs\n---\nbody\n",
            ),
            ("skills/pdf/forms.md", "# Forms\nFill them.\n"),
            ("skills/pdf/reference.txt", "plain text\n"),
            ("skills/pdf/references/api.md", "API\n"),
            ("skills/pdf/references/deep/more.MD", "more\n"),
            ("skills/pdf/scripts/fill.py", "print()\n"),
            ("skills/pdf/.hidden/x.md", "hidden\n"),
            ("skills/pdf/tools.json", "[]"),
            (
                "skills/other/SKILL.md",
                "---\nname: other\ndescription: Other\n---\nbody\n",
            ),
            ("secret.md", "SECRET\n"),
        ],
    );
    std::os::unix::fs::symlink(root.join("secret.md"), root.join("skills/pdf/leak.md")).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_is_sorted_relative_and_stays_inside() {
        let tmp = tempfile::tempdir().unwrap();
        write_test_skills(tmp.path());
        let (docs, truncated) = list_docs(&tmp.path().join("skills/pdf"));
        let paths: Vec<&str> = docs.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "forms.md",
                "reference.txt",
                "references/api.md",
                "references/deep/more.MD"
            ]
        );
        assert_eq!(docs[0].size, 19);
        assert!(!truncated);
    }

    #[test]
    fn paths_escaping_the_skill_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        write_test_skills(tmp.path());
        let dir = tmp.path().join("skills/pdf");
        let outside = tmp.path().join("secret.md");
        let cases: Vec<(String, DocPathError)> = vec![
            (
                outside.display().to_string(),
                DocPathError::Absolute(outside.display().to_string()),
            ),
            (
                "../../secret.md".into(),
                DocPathError::ParentDir("../../secret.md".into()),
            ),
            (
                "references/../forms.md".into(),
                DocPathError::ParentDir("references/../forms.md".into()),
            ),
            ("leak.md".into(), DocPathError::Outside("leak.md".into())),
            (
                "SKILL.md".into(),
                DocPathError::NotADocument("SKILL.md".into()),
            ),
            (
                "scripts/fill.py".into(),
                DocPathError::NotADocument("scripts/fill.py".into()),
            ),
            ("nope.md".into(), DocPathError::NotFound("nope.md".into())),
            ("".into(), DocPathError::Empty),
        ];
        for (requested, expected) in cases {
            assert_eq!(resolve_doc(&dir, &requested), Err(expected), "{requested}");
        }
        let (rel, real) = resolve_doc(&dir, "./references//api.md").unwrap();
        assert_eq!(rel, "references/api.md");
        assert_eq!(
            real,
            std::fs::canonicalize(dir.join("references/api.md")).unwrap()
        );
    }
}
