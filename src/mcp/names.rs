//! The names the model calls MCP tools by: `mcp__SERVER__TOOL`, made valid for chat
//! APIs (`^[A-Za-z0-9_-]{1,64}$`): other characters become `_`, and a name that is too
//! long, or that two of a server's tools would share once changed, is cut and given a
//! short hash of the original so it stays unique and stable across runs. The original
//! name is what the server is called with. It knows nothing of servers or the registry.

/// The longest tool name chat APIs accept.
pub const MAX_TOOL_NAME: usize = 64;

/// The prefix of every MCP tool name.
pub const PREFIX: &str = "mcp__";

/// The API names for one server's tools, in the order given: `(api name, original)`.
pub fn api_names<'a>(
    server: &str,
    tools: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for original in tools {
        let mut name = format!("{PREFIX}{server}__{}", sanitize(original));
        let clash = out.iter().any(|(n, _)| *n == name);
        if name.len() > MAX_TOOL_NAME || clash {
            let suffix = format!("_{:08x}", fnv(original));
            let keep = MAX_TOOL_NAME.saturating_sub(suffix.len()).min(name.len());
            name.truncate(keep);
            name.push_str(&suffix);
        }
        out.push((name, original.to_string()));
    }
    out
}

/// The prefix of a server's tool names (`mcp__SERVER__`).
pub fn server_prefix(server: &str) -> String {
    format!("{PREFIX}{server}__")
}

/// The server a tool name belongs to, when it is an MCP tool's.
pub fn server_of(tool: &str) -> Option<&str> {
    let rest = tool.strip_prefix(PREFIX)?;
    let (server, _) = rest.split_once("__")?;
    (!server.is_empty()).then_some(server)
}

fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "_".to_string() } else { s }
}

/// FNV-1a, 32 bits: a stable short hash (not for security).
fn fnv(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= MAX_TOOL_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn names_are_prefixed_and_made_valid() {
        let names = api_names("git", ["status", "bad name!", "ünï", ""]);
        assert_eq!(names[0], ("mcp__git__status".into(), "status".into()));
        assert_eq!(names[1].0, "mcp__git__bad_name_");
        assert_eq!(names[1].1, "bad name!");
        assert!(names.iter().all(|(n, _)| valid(n)), "{names:?}");
    }

    #[test]
    fn long_and_clashing_names_stay_unique_and_stable() {
        let long = "x".repeat(100);
        let names = api_names("server", [long.as_str(), "a.b", "a_b", "a b"]);
        assert!(names.iter().all(|(n, _)| valid(n)), "{names:?}");
        let mut unique: Vec<&String> = names.iter().map(|(n, _)| n).collect();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 4);
        assert_eq!(
            names,
            api_names("server", [long.as_str(), "a.b", "a_b", "a b"])
        );
    }

    #[test]
    fn the_server_is_read_back() {
        assert_eq!(server_of("mcp__git__status"), Some("git"));
        assert_eq!(server_of("mcp__git"), None);
        assert_eq!(server_of("bash"), None);
    }
}
