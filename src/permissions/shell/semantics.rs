//! What bash does with a finished simple command beyond its syntax, for the hazards the
//! reader reports: assignments that reach the command (only a short list of harmless
//! variables is approvable), commands that are not commands (`x=1`, `> file`), bash
//! builtins that read their arguments as variable names or code (only builtins whose
//! arguments bash never evaluates are approvable, and some only without certain
//! options), and programs that run another command or code handed to them on their
//! command line (`eval`, `sudo`, `xargs`, `bash -c`, `find -exec`, `git grep -O`, …).
//!
//! Everything here is an allowlist where it can be: a builtin, an assignment or a `set`
//! option not listed is a hazard. It must not know rules, tools or the project.

use super::{Hazard, SimpleCommand, is_assignment};

/// Variables a rule may see assigned before a command: they change how programs print,
/// never what they load or run.
pub const HARMLESS_ASSIGNMENTS: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "TERM",
    "COLUMNS",
    "LINES",
    "CI",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "RUST_LOG_STYLE",
    "CARGO_TERM_COLOR",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "NODE_ENV",
];

/// Whether `name` may be assigned before a command a rule approves.
pub fn harmless_assignment(name: &str) -> bool {
    HARMLESS_ASSIGNMENTS
        .iter()
        .any(|h| match h.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix) && name.len() > prefix.len(),
            None => *h == name,
        })
}

/// Every bash builtin (bash 5: `enable -a`).
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// Whether `name` (as the command name, after quote removal) runs a bash builtin.
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

/// Builtins whose arguments bash never evaluates as names, subscripts or code, whatever
/// they are (checked against bash 5.2: `exit`, `shift`, `kill -s`, `ulimit`, `return`
/// with `'a[$(cmd)]'` run nothing).
const PLAIN_BUILTINS: &[&str] = &[
    ":", "true", "false", "echo", "pwd", "type", "help", "times", "dirs", "logout", "suspend",
    "caller", "disown", "umask", "ulimit", "kill", "exit", "return", "shift", "break", "continue",
    "bg", "fg", "cd",
];

/// Options of `set` a rule may approve (`-e`, `-u`, `-x`, `-o pipefail`, …): they change
/// how the rest of the line fails or is traced, nothing else. (`-k` would turn any
/// `NAME=value` argument into an assignment; `-o` names outside this list are refused.)
const SET_FLAGS: &[char] = &['e', 'u', 'x'];
const SET_OPTION_NAMES: &[&str] = &["errexit", "nounset", "pipefail", "xtrace"];

/// The hazards of a finished simple command.
pub(super) fn hazards_of(command: &SimpleCommand) -> Vec<Hazard> {
    let mut hazards = Vec::new();
    if command.words.is_empty() {
        let what = if command.assignments.is_empty() {
            "only a redirection, which creates or empties the file"
        } else {
            "only variable assignments"
        };
        hazards.push(Hazard::NotACommand { what: what.into() });
    }
    for (name, _) in &command.assignments {
        let name = name.strip_suffix('+').unwrap_or(name);
        if !harmless_assignment(name) {
            hazards.push(Hazard::Assignment { name: name.into() });
        }
    }
    if let Some(what) = runs_other_code(&command.words) {
        hazards.push(Hazard::RunsOtherCode { what });
    } else if let Some(what) = builtin_hazard(&command.words) {
        hazards.push(Hazard::Builtin { what });
    }
    hazards
}

/// Why a builtin's arguments may be evaluated, if the command is a builtin.
fn builtin_hazard(words: &[String]) -> Option<String> {
    let name = words.first()?.as_str();
    if !is_builtin(name) {
        return None;
    }
    let args = &words[1..];
    let refused = |form: &str, why: &str| Some(format!("`{form}` {why}"));
    match name {
        "printf" => match args.first().map(String::as_str) {
            Some(first) if first.starts_with('-') && first != "--" => refused(
                &format!("printf {first}"),
                "assigns to a variable named by its argument, and bash evaluates subscripts \
                 in the name",
            ),
            _ => None,
        },
        "test" | "[" => args
            .iter()
            .find(|a| matches!(a.as_str(), "-v" | "-R"))
            .and_then(|a| {
                refused(
                    &format!("{name} {a}"),
                    "looks up a variable named by its argument, and bash evaluates subscripts \
                     in the name",
                )
            }),
        "wait" if args.iter().any(|a| a.starts_with('-') && a.contains('p')) => refused(
            "wait -p",
            "assigns to a variable named by its argument, and bash evaluates subscripts in \
             the name",
        ),
        "jobs" if args.iter().any(|a| a.starts_with('-') && a.contains('x')) => {
            refused("jobs -x", "runs the command it is given")
        }
        "set" => set_hazard(args),
        "export" => args
            .iter()
            .find(|a| {
                let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
                a.starts_with('-') || !is_assignment_or_name(a) || !harmless_assignment(name)
            })
            .and_then(|a| {
                refused(
                    &format!("export {a}"),
                    "sets a variable for every later command (rules approve only harmless \
                     ones, like LANG)",
                )
            }),
        // Reached only as `command -v NAME` or `command -V NAME` (a lookup): any other
        // `command` runs what follows and is a hazard already.
        "command" => None,
        name if PLAIN_BUILTINS.contains(&name) => None,
        _ => refused(
            name,
            "is a bash builtin that reads its arguments as variable names or code \
             (bash evaluates subscripts and expansions in them)",
        ),
    }
}

fn is_assignment_or_name(word: &str) -> bool {
    is_assignment(word) || is_assignment(&format!("{word}="))
}

/// `set` with anything but the approvable options.
fn set_hazard(args: &[String]) -> Option<String> {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let flags = word
            .strip_prefix('-')
            .or_else(|| word.strip_prefix('+'))
            .filter(|f| !f.is_empty());
        let Some(flags) = flags else {
            return Some(format!(
                "`set {word}` changes the shell's arguments or options"
            ));
        };
        for flag in flags.chars() {
            if flag == 'o' {
                let named = words.next().map(String::as_str);
                if !named.is_some_and(|n| SET_OPTION_NAMES.contains(&n)) {
                    return Some(format!(
                        "`set -o {}` changes how bash reads what follows",
                        named.unwrap_or("")
                    ));
                }
            } else if !SET_FLAGS.contains(&flag) {
                return Some(format!(
                    "`set {word}` changes how bash reads what follows (rules approve only \
                     -e, -u, -x and -o {})",
                    SET_OPTION_NAMES.join("|")
                ));
            }
        }
    }
    None
}

/// Programs that run another command or code handed to them on their command line.
const WRAPPERS: &[&str] = &[
    "eval",
    "exec",
    "source",
    ".",
    "sudo",
    "doas",
    "su",
    "xargs",
    "env",
    "command",
    "builtin",
    "nohup",
    "setsid",
    "nice",
    "ionice",
    "timeout",
    "time",
    "stdbuf",
    "watch",
    "parallel",
    "chroot",
    "unshare",
    "nsenter",
    "runuser",
    "trap",
    "alias",
    "flock",
    "script",
    "strace",
    "ltrace",
    "gdb",
    "busybox",
    "fakeroot",
    "firejail",
    "systemd-run",
    "ssh",
    "taskset",
    "chrt",
    "prlimit",
    "setpriv",
    "capsh",
    "sg",
    "newgrp",
    "bwrap",
    "proot",
    "valgrind",
    "catchsegv",
    "dbus-run-session",
    "xvfb-run",
];

/// Shells: with `-c` they run the string they are given.
pub const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "yash",
];

/// `find` actions that run a program, delete or write a file (what makes `find` more than
/// a read).
pub const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// The program a command name runs: `/usr/bin/sudo` is `sudo`; `dir/.` is a path, not
/// the `.` builtin.
pub fn program_name(name: &str) -> &str {
    match name.rsplit('/').next() {
        Some(".") | None => name,
        Some(base) => base,
    }
}

/// Whether a long option `--x` (before any `=`) may be an abbreviation of `--full`, as
/// getopt and git accept unique prefixes: conservative, it does not check uniqueness.
pub fn long_option_is(arg: &str, full: &str) -> bool {
    let Some(given) = arg.strip_prefix("--") else {
        return false;
    };
    let given = given.split_once('=').map_or(given, |(name, _)| name);
    !given.is_empty() && full.starts_with(given)
}

/// Whether `arg` is a cluster of short options (`-rf`) holding `flag`.
pub fn short_cluster_has(arg: &str, flag: char) -> bool {
    arg.len() >= 2
        && arg.starts_with('-')
        && !arg.starts_with("--")
        && arg[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && arg[1..].contains(flag)
}

/// Options of `git` subcommands that run a program named on the command line.
const GIT_RUNNING_OPTIONS: &[(&str, &[&str])] = &[
    ("grep", &["open-files-in-pager"]),
    ("rebase", &["exec"]),
    ("fetch", &["upload-pack"]),
    ("pull", &["upload-pack"]),
    ("clone", &["upload-pack", "template"]),
    ("ls-remote", &["upload-pack"]),
    ("archive", &["exec", "remote"]),
    ("push", &["receive-pack", "exec"]),
    ("difftool", &["extcmd", "tool"]),
    ("mergetool", &["tool"]),
];

/// Why a simple command runs code other than itself, if it does.
pub fn runs_other_code(words: &[String]) -> Option<String> {
    let base = program_name(words.first()?.as_str());
    let args = &words[1..];
    // `env` alone, or with only options and assignments, prints the environment.
    // (Not `-S`/`--split-string`, whose argument is a command line.)
    let printing_flag =
        |a: &str| matches!(a, "-0" | "--null" | "-i" | "--ignore-environment" | "-");
    if base == "env" && args.iter().all(|a| printing_flag(a) || is_assignment(a)) {
        return None;
    }
    // `command -v NAME` and `command -V NAME` only look a name up.
    if base == "command" && matches!(args.first().map(String::as_str), Some("-v" | "-V")) {
        return None;
    }
    if WRAPPERS.contains(&base) {
        return Some(base.to_string());
    }
    if SHELLS.contains(&base) && args.iter().any(|a| short_cluster_has(a, 'c')) {
        return Some(format!("{base} -c"));
    }
    let find = |pred: &dyn Fn(&str) -> bool| args.iter().find(|a| pred(a));
    let found = match base {
        "find" => find(&|a| FIND_ACTIONS.contains(&a)),
        "fd" | "fdfind" => find(&|a| {
            matches!(a, "-x" | "-X") || long_option_is(a, "exec") || long_option_is(a, "exec-batch")
        }),
        "rg" => find(&|a| {
            a.starts_with("--pre")
                || a.starts_with("--hostname-bin")
                || short_cluster_has(a, 'z')
                || a == "--search-zip"
        }),
        "tar" => find(&|a| {
            [
                "to-command",
                "checkpoint-action",
                "use-compress-program",
                "rsh-command",
                "info-script",
                "new-volume-script",
            ]
            .iter()
            .any(|o| long_option_is(a, o))
                || (short_cluster_has(a, 'I') && !a.starts_with("--"))
                || (short_cluster_has(a, 'F') && !a.starts_with("--"))
        }),
        "rsync" => find(&|a| {
            short_cluster_has(a, 'e') || long_option_is(a, "rsh") || long_option_is(a, "rsync-path")
        }),
        "sort" => find(&|a| long_option_is(a, "compress-program")),
        "man" => find(&|a| {
            short_cluster_has(a, 'P') || long_option_is(a, "pager") || long_option_is(a, "html")
        }),
        "zip" => find(&|a| short_cluster_has(a, 'T') || long_option_is(a, "unzip-command")),
        "git" => return git_runs_other_code(args),
        _ => None,
    };
    found.map(|a| format!("{base} {a}"))
}

/// `git`'s options before the subcommand that point it at other programs or config, and
/// the subcommands' options that name a program.
fn git_runs_other_code(args: &[String]) -> Option<String> {
    let mut rest = args.iter();
    let sub = loop {
        let a = rest.next()?;
        if !a.starts_with('-') {
            break a.as_str();
        }
        if a == "-c"
            || a == "-C"
            || [
                "config-env",
                "exec-path",
                "git-dir",
                "work-tree",
                "namespace",
                "super-prefix",
            ]
            .iter()
            .any(|o| long_option_is(a, o))
        {
            return Some(format!("git {a}"));
        }
    };
    let rest: Vec<&String> = rest.collect();
    if matches!(
        sub,
        "difftool" | "mergetool" | "filter-branch" | "web--browse" | "send-email"
    ) {
        return Some(format!("git {sub}"));
    }
    if sub == "bisect" && rest.first().is_some_and(|a| *a == "run") {
        return Some("git bisect run".into());
    }
    if sub == "submodule" && rest.iter().any(|a| *a == "foreach") {
        return Some("git submodule foreach".into());
    }
    if sub == "grep" && rest.iter().any(|a| short_cluster_has(a, 'O')) {
        return Some("git grep -O".into());
    }
    if sub == "rebase" && rest.iter().any(|a| short_cluster_has(a, 'x')) {
        return Some("git rebase -x".into());
    }
    let options = GIT_RUNNING_OPTIONS
        .iter()
        .find(|(name, _)| *name == sub)
        .map_or(&[][..], |(_, options)| options);
    rest.iter()
        .find(|a| options.iter().any(|o| long_option_is(a, o)))
        .map(|a| format!("git {sub} {a}"))
}
