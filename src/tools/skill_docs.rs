//! A skill's documents: the `.md` and `.txt` files in its folder other than the top
//! `SKILL.md` (`references/` included), found by a bounded, sorted walk and named by
//! paths relative to the folder. This module owns listing them, resolving a requested
//! path (absolute paths, `..` and symlinks leading outside the folder are refused),
//! reading them into `<skill-doc path="...">` blocks within a size budget, the per-skill
//! selection ([`DocSelection`]: which documents were handed to the conversation), and
//! the two tools over them, `skill_list_docs` and `skill_select_docs`.
//!
//! Documents enter the conversation as tool results (here, or appended by `use_skill`):
//! the system prompt never changes. It knows the catalog, not the agent loop.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Deserialize;
use serde_json::{Value, json};

use super::use_skill::{LoadedSkills, lookup};
use super::{Access, Tool, ToolContext, ToolFuture, ToolOutput, parse_args, run_blocking};
use crate::skills::{Catalog, Skill};

/// Documents listed per skill at most.
pub const MAX_DOCS: usize = 200;
/// Folder depth searched below the skill folder.
pub const MAX_DOC_DEPTH: usize = 4;
/// Directory entries looked at per skill at most (a stray `node_modules` stays cheap).
const MAX_VISITED: usize = 5_000;
/// Room kept in a result for the lines around the documents.
pub(crate) const SUMMARY_RESERVE: usize = 1_000;
/// Names of documents shown in an error about a bad path.
const NAMES_IN_ERRORS: usize = 30;

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
    let mut walk = Walk {
        root: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
        docs: Vec::new(),
        visited: 0,
        truncated: false,
    };
    let root = walk.root.clone();
    walk.visit(&root, "", 0);
    walk.docs.sort_by(|a, b| a.path.cmp(&b.path));
    (walk.docs, walk.truncated)
}

struct Walk {
    root: PathBuf,
    docs: Vec<DocEntry>,
    visited: usize,
    truncated: bool,
}

impl Walk {
    fn visit(&mut self, dir: &Path, rel: &str, depth: usize) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        for name in names {
            self.visited += 1;
            if self.docs.len() >= MAX_DOCS || self.visited > MAX_VISITED {
                self.truncated = true;
                return;
            }
            let path = dir.join(&name);
            let rel_path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            // Symlinks are followed only while they stay inside the skill folder.
            let Ok(real) = std::fs::canonicalize(&path) else {
                continue;
            };
            if !real.starts_with(&self.root) {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&real) else {
                continue;
            };
            if meta.is_dir() {
                if depth < MAX_DOC_DEPTH {
                    self.visit(&path, &rel_path, depth + 1);
                } else {
                    self.truncated = true;
                }
            } else if meta.is_file() && is_document(&rel_path) {
                self.docs.push(DocEntry {
                    path: rel_path,
                    size: meta.len(),
                });
            }
        }
    }
}

/// `.md` or `.txt` (any case), and not the skill's own `SKILL.md`.
fn is_document(rel: &str) -> bool {
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
        match std::fs::read(file) {
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
                let resolved = resolve_doc(&skill.dir, r)?;
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

/// An error for a bad document path, with the skill's documents to choose from.
pub(crate) fn bad_path(skill: &Skill, e: &DocPathError) -> ToolOutput {
    let (docs, truncated) = list_docs(&skill.dir);
    let mut names: Vec<&str> = docs
        .iter()
        .take(NAMES_IN_ERRORS)
        .map(|d| d.path.as_str())
        .collect();
    if truncated || docs.len() > NAMES_IN_ERRORS {
        names.push("…");
    }
    let available = if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    };
    ToolOutput::error(format!(
        "Cannot select a document of skill \"{}\": {e}. Nothing was changed. Documents: {available}",
        skill.name
    ))
}

/// `skill_list_docs`: lists a skill's documents with sizes and the selection.
#[derive(Debug, Clone)]
pub struct SkillListDocs {
    catalog: Arc<Catalog>,
    loaded: LoadedSkills,
}

impl SkillListDocs {
    /// The tool over `catalog`, reading the selection from `loaded`.
    pub fn new(catalog: Arc<Catalog>, loaded: LoadedSkills) -> Self {
        SkillListDocs { catalog, loaded }
    }

    fn call(&self, name: &str) -> ToolOutput {
        let skill = match lookup(&self.catalog, name) {
            Ok(s) => s,
            Err(e) => return ToolOutput::error(e),
        };
        let (docs, truncated) = list_docs(&skill.dir);
        let selected = self.loaded.docs().selected(&skill.name);
        let state = if self.loaded.contains(&skill.name) {
            "loaded"
        } else {
            "not loaded"
        };
        if docs.is_empty() {
            return ToolOutput::ok(format!(
                "Skill \"{}\" ({state}) has no documents (.md or .txt files besides SKILL.md).",
                skill.name
            ));
        }
        let mut out = format!(
            "Documents of skill \"{}\" ({state}; {} document(s), {} selected; paths relative \
             to {}):",
            skill.name,
            docs.len(),
            selected.len(),
            skill.dir.display()
        );
        for d in &docs {
            let mark = if selected.contains(&d.path) {
                " [selected]"
            } else {
                ""
            };
            out.push_str(&format!("\n- {} ({} bytes){mark}", d.path, d.size));
        }
        if truncated {
            out.push_str("\n- … (more documents not listed)");
        }
        out.push_str(
            "\nAdd them to the conversation with skill_select_docs (or use_skill's docs).",
        );
        ToolOutput::ok(out)
    }
}

#[derive(Debug, Deserialize)]
struct ListArgs {
    skill: String,
}

impl Tool for SkillListDocs {
    fn name(&self) -> &str {
        "skill_list_docs"
    }

    fn description(&self) -> &str {
        "List a skill's documents (.md and .txt files besides SKILL.md, references/ \
         included) with their sizes and which are selected."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's name."}
            },
            "required": ["skill"]
        })
    }

    fn access(&self, _args: &Value, _ctx: &ToolContext) -> Access {
        Access::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        args.get("skill")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    }

    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = match parse_args::<ListArgs>(self.name(), &args, &self.parameters()) {
                Ok(a) => a,
                Err(out) => return Ok(out),
            };
            let tool = self.clone();
            run_blocking(move || tool.call(&args.skill)).await
        })
    }
}

/// `skill_select_docs`: adds, replaces or clears a skill's selected documents and
/// returns the text of the newly selected ones.
#[derive(Debug, Clone)]
pub struct SkillSelectDocs {
    catalog: Arc<Catalog>,
    loaded: LoadedSkills,
}

#[derive(Debug, Deserialize)]
struct SelectArgs {
    skill: String,
    #[serde(default)]
    docs: Vec<String>,
    mode: SelectMode,
}

impl SkillSelectDocs {
    /// The tool over `catalog`, keeping the selection in `loaded`.
    pub fn new(catalog: Arc<Catalog>, loaded: LoadedSkills) -> Self {
        SkillSelectDocs { catalog, loaded }
    }

    fn call(&self, args: SelectArgs, budget: usize) -> ToolOutput {
        let skill = match lookup(&self.catalog, &args.skill) {
            Ok(s) => s,
            Err(e) => return ToolOutput::error(e),
        };
        if args.mode != SelectMode::Clear && args.docs.is_empty() {
            return ToolOutput::error(
                "Give `docs` (paths from skill_list_docs) to add or replace; use mode \"clear\" \
                 to empty the selection.",
            );
        }
        match self
            .loaded
            .docs()
            .change(skill, args.mode, &args.docs, budget)
        {
            Ok(selected) => ToolOutput::ok(selected.render(&skill.name)),
            Err(e) => bad_path(skill, &e),
        }
    }
}

impl Tool for SkillSelectDocs {
    fn name(&self) -> &str {
        "skill_select_docs"
    }

    fn description(&self) -> &str {
        "Change which of a skill's documents are in the conversation. add and replace \
         return the text of newly selected documents; clear empties the selection."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's name."},
                "docs": {"type": "array", "items": {"type": "string"}, "description": "Document paths relative to the skill folder, as skill_list_docs shows them."},
                "mode": {"type": "string", "enum": ["add", "replace", "clear"], "description": "add to, replace or clear the selection."}
            },
            "required": ["skill", "mode"]
        })
    }

    fn access(&self, _args: &Value, _ctx: &ToolContext) -> Access {
        Access::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        let skill = args.get("skill").and_then(Value::as_str).unwrap_or("");
        let mode = args.get("mode").and_then(Value::as_str).unwrap_or("");
        format!("{skill} ({mode})")
    }

    fn run<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = match parse_args::<SelectArgs>(self.name(), &args, &self.parameters()) {
                Ok(a) => a,
                Err(out) => return Ok(out),
            };
            let budget = ctx.limits.max_output_bytes.saturating_sub(SUMMARY_RESERVE);
            let tool = self.clone();
            run_blocking(move || tool.call(args, budget)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::DiscoveryOptions;
    use crate::tools::test_context;

    struct Fixture {
        tmp: tempfile::TempDir,
        catalog: Arc<Catalog>,
        loaded: LoadedSkills,
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Skill `pdf` with documents at the top, in references/ and deeper, plus files
    /// that are not documents; and skill `other`.
    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let pdf = tmp.path().join("skills/pdf");
        write(
            &pdf.join("SKILL.md"),
            "---\nname: pdf\ndescription: PDFs\n---\nbody\n",
        );
        write(&pdf.join("forms.md"), "# Forms\nFill them.\n");
        write(&pdf.join("reference.txt"), "plain text\n");
        write(&pdf.join("references/api.md"), "API\n");
        write(&pdf.join("references/deep/more.MD"), "more\n");
        write(&pdf.join("scripts/fill.py"), "print()\n");
        write(&pdf.join(".hidden/x.md"), "hidden\n");
        write(&pdf.join("tools.json"), "[]");
        write(
            &tmp.path().join("skills/other/SKILL.md"),
            "---\nname: other\ndescription: Other\n---\nbody\n",
        );
        write(&tmp.path().join("secret.md"), "SECRET\n");
        std::os::unix::fs::symlink(tmp.path().join("secret.md"), pdf.join("leak.md")).unwrap();
        let catalog = Arc::new(Catalog::discover(&DiscoveryOptions {
            workdir: tmp.path().to_path_buf(),
            harness9_home: tmp.path().join("home"),
            ..DiscoveryOptions::default()
        }));
        Fixture {
            tmp,
            catalog,
            loaded: LoadedSkills::default(),
        }
    }

    impl Fixture {
        fn dir(&self) -> PathBuf {
            self.tmp.path().join("skills/pdf")
        }

        async fn list(&self, skill: &str) -> ToolOutput {
            SkillListDocs::new(self.catalog.clone(), self.loaded.clone())
                .run(json!({"skill": skill}), &test_context(self.tmp.path()))
                .await
                .unwrap()
        }

        async fn select(&self, args: Value) -> ToolOutput {
            SkillSelectDocs::new(self.catalog.clone(), self.loaded.clone())
                .run(args, &test_context(self.tmp.path()))
                .await
                .unwrap()
        }
    }

    #[test]
    fn listing_is_sorted_relative_and_stays_inside() {
        let f = fixture();
        let (docs, truncated) = list_docs(&f.dir());
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
        let f = fixture();
        let dir = f.dir();
        let outside = f.tmp.path().join("secret.md");
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

    #[tokio::test]
    async fn list_docs_tool_shows_sizes_selection_and_load_state() {
        let f = fixture();
        let out = f.list("pdf").await;
        assert!(!out.is_error);
        assert!(
            out.content
                .starts_with("Documents of skill \"pdf\" (not loaded; 4 document(s), 0 selected;"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("\n- forms.md (19 bytes)\n"),
            "{}",
            out.content
        );
        f.select(json!({"skill": "pdf", "docs": ["forms.md"], "mode": "add"}))
            .await;
        f.loaded.mark("pdf");
        let out = f.list("pdf").await;
        assert!(
            out.content.contains("(loaded; 4 document(s), 1 selected;"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("- forms.md (19 bytes) [selected]"),
            "{}",
            out.content
        );
        let out = f.list("other").await;
        assert!(out.content.contains("has no documents"), "{}", out.content);
        let out = f.list("nope").await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Unknown skill \"nope\". Available skills: other, pdf"
        );
    }

    #[tokio::test]
    async fn select_add_replace_clear() {
        let f = fixture();
        let out = f
            .select(
                json!({"skill": "pdf", "docs": ["forms.md", "references/api.md"], "mode": "add"}),
            )
            .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            "Selected documents of skill \"pdf\" (text below): forms.md, references/api.md.\n\
             Selection of skill \"pdf\" is now: forms.md, references/api.md.\n\n\
             <skill-doc path=\"forms.md\">\n# Forms\nFill them.\n</skill-doc>\n\
             <skill-doc path=\"references/api.md\">\nAPI\n</skill-doc>"
        );
        // Adding again returns only what is new.
        let out = f
            .select(json!({"skill": "pdf", "docs": ["forms.md", "reference.txt"], "mode": "add"}))
            .await;
        assert!(
            out.content.contains(
                "Already selected (their text is earlier in the conversation): forms.md."
            )
        );
        assert!(
            out.content
                .contains("<skill-doc path=\"reference.txt\">\nplain text\n</skill-doc>")
        );
        assert!(!out.content.contains("Fill them"), "{}", out.content);
        assert_eq!(
            f.loaded.docs().selected("pdf"),
            ["forms.md", "references/api.md", "reference.txt"]
        );
        let out = f
            .select(json!({"skill": "pdf", "docs": ["reference.txt", "references/deep/more.MD"], "mode": "replace"}))
            .await;
        assert!(
            out.content
                .contains("No longer selected: forms.md, references/api.md"),
            "{}",
            out.content
        );
        assert!(
            out.content
                .contains("<skill-doc path=\"references/deep/more.MD\">\nmore\n</skill-doc>")
        );
        assert!(!out.content.contains("plain text"), "{}", out.content);
        assert_eq!(
            f.loaded.docs().selected("pdf"),
            ["reference.txt", "references/deep/more.MD"]
        );
        let out = f.select(json!({"skill": "pdf", "mode": "clear"})).await;
        assert!(
            out.content
                .contains("Selection of skill \"pdf\" is now empty."),
            "{}",
            out.content
        );
        assert!(f.loaded.docs().selected("pdf").is_empty());
        let out = f.select(json!({"skill": "pdf", "mode": "add"})).await;
        assert!(out.is_error && out.content.contains("Give `docs`"));
        let out = f
            .select(json!({"skill": "pdf", "docs": ["x.md"], "mode": "merge"}))
            .await;
        assert!(
            out.is_error && out.content.contains("unknown variant"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn a_bad_path_changes_nothing_and_lists_the_documents() {
        let f = fixture();
        f.select(json!({"skill": "pdf", "docs": ["forms.md"], "mode": "add"}))
            .await;
        for bad in ["../../secret.md", "leak.md", "/etc/passwd"] {
            let out = f
                .select(json!({"skill": "pdf", "docs": ["reference.txt", bad], "mode": "replace"}))
                .await;
            assert!(out.is_error, "{bad}");
            assert!(
                out.content
                    .contains("Nothing was changed. Documents: forms.md, reference.txt,"),
                "{}",
                out.content
            );
            assert!(!out.content.contains("SECRET"));
            assert_eq!(f.loaded.docs().selected("pdf"), ["forms.md"]);
        }
    }

    #[tokio::test]
    async fn documents_over_the_cap_are_left_out_and_named() {
        let f = fixture();
        write(&f.dir().join("big.md"), &"x".repeat(5_000));
        let pdf = f.catalog.get("pdf").unwrap();
        let docs = ["big.md".to_string(), "forms.md".to_string()];
        let selected = f
            .loaded
            .docs()
            .change(pdf, SelectMode::Add, &docs, 1_000)
            .unwrap();
        assert_eq!(selected.docs.included, ["forms.md"]);
        assert_eq!(selected.docs.left_out.len(), 1);
        let text = selected.render("pdf");
        assert!(
            text.contains("Left out big.md: 5000 bytes, over what is left of the size cap (1000 bytes); read it with read_file at "),
            "{text}"
        );
        assert_eq!(f.loaded.docs().selected("pdf"), ["forms.md"]);
    }
}
