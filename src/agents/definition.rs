//! One definition file's text → an [`AgentDefinition`] and the problems that leave it
//! usable, or the problem that makes it unusable. Fields in Claude Code's spelling
//! (`disallowedTools`, `permissionMode`, `maxTurns`; snake and kebab case accepted too);
//! a field harness9 does not know is a warning, never an error. The name and description
//! are judged as a skill's are (`skills::assess`), so a name that could never be asked
//! for and a description that could steer a terminal are refused the same way.
//!
//! It knows text and frontmatter, not files or folders.

use std::path::Path;

use serde_json::Value;

use super::problem::AgentProblem;
use super::tools;
use super::{AgentDefinition, Confinement, ModelChoice, Origin, PermissionWish, ToolChoice};
use crate::skills::WarningKind;
use crate::skills::assess::{self, Verdict};
use crate::skills::frontmatter;

/// What a list field should be.
const EXPECT_LIST: &str = "a comma-separated string or a list of strings";
/// What `maxTurns` should be.
const EXPECT_TURNS: &str = "a whole number from 1 to 1000";
/// What `permissionMode` should be.
const EXPECT_MODE: &str = "one of default, acceptEdits, dontAsk, bypassPermissions, plan";
/// What a text field should be.
const EXPECT_TEXT: &str = "a string";
/// The largest `maxTurns` taken.
const MAX_TURNS_CAP: u64 = 1000;

/// Claude Code's model aliases: they name Anthropic models, which run as the session's
/// model here.
const CLAUDE_ALIASES: [&str; 4] = ["sonnet", "opus", "haiku", "opusplan"];

/// Parses a definition file's `text` found at `path` under a root of `origin`. `Ok` with
/// the problems that leave it usable; `Err` with the name (when one was read) and why it
/// is not usable.
pub fn parse_file(
    text: &str,
    path: &Path,
    origin: Origin,
) -> Result<(AgentDefinition, Vec<AgentProblem>), (Option<String>, AgentProblem)> {
    let (yaml, body) = frontmatter::split(text).map_err(|e| {
        (
            None,
            AgentProblem::BadFrontmatter {
                reason: e.to_string(),
            },
        )
    })?;
    let (map, fallback) = frontmatter::parse_map(&yaml);
    let mut notes = Vec::new();
    if let Some(error) = fallback {
        notes.push(AgentProblem::YamlFallback { error });
    }
    let mut fields = Fields::default();
    for (key, value) in &map {
        fields.take(key, value, &mut notes);
    }
    let assessment = assess::assess_fields(
        fields.name.as_deref(),
        fields.description.as_deref(),
        Vec::new(),
    );
    let (name, description) = match assessment.verdict {
        Verdict::Usable { name, description } => (name, description),
        Verdict::Invalid { reason } => {
            let name = fields.name.clone().filter(|n| !n.trim().is_empty());
            return Err((name, from_skill_reason(reason)));
        }
    };
    let prompt = body.trim().to_string();
    if prompt.is_empty() {
        return Err((Some(name), AgentProblem::EmptyPrompt));
    }
    let listed = fields.tools.iter().flatten().chain(&fields.disallowed);
    for entry in listed.flat_map(|l| tools::entries(std::slice::from_ref(l)).collect::<Vec<_>>()) {
        if tools::is_missing(&entry) {
            notes.push(AgentProblem::UnknownTool { tool: entry });
        } else if tools::is_unlisted(&entry) {
            notes.push(AgentProblem::UnlistedTool { tool: entry });
        }
    }
    let permission = fields.permission.unwrap_or(PermissionWish::Inherit);
    let definition = AgentDefinition {
        name,
        description,
        prompt,
        tools: match fields.tools {
            Some(list) => ToolChoice::Only(list),
            None => ToolChoice::Inherit,
        },
        disallowed: fields.disallowed,
        model: fields.model.unwrap_or(ModelChoice::Inherit),
        confinement: match permission {
            PermissionWish::Plan => Confinement::ReadOnly,
            _ => Confinement::Session,
        },
        permission,
        max_turns: fields.max_turns,
        skills: fields.skills,
        origin,
        path: Some(path.to_path_buf()),
    };
    Ok((definition, notes))
}

/// The fields read so far.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    description: Option<String>,
    /// `tools`: each entry as written (a string is one entry, split later).
    tools: Option<Vec<String>>,
    disallowed: Vec<String>,
    model: Option<ModelChoice>,
    permission: Option<PermissionWish>,
    max_turns: Option<u32>,
    skills: Vec<String>,
}

impl Fields {
    fn take(&mut self, key: &str, value: &Value, notes: &mut Vec<AgentProblem>) {
        let bad = |expected| AgentProblem::BadField {
            field: key.to_string(),
            expected,
        };
        match normalized(key).as_str() {
            "name" => match text(value) {
                Some(t) => self.name = Some(t),
                None => notes.push(bad(EXPECT_TEXT)),
            },
            "description" => match text(value) {
                Some(t) => self.description = Some(t),
                None => notes.push(bad(EXPECT_TEXT)),
            },
            "tools" => match list(value) {
                // `tools:` with nothing after it means no restriction, as an absent
                // field does; an explicit empty list grants no tool.
                Some(_) if value.is_null() => {}
                Some(items) => self.tools = Some(items),
                None => notes.push(bad(EXPECT_LIST)),
            },
            "disallowedtools" => match list(value) {
                Some(items) => self.disallowed = items,
                None => notes.push(bad(EXPECT_LIST)),
            },
            "skills" => match list(value) {
                Some(items) => self.skills = tools::entries(&items).collect(),
                None => notes.push(bad(EXPECT_LIST)),
            },
            "model" => match text(value) {
                Some(m) => self.model = Some(model(&m, notes)),
                None if value.is_null() => {}
                None => notes.push(bad(EXPECT_TEXT)),
            },
            "permissionmode" => match text(value).as_deref().and_then(permission) {
                Some(p) => self.permission = Some(p),
                None if value.is_null() => {}
                None => notes.push(bad(EXPECT_MODE)),
            },
            "maxturns" => match value.as_u64().filter(|n| (1..=MAX_TURNS_CAP).contains(n)) {
                Some(n) => self.max_turns = u32::try_from(n).ok(),
                None => notes.push(bad(EXPECT_TURNS)),
            },
            // How Claude Code colours the agent's name: nothing to do in a terminal
            // that draws no agent colours, and nothing lost.
            "color" => {}
            "hooks" => notes.push(AgentProblem::Unsupported {
                field: "hooks",
                instead: "the session's hooks apply to the agent's calls",
            }),
            "mcpservers" => notes.push(AgentProblem::Unsupported {
                field: "mcpServers",
                instead: "the agent uses the session's MCP servers",
            }),
            "memory" => notes.push(AgentProblem::Unsupported {
                field: "memory",
                instead: "the agent starts with no memory of earlier runs",
            }),
            _ => notes.push(AgentProblem::UnknownField {
                field: key.to_string(),
            }),
        }
    }
}

/// A key lowercased without `-` and `_`: `maxTurns`, `max_turns`, `max-turns` are one.
fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A string (kept whole; entries are split by [`tools::entries`]) or a list of strings.
fn list(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(text)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.into_iter().filter(|s| !s.trim().is_empty()).collect()),
        _ => None,
    }
}

fn model(value: &str, notes: &mut Vec<AgentProblem>) -> ModelChoice {
    let value = value.trim();
    if value.is_empty() || value.eq_ignore_ascii_case("inherit") {
        return ModelChoice::Inherit;
    }
    if CLAUDE_ALIASES.contains(&value.to_ascii_lowercase().as_str()) {
        notes.push(AgentProblem::Unsupported {
            field: "model",
            instead: "a Claude model alias; the agent runs with the session's model",
        });
        return ModelChoice::Inherit;
    }
    ModelChoice::Named(value.to_string())
}

fn permission(value: &str) -> Option<PermissionWish> {
    match value.trim() {
        "default" => Some(PermissionWish::Inherit),
        "acceptEdits" => Some(PermissionWish::AcceptEdits),
        "dontAsk" | "bypassPermissions" => Some(PermissionWish::Widest),
        "plan" => Some(PermissionWish::Plan),
        _ => None,
    }
}

/// The skills' reason for refusing a name or description, as an agent problem.
fn from_skill_reason(reason: WarningKind) -> AgentProblem {
    match reason {
        WarningKind::MissingField { field } => AgentProblem::MissingField { field },
        WarningKind::InvalidName { name, problem } => AgentProblem::InvalidName { name, problem },
        WarningKind::InvalidDescription { found } => AgentProblem::InvalidDescription { found },
        other => AgentProblem::BadFrontmatter {
            reason: other.to_string(),
        },
    }
}
