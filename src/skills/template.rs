//! Template expansion in skill bodies, and the prompt a slash invocation sends.
//!
//! Placeholders: `$ARGUMENTS` / `${ARGUMENTS}` (all arguments as typed), `$ARGUMENTS[N]`
//! (the N-th argument, 0-based, split shell-style), `${SKILL_DIR}`, `${CLAUDE_SKILL_DIR}`
//! and `{baseDir}` (the skill's directory). One left-to-right pass: substituted text is
//! never scanned again. Only names spelled out are placeholders: a bare `$0`..`$9` is
//! never substituted (Claude Code reads it as `$ARGUMENTS[N]`, but bodies are full of
//! `awk '{print $1}'`, `sed 's/(a)/$1/'` and `$5.00`), and `$ARGUMENTS[N]` without an N-th
//! argument stays as written. A backslash before a placeholder (`\$ARGUMENTS`) keeps the
//! placeholder literally and drops the backslash; other backslashes are kept.
//! This module knows nothing of discovery or the model.

use std::path::Path;

use super::{Skill, SkillError, SkillKind};

/// Which placeholders a body has: a skill's, or a command's (with `$1`..`$9`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// A `SKILL.md`: a bare `$N` is never a placeholder.
    Skill,
    /// A Claude Code command: `$1`..`$9` are its positional arguments.
    Command,
}

impl Placeholders {
    /// The placeholders of `skill`'s kind.
    pub fn of(skill: &Skill) -> Placeholders {
        match skill.kind {
            SkillKind::Folder => Placeholders::Skill,
            SkillKind::Command(_) => Placeholders::Command,
        }
    }
}

/// Expands the placeholders of `body` with `args` (the text typed after the command)
/// and `skill_dir`.
pub fn expand(body: &str, args: &str, skill_dir: &Path) -> String {
    expand_report(body, args, skill_dir, Placeholders::Skill).0
}

/// [`expand`] with the placeholders of `kind`.
pub fn expand_as(body: &str, args: &str, skill_dir: &Path, kind: Placeholders) -> String {
    expand_report(body, args, skill_dir, kind).0
}

/// The prompt a `/name args` invocation sends: the body with placeholders substituted
/// when it uses the arguments, else the body + `"\n\n"` + args (just the body when there
/// are no args). Reads the body now.
pub fn invocation_prompt(skill: &Skill, args: &str) -> Result<String, SkillError> {
    let body = skill.load_body()?;
    Ok(prompt_as(&body, args, &skill.dir, Placeholders::of(skill)))
}

/// [`invocation_prompt`] for a body already read.
pub fn prompt_from_body(body: &str, args: &str, skill_dir: &Path) -> String {
    prompt_as(body, args, skill_dir, Placeholders::Skill)
}

/// [`prompt_from_body`] with the placeholders of `kind`.
pub fn prompt_as(body: &str, args: &str, skill_dir: &Path, kind: Placeholders) -> String {
    let args = args.trim();
    let (text, used_args) = expand_report(body, args, skill_dir, kind);
    if args.is_empty() || used_args {
        text
    } else {
        format!("{text}\n\n{args}")
    }
}

/// One recognised placeholder.
enum Placeholder {
    AllArgs,
    Arg(usize),
    /// An index too large to be an argument: never substituted.
    HugeIndex,
    Dir,
}

/// Expands and tells whether any argument placeholder was substituted.
fn expand_report(body: &str, args: &str, skill_dir: &Path, kind: Placeholders) -> (String, bool) {
    let args = args.trim();
    let argv = shell_split(args);
    let dir = skill_dir.display().to_string();
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used_args = false;
    let mut rest = body;
    while let Some(i) = rest.find(['$', '\\', '{']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix('\\') {
            match placeholder(after, kind) {
                Some((_, len)) => {
                    out.push_str(&after[..len]);
                    rest = &after[len..];
                }
                None => {
                    out.push('\\');
                    rest = after;
                }
            }
            continue;
        }
        if let Some(after) = tail.strip_prefix("{baseDir}") {
            out.push_str(&dir);
            rest = after;
            continue;
        }
        let Some((p, len)) = placeholder(tail, kind) else {
            // A `{` or `$` that starts nothing: keep it.
            out.push_str(&tail[..1]);
            rest = &tail[1..];
            continue;
        };
        let replacement = match p {
            Placeholder::AllArgs => Some(args),
            Placeholder::Arg(n) => argv.get(n).map(String::as_str),
            Placeholder::HugeIndex => None,
            Placeholder::Dir => Some(dir.as_str()),
        };
        match replacement {
            Some(r) => {
                used_args |= !matches!(p, Placeholder::Dir);
                out.push_str(r);
            }
            None => out.push_str(&tail[..len]),
        }
        rest = &tail[len..];
    }
    out.push_str(rest);
    (out, used_args)
}

/// The placeholder at the start of `s` (which starts with `$`) and its length in bytes.
fn placeholder(s: &str, kind: Placeholders) -> Option<(Placeholder, usize)> {
    let after = s.strip_prefix('$')?;
    if kind == Placeholders::Command
        && let [digit @ b'1'..=b'9', rest @ ..] = after.as_bytes()
        && !rest.first().is_some_and(u8::is_ascii_digit)
    {
        return Some((Placeholder::Arg(usize::from(digit - b'1')), 2));
    }
    for (text, p) in [
        ("{ARGUMENTS}", Placeholder::AllArgs),
        ("{SKILL_DIR}", Placeholder::Dir),
        ("{CLAUDE_SKILL_DIR}", Placeholder::Dir),
    ] {
        if after.starts_with(text) {
            return Some((p, 1 + text.len()));
        }
    }
    // Only `ARGUMENTS` follows: a bare `$N` is not a placeholder (see the module docs).
    let a = after.strip_prefix("ARGUMENTS")?;
    if let Some(inner) = a.strip_prefix('[') {
        let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && inner[digits..].starts_with(']') {
            let len = 1 + "ARGUMENTS[".len() + digits + 1;
            return Some((index(&inner[..digits]), len));
        }
    }
    let ident = a
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    (!ident).then_some((Placeholder::AllArgs, 1 + "ARGUMENTS".len()))
}

fn index(digits: &str) -> Placeholder {
    digits
        .parse()
        .map_or(Placeholder::HugeIndex, Placeholder::Arg)
}

/// Splits arguments like a POSIX shell would, without expansions: whitespace separates,
/// `'...'` is literal, `"..."` allows `\"`, `\\`, `\$` and `` \` ``, a backslash outside
/// quotes escapes the next character. An unclosed quote runs to the end.
pub fn shell_split(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = args.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(body: &str, args: &str) -> String {
        expand(body, args, Path::new("/s/dir"))
    }

    #[test]
    fn all_arguments() {
        assert_eq!(
            x("Fix $ARGUMENTS now", "main.go tests"),
            "Fix main.go tests now"
        );
        assert_eq!(x("Fix ${ARGUMENTS}.", "a b"), "Fix a b.");
        assert_eq!(x("Fix $ARGUMENTS", ""), "Fix ");
        assert_eq!(x("$ARGUMENTSX stays", "a"), "$ARGUMENTSX stays");
    }

    #[test]
    fn indexed_arguments_are_zero_based_and_shell_quoted() {
        let args = r#"main.go "two words" 'it''s' x\ y"#;
        assert_eq!(
            x(
                "$ARGUMENTS[0]|$ARGUMENTS[1]|$ARGUMENTS[2]|$ARGUMENTS[3]",
                args
            ),
            "main.go|two words|its|x y"
        );
        assert_eq!(
            x("$ARGUMENTS[1] and $ARGUMENTS[0]", args),
            "two words and main.go"
        );
    }

    #[test]
    fn bare_dollar_digits_are_never_substituted() {
        // However many arguments there are, `$0`..`$9` belong to shell, awk, sed...
        for args in ["", "a", "a b", "a b c d e f g h i j k"] {
            assert_eq!(x("awk '{print $1}'", args), "awk '{print $1}'", "{args}");
            assert_eq!(x("$0 $1 $2 $9 $10", args), "$0 $1 $2 $9 $10", "{args}");
            assert_eq!(x("sed -E 's/(a+)/<$1>/'", args), "sed -E 's/(a+)/<$1>/'");
        }
        // An escaped one is not a placeholder either: the backslash stays for the shell.
        assert_eq!(x(r#"echo "\$1""#, "a b"), r#"echo "\$1""#);
    }

    #[test]
    fn the_greet_example_keeps_its_awk_snippet() {
        let d = Path::new("/s");
        let body =
            "Greet $ARGUMENTS[0] ($ARGUMENTS[1]).\n\nList the names: `awk '{print $1}' names.txt`";
        assert_eq!(
            prompt_from_body(body, r#"Alice "Dr Who" extra"#, d),
            "Greet Alice (Dr Who).\n\nList the names: `awk '{print $1}' names.txt`"
        );
        // A body that uses no argument placeholder gets the arguments appended, and its
        // snippet untouched.
        assert_eq!(
            prompt_from_body(
                "Run `awk '{print $1}' names.txt`",
                r#"Alice "Dr Who" extra"#,
                d
            ),
            "Run `awk '{print $1}' names.txt`\n\nAlice \"Dr Who\" extra"
        );
    }

    #[test]
    fn missing_arguments_stay_untouched() {
        assert_eq!(x("costs $5.00", ""), "costs $5.00");
        assert_eq!(x("awk '{print $1}'", ""), "awk '{print $1}'");
        assert_eq!(
            x("awk '{print $1}' $ARGUMENTS[3]", "a"),
            "awk '{print $1}' $ARGUMENTS[3]"
        );
        assert_eq!(
            x("$ARGUMENTS[99999999999999999999999] $", "a"),
            "$ARGUMENTS[99999999999999999999999] $"
        );
        assert_eq!(x("price: $ alone, $$, $x", "a"), "price: $ alone, $$, $x");
    }

    #[test]
    fn one_pass_only() {
        assert_eq!(
            x(
                "A=$ARGUMENTS[0] B=$ARGUMENTS[1]",
                "$ARGUMENTS[1] ${SKILL_DIR}"
            ),
            "A=$ARGUMENTS[1] B=${SKILL_DIR}"
        );
        assert_eq!(x("$ARGUMENTS", "$ARGUMENTS"), "$ARGUMENTS");
    }

    #[test]
    fn backslash_escapes_a_placeholder_only() {
        assert_eq!(x(r"\$ARGUMENTS is $ARGUMENTS", "a"), "$ARGUMENTS is a");
        assert_eq!(
            x(r"\$ARGUMENTS[1] \${SKILL_DIR}", "a b"),
            "$ARGUMENTS[1] ${SKILL_DIR}"
        );
        assert_eq!(x(r"echo \$HOME \n C:\dir", "a"), r"echo \$HOME \n C:\dir");
        assert_eq!(x(r"\\", ""), r"\\");
    }

    #[test]
    fn skill_dir_forms() {
        assert_eq!(
            x(
                "${SKILL_DIR}/a ${CLAUDE_SKILL_DIR}/b {baseDir}/c {other}",
                ""
            ),
            "/s/dir/a /s/dir/b /s/dir/c {other}"
        );
    }

    #[test]
    fn unicode_is_preserved() {
        assert_eq!(x("清理 $ARGUMENTS[0] — ok", "main.go"), "清理 main.go — ok");
    }

    #[test]
    fn prompt_appends_args_unless_the_body_uses_them() {
        let d = Path::new("/s");
        assert_eq!(
            prompt_from_body("Body", "clean main.go", d),
            "Body\n\nclean main.go"
        );
        assert_eq!(prompt_from_body("Body", "  ", d), "Body");
        assert_eq!(prompt_from_body("Do $ARGUMENTS", "x", d), "Do x");
        assert_eq!(
            prompt_from_body("awk '{print $1}'", "x", d),
            "awk '{print $1}'\n\nx"
        );
        assert_eq!(prompt_from_body("at ${SKILL_DIR}", "x", d), "at /s\n\nx");
    }

    #[test]
    fn commands_have_positional_arguments_one_based() {
        let c =
            |body: &str, args: &str| prompt_as(body, args, Path::new("/c"), Placeholders::Command);
        assert_eq!(
            c("PR #$1 at $2 for $3 ($ARGUMENTS)", r#"456 high "Ada L""#),
            r#"PR #456 at high for Ada L (456 high "Ada L")"#
        );
        // $0, $10 and a missing argument stay as written; $ARGUMENTS[N] still works.
        assert_eq!(c("$0 $10 $2 $ARGUMENTS[0]", "a"), "$0 $10 $2 a");
        assert_eq!(c("awk '{print $1}'", ""), "awk '{print $1}'");
        assert_eq!(c(r"\$1 is $1", "x"), "$1 is x");
        // One pass: an argument holding a placeholder is text.
        assert_eq!(c("$1|$2", "$2 ${SKILL_DIR}"), "$2|${SKILL_DIR}");
        // A body without a placeholder gets the arguments appended.
        assert_eq!(c("Do it", "a b"), "Do it\n\na b");
        // A skill's body keeps `$1` whatever the arguments.
        assert_eq!(
            prompt_as("$1", "a", Path::new("/c"), Placeholders::Skill),
            "$1\n\na"
        );
    }

    #[test]
    fn shell_split_cases() {
        assert_eq!(shell_split(""), Vec::<String>::new());
        assert_eq!(
            shell_split(r#"a "b \"c\"" '' d"#),
            vec!["a", r#"b "c""#, "", "d"]
        );
        assert_eq!(shell_split("'unclosed rest"), vec!["unclosed rest"]);
    }
}
