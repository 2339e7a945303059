//! Output of `harness9 agents list|show|validate`, shaped like the skills subcommands'
//! (a table with NAME, ORIGIN, STATUS, PATH; the index's budget use; one `path: reason`
//! line per problem). Definitions are untrusted (a cloned repository's): everything is
//! written through [`SafeWriter`], so a control character is shown, never obeyed.
//! Each function fails with an [`AgentsCliError`] whose [`Kind`] `main` turns into the
//! exit code.

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::json;

use super::problem::Severity;
use super::{AgentCatalog, AgentDefinition, ModelChoice, ToolChoice};
use crate::safe_text::{self, SafeWriter};
use crate::subcommand::Kind;

/// Why an `agents` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentsCliError {
    /// No usable definition has the name typed.
    #[error("no agent named `{name}`; available: {}", available.join(", "))]
    NotFound {
        /// What was typed.
        name: String,
        /// The usable names.
        available: Vec<String>,
    },
    /// Only invalid files have that name (shown on stdout, with why).
    #[error("agent `{name}` is invalid: {reason}")]
    Invalid {
        /// What was typed.
        name: String,
        /// Why the first file of that name is invalid.
        reason: String,
    },
    /// A path given to `validate` does not exist.
    #[error("cannot validate {}: no such file or directory", path.display())]
    NoSuchPath {
        /// The path as given.
        path: PathBuf,
    },
    /// `validate` found errors (they are on stdout).
    #[error("validation found errors ({failed} failed of {checked} definition(s) checked)")]
    Validation {
        /// Files with an error.
        failed: usize,
        /// Files checked.
        checked: usize,
    },
    /// Standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl AgentsCliError {
    /// The kind of failure, for the exit code.
    pub fn kind(&self) -> Kind {
        match self {
            AgentsCliError::NotFound { .. } | AgentsCliError::NoSuchPath { .. } => Kind::NotFound,
            AgentsCliError::Invalid { .. } | AgentsCliError::Validation { .. } => Kind::Failed,
            AgentsCliError::Output(_) => Kind::Internal,
        }
    }
}

/// How `agents list` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    /// A table for people.
    Table,
    /// One JSON document (`--json`).
    Json,
}

fn safely(
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> Result<(), AgentsCliError>,
) -> Result<(), AgentsCliError> {
    let mut safe = SafeWriter::text(out);
    let result = write(&mut safe);
    safe.flush()?;
    result
}

/// `agents list [--json]`: every definition (usable, shadowed, invalid), the index's
/// budget use and the warnings.
pub fn list(
    catalog: &AgentCatalog,
    budget: usize,
    format: ListFormat,
    out: &mut dyn Write,
) -> Result<(), AgentsCliError> {
    safely(out, |out| match format {
        ListFormat::Json => Ok(list_json(catalog, budget, out)?),
        ListFormat::Table => Ok(list_table(catalog, budget, out)?),
    })
}

fn list_table(catalog: &AgentCatalog, budget: usize, out: &mut dyn Write) -> io::Result<()> {
    let index = catalog.index(budget);
    let mut rows: Vec<[String; 4]> = Vec::new();
    for a in catalog.agents() {
        let status = if index.dropped.contains(&a.name) {
            "ok+left-out"
        } else if index.shortened.contains(&a.name) {
            "ok+shortened"
        } else {
            "ok"
        };
        rows.push([
            a.name.clone(),
            a.origin.as_str().into(),
            status.into(),
            a.shown_path(),
        ]);
    }
    for s in catalog.shadowed() {
        let a = &s.agent;
        let row = [
            a.name.clone(),
            a.origin.as_str().into(),
            "shadowed".into(),
            a.shown_path(),
        ];
        rows.push(row);
    }
    for bad in catalog.invalid() {
        rows.push([
            bad.name.clone().unwrap_or_else(|| "-".into()),
            bad.origin.as_str().into(),
            "invalid".into(),
            bad.path.display().to_string(),
        ]);
    }
    let header = ["NAME", "ORIGIN", "STATUS", "PATH"].map(String::from);
    rows.insert(0, header);
    for line in crate::text_table::plain_columns(&rows) {
        writeln!(out, "{line}")?;
    }
    match &index.text {
        Some(_) => writeln!(
            out,
            "\nIndex: {} of {} characters, {} description(s) shortened, {} name(s) left out.",
            index.used_chars,
            budget,
            index.shortened.len(),
            index.dropped.len()
        )?,
        None => writeln!(
            out,
            "\nIndex: none (no definitions beyond the built-ins; the system prompt is unchanged)."
        )?,
    }
    let warnings = catalog.warnings();
    if !warnings.is_empty() {
        writeln!(out, "\n{} warning(s):", warnings.len())?;
        for w in warnings {
            writeln!(out, "  {w}")?;
        }
    }
    Ok(())
}

fn list_json(catalog: &AgentCatalog, budget: usize, out: &mut dyn Write) -> io::Result<()> {
    let index = catalog.index(budget);
    let agent = |a: &AgentDefinition, status: &str| {
        json!({
            "name": a.name,
            "description": a.description,
            "origin": a.origin.as_str(),
            "path": a.path.as_ref().map(|p| p.display().to_string()),
            "status": status,
        })
    };
    let mut agents: Vec<serde_json::Value> =
        catalog.agents().iter().map(|a| agent(a, "ok")).collect();
    agents.extend(
        catalog
            .shadowed()
            .iter()
            .map(|s| agent(&s.agent, "shadowed")),
    );
    let invalid: Vec<serde_json::Value> = catalog
        .invalid()
        .iter()
        .map(|b| {
            json!({
                "name": b.name,
                "path": b.path.display().to_string(),
                "origin": b.origin.as_str(),
                "reason": b.reason.to_string(),
            })
        })
        .collect();
    let doc = json!({
        "agents": agents,
        "invalid": invalid,
        "index": {
            "present": index.text.is_some(),
            "used_chars": index.used_chars,
            "budget_chars": index.budget_chars,
            "shortened": index.shortened,
            "left_out": index.dropped,
        },
        "warnings": catalog.warnings().iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    writeln!(out, "{}", safe_text::escape_json(&text))
}

/// `agents show NAME`: what the definition asks for, then its prompt.
pub fn show(catalog: &AgentCatalog, name: &str, out: &mut dyn Write) -> Result<(), AgentsCliError> {
    safely(out, |out| {
        let Some(a) = catalog.get(name) else {
            if let Some(bad) = catalog
                .invalid()
                .iter()
                .find(|b| b.name.as_deref() == Some(name))
            {
                writeln!(out, "path: {}\ninvalid: {}", bad.path.display(), bad.reason)?;
                return Err(AgentsCliError::Invalid {
                    name: name.to_string(),
                    reason: bad.reason.to_string(),
                });
            }
            return Err(AgentsCliError::NotFound {
                name: name.to_string(),
                available: catalog.agents().iter().map(|a| a.name.clone()).collect(),
            });
        };
        writeln!(out, "name: {}", a.name)?;
        writeln!(out, "description: {}", a.one_line_description())?;
        writeln!(out, "origin: {}", a.origin.as_str())?;
        writeln!(out, "path: {}", a.shown_path())?;
        let tools = match &a.tools {
            ToolChoice::Inherit => "the session's".to_string(),
            ToolChoice::Only(list) => super::tools::entries(list).collect::<Vec<_>>().join(", "),
        };
        writeln!(out, "tools: {tools}")?;
        if !a.disallowed.is_empty() {
            let denied: Vec<String> = super::tools::entries(&a.disallowed).collect();
            writeln!(out, "disallowed tools: {}", denied.join(", "))?;
        }
        let model = match &a.model {
            ModelChoice::Inherit => "the session's",
            ModelChoice::Named(m) => m.as_str(),
        };
        writeln!(out, "model: {model}")?;
        writeln!(out, "permission mode: {}", a.permission.as_str())?;
        if let Some(n) = a.max_turns {
            writeln!(out, "max turns: {n}")?;
        }
        if !a.skills.is_empty() {
            writeln!(out, "skills: {}", a.skills.join(", "))?;
        }
        for w in catalog
            .warnings()
            .iter()
            .filter(|w| a.path.as_deref() == Some(w.path.as_path()))
        {
            writeln!(out, "warning: {}", w.problem)?;
        }
        writeln!(out, "\n{}", a.prompt)?;
        Ok(())
    })
}

/// `agents validate [PATH...]`: one line per problem (`path: error: …` or
/// `path: warning: …`), then a summary; any error fails it.
pub fn validate(paths: &[PathBuf], out: &mut dyn Write) -> Result<(), AgentsCliError> {
    if let Some(path) = paths.iter().find(|p| std::fs::symlink_metadata(p).is_err()) {
        return Err(AgentsCliError::NoSuchPath { path: path.clone() });
    }
    safely(out, |out| {
        let catalog = AgentCatalog::from_paths(paths);
        let mut failed: Vec<&std::path::Path> = Vec::new();
        let mut warnings = 0;
        for w in catalog.warnings() {
            let word = match w.problem.severity() {
                Severity::Error => {
                    if !failed.contains(&w.path.as_path()) {
                        failed.push(&w.path);
                    }
                    "error"
                }
                Severity::Warning => {
                    warnings += 1;
                    "warning"
                }
            };
            writeln!(out, "{}: {word}: {}", w.path.display(), w.problem)?;
        }
        let failed = failed.len();
        // Every usable definition, and every file that failed (invalid or a link).
        let checked = catalog.agents().len() + catalog.shadowed().len() + failed;
        if checked == 0 && failed == 0 {
            writeln!(out, "No agent definition found.")?;
            return Ok(());
        }
        writeln!(
            out,
            "{checked} definition(s) checked: {failed} failed, {warnings} warning(s)."
        )?;
        if failed > 0 {
            return Err(AgentsCliError::Validation { failed, checked });
        }
        Ok(())
    })
}
