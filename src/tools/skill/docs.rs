//! The document tools over [`crate::skills::docs`]: `skill_list_docs` lists a skill's
//! documents with sizes and which are selected; `skill_select_docs` adds, replaces or
//! clears the selection and returns the newly selected documents' text. Documents enter
//! the conversation as tool results: the system prompt never changes. It knows the
//! catalog and the session's active skills, not the agent loop.

use serde::Deserialize;

use super::{SUMMARY_RESERVE, lookup};
use crate::skills::SharedCatalog;
use crate::skills::Skill;
use crate::skills::active::LoadedSkills;
use crate::skills::docs::{DocPathError, SelectMode, list_docs};
use crate::tools::{OutputKind, ToolContext, ToolFuture, ToolOutput, TypedTool, run_blocking};

/// Names of documents shown in an error about a bad path.
const NAMES_IN_ERRORS: usize = 30;

/// An error for a bad document path, with the skill's documents to choose from.
pub(crate) fn bad_path(skill: &Skill, e: &DocPathError) -> ToolOutput {
    let (docs, truncated) = skill.folder().map(list_docs).unwrap_or_default();
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
    catalog: SharedCatalog,
    loaded: LoadedSkills,
}

impl SkillListDocs {
    /// The tool over `catalog`, reading the selection from `loaded`.
    pub fn new(catalog: impl Into<SharedCatalog>, loaded: LoadedSkills) -> Self {
        SkillListDocs {
            catalog: catalog.into(),
            loaded,
        }
    }

    fn call(&self, name: &str) -> ToolOutput {
        let catalog = self.catalog.current();
        let skill = match lookup(&catalog, name) {
            Ok(s) => s,
            Err(e) => return ToolOutput::error(e),
        };
        let (docs, truncated) = skill.folder().map(list_docs).unwrap_or_default();
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

/// The arguments of a `skill_list_docs` call.
#[derive(Debug, Deserialize)]
pub struct ListArgs {
    skill: String,
}

impl TypedTool for SkillListDocs {
    type Args = ListArgs;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "skill_list_docs";
    const DESCRIPTION: &'static str = "List a skill's documents (.md and .txt files besides SKILL.md, references/ \
         included) with their sizes and which are selected.";

    const PARAMETERS: &'static str = include_str!("../schemas/skill_list_docs.json");

    fn summary(&self, args: &ListArgs) -> String {
        args.skill.clone()
    }

    fn execute<'a>(&'a self, args: ListArgs, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.clone();
            run_blocking(move || tool.call(&args.skill)).await
        })
    }
}

/// `skill_select_docs`: adds, replaces or clears a skill's selected documents and
/// returns the text of the newly selected ones.
#[derive(Debug, Clone)]
pub struct SkillSelectDocs {
    catalog: SharedCatalog,
    loaded: LoadedSkills,
}

/// The arguments of a `skill_select_docs` call.
#[derive(Debug, Deserialize)]
pub struct SelectArgs {
    skill: String,
    #[serde(default)]
    docs: Vec<String>,
    mode: SelectMode,
}

impl SkillSelectDocs {
    /// The tool over `catalog`, keeping the selection in `loaded`.
    pub fn new(catalog: impl Into<SharedCatalog>, loaded: LoadedSkills) -> Self {
        SkillSelectDocs {
            catalog: catalog.into(),
            loaded,
        }
    }

    fn call(&self, args: SelectArgs, budget: usize) -> ToolOutput {
        let catalog = self.catalog.current();
        let skill = match lookup(&catalog, &args.skill) {
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

impl TypedTool for SkillSelectDocs {
    type Args = SelectArgs;
    const PLAN_USE: crate::tools::PlanUse = crate::tools::PlanUse::Offered;

    const NAME: &'static str = "skill_select_docs";
    const DESCRIPTION: &'static str = "Change which of a skill's documents are in the conversation. add and replace \
         return the text of newly selected documents; clear empties the selection.";

    const PARAMETERS: &'static str = include_str!("../schemas/skill_select_docs.json");

    fn output_kind(&self) -> OutputKind {
        // A loaded skill's instructions (or documents) stay in force for the session.
        OutputKind::Instructions
    }

    fn summary(&self, args: &SelectArgs) -> String {
        let mode = match args.mode {
            SelectMode::Add => "add",
            SelectMode::Replace => "replace",
            SelectMode::Clear => "clear",
        };
        format!("{} ({mode})", args.skill)
    }

    fn execute<'a>(&'a self, args: SelectArgs, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let budget = ctx.limits.max_output_bytes.saturating_sub(SUMMARY_RESERVE);
            let tool = self.clone();
            run_blocking(move || tool.call(args, budget)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;
    use crate::test_support::project_catalog;
    use serde_json::{Value, json};
    use std::path::PathBuf;

    use crate::skills::docs::write_test_skills;
    use crate::tools::{Tool, assert_error, test_context};

    struct Fixture {
        tmp: tempfile::TempDir,
        catalog: SharedCatalog,
        loaded: LoadedSkills,
    }

    /// Skills `pdf` and `other` (see [`write_test_skills`]).
    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        write_test_skills(tmp.path());
        let catalog = std::sync::Arc::new(project_catalog(tmp.path()));
        Fixture {
            tmp,
            catalog: catalog.into(),
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
        assert_contains(&out.content, "\n- forms.md (19 bytes)\n");
        f.select(json!({"skill": "pdf", "docs": ["forms.md"], "mode": "add"}))
            .await;
        f.loaded.mark("pdf");
        let out = f.list("pdf").await;
        assert_contains(&out.content, "(loaded; 4 document(s), 1 selected;");
        assert_contains(&out.content, "- forms.md (19 bytes) [selected]");
        let out = f.list("other").await;
        assert_contains(&out.content, "has no documents");
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
        // Each step: what it shows, what it does not show again, the selection after.
        let steps = [
            // Adding again returns only what is new.
            (
                json!({"skill": "pdf", "docs": ["forms.md", "reference.txt"], "mode": "add"}),
                [
                    "Already selected (their text is earlier in the conversation): forms.md.",
                    "<skill-doc path=\"reference.txt\">\nplain text\n</skill-doc>",
                ],
                "Fill them",
                &["forms.md", "references/api.md", "reference.txt"][..],
            ),
            (
                json!({"skill": "pdf", "docs": ["reference.txt", "references/deep/more.MD"], "mode": "replace"}),
                [
                    "No longer selected: forms.md, references/api.md",
                    "<skill-doc path=\"references/deep/more.MD\">\nmore\n</skill-doc>",
                ],
                "plain text",
                &["reference.txt", "references/deep/more.MD"][..],
            ),
        ];
        for (args, shown, not_again, selection) in steps {
            let out = f.select(args).await;
            for needle in shown {
                assert_contains(&out.content, needle);
            }
            assert!(!out.content.contains(not_again), "{}", out.content);
            assert_eq!(f.loaded.docs().selected("pdf"), selection);
        }
        let out = f.select(json!({"skill": "pdf", "mode": "clear"})).await;
        assert_contains(&out.content, "Selection of skill \"pdf\" is now empty.");
        assert!(f.loaded.docs().selected("pdf").is_empty());
        let out = f.select(json!({"skill": "pdf", "mode": "add"})).await;
        assert_error(&out, "Give `docs`");
        let out = f
            .select(json!({"skill": "pdf", "docs": ["x.md"], "mode": "merge"}))
            .await;
        assert_error(&out, "unknown variant");
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
            assert_contains(
                &out.content,
                "Nothing was changed. Documents: forms.md, reference.txt,",
            );
            assert!(!out.content.contains("SECRET"));
            assert_eq!(f.loaded.docs().selected("pdf"), ["forms.md"]);
        }
    }

    #[tokio::test]
    async fn documents_over_the_cap_are_left_out_and_named() {
        let f = fixture();
        std::fs::write(f.dir().join("big.md"), "x".repeat(5_000)).unwrap();
        let catalog = f.catalog.current();
        let pdf = catalog.get("pdf").unwrap();
        let docs = ["big.md".to_string(), "forms.md".to_string()];
        let selected = f
            .loaded
            .docs()
            .change(pdf, SelectMode::Add, &docs, 1_000)
            .unwrap();
        assert_eq!(selected.docs.included, ["forms.md"]);
        assert_eq!(selected.docs.left_out.len(), 1);
        let text = selected.render("pdf");
        assert_contains(
            &text,
            "Left out big.md: 5000 bytes, over what is left of the size cap (1000 bytes); read it with read_file at ",
        );
        assert_eq!(f.loaded.docs().selected("pdf"), ["forms.md"]);
    }
}
