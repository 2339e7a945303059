//! Tool names in definitions and skills' `allowed-tools`: Claude Code's names (`Read`,
//! `Bash(git:*)`, `MultiEdit`, `LS`) and harness9's own (`read_file`) mapped to the
//! harness9 tool they mean, and the tools that only read. One mapping, used by the
//! sub-agent runner's filter (`agent::fork::tool_allowed`) and by the definitions'
//! checks, so a name means the same everywhere. It knows no registry and no agent.

/// The harness9 tools that only read: what a read-only agent (`explore`,
/// `permissionMode: plan`) is given at most.
pub const READ_ONLY_TOOLS: [&str; 5] = ["read_file", "list", "glob", "grep", "bash"];

/// What one entry of a tool list names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named<'a> {
    /// A built-in harness9 tool, by harness9's name.
    Known(&'static str),
    /// A name harness9 does not build in: a loaded skill's tool or an MCP server's,
    /// matched by its own name.
    Other(&'a str),
    /// A Claude Code tool harness9 has no counterpart for (`WebFetch`, `TodoWrite`,
    /// `Task`…): nothing is granted.
    Missing,
}

/// The entries of a tool list: comma- or space-separated, each possibly with a
/// `(pattern)` that narrows what it may do (the pattern is dropped: the approval
/// policy judges each call anyway).
pub fn entries(list: &[String]) -> impl Iterator<Item = String> + '_ {
    list.iter().flat_map(|line| {
        // Split on commas and spaces outside parentheses: `Bash(git log:*)` is one.
        let mut out = Vec::new();
        let mut depth = 0usize;
        let mut current = String::new();
        for c in line.chars() {
            match c {
                '(' => {
                    depth += 1;
                    current.push(c);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                ',' | ' ' | '\t' | '\n' if depth == 0 => {
                    if !current.trim().is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                    current.clear();
                }
                _ => current.push(c),
            }
        }
        if !current.trim().is_empty() {
            out.push(current);
        }
        out
    })
}

/// The tool one entry names (its `(pattern)` ignored, case ignored for Claude Code's
/// names).
pub fn harness_tool(entry: &str) -> Named<'_> {
    let base = entry.split('(').next().unwrap_or(entry).trim();
    let tool = match base.to_ascii_lowercase().as_str() {
        "read" | "read_file" | "notebookread" => "read_file",
        "write" | "write_file" => "write_file",
        "edit" | "multiedit" | "edit_file" => "edit_file",
        "ls" | "list" => "list",
        "glob" => "glob",
        "grep" => "grep",
        "bash" => "bash",
        "skill" | "use_skill" => "use_skill",
        "webfetch" | "websearch" | "todowrite" | "todoread" | "task" | "agent" | "notebookedit"
        | "bashoutput" | "killshell" | "killbash" | "exitplanmode" | "slashcommand"
        | "taskcreate" | "taskget" | "taskupdate" | "tasklist" | "taskoutput" | "taskstop"
        | "sendmessage" | "teamcreate" | "teamdelete" => {
            return Named::Missing;
        }
        _ => return Named::Other(base),
    };
    Named::Known(tool)
}

/// The tool one entry names, owned: harness9's name for a built-in tool, the entry's
/// own base name for anything else, `None` for a Claude Code tool with no counterpart
/// (or an empty entry).
pub fn harness_tool_owned(entry: &str) -> Option<String> {
    match harness_tool(entry) {
        Named::Missing | Named::Other("") => None,
        Named::Known(tool) => Some(tool.to_string()),
        Named::Other(tool) => Some(tool.to_string()),
    }
}

/// Whether `tool` is one a list names.
pub fn list_names(list: &[String], tool: &str) -> bool {
    entries(list).any(|e| match harness_tool(&e) {
        Named::Known(t) | Named::Other(t) => !t.is_empty() && t == tool,
        Named::Missing => false,
    })
}

/// Whether an entry names a Claude Code tool harness9 has no counterpart for.
pub fn is_missing(entry: &str) -> bool {
    harness_tool(entry) == Named::Missing
}

/// Whether an entry names no built-in tool and no MCP tool (`mcp__server__tool`): only
/// a loaded skill's tool of that name could match it.
pub fn is_unlisted(entry: &str) -> bool {
    matches!(harness_tool(entry), Named::Other(name) if !name.starts_with("mcp__"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn claude_code_names_and_ours_map_to_the_same_tool() {
        let allowed = list(&["Read, Grep", "Bash(git log:*)", "list", "MultiEdit"]);
        for yes in ["read_file", "grep", "bash", "list", "edit_file"] {
            assert!(list_names(&allowed, yes), "{yes}");
        }
        for no in ["write_file", "glob", "use_skill", "log:*)"] {
            assert!(!list_names(&allowed, no), "{no}");
        }
    }

    #[test]
    fn a_pattern_with_spaces_stays_one_entry() {
        let got: Vec<String> = entries(&list(&["Bash(git add:*), Read"])).collect();
        assert_eq!(got, ["Bash(git add:*)", "Read"]);
    }

    #[test]
    fn tools_without_a_counterpart_grant_nothing() {
        for missing in ["WebFetch", "TodoWrite", "Task", "WebSearch"] {
            assert!(is_missing(missing), "{missing}");
            assert_eq!(harness_tool_owned(missing), None);
        }
        assert_eq!(
            harness_tool_owned("mcp__github__list_issues").as_deref(),
            Some("mcp__github__list_issues")
        );
    }
}
