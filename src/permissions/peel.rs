//! The commands a simple command really runs, seen through the programs that run other
//! commands: a path to a program is its name (`/bin/rm` is `rm`), wrappers are peeled
//! (`command`, `env`, `nice`, `timeout`, `sudo`, `xargs`, …), the strings `bash -c`,
//! `eval`, `env -S`, `su -c` and `trap` run are read as command lines, and `find
//! -exec`'s command is taken out. What cannot be seen through (a computed command name,
//! `ssh`, `chroot`, an option this module does not know) is [`Effective::Unseen`], with
//! the reason.
//!
//! Deny and ask rules and the destructive-command check look at every effective command,
//! so no spelling of `rm -rf` slips past them. It must not know rules or modes.

use super::shell::semantics::{SHELLS, program_name, short_cluster_has};
use super::shell::{self, SimpleCommand};

/// How deep wrappers and command strings are followed before giving up.
const MAX_DEPTH: usize = 6;

/// A command as it really runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effective {
    /// A command harness9 can see: its program's name (no folder) and arguments.
    Seen {
        /// The program's name and its arguments, after quote removal.
        words: Vec<String>,
        /// Whether more arguments are appended when it runs (`xargs`, `find -exec … +`).
        extra: ExtraArgs,
    },
    /// A command harness9 cannot see.
    Unseen {
        /// Why, for a person.
        why: String,
    },
}

/// Arguments added to a command when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraArgs {
    /// Only the arguments written.
    None,
    /// Unknown arguments are added (file names from `xargs` or `find -exec {}`).
    Unknown,
}

/// Every command `command` runs: itself (named by its program's base name) and what its
/// wrappers and command strings run, in order.
pub fn effective(command: &SimpleCommand) -> Vec<Effective> {
    let mut out = Vec::new();
    peel(&command.words, ExtraArgs::None, 0, &mut out);
    out
}

fn unseen(out: &mut Vec<Effective>, why: String) {
    out.push(Effective::Unseen { why });
}

/// Whether a word (after quote removal) still holds something bash would expand or
/// match: a name like that is computed when it runs.
fn computed(word: &str) -> bool {
    word.is_empty() || word.contains(['$', '`', '*', '?', '[', '{'])
}

fn peel(words: &[String], extra: ExtraArgs, depth: usize, out: &mut Vec<Effective>) {
    let Some(first) = words.first() else {
        return;
    };
    if depth > MAX_DEPTH {
        return unseen(out, "its commands are nested too deeply to follow".into());
    }
    // A keyword leads a control structure. After `if`, `then`, `do`, `!`, `{`, … a
    // command follows: it is peeled like any. After `for`, `case`, `function`, … data
    // follows, where a command may still start later (`function f { rm -rf x; }`): every
    // tail is looked at for commands it can see (a data word like `for f in rm` is judged
    // as a command too: asking more, never less).
    match first.as_str() {
        "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "{" | "time"
        | "coproc" => {
            peel(&words[1..], extra, depth + 1, out);
            return;
        }
        keyword if shell::KEYWORDS.contains(&keyword) => {
            for start in 1..words.len() {
                let mut tail = Vec::new();
                peel(&words[start..], extra, depth + 1, &mut tail);
                out.extend(
                    tail.into_iter()
                        .filter(|e| matches!(e, Effective::Seen { .. })),
                );
            }
            return;
        }
        _ => {}
    }
    if computed(first) {
        return unseen(
            out,
            format!("its command name `{first}` is computed when it runs"),
        );
    }
    let name = program_name(first);
    let mut seen = words.to_vec();
    seen[0] = name.to_string();
    let args = &words[1..];
    out.push(Effective::Seen { words: seen, extra });
    let inner = |out: &mut Vec<Effective>, rest: &[String], extra| {
        if rest.is_empty() {
            return;
        }
        peel(rest, extra, depth + 1, out);
    };
    match name {
        // `command -v NAME` only looks a name up.
        "command" if args.first().is_some_and(|a| a == "-v" || a == "-V") => {}
        "command" | "builtin" => match skip_flags(args, &[], &['p']) {
            Some(rest) => inner(out, rest, extra),
            None => unseen(out, format!("`{name}` has options harness9 does not know")),
        },
        "exec" => match skip_flags(args, &["-a"], &['c', 'l']) {
            Some(rest) => inner(out, rest, extra),
            None => unseen(out, "`exec` has options harness9 does not know".into()),
        },
        "nohup" | "time" | "busybox" => {
            let rest = if name == "time" {
                skip_flags(args, &[], &['p'])
            } else {
                Some(args)
            };
            match rest {
                Some(rest) => inner(out, rest, extra),
                None => unseen(out, format!("`{name}` has options harness9 does not know")),
            }
        }
        "setsid" => match skip_flags(args, &[], &['c', 'f', 'w']) {
            Some(rest) => inner(out, rest, extra),
            None => unseen(out, "`setsid` has options harness9 does not know".into()),
        },
        "nice" => {
            // `nice -5 cmd`: an old spelling of the adjustment.
            let args = match args.first() {
                Some(a) if a.starts_with('-') && a[1..].parse::<i32>().is_ok() => &args[1..],
                _ => args,
            };
            match skip_flags(args, &["-n", "--adjustment"], &[]) {
                Some(rest) => inner(out, rest, extra),
                None => unseen(out, "`nice` has options harness9 does not know".into()),
            }
        }
        "stdbuf" => match skip_flags(
            args,
            &["-i", "-o", "-e", "--input", "--output", "--error"],
            &[],
        ) {
            Some(rest) => inner(out, rest, extra),
            None => unseen(out, "`stdbuf` has options harness9 does not know".into()),
        },
        "ionice" => match skip_flags(args, &["-c", "-n", "--class", "--classdata"], &['t']) {
            Some(rest) => inner(out, rest, extra),
            None => unseen(out, "`ionice` has options harness9 does not know".into()),
        },
        "timeout" => match skip_flags(args, &["-s", "-k", "--signal", "--kill-after"], &['v']) {
            // The duration, then the command.
            Some(rest) if !rest.is_empty() => inner(out, &rest[1..], extra),
            Some(_) => {}
            None => unseen(out, "`timeout` has options harness9 does not know".into()),
        },
        "env" => peel_env(args, extra, depth, out),
        "sudo" | "doas" => {
            match skip_flags(
                args,
                &[
                    "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group",
                ],
                &['A', 'b', 'E', 'H', 'k', 'K', 'n', 'P', 'S', 'B', 'N'],
            ) {
                Some(rest) => inner(out, rest, extra),
                None => unseen(out, format!("`{name}` has options harness9 does not know")),
            }
        }
        "xargs" => peel_xargs(args, depth, out),
        "eval" => line(&args.join(" "), depth, out),
        "trap" => match args.first() {
            Some(code) if !code.starts_with('-') => line(code, depth, out),
            _ => {}
        },
        "su" | "runuser" | "script" => {
            let string = args
                .iter()
                .position(|a| a == "-c" || a == "--command")
                .and_then(|i| args.get(i + 1))
                .or_else(|| {
                    args.iter()
                        .find_map(|a| a.strip_prefix("--command=").map(|_| a))
                });
            match string {
                Some(s) => line(s.strip_prefix("--command=").unwrap_or(s), depth, out),
                None if name == "runuser" => {
                    unseen(out, "`runuser` runs a command as another user".into())
                }
                None => {}
            }
        }
        "watch" => match skip_flags(
            args,
            &["-n", "-d", "--interval", "--differences"],
            &['t', 'b', 'e', 'g', 'c', 'x', 'p'],
        ) {
            Some(rest) => line(&rest.join(" "), depth, out),
            None => unseen(out, "`watch` has options harness9 does not know".into()),
        },
        "flock" => match skip_flags(
            args,
            &["-w", "-E", "--timeout", "--conflict-exit-code"],
            &['s', 'x', 'u', 'n', 'o'],
        ) {
            Some([_, flag, string, ..]) if flag == "-c" || flag == "--command" => {
                line(string, depth, out)
            }
            Some([_, rest @ ..]) => inner(out, rest, extra),
            Some([]) => {}
            None => unseen(out, "`flock` has options harness9 does not know".into()),
        },
        "find" => peel_find(args, depth, out),
        name if SHELLS.contains(&name) => peel_shell(name, args, depth, out),
        "chroot" | "unshare" | "nsenter" | "firejail" | "bwrap" | "proot" | "systemd-run"
        | "fakeroot" | "valgrind" | "gdb" | "strace" | "ltrace" | "capsh" | "setpriv"
        | "prlimit" | "sg" | "newgrp" | "dbus-run-session" | "xvfb-run" | "ssh" | "parallel"
        | "taskset" | "chrt" | "catchsegv" => unseen(
            out,
            format!("harness9 does not look inside what `{name}` runs"),
        ),
        _ => {}
    }
}

/// The words after the options: `with_value` options take the next word (or `=value`,
/// or an attached value for a short one), `flags` are short flags without a value (in
/// clusters). `None` when an option is neither. `--` ends the options.
fn skip_flags<'a>(args: &'a [String], with_value: &[&str], flags: &[char]) -> Option<&'a [String]> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            return Some(&args[i + 1..]);
        }
        if !a.starts_with('-') || a == "-" {
            return Some(&args[i..]);
        }
        if with_value.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if a.starts_with("--") {
            let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
            if a.contains('=') && with_value.contains(&name) {
                i += 1;
                continue;
            }
            return None;
        }
        // A short option with an attached value (`-n5`), or a cluster of flags.
        let short = &a[..2];
        if with_value.contains(&short) {
            i += 1;
            continue;
        }
        if a[1..].chars().all(|c| flags.contains(&c)) {
            i += 1;
            continue;
        }
        return None;
    }
    Some(&args[args.len()..])
}

/// Reads `text` as a command line and peels each of its commands.
fn line(text: &str, depth: usize, out: &mut Vec<Effective>) {
    let parsed = shell::parse(text);
    if parsed
        .hazards
        .iter()
        .any(|h| matches!(h, shell::Hazard::Unsupported { .. }))
    {
        return unseen(out, "a command string it runs cannot be read safely".into());
    }
    for command in &parsed.commands {
        peel(&command.words, ExtraArgs::None, depth + 1, out);
    }
}

fn peel_env(args: &[String], extra: ExtraArgs, depth: usize, out: &mut Vec<Effective>) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-i" | "-0" | "-v" | "--null" | "--ignore-environment" | "--debug" | "-" => i += 1,
            "-u" | "--unset" => i += 2,
            "-S" | "--split-string" => {
                let rest = args.get(i + 1..).unwrap_or_default().join(" ");
                return line(&rest, depth, out);
            }
            "-C" | "--chdir" => {
                return unseen(out, "`env -C` runs its command in another folder".into());
            }
            "--" => {
                i += 1;
                break;
            }
            _ if a.starts_with("--unset=") || a.starts_with("-u") && a.len() > 2 => i += 1,
            _ if a.starts_with("-S") || a.starts_with("--split-string=") => {
                let first = a
                    .strip_prefix("--split-string=")
                    .or_else(|| a.strip_prefix("-S"))
                    .unwrap_or_default();
                let mut rest = vec![first.to_string()];
                rest.extend(args.get(i + 1..).unwrap_or_default().iter().cloned());
                return line(&rest.join(" "), depth, out);
            }
            _ if a.starts_with('-') => {
                return unseen(
                    out,
                    format!("`env {a}` is an option harness9 does not know"),
                );
            }
            _ => break,
        }
    }
    let rest: Vec<String> = args
        .get(i..)
        .unwrap_or_default()
        .iter()
        .skip_while(|a| a.contains('=') && !a.starts_with('='))
        .cloned()
        .collect();
    if !rest.is_empty() {
        peel(&rest, extra, depth + 1, out);
    }
}

fn peel_xargs(args: &[String], depth: usize, out: &mut Vec<Effective>) {
    let with_value = [
        "-a",
        "-d",
        "-E",
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-lines",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
        "--replace",
        "--eof",
    ];
    let flags = ['0', 'r', 't', 'p', 'x', 'o', 'e', 'i', 'l'];
    let long_flags = [
        "--null",
        "--no-run-if-empty",
        "--verbose",
        "--interactive",
        "--exit",
        "--open-tty",
        "--show-limits",
    ];
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if long_flags.contains(&a.as_str()) {
            i += 1;
            continue;
        }
        if a.starts_with("--replace") || a.starts_with("--eof") || a.starts_with("--max-lines") {
            i += 1;
            continue;
        }
        break;
    }
    match skip_flags(&args[i..], &with_value, &flags) {
        Some([]) => peel(&["echo".to_string()], ExtraArgs::Unknown, depth + 1, out),
        Some(rest) => peel(rest, ExtraArgs::Unknown, depth + 1, out),
        None => unseen(out, "`xargs` has options harness9 does not know".into()),
    }
}

/// `find … -exec CMD {} ;` and its kind: each action's command.
fn peel_find(args: &[String], depth: usize, out: &mut Vec<Effective>) {
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end] != ";" && args[end] != "+" {
                end += 1;
            }
            let command = &args[start..end.min(args.len())];
            if !command.is_empty() {
                peel(command, ExtraArgs::Unknown, depth + 1, out);
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
}

/// `bash -c STRING` (options may come first, `-c` may sit in a cluster): the string.
fn peel_shell(name: &str, args: &[String], depth: usize, out: &mut Vec<Effective>) {
    if !args.iter().any(|a| short_cluster_has(a, 'c')) {
        return;
    }
    // The command string is the first word that is not an option (`-o NAME` takes one).
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
            i += 2;
        } else if (a.starts_with('-') || a.starts_with('+')) && a != "-" && a != "--" {
            i += 1;
        } else {
            if a == "--" {
                i += 1;
            }
            break;
        }
    }
    match args.get(i) {
        Some(string) => line(string, depth, out),
        None => unseen(out, format!("`{name} -c` without a command string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::shell::first_command as cmd;

    /// What every command of `line` runs.
    fn all(line: &str) -> Vec<Effective> {
        shell::parse(line)
            .commands
            .iter()
            .flat_map(effective)
            .collect()
    }

    fn seen(line: &str) -> Vec<Vec<String>> {
        all(line)
            .into_iter()
            .filter_map(|e| match e {
                Effective::Seen { words, .. } => Some(words),
                Effective::Unseen { .. } => None,
            })
            .collect()
    }

    fn unseen_of(line: &str) -> bool {
        all(line)
            .iter()
            .any(|e| matches!(e, Effective::Unseen { .. }))
    }

    #[test]
    fn every_spelling_of_rm_reaches_rm() {
        for line in [
            "/bin/rm -rf src",
            "command rm -rf src",
            "command -p rm -rf src",
            "builtin command rm -rf src",
            "env rm -rf src",
            "env -i FOO=1 rm -rf src",
            "env -u HOME rm -rf src",
            "env -S 'rm -rf src'",
            "nice -n 5 rm -rf src",
            "nice -5 rm -rf src",
            "nohup rm -rf src",
            "timeout 10 rm -rf src",
            "timeout -s KILL 10 rm -rf src",
            "stdbuf -oL rm -rf src",
            "setsid rm -rf src",
            "sudo rm -rf src",
            "sudo -u root -E rm -rf src",
            "bash -c 'rm -rf src'",
            "sh -ec 'cd x && rm -rf src'",
            "bash -o pipefail -c 'rm -rf src'",
            "eval 'rm -rf src'",
            "eval rm -rf src",
            "su -c 'rm -rf src'",
            "exec rm -rf src",
            "time rm -rf src",
            "busybox rm -rf src",
            "flock /tmp/l rm -rf src",
            "flock /tmp/l -c 'rm -rf src'",
            "watch -n 1 rm -rf src",
            "trap 'rm -rf src' EXIT",
            "bash -c \"bash -c 'rm -rf src'\"",
            "if true; then rm -rf src; fi",
            "for f in a; do rm -rf src; done",
            "{ rm -rf src; }",
            "! rm -rf src",
            "function f { rm -rf src; }",
            "f() { rm -rf src; }; f",
            "while true; do rm -rf src; done",
            "case x in a) rm -rf src;; esac",
        ] {
            let all = seen(line);
            assert!(
                all.iter().any(|w| w == &["rm", "-rf", "src"]),
                "{line}: {all:?}"
            );
        }
    }

    #[test]
    fn xargs_and_find_exec_add_unknown_arguments() {
        let e = effective(&cmd("xargs -0 rm -rf"));
        assert!(e.contains(&Effective::Seen {
            words: vec!["rm".into(), "-rf".into()],
            extra: ExtraArgs::Unknown
        }));
        let e = effective(&cmd("find . -name x -exec rm -rf {} +"));
        assert!(e.contains(&Effective::Seen {
            words: vec!["rm".into(), "-rf".into(), "{}".into()],
            extra: ExtraArgs::Unknown
        }));
        assert_eq!(seen("xargs")[1], ["echo"]);
    }

    #[test]
    fn what_cannot_be_seen_says_so() {
        for line in [
            "$CMD -rf src",
            "ssh host rm -rf /",
            "chroot /x rm -rf /",
            "env -C /elsewhere rm -rf x",
            "env --bogus rm",
            "nice --bogus rm",
            "bash -c 'echo $'\\''x'\\'''",
            "eval \"$(cat x)\"",
        ] {
            assert!(unseen_of(line), "{line}");
        }
        assert!(unseen_of("if $check; then true; fi"));
        assert!(!unseen_of("case $x in a) true;; esac"));
        assert!(!unseen_of("for f in $list; do echo; done"));
        assert!(!unseen_of("ls -la"));
        assert!(!unseen_of("bash script.sh"));
        assert!(!unseen_of("command -v cargo"));
    }
}
