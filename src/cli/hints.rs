//! The habits Codex and Claude Code users bring to the command line, answered with the
//! harness9 way in one line: their subcommands (`exec`, `resume`, `login`, `logout`,
//! parsed as hidden subcommands so `harness9 -- exec` still sends the word) and their
//! flags (recognised in clap's "unexpected argument" error). Nothing here widens what
//! runs unasked: a flag that would (`--yolo`, `--full-auto`, `--dangerously-…`) is never
//! accepted, only answered with what to type instead. Safe spellings (`-m`, `-r`,
//! `--cd`) are plain aliases in `cli.rs`. It must not read files, the environment or the
//! terminal.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// A peer's subcommand, parsed so that it can be answered (hidden from `--help`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum PeerCommand {
    /// Codex's one-shot run: `-p` here.
    #[command(hide = true)]
    Exec(PeerWords),
    /// Codex's `resume`: `--resume` and `-c` here.
    #[command(hide = true)]
    Resume(PeerWords),
    /// Codex's and Claude Code's sign-in: a key in the environment here.
    #[command(hide = true)]
    Login(PeerWords),
    /// The same, the other way.
    #[command(hide = true)]
    Logout(PeerWords),
}

/// Whatever followed a peer's subcommand.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct PeerWords {
    /// The words, flags included.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

impl PeerWords {
    /// The words when none is a flag.
    fn plain(&self) -> Option<&[String]> {
        (!self.words.is_empty() && self.words.iter().all(|w| !w.starts_with('-')))
            .then_some(self.words.as_slice())
    }
}

impl PeerCommand {
    /// What to type instead, as one line.
    pub fn hint(&self) -> String {
        match self {
            PeerCommand::Exec(words) => {
                let prompt = match words.plain() {
                    Some(words) => shell_word(&words.join(" ")),
                    None => "\"PROMPT\"".to_string(),
                };
                format!(
                    "`exec` is Codex's; harness9 runs one prompt and exits with -p: \
                     harness9 -p {prompt}"
                )
            }
            PeerCommand::Resume(words) => {
                let instead = match words.words.as_slice() {
                    [] => "harness9 --resume (pick one) or harness9 -c (the latest)".to_string(),
                    [last] if last == "--last" => "harness9 -c".to_string(),
                    [id] if !id.starts_with('-') => format!("harness9 --resume {}", shell_word(id)),
                    _ => "harness9 --resume ID, or harness9 -c for the latest".to_string(),
                };
                format!("`resume` is Codex's; to go on with a saved session: {instead}")
            }
            PeerCommand::Login(_) | PeerCommand::Logout(_) => {
                "harness9 has no sign-in: it sends the key in OPENAI_API_KEY (or the variable \
                 api_key_env names in config.toml) to the endpoint of --base-url or \
                 OPENAI_BASE_URL"
                    .to_string()
            }
        }
    }
}

/// A peer's flag and what to type instead.
struct PeerFlag {
    /// Its spellings.
    names: &'static [&'static str],
    /// The harness9 way.
    instead: &'static str,
}

/// Every peer flag answered. Those that would run more without asking point to the
/// explicit `--approval-mode full-auto`, which keeps the sandbox.
const PEER_FLAGS: &[PeerFlag] = &[
    PeerFlag {
        names: &[
            "--yolo",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-skip-permissions",
        ],
        instead: "harness9 has no switch that skips every approval: --approval-mode full-auto \
                  runs edits and commands unasked, commands still in the workspace-write \
                  sandbox (--sandbox off lifts that too)",
    },
    PeerFlag {
        names: &["--full-auto"],
        instead: "Codex's --full-auto is --approval-mode full-auto here: edits and commands \
                  run unasked, commands in the workspace-write sandbox",
    },
    PeerFlag {
        names: &["--ask-for-approval", "-a", "--permission-mode"],
        instead: "harness9 chooses what runs unasked with --approval-mode: suggest (edits and \
                  commands ask), auto-edit (edits in the project run, and read-only \
                  commands in the sandbox; Claude Code's acceptEdits), full-auto (everything runs, commands in the sandbox)",
    },
    PeerFlag {
        names: &[
            "--allowedTools",
            "--allowed-tools",
            "--disallowedTools",
            "--disallowed-tools",
        ],
        instead: "tool permissions are rules in .harness9/permissions.toml or [permissions] in \
                  config.toml (harness9 permissions list shows them; `a` or `p` at an approval \
                  adds one), or --allow RULE / --deny RULE for one run",
    },
    PeerFlag {
        names: &["--add-dir"],
        instead: "harness9 works in one project (-C DIR); more folders sandboxed commands may \
                  write go in writable_paths under [sandbox] in config.toml",
    },
    PeerFlag {
        names: &["--json"],
        instead: "print mode writes JSON with --output-format json (one result) or \
                  --output-format stream-json (every event)",
    },
    PeerFlag {
        names: &["--system-prompt"],
        instead: "project instructions go in AGENTS.md at the project's root; harness9 adds \
                  it to the system prompt at start (--append-system-prompt TEXT adds text \
                  after it for one run)",
    },
    PeerFlag {
        names: &["--mcp-config"],
        instead: "MCP servers come from harness9 mcp add NAME -- COMMAND, config.toml or the \
                  project's .mcp.json",
    },
    PeerFlag {
        names: &["--last"],
        instead: "harness9 -c goes on with the latest session",
    },
];

/// The one-line hint for a command line clap refused (`args`, the program's name
/// first), when the refusal is a habit from a peer: one of their flags, or a prompt of
/// several words without quotes.
pub fn for_error(error: &clap::Error, args: &[String]) -> Option<String> {
    let context = match error.kind() {
        ErrorKind::UnknownArgument => ContextKind::InvalidArg,
        // `harness9 fix the bug`: `fix` is the prompt, `the` is taken for a subcommand
        // (inside a subcommand, as in `harness9 skills nosuch`, clap's words stand).
        ErrorKind::InvalidSubcommand if !names_a_subcommand(args) => ContextKind::InvalidSubcommand,
        _ => return None,
    };
    let Some(ContextValue::String(arg)) = error.get(context) else {
        return None;
    };
    let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
    if !name.starts_with('-') {
        return Some(format!(
            "unexpected word {}: a prompt of several words goes in quotes, \
             harness9 \"fix the bug\" (or -p \"fix the bug\")",
            shell_word(arg)
        ));
    }
    PEER_FLAGS
        .iter()
        .find(|flag| flag.names.contains(&name))
        .map(|flag| format!("{name}: {}", flag.instead))
}

/// Whether one of `args` after the program's name is a subcommand's name.
fn names_a_subcommand(args: &[String]) -> bool {
    use clap::CommandFactory;
    let command = super::Cli::command();
    args.iter()
        .skip(1)
        .any(|arg| command.get_subcommands().any(|sub| sub.get_name() == arg))
}

/// `text` as a shell word: bare when it is plainly safe, else in single quotes.
pub fn shell_word(text: &str) -> String {
    let bare = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@".contains(c));
    if bare {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_a_shell() {
        assert_eq!(shell_word("2026-x"), "2026-x");
        assert_eq!(shell_word("fix the bug"), "'fix the bug'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn every_peer_flag_is_spelled_as_clap_reports_it() {
        for flag in PEER_FLAGS {
            for name in flag.names {
                assert!(name.starts_with('-'), "{name}");
                assert!(!flag.instead.contains("  "), "{}", flag.instead);
            }
        }
    }
}
