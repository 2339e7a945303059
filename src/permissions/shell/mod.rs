//! A careful reader of bash command lines, for approvals: it splits a line into its
//! simple commands (the words of each, after quote removal, its leading variable
//! assignments and its redirections) and names every construct whose effect cannot be
//! read off the text: command and process substitution, here-documents, control
//! structures, a command name that comes from a variable or a glob, wrappers that run
//! another command (`eval`, `sudo`, `xargs`, `bash -c`, `find -exec`, …) and
//! assignments that make a program run other code (`LD_PRELOAD=…`). The other way round,
//! `quote_unless_plain` writes a word so that such a reader reads it back unchanged.
//!
//! It is deliberately conservative: anything it does not understand is a [`Hazard`],
//! and a line with a hazard is never approved by a rule, only by a person. It does not
//! expand anything, never runs anything, and must not know rules, tools or the project.

mod reader;

use reader::Reader;

/// What a command line is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Every simple command, in order, including those inside substitutions and
    /// groups (so a deny rule sees them too).
    pub commands: Vec<SimpleCommand>,
    /// Everything that keeps a rule from deciding about the line.
    pub hazards: Vec<Hazard>,
}

impl Parsed {
    /// True when nothing in the line hides what it runs.
    pub fn is_plain(&self) -> bool {
        self.hazards.is_empty()
    }
}

/// One simple command: `NAME=value cmd arg… >file`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` assignments (name, value after quote removal).
    pub assignments: Vec<(String, String)>,
    /// The command name and its arguments, after quote removal.
    pub words: Vec<String>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
}

impl SimpleCommand {
    /// The command name, if there is one.
    pub fn name(&self) -> Option<&str> {
        self.words.first().map(String::as_str)
    }
}

/// A redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// Which way the data flows.
    pub direction: Direction,
    /// The file named (after quote removal).
    pub target: String,
}

/// Which way a redirection moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `<file`: reads the file.
    Read,
    /// `>file`, `>>file`, `&>file`, `<>file`: writes (creates) the file.
    Write,
}

/// A construct whose effect a rule cannot judge from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hazard {
    /// `$(…)` or `` `…` ``: the output of a command becomes part of the line.
    CommandSubstitution,
    /// `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// `<<EOF`: a here-document.
    HereDocument,
    /// `if`, `for`, `while`, `case`, function definitions, `[[ ]]`, `(( ))`, `$(( ))`.
    ControlStructure {
        /// The keyword or construct met.
        what: String,
    },
    /// The command name is not a literal word (`$cmd`, `*.sh`, `{a,b}`).
    ComputedCommandName {
        /// The word as written.
        word: String,
    },
    /// A command that runs another command or code given to it (`eval`, `sudo`,
    /// `xargs`, `bash -c`, `find -exec`, `git -c`, `rg --pre`, …).
    RunsOtherCode {
        /// The command and the part that makes it so.
        what: String,
    },
    /// An assignment that makes programs load or run other code (`LD_PRELOAD`, `PATH`,
    /// `BASH_ENV`, …).
    DangerousAssignment {
        /// The variable.
        name: String,
    },
    /// `</dev/tcp/HOST/PORT` and the like: bash opens a network connection.
    NetworkRedirection {
        /// The target as written.
        target: String,
    },
    /// Quoting or syntax this reader does not handle (an unterminated quote, `$'…'`,
    /// a file-descriptor variable redirect, …).
    Unsupported {
        /// What it was.
        what: String,
    },
}

impl Hazard {
    /// A few words for a person: why the line can only be approved once.
    pub fn describe(&self) -> String {
        match self {
            Hazard::CommandSubstitution => "it uses command substitution `$(…)`".into(),
            Hazard::ProcessSubstitution => "it uses process substitution `<(…)`".into(),
            Hazard::HereDocument => "it has a here-document".into(),
            Hazard::ControlStructure { what } => format!("it has shell control flow (`{what}`)"),
            Hazard::ComputedCommandName { word } => {
                format!("its command name `{word}` is computed when it runs")
            }
            Hazard::RunsOtherCode { what } => format!("`{what}` runs other code"),
            Hazard::DangerousAssignment { name } => {
                format!("it sets {name}, which can make programs run other code")
            }
            Hazard::NetworkRedirection { target } => {
                format!("its redirection to {target} opens a network connection")
            }
            Hazard::Unsupported { what } => format!("harness9 cannot read {what} safely"),
        }
    }
}

/// Reads a command line.
pub fn parse(line: &str) -> Parsed {
    let mut parsed = Parsed::default();
    Reader::new(line, &mut parsed).list(None);
    dedup(&mut parsed.hazards);
    parsed
}

fn dedup(hazards: &mut Vec<Hazard>) {
    let mut seen: Vec<Hazard> = Vec::with_capacity(hazards.len());
    hazards.retain(|h| {
        if seen.contains(h) {
            false
        } else {
            seen.push(h.clone());
            true
        }
    });
}

/// Words that start a control structure or are reserved where a command name goes.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "coproc", "[[", "]]", "{", "}", "!", "in",
];

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
];

/// Shells: with `-c` they run the string they are given.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash",
];

/// Variables that make programs load or run other code.
fn dangerous_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "IFS",
        "PROMPT_COMMAND",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "GIT_PAGER",
        "LESSOPEN",
        "LESSCLOSE",
        "RUSTC_WRAPPER",
        "RIPGREP_CONFIG_PATH",
        "RUSTC",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "JAVA_TOOL_OPTIONS",
        "HOME",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_")
        || name.starts_with("BASH_FUNC_")
}

/// `NAME=value` with a valid variable name.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `word` as `sh` reads it back: as it is when every character is `plain` (and it is not
/// empty), else in single quotes, each `'` written `'\''`.
pub fn quote_unless_plain(word: &str, plain: impl Fn(char) -> bool) -> String {
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `find` actions that run a program, delete or write a file (what makes `find` more than
/// a read).
pub(super) const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Why a simple command runs code other than itself, if it does.
fn runs_other_code(words: &[String]) -> Option<String> {
    let name = words.first()?.as_str();
    // `/usr/bin/sudo` is sudo; `dir/.` is a path, not the `.` builtin.
    let base = match name.rsplit('/').next() {
        Some(".") | None => name,
        Some(base) => base,
    };
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
    if SHELLS.contains(&base) && args.iter().any(|a| is_short_flag_with(a, 'c')) {
        return Some(format!("{base} -c"));
    }
    match base {
        "find" => args
            .iter()
            .find(|a| FIND_ACTIONS.contains(&a.as_str()))
            .map(|a| format!("find {a}")),
        "fd" | "fdfind" => args
            .iter()
            .find(|a| matches!(a.as_str(), "-x" | "-X" | "--exec" | "--exec-batch"))
            .map(|a| format!("{base} {a}")),
        "rg" => args
            .iter()
            .find(|a| a.starts_with("--pre"))
            .map(|a| format!("rg {a}")),
        "git" => {
            // Options before the subcommand can point git at other programs or config.
            for a in args {
                if !a.starts_with('-') {
                    break;
                }
                if a == "-c"
                    || a.starts_with("--config-env")
                    || a.starts_with("--exec-path")
                    || a == "-C"
                    || a.starts_with("--git-dir")
                    || a.starts_with("--work-tree")
                {
                    return Some(format!("git {a}"));
                }
            }
            None
        }
        _ => None,
    }
}

/// `-c`, or a cluster of short flags containing `c` (`-ec`, `-xc`).
fn is_short_flag_with(arg: &str, flag: char) -> bool {
    arg.len() >= 2
        && arg.starts_with('-')
        && !arg.starts_with("--")
        && arg[1..].chars().all(|c| c.is_ascii_alphabetic())
        && arg[1..].contains(flag)
}

/// The first simple command of `line`, for tests; panics when there is none.
#[cfg(test)]
pub(crate) fn first_command(line: &str) -> SimpleCommand {
    parse(line).commands.remove(0)
}

#[cfg(test)]
mod tests;
