//! The MCP servers' section of the system prompt: one line per usable server, in name
//! order — `mcp:NAME`, what it is for (its configured `description`, else the
//! instructions it gave at its last start, cut to one short line) and its tool count
//! when known. Built once per session from configuration and the cache, never from a
//! running server, so the prompt is byte-identical whether or when servers start.
//! It knows configurations and memos, nothing of the prompt builder.

use super::cache::{ServerMemo, fingerprint};
use super::manager::McpServers;

/// The section's first lines.
pub const HEADER: &str = "## MCP Servers\nEach line is an MCP server, a bundle of tools: \
                          `use_skill` with its name (e.g. \"mcp:NAME\") adds its tools to \
                          yours; `unload_skill` with the same name removes them.";

/// The longest description on a line, in characters.
const MAX_LINE_DESCRIPTION: usize = 200;

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
        let count = match &memo {
            Some(m) if m.tools == 1 => "MCP server, 1 tool".to_string(),
            Some(m) => format!("MCP server, {} tools", m.tools),
            None => "MCP server".to_string(),
        };
        out.push_str(&format!("\n- mcp:{name}: "));
        if !description.is_empty() {
            out.push_str(&description);
            out.push(' ');
        }
        out.push_str(&format!("({count})"));
    }
    Some(out)
}

/// The first line of `text` that is not a Markdown heading (else the first heading's
/// words), whitespace collapsed, within the line limit.
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
    let mut cut: String = clean.chars().take(MAX_LINE_DESCRIPTION - 1).collect();
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
    }
}
