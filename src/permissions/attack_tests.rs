//! The attacks of issue 26 on the command judgement, as a table, each confirmed against
//! the real bash where it runs code, and a property for the whole class: whatever the
//! judgement lets run without a person, bash runs with exactly the words harness9 read,
//! creating nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::*;

fn book(allow: &[&str]) -> Rulebook {
    let mut book = Rulebook::built_in();
    for text in allow {
        book.push(ActiveRule {
            rule: Rule::parse(text, None).unwrap(),
            effect: Effect::Allow,
            source: Source::Session,
        });
    }
    book
}

fn judge(book: &Rulebook, line: &str, dir: &Path, mode: ModeRuns) -> Judgement {
    judge_with(book, line, dir, mode, SecretReads::Visible)
}

/// A judgement where the sandbox masks secret files.
fn judge_masked(book: &Rulebook, line: &str, dir: &Path) -> Judgement {
    judge_with(
        book,
        line,
        dir,
        ModeRuns::READS_AND_EDITS,
        SecretReads::Masked,
    )
}

fn judge_with(
    book: &Rulebook,
    line: &str,
    dir: &Path,
    mode: ModeRuns,
    secrets: SecretReads,
) -> Judgement {
    let temp = [Path::new("/nonexistent-temp")];
    book.judge(
        "bash",
        Subject::Command { line, cwd: dir },
        &Scope {
            project: dir,
            root: dir,
            temp: &temp,
            mode,
            secrets,
        },
    )
}

/// A scratch project: a git repository with one committed file holding `hello`, a
/// `.env`, and a `victim.txt`.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    std::fs::write(root.join(".env"), "KEY=sk-secret\n").unwrap();
    std::fs::write(root.join("victim.txt"), "keep me\n").unwrap();
    for args in [&["init", "-q"][..], &["add", "a.txt"]] {
        let ok = Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }
    (dir, root)
}

/// Runs `line` with bash in `dir`, stdin closed.
fn bash(line: &str, dir: &Path) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Rules that name every program the forms below use: only the reading of the line may
/// keep them from running.
const EVERY_PROGRAM: &[&str] = &[
    "bash(echo:*)",
    "bash(printf:*)",
    "bash(test:*)",
    "bash(read:*)",
    "bash(declare:*)",
    "bash(let:*)",
    "bash(unset:*)",
    "bash(export:*)",
    "bash(mapfile:*)",
    "bash(getopts:*)",
    "bash(wait:*)",
    "bash(set:*)",
    "bash(shopt:*)",
    "bash(hash:*)",
    "bash(compgen:*)",
    "bash(jobs:*)",
    "bash(cat:*)",
    "bash(ls:*)",
    "bash(git grep:*)",
    "bash(git status:*)",
    "bash(cargo:*)",
    "bash(true:*)",
];

/// Forms that run `touch PWNED` in bash although every program in them is allowed by a
/// rule or is on the read-only list (the forms first, then more of each family),
/// shared with the end-to-end tests.
fn runs_code() -> impl Iterator<Item = &'static str> {
    include_str!("../../tests/data/code_running_forms.txt")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Forms that do harm without running code: they must not pass either.
const HARMS: &[&str] = &[
    "> victim.txt",
    ">> victim.txt",
    "x='$(touch PWNED)'",
    "cat .e*",
    "cat .[e]nv",
    "cat ./.en?",
    "cat {.env,a.txt}",
    "echo x >> ~/.bashrc",
    "echo x > /etc/harness9-test",
    "cat ~root/.bashrc",
    "ls *",
    "echo $HOME",
    "LD_PRELOAD=/tmp/x.so ls",
    "RUSTFLAGS='-C linker=/tmp/x' cargo build",
    "set -k; ls LD_PRELOAD=/tmp/x.so",
    "shopt -s expand_aliases",
];

#[test]
fn forms_that_run_code_in_bash_are_never_approved_by_a_rule_or_the_read_only_list() {
    for line in runs_code() {
        let (_d, dir) = project();
        // bash runs the code: the form is a real attack. (A process substitution may
        // finish after bash: wait for the file, with a deadline.)
        let _ = bash(line, &dir);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !dir.join("PWNED").exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            dir.join("PWNED").exists(),
            "bash did not run the code of `{line}`: not a real attack"
        );
        std::fs::remove_file(dir.join("PWNED")).unwrap();
        for (mode, rules) in [
            (ModeRuns::READS_AND_EDITS, &[][..]),
            (ModeRuns::NOTHING, EVERY_PROGRAM),
            (ModeRuns::READS_AND_EDITS, EVERY_PROGRAM),
        ] {
            let judgement = judge(&book(rules), line, &dir, mode);
            assert!(
                !matches!(judgement, Judgement::Allow { .. }),
                "`{line}` was allowed ({mode:?}, {} rules)",
                rules.len()
            );
        }
    }
}

#[test]
fn forms_that_harm_without_code_are_never_approved_by_a_rule_or_the_read_only_list() {
    let (_d, dir) = project();
    for line in HARMS {
        for (mode, rules) in [
            (ModeRuns::READS_AND_EDITS, &[][..]),
            (ModeRuns::NOTHING, EVERY_PROGRAM),
        ] {
            let judgement = judge(&book(rules), line, &dir, mode);
            assert!(
                !matches!(judgement, Judgement::Allow { .. }),
                "`{line}` was allowed ({mode:?}): {judgement:?}"
            );
        }
    }
}

#[test]
fn a_redirection_into_the_project_is_an_edit_the_mode_must_allow() {
    let (_d, dir) = project();
    let echo = book(&["bash(echo:*)"]);
    for line in [
        "echo x > victim.txt",
        "echo x >> victim.txt",
        "echo x 2> victim.txt",
    ] {
        assert!(
            !matches!(
                judge(&echo, line, &dir, ModeRuns::NOTHING),
                Judgement::Allow { .. }
            ),
            "{line}"
        );
        assert_eq!(
            judge(&echo, line, &dir, ModeRuns::READS_AND_EDITS),
            Judgement::Allow {
                by: AllowedBy::Mode
            },
            "{line}"
        );
    }
}

#[test]
fn plain_reads_still_run_in_auto_edit() {
    let (_d, dir) = project();
    for line in [
        "ls -la",
        "cat a.txt",
        "rg hello",
        "grep -rn hello .",
        "git status",
        "git log --oneline -3",
        "git grep hello",
        "head -n 3 a.txt | wc -l",
        "find . -name '*.txt'",
        "cd sub 2>/dev/null; ls",
        "echo 'a $b `c`'",
        "printf '%s\\n' x",
        "test -f a.txt && echo yes",
        "LC_ALL=C sort a.txt",
        "set -euo pipefail; ls",
    ] {
        assert_eq!(
            judge_masked(&book(&[]), line, &dir),
            Judgement::Allow {
                by: AllowedBy::Mode
            },
            "{line}"
        );
    }
    // Where commands can read secret files, a recursive read of a tree holding one asks.
    for line in ["rg hello", "grep -rn hello .", "grep -R x"] {
        assert!(
            matches!(
                judge(&book(&[]), line, &dir, ModeRuns::READS_AND_EDITS),
                Judgement::Ask(AskBecause::Rule { .. })
            ),
            "{line}"
        );
    }
}

#[test]
fn git_never_prints_a_tracked_secret_file_unasked() {
    let (_d, dir) = project();
    let ok = Command::new("git")
        .args(["add", "-f", ".env"])
        .current_dir(&dir)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    for line in [
        "git log -p",
        "git show",
        "git diff --cached",
        "git grep KEY",
        "git show HEAD:.env",
    ] {
        for judgement in [
            judge_masked(&book(&[]), line, &dir),
            judge(
                &book(&["bash(git:*)"]),
                line,
                &dir,
                ModeRuns::READS_AND_EDITS,
            ),
        ] {
            assert!(
                matches!(judgement, Judgement::Ask(AskBecause::Rule { .. })),
                "{line}: {judgement:?}"
            );
        }
    }
    assert_eq!(
        judge_masked(&book(&[]), "git status", &dir),
        Judgement::Allow {
            by: AllowedBy::Mode
        }
    );
}

/// Pieces of words, many of them things bash expands.
const FRAGMENTS: &[&str] = &[
    "a",
    "b c",
    "'$(touch P)'",
    "$(touch P)",
    "$x",
    "${_@P}",
    "\"q\"",
    "'s'",
    "*",
    "?",
    "[a]",
    "{a,b}",
    "{1..2}",
    "~",
    "~root",
    "\\$",
    "$'x'",
    "`touch P`",
    ";",
    "&&",
    "|",
    ">f",
    "<f",
    "#",
    "=",
    "a=b",
    "$[1]",
    "$((1))",
    "!",
    "-v",
    "x[1]",
    "'a[$(touch P)]'",
    "$_",
    "\\",
    "\"$x\"",
    "'",
    "\"",
    "{",
    "}",
    "(",
    ")",
    ">",
    "&",
    "\n",
    "\t",
    "%",
    "$\"m\"",
    "-vfoo",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever a rule lets run, bash runs with the words harness9 read, and it creates
    /// nothing.
    #[test]
    fn what_a_rule_lets_run_is_what_bash_runs(
        words in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(FRAGMENTS), 1..4),
            0..4,
        )
    ) {
        let args: Vec<String> = words.iter().map(|w| w.concat()).collect();
        let line = format!("printf '%s\\0' {}", args.join(" "));
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        // A file to read from (`<f`), so a read redirection does not stop bash early.
        std::fs::write(root.join("f"), "").unwrap();
        let judgement = judge(&book(&["bash(printf:*)"]), &line, &root, ModeRuns::NOTHING);
        if matches!(judgement, Judgement::Allow { .. }) {
            let parsed = shell::parse(&line);
            proptest::prop_assert_eq!(parsed.commands.len(), 1, "{}", line);
            let expected: Vec<String> = parsed.commands[0].words[2..].to_vec();
            let output = bash(&line, &root);
            let printed = String::from_utf8_lossy(&output.stdout).into_owned();
            let mut got: Vec<String> = printed.split('\0').map(str::to_string).collect();
            got.pop();
            let expected = if expected.is_empty() { vec![String::new()] } else { expected };
            // A redirection that fails (`<missing`) makes bash run nothing: less than was
            // judged, never more. Run in the background (`&`), the failed command leaves
            // bash's own status 0, so "ran nothing" is told by printf printing nothing
            // (it prints at least one `\0` whenever it runs).
            // A leading `~` is `$HOME` to bash (harness9 judges it as `$HOME` too); a quoted
            // one is itself. Either matches.
            let home = root.display().to_string();
            let same = |got: &String, want: &String| {
                got == want
                    || want
                        .strip_prefix('~')
                        .is_some_and(|rest| (rest.is_empty() || rest.starts_with('/')) && *got == format!("{home}{rest}"))
            };
            let ran = !output.stdout.is_empty();
            if output.status.success() && ran {
                proptest::prop_assert_eq!(got.len(), expected.len(), "{}", line);
                for (g, w) in got.iter().zip(&expected) {
                    proptest::prop_assert!(same(g, w), "{}: {:?} vs {:?}", line, g, w);
                }
            }
            let created: Vec<_> = std::fs::read_dir(&root)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name() != "f")
                .collect();
            proptest::prop_assert!(created.is_empty(), "{} created files", line);
        }
    }
}
