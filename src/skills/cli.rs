//! Output of the `harness9 skills list|show|validate` subcommands. Each function writes
//! to the given writer and returns the exit code; argument parsing belongs to the CLI
//! module, which calls these.

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::json;

use super::validate::{self, Severity};
use super::{Catalog, Skill, SkillIndex};

/// `skills list [--json]`: every skill (winners, shadowed, invalid) with name, root,
/// path and status, then how much of the index budget is used and the warnings.
pub fn list(catalog: &Catalog, budget: usize, json: bool, out: &mut dyn Write) -> io::Result<i32> {
    let index = catalog.index(budget);
    if json {
        list_json(catalog, &index, out)?;
        return Ok(0);
    }
    let mut rows: Vec<[String; 4]> = Vec::new();
    for s in catalog.skills().iter().chain(catalog.shadowed()) {
        rows.push([
            s.name.clone(),
            s.root.kind.to_string(),
            status_words(s, &index).join("+"),
            s.path.display().to_string(),
        ]);
    }
    for bad in catalog.invalid() {
        rows.push([
            "-".to_string(),
            bad.root.kind.to_string(),
            "invalid".to_string(),
            bad.path.display().to_string(),
        ]);
    }
    if rows.is_empty() {
        writeln!(out, "No skills found.")?;
    } else {
        let header = ["NAME", "ROOT", "STATUS", "PATH"].map(String::from);
        let mut widths = [0usize; 3];
        for row in std::iter::once(&header).chain(&rows) {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for row in std::iter::once(&header).chain(&rows) {
            writeln!(
                out,
                "{:<w0$}  {:<w1$}  {:<w2$}  {}",
                row[0],
                row[1],
                row[2],
                row[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2]
            )?;
        }
    }
    let pct = if budget == 0 {
        0
    } else {
        index.used_chars * 100 / budget
    };
    writeln!(
        out,
        "\nIndex: {} of {} characters ({pct}%), {} description(s) shortened, {} name(s) left out.",
        index.used_chars,
        budget,
        index.shortened.len(),
        index.dropped.len()
    )?;
    let warnings = catalog.warnings();
    if !warnings.is_empty() {
        writeln!(out, "\n{} warning(s):", warnings.len())?;
        for w in warnings {
            writeln!(out, "  {w}")?;
        }
    }
    Ok(0)
}

fn status_words(skill: &Skill, index: &SkillIndex) -> Vec<&'static str> {
    let mut words = vec![skill.status.as_str()];
    if matches!(skill.status, super::SkillStatus::Shadowed { .. }) {
        return words;
    }
    if index.shortened.contains(&skill.name) {
        words.push("shortened");
    }
    if index.dropped.contains(&skill.name) {
        words.push("left-out");
    }
    if !skill.model_invocable() {
        words.push("user-only");
    }
    if !skill.user_invocable() {
        words.push("model-only");
    }
    words
}

fn list_json(catalog: &Catalog, index: &SkillIndex, out: &mut dyn Write) -> io::Result<()> {
    let skills: Vec<serde_json::Value> = catalog
        .skills()
        .iter()
        .chain(catalog.shadowed())
        .map(|s| {
            let shadowed_by = match &s.status {
                super::SkillStatus::Shadowed { by } => Some(by.display().to_string()),
                _ => None,
            };
            json!({
                "name": s.name,
                "description": s.description,
                "root": s.root.kind.as_str(),
                "root_dir": s.root.path.display().to_string(),
                "path": s.path.display().to_string(),
                "status": status_words(s, index),
                "shadowed_by": shadowed_by,
                "user_invocable": s.user_invocable(),
                "model_invocable": s.model_invocable(),
            })
        })
        .collect();
    let invalid: Vec<serde_json::Value> = catalog
        .invalid()
        .iter()
        .map(|b| {
            json!({
                "path": b.path.display().to_string(),
                "root": b.root.kind.as_str(),
                "status": ["invalid"],
                "reason": b.reason.to_string(),
            })
        })
        .collect();
    let doc = json!({
        "skills": skills,
        "invalid": invalid,
        "index": {
            "used_chars": index.used_chars,
            "budget_chars": index.budget_chars,
            "shortened": index.shortened,
            "left_out": index.dropped,
        },
        "warnings": catalog.warnings().iter().map(|w| w.to_string()).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

/// `skills show NAME`: metadata, then the body. Exit 1 when no skill has that name.
pub fn show(catalog: &Catalog, name: &str, out: &mut dyn Write) -> io::Result<i32> {
    let Some(skill) = catalog.get(name) else {
        let names: Vec<&str> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
        if names.is_empty() {
            writeln!(out, "error: no skill named `{name}` (no skills found)")?;
        } else {
            writeln!(
                out,
                "error: no skill named `{name}`; available: {}",
                names.join(", ")
            )?;
        }
        return Ok(1);
    };
    let fm = &skill.frontmatter;
    writeln!(out, "name: {}", skill.name)?;
    writeln!(out, "description: {}", skill.one_line_description())?;
    writeln!(out, "path: {}", skill.path.display())?;
    writeln!(
        out,
        "root: {} ({})",
        skill.root.kind,
        skill.root.path.display()
    )?;
    writeln!(out, "status: {}", skill.status.as_str())?;
    writeln!(out, "user-invocable: {}", yes_no(skill.user_invocable()))?;
    writeln!(out, "model-invocable: {}", yes_no(skill.model_invocable()))?;
    let optional = [
        ("argument-hint", &fm.argument_hint),
        ("when_to_use", &fm.when_to_use),
        ("trigger", &fm.trigger),
        ("context", &fm.context),
        ("license", &fm.license),
        ("compatibility", &fm.compatibility),
    ];
    for (label, value) in optional {
        if let Some(v) = value {
            writeln!(
                out,
                "{label}: {}",
                v.split_whitespace().collect::<Vec<_>>().join(" ")
            )?;
        }
    }
    if !fm.allowed_tools.is_empty() {
        writeln!(out, "allowed-tools: {}", fm.allowed_tools.join(", "))?;
    }
    if let Some(m) = &fm.metadata {
        writeln!(out, "metadata: {m}")?;
    }
    for (k, v) in &fm.extra {
        writeln!(
            out,
            "{k}: {}",
            v.as_str().map_or_else(|| v.to_string(), str::to_string)
        )?;
    }
    for s in catalog.shadowed().iter().filter(|s| s.name == skill.name) {
        writeln!(out, "shadows: {}", s.path.display())?;
    }
    for w in catalog.warnings().iter().filter(|w| w.path == skill.path) {
        writeln!(out, "warning: {}", w.kind)?;
    }
    writeln!(out, "---")?;
    match skill.load_body() {
        Ok(body) => writeln!(out, "{body}")?,
        Err(e) => {
            writeln!(out, "error: {e}")?;
            return Ok(1);
        }
    }
    Ok(0)
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `skills validate [PATH...]`: one line per problem (`path: error: ...` or
/// `path: warning: ...`), then a summary. Directories are searched like a skills root;
/// files are checked as given. Exit 1 if any skill has an error, else 0.
pub fn validate(paths: &[PathBuf], out: &mut dyn Write) -> io::Result<i32> {
    let (checked, problems) = validate::validate(paths);
    for p in &problems {
        writeln!(out, "{p}")?;
    }
    let mut failed: Vec<&PathBuf> = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(|p| &p.path)
        .collect();
    failed.dedup();
    let warnings = problems
        .iter()
        .filter(|p| p.severity == Severity::Warning)
        .count();
    if checked == 0 && failed.is_empty() {
        writeln!(out, "No SKILL.md found.")?;
        return Ok(0);
    }
    writeln!(
        out,
        "{checked} skill(s) checked: {} failed, {warnings} warning(s).",
        failed.len()
    )?;
    Ok(if failed.is_empty() { 0 } else { 1 })
}
