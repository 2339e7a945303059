//! The system prompt builder. The prompt is built once per session from the base prompt,
//! the project's `AGENTS.md` (left out silently when absent) and the skills index section
//! (left out when there are no model-invocable skills), and then never changes: provider
//! prompt caches depend on it being byte-identical on every request.
//!
//! It must not know about the model client, tools' behaviour or terminals.

use std::path::Path;

/// The largest AGENTS.md included, in bytes; longer files are cut with a note.
pub const MAX_AGENTS_MD_BYTES: usize = 32 * 1024;

/// The heading the project's AGENTS.md stands under in the prompt.
const AGENTS_MD_HEADING: &str = "\n\n## Project instructions (AGENTS.md)\n";

/// The instruction files `prompt` (built by [`build`] for `workdir`) holds, for
/// `/status`.
pub fn instruction_files(prompt: &str, workdir: &Path) -> Vec<std::path::PathBuf> {
    if prompt.contains(AGENTS_MD_HEADING) {
        vec![workdir.join("AGENTS.md")]
    } else {
        Vec::new()
    }
}

/// The base prompt for a coding agent.
const BASE_PROMPT: &str = "\
You are harness9, a coding agent working in the user's project directory through tools.

- Read before you change: use glob, grep, list and read_file to find and understand code.
- Change files with edit_file (exact old_string to new_string) or write_file; keep edits minimal and in the project's style.
- Run commands with bash (builds, tests, git). Prefer non-interactive commands; check exit codes.
- Verify your work (build, tests) when the project allows it.
- If a tool call is denied, do not retry it unchanged; adapt or explain what you need.
- Be concise. When done, say what you changed and anything left for the user.";

/// Builds the system prompt.
///
/// `skills_section` is the whole `## Available Skills` section, or `None` to leave it out.
pub fn build(workdir: &Path, skills_section: Option<&str>) -> String {
    let mut prompt = String::with_capacity(4096);
    prompt.push_str(BASE_PROMPT);
    prompt.push_str("\n\nProject directory: ");
    prompt.push_str(&workdir.display().to_string());
    if let Some(agents) = read_agents_md(workdir) {
        prompt.push_str(AGENTS_MD_HEADING);
        prompt.push_str(agents.trim_end());
    }
    if let Some(section) = skills_section {
        prompt.push_str("\n\n");
        prompt.push_str(section.trim_end());
    }
    prompt.push('\n');
    prompt
}

/// The project's AGENTS.md, capped; `None` when absent or unreadable.
fn read_agents_md(workdir: &Path) -> Option<String> {
    let bytes = std::fs::read(workdir.join("AGENTS.md")).ok()?;
    if bytes.len() <= MAX_AGENTS_MD_BYTES {
        return Some(String::from_utf8_lossy(&bytes).into_owned());
    }
    let mut end = MAX_AGENTS_MD_BYTES;
    while end > 0 && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    let mut text = String::from_utf8_lossy(&bytes[..end]).into_owned();
    text.push_str(&format!(
        "\n[AGENTS.md truncated: {} of {} bytes shown]",
        end,
        bytes.len()
    ));
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    #[test]
    fn agents_md_is_included_when_present_and_left_out_silently_when_absent() {
        let dir = tempfile::tempdir().unwrap();
        let without = build(dir.path(), None);
        assert!(!without.contains("AGENTS.md"));
        std::fs::write(dir.path().join("AGENTS.md"), "Use tabs.\n").unwrap();
        let with = build(dir.path(), None);
        assert_contains(&with, "## Project instructions (AGENTS.md)\nUse tabs.\n");
        assert_eq!(
            instruction_files(&with, dir.path()),
            vec![dir.path().join("AGENTS.md")]
        );
        assert!(instruction_files(&without, dir.path()).is_empty());
    }

    #[test]
    fn skills_section_goes_last_and_building_is_deterministic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Rules.").unwrap();
        let section = "## Available Skills\nUse the `use_skill` tool to load the full content of any skill when needed.\n- a: b\n";
        let p1 = build(dir.path(), Some(section));
        let p2 = build(dir.path(), Some(section));
        assert_eq!(p1, p2);
        assert!(p1.ends_with("- a: b\n"));
        assert!(p1.find("Rules.").unwrap() < p1.find("## Available Skills").unwrap());
    }

    #[test]
    fn huge_agents_md_is_capped_at_a_char_boundary() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("AGENTS.md"),
            "é".repeat(MAX_AGENTS_MD_BYTES),
        )
        .unwrap();
        let p = build(dir.path(), None);
        assert_contains(&p, "[AGENTS.md truncated");
        assert!(p.len() < MAX_AGENTS_MD_BYTES + 2048);
    }
}
