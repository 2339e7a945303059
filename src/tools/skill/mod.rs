//! The skill tools: thin adapters between the model and the skill domain in
//! [`crate::skills`] (the pipeline in `invoke`, the active set in `active`, documents in
//! `docs`). `use_skill` loads a skill, `unload_skill` forgets one, `skill_list_docs` and
//! `skill_select_docs` hand out its documents, and [`load_bundled_tools`] turns a
//! skill's `tools.json` into registry tools (for `use_skill` and for the agent's
//! `/name`).
//!
//! What they share lives here; the tool files import this module, never each other.
//! It must not know the agent loop or frontends.

pub mod docs;
pub mod unload_skill;
pub mod use_skill;

use std::sync::Arc;

use super::skill_tool::SkillTool;
use super::{LoadedTools, Tool};
use crate::skills::Catalog;
use crate::skills::Skill;
use crate::skills::active::SkillToolSet;
use crate::skills::bundle::{self, BundleError};

/// Servers whose tools `use_skill` loads by the name `mcp:NAME` (the session's MCP
/// servers, which implement this in `crate::mcp::tools`; tools know them only by it).
pub trait ServerTools: Send + Sync + std::fmt::Debug {
    /// The servers that can be loaded now, by name.
    fn usable(&self) -> Vec<String>;
    /// Whether `name` is one of the usable servers.
    fn has(&self, name: &str) -> bool;
    /// Loads server `name`'s tools into `into`: the text for the model, or why not (with
    /// whether the user should also see it as a warning).
    fn load<'a>(
        &'a self,
        name: &'a str,
        into: &'a LoadedTools,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<String, ServerLoadError>> + Send + 'a>,
    >;
}

/// Why a server's tools could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLoadError {
    /// What went wrong, in words.
    pub message: String,
    /// Whether the user is told too (the server did not already report it).
    pub warn_user: bool,
}

/// The owner name a server's loaded tools go under, and the name the model loads it by.
pub fn server_owner(server: &str) -> String {
    format!("mcp:{server}")
}

/// The server named by a `mcp:NAME` owner or skill name.
pub fn server_of_owner(owner: &str) -> Option<&str> {
    owner.strip_prefix("mcp:")
}

/// Room kept in a result for the lines around the documents.
pub(crate) const SUMMARY_RESERVE: usize = 1_000;

/// The skill `name` names, or an error for the model listing the available ones.
pub(crate) fn lookup<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a Skill, String> {
    let available = || {
        let names: Vec<&str> = catalog.model_invocable_names().collect();
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(format!(
            "Invalid skill name \"\": give a name from the Available Skills list. \
             Available skills: {}",
            available()
        ));
    }
    // The same rule that keeps such names out of the catalog.
    if let Some(problem) = crate::skills::name::name_problem(name) {
        return Err(format!(
            "Invalid skill name {name:?}: it {problem}; give a name from the Available \
             Skills list. Available skills: {}",
            available()
        ));
    }
    catalog
        .get(name)
        .filter(|s| s.model_invocable())
        .ok_or_else(|| format!("Unknown skill {name:?}. Available skills: {}", available()))
}

/// What loading a skill's `tools.json` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundledTools {
    /// The skill has no `tools.json`.
    None,
    /// These tools joined the registry.
    Loaded(Vec<String>),
    /// Nothing was loaded: the file's path and the problem (malformed, or a name
    /// collision), ready to show.
    Failed(String),
}

/// Loads the tools of `skill`'s `tools.json` into a registry's loaded set on the skill's
/// behalf (`use_skill` does this, and so does the agent for a `/name` invocation). A
/// failure loads none of them and is logged as a warning.
pub fn load_bundled_tools(skill: &Skill, loaded: &LoadedTools) -> BundledTools {
    let failed = |problem: String| {
        tracing::warn!("skill {}: tools not loaded: {problem}", skill.name);
        BundledTools::Failed(problem)
    };
    // A command has no folder of its own, so no tools.json.
    let Some(folder) = skill.folder() else {
        return BundledTools::None;
    };
    let decls = match bundle::load(folder) {
        Ok(None) => return BundledTools::None,
        Ok(Some(decls)) => decls,
        Err(e) => return failed(e.to_string()),
    };
    let path = folder.join(bundle::TOOLS_FILE);
    let dir = match std::fs::canonicalize(folder) {
        Ok(d) => d,
        Err(e) => {
            let e = BundleError {
                path,
                problems: vec![format!("cannot resolve the skill folder: {e}")],
            };
            return failed(e.to_string());
        }
    };
    let names: Vec<String> = decls.iter().map(|d| d.name.clone()).collect();
    let tools: Vec<Arc<dyn Tool>> = decls
        .into_iter()
        .map(|d| Arc::new(SkillTool::new(&skill.name, dir.clone(), d)) as Arc<dyn Tool>)
        .collect();
    match loaded.load(&skill.name, tools) {
        Ok(()) => BundledTools::Loaded(names),
        Err(collision) => failed(format!("{}: {collision}", path.display())),
    }
}

impl SkillToolSet for LoadedTools {
    fn unload(&self, skill: &str) -> Vec<String> {
        LoadedTools::unload(self, skill)
    }

    fn owners(&self) -> Vec<String> {
        LoadedTools::owners(self)
    }
}
