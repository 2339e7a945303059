//! A skill's bundled tools: the `tools.json` file beside its `SKILL.md`, parsed and
//! checked. The file is a JSON array of tool declarations, or an object whose `tools`
//! field is that array; each declaration has a `name` (`^[a-zA-Z0-9_-]{1,64}$`), a
//! `description`, `parameters` (a JSON schema of type `object`; `{}` when absent), a
//! `command` and an optional `timeout_secs`.
//!
//! A `command` that is one word holding a `/`, or naming an entry of the skill folder, is a
//! script: relative to the folder, it must stay inside it once symlinks and `..` are
//! resolved, and be an executable file. Anything else is a command line for `bash -c`
//! run in the skill folder; when its first word is a relative path, that path must stay
//! inside the folder too. This module reads and checks; it knows nothing of running
//! commands, the tool registry or the model.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The file beside `SKILL.md` that declares a skill's tools.
pub const TOOLS_FILE: &str = "tools.json";
/// Largest `tools.json` read, in bytes.
pub const MAX_TOOLS_FILE_BYTES: u64 = 256 * 1024;
/// Most tools one skill may declare (each schema travels in every request while loaded).
pub const MAX_TOOLS: usize = 32;
/// Longest tool description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest tool name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The fields a declaration may have.
pub const DECLARATION_FIELDS: &[&str] = &[
    "name",
    "description",
    "parameters",
    "command",
    "timeout_secs",
];

/// One tool a skill declares.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDecl {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
    /// What runs.
    pub command: ToolCommand,
    /// Kill the command after this many seconds (`None`: the `bash` default).
    pub timeout_secs: Option<u64>,
}

/// What a bundled tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCommand {
    /// A script in the skill folder, run directly.
    Script {
        /// As written in `tools.json` (relative to the skill folder).
        relative: String,
        /// The script, canonical (inside the canonical skill folder).
        path: PathBuf,
    },
    /// A command line, run with `bash -c` in the skill folder.
    Line(String),
}

impl ToolCommand {
    /// The command as a user would type it in the skill folder.
    pub fn display(&self) -> String {
        match self {
            ToolCommand::Script { path, .. } => path.display().to_string(),
            ToolCommand::Line(line) => line.clone(),
        }
    }
}

/// A `tools.json` that cannot be used: where, and every problem found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}", path.display(), problems.join("; "))]
pub struct BundleError {
    /// The `tools.json` file.
    pub path: PathBuf,
    /// What is wrong, one entry per problem.
    pub problems: Vec<String>,
}

/// True for names matching `^[a-zA-Z0-9_-]{1,64}$`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The tools declared in `skill_dir/tools.json`: `Ok(None)` when there is no such file.
pub fn load(skill_dir: &Path) -> Result<Option<Vec<ToolDecl>>, BundleError> {
    let path = skill_dir.join(TOOLS_FILE);
    let fail = |problem: String| BundleError {
        path: path.clone(),
        problems: vec![problem],
    };
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fail(format!("cannot read: {e}"))),
    };
    if !meta.is_file() {
        return Err(fail("is not a file".to_string()));
    }
    if meta.len() > MAX_TOOLS_FILE_BYTES {
        return Err(fail(format!(
            "is {} bytes; the limit is {MAX_TOOLS_FILE_BYTES}",
            meta.len()
        )));
    }
    let text =
        crate::plain_file::read_to_string(&path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let dir = std::fs::canonicalize(skill_dir)
        .map_err(|e| fail(format!("cannot resolve the skill folder: {e}")))?;
    parse(&text, &dir)
        .map(Some)
        .map_err(|problems| BundleError { path, problems })
}

/// Parses and checks the text of a `tools.json` for the canonical skill folder `dir`.
/// Every problem is reported, not just the first.
pub fn parse(text: &str, dir: &Path) -> Result<Vec<ToolDecl>, Vec<String>> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| vec![format!("invalid JSON: {e}")])?;
    let entries = match &value {
        Value::Array(entries) => entries,
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(entries)) => entries,
            _ => {
                return Err(vec![
                    "an object must have a `tools` array; or make the file an array of tools"
                        .to_string(),
                ]);
            }
        },
        _ => {
            return Err(vec![
                "must be an array of tools (or an object with a `tools` array)".to_string(),
            ]);
        }
    };
    let mut problems = Vec::new();
    if entries.len() > MAX_TOOLS {
        problems.push(format!(
            "declares {} tools; the limit is {MAX_TOOLS}",
            entries.len()
        ));
    }
    let mut tools: Vec<ToolDecl> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match declaration(entry, dir) {
            Ok(decl) => {
                if tools.iter().any(|t| t.name == decl.name) {
                    problems.push(format!(
                        "tool #{} (\"{}\"): the name is declared twice",
                        i + 1,
                        decl.name
                    ));
                }
                tools.push(decl);
            }
            Err(found) => {
                let label = match entry.get("name").and_then(Value::as_str) {
                    Some(name) => format!("tool #{} (\"{name}\")", i + 1),
                    None => format!("tool #{}", i + 1),
                };
                problems.extend(found.into_iter().map(|p| format!("{label}: {p}")));
            }
        }
    }
    if problems.is_empty() {
        Ok(tools)
    } else {
        Err(problems)
    }
}

fn declaration(entry: &Value, dir: &Path) -> Result<ToolDecl, Vec<String>> {
    let Some(map) = entry.as_object() else {
        return Err(vec!["must be an object".to_string()]);
    };
    let mut problems = Vec::new();
    for key in map.keys() {
        if !DECLARATION_FIELDS.contains(&key.as_str()) {
            problems.push(format!(
                "unknown field `{key}` (fields: {})",
                DECLARATION_FIELDS.join(", ")
            ));
        }
    }
    let mut text_field = |field: &str| match map.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::String(_)) | None => {
            problems.push(format!("missing field `{field}`"));
            None
        }
        Some(_) => {
            problems.push(format!("`{field}` must be a string"));
            None
        }
    };
    let name = text_field("name");
    let description = text_field("description");
    let command = text_field("command");
    if let Some(name) = &name
        && !valid_tool_name(name)
    {
        problems.push(format!(
            "name \"{name}\" must be 1 to {MAX_NAME_CHARS} letters, digits, `_` or `-`"
        ));
    }
    if let Some(d) = &description
        && d.chars().count() > MAX_DESCRIPTION_CHARS
    {
        problems.push(format!(
            "description is {} characters; the limit is {MAX_DESCRIPTION_CHARS}",
            d.chars().count()
        ));
    }
    let parameters = match map.get("parameters") {
        None => serde_json::json!({"type": "object", "properties": {}}),
        Some(p @ Value::Object(schema)) => {
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                problems
                    .push("`parameters` must be a JSON schema with \"type\": \"object\"".into());
            }
            if let Some(props) = schema.get("properties")
                && !props.is_object()
            {
                problems.push("`parameters.properties` must be an object".into());
            }
            p.clone()
        }
        Some(_) => {
            problems.push("`parameters` must be a JSON schema object".into());
            Value::Null
        }
    };
    let timeout_secs = match map.get("timeout_secs") {
        None => None,
        Some(v) => match v.as_u64().filter(|&n| n > 0) {
            Some(n) => Some(n),
            None => {
                problems.push("`timeout_secs` must be a positive integer".into());
                None
            }
        },
    };
    let command = command.and_then(|c| match classify(c.trim(), dir) {
        Ok(c) => Some(c),
        Err(p) => {
            problems.push(p);
            None
        }
    });
    match (name, description, command) {
        (Some(name), Some(description), Some(command)) if problems.is_empty() => Ok(ToolDecl {
            name,
            description,
            parameters,
            command,
            timeout_secs,
        }),
        _ => Err(problems),
    }
}

/// Script or command line (see the module docs), checked against the canonical `dir`.
fn classify(command: &str, dir: &Path) -> Result<ToolCommand, String> {
    let one_word = !command.contains(char::is_whitespace);
    if one_word && (command.contains('/') || dir.join(command).exists()) {
        let path = inside(dir, command).map_err(|p| format!("command: {p}"))?;
        if !path.is_file() {
            return Err(format!("command: script `{command}` is not a file"));
        }
        if !is_executable(&path) {
            return Err(format!(
                "command: script `{command}` is not executable; run `chmod +x {command}` \
                 or name its interpreter (`python3 {command}`)"
            ));
        }
        return Ok(ToolCommand::Script {
            relative: command.to_string(),
            path,
        });
    }
    if let Some(first) = command.split_whitespace().next()
        && first.contains('/')
        && !first.starts_with('/')
    {
        inside(dir, first).map_err(|p| format!("command: {p}"))?;
    }
    Ok(ToolCommand::Line(command.to_string()))
}

/// `relative` resolved against `dir` (canonical), refused unless it stays inside.
fn inside(dir: &Path, relative: &str) -> Result<PathBuf, String> {
    let rel = Path::new(relative);
    if rel.is_absolute() {
        return Err(format!(
            "`{relative}` is an absolute path; give a path relative to the skill folder"
        ));
    }
    if rel.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!(
            "`{relative}` uses `..`; the path must stay inside the skill folder"
        ));
    }
    let path = std::fs::canonicalize(dir.join(rel))
        .map_err(|e| format!("`{relative}` cannot be resolved in the skill folder: {e}"))?;
    if !path.starts_with(dir) {
        return Err(format!(
            "`{relative}` resolves to {}, outside the skill folder",
            path.display()
        ));
    }
    Ok(path)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;
    use std::os::unix::fs::PermissionsExt;

    fn skill() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pdf");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        let script = dir.join("scripts/fill.sh");
        std::fs::write(&script, "#!/bin/sh\ncat\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("notes.sh"), "echo\n").unwrap();
        let dir = std::fs::canonicalize(dir).unwrap();
        (tmp, dir)
    }

    fn problems(text: &str, dir: &Path) -> String {
        parse(text, dir).unwrap_err().join("\n")
    }

    #[test]
    fn names_follow_the_rule() {
        for ok in ["a", "pdf_fill", "Fill-2", &"x".repeat(64)] {
            assert!(valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "a b", "a.b", "é", "a/b", &"x".repeat(65)] {
            assert!(!valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn array_and_object_forms_with_scripts_and_lines() {
        let (_tmp, dir) = skill();
        let array = r#"[
            {"name": "pdf_fill", "description": "Fill a form", "command": "scripts/fill.sh",
             "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}},
            {"name": "pdf_count", "description": "Count", "command": "python3 -c 'print(1)'",
             "timeout_secs": 5}
        ]"#;
        let tools = parse(array, &dir).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(
            tools[0].command,
            ToolCommand::Script {
                relative: "scripts/fill.sh".into(),
                path: dir.join("scripts/fill.sh")
            }
        );
        assert_eq!(tools[0].parameters["properties"]["x"]["type"], "string");
        assert_eq!(
            tools[1].command,
            ToolCommand::Line("python3 -c 'print(1)'".into())
        );
        assert_eq!(tools[1].timeout_secs, Some(5));
        assert_eq!(tools[1].parameters["type"], "object");
        let object = r#"{"tools": [{"name": "t", "description": "d", "command": "true"}]}"#;
        assert_eq!(
            parse(object, &dir).unwrap()[0].command,
            ToolCommand::Line("true".into())
        );
    }

    #[test]
    fn every_problem_is_reported_with_the_tool() {
        let (_tmp, dir) = skill();
        let text = r#"[
            {"name": "bad name", "description": "d", "command": "true"},
            {"description": "", "command": "true", "param": {}},
            {"name": "p", "description": "d", "command": "true", "parameters": {"type": "string"}},
            {"name": "q", "description": "d", "command": "true", "timeout_secs": 0},
            {"name": "r", "description": "d", "command": "true"},
            {"name": "r", "description": "d", "command": "true"},
            "x"
        ]"#;
        let found = problems(text, &dir);
        for expected in [
            "tool #1 (\"bad name\"): name \"bad name\" must be 1 to 64",
            "tool #2: unknown field `param`",
            "tool #2: missing field `name`",
            "tool #2: missing field `description`",
            "tool #3 (\"p\"): `parameters` must be a JSON schema with \"type\": \"object\"",
            "tool #4 (\"q\"): `timeout_secs` must be a positive integer",
            "tool #6 (\"r\"): the name is declared twice",
            "tool #7: must be an object",
        ] {
            assert!(found.contains(expected), "{expected}\n---\n{found}");
        }
        assert!(problems("{", &dir).starts_with("invalid JSON"));
        assert!(problems("{}", &dir).contains("`tools` array"));
        assert!(problems("3", &dir).contains("must be an array"));
    }

    #[test]
    fn scripts_must_stay_inside_and_be_executable() {
        let (tmp, dir) = skill();
        let outside = tmp.path().join("evil.sh");
        std::fs::write(&outside, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("scripts/link.sh")).unwrap();
        let tool = |command: &str| {
            format!(r#"[{{"name": "t", "description": "d", "command": "{command}"}}]"#)
        };
        let cases = [
            ("/bin/true", "absolute path"),
            ("../evil.sh", "uses `..`"),
            ("scripts/link.sh", "outside the skill folder"),
            ("scripts/missing.sh", "cannot be resolved"),
            ("notes.sh", "not executable"),
            ("scripts", "not a file"),
            ("../evil.sh --flag", "uses `..`"),
        ];
        for (command, expected) in cases {
            let found = problems(&tool(command), &dir);
            assert!(found.contains(expected), "{command}: {found}");
        }
    }

    #[test]
    fn load_reads_the_file_and_names_it_in_errors() {
        let (_tmp, dir) = skill();
        assert_eq!(load(&dir).unwrap(), None);
        std::fs::write(dir.join(TOOLS_FILE), "[{\"name\": 1}]").unwrap();
        let e = load(&dir).unwrap_err();
        assert_eq!(e.path, dir.join(TOOLS_FILE));
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("{}: tool #1", dir.join(TOOLS_FILE).display())),
            "{shown}"
        );
        assert_contains(&shown, "`name` must be a string");
        std::fs::write(
            dir.join(TOOLS_FILE),
            r#"[{"name": "t", "description": "d", "command": "true"}]"#,
        )
        .unwrap();
        assert_eq!(load(&dir).unwrap().unwrap()[0].name, "t");
    }
}
