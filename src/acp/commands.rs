//! Slash commands over ACP: the `available_commands_update` list (the skills a user can
//! run as `/name`, the MCP servers' prompts as `/server:prompt`, and the built-ins that
//! make sense without a terminal, each with its argument hint), and what a prompt's
//! text becomes: routed exactly as a line typed in the REPL ([`input::route`]), then the
//! ops to send and which event ends the prompt ([`Ends`]).
//!
//! Built-ins offered here: `/init`, `/plan [task]`, `/compact [focus]`, `/clear`,
//! `/status` and `/approvals MODE`; any other is refused with a message (their answers
//! are pictures for a terminal, or need one). It must not know the wire or the agent.

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use crate::input::{self, Builtin, Routed};
use crate::protocol::{ApprovalMode, BUILTINS, InputOrigin, Op, SlashCommands, is_builtin};

/// The built-ins offered over ACP, with their argument hints.
const OFFERED: &[(&str, Option<&str>)] = &[
    ("init", Some("guidance for the AGENTS.md")),
    ("plan", Some("task to plan (optional)")),
    ("compact", Some("what the summary should keep (optional)")),
    ("clear", None),
    ("status", None),
    ("approvals", Some("suggest | auto-edit | full-auto | plan")),
];

/// Which event ends a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    /// The turn's `TurnComplete` (a prompt, a skill, an MCP prompt, `/init`,
    /// `/compact`, `/plan task`).
    Turn,
    /// `ConversationCleared` (`/clear`).
    Cleared,
    /// The `Status` answer, shown as the agent's message (`/status`).
    Status,
    /// Nothing to wait for: answered at once (`/plan`, `/approvals MODE`).
    AtOnce,
}

/// What a prompt starts: the ops to send, in order, and what ends it.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    /// The ops.
    pub ops: Vec<Op>,
    /// What ends the prompt.
    pub ends: Ends,
}

/// What a prompt's text does, routed as a typed line; or why it is refused.
pub fn start(text: &str, commands: &SlashCommands) -> Result<Started, String> {
    let turn = |ops| {
        Ok(Started {
            ops,
            ends: Ends::Turn,
        })
    };
    match input::route(text, commands) {
        Routed::Empty => Err("the prompt is empty".into()),
        Routed::Shell(_) => Err("`!command` (shell mode) is not offered over ACP".into()),
        Routed::Error(message) => Err(message),
        routed @ (Routed::Prompt(_) | Routed::Invoke(_)) => {
            match routed.to_op(InputOrigin::Typed) {
                Some(op) => turn(vec![op]),
                None => Err("this prompt cannot be run".into()),
            }
        }
        Routed::Builtin(builtin) => match builtin {
            Builtin::Plan(task) => {
                let mut ops = vec![Op::SetApprovalMode {
                    mode: ApprovalMode::Plan,
                }];
                match task {
                    Some(task) => {
                        ops.push(Op::typed(task));
                        turn(ops)
                    }
                    None => Ok(Started {
                        ops,
                        ends: Ends::AtOnce,
                    }),
                }
            }
            Builtin::Approvals(Some(mode)) => Ok(Started {
                ops: vec![Op::SetApprovalMode { mode }],
                ends: Ends::AtOnce,
            }),
            Builtin::Compact(focus) => turn(vec![Op::Compact { focus }]),
            Builtin::Clear => Ok(Started {
                ops: vec![Op::NewConversation],
                ends: Ends::Cleared,
            }),
            Builtin::Status => Ok(Started {
                ops: vec![Op::Status],
                ends: Ends::Status,
            }),
            _ => Err(format!(
                "this command is not offered over ACP; the ones that are: {}",
                OFFERED
                    .iter()
                    .map(|(name, _)| format!("/{name}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
    }
}

/// The `available_commands_update` for `commands`: the offered built-ins, then the skills
/// a user can run (not one named like a built-in: typed, that name runs the built-in),
/// then the MCP prompts.
pub fn available(commands: &SlashCommands) -> SessionUpdate {
    let mut list: Vec<AvailableCommand> = OFFERED
        .iter()
        .map(|(name, hint)| {
            let description = BUILTINS
                .iter()
                .find(|(n, _)| n == name)
                .map_or("", |(_, d)| *d);
            with_hint(AvailableCommand::new(*name, description), *hint)
        })
        .collect();
    for name in commands.user_invocable_names() {
        // `/name` of a built-in runs the built-in, never the skill.
        if is_builtin(name) || list.iter().any(|c| c.name == name) {
            continue;
        }
        let Some(skill) = commands.skill(name) else {
            continue;
        };
        list.push(with_hint(
            AvailableCommand::new(name, skill.description.clone()),
            skill.argument_hint.as_deref(),
        ));
    }
    for prompt in &commands.mcp_prompts {
        let hint: Vec<String> = prompt
            .arguments
            .iter()
            .map(|a| match a.required {
                true => format!("<{}>", a.name),
                false => format!("[{}]", a.name),
            })
            .collect();
        let hint = hint.join(" ");
        list.push(with_hint(
            AvailableCommand::new(
                format!("{}:{}", prompt.server, prompt.name),
                prompt.description.clone(),
            ),
            (!hint.is_empty()).then_some(hint.as_str()),
        ));
    }
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(list))
}

fn with_hint(command: AvailableCommand, hint: Option<&str>) -> AvailableCommand {
    match hint {
        Some(hint) => command.input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new(hint),
        )),
        None => command,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Invocation;

    #[test]
    fn built_ins_become_their_ops_and_the_rest_is_refused() {
        let none = SlashCommands::default();
        let ops = |text: &str| start(text, &none).map(|s| (s.ops, s.ends));
        assert_eq!(ops("hello"), Ok((vec![Op::typed("hello")], Ends::Turn)));
        assert_eq!(
            ops("/init keep it short"),
            Ok((
                vec![Op::Invoke(Invocation::Init {
                    args: "keep it short".into()
                })],
                Ends::Turn
            ))
        );
        let plan = Op::SetApprovalMode {
            mode: ApprovalMode::Plan,
        };
        assert_eq!(ops("/plan"), Ok((vec![plan.clone()], Ends::AtOnce)));
        assert_eq!(
            ops("/plan fix it"),
            Ok((vec![plan, Op::typed("fix it")], Ends::Turn))
        );
        assert_eq!(
            ops("/clear"),
            Ok((vec![Op::NewConversation], Ends::Cleared))
        );
        assert_eq!(ops("/status"), Ok((vec![Op::Status], Ends::Status)));
        assert_eq!(
            ops("/compact"),
            Ok((vec![Op::Compact { focus: None }], Ends::Turn))
        );
        for refused in [
            "/help",
            "/exit",
            "/resume",
            "/undo",
            "!ls",
            "",
            "/nope",
            "/approvals",
        ] {
            assert!(ops(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn the_list_offers_built_ins_with_their_hints() {
        let update = serde_json::to_value(available(&SlashCommands::default())).unwrap();
        assert_eq!(update["sessionUpdate"], "available_commands_update");
        let names: Vec<&str> = update["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["init", "plan", "compact", "clear", "status", "approvals"]
        );
        assert_eq!(
            update["availableCommands"][1]["input"]["hint"],
            "task to plan (optional)"
        );
        assert!(update["availableCommands"][3].get("input").is_none());
    }

    #[test]
    fn skills_and_mcp_prompts_are_offered_with_their_argument_hints() {
        use crate::protocol::{McpPromptArgument, McpPromptCommand, SkillInvocation, SlashSkill};
        let skill = |name: &str, hint: Option<&str>, invocation| SlashSkill {
            name: name.into(),
            description: format!("{name} it"),
            argument_hint: hint.map(str::to_string),
            invocation,
        };
        let commands = SlashCommands {
            skills: vec![
                skill("fix", Some("[issue]"), SkillInvocation::Slash),
                skill("hidden", None, SkillInvocation::ModelOnly),
                skill("plan", None, SkillInvocation::Slash),
                skill("help", None, SkillInvocation::Slash),
            ],
            mcp_servers: Vec::new(),
            mcp_prompts: vec![McpPromptCommand {
                server: "fx".into(),
                name: "greet".into(),
                description: "Greets".into(),
                arguments: vec![
                    McpPromptArgument {
                        name: "who".into(),
                        required: true,
                    },
                    McpPromptArgument {
                        name: "style".into(),
                        required: false,
                    },
                ],
            }],
        };
        let update = serde_json::to_value(available(&commands)).unwrap();
        let list = update["availableCommands"].as_array().unwrap();
        let find = |name: &str| {
            list.iter()
                .filter(|c| c["name"] == name)
                .collect::<Vec<_>>()
        };
        assert_eq!(find("fix")[0]["input"]["hint"], "[issue]");
        assert!(
            find("hidden").is_empty(),
            "a model-only skill is no command"
        );
        assert_eq!(find("plan").len(), 1, "one /plan: the built-in, as typed");
        assert!(find("help").is_empty(), "typed, /help is the built-in");
        assert_eq!(find("fx:greet")[0]["input"]["hint"], "<who> [style]");
        assert_eq!(find("fx:greet")[0]["description"], "Greets");
    }
}
