//! Output of the `harness9 skills list|show|validate` subcommands. Each function writes
//! its result to the given writer and fails with a [`SkillsCliError`], whose
//! [`SkillsCliError::kind`] `main` turns into the exit code (and whose message it writes
//! to stderr); argument parsing belongs to the CLI module, which calls these. Skills are
//! untrusted (a cloned repository's): everything written passes through [`SafeWriter`],
//! so a control character in a name, description, path, body or error reason is shown
//! (`^[`), never obeyed by the terminal.

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::json;

use crate::safe_text::{self, SafeWriter};
use crate::subcommand::Kind;

use super::name::shown_name;
use super::validate::{self, Severity};
use super::{Catalog, InvalidSkill, Skill, SkillError, SkillIndex};

/// Why a `skills` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum SkillsCliError {
    /// No skill, valid or not, has the name typed.
    #[error("no skill named `{name}`{}", available_text(available))]
    NotFound {
        /// What was typed.
        name: String,
        /// The names of the valid skills there are.
        available: Vec<String>,
    },
    /// Only invalid skills have that name (they are shown on stdout, with why).
    #[error("{}", invalid_text(name, reasons))]
    Invalid {
        /// What was typed.
        name: String,
        /// Why each skill of that name is invalid.
        reasons: Vec<String>,
    },
    /// The skill's body could not be read after its metadata was shown.
    #[error(transparent)]
    Body(SkillError),
    /// A path given to `validate` does not exist.
    #[error("cannot validate {}: no such file or directory", path.display())]
    NoSuchPath {
        /// The path as given.
        path: PathBuf,
    },
    /// `validate` found errors (they are on stdout).
    #[error("validation found errors ({failed} failed of {checked} skill(s) checked)")]
    Validation {
        /// Skills with at least one error.
        failed: usize,
        /// Skills checked.
        checked: usize,
    },
    /// Standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl SkillsCliError {
    /// The kind of failure, for the exit code.
    pub fn kind(&self) -> Kind {
        match self {
            SkillsCliError::NotFound { .. } | SkillsCliError::NoSuchPath { .. } => Kind::NotFound,
            SkillsCliError::Invalid { .. } | SkillsCliError::Validation { .. } => Kind::Failed,
            SkillsCliError::Body(_) | SkillsCliError::Output(_) => Kind::Internal,
        }
    }
}

fn available_text(names: &[String]) -> String {
    if names.is_empty() {
        " (no skills found)".to_string()
    } else {
        format!("; available: {}", names.join(", "))
    }
}

fn invalid_text(name: &str, reasons: &[String]) -> String {
    match reasons {
        [reason] => format!("skill `{name}` is invalid: {reason}"),
        _ => format!(
            "the {} skills named `{name}` are all invalid",
            reasons.len()
        ),
    }
}

/// How `skills list` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    /// A table for people.
    Table,
    /// One JSON document (`--json`).
    Json,
}

/// `skills list [--json]`: every skill (winners, shadowed, invalid) with name, root,
/// path and status, then how much of the index budget is used and the warnings.
pub fn list(
    catalog: &Catalog,
    budget: usize,
    format: ListFormat,
    out: &mut dyn Write,
) -> Result<(), SkillsCliError> {
    safely(out, |out| Ok(list_to(catalog, budget, format, out)?))
}

/// Runs `write` with `out` neutralized ([`crate::safe_text`]). What was written is
/// flushed also when `write` fails: the failure explains it.
fn safely(
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> Result<(), SkillsCliError>,
) -> Result<(), SkillsCliError> {
    let mut safe = SafeWriter::text(out);
    let result = write(&mut safe);
    safe.flush()?;
    result
}

fn list_to(
    catalog: &Catalog,
    budget: usize,
    format: ListFormat,
    out: &mut dyn Write,
) -> io::Result<()> {
    let index = catalog.index(budget);
    if format == ListFormat::Json {
        return list_json(catalog, &index, out);
    }
    let mut rows: Vec<[String; 5]> = Vec::new();
    for s in catalog.skills().iter().chain(catalog.shadowed()) {
        rows.push([
            s.name.clone(),
            s.kind.as_str().to_string(),
            s.root.kind.to_string(),
            status_words(s, &index).join("+"),
            s.path.display().to_string(),
        ]);
    }
    for bad in catalog.invalid() {
        rows.push([
            bad.name
                .as_deref()
                .map_or_else(|| "-".to_string(), |n| shown_name(n).into_owned()),
            invalid_kind(&bad.path).to_string(),
            bad.root.kind.to_string(),
            "invalid".to_string(),
            bad.path.display().to_string(),
        ]);
    }
    if rows.is_empty() {
        writeln!(out, "No skills found.")?;
    } else {
        let header = ["NAME", "KIND", "ROOT", "STATUS", "PATH"].map(String::from);
        rows.insert(0, header);
        for line in crate::text_table::plain_columns(&rows) {
            writeln!(out, "{line}")?;
        }
    }
    let pct = (index.used_chars * 100).checked_div(budget).unwrap_or(0);
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
    Ok(())
}

/// What a file that is not a skill was meant to be: a `SKILL.md` or a command file.
fn invalid_kind(path: &std::path::Path) -> &'static str {
    if path
        .file_name()
        .is_some_and(|n| n == super::discovery::SKILL_FILE)
    {
        "skill"
    } else {
        "command"
    }
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
                "kind": s.kind.as_str(),
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
                "name": b.name,
                "kind": invalid_kind(&b.path),
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
    writeln!(out, "{}", safe_text::escape_json(&text))
}

/// `skills show NAME`: metadata, then the body. [`SkillsCliError::NotFound`] when no
/// skill has that name; an invalid skill of that name (or, failing a valid one, in a
/// directory of that name) is shown with why it is invalid, then
/// [`SkillsCliError::Invalid`].
pub fn show(catalog: &Catalog, name: &str, out: &mut dyn Write) -> Result<(), SkillsCliError> {
    safely(out, |out| show_to(catalog, name, out))
}

fn show_to(catalog: &Catalog, name: &str, out: &mut dyn Write) -> Result<(), SkillsCliError> {
    let Some(skill) = catalog.get(name) else {
        let invalid = catalog.invalid_named(name);
        if !invalid.is_empty() {
            let mut reasons = Vec::new();
            for (i, bad) in invalid.into_iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                show_invalid(catalog, bad, out)?;
                reasons.push(bad.reason.to_string());
            }
            return Err(SkillsCliError::Invalid {
                name: name.to_string(),
                reasons,
            });
        }
        return Err(SkillsCliError::NotFound {
            name: name.to_string(),
            available: catalog.skills().iter().map(|s| s.name.clone()).collect(),
        });
    };
    let fm = &skill.frontmatter;
    writeln!(out, "name: {}", skill.name)?;
    writeln!(out, "description: {}", skill.one_line_description())?;
    writeln!(out, "kind: {}", skill.kind.as_str())?;
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
    let body = skill.load_body().map_err(SkillsCliError::Body)?;
    writeln!(out, "{body}")?;
    Ok(())
}

/// An invalid skill: what is known of it and why it cannot be used.
fn show_invalid(catalog: &Catalog, bad: &InvalidSkill, out: &mut dyn Write) -> io::Result<()> {
    match &bad.name {
        Some(n) => writeln!(out, "name: {}", shown_name(n))?,
        None => writeln!(out, "name: (none)")?,
    }
    writeln!(out, "path: {}", bad.path.display())?;
    writeln!(out, "root: {} ({})", bad.root.kind, bad.root.path.display())?;
    writeln!(out, "status: invalid")?;
    writeln!(out, "invalid: {}", bad.reason)?;
    for w in catalog
        .warnings()
        .iter()
        .filter(|w| w.path == bad.path && w.kind != bad.reason)
    {
        writeln!(out, "warning: {}", w.kind)?;
    }
    writeln!(
        out,
        "This skill is not in the index and cannot be invoked; fix it and check with \
         `harness9 skills validate {}`.",
        bad.path.display()
    )
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `skills validate [PATH...]`: one line per problem (`path: error: ...` or
/// `path: warning: ...`), then a summary. Directories are searched like a skills root;
/// files are checked as given. A path that does not exist is
/// [`SkillsCliError::NoSuchPath`] (nothing is checked); any skill with an error makes
/// it [`SkillsCliError::Validation`].
pub fn validate(paths: &[PathBuf], out: &mut dyn Write) -> Result<(), SkillsCliError> {
    let missing =
        |p: &&PathBuf| std::fs::metadata(p).is_err_and(|e| e.kind() == io::ErrorKind::NotFound);
    if let Some(path) = paths.iter().find(missing) {
        return Err(SkillsCliError::NoSuchPath { path: path.clone() });
    }
    safely(out, |out| validate_to(paths, out))
}

fn validate_to(paths: &[PathBuf], out: &mut dyn Write) -> Result<(), SkillsCliError> {
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
        return Ok(());
    }
    writeln!(
        out,
        "{checked} skill(s) checked: {} failed, {warnings} warning(s).",
        failed.len()
    )?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(SkillsCliError::Validation {
            failed: failed.len(),
            checked,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::assert_contains;
    use std::path::Path;

    use super::*;
    use crate::skills::DiscoveryOptions;

    use crate::test_support::write;

    /// What `f` wrote, and its failure's kind and message (None when it succeeded).
    fn run(
        f: impl FnOnce(&mut dyn Write) -> Result<(), SkillsCliError>,
    ) -> (Option<(Kind, String)>, String) {
        let mut out = Vec::new();
        let failure = f(&mut out).err().map(|e| (e.kind(), e.to_string()));
        (failure, String::from_utf8(out).unwrap())
    }

    fn shipped() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("skills")
    }

    fn catalog(tmp: &Path) -> Catalog {
        Catalog::discover(&DiscoveryOptions {
            flag_dirs: vec![tmp.join("flag")],
            workdir: Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf(),
            project_root: std::path::PathBuf::new(),
            harness9_home: tmp.join("h9"),
            user_home: None,
            remote_dirs: Vec::new(),
            plugins: Vec::new(),
        })
    }

    #[test]
    fn shipped_skills_pass_validation() {
        let (failure, out) = run(|o| validate(&[shipped()], o));
        assert_eq!(failure, None, "{out}");
        assert!(!out.contains("error:"), "{out}");
        // trigger, user-invocable, argument-hint... are harness9's own fields.
        assert!(!out.contains("warning:"), "{out}");
        assert_contains(&out, "4 skill(s) checked: 0 failed, 0 warning(s).");
    }

    #[test]
    fn fields_harness9_understands_are_not_warnings_unknown_ones_are() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("all-fields/SKILL.md");
        write(
            &f,
            "---\nname: all-fields\ndescription: d\ntrigger: a, b\nwhen_to_use: w\n\
             when-to-use: w\nallowed-tools: Read Grep\nuser-invocable: true\n\
             disable-model-invocation: false\nargument-hint: [file]\ncontext: fork\n\
             license: MIT\ncompatibility: any\nmetadata:\n  k: v\nversion: 2\nmodle: x\n---\nbody\n",
        );
        let (failure, out) = run(|o| validate(&[tmp.path().to_path_buf()], o));
        assert_eq!(failure, None, "{out}");
        let warned: Vec<&str> = out.lines().filter(|l| l.contains(": warning: ")).collect();
        assert_eq!(warned.len(), 2, "{out}");
        assert!(warned[0].contains("field `modle` is unknown"), "{out}");
        assert!(warned[1].contains("field `version` is unknown"), "{out}");
    }

    /// Skills `list` and `validate` must agree on: unusable names, a wrong-typed field,
    /// a built-in's name, a missing description.
    fn troubled_tree(root: &Path) {
        for (dir, front) in [
            ("spaces", "name: Bad Name With Spaces\ndescription: d"),
            ("dotdot", "name: ../x\ndescription: d"),
            ("newline", "name: \"new\\nline\"\ndescription: d"),
            (
                "maybe",
                "name: maybe\ndescription: d\nuser-invocable: maybe",
            ),
            ("help", "name: help\ndescription: d"),
            ("no-desc", "name: no-desc"),
            ("good", "name: good\ndescription: d\ntrigger: t"),
        ] {
            write(
                &root.join(dir).join("SKILL.md"),
                &format!("---\n{front}\n---\nbody of {dir}\n"),
            );
        }
    }

    fn flag_catalog(tmp: &Path) -> Catalog {
        Catalog::discover(&DiscoveryOptions {
            flag_dirs: vec![tmp.join("flag")],
            workdir: tmp.join("work"),
            project_root: std::path::PathBuf::new(),
            harness9_home: tmp.join("h9"),
            user_home: None,
            remote_dirs: Vec::new(),
            plugins: Vec::new(),
        })
    }

    #[test]
    fn list_and_validate_report_the_same_problems() {
        let tmp = tempfile::tempdir().unwrap();
        troubled_tree(&tmp.path().join("flag"));
        let c = flag_catalog(tmp.path());
        let names: Vec<&str> = c.skills().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["good", "help", "maybe"]);
        assert_eq!(c.invalid().len(), 4);
        let (failure, out) = run(|o| validate(&[tmp.path().join("flag")], o));
        assert_eq!(
            failure,
            Some((
                Kind::Failed,
                "validation found errors (4 failed of 7 skill(s) checked)".to_string()
            )),
            "{out}"
        );
        // Every problem discovery reports, validate reports in the same words:
        // invalid files as errors, the others as warnings.
        for w in c.warnings() {
            let severity = if c.invalid().iter().any(|b| b.path == w.path) {
                "error"
            } else {
                "warning"
            };
            let line = format!("{}: {severity}: {}", w.path.display(), w.kind);
            assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
        }
        assert_eq!(c.warnings().len(), 6, "{:?}", c.warnings());
        assert_contains(&out, "7 skill(s) checked: 4 failed");
        // One line per problem: the newline in a name is escaped.
        assert!(
            out.lines()
                .all(|l| l.starts_with(tmp.path().to_str().unwrap()) || l.contains("checked")),
            "{out}"
        );
        let (_, listed) = run(|o| list(&c, 8_000, ListFormat::Table, o));
        for name in [
            "\"Bad Name With Spaces\"",
            "../x",
            "\"new\\nline\"",
            "no-desc",
        ] {
            assert!(
                listed
                    .lines()
                    .any(|l| l.starts_with(name) && l.contains(" invalid ")),
                "{name} in\n{listed}"
            );
        }
        let (_, json) = run(|o| list(&c, 8_000, ListFormat::Json, o));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let invalid = v["invalid"].as_array().unwrap();
        assert!(
            invalid.iter().any(|b| b["name"] == "new\nline"
                && b["reason"].as_str().unwrap().contains("unprintable")),
            "{json}"
        );
    }

    #[test]
    fn show_explains_an_invalid_skill() {
        let tmp = tempfile::tempdir().unwrap();
        troubled_tree(&tmp.path().join("flag"));
        let c = flag_catalog(tmp.path());
        let (failure, out) = run(|o| show(&c, "Bad Name With Spaces", o));
        let (kind, message) = failure.unwrap();
        assert_eq!(kind, Kind::Failed, "{out}");
        assert!(
            message.starts_with("skill `Bad Name With Spaces` is invalid: `name`"),
            "{message}"
        );
        let path = tmp.path().join("flag/spaces/SKILL.md");
        assert!(
            out.starts_with(&format!(
                "name: \"Bad Name With Spaces\"\npath: {}\n",
                path.display()
            )),
            "{out}"
        );
        assert_contains(&out, "status: invalid\n");
        assert_contains(
            &out,
            "invalid: `name` \"Bad Name With Spaces\" holds whitespace",
        );
        assert_contains(&out, "e.g. `name: bad-name-with-spaces`");
        assert!(!out.contains("no skill named"), "{out}");
        // By its directory, and when the name is missing altogether.
        let (failure, out) = run(|o| show(&c, "no-desc", o));
        assert_eq!(failure.unwrap().0, Kind::Failed);
        assert_contains(&out, "invalid: frontmatter has no `description`");
        let (failure, out) = run(|o| show(&c, "newline", o));
        assert_eq!(failure.unwrap().0, Kind::Failed);
        assert_contains(&out, "U+000A");
    }

    #[test]
    fn validation_reports_each_problem_with_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("my-skill/SKILL.md");
        let long = "d".repeat(1_100);
        write(
            &f,
            &format!(
                "---\nname: My--Skill-\ndescription: {long}\ncompatibility: {}\nversion: 2\n---\nbody\n",
                "c".repeat(501)
            ),
        );
        let (failure, out) = run(|o| validate(&[tmp.path().to_path_buf()], o));
        assert_eq!(failure.unwrap().0, Kind::Failed, "{out}");
        let p = f.display().to_string();
        for needle in [
            "may hold only lowercase letters",
            "must not start or end with a hyphen",
            "consecutive hyphens",
            "differs from its directory \"my-skill\"",
            "`description` is 1100 characters; the limit is 1024",
            "`compatibility` is 501 characters; the limit is 500",
            "warning: field `version` is unknown",
        ] {
            assert!(
                out.lines().any(|l| l.starts_with(&p) && l.contains(needle)),
                "missing {needle:?} in\n{out}"
            );
        }
        // A path that is not there: nothing is checked, and it is not a finding.
        let nope = tmp.path().join("nope");
        let (failure, out) = run(|o| validate(&[tmp.path().to_path_buf(), nope.clone()], o));
        assert_eq!(
            failure,
            Some((
                Kind::NotFound,
                format!(
                    "cannot validate {}: no such file or directory",
                    nope.display()
                )
            ))
        );
        assert_eq!(out, "");
        write(
            &tmp.path().join("bad-yaml/SKILL.md"),
            "---\nname: bad-yaml\ndescription: a: b\n---\n",
        );
        let (failure, out) = run(|o| validate(&[tmp.path().join("bad-yaml/SKILL.md")], o));
        assert_eq!(failure.unwrap().0, Kind::Failed);
        assert_contains(&out, "not valid YAML");
    }

    #[test]
    fn list_shows_status_root_and_budget() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            &tmp.path().join("flag/code-review/SKILL.md"),
            "---\nname: code-review\ndescription: A local override\n---\nx\n",
        );
        write(
            &tmp.path().join("flag/broken/SKILL.md"),
            "---\ndescription: no name\n---\n",
        );
        let c = catalog(tmp.path());
        let (failure, out) = run(|o| list(&c, 8_000, ListFormat::Table, o));
        assert_eq!(failure, None);
        let row = |name: &str, status: &str| {
            out.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.first() == Some(&name)
                    && cols.get(1) == Some(&"skill")
                    && cols.get(3) == Some(&status)
            })
        };
        assert!(row("code-review", "ok"), "{out}");
        assert!(row("code-review", "shadowed"), "{out}");
        assert!(row("go-refactor", "ok"), "{out}");
        assert!(row("-", "invalid"), "{out}");
        assert_contains(&out, "of 8000 characters");
        assert_contains(&out, "no `name`");

        let (_, json) = run(|o| list(&c, 200, ListFormat::Json, o));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["index"]["budget_chars"], 200);
        let shortened = v["index"]["shortened"].as_array().unwrap();
        assert!(!shortened.is_empty());
        let first = &v["skills"][0];
        assert_eq!(first["root"], "flag");
        assert!(
            first["status"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s == "shortened"),
            "{json}"
        );
        assert_eq!(v["invalid"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn show_prints_metadata_and_body_or_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let c = catalog(tmp.path());
        let (failure, out) = run(|o| show(&c, "go-refactor", o));
        assert_eq!(failure, None);
        assert!(out.starts_with("name: go-refactor\ndescription: Use when refactoring Go code"));
        assert_contains(&out, "trigger: refactor, clean up");
        assert_contains(&out, "---\n# Go refactoring");
        // Not found: nothing on stdout, the names there are in the error.
        let (failure, out) = run(|o| show(&c, "nope", o));
        let (kind, message) = failure.unwrap();
        assert_eq!(kind, Kind::NotFound);
        assert!(
            message.starts_with("no skill named `nope`; available: ")
                && message.contains("go-refactor"),
            "{message}"
        );
        assert_eq!(out, "");
    }
}
