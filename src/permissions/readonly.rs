//! The commands that only read, which `auto-edit` runs without asking: a table of
//! programs, each with the options that keep it read-only. A program is on the list only
//! when none of its options writes a file, runs a program or changes settings, or when
//! those options are listed as refused (`find -exec`, `sort -o`, `rg --pre`, `tree -o`,
//! `git grep -O`, `git diff --output`, …); long options are compared the way getopt and
//! git read them (a unique prefix counts, so `--out` is `--output`). Bash builtins are
//! judged by the shell reader, not here (`printf -v`, `test -v` are hazards there).
//!
//! It judges one simple command by its words after quote removal; it must not know
//! rules, modes, the file system or how anyone is asked.

use super::shell::SimpleCommand;
use super::shell::semantics::{FIND_ACTIONS, long_option_is, short_cluster_has};

/// What a read-only program's options may be.
enum Options {
    /// None of its options writes, runs or changes anything.
    Any,
    /// All but these: short flags (also inside clusters like `-rfo`) and long options
    /// (also abbreviated).
    AllBut {
        short: &'static [char],
        long: &'static [&'static str],
    },
    /// `find`: none of its write, delete or exec actions.
    Find,
    /// `uniq`: at most one file operand (a second one is the output file).
    AtMostOneOperand,
}

/// The read-only programs and what their options may be.
const PROGRAMS: &[(&str, Options)] = &[
    // Builtins: the shell reader refuses their forms that assign or evaluate (`printf
    // -v`, `test -v`, `command` but `-v`/`-V`, `set` but `-e`/`-u`/`-x`/`-o pipefail`),
    // and `cd` moves where the rest of the line is judged.
    ("cd", Options::Any),
    ("pwd", Options::Any),
    ("echo", Options::Any),
    ("printf", Options::Any),
    ("true", Options::Any),
    ("false", Options::Any),
    (":", Options::Any),
    ("test", Options::Any),
    ("[", Options::Any),
    ("type", Options::Any),
    ("command", Options::Any),
    ("set", Options::Any),
    ("ls", Options::Any),
    ("cat", Options::Any),
    ("head", Options::Any),
    ("tail", Options::Any),
    ("wc", Options::Any),
    ("which", Options::Any),
    ("stat", Options::Any),
    ("du", Options::Any),
    ("basename", Options::Any),
    ("dirname", Options::Any),
    ("realpath", Options::Any),
    ("readlink", Options::Any),
    ("nl", Options::Any),
    ("tac", Options::Any),
    ("cut", Options::Any),
    ("tr", Options::Any),
    ("paste", Options::Any),
    ("comm", Options::Any),
    ("rev", Options::Any),
    ("seq", Options::Any),
    ("column", Options::Any),
    ("od", Options::Any),
    ("sha256sum", Options::Any),
    ("sha512sum", Options::Any),
    ("sha1sum", Options::Any),
    ("md5sum", Options::Any),
    ("b2sum", Options::Any),
    ("cmp", Options::Any),
    ("diff", Options::Any),
    ("grep", Options::Any),
    ("egrep", Options::Any),
    ("fgrep", Options::Any),
    ("jq", Options::Any),
    ("whoami", Options::Any),
    ("id", Options::Any),
    ("uname", Options::Any),
    ("printenv", Options::Any),
    (
        "rg",
        Options::AllBut {
            short: &['z'],
            long: &["pre", "pre-glob", "search-zip", "hostname-bin"],
        },
    ),
    (
        "file",
        Options::AllBut {
            short: &['C', 'z', 'Z', 'p'],
            long: &[
                "compile",
                "uncompress",
                "uncompress-noreport",
                "preserve-date",
            ],
        },
    ),
    (
        "tree",
        Options::AllBut {
            short: &['o', 'R'],
            long: &["output", "fromfile"],
        },
    ),
    (
        "sort",
        Options::AllBut {
            short: &['o', 'T'],
            long: &[
                "output",
                "compress-program",
                "temporary-directory",
                "files0-from",
            ],
        },
    ),
    (
        "date",
        Options::AllBut {
            short: &['s'],
            long: &["set"],
        },
    ),
    ("find", Options::Find),
    ("uniq", Options::AtMostOneOperand),
];

/// `git` subcommands that only read, and their options that write or run something.
const GIT: &[(&str, &[&str])] = &[
    ("status", &[]),
    ("diff", &["output", "ext-diff", "textconv"]),
    ("log", &["output", "ext-diff", "textconv", "show-signature"]),
    (
        "show",
        &["output", "ext-diff", "textconv", "show-signature"],
    ),
    ("rev-parse", &[]),
    ("ls-files", &[]),
    ("ls-tree", &[]),
    ("blame", &["textconv", "contents"]),
    ("grep", &["open-files-in-pager", "textconv", "ext-grep"]),
    ("describe", &[]),
    ("shortlog", &[]),
    ("cat-file", &["textconv", "filters"]),
    ("merge-base", &[]),
    ("show-ref", &[]),
];

/// `git` options before the subcommand that keep it a read.
const GIT_GLOBAL: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
];

/// How a read-only command reads: what `auto-edit` needs to know about a `git` command
/// before it runs it (its repository's configuration may name programs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnly {
    /// Not a known read-only command with read-only options.
    No,
    /// A read-only program.
    Program,
    /// A read-only `git` subcommand, which still depends on the repository.
    Git {
        /// Whether it shows file contents (so a tracked secret file would be shown).
        shows_contents: ShowsContents,
    },
}

/// Whether a `git` subcommand prints the contents of files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShowsContents {
    /// It does (`diff`, `log`, `show`, `grep`, `blame`, `cat-file`).
    Yes,
    /// It shows names and states only.
    No,
}

/// Whether this simple command only reads.
pub fn read_only(command: &SimpleCommand) -> ReadOnly {
    let Some(name) = command.name() else {
        return ReadOnly::No;
    };
    let args = &command.words[1..];
    if name == "git" {
        return git(args);
    }
    let Some((_, options)) = PROGRAMS.iter().find(|(program, _)| *program == name) else {
        return ReadOnly::No;
    };
    let fine = match options {
        Options::Any => true,
        Options::AllBut { short, long } => options_until_end(args).all(|a| {
            !(short.iter().any(|s| short_cluster_has(a, *s))
                || long.iter().any(|l| long_option_is(a, l)))
        }),
        Options::Find => !args.iter().any(|a| FIND_ACTIONS.contains(&a.as_str())),
        Options::AtMostOneOperand => {
            args.iter()
                .filter(|a| !a.starts_with('-') || a.as_str() == "-")
                .count()
                <= 1
        }
    };
    if fine {
        ReadOnly::Program
    } else {
        ReadOnly::No
    }
}

/// The option words of a command line (GNU programs take options anywhere before `--`).
fn options_until_end(args: &[String]) -> impl Iterator<Item = &str> {
    args.iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && *a != "-")
}

/// Whether a `git` command (its words) prints the contents of files from git's objects:
/// `show`, `log`, `diff`, `grep`, `blame`, `cat-file`, `archive`, `stash show`, …
pub fn git_shows_contents(words: &[String]) -> bool {
    if words.first().map(String::as_str) != Some("git") {
        return false;
    }
    let mut rest = words[1..].iter();
    while let Some(a) = rest.next() {
        if matches!(
            a.as_str(),
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        ) {
            rest.next();
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        return matches!(
            a.as_str(),
            "show"
                | "log"
                | "diff"
                | "grep"
                | "blame"
                | "annotate"
                | "cat-file"
                | "archive"
                | "format-patch"
                | "whatchanged"
                | "stash"
                | "difftool"
                | "bundle"
        );
    }
    false
}

fn git(args: &[String]) -> ReadOnly {
    let mut rest = args.iter();
    let sub = loop {
        match rest.next() {
            Some(a) if GIT_GLOBAL.contains(&a.as_str()) => {}
            Some(a) if a.starts_with('-') => return ReadOnly::No,
            Some(a) => break a.as_str(),
            None => return ReadOnly::No,
        }
    };
    let Some((_, refused)) = GIT.iter().find(|(name, _)| *name == sub) else {
        return ReadOnly::No;
    };
    let rest: Vec<&String> = rest.collect();
    let options = rest
        .iter()
        .map(|a| a.as_str())
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-'));
    for a in options {
        if refused.iter().any(|r| long_option_is(a, r)) {
            return ReadOnly::No;
        }
        if sub == "grep" && short_cluster_has(a, 'O') {
            return ReadOnly::No;
        }
    }
    let shows_contents = match sub {
        "diff" | "log" | "show" | "grep" | "blame" | "cat-file" => ShowsContents::Yes,
        _ => ShowsContents::No,
    };
    ReadOnly::Git { shows_contents }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::shell::first_command as cmd;

    #[test]
    fn read_only_commands_are_known_and_their_writing_options_are_not() {
        for ok in [
            "ls -la",
            "cat a b",
            "rg foo src",
            "rg -i -e foo src",
            "git status",
            "git --no-pager diff HEAD~1",
            "git log --oneline -5",
            "find . -name x -print",
            "sort -u x",
            "uniq x",
            "tree -L 2",
            "date -u",
        ] {
            assert_ne!(read_only(&cmd(ok)), ReadOnly::No, "{ok}");
        }
        for not in [
            "rm x",
            "git push",
            "git diff --output=/tmp/x",
            "git diff --out=/tmp/x",
            "git log --ext-diff",
            "git -c core.pager=sh log",
            "git -C . status",
            "git grep -O'touch PWNED; true' hello",
            "git grep -iO vim x",
            "git grep --open-files-in-pager=vim x",
            "git grep --open x",
            "rg --pre ./x foo",
            "rg --pre=./x foo",
            "rg -iz foo",
            "rg --hostname-bin=./x foo",
            "find . -delete",
            "find . -fprint /tmp/x",
            "find . -exec touch x \\;",
            "sed -i s/a/b/ x",
            "awk '{system(\"id\")}'",
            "git branch -D x",
            "tree -o out",
            "tree -R",
            "sort -o out in",
            "sort -uo out in",
            "sort --output=out in",
            "sort --out=out in",
            "sort --compress-program=sh in",
            "sort --comp=sh in",
            "uniq in out",
            "date -s 12:00",
            "date --set=12:00",
            "file -C -m x",
            "tee out",
            "xxd x out",
        ] {
            assert_eq!(read_only(&cmd(not)), ReadOnly::No, "{not}");
        }
    }

    #[test]
    fn git_subcommands_say_whether_they_show_contents() {
        assert_eq!(
            read_only(&cmd("git show HEAD")),
            ReadOnly::Git {
                shows_contents: ShowsContents::Yes
            }
        );
        assert_eq!(
            read_only(&cmd("git status -s")),
            ReadOnly::Git {
                shows_contents: ShowsContents::No
            }
        );
    }
}
