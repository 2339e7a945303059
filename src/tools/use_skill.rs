//! The `use_skill` tool: loads a skill's body into the conversation as a tool result, so
//! the system prompt (which only lists names and descriptions) never changes.
//!
//! The result wraps the body (templates expanded with the optional `args`) in
//! `<skill-loaded name="...">` … `</skill-loaded>`, then names the skill's directory and
//! the files in its `scripts/`, `references/` and `assets/` folders (names only, for the
//! model's file tools). Unknown names get an error listing the available ones; names
//! with path separators or `..` are rejected; a second load of the same skill in a
//! session gets a short note. It knows the catalog and nothing of the agent loop.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, Tool, ToolContext, ToolFuture, ToolOutput, parse_args, run_blocking};
use crate::skills::template::prompt_from_body;
use crate::skills::{Catalog, Skill};

/// Folders of a skill whose files are listed.
const RESOURCE_DIRS: [&str; 3] = ["scripts", "references", "assets"];
/// Files listed per skill at most.
const MAX_LISTED_FILES: usize = 200;
/// Folder depth listed below each resource folder.
const MAX_LIST_DEPTH: usize = 4;

/// The skills loaded in a session, shared with whoever resets the session (`/clear`).
#[derive(Debug, Clone, Default)]
pub struct LoadedSkills(Arc<Mutex<BTreeSet<String>>>);

impl LoadedSkills {
    /// Records a load; false when the skill was already loaded.
    pub fn mark(&self, name: &str) -> bool {
        self.0
            .lock()
            .map(|mut set| set.insert(name.to_string()))
            .unwrap_or(true)
    }

    /// True when the skill was loaded in this session.
    pub fn contains(&self, name: &str) -> bool {
        self.0.lock().map(|set| set.contains(name)).unwrap_or(false)
    }

    /// Forgets every load (a new conversation).
    pub fn clear(&self) {
        if let Ok(mut set) = self.0.lock() {
            set.clear();
        }
    }
}

/// Loads a skill's instructions on demand.
#[derive(Debug, Clone)]
pub struct UseSkill {
    catalog: Arc<Catalog>,
    loaded: LoadedSkills,
}

#[derive(Debug, Deserialize)]
struct Args {
    skill_name: String,
    args: Option<String>,
}

impl UseSkill {
    /// A tool over this catalog, with a fresh set of loaded skills.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        UseSkill {
            catalog,
            loaded: LoadedSkills::default(),
        }
    }

    /// A tool sharing `loaded` (so the session can clear it, or mark skills the user
    /// invoked with a slash command).
    pub fn with_loaded(catalog: Arc<Catalog>, loaded: LoadedSkills) -> Self {
        UseSkill { catalog, loaded }
    }

    /// The set of skills loaded in this session.
    pub fn loaded(&self) -> LoadedSkills {
        self.loaded.clone()
    }

    fn available(&self) -> String {
        let names: Vec<&str> = self.catalog.model_invocable_names().collect();
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    }

    fn call(&self, args: Args) -> ToolOutput {
        let name = args.skill_name.trim();
        if name.is_empty() || name.contains(['/', '\\']) || name.contains("..") {
            return ToolOutput::error(format!(
                "Invalid skill name {name:?}: give a name from the Available Skills list, \
                 without path separators or `..`. Available skills: {}",
                self.available()
            ));
        }
        let Some(skill) = self.catalog.get(name).filter(|s| s.model_invocable()) else {
            return ToolOutput::error(format!(
                "Unknown skill {name:?}. Available skills: {}",
                self.available()
            ));
        };
        if self.loaded.contains(&skill.name) {
            return ToolOutput::ok(format!(
                "Skill \"{}\" is already loaded in this conversation; follow the instructions \
                 from the earlier use_skill result.",
                skill.name
            ));
        }
        let body = match skill.load_body() {
            Ok(b) => b,
            Err(e) => {
                return ToolOutput::error(format!("Cannot load skill \"{}\": {e}", skill.name));
            }
        };
        self.loaded.mark(&skill.name);
        ToolOutput::ok(render(skill, &body, args.args.as_deref().unwrap_or("")))
    }
}

/// The tool result for a loaded skill.
fn render(skill: &Skill, body: &str, args: &str) -> String {
    let text = prompt_from_body(body, args, &skill.dir);
    let mut out = format!(
        "<skill-loaded name=\"{}\">\n{text}\n</skill-loaded>\n\n",
        skill.name
    );
    out.push_str(&format!("Skill directory: {}\n", skill.dir.display()));
    let files = resource_files(&skill.dir);
    if files.is_empty() {
        out.push_str("Bundled files: none.");
    } else {
        out.push_str("Bundled files (paths relative to the skill directory; read them with your file tools when the instructions call for them):");
        for f in &files {
            out.push_str("\n- ");
            out.push_str(f);
        }
        if files.len() >= MAX_LISTED_FILES {
            out.push_str("\n- … (more files not listed)");
        }
    }
    out
}

/// Relative paths of the files under the skill's resource folders, sorted, bounded.
fn resource_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for sub in RESOURCE_DIRS {
        list_files(&dir.join(sub), sub, 0, &mut out);
    }
    out
}

fn list_files(dir: &Path, rel: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(String, bool)> = rd
        .flatten()
        .map(|e| {
            let is_dir = std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .collect();
    entries.sort();
    for (name, is_dir) in entries {
        if out.len() >= MAX_LISTED_FILES {
            return;
        }
        let path = format!("{rel}/{name}");
        if !is_dir {
            out.push(path);
        } else if depth < MAX_LIST_DEPTH {
            list_files(&dir.join(&name), &path, depth + 1, out);
        }
    }
}

impl Tool for UseSkill {
    fn name(&self) -> &str {
        "use_skill"
    }

    fn description(&self) -> &str {
        "Load the full instructions of a skill from the Available Skills list in the system \
         prompt. Use it when a skill matches the task, before starting the work. Returns the \
         skill's instructions and the files bundled with it."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill_name": {"type": "string", "description": "The skill's name, exactly as listed in Available Skills."},
                "args": {"type": "string", "description": "Optional arguments for the skill (e.g. a file name)."}
            },
            "required": ["skill_name"]
        })
    }

    fn access(&self, _args: &Value, _ctx: &ToolContext) -> Access {
        Access::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        args.get("skill_name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    }

    fn run<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = match parse_args::<Args>(self.name(), &args, &self.parameters()) {
                Ok(a) => a,
                Err(out) => return Ok(out),
            };
            let tool = self.clone();
            run_blocking(move || tool.call(args)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::DiscoveryOptions;
    use crate::tools::test_context;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn setup() -> (tempfile::TempDir, Arc<Catalog>) {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("skills");
        write(
            &skills.join("go-refactor/SKILL.md"),
            "---\nname: go-refactor\ndescription: Use when refactoring Go code\n---\n\n# Go\nRun `go vet ./...` on $ARGUMENTS.\n",
        );
        write(&skills.join("go-refactor/scripts/check.sh"), "#!/bin/sh\n");
        write(
            &skills.join("go-refactor/references/style/naming.md"),
            "names\n",
        );
        write(
            &skills.join("secret/SKILL.md"),
            "---\nname: secret\ndescription: user only\ndisable-model-invocation: true\n---\nbody\n",
        );
        let opts = DiscoveryOptions {
            workdir: tmp.path().to_path_buf(),
            harness9_home: tmp.path().join("home"),
            ..DiscoveryOptions::default()
        };
        let catalog = Arc::new(Catalog::discover(&opts));
        (tmp, catalog)
    }

    async fn call(tool: &UseSkill, args: Value, dir: &Path) -> ToolOutput {
        tool.run(args, &test_context(dir)).await.unwrap()
    }

    #[tokio::test]
    async fn loads_the_body_wrapped_with_dir_and_files() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        let out = call(
            &tool,
            json!({"skill_name": "go-refactor", "args": "main.go"}),
            tmp.path(),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        let dir = tmp.path().join("skills/go-refactor");
        let expected = format!(
            "<skill-loaded name=\"go-refactor\">\n# Go\nRun `go vet ./...` on main.go.\n</skill-loaded>\n\n\
             Skill directory: {}\nBundled files (paths relative to the skill directory; read them with your file tools when the instructions call for them):\n\
             - scripts/check.sh\n- references/style/naming.md",
            dir.display()
        );
        assert_eq!(out.content, expected);
        assert_eq!(
            tool.access(&json!({}), &test_context(tmp.path())),
            Access::ReadOnly
        );
    }

    #[tokio::test]
    async fn second_load_is_a_short_note_until_cleared() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        let args = json!({"skill_name": "go-refactor"});
        call(&tool, args.clone(), tmp.path()).await;
        let again = call(&tool, args.clone(), tmp.path()).await;
        assert!(!again.is_error);
        assert!(
            again.content.contains("already loaded"),
            "{}",
            again.content
        );
        assert!(!again.content.contains("go vet"));
        tool.loaded().clear();
        assert!(
            call(&tool, args, tmp.path())
                .await
                .content
                .contains("go vet")
        );
    }

    #[tokio::test]
    async fn unknown_names_list_the_available_ones() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        let out = call(&tool, json!({"skill_name": "go-refactr"}), tmp.path()).await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Unknown skill \"go-refactr\". Available skills: go-refactor"
        );
        // Model invocation disabled: not loadable, not listed.
        let out = call(&tool, json!({"skill_name": "secret"}), tmp.path()).await;
        assert!(
            out.is_error && !out.content.contains("secret,"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn path_traversal_is_rejected() {
        let (tmp, catalog) = setup();
        let tool = UseSkill::new(catalog);
        for bad in [
            "../go-refactor",
            "go-refactor/../x",
            "a\\b",
            "..",
            "/etc/passwd",
            "",
        ] {
            let out = call(&tool, json!({"skill_name": bad}), tmp.path()).await;
            assert!(out.is_error, "{bad}");
            assert!(
                out.content.starts_with("Invalid skill name"),
                "{bad}: {}",
                out.content
            );
        }
        let out = call(&tool, json!({}), tmp.path()).await;
        assert!(out.is_error && out.content.contains("skill_name"));
    }
}
