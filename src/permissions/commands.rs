//! What harness9 knows about particular commands without any rule: the read-only
//! commands that may run without asking in `auto-edit`, and the destructive commands
//! that always ask unless a rule names them exactly.
//!
//! Both judge one simple command by its words (after quote removal) and nothing else;
//! this module must not know rules, modes or how anyone is asked.

use std::path::Path;

use super::shell::{FIND_ACTIONS, SimpleCommand};
use crate::paths::normalize;

/// Read-only commands that change nothing and run nothing else, whatever their
/// arguments (those that can be made to write or run code with some option are either
/// left out, or listed in [`unsafe_option`]).
const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "which",
    "file",
    "stat",
    "du",
    "tree",
    "rg",
    "grep",
    "egrep",
    "fgrep",
    "diff",
    "cmp",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "nl",
    "tac",
    "cut",
    "tr",
    "sha256sum",
    "sha1sum",
    "md5sum",
    "b2sum",
    "find",
    "test",
    "[",
    "whoami",
    "id",
    "uname",
    "type",
    "jq",
];

/// `git` subcommands that only read.
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "blame",
    "grep",
    "describe",
    "shortlog",
    "cat-file",
    "merge-base",
    "show-ref",
];

/// Options that make an otherwise read-only command write a file or run a program.
fn unsafe_option(name: &str, arg: &str) -> bool {
    match name {
        "git" => {
            arg.starts_with("--output") || arg == "--ext-diff" || arg.starts_with("--textconv")
        }
        "rg" => arg.starts_with("--pre") || arg == "-z" || arg == "--search-zip",
        "find" => FIND_ACTIONS.contains(&arg),
        "tree" => arg == "-o",
        _ => false,
    }
}

/// True for a command known to only read, with no option that changes that.
pub fn is_read_only(command: &SimpleCommand) -> bool {
    let Some(name) = command.name() else {
        return false;
    };
    let args = &command.words[1..];
    let known = if name == "git" {
        args.iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|sub| GIT_READ_ONLY.contains(&sub.as_str()))
            && args
                .iter()
                .take_while(|a| a.starts_with('-'))
                .all(|a| a == "--no-pager")
    } else {
        READ_ONLY.contains(&name)
    };
    known && !args.iter().any(|a| unsafe_option(name, a))
}

/// Why this simple command destroys work that cannot be recovered, if it does; `cwd`
/// resolves relative paths and `temp` is the temp folders (`rm -r` inside them is fine,
/// unless it reaches into the project, which may itself live in a temp folder).
pub fn destructive(
    command: &SimpleCommand,
    cwd: &Path,
    project: &Path,
    temp: &[&Path],
) -> Option<String> {
    let name = command.name()?;
    let args: Vec<&str> = command.words[1..].iter().map(String::as_str).collect();
    match name {
        "rm" => rm_recursive_outside_temp(&args, cwd, project, temp),
        "shred" => Some("shred destroys file contents".into()),
        "git" => git_destructive(&args),
        _ => None,
    }
}

fn rm_recursive_outside_temp(
    args: &[&str],
    cwd: &Path,
    project: &Path,
    temp: &[&Path],
) -> Option<String> {
    let mut recursive = false;
    let mut targets = Vec::new();
    let mut options_done = false;
    for arg in args {
        if !options_done && *arg == "--" {
            options_done = true;
        } else if !options_done && arg.starts_with("--") {
            recursive |= *arg == "--recursive";
        } else if !options_done && arg.starts_with('-') && arg.len() > 1 {
            recursive |= arg.contains('r') || arg.contains('R');
        } else {
            targets.push(*arg);
        }
    }
    if !recursive {
        return None;
    }
    let outside: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|t| {
            // A computed or globbed target could be anything.
            let literal = !t.contains(['$', '*', '?', '[', '{', '~']);
            let path = normalize(&cwd.join(t));
            let scratch = temp.iter().any(|tmp| path.starts_with(tmp) && path != *tmp)
                && !path.starts_with(project)
                && !project.starts_with(&path);
            !(literal && scratch)
        })
        .collect();
    if outside.is_empty() && !targets.is_empty() {
        return None;
    }
    Some(format!(
        "`rm -r {}` deletes a directory tree for good",
        outside.join(" ")
    ))
}

fn git_destructive(args: &[&str]) -> Option<String> {
    let sub_at = args.iter().position(|a| !a.starts_with('-'))?;
    let sub = args[sub_at];
    let rest = &args[sub_at + 1..];
    let has = |opts: &[&str]| rest.iter().any(|a| opts.contains(a));
    let short_cluster = |flag: char| {
        rest.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(flag))
    };
    match sub {
        "reset" if has(&["--hard", "--merge", "--keep"]) => {
            Some("`git reset --hard` discards uncommitted changes".into())
        }
        "clean" if has(&["--force"]) || short_cluster('f') => {
            Some("`git clean -f` deletes untracked files".into())
        }
        "checkout" if has(&["--force", "-f", "."]) || rest.windows(2).any(|w| w[0] == "--") => {
            Some("`git checkout -- <paths>` discards uncommitted changes".into())
        }
        "restore" if !has(&["--staged"]) || has(&["--worktree", "-W"]) => {
            Some("`git restore` discards uncommitted changes".into())
        }
        "push"
            if has(&[
                "--force",
                "-f",
                "--force-with-lease",
                "--mirror",
                "--delete",
                "-d",
            ]) || rest
                .iter()
                .any(|a| a.starts_with('+') || a.starts_with("--force-with-lease"))
                || rest.iter().any(|a| a.starts_with(':')) =>
        {
            Some("`git push --force` rewrites or deletes remote history".into())
        }
        "branch" if has(&["-D"]) || (has(&["--delete"]) && has(&["--force"])) => {
            Some("`git branch -D` deletes a branch that may not be merged".into())
        }
        "stash" if rest.first().is_some_and(|a| matches!(*a, "drop" | "clear")) => {
            Some("`git stash drop|clear` deletes stashed changes".into())
        }
        _ => None,
    }
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
            "git status",
            "git --no-pager diff HEAD~1",
            "find . -name '*.rs'",
        ] {
            assert!(is_read_only(&cmd(ok)), "{ok}");
        }
        for not in [
            "rm x",
            "git push",
            "git diff --output=/tmp/x",
            "git -c core.pager=sh log",
            "rg --pre ./x foo",
            "find . -delete",
            "sed -i s/a/b/ x",
            "awk '{system(\"id\")}'",
            "git branch -D x",
            "tree -o out",
        ] {
            assert!(!is_read_only(&cmd(not)), "{not}");
        }
    }

    #[test]
    fn destructive_commands_are_named() {
        let cwd = Path::new("/p");
        let project = Path::new("/p");
        let tmp = [Path::new("/tmp")];
        let destroying = [
            "rm -rf build",
            "rm -r -f /",
            "rm --recursive src",
            "rm -fr /tmp/../home",
            "rm -rf $DIR",
            "rm -rf /tmp",
            "git reset --hard",
            "git reset --hard HEAD~3",
            "git clean -fdx",
            "git clean --force",
            "git checkout -- .",
            "git checkout .",
            "git restore src/main.rs",
            "git push --force",
            "git push -f origin main",
            "git push origin +main",
            "git push --force-with-lease",
            "git push origin :main",
            "git branch -D topic",
            "git stash clear",
            "shred -u key",
        ];
        let harmless = [
            "rm file.txt",
            "rm -f a b",
            "rm -rf /tmp/work",
            "rm -rf /tmp/a /tmp/b",
            "git reset HEAD~1",
            "git clean -n",
            "git checkout main",
            "git restore --staged x",
            "git push origin main",
            "git branch -d merged",
            "git stash pop",
        ];
        for (lines, expected) in [(&destroying[..], true), (&harmless[..], false)] {
            for line in lines {
                let found = destructive(&cmd(line), cwd, project, &tmp);
                assert_eq!(found.is_some(), expected, "{line}");
            }
        }
        // Relative to a cwd inside the temp dir.
        assert!(destructive(&cmd("rm -rf x"), Path::new("/tmp/w"), project, &tmp).is_none());
        // A project that lives in the temp dir is still the project.
        let in_tmp = Path::new("/tmp/proj");
        assert!(destructive(&cmd("rm -rf build"), in_tmp, in_tmp, &tmp).is_some());
        assert!(destructive(&cmd("rm -rf /tmp"), in_tmp, in_tmp, &tmp).is_some());
    }
}
