//! What `/skills` shows, decided once for every frontend: each skill with its status
//! and notes (where it comes from, loaded in this session, how it can be invoked, what
//! the index did with it), the shadowed and invalid ones, the warning count and how
//! much of the index budget is used. The TUI styles it, the REPL prints it as text; both
//! use the same words ([`Note::label`]), so the same state is never labelled two ways.
//!
//! It knows the catalog, the index and the active set; it must not know how anything
//! is drawn.

use std::path::PathBuf;

use super::active::LoadedSkills;
use super::{Catalog, RootKind, SkillStatus};

/// One thing worth saying about a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// Where it was found.
    Root(RootKind),
    /// Loaded in this session (by `use_skill` or `/name`).
    Loaded,
    /// `user-invocable: false`: only the model can load it.
    ModelOnly,
    /// `disable-model-invocation: true`: only `/name`, never in the index.
    SlashOnly,
    /// Its description was shortened to fit the index budget.
    Shortened,
    /// Left out of the index: the budget ran out.
    LeftOut,
}

impl Note {
    /// The words every frontend shows.
    pub fn label(self) -> &'static str {
        match self {
            Note::Root(kind) => kind.as_str(),
            Note::Loaded => "loaded",
            Note::ModelOnly => "model only",
            Note::SlashOnly => "slash command only",
            Note::Shortened => "description shortened",
            Note::LeftOut => "left out of the index",
        }
    }
}

/// One usable skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its name (`/name` runs it).
    pub name: String,
    /// `argument-hint`, if any.
    pub argument_hint: Option<String>,
    /// Ok or with warnings.
    pub status: SkillStatus,
    /// What else to say, in a fixed order.
    pub notes: Vec<Note>,
    /// The description on one line.
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
}

/// Everything `/skills` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Usable skills, in catalog order.
    pub skills: Vec<Entry>,
    /// Skills hidden by one of the same name: name and path.
    pub shadowed: Vec<(String, PathBuf)>,
    /// `SKILL.md` files that are not usable skills: path and why.
    pub invalid: Vec<(PathBuf, String)>,
    /// How many warnings discovery reported.
    pub warnings: usize,
    /// Characters the index uses.
    pub index_used: usize,
    /// The index budget in characters.
    pub index_budget: usize,
}

impl Listing {
    /// The share of the index budget in use, in percent.
    pub fn index_percent(&self) -> usize {
        (self.index_used * 100)
            .checked_div(self.index_budget)
            .unwrap_or(0)
    }
}

/// The listing for `catalog` with an index budget of `budget` characters.
pub fn listing(catalog: &Catalog, budget: usize, loaded: &LoadedSkills) -> Listing {
    let index = catalog.index(budget);
    let skills = catalog
        .skills()
        .iter()
        .map(|skill| {
            let mut notes = vec![Note::Root(skill.root.kind)];
            let flags = [
                (loaded.contains(&skill.name), Note::Loaded),
                (!skill.user_invocable(), Note::ModelOnly),
                (!skill.model_invocable(), Note::SlashOnly),
                (index.shortened.contains(&skill.name), Note::Shortened),
                (index.dropped.contains(&skill.name), Note::LeftOut),
            ];
            notes.extend(flags.into_iter().filter(|(on, _)| *on).map(|(_, n)| n));
            Entry {
                name: skill.name.clone(),
                argument_hint: skill.frontmatter.argument_hint.clone(),
                status: skill.status.clone(),
                notes,
                description: skill.one_line_description(),
                path: skill.path.clone(),
            }
        })
        .collect();
    Listing {
        skills,
        shadowed: catalog
            .shadowed()
            .iter()
            .map(|s| (s.name.clone(), s.path.clone()))
            .collect(),
        invalid: catalog
            .invalid()
            .iter()
            .map(|bad| (bad.path.clone(), bad.reason.to_string()))
            .collect(),
        warnings: catalog.warnings().len(),
        index_used: index.used_chars,
        index_budget: index.budget_chars,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{project_catalog, write_skill};

    #[test]
    fn notes_say_where_a_skill_comes_from_and_how_it_is_used() {
        let tmp = tempfile::tempdir().unwrap();
        write_skill(tmp.path(), "plain", "argument-hint: \"[file]\"\n", "body");
        write_skill(
            tmp.path(),
            "hidden",
            "disable-model-invocation: true\n",
            "body",
        );
        write_skill(tmp.path(), "quiet", "user-invocable: false\n", "body");
        let catalog = project_catalog(tmp.path());
        let loaded = LoadedSkills::default();
        loaded.mark("plain");
        let l = listing(&catalog, 8_000, &loaded);
        let notes = |name: &str| -> Vec<&str> {
            let e = l.skills.iter().find(|e| e.name == name).unwrap();
            e.notes.iter().map(|n| n.label()).collect()
        };
        assert_eq!(notes("plain"), ["project", "loaded"]);
        assert_eq!(notes("hidden"), ["project", "slash command only"]);
        assert_eq!(notes("quiet"), ["project", "model only"]);
        let plain = l.skills.iter().find(|e| e.name == "plain").unwrap();
        assert_eq!(plain.argument_hint.as_deref(), Some("[file]"));
        assert!(l.index_used > 0 && l.index_percent() < 100);
    }
}
