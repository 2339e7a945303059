//! The system prompt builder. The prompt is built once per session from the base prompt,
//! the working folder (and the project root when it is another folder), the project
//! instructions section (the AGENTS.md chain, worded by `instructions`; left out when
//! there is none), the run's `--append-system-prompt` text and the skills index section (left out when there are no
//! model-invocable skills), and then never changes: provider prompt caches depend on it
//! being byte-identical on every request.
//!
//! It must not know about the model client, tools' behaviour, how the instruction files
//! are found, or terminals.

use std::path::Path;

/// The base prompt for a coding agent.
const BASE_PROMPT: &str = "\
You are harness9, a coding agent working in the user's project directory through tools.

- Read before you change: use glob, grep, list and read_file to find and understand code.
- Change files with edit_file (exact old_string to new_string) or write_file; keep edits minimal and in the project's style.
- Run commands with bash (builds, tests, git). Prefer non-interactive commands; check exit codes.
- Verify your work (build, tests) when the project allows it.
- If a tool call is denied, do not retry it unchanged; adapt or explain what you need.
- Be concise. When done, say what you changed and anything left for the user.";

/// The session's folders.
#[derive(Debug, Clone, Copy)]
pub struct Folders<'a> {
    /// The working folder.
    pub workdir: &'a Path,
    /// The project root it belongs to (the same folder outside a repository).
    pub root: &'a Path,
}

/// Builds the system prompt.
///
/// `instructions` is the whole project instructions section, `appended` the text of
/// `--append-system-prompt` (right after the instructions), `skills_section` the whole
/// `## Available Skills` section; `None` leaves any of them out.
pub fn build(
    folders: Folders<'_>,
    instructions: Option<&str>,
    appended: Option<&str>,
    skills_section: Option<&str>,
) -> String {
    let mut prompt = String::with_capacity(4096);
    prompt.push_str(BASE_PROMPT);
    prompt.push_str("\n\nProject directory: ");
    prompt.push_str(&folders.workdir.display().to_string());
    if folders.root != folders.workdir {
        prompt.push_str("\nProject root (the repository): ");
        prompt.push_str(&folders.root.display().to_string());
    }
    let appended = appended.filter(|text| !text.trim().is_empty());
    for section in [instructions, appended, skills_section]
        .into_iter()
        .flatten()
    {
        prompt.push_str("\n\n");
        prompt.push_str(section.trim_end());
    }
    prompt.push('\n');
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    fn here(dir: &Path) -> Folders<'_> {
        Folders {
            workdir: dir,
            root: dir,
        }
    }

    #[test]
    fn sections_are_left_out_silently_when_absent() {
        let without = build(here(Path::new("/w")), None, None, None);
        assert!(!without.contains("AGENTS.md"));
        assert!(!without.contains("Project root"));
        assert!(without.ends_with("Project directory: /w\n"));
        let with = build(
            here(Path::new("/w")),
            Some("## Project instructions (AGENTS.md)\nUse tabs.\n"),
            None,
            None,
        );
        assert_contains(
            &with,
            "/w\n\n## Project instructions (AGENTS.md)\nUse tabs.\n",
        );
    }

    #[test]
    fn skills_section_goes_last_and_building_is_deterministic() {
        let section = "## Available Skills\nUse the `use_skill` tool to load the full content of any skill when needed.\n- a: b\n";
        let dir = Path::new("/w");
        let p1 = build(here(dir), Some("Rules."), None, Some(section));
        let p2 = build(here(dir), Some("Rules."), None, Some(section));
        assert_eq!(p1, p2);
        assert!(p1.ends_with("- a: b\n"));
        assert!(p1.find("Rules.").unwrap() < p1.find("## Available Skills").unwrap());
    }

    #[test]
    fn appended_text_follows_the_instructions_before_the_skills() {
        let p = build(
            here(Path::new("/w")),
            Some("Rules."),
            Some("Answer in French.\n"),
            Some("## Available Skills\n- a: b"),
        );
        assert_contains(&p, "Rules.\n\nAnswer in French.\n\n## Available Skills\n");
        let blank = build(here(Path::new("/w")), None, Some("  \n"), None);
        assert!(blank.ends_with("Project directory: /w\n"), "{blank}");
    }

    #[test]
    fn a_root_other_than_the_working_folder_is_named() {
        let p = build(
            Folders {
                workdir: Path::new("/r/sub"),
                root: Path::new("/r"),
            },
            None,
            None,
            None,
        );
        assert_contains(
            &p,
            "Project directory: /r/sub\nProject root (the repository): /r\n",
        );
    }
}
