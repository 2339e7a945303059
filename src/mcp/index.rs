//! The MCP servers' section of the system prompt: one line per usable server, in name
//! order — `mcp:NAME`, what it is for (its configured `description`, else the
//! instructions it gave at its last start: the first line, cut after its last whole
//! sentence within [`MAX_LINE_DESCRIPTION`] when longer) and its tool count when known. It travels in every request, so it says
//! only what the model needs to choose a server (`use_skill`'s description says how to
//! load one). Built once per session from configuration and the cache, never from a
//! running server, so the prompt is byte-identical whether or when servers start.
//! It knows configurations and memos, nothing of the prompt builder.

use super::cache::{ServerMemo, fingerprint};
use super::manager::McpServers;

/// The section's first lines.
pub const HEADER: &str = "## MCP Servers\nTool sets: `use_skill` with a name loads one, \
                          `unload_skill` removes it.";

/// The longest description on a line, in characters.
pub const MAX_LINE_DESCRIPTION: usize = 100;

/// The section, or `None` without usable servers.
pub fn section(servers: &McpServers) -> Option<String> {
    let names = servers.usable();
    if names.is_empty() {
        return None;
    }
    let mut out = String::from(HEADER);
    for name in names {
        let Some(config) = servers.config(&name) else {
            continue;
        };
        let memo: Option<ServerMemo> = servers
            .memo(&name)
            .filter(|m| m.fingerprint == fingerprint(config));
        let description = config
            .description
            .clone()
            .or_else(|| memo.as_ref().and_then(|m| m.instructions.clone()))
            .map(|d| one_line(&d))
            .unwrap_or_default();
        out.push_str("\n- mcp:");
        out.push_str(&name);
        if !description.is_empty() {
            out.push_str(": ");
            out.push_str(&description);
        }
        match &memo {
            Some(m) if m.tools == 1 => out.push_str(" (1 tool)"),
            Some(m) => out.push_str(&format!(" ({} tools)", m.tools)),
            None => {}
        }
    }
    Some(out)
}

/// The first line of `text` that is not a Markdown heading (else the first heading's
/// words), whitespace collapsed; over [`MAX_LINE_DESCRIPTION`] characters, its whole
/// sentences that fit, else cut with an ellipsis.
fn one_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines
        .clone()
        .find(|l| !l.starts_with('#'))
        .or_else(|| lines.next().map(|l| l.trim_start_matches('#').trim()))
        .unwrap_or("");
    let collapsed = first.split_whitespace().collect::<Vec<_>>().join(" ");
    // Control characters never reach the model's prompt from a server.
    let clean: String = collapsed.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() <= MAX_LINE_DESCRIPTION {
        return clean;
    }
    let sentence = clean
        .match_indices(". ")
        .map(|(i, _)| &clean[..=i])
        .take_while(|s| s.chars().count() <= MAX_LINE_DESCRIPTION)
        .last();
    if let Some(sentence) = sentence {
        return sentence.to_string();
    }
    let mut cut: String = clean.chars().take(MAX_LINE_DESCRIPTION - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_takes_the_first_line_and_cuts() {
        assert_eq!(
            one_line("\n  Use  me\tfor time.\nMore."),
            "Use me for time."
        );
        assert_eq!(
            one_line(&"x".repeat(500)).chars().count(),
            MAX_LINE_DESCRIPTION
        );
        assert_eq!(one_line("a\u{1b}[31mb"), "a[31mb");
        assert_eq!(
            one_line("# Everything Server – Instructions\n\nTests every MCP feature.\n## Tools"),
            "Tests every MCP feature."
        );
        assert_eq!(one_line("## Only a heading"), "Only a heading");
        let long = format!("Reads the weather. {}", "More words here. ".repeat(10));
        assert_eq!(
            one_line(&long),
            "Reads the weather. More words here. More words here. More words here. More words here."
        );
        assert!(one_line(&long).chars().count() <= MAX_LINE_DESCRIPTION);
    }
}
