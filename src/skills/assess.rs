//! The one decision whether a `SKILL.md`'s parsed frontmatter makes a usable skill, and
//! if not, why: `name` and `description` present, a name that can be invoked — typed
//! as one word after `/`, passed to `use_skill`, written on one line of the index — and
//! a description without control characters other than line breaks and tabs (one
//! written as a YAML escape, `"\e]0;…"`, would reach every listing and the model's
//! index; CRLF line ends are made LF before YAML reads the file, so they stay valid). The
//! catalog (hence the index, the slash-command popup, completion, `/help` and
//! `skills list`), `skills show` and `skills validate` all ask [`assess`], so they never
//! disagree about which skills work. This module also names the two problems every
//! caller reports the same way: wrong-typed fields (from the parser's notes) and a name
//! shared with a built-in command ([`builtin_collision`]).
//!
//! It knows nothing of files, roots or precedence, nor of the open specification's
//! stricter naming rules: `My-Skill` works in harness9 and is loaded; only
//! `skills validate`, which checks portability, reports it.

use super::frontmatter::{Frontmatter, ParseNote};
use super::name::name_problem;
use super::warning::WarningKind;

/// Whether a frontmatter makes a usable skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A skill: its name (trimmed) and description, as the catalog keeps them.
    Usable {
        /// The `name` field, surrounding whitespace removed.
        name: String,
        /// The `description` field, exactly as YAML reads it.
        description: String,
    },
    /// Not a skill: never in the index, the popup, completion or `/help`.
    Invalid {
        /// Why (what `skills list`, `show` and `validate` say).
        reason: WarningKind,
    },
}

/// The verdict on one frontmatter and the problems that leave a skill usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// Usable or invalid.
    pub verdict: Verdict,
    /// Problems found on the way, in the file's order: YAML read line by line, fields
    /// of the wrong type (ignored). Reported whatever the verdict.
    pub warnings: Vec<WarningKind>,
}

/// Decides whether `frontmatter` makes a usable skill. `notes` are the parser's notes on
/// it ([`super::frontmatter::parse`]), which become warnings.
pub fn assess(frontmatter: &Frontmatter, notes: Vec<ParseNote>) -> Assessment {
    assess_fields(
        frontmatter.name.as_deref(),
        frontmatter.description.as_deref(),
        notes,
    )
}

/// [`assess`] from the only fields it reads: the verdict depends on nothing else, so the
/// catalog can decide from a stored frontmatter without decoding the rest of it.
pub fn assess_fields(
    name: Option<&str>,
    description: Option<&str>,
    notes: Vec<ParseNote>,
) -> Assessment {
    let warnings: Vec<WarningKind> = notes
        .into_iter()
        .map(|note| match note {
            ParseNote::Fallback { error, field } => WarningKind::YamlFallback { error, field },
            ParseNote::BadField { field, expected } => WarningKind::BadField { field, expected },
        })
        .collect();
    let name = name.map(str::trim).filter(|s| !s.is_empty());
    let description = description.filter(|s| !s.trim().is_empty());
    let problem = name.and_then(name_problem);
    let verdict = match (name, problem, description) {
        (None, _, _) => Verdict::Invalid {
            reason: WarningKind::MissingField { field: "name" },
        },
        (Some(name), Some(problem), _) => Verdict::Invalid {
            reason: WarningKind::InvalidName {
                name: name.to_string(),
                problem,
            },
        },
        (_, _, None) => Verdict::Invalid {
            reason: WarningKind::MissingField {
                field: "description",
            },
        },
        (Some(name), None, Some(description)) => {
            match description
                .chars()
                .find(|&c| crate::safe_text::is_forbidden(c))
            {
                Some(found) => Verdict::Invalid {
                    reason: WarningKind::InvalidDescription { found },
                },
                None => Verdict::Usable {
                    name: name.to_string(),
                    description: description.to_string(),
                },
            }
        }
    };
    Assessment { verdict, warnings }
}

/// The warning for a skill named like a built-in command, if it is.
pub fn builtin_collision(name: &str) -> Option<WarningKind> {
    crate::protocol::is_builtin(name).then(|| WarningKind::BuiltinCollision {
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter;
    use crate::skills::name::{NameProblem, escaped, shown_name, suggested_name};
    use crate::test_support::assert_contains;

    fn verdict(yaml: &str) -> Verdict {
        let (fm, notes) = frontmatter::parse(yaml);
        assess(&fm, notes).verdict
    }

    fn invalid_name(yaml: &str) -> Option<NameProblem> {
        match verdict(yaml) {
            Verdict::Invalid {
                reason: WarningKind::InvalidName { problem, .. },
            } => Some(problem),
            _ => None,
        }
    }

    #[test]
    fn descriptions_with_control_characters_are_invalid_with_the_reason() {
        for (yaml, found) in [
            ("name: a\ndescription: \"x\\e]0;PWNED\\a\"\n", '\x1b'),
            ("name: a\ndescription: \"x\\x9b31m\"\n", '\u{9b}'),
            ("name: a\ndescription: \"over\\rwrite\"\n", '\r'),
            ("name: a\ndescription: \"bell\\x07\"\n", '\x07'),
            ("name: a\ndescription: \"del\\x7f\"\n", '\x7f'),
        ] {
            let reason = WarningKind::InvalidDescription { found };
            assert_eq!(
                verdict(yaml),
                Verdict::Invalid {
                    reason: reason.clone()
                },
                "{yaml}"
            );
            let text = reason.to_string();
            assert!(
                text.contains(&format!("U+{:04X}", u32::from(found))),
                "{text}"
            );
        }
        for yaml in [
            "name: a\ndescription: |\n  line one\n  \tline two\n",
            "name: a\ndescription: \"tab\\there\\nand a line\"\n",
        ] {
            assert!(matches!(verdict(yaml), Verdict::Usable { .. }), "{yaml}");
        }
        // A CRLF file: frontmatter::head makes the line ends LF first.
        let text = "---\r\nname: a\r\ndescription: |\r\n  one\r\n  two\r\n---\r\nbody\r\n";
        let (yaml, _) = frontmatter::split(text).unwrap();
        assert!(matches!(verdict(&yaml), Verdict::Usable { .. }), "{yaml:?}");
    }

    #[test]
    fn names_that_cannot_be_invoked_are_invalid_with_the_reason() {
        for (name, problem) in [
            ("Bad Name With Spaces", NameProblem::Whitespace),
            ("../x", NameProblem::Separator { found: '/' }),
            ("a\\b", NameProblem::Separator { found: '\\' }),
            ("a..b", NameProblem::ParentDir),
            ("\"new\\nline\"", NameProblem::Unprintable { found: '\n' }),
            ("\"tab\\tbed\"", NameProblem::Unprintable { found: '\t' }),
            (
                "\"zero\u{200B}width\"",
                NameProblem::Unprintable { found: '\u{200B}' },
            ),
            ("\"no\u{00A0}break\"", NameProblem::Whitespace),
        ] {
            assert_eq!(
                invalid_name(&format!("name: {name}\ndescription: d")),
                Some(problem),
                "{name}"
            );
        }
    }

    #[test]
    fn names_that_work_stay_usable_even_outside_the_spec() {
        for name in [
            "go-refactor",
            "My-Skill",
            "v1.2",
            "ns:tool",
            "café",
            "-odd-",
            "\" padded \"",
        ] {
            let yaml = format!("name: {name}\ndescription: d");
            assert!(
                matches!(verdict(&yaml), Verdict::Usable { .. }),
                "{name}: {:?}",
                verdict(&yaml)
            );
        }
        assert_eq!(
            verdict("name: \" padded \"\ndescription: d"),
            Verdict::Usable {
                name: "padded".to_string(),
                description: "d".to_string()
            }
        );
    }

    #[test]
    fn a_missing_name_comes_first_then_the_name_then_the_description() {
        assert_eq!(
            verdict("description: d"),
            Verdict::Invalid {
                reason: WarningKind::MissingField { field: "name" }
            }
        );
        assert!(matches!(
            verdict("name: a b"),
            Verdict::Invalid {
                reason: WarningKind::InvalidName { .. }
            }
        ));
        assert_eq!(
            verdict("name: ok\ndescription: \"  \""),
            Verdict::Invalid {
                reason: WarningKind::MissingField {
                    field: "description"
                }
            }
        );
    }

    #[test]
    fn wrong_typed_fields_are_warnings_whatever_the_verdict() {
        let (fm, notes) = frontmatter::parse("name: maybe\ndescription: d\nuser-invocable: maybe");
        let a = assess(&fm, notes);
        assert!(matches!(a.verdict, Verdict::Usable { .. }));
        assert_eq!(
            a.warnings,
            [WarningKind::BadField {
                field: "user-invocable".to_string(),
                expected: "true or false",
            }]
        );
        let (fm, notes) = frontmatter::parse("name: a b\ndescription: d\nuser-invocable: maybe");
        assert_eq!(assess(&fm, notes).warnings.len(), 1);
    }

    #[test]
    fn the_reason_is_one_line_with_a_suggested_name() {
        let reason = WarningKind::InvalidName {
            name: "new\nline".to_string(),
            problem: NameProblem::Unprintable { found: '\n' },
        }
        .to_string();
        assert!(!reason.contains('\n'), "{reason}");
        assert_contains(&reason, "\"new\\nline\"");
        assert_contains(&reason, "U+000A");
        assert_contains(&reason, "name: new-line");
        assert_eq!(
            suggested_name("Bad Name With Spaces"),
            "bad-name-with-spaces"
        );
        assert_eq!(suggested_name("../x"), "x");
        assert_eq!(suggested_name("a..b"), "a-b");
        assert_eq!(suggested_name("//"), "");
        assert_eq!(shown_name("go"), "go");
        assert_eq!(shown_name("a b"), "\"a b\"");
        assert_eq!(shown_name("a\u{200B}b"), "\"a\\u{200b}b\"");
        assert_eq!(escaped("a\\b \"c\"\t"), "a\\b \"c\"\\t");
    }

    #[test]
    fn builtin_names_collide() {
        assert!(builtin_collision("help").is_some());
        assert!(builtin_collision("helper").is_none());
    }
}
