//! The one path from a skill to the text the model acts on, shared by both ways a skill
//! is used: the user's `/name args` (the agent) and the model's `use_skill` (a tool).
//! The order is fixed and is what keeps arguments harmless:
//!
//! 1. read the body from `SKILL.md`;
//! 2. run its inline `` !`command` ``s on the body **as written** (when the permission
//!    allows; otherwise each becomes a notice);
//! 3. only then fill the templates with the arguments.
//!
//! Arguments come from a person or from the model, so they are untrusted: since they go
//! in after step 2, an argument holding `` !`cmd` `` is text, never a command. How the
//! skill runs is typed ([`RunMode`]) from its `context` field, decided here once.
//!
//! It knows skills, templates and inline commands; it must not know the agent loop,
//! tools or how the result is delivered (a user turn, a tool result, a sub-agent).

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::inline_shell::{self, InlineShellError, Permission};
use super::template;
use super::{Skill, SkillError};

/// How a skill runs, from its `context` frontmatter field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// In the conversation that invoked it (no `context`, or any value but `fork`).
    Inline,
    /// `context: fork`: in a sub-agent whose final answer is the result.
    Fork,
}

impl RunMode {
    /// The mode `skill` asks for.
    pub fn of(skill: &Skill) -> RunMode {
        match skill.frontmatter.context.as_deref().map(str::trim) {
            Some("fork") => RunMode::Fork,
            _ => RunMode::Inline,
        }
    }
}

/// A skill ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prepared {
    /// Run in the current conversation: the text to send (the expanded body; the
    /// arguments appended when the body has no placeholder for them).
    Inline {
        /// The prompt or the body to load.
        text: String,
    },
    /// Run in a sub-agent: its instructions (placeholders filled, arguments never
    /// appended) and its task (the arguments as given).
    Fork {
        /// The sub-agent's system prompt.
        instructions: String,
        /// The sub-agent's first user message (empty: no arguments).
        task: String,
    },
}

/// Why a skill could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// Its `SKILL.md` could not be read.
    #[error(transparent)]
    Body(#[from] SkillError),
    /// An inline command failed, could not start, or was interrupted.
    #[error(transparent)]
    Inline(#[from] InlineShellError),
}

/// Where inline commands run and whether they may.
#[derive(Debug, Clone, Copy)]
pub struct InlineShell<'a> {
    /// What the approval mode allows, before the skill's root narrows it (see
    /// [`inline_shell::permission_for`]).
    pub permission: &'a Permission,
    /// The project directory (commands run in the skill's folder, with this in the
    /// environment).
    pub workdir: &'a Path,
    /// Stops a running command (the user interrupted).
    pub cancel: &'a CancellationToken,
}

/// Prepares `skill` with `args`: body, then inline commands on the body as written,
/// then templates (see the module documentation for why in this order).
pub async fn prepare(
    skill: &Skill,
    args: &str,
    shell: InlineShell<'_>,
) -> Result<Prepared, PrepareError> {
    let body = skill.load_body()?;
    let body = if inline_shell::has_inline_commands(&body) {
        let permission = inline_shell::permission_for(skill, shell.permission);
        inline_shell::expand(
            &body,
            &skill.name,
            &skill.dir,
            shell.workdir,
            &permission,
            shell.cancel,
        )
        .await?
    } else {
        body
    };
    Ok(fill(skill, &body, args))
}

/// The text `prepare` would give an inline skill, with every inline command left out
/// instead of run: what the skill's author and the user wrote, the only text `@path`
/// mentions are looked for in (see [`inline_shell::without_commands`]).
pub fn written_text(skill: &Skill, args: &str) -> Result<String, SkillError> {
    let body = inline_shell::without_commands(&skill.load_body()?);
    let kind = template::Placeholders::of(skill);
    Ok(template::prompt_as(&body, args, &skill.dir, kind))
}

/// Step 3 alone: fills the templates of a body whose inline commands have already
/// been handled.
fn fill(skill: &Skill, body: &str, args: &str) -> Prepared {
    let kind = template::Placeholders::of(skill);
    match RunMode::of(skill) {
        RunMode::Inline => Prepared::Inline {
            text: template::prompt_as(body, args, &skill.dir, kind),
        },
        RunMode::Fork => Prepared::Fork {
            instructions: template::expand_as(body, args, &skill.dir, kind),
            task: args.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::Catalog;
    use crate::test_support::{project_catalog, write_skill};

    fn catalog_with(dir: &Path, name: &str, frontmatter: &str, body: &str) -> Catalog {
        write_skill(dir, name, frontmatter, body);
        project_catalog(dir)
    }

    async fn prepare_in(dir: &Path, catalog: &Catalog, name: &str, args: &str) -> Prepared {
        let cancel = CancellationToken::new();
        let shell = InlineShell {
            permission: &Permission::Run,
            workdir: dir,
            cancel: &cancel,
        };
        prepare(catalog.get(name).unwrap(), args, shell)
            .await
            .unwrap()
    }

    #[test]
    fn the_mode_comes_from_context() {
        let dir = tempfile::tempdir().unwrap();
        let fork = catalog_with(dir.path(), "f", "context: fork\n", "b");
        assert_eq!(RunMode::of(fork.get("f").unwrap()), RunMode::Fork);
        let dir = tempfile::tempdir().unwrap();
        let inline = catalog_with(dir.path(), "i", "", "b");
        assert_eq!(RunMode::of(inline.get("i").unwrap()), RunMode::Inline);
    }

    /// An argument holding an inline command must stay text in both modes: the
    /// command would create `pwned` in the project.
    #[tokio::test]
    async fn an_argument_never_becomes_an_inline_command() {
        let evil = "!`touch pwned`";
        for (name, frontmatter) in [("inline-skill", ""), ("fork-skill", "context: fork\n")] {
            let dir = tempfile::tempdir().unwrap();
            let catalog = catalog_with(
                dir.path(),
                name,
                frontmatter,
                "Today: !`echo ran`. Work on $ARGUMENTS now.",
            );
            let prepared = prepare_in(dir.path(), &catalog, name, evil).await;
            let text = match &prepared {
                Prepared::Inline { text } => text.clone(),
                Prepared::Fork { instructions, task } => {
                    assert_eq!(task, evil);
                    instructions.clone()
                }
            };
            assert_eq!(text, format!("Today: ran. Work on {evil} now."), "{name}");
            assert!(
                !dir.path().join("pwned").exists(),
                "{name}: the argument ran"
            );
            let skill_dir = dir.path().join("skills").join(name);
            assert!(
                !skill_dir.join("pwned").exists(),
                "{name}: the argument ran"
            );
        }
    }

    #[tokio::test]
    async fn unused_arguments_are_appended_inline_but_only_the_task_of_a_fork() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = catalog_with(dir.path(), "plain", "", "Do the thing.");
        assert_eq!(
            prepare_in(dir.path(), &catalog, "plain", "on main.go").await,
            Prepared::Inline {
                text: "Do the thing.\n\non main.go".into()
            }
        );
        let dir = tempfile::tempdir().unwrap();
        let catalog = catalog_with(dir.path(), "forked", "context: fork\n", "Do the thing.");
        assert_eq!(
            prepare_in(dir.path(), &catalog, "forked", "on main.go").await,
            Prepared::Fork {
                instructions: "Do the thing.".into(),
                task: "on main.go".into()
            }
        );
    }
}
