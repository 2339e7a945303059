//! `skills validate`: checks `SKILL.md` files. First as discovery does, through the same
//! [`assess`] (an invalid skill is an error with the reason `skills list` gives; a
//! wrong-typed field or a built-in's name is a warning, as there), then against the open
//! Agent Skills specification (name: 1–64 characters of lowercase letters, digits and
//! single hyphens, not starting or ending with a hyphen, equal to the directory name;
//! description: 1–1024 characters; compatibility: at most 500; strict YAML), then for
//! fields neither harness9 nor the specification knows (warnings), and the skill's
//! `tools.json` when it has one (see [`super::bundle`]). It reads whole files and knows
//! nothing of precedence or the index.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::assess::{Verdict, assess, builtin_collision};
use super::discovery::Walker;
use super::frontmatter;
use super::warning::WarningKind;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The skill does not meet the specification.
    Error,
    /// Worth fixing; the skill still passes.
    Warning,
}

/// One problem with one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file or directory.
    pub path: PathBuf,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{}: {sev}: {}", self.path.display(), self.message)
    }
}

/// The `SKILL.md` files to check for `paths` (files as given; directories holding a
/// `SKILL.md` are that skill, other directories are searched like a skills root), and
/// the problems met while looking (missing paths are errors).
pub fn targets(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Problem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        if p.is_file() {
            files.push(p.clone());
        } else if p.is_dir() {
            let mut found = Vec::new();
            let mut visit = |site: super::discovery::Site| found.push(site.path);
            let mut walker = Walker::new(&mut visit);
            walker.walk_root(p, 0);
            let warnings = std::mem::take(&mut walker.warnings);
            drop(walker);
            problems.extend(warnings.into_iter().map(|w| Problem {
                path: w.path.clone(),
                severity: Severity::Warning,
                message: w.kind.to_string(),
            }));
            files.extend(found);
        } else {
            problems.push(Problem {
                path: p.clone(),
                severity: Severity::Error,
                message: "no such file or directory".to_string(),
            });
        }
    }
    (files, problems)
}

/// Checks one `SKILL.md`: first what makes it unusable in harness9 and what harness9
/// warns about, decided by [`assess`] exactly as discovery decides it (so `skills list`
/// and this agree), then what the open specification asks beyond that (name format and
/// directory, lengths, strict YAML, string types), then fields neither harness9 nor the
/// specification knows, then its `tools.json`.
pub fn check_file(path: &Path) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut add = |severity: Severity, message: String| {
        problems.push(Problem {
            path: path.to_path_buf(),
            severity,
            message,
        })
    };
    let text = match crate::plain_file::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            add(Severity::Error, format!("cannot read: {e}"));
            return problems;
        }
    };
    let (yaml, _) = match frontmatter::split(&text) {
        Ok(parts) => parts,
        Err(e) => {
            add(
                Severity::Error,
                format!("{e}; start the file with a `---` frontmatter block"),
            );
            return problems;
        }
    };
    // Fields whose type the specification's check already reported as an error.
    let mut mistyped: Vec<&'static str> = Vec::new();
    match frontmatter::parse_yaml(&yaml) {
        Ok(map) => mistyped = check_types(&map, &mut add),
        Err(e) => add(
            Severity::Error,
            format!("frontmatter is not valid YAML ({e}); quote values that contain `: `"),
        ),
    }
    let (fm, notes) = frontmatter::parse(&yaml);
    let assessment = assess(&fm, notes);
    for warning in assessment.warnings {
        match &warning {
            // Invalid YAML is an error under the specification, reported above.
            WarningKind::YamlFallback { .. } => {}
            WarningKind::BadField { field, .. } if mistyped.contains(&field.as_str()) => {}
            _ => add(Severity::Warning, warning.to_string()),
        }
    }
    match &assessment.verdict {
        Verdict::Invalid { reason } => add(Severity::Error, reason.to_string()),
        Verdict::Usable { name, .. } => {
            let dir_name = path
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy());
            let written = fm.name.as_deref().unwrap_or(name);
            for m in name_problems(written, dir_name.as_deref()) {
                add(Severity::Error, m);
            }
            if let Some(collision) = builtin_collision(name) {
                add(Severity::Warning, collision.to_string());
            }
        }
    }
    let no_description = WarningKind::MissingField {
        field: "description",
    };
    let description_chars = fm
        .description
        .as_deref()
        .map_or(0, |d| d.trim().chars().count());
    if description_chars == 0
        && !matches!(&assessment.verdict, Verdict::Invalid { reason } if *reason == no_description)
    {
        // The verdict names one reason; a validator lists them all.
        add(Severity::Error, no_description.to_string());
    }
    if let Some(n) = Some(description_chars)
        && n > 1024
    {
        add(
            Severity::Error,
            format!("`description` is {n} characters; the limit is 1024"),
        );
    }
    if let Some(n) = fm.compatibility.as_deref().map(|c| c.chars().count())
        && n > 500
    {
        add(
            Severity::Error,
            format!("`compatibility` is {n} characters; the limit is 500"),
        );
    }
    for key in fm.extra.keys() {
        add(
            Severity::Warning,
            format!(
                "field `{key}` is unknown: harness9 keeps and ignores it, and it is not in \
                 the Agent Skills specification (check its spelling)"
            ),
        );
    }
    if let Some(dir) = path.parent()
        && let Err(e) = super::bundle::load(dir)
    {
        problems.extend(e.problems.into_iter().map(|message| Problem {
            path: e.path.clone(),
            severity: Severity::Error,
            message,
        }));
    }
    problems
}

/// The specification's type rules; returns the string fields found with another type.
fn check_types(
    map: &serde_json::Map<String, Value>,
    add: &mut dyn FnMut(Severity, String),
) -> Vec<&'static str> {
    let mut mistyped = Vec::new();
    for field in ["name", "description", "license", "compatibility"] {
        if let Some(v) = map.get(field)
            && !v.is_string()
        {
            add(Severity::Error, format!("`{field}` must be a string"));
            mistyped.push(field);
        }
    }
    if let Some(v) = map.get("metadata") {
        match v {
            Value::Object(m) if m.values().all(Value::is_string) => {}
            Value::Object(_) => add(
                Severity::Warning,
                "`metadata` values should be strings (the spec defines a string-to-string map)"
                    .to_string(),
            ),
            _ => add(Severity::Error, "`metadata` must be a map".to_string()),
        }
    }
    mistyped
}

/// What is wrong with a usable skill name under the specification (which is stricter
/// than harness9: it asks for a portable name): 1–64 lowercase letters, digits and
/// single hyphens, not at either end, equal to the directory name.
pub fn name_problems(name: &str, dir_name: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let n = name.chars().count();
    if n == 0 || n > 64 {
        out.push(format!("`name` is {n} characters; it must be 1 to 64"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        out.push(format!(
            "`name` \"{name}\" may hold only lowercase letters, digits and hyphens"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push(format!(
            "`name` \"{name}\" must not start or end with a hyphen"
        ));
    }
    if name.contains("--") {
        out.push(format!(
            "`name` \"{name}\" must not hold consecutive hyphens"
        ));
    }
    if let Some(dir) = dir_name
        && dir != name
    {
        out.push(format!(
            "`name` \"{name}\" differs from its directory \"{dir}\"; rename one to match"
        ));
    }
    out
}

/// Runs every check: (files checked, problems in path order).
pub fn validate(paths: &[PathBuf]) -> (usize, Vec<Problem>) {
    let (files, mut problems) = targets(paths);
    for f in &files {
        problems.extend(check_file(f));
    }
    (files.len(), problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_tools_json_is_an_error_naming_the_file() {
        let tmp = crate::test_support::temp_tree(&[(
            "calc/SKILL.md",
            "---\nname: calc\ndescription: Adds\n---\nbody\n",
        )]);
        let dir = tmp.path().join("calc");
        assert_eq!(validate(std::slice::from_ref(&dir)), (1, Vec::new()));
        std::fs::write(
            dir.join("tools.json"),
            r#"[{"name": "a b", "description": "d", "command": "../x.sh"}]"#,
        )
        .unwrap();
        let (_, problems) = validate(std::slice::from_ref(&dir));
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        let file = dir.join("tools.json").display().to_string();
        assert_eq!(
            shown,
            [
                format!(
                    "{file}: error: tool #1 (\"a b\"): name \"a b\" must be 1 to 64 letters, digits, `_` or `-`"
                ),
                format!(
                    "{file}: error: tool #1 (\"a b\"): command: `../x.sh` uses `..`; the path must stay inside the skill folder"
                ),
            ]
        );
    }
}
