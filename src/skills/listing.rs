//! What `/skills` shows and what a skill is as a slash command, decided once for every
//! frontend: each skill with its standing and notes (where it comes from, loaded in this
//! session, how it can be invoked, what the index did with it), the shadowed and invalid
//! ones, the warning count and how much of the index budget is used
//! ([`crate::protocol::SkillListing`]); and each skill's name, description, argument
//! hint and whether `/name` runs it ([`crate::protocol::SlashSkill`]). Both are protocol
//! data: the agent sends them, the TUI styles them, the REPL prints them as text.
//!
//! It knows the catalog and the index; it must not know how anything is drawn, nor the
//! agent's live state (the loaded skills come in as names).

use crate::protocol::{
    SkillEntry, SkillInvocation, SkillListing, SkillNote, SkillOrigin, SkillStanding, SlashSkill,
};

use std::collections::HashSet;

use super::{Catalog, RootKind, SkillStatus};

/// A description on one line, as [`super::Skill::one_line_description`] makes it, with
/// one allocation when it already is one line (the usual case).
fn one_line(description: &str) -> String {
    let plain = !description.contains(['\n', '\r', '\t'])
        && !description.contains("  ")
        && description.trim() == description;
    if plain {
        description.to_string()
    } else {
        description.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// The listing for `catalog` with an index budget of `budget` characters; `loaded` are
/// the names of the skills loaded in this session.
pub fn listing(catalog: &Catalog, budget: usize, loaded: &[String]) -> SkillListing {
    let index = catalog.index(budget);
    // Looked up once per skill: sets, not lists (10,000 skills would be 10⁸ comparisons).
    let shortened: HashSet<&str> = index.shortened.iter().map(String::as_str).collect();
    let dropped: HashSet<&str> = index.dropped.iter().map(String::as_str).collect();
    let skills = catalog
        .skills()
        .iter()
        .map(|skill| {
            let mut notes = vec![SkillNote::Root(origin(skill.root.kind))];
            if let super::SkillKind::Command(_) = skill.kind {
                notes.push(SkillNote::Command);
            }
            let flags = [
                (loaded.contains(&skill.name), SkillNote::Loaded),
                (!skill.user_invocable(), SkillNote::ModelOnly),
                (!skill.model_invocable(), SkillNote::SlashOnly),
                (
                    shortened.contains(skill.name.as_str()),
                    SkillNote::Shortened,
                ),
                (dropped.contains(skill.name.as_str()), SkillNote::LeftOut),
            ];
            notes.extend(flags.into_iter().filter(|(on, _)| *on).map(|(_, n)| n));
            SkillEntry {
                name: skill.name.clone(),
                argument_hint: skill.frontmatter.argument_hint().map(String::from),
                standing: standing(&skill.status),
                notes,
                description: skill.one_line_description(),
                path: skill.path.clone(),
            }
        })
        .collect();
    SkillListing {
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

/// Every skill of `catalog` as a slash command, in the catalog's (name) order.
pub fn slash_skills(catalog: &Catalog) -> Vec<SlashSkill> {
    catalog
        .skills()
        .iter()
        .map(|skill| SlashSkill {
            name: skill.name.clone(),
            description: one_line(&skill.description),
            argument_hint: skill.frontmatter.argument_hint().map(String::from),
            invocation: if skill.user_invocable() {
                SkillInvocation::Slash
            } else {
                SkillInvocation::ModelOnly
            },
        })
        .collect()
}

fn origin(kind: RootKind) -> SkillOrigin {
    match kind {
        RootKind::Flag => SkillOrigin::Flag,
        RootKind::Project => SkillOrigin::Project,
        RootKind::User => SkillOrigin::User,
        RootKind::Remote => SkillOrigin::Remote,
        RootKind::Plugin => SkillOrigin::Plugin,
    }
}

fn standing(status: &SkillStatus) -> SkillStanding {
    match status {
        SkillStatus::Ok => SkillStanding::Ok,
        SkillStatus::Warning => SkillStanding::Warning,
        SkillStatus::Shadowed { .. } => SkillStanding::Shadowed,
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
        let l = listing(&catalog, 8_000, &["plain".to_string()]);
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

    #[test]
    fn slash_skills_say_which_a_user_can_run() {
        let tmp = tempfile::tempdir().unwrap();
        write_skill(tmp.path(), "plain", "argument-hint: \"[file]\"\n", "body");
        write_skill(tmp.path(), "quiet", "user-invocable: false\n", "body");
        let catalog = project_catalog(tmp.path());
        let skills = slash_skills(&catalog);
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["plain", "quiet"]);
        assert_eq!(skills[0].invocation, SkillInvocation::Slash);
        assert_eq!(skills[0].argument_hint.as_deref(), Some("[file]"));
        assert_eq!(skills[1].invocation, SkillInvocation::ModelOnly);
    }
}
