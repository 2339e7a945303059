//! The session's active skills: which skills are loaded (in load order), which of their
//! documents were handed to the conversation, and the tools they brought. One place
//! forgets a skill ([`LoadedSkills::unload`], for `unload_skill`) and one forgets them
//! all ([`LoadedSkills::clear`], for a new conversation), so loads, document selections
//! and tools never drift apart.
//!
//! The tools themselves live in the tool registry; this module sees them only through
//! [`SkillToolSet`], so it knows nothing of tools, the agent loop or frontends (which
//! read [`LoadedSkills::names`] for `/skills`).

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use super::docs::DocSelection;

/// The tools that skills brought into the session, as the active set needs them.
pub trait SkillToolSet: Send + Sync {
    /// Removes the tools of `skill`; returns their names.
    fn unload(&self, skill: &str) -> Vec<String>;
    /// Skills that have tools loaded, in load order.
    fn owners(&self) -> Vec<String>;
}

/// What [`LoadedSkills::unload`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unloaded {
    /// The skill was loaded (or had tools); these tools were removed.
    Done {
        /// Names of the removed tools (may be empty).
        tools: Vec<String>,
    },
    /// Nothing of that skill was loaded.
    NotLoaded,
}

/// The skills loaded in a session, their selected documents and a handle on the tools
/// they brought. Shared by the skill tools, the agent (`/name`, `/clear`) and frontends
/// (`/skills`). Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct LoadedSkills {
    skills: Arc<Mutex<Vec<String>>>,
    docs: DocSelection,
    tools: Arc<OnceLock<Arc<dyn SkillToolSet>>>,
}

impl std::fmt::Debug for LoadedSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedSkills")
            .field("skills", &self.names())
            .field("docs", &self.docs)
            .finish()
    }
}

impl LoadedSkills {
    fn lock(&self) -> MutexGuard<'_, Vec<String>> {
        // Every update is one push, retain or clear: a poisoned lock holds a whole state.
        self.skills.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives the set the session's skill tools, so that unloading a skill removes them
    /// too. Set once per session; a second call keeps the first.
    pub fn attach_tools(&self, tools: Arc<dyn SkillToolSet>) {
        let _ = self.tools.set(tools);
    }

    /// Records a load; false when the skill was already loaded.
    pub fn mark(&self, name: &str) -> bool {
        let mut skills = self.lock();
        if skills.iter().any(|s| s == name) {
            false
        } else {
            skills.push(name.to_string());
            true
        }
    }

    /// True when the skill was loaded in this session (and not unloaded since).
    pub fn contains(&self, name: &str) -> bool {
        self.lock().iter().any(|s| s == name)
    }

    /// The loaded skills, in load order.
    pub fn names(&self) -> Vec<String> {
        self.lock().clone()
    }

    /// The loaded skills and any other skill that still has tools loaded, in load order.
    pub fn names_with_tools(&self) -> Vec<String> {
        let mut names = self.names();
        if let Some(tools) = self.tools.get() {
            for owner in tools.owners() {
                if !names.contains(&owner) {
                    names.push(owner);
                }
            }
        }
        names
    }

    /// The selected documents of every skill.
    pub fn docs(&self) -> &DocSelection {
        &self.docs
    }

    /// Forgets one skill: its load, its selected documents and its tools.
    pub fn unload(&self, name: &str) -> Unloaded {
        let had_tools = self
            .tools
            .get()
            .is_some_and(|t| t.owners().iter().any(|o| o == name));
        if !self.contains(name) && !had_tools {
            return Unloaded::NotLoaded;
        }
        let tools = self.tools.get().map(|t| t.unload(name)).unwrap_or_default();
        self.docs.forget(name);
        self.lock().retain(|s| s != name);
        Unloaded::Done { tools }
    }

    /// Forgets every skill, selection and skill tool (a new conversation).
    pub fn clear(&self) {
        self.lock().clear();
        self.docs.clear();
        if let Some(tools) = self.tools.get() {
            for owner in tools.owners() {
                tools.unload(&owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct FakeTools(Mutex<Vec<(String, String)>>);

    impl SkillToolSet for FakeTools {
        fn unload(&self, skill: &str) -> Vec<String> {
            let mut all = self.0.lock().unwrap();
            let names = all
                .iter()
                .filter(|(o, _)| o == skill)
                .map(|(_, n)| n.clone())
                .collect();
            all.retain(|(o, _)| o != skill);
            names
        }
        fn owners(&self) -> Vec<String> {
            let mut owners: Vec<String> = Vec::new();
            for (o, _) in self.0.lock().unwrap().iter() {
                if !owners.contains(o) {
                    owners.push(o.clone());
                }
            }
            owners
        }
    }

    #[test]
    fn unload_and_clear_forget_loads_and_tools_together() {
        let tools = Arc::new(FakeTools::default());
        tools.0.lock().unwrap().extend([
            ("pdf".into(), "pdf_fill".into()),
            ("git".into(), "git_log".into()),
        ]);
        let loaded = LoadedSkills::default();
        loaded.attach_tools(tools.clone());
        assert!(loaded.mark("pdf"));
        assert!(!loaded.mark("pdf"));
        assert_eq!(loaded.names_with_tools(), ["pdf", "git"]);
        assert_eq!(
            loaded.unload("pdf"),
            Unloaded::Done {
                tools: vec!["pdf_fill".into()]
            }
        );
        assert_eq!(loaded.unload("pdf"), Unloaded::NotLoaded);
        // A skill with tools but no recorded load (a slash command's tools) unloads too.
        assert_eq!(
            loaded.unload("git"),
            Unloaded::Done {
                tools: vec!["git_log".into()]
            }
        );
        loaded.mark("a");
        tools.0.lock().unwrap().push(("a".into(), "a_tool".into()));
        loaded.clear();
        assert!(loaded.names().is_empty());
        assert!(tools.owners().is_empty());
    }
}
