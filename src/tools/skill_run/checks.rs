//! Checks on a `skill_run` call before anything runs: the working folder stays inside
//! the skill, extra variables cannot override ours or inject code, a restricted command
//! is one plain command (split like a shell would, without running one) whose name the
//! allow and deny lists accept, and `output_files` globs stay relative to `WORK_DIR`.
//! Pure functions over strings and paths; nothing here spawns or knows the tool trait.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::CommandLists;
use super::files::{
    Collect, Content, OUTPUTS_MAX_FILE_BYTES, OUTPUTS_MAX_FILES, OUTPUTS_MAX_TOTAL_BYTES, SaveAs,
};

/// `output_files` patterns per call at most.
const MAX_PATTERNS: usize = 20;
/// Variables skill_run sets itself.
const RESERVED_ENV: [&str; 8] = [
    "SKILL_DIR",
    "SKILL_NAME",
    "WORKSPACE_DIR",
    "SKILLS_DIR",
    "WORK_DIR",
    "OUTPUT_DIR",
    "RUN_DIR",
    "TMPDIR",
];
/// Variables that change which code runs (search paths, preloads, startup hooks).
const INJECTION_ENV: [&str; 22] = [
    "PATH",
    "IFS",
    "ENV",
    "BASH_ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "CDPATH",
    "PS4",
    "PROMPT_COMMAND",
    "GCONV_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PERL5LIB",
    "PERLLIB",
    "PERL5OPT",
    "RUBYLIB",
    "RUBYOPT",
    "NODE_PATH",
    "NODE_OPTIONS",
    "CLASSPATH",
    "JAVA_TOOL_OPTIONS",
];
/// Prefixes of variables refused for the same reason.
const INJECTION_PREFIXES: [&str; 3] = ["LD_", "DYLD_", "BASH_FUNC_"];

/// The working directory: `cwd` below the (canonical) skill folder, canonicalised, and
/// still inside it (so neither `..` nor a symlink can lead out).
pub(super) fn resolve_cwd(skill_dir: &Path, cwd: Option<&str>) -> Result<PathBuf, String> {
    let Some(cwd) = cwd.map(str::trim).filter(|c| !c.is_empty() && *c != ".") else {
        return Ok(skill_dir.to_path_buf());
    };
    let relative = Path::new(cwd);
    if relative.is_absolute() {
        return Err(format!(
            "cwd {cwd:?} must be relative to the skill's folder, not absolute"
        ));
    }
    let joined = skill_dir.join(relative);
    let resolved = std::fs::canonicalize(&joined)
        .map_err(|e| format!("cwd {cwd:?} does not exist in the skill's folder: {e}"))?;
    if !resolved.starts_with(skill_dir) {
        return Err(format!(
            "cwd {cwd:?} leads outside the skill's folder ({}); use a folder inside it",
            skill_dir.display()
        ));
    }
    if !resolved.is_dir() {
        return Err(format!("cwd {cwd:?} is not a folder"));
    }
    Ok(resolved)
}

/// Extra variables: string values, valid names, none that skill_run sets itself or that
/// would change which code runs.
pub(super) fn check_env(
    env: serde_json::Map<String, Value>,
) -> Result<Vec<(String, String)>, String> {
    let mut checked = Vec::with_capacity(env.len());
    for (name, value) in env {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "env: {name:?} is not a valid variable name (letters, digits, _)"
            ));
        }
        if RESERVED_ENV.contains(&name.as_str()) {
            return Err(format!(
                "env: {name} is set by skill_run itself and cannot be overridden"
            ));
        }
        if INJECTION_ENV.contains(&name.as_str())
            || INJECTION_PREFIXES.iter().any(|p| name.starts_with(p))
        {
            return Err(format!(
                "env: {name} is refused: it changes which programs or libraries run"
            ));
        }
        let Value::String(value) = value else {
            return Err(format!("env: the value of {name} must be a string"));
        };
        if value.contains('\0') {
            return Err(format!("env: the value of {name} contains a NUL byte"));
        }
        checked.push((name, value));
    }
    Ok(checked)
}

/// Splits one plain command into words with shell-like quoting ('...', "...", \x), and
/// refuses anything a shell would treat as syntax: separators, pipes, redirections,
/// substitutions, globs, variable assignments, comments, newlines.
pub(super) fn split_plain(command: &str) -> Result<Vec<String>, String> {
    let syntax = |what: &str| Err(format!("`{what}` is shell syntax"));
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\n' | '\r' => return Err("a newline is shell syntax (one command only)".into()),
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated \" quote".into()),
                        },
                        Some('$') => return syntax("$"),
                        Some('`') => return syntax("`"),
                        Some(c) => word.push(c),
                        None => return Err("unterminated \" quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n' | '\r') | None => return syntax("\\"),
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
            },
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '`' | '$' | '*' | '?' | '[' | '{' | '}' => {
                let mut what = c.to_string();
                if let Some(&next) = chars.peek()
                    && matches!((c, next), ('&', '&') | ('|', '|') | ('$', '(') | ('>', '>'))
                {
                    what.push(next);
                }
                return syntax(&what);
            }
            '~' | '#' if !in_word => return syntax(&c.to_string()),
            '=' if words.is_empty() => {
                return Err(
                    "a variable assignment before the command is shell syntax (pass variables \
                     in env)"
                        .into(),
                );
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.first().is_none_or(String::is_empty) {
        return Err("no command name".into());
    }
    Ok(words)
}

/// The command name as the lists see it: the basename of the first word.
fn command_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Deny wins; with an allow list the name must be on it.
pub(super) fn check_lists(lists: &CommandLists, words: &[String]) -> Result<(), String> {
    let name = words.first().map(|w| command_name(w)).unwrap_or("");
    let listed = |list: &[String]| list.iter().any(|entry| command_name(entry) == name);
    if lists.denied.as_deref().is_some_and(listed) {
        return Err(format!("Refused: `{name}` is on skill_run's deny list."));
    }
    if let Some(allowed) = &lists.allowed
        && !listed(allowed)
    {
        let allowed = if allowed.is_empty() {
            "(none)".to_string()
        } else {
            allowed.join(", ")
        };
        return Err(format!(
            "Refused: `{name}` is not on skill_run's allow list. Allowed commands: {allowed}."
        ));
    }
    Ok(())
}

/// A pattern as written by a skill's docs, made relative to the workspace root:
/// `$OUTPUT_DIR/…` (or `${OUTPUT_DIR}/…`) is `out/…`, `$WORK_DIR/…` is `work/…`, and the
/// older `output/…` (when `OUTPUT_DIR` was `$WORK_DIR/output`) is `out/…` too.
pub(super) fn normalize_glob(pattern: &str) -> String {
    let pattern = pattern.trim();
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    for (prefixes, to) in [
        (["$OUTPUT_DIR/", "${OUTPUT_DIR}/", "output/"], "out/"),
        (["$WORK_DIR/", "${WORK_DIR}/", "work/"], "work/"),
    ] {
        for prefix in prefixes {
            if let Some(rest) = pattern.strip_prefix(prefix) {
                return format!("{to}{rest}");
            }
        }
    }
    pattern.to_string()
}

/// The `output_files` patterns as one set, matched against `/`-separated paths relative
/// to the workspace root (see [`normalize_glob`]; `*` stays within a folder, `**`
/// crosses folders).
pub(super) fn output_globs(patterns: &[String]) -> Result<GlobSet, String> {
    if patterns.len() > MAX_PATTERNS {
        return Err(format!(
            "output_files: at most {MAX_PATTERNS} patterns, got {}",
            patterns.len()
        ));
    }
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let path = Path::new(pattern);
        if pattern.trim().is_empty()
            || path.is_absolute()
            || path.components().any(|c| c == Component::ParentDir)
        {
            return Err(format!(
                "output_files: {pattern:?} must be a glob relative to the workspace, without \
                 `..` (e.g. \"out/*.png\" or \"$OUTPUT_DIR/*.png\")"
            ));
        }
        let pattern = normalize_glob(pattern);
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("output_files: {e}"))?;
        set.add(glob);
    }
    set.build().map_err(|e| format!("output_files: {e}"))
}

/// The `outputs` manifest as the model writes it.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputsSpec {
    globs: Vec<String>,
    inline: Option<bool>,
    save: Option<bool>,
    name_template: Option<String>,
    max_files: Option<usize>,
    max_file_bytes: Option<u64>,
    max_total_bytes: Option<u64>,
}

/// The older fields that go with `output_files`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LegacyOutputs<'a> {
    pub(super) save_as_artifacts: Option<bool>,
    pub(super) omit_inline_content: Option<bool>,
    pub(super) artifact_prefix: Option<&'a str>,
}

/// What `output_files` or `outputs` (never both) ask to collect; `None` for neither.
/// Saving needs a saved session (`can_save`).
pub(super) fn collect(
    output_files: Option<&[String]>,
    outputs: Option<&OutputsSpec>,
    legacy: LegacyOutputs<'_>,
    can_save: bool,
) -> Result<Option<Collect>, String> {
    let save =
        |wanted: bool, prefix: Option<&str>, field: &str| -> Result<Option<SaveAs>, String> {
            let prefix = prefix.unwrap_or("").trim();
            if !wanted {
                return match prefix.is_empty() {
                    true => Ok(None),
                    false => Err(format!("{field} names saved artifacts: set saving on too")),
                };
            }
            if !can_save {
                return Err(
                    "saving artifacts needs a saved session, and this one is not saved \
                        (--no-session or sessions = false); return the files inline instead"
                        .to_string(),
                );
            }
            if prefix.starts_with('/') || prefix.split('/').any(|p| p == "..") {
                return Err(format!("{field} {prefix:?} must be a relative name prefix"));
            }
            Ok(Some(SaveAs {
                prefix: prefix.to_string(),
            }))
        };
    match (output_files, outputs) {
        (Some(_), Some(_)) => Err("give output_files or outputs, not both".to_string()),
        (None, None) => {
            if legacy.save_as_artifacts == Some(true) {
                return Err("save_as_artifacts saves the output_files: give some".to_string());
            }
            Ok(None)
        }
        (Some(patterns), None) => {
            let content = if legacy.omit_inline_content == Some(true) {
                Content::NamesOnly
            } else {
                Content::InlineOrOmit
            };
            let mut collect = Collect::output_files(output_globs(patterns)?, content);
            collect.save = save(
                legacy.save_as_artifacts == Some(true),
                legacy.artifact_prefix,
                "artifact_prefix",
            )?;
            Ok(Some(collect))
        }
        (None, Some(spec)) => {
            let globs = output_globs(&spec.globs)
                .map_err(|e| e.replace("output_files", "outputs.globs"))?;
            let limit = |value: Option<u64>, max: u64, what: &str| match value {
                Some(0) => Err(format!("outputs.{what} must be at least 1")),
                Some(v) if v > max => Err(format!("outputs.{what} is at most {max}")),
                Some(v) => Ok(v),
                None => Ok(max),
            };
            let max_files = limit(
                spec.max_files.map(|v| v as u64),
                OUTPUTS_MAX_FILES as u64,
                "max_files",
            )?;
            Ok(Some(Collect {
                globs,
                max_files: usize::try_from(max_files).unwrap_or(OUTPUTS_MAX_FILES),
                max_file_bytes: limit(
                    spec.max_file_bytes,
                    OUTPUTS_MAX_FILE_BYTES,
                    "max_file_bytes",
                )?,
                max_total_bytes: limit(
                    spec.max_total_bytes,
                    OUTPUTS_MAX_TOTAL_BYTES,
                    "max_total_bytes",
                )?,
                content: if spec.inline == Some(false) {
                    Content::NamesOnly
                } else {
                    Content::InlineOrListed
                },
                save: save(
                    spec.save == Some(true),
                    spec.name_template.as_deref(),
                    "outputs.name_template",
                )?,
            }))
        }
    }
}

/// `value` quoted for display in a shell-like command line.
pub(super) fn shell_quote(value: &str) -> String {
    crate::permissions::shell::quote_unless_plain(value, |c| {
        c.is_ascii_alphanumeric() || "-_./:,=+@%".contains(c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<String> {
        split_plain(command).unwrap()
    }

    #[test]
    fn plain_commands_split_like_a_shell() {
        assert_eq!(
            words("python3  scripts/run.py\t--x=1"),
            ["python3", "scripts/run.py", "--x=1"]
        );
        assert_eq!(
            words(r#"echo "a b" 'c "d"' e\ f "" g"#),
            ["echo", "a b", "c \"d\"", "e f", "", "g"]
        );
        assert_eq!(words(r#"echo "q\"x\\y\n""#), ["echo", "q\"x\\y\\n"]);
        assert_eq!(words("echo a#b c~ 'x|y;z'"), ["echo", "a#b", "c~", "x|y;z"]);
    }

    #[test]
    fn shell_syntax_is_refused() {
        for (command, expected) in [
            ("a; b", "`;`"),
            ("a & b", "`&`"),
            ("a || b", "`||`"),
            ("a >> f", "`>>`"),
            ("(a)", "`(`"),
            ("a {x,y}", "`{`"),
            ("a ~/x", "`~`"),
            ("a # note", "`#`"),
            ("a [ab]", "`[`"),
            ("a ?", "`?`"),
            ("a \"`id`\"", "```"),
            ("a \\\nb", "`\\`"),
            ("a\rb", "newline"),
            ("A=1 b", "assignment"),
            ("'' x", "no command name"),
            ("\"open", "unterminated"),
        ] {
            let problem = split_plain(command).unwrap_err();
            assert!(problem.contains(expected), "{command:?}: {problem}");
        }
    }

    #[test]
    fn lists_compare_basenames_and_deny_wins() {
        let lists = CommandLists {
            allowed: Some(vec!["/usr/bin/python3".into(), "make".into()]),
            denied: Some(vec!["make".into()]),
        };
        let check = |w: &str| check_lists(&lists, &[w.to_string()]);
        assert!(check("python3").is_ok());
        assert!(check("/opt/py/bin/python3").is_ok());
        assert!(check("make").unwrap_err().contains("deny list"));
        assert!(check("node").unwrap_err().contains("allow list"));
        let empty = CommandLists {
            allowed: Some(vec![]),
            denied: None,
        };
        assert!(
            check_lists(&empty, &["echo".into()])
                .unwrap_err()
                .contains("Allowed commands: (none)")
        );
    }

    #[test]
    fn variables_are_checked() {
        let env = |v: serde_json::Value| check_env(v.as_object().unwrap().clone());
        assert_eq!(
            env(serde_json::json!({"MODE": "x", "_n2": ""})).unwrap(),
            [
                ("MODE".to_string(), "x".to_string()),
                ("_n2".to_string(), String::new())
            ]
        );
        for (bad, expected) in [
            ("OUTPUT_DIR", "set by skill_run"),
            ("DYLD_INSERT_LIBRARIES", "refused"),
            ("BASH_FUNC_ls%%", "not a valid"),
            ("PYTHONPATH", "refused"),
            ("1X", "not a valid"),
            ("A-B", "not a valid"),
        ] {
            let problem = env(serde_json::json!({ bad: "v" })).unwrap_err();
            assert!(problem.contains(expected), "{bad}: {problem}");
        }
        assert!(
            env(serde_json::json!({"A": "a\u{0}b"}))
                .unwrap_err()
                .contains("NUL")
        );
    }

    #[test]
    fn globs_are_relative_and_star_stays_in_its_folder() {
        let set = output_globs(&["output/*".into(), "./report.md".into()]).unwrap();
        assert!(set.is_match("out/a.png"), "the older output/ is out/");
        assert!(!set.is_match("out/deep/a.png"));
        assert!(set.is_match("report.md"));
        for (written, normal) in [
            ("$OUTPUT_DIR/**", "out/**"),
            ("${OUTPUT_DIR}/a.txt", "out/a.txt"),
            ("$WORK_DIR/x/*", "work/x/*"),
            ("./out/*.csv", "out/*.csv"),
            ("runs/**", "runs/**"),
        ] {
            assert_eq!(normalize_glob(written), normal);
        }
        assert!(output_globs(&["/etc/*".into()]).is_err());
        assert!(output_globs(&["a/../../x".into()]).is_err());
        assert!(output_globs(&["a[".into()]).is_err());
        assert!(output_globs(&vec!["x".to_string(); MAX_PATTERNS + 1]).is_err());
    }

    #[test]
    fn quoting_for_display() {
        assert_eq!(shell_quote("plain-1.txt"), "plain-1.txt");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
