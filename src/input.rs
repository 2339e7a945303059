//! The one input router shared by the TUI, the REPL and pipe mode: turns a line of user
//! input into a built-in command, a skill invocation or a plain prompt, and offers
//! completions for `/` commands. It knows the session's slash commands as plain data
//! ([`SlashCommands`]: the skills and the MCP servers' prompts, which frontends receive
//! from the agent) and nothing of the catalog, the servers, terminals, the agent loop
//! or the model.
//!
//! Rules, in order:
//! 1. A blank line is [`Routed::Empty`]; a line whose first non-blank character is `!`
//!    is a shell command ([`Routed::Shell`], the rest trimmed; a bare `!` is an error);
//!    one whose first non-blank character is not `/` is a [`Routed::Prompt`], unchanged.
//! 2. `/name` where `name` is a built-in ([`BUILTINS`]) runs the built-in: built-ins
//!    take precedence over a skill of the same name (that skill stays reachable as
//!    `/skill NAME`).
//! 3. `/skill NAME args` and `/NAME args` invoke a skill: the prompt is the body with
//!    templates expanded, or body + `"\n\n"` + args (see [`crate::skills::template`]).
//!    Skills with `user-invocable: false` cannot be slash-invoked.
//! 4. `/SERVER:PROMPT args`, where SERVER is one of the session's MCP servers, gets that
//!    server's prompt ([`Invocation::McpPrompt`]); its text is never expanded.
//! 5. A first word holding a second `/` (`/usr/bin/foo is broken`, `//x`) is a path,
//!    not a command: the line is a prompt.
//! 6. Anything else is an unknown command: [`Routed::Error`] with close matches.

use std::path::PathBuf;

use crate::protocol::{BUILTINS, is_builtin};
use crate::protocol::{
    ExportFormat, Invocation, McpUse, SkillInvocation, SlashCommands, SlashSkill,
};

/// What `/export` accepts, for its error messages.
const EXPORT_USAGE: &str = "usage: /export [md|json] [FILE] (Markdown by default; FILE defaults \
     to harness9-session-ID.md in the working directory)";

/// What a bare `!` says.
const SHELL_USAGE: &str = "`!` runs a shell command: type it after the `!` (`!ls`); it is \
     judged like the model's bash calls, and its output goes to the model with your next message";

/// A built-in command for the frontend to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Builtin {
    /// `/help`.
    Help,
    /// `/skills`.
    Skills,
    /// `/skills reload`: look for new, changed and removed skills now.
    SkillsReload,
    /// `/clear`.
    Clear,
    /// `/exit` or `/quit`.
    Exit,
    /// `/model` (show) or `/model NAME` (switch).
    Model(Option<String>),
    /// `/effort` (show) or `/effort LEVEL` (set the reasoning effort).
    Effort(Option<crate::protocol::Effort>),
    /// `/usage`.
    Usage,
    /// `/status`: model, provider, window, approvals, sandbox, session, tokens.
    Status,
    /// `/context`: instruction files, skill roots, MCP index, what a request costs.
    Context,
    /// `/mcp`.
    Mcp,
    /// `/plugins`.
    Plugins,
    /// `/hooks`: every hook, in force or not.
    Hooks,
    /// `/undo`.
    Undo,
    /// `/approvals` (show the mode) or `/approvals MODE` (switch).
    Approvals(Option<crate::protocol::ApprovalMode>),
    /// `/plan [task]`: plan mode, and with a task, the task sent as a prompt in it.
    Plan(Option<String>),
    /// `/diff`.
    Diff,
    /// `/compact [focus]`.
    Compact(Option<String>),
    /// `/resume` (choose from this project's saved sessions) or `/resume ID` (an id or
    /// a unique prefix).
    Resume(Option<String>),
    /// `/permissions` (list the rules) or `/permissions remove N`.
    Permissions(PermissionsCommand),
    /// `/export [md|json] [FILE]`: write the current session to a file.
    Export {
        /// Markdown (the default) or JSON.
        format: ExportFormat,
        /// Where; `None` lets the agent choose (the project directory).
        path: Option<PathBuf>,
    },
}

/// What `/permissions` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionsCommand {
    /// List every rule in force with its number and origin.
    List,
    /// Remove rule `number`.
    Remove {
        /// As listed.
        number: usize,
    },
}

/// What a line of input means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routed {
    /// Nothing to do (blank line).
    Empty,
    /// Send this text to the model as the user's message.
    Prompt(String),
    /// Run this skill or MCP prompt: frontends send it as
    /// [`Op::Invoke`](crate::protocol::Op::Invoke).
    Invoke(Invocation),
    /// Run this command line in the shell (`!cmd`): frontends send it as
    /// [`Op::Shell`](crate::protocol::Op::Shell).
    Shell(String),
    /// Carry out a built-in command.
    Builtin(Builtin),
    /// Show this message to the user (stderr or a notice); the session goes on.
    Error(String),
}

/// Routes one line of input; `commands` are the session's skills and MCP prompts.
pub fn route(line: &str, commands: &SlashCommands) -> Routed {
    let line = line.trim_end_matches(['\n', '\r']);
    let trimmed = line.trim_start();
    if trimmed.trim_end().is_empty() {
        return Routed::Empty;
    }
    if let Some(command) = trimmed.strip_prefix('!') {
        let command = command.trim();
        if command.is_empty() {
            return Routed::Error(SHELL_USAGE.to_string());
        }
        return Routed::Shell(command.to_string());
    }
    let Some(command) = trimmed.strip_prefix('/') else {
        return Routed::Prompt(line.to_string());
    };
    let (word, rest) = split_word(command);
    if word.is_empty() {
        return Routed::Error("`/` must be followed by a command; type /help".to_string());
    }
    if word == "init" {
        return Routed::Invoke(Invocation::Init {
            args: rest.trim().to_string(),
        });
    }
    let builtin = match word {
        "help" => Some(Builtin::Help),
        "skills" => match rest.trim() {
            "" => Some(Builtin::Skills),
            "reload" => Some(Builtin::SkillsReload),
            other => {
                return Routed::Error(format!(
                    "unknown /skills argument `{other}`; usage: /skills [reload]"
                ));
            }
        },
        "clear" => Some(Builtin::Clear),
        "exit" | "quit" => Some(Builtin::Exit),
        "usage" => Some(Builtin::Usage),
        "status" => Some(Builtin::Status),
        "context" => Some(Builtin::Context),
        "mcp" => Some(Builtin::Mcp),
        "plugins" => Some(Builtin::Plugins),
        "hooks" => Some(Builtin::Hooks),
        "undo" => Some(Builtin::Undo),
        "approvals" => match rest.trim() {
            "" => Some(Builtin::Approvals(None)),
            "suggest" => Some(Builtin::Approvals(Some(
                crate::protocol::ApprovalMode::Suggest,
            ))),
            "auto-edit" => Some(Builtin::Approvals(Some(
                crate::protocol::ApprovalMode::AutoEdit,
            ))),
            "full-auto" => Some(Builtin::Approvals(Some(
                crate::protocol::ApprovalMode::FullAuto,
            ))),
            "plan" => Some(Builtin::Approvals(Some(
                crate::protocol::ApprovalMode::Plan,
            ))),
            other => {
                return Routed::Error(format!(
                    "unknown approval mode `{other}`; usage: /approvals suggest|auto-edit|full-auto|plan"
                ));
            }
        },
        "plan" => Some(Builtin::Plan((!rest.is_empty()).then(|| rest.to_string()))),
        "diff" => Some(Builtin::Diff),
        "compact" => Some(Builtin::Compact(
            (!rest.is_empty()).then(|| rest.to_string()),
        )),
        "model" => Some(Builtin::Model((!rest.is_empty()).then(|| rest.to_string()))),
        "effort" => match rest.trim() {
            "" => Some(Builtin::Effort(None)),
            level => match crate::protocol::Effort::parse(level) {
                Some(effort) => Some(Builtin::Effort(Some(effort))),
                None => {
                    return Routed::Error(format!(
                        "unknown effort `{level}`; usage: /effort low|medium|high|off"
                    ));
                }
            },
        },
        "resume" => Some(Builtin::Resume(
            (!rest.is_empty()).then(|| rest.to_string()),
        )),
        "permissions" => match permissions_args(rest) {
            Ok(command) => Some(Builtin::Permissions(command)),
            Err(message) => return Routed::Error(message),
        },
        "export" => match export_args(rest) {
            Ok(export) => Some(export),
            Err(message) => return Routed::Error(message),
        },
        _ => None,
    };
    if let Some(b) = builtin {
        return Routed::Builtin(b);
    }
    if word == "skill" {
        let (name, args) = split_word(rest);
        if name.is_empty() {
            return Routed::Error("usage: /skill NAME [args] (/skills lists them)".to_string());
        }
        return match commands.skill(name) {
            Some(skill) => invoke(skill, args),
            None => Routed::Error(unknown(&format!("no skill named `{name}`"), name, commands)),
        };
    }
    if let Some(skill) = commands.skill(word) {
        return invoke(skill, rest);
    }
    if let Some((server, prompt)) = word.split_once(':')
        && !word.contains('/')
        && commands.mcp_server(server).is_some()
    {
        return mcp_prompt(server, prompt, rest, commands);
    }
    if word.contains('/') {
        return Routed::Prompt(line.to_string());
    }
    Routed::Error(unknown(
        &format!("unknown command `/{word}`"),
        word,
        commands,
    ))
}

/// `/permissions`'s arguments: nothing, or `remove N`.
fn permissions_args(rest: &str) -> Result<PermissionsCommand, String> {
    const USAGE: &str = "usage: /permissions (list the rules) or /permissions remove N";
    let (word, after) = split_word(rest);
    match word {
        "" | "list" => Ok(PermissionsCommand::List),
        "remove" | "rm" => match after.trim().parse::<usize>() {
            Ok(number) if number > 0 => Ok(PermissionsCommand::Remove { number }),
            _ => Err(format!("`{}` is not a rule number; {USAGE}", after.trim())),
        },
        other => Err(format!("unknown /permissions argument `{other}`; {USAGE}")),
    }
}

/// `/export`'s arguments: an optional format (`md`, `markdown` or `json`), then an
/// optional file. A first word that looks like a file (it holds a `.` or a `/`) is the
/// file, and a `.json` file is written as JSON; any other first word is a format, and
/// an unknown one is an error.
fn export_args(rest: &str) -> Result<Builtin, String> {
    let (word, after) = split_word(rest);
    let named = match word.to_ascii_lowercase().as_str() {
        "" => return Ok(export(ExportFormat::Markdown, "")),
        "md" | "markdown" => Some(ExportFormat::Markdown),
        "json" => Some(ExportFormat::Json),
        _ => None,
    };
    match named {
        Some(format) => Ok(export(format, after)),
        None if word.contains(['.', '/']) => {
            let format = if word.to_ascii_lowercase().ends_with(".json") && after.is_empty() {
                ExportFormat::Json
            } else {
                ExportFormat::Markdown
            };
            Ok(export(format, rest))
        }
        None => Err(format!("unknown export format `{word}`; {EXPORT_USAGE}")),
    }
}

fn export(format: ExportFormat, path: &str) -> Builtin {
    let path = path.trim();
    Builtin::Export {
        format,
        path: (!path.is_empty()).then(|| PathBuf::from(path)),
    }
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

fn invoke(skill: &SlashSkill, args: &str) -> Routed {
    if skill.invocation != SkillInvocation::Slash {
        return Routed::Error(format!(
            "skill `{}` cannot be run as a slash command (it sets `user-invocable: false`); \
             the model loads it when needed",
            skill.name
        ));
    }
    Routed::Invoke(Invocation::Skill {
        name: skill.name.clone(),
        args: args.to_string(),
    })
}

/// `/SERVER:PROMPT args`: the prompt of a usable server, or why not.
fn mcp_prompt(server: &str, prompt: &str, args: &str, commands: &SlashCommands) -> Routed {
    if commands
        .mcp_server(server)
        .is_none_or(|s| s.usable != McpUse::Usable)
    {
        return Routed::Error(format!(
            "MCP server `{server}` is not in use in this session (`harness9 mcp list` says why)"
        ));
    }
    if prompt.is_empty() {
        let known: Vec<String> = commands
            .mcp_prompts
            .iter()
            .filter(|p| p.server == server)
            .map(|p| format!("/{}:{}", p.server, p.name))
            .collect();
        return Routed::Error(format!(
            "usage: /{server}:PROMPT [args]; known prompts: {}",
            if known.is_empty() {
                "none yet (they are learnt when the server first starts)".to_string()
            } else {
                known.join(", ")
            }
        ));
    }
    Routed::Invoke(Invocation::McpPrompt {
        server: server.to_string(),
        prompt: prompt.to_string(),
        args: args.to_string(),
    })
}

impl Routed {
    /// The operation a frontend sends for a prompt or a skill (`None` for the rest);
    /// `origin` says whether the user typed the line or it was piped in (a piped
    /// prompt's `@path` mentions are never read).
    pub fn to_op(&self, origin: crate::protocol::InputOrigin) -> Option<crate::protocol::Op> {
        match self {
            Routed::Prompt(text) => Some(crate::protocol::Op::UserInput {
                text: text.clone(),
                origin,
                piped: None,
                images: Vec::new(),
            }),
            Routed::Invoke(invocation) => Some(crate::protocol::Op::Invoke(invocation.clone())),
            Routed::Shell(command) => Some(crate::protocol::Op::Shell {
                command: command.clone(),
            }),
            Routed::Empty | Routed::Builtin(_) | Routed::Error(_) => None,
        }
    }
}

fn unknown(what: &str, word: &str, commands: &SlashCommands) -> String {
    let matches = close_matches(word, commands);
    if matches.is_empty() {
        format!("{what}; type /help for commands, /skills for skills")
    } else {
        let list: Vec<String> = matches.iter().map(|m| format!("/{m}")).collect();
        format!(
            "{what}. Did you mean {}? (/help lists commands, /skills lists skills)",
            list.join(", ")
        )
    }
}

/// Up to five command or skill names close to `word`: prefixes first, then by edit
/// distance (transpositions count once).
pub fn close_matches(word: &str, commands: &SlashCommands) -> Vec<String> {
    let w = word.to_lowercase();
    // One slip (a letter wrong, missing, extra or two swapped) for a short word, two
    // for a long one: `/init` is two letters from `/exit` and must not be taken for it.
    let limit = match w.chars().count() {
        0..=7 => 1,
        _ => 2,
    };
    let mut scored: Vec<(usize, String)> = BUILTINS
        .iter()
        .map(|(n, _)| *n)
        .chain(commands.user_invocable_names())
        .filter_map(|name| {
            let n = name.to_lowercase();
            let d = if n.starts_with(&w) || (w.len() >= 3 && w.starts_with(&n)) {
                0
            } else {
                edit_distance(&w, &n)
            };
            (d <= limit).then(|| (d, name.to_string()))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

/// Optimal string alignment distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Completions for what the user typed after `/` (a leading `/` is ignored): built-ins
/// first (in [`BUILTINS`] order), then slash-invocable skills by name, as (name without
/// `/`, one-line description), then MCP servers' prompts known so far as
/// `SERVER:PROMPT` (with their arguments, required ones starred). After `skill ` it
/// completes skill names, returned as `skill NAME`. Nothing once arguments are being
/// typed.
pub fn completions(prefix: &str, commands: &SlashCommands) -> Vec<(String, String)> {
    let p = prefix.strip_prefix('/').unwrap_or(prefix);
    if let Some(q) = p.strip_prefix("skill ") {
        let q = q.trim_start();
        if q.contains(char::is_whitespace) {
            return Vec::new();
        }
        return slash_skills(commands)
            .filter(|s| s.name.starts_with(q))
            .map(|s| (format!("skill {}", s.name), s.description.clone()))
            .collect();
    }
    if p.contains(char::is_whitespace) {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = BUILTINS
        .iter()
        .filter(|(n, _)| n.starts_with(p))
        .map(|(n, d)| (n.to_string(), d.to_string()))
        .collect();
    out.extend(
        slash_skills(commands)
            .filter(|s| s.name.starts_with(p) && !is_builtin(&s.name))
            .map(|s| (s.name.clone(), s.description.clone())),
    );
    for prompt in &commands.mcp_prompts {
        let name = format!("{}:{}", prompt.server, prompt.name);
        if !name.starts_with(p) {
            continue;
        }
        let args: Vec<String> = prompt
            .arguments
            .iter()
            .map(|a| {
                if a.required {
                    format!("{}*", a.name)
                } else {
                    a.name.clone()
                }
            })
            .collect();
        let mut description =
            crate::safe_text::neutralize(prompt.description.lines().next().unwrap_or(""))
                .into_owned();
        if !args.is_empty() {
            description.push_str(&format!(" [{}]", args.join(" ")));
        }
        out.push((name, format!("MCP {description}").trim_end().to_string()));
    }
    out
}

/// The skills a user can run as `/name`, in order.
fn slash_skills(commands: &SlashCommands) -> impl Iterator<Item = &SlashSkill> {
    commands
        .skills
        .iter()
        .filter(|s| s.invocation == SkillInvocation::Slash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{Catalog, invocation_prompt};
    use crate::test_support::project_with;

    /// The slash commands of `catalog`'s skills, with no MCP servers.
    fn commands(catalog: &Catalog) -> SlashCommands {
        SlashCommands {
            skills: crate::skills::listing::slash_skills(catalog),
            ..SlashCommands::default()
        }
    }

    /// Routing with no MCP servers (their prompts have tests of their own).
    fn route(line: &str, catalog: &Catalog) -> Routed {
        super::route(line, &commands(catalog))
    }

    /// Completions with no MCP servers.
    fn completions(prefix: &str, catalog: &Catalog) -> Vec<(String, String)> {
        super::completions(prefix, &commands(catalog))
    }

    #[test]
    fn approvals_shows_or_switches_the_mode() {
        let catalog = Catalog::empty();
        assert_eq!(
            route("/approvals", &catalog),
            Routed::Builtin(Builtin::Approvals(None))
        );
        assert_eq!(
            route("/approvals full-auto", &catalog),
            Routed::Builtin(Builtin::Approvals(Some(
                crate::protocol::ApprovalMode::FullAuto
            )))
        );
        assert_eq!(
            route("/approvals plan", &catalog),
            Routed::Builtin(Builtin::Approvals(Some(
                crate::protocol::ApprovalMode::Plan
            )))
        );
        assert_eq!(
            route("/plan", &catalog),
            Routed::Builtin(Builtin::Plan(None))
        );
        assert_eq!(
            route("/plan add a cache to the parser", &catalog),
            Routed::Builtin(Builtin::Plan(Some("add a cache to the parser".into())))
        );
        let Routed::Error(e) = route("/approvals yolo", &catalog) else {
            panic!("an unknown mode is an error")
        };
        assert!(e.contains("unknown approval mode `yolo`"), "{e}");
    }

    /// The project's skills: two for everyone, one named like a built-in, one for the
    /// model only.
    const SKILLS: &[(&str, &str)] = &[
        (
            "skills/go-refactor/SKILL.md",
            "---\nname: go-refactor\ndescription: Use when refactoring Go code\n---\n\nRefactor.\n",
        ),
        (
            "skills/fix-issue/SKILL.md",
            "---\nname: fix-issue\ndescription: Fix an issue\n---\nFix issue $ARGUMENTS[0] in ${SKILL_DIR}, cost $5.00\n",
        ),
        (
            "skills/help/SKILL.md",
            "---\nname: help\ndescription: A skill named like a built-in\n---\nSkill help body\n",
        ),
        (
            "skills/background/SKILL.md",
            "---\nname: background\ndescription: Model only\nuser-invocable: false\n---\nbg\n",
        ),
    ];

    fn catalog() -> (tempfile::TempDir, Catalog) {
        project_with(SKILLS)
    }

    fn error(r: Routed) -> String {
        match r {
            Routed::Error(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn blank_and_plain_lines() {
        let (_t, c) = catalog();
        assert_eq!(route("", &c), Routed::Empty);
        assert_eq!(route("   \n", &c), Routed::Empty);
        assert_eq!(
            route("fix the test\n", &c),
            Routed::Prompt("fix the test".into())
        );
        assert_eq!(
            route("a/b is /odd", &c),
            Routed::Prompt("a/b is /odd".into())
        );
    }

    #[test]
    fn a_bang_line_is_a_shell_command_and_a_bare_bang_runs_nothing() {
        let c = Catalog::empty();
        assert_eq!(route("!ls -la\n", &c), Routed::Shell("ls -la".into()));
        assert_eq!(
            route("  ! git status ", &c),
            Routed::Shell("git status".into())
        );
        assert_eq!(
            route("!ls", &c).to_op(crate::protocol::InputOrigin::Typed),
            Some(crate::protocol::Op::Shell {
                command: "ls".into()
            })
        );
        for bare in ["!", "  !  ", "!\n"] {
            let e = error(route(bare, &c));
            assert!(e.contains("runs a shell command"), "{e}");
        }
        // `!` later in a line is plain text.
        assert_eq!(route("fix it!", &c), Routed::Prompt("fix it!".into()));
    }

    #[test]
    fn builtins() {
        let (_t, c) = catalog();
        assert_eq!(route("/help", &c), Routed::Builtin(Builtin::Help));
        assert_eq!(route("  /skills  ", &c), Routed::Builtin(Builtin::Skills));
        assert_eq!(route("/clear", &c), Routed::Builtin(Builtin::Clear));
        assert_eq!(route("/exit", &c), Routed::Builtin(Builtin::Exit));
        assert_eq!(route("/quit", &c), Routed::Builtin(Builtin::Exit));
        assert_eq!(route("/usage", &c), Routed::Builtin(Builtin::Usage));
        assert_eq!(
            route("/compact", &c),
            Routed::Builtin(Builtin::Compact(None))
        );
        assert_eq!(
            route("/compact keep the parser plan", &c),
            Routed::Builtin(Builtin::Compact(Some("keep the parser plan".into())))
        );
        assert_eq!(route("/model", &c), Routed::Builtin(Builtin::Model(None)));
        assert_eq!(route("/effort", &c), Routed::Builtin(Builtin::Effort(None)));
        assert_eq!(
            route("/effort High", &c),
            Routed::Builtin(Builtin::Effort(Some(crate::protocol::Effort::High)))
        );
        assert_eq!(
            route("/effort off", &c),
            Routed::Builtin(Builtin::Effort(Some(crate::protocol::Effort::Off)))
        );
        assert!(
            matches!(route("/effort max", &c), Routed::Error(e) if e.contains("low|medium|high|off"))
        );
        assert_eq!(
            route("/model  gpt-4o-mini ", &c),
            Routed::Builtin(Builtin::Model(Some("gpt-4o-mini".into())))
        );
        assert_eq!(route("/resume", &c), Routed::Builtin(Builtin::Resume(None)));
        assert_eq!(
            route("/resume  20261123-17 ", &c),
            Routed::Builtin(Builtin::Resume(Some("20261123-17".into())))
        );
    }

    fn export_of(line: &str) -> (ExportFormat, Option<PathBuf>) {
        let (_t, c) = catalog();
        match route(line, &c) {
            Routed::Builtin(Builtin::Export { format, path }) => (format, path),
            other => panic!("{line}: expected /export, got {other:?}"),
        }
    }

    #[test]
    fn export_takes_an_optional_format_then_an_optional_file() {
        use ExportFormat::{Json, Markdown};
        assert_eq!(export_of("/export"), (Markdown, None));
        let empty = Catalog::default();
        assert_eq!(
            route("/permissions", &empty),
            Routed::Builtin(Builtin::Permissions(PermissionsCommand::List))
        );
        assert_eq!(
            route("/permissions remove 3", &empty),
            Routed::Builtin(Builtin::Permissions(PermissionsCommand::Remove {
                number: 3
            }))
        );
        assert!(matches!(
            route("/permissions remove x", &empty),
            Routed::Error(_)
        ));
        for (line, format, path) in [
            ("/export md", Markdown, None),
            ("/export JSON", Json, None),
            (
                "/export json out/session.txt",
                Json,
                Some("out/session.txt"),
            ),
            (
                "/export markdown my notes.md",
                Markdown,
                Some("my notes.md"),
            ),
            // A file alone: its extension chooses JSON, anything else is Markdown.
            ("/export run.json", Json, Some("run.json")),
            ("/export ./review.md", Markdown, Some("./review.md")),
        ] {
            assert_eq!(export_of(line), (format, path.map(PathBuf::from)), "{line}");
        }
        let (_t, c) = catalog();
        let e = error(route("/export html page.html", &c));
        assert!(
            e.starts_with("unknown export format `html`; usage: /export [md|json] [FILE]"),
            "{e}"
        );
    }

    fn prompt_of(routed: Routed, c: &Catalog) -> String {
        let Routed::Invoke(Invocation::Skill { name, args }) = routed else {
            panic!("not a skill: {routed:?}")
        };
        invocation_prompt(c.get(&name).unwrap(), &args).unwrap()
    }

    #[test]
    fn skill_invocations_append_or_substitute_arguments() {
        let (t, c) = catalog();
        let expected = Routed::Invoke(Invocation::Skill {
            name: "go-refactor".into(),
            args: "clean main.go".into(),
        });
        assert_eq!(route("/go-refactor clean main.go", &c), expected);
        assert_eq!(route("/skill go-refactor   clean main.go\n", &c), expected);
        assert_eq!(prompt_of(expected, &c), "Refactor.\n\nclean main.go");
        assert_eq!(prompt_of(route("/go-refactor", &c), &c), "Refactor.");
        let dir = t.path().join("skills/fix-issue");
        assert_eq!(
            prompt_of(route("/fix-issue 42", &c), &c),
            format!("Fix issue 42 in {}, cost $5.00", dir.display())
        );
        assert_eq!(
            route("/fix-issue 42", &c).to_op(crate::protocol::InputOrigin::Typed),
            Some(crate::protocol::Op::Invoke(Invocation::Skill {
                name: "fix-issue".into(),
                args: "42".into()
            }))
        );
    }

    #[test]
    fn builtins_win_over_skills_which_stay_reachable() {
        let (_t, c) = catalog();
        assert_eq!(route("/help", &c), Routed::Builtin(Builtin::Help));
        assert_eq!(prompt_of(route("/skill help", &c), &c), "Skill help body");
    }

    #[test]
    fn user_invocable_false_cannot_be_slash_invoked() {
        let (_t, c) = catalog();
        assert!(error(route("/background", &c)).contains("user-invocable: false"));
        assert!(error(route("/skill background x", &c)).contains("user-invocable: false"));
    }

    #[test]
    fn unknown_commands_suggest_close_matches() {
        let (_t, c) = catalog();
        let e = error(route("/go-refactr main.go", &c));
        assert!(
            e.starts_with("unknown command `/go-refactr`. Did you mean /go-refactor?"),
            "{e}"
        );
        let e = error(route("/hlep", &c));
        assert!(e.contains("/help"), "{e}");
        let e = error(route("/mod", &c));
        assert!(e.contains("/model"), "{e}");
        let e = error(route("/zzzzzz", &c));
        assert!(e.contains("type /help"), "{e}");
        // Only close names: two letters changed in a short word is another word.
        let e = error(route("/iris", &c));
        assert!(
            !e.contains("/exit") && !e.contains("/init") && e.contains("type /help"),
            "{e}"
        );
        let e = error(route("/exti", &c));
        assert!(e.contains("/exit"), "{e}");
        let e = error(route("/compcat", &c));
        assert!(e.contains("/compact"), "{e}");
        let e = error(route("/skill go-ref", &c));
        assert!(
            e.contains("no skill named `go-ref`") && e.contains("/go-refactor"),
            "{e}"
        );
        assert!(error(route("/skill", &c)).starts_with("usage: /skill NAME"));
        assert!(error(route("/", &c)).contains("type /help"));
        assert!(!error(route("/background-x", &c)).contains("Did you mean"));
    }

    #[test]
    fn names_that_cannot_be_invoked_are_never_suggested_or_completed() {
        let invalid: &[(&str, &str)] = &[
            (
                "skills/spaces/SKILL.md",
                "---\nname: Bad Name With Spaces\ndescription: d\n---\nbody\n",
            ),
            (
                "skills/dotdot/SKILL.md",
                "---\nname: ../x\ndescription: d\n---\nbody\n",
            ),
        ];
        let (_tmp, c) = project_with(&[SKILLS, invalid].concat());
        assert_eq!(c.invalid().len(), 2);
        let e = error(route("/Bad", &c));
        assert!(!e.contains("Bad Name"), "{e}");
        assert!(completions("/Ba", &c).is_empty());
        assert!(completions("/..", &c).is_empty());
        assert!(
            !completions("/skill ", &c)
                .iter()
                .any(|(n, _)| n.contains("Bad") || n.contains(".."))
        );
        assert_eq!(route("/../x go", &c), Routed::Prompt("/../x go".into()));
        assert!(error(route("/skill ../x", &c)).contains("no skill named `../x`"));
    }

    #[test]
    fn path_like_first_words_are_prompts() {
        let (_t, c) = catalog();
        assert_eq!(
            route("/usr/bin/foo is broken", &c),
            Routed::Prompt("/usr/bin/foo is broken".into())
        );
        assert_eq!(route("//comment", &c), Routed::Prompt("//comment".into()));
        assert!(matches!(route("/usr is broken", &c), Routed::Error(_)));
    }

    #[test]
    fn completion_lists_builtins_then_invocable_skills() {
        let (_t, c) = catalog();
        let names =
            |p: &str| -> Vec<String> { completions(p, &c).into_iter().map(|(n, _)| n).collect() };
        assert_eq!(names("/he"), ["help"]);
        assert_eq!(names("go"), ["go-refactor"]);
        assert_eq!(names("/skill g"), ["skill go-refactor"]);
        assert_eq!(
            names("/skill "),
            ["skill fix-issue", "skill go-refactor", "skill help"]
        );
        assert!(
            names("b").is_empty(),
            "user-invocable: false is not offered"
        );
        assert!(names("/go-refactor ma").is_empty());
        let all = names("/");
        assert_eq!(all.len(), BUILTINS.len() + 2);
        assert_eq!(completions("/go", &c)[0].1, "Use when refactoring Go code");
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(edit_distance("hlep", "help"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
