//! The user's `/name args`: the skill is prepared by the one skill pipeline
//! ([`crate::skills::invoke`]), its `tools.json` tools join the registry, and it runs as
//! a normal turn, or as a sub-agent ([`super::fork`]) when it is a `context: fork`
//! skill (then only the sub-agent's final answer enters the conversation). Failures
//! before anything is sent (an unknown or non-invocable skill, an unreadable body, a
//! failing inline command) end the turn with the error kind `skill`.
//!
//! A Claude Code command (a skill of the kind [`SkillKind::Command`]) also has its
//! `@path` mentions attached by the same code and guards as a typed message's, and its
//! `allowed-tools` pre-approved for its turn only ([`ApprovalPolicy::grant_for_turn`])
//! when it is the user's own (from the user's home); a command from the repository
//! pre-approves nothing, as the project's permission file's allow rules do not until
//! trusted, and the user is told.
//!
//! It must not know how events are drawn.

use crate::agent::approval::{ApprovalPolicy, Verdict};
use crate::agent::fork::run_fork;
use crate::agent::turn::{Attached, SessionState, TurnContext};
use crate::llm::Message;
use crate::protocol::ApprovalMode;
use crate::protocol::ApprovalRequestKind;
use crate::protocol::AskBecause;
use crate::protocol::{ErrorKind, Event, TurnOutcome, Usage};
use crate::skills::inline_shell::{CommandGate, InlineShellError, Permission};
use crate::skills::invoke::{self, InlineShell, PrepareError, Prepared};
use crate::skills::{RootKind, Skill, SkillKind};
use crate::tools::Access;
use crate::tools::skill::{BundledTools, load_bundled_tools};
use crate::tools::{ForkError, ForkRequest};

/// Whether inline commands may run under the session's approval policy (before looking
/// at where a skill comes from: see [`crate::skills::inline_shell::permission_for`]):
/// in `full-auto`, each one the permission rules let run without a person (a deny or
/// ask rule, a secret file or a destructive command keeps it from running); otherwise
/// none, since nobody is asked in the middle of loading a skill.
pub fn inline_permission(policy: &ApprovalPolicy) -> Permission {
    // The mode is read when a command is about to run, not now: it can be switched
    // during the session.
    let policy = policy.clone();
    let workdir = policy.project();
    Permission::Checked(CommandGate::new(move |command| match policy.mode() {
        ApprovalMode::FullAuto => {
            let access = Access::NeedsApproval(ApprovalRequestKind::Command {
                command: command.to_string(),
                cwd: workdir.clone(),
            });
            match policy.verdict("bash", access) {
                Verdict::Run => Ok(()),
                Verdict::DeniedByRule { rule, source, .. } => {
                    Err(format!("the rule `deny {rule}` ({source}) refuses it"))
                }
                Verdict::DeniedInPlan { why, .. } => Err(why),
                Verdict::Ask(plan) | Verdict::DenyUnattended(plan) => Err(format!(
                    "it needs a person's approval ({}), and inline commands are not asked about",
                    plan.because
                        .as_ref()
                        .map_or("the approval mode".to_string(), describe_because)
                )),
            }
        }
        ApprovalMode::Suggest => Err("approval mode suggest does not allow commands".into()),
        ApprovalMode::AutoEdit => Err("approval mode auto-edit does not allow commands".into()),
        ApprovalMode::Plan => Err("plan mode does not run a skill's inline commands".into()),
    }))
}

/// A few words on why a rule wants a person.
fn describe_because(because: &AskBecause) -> String {
    match because {
        AskBecause::Rule { rule, source } => format!("the rule `ask {rule}` ({source})"),
        AskBecause::Destructive { what, .. } => what.clone(),
        AskBecause::Opaque { why } | AskBecause::Unconfined { why } | AskBecause::Hook { why } => {
            why.clone()
        }
    }
}

/// What the user typed for a slash command, and how such a turn ends when it ends before
/// anything is sent: the turn is shown as started with the typed line, then complete.
/// Shared by `/name` skills and `/SERVER:PROMPT` prompts.
pub(super) struct SlashLine<'c> {
    ctx: &'c TurnContext,
    typed: String,
}

impl<'c> SlashLine<'c> {
    /// `/command`, or `/command args` when there are arguments.
    pub(super) fn new(ctx: &'c TurnContext, command: &str, args: &str) -> Self {
        let typed = if args.is_empty() {
            format!("/{command}")
        } else {
            format!("/{command} {args}")
        };
        SlashLine { ctx, typed }
    }

    /// The line as the user typed it.
    pub(super) fn typed(&self) -> &str {
        &self.typed
    }

    /// Ends the turn with `outcome` before any request.
    pub(super) fn end(&self, outcome: TurnOutcome) -> TurnOutcome {
        self.ctx.events.emit(Event::TurnStarted {
            text: self.typed.clone(),
        });
        self.ctx.events.emit(Event::TurnComplete {
            outcome: outcome.clone(),
            final_text: Default::default(),
            usage: Usage::default(),
            requests: 0,
        });
        outcome
    }

    /// Ends the turn as failed (the error kind `skill`) with `message`.
    pub(super) fn fail(&self, message: String) -> TurnOutcome {
        self.end(TurnOutcome::Failed {
            kind: ErrorKind::Skill,
            message,
        })
    }
}

/// Runs a user-invoked skill (`/name args`) as a turn.
pub async fn run_skill(
    state: &mut SessionState,
    ctx: &TurnContext,
    name: &str,
    args: &str,
) -> TurnOutcome {
    let line = SlashLine::new(ctx, name, args);
    let catalog = ctx.setup.catalog.current();
    let Some(skill) = catalog.get(name) else {
        return line.fail(format!("no skill named `{name}`"));
    };
    if !skill.user_invocable() {
        return line.fail(format!(
            "skill `{name}` sets `user-invocable: false` and cannot be run as a slash command"
        ));
    }
    // The one skill pipeline: inline commands on the body as written, then the
    // arguments, so an argument can never smuggle in a command.
    let permission = inline_permission(&state.policy);
    let shell = InlineShell {
        permission: &permission,
        workdir: &ctx.setup.workdir,
        cancel: &ctx.cancel,
    };
    let prepared = match invoke::prepare(skill, args, shell).await {
        Ok(p) => p,
        Err(PrepareError::Body(e)) => return line.fail(format!("cannot run skill `{name}`: {e}")),
        Err(PrepareError::Inline(InlineShellError::Interrupted)) => {
            return line.end(TurnOutcome::Interrupted);
        }
        Err(PrepareError::Inline(e)) => return line.fail(format!("{e}; the skill was not run")),
    };
    ctx.setup.loaded_skills.mark(&skill.name);
    // A skill run with /name brings its tools.json tools, as use_skill would.
    match load_bundled_tools(skill, ctx.setup.tools.loaded()) {
        BundledTools::Failed(problem) => ctx.events.emit(Event::Warning {
            message: format!(
                "skill `{}`: its tools were not loaded: {problem}",
                skill.name
            ),
        }),
        BundledTools::None | BundledTools::Loaded(_) => {}
    }
    let (instructions, task) = match prepared {
        Prepared::Inline { text } => {
            let text = match &skill.kind {
                SkillKind::Command(_) => {
                    // Mentions come only from what was written: the command's text
                    // and the arguments, never an inline command's output.
                    let written = match invoke::written_text(skill, args) {
                        Ok(written) => written,
                        Err(e) => return line.fail(format!("cannot run skill `{name}`: {e}")),
                    };
                    if crate::mentions::has_mentions(&written) {
                        match crate::agent::turn::attach_mentions_from(state, ctx, &written, &text)
                            .await
                        {
                            Ok(attached) => attached,
                            Err(outcome) => return line.end(outcome),
                        }
                    } else {
                        Attached {
                            text,
                            images: Vec::new(),
                        }
                    }
                }
                _ => Attached {
                    text,
                    images: Vec::new(),
                },
            };
            let grant = command_grant(state, ctx, skill);
            state.conversation.expect_prompt(line.typed().to_string());
            let outcome = crate::agent::turn::run_turn_with_images(state, ctx, text).await;
            drop(grant);
            return outcome;
        }
        Prepared::Fork { instructions, task } => (instructions, task),
    };

    ctx.events.emit(Event::TurnStarted {
        text: line.typed().to_string(),
    });
    state.conversation.expect_prompt(line.typed().to_string());
    state.conversation.begin_turn();
    let request = ForkRequest::for_skill(skill, instructions, task);
    let (result, usage) = run_fork(
        ctx,
        &state.model.clone(),
        state.effort,
        state.policy.clone(),
        state.artifacts.clone(),
        request,
    )
    .await;
    state.usage.add(&usage);
    ctx.events.emit(Event::Usage {
        turn: usage,
        session: state.usage,
        context_tokens: None,
    });
    let (outcome, final_text, requests) = match result {
        Ok(r) => {
            let content = crate::agent::turn::with_notes(state, ctx, line.typed().to_string());
            state.conversation.push(Message::user(content));
            state.conversation.push(Message::Assistant {
                content: r.final_text.clone(),
                reasoning: None,
                tool_calls: Vec::new(),
            });
            ctx.events.emit(Event::TextDelta {
                text: r.final_text.to_string(),
            });
            (TurnOutcome::Completed, r.final_text, r.requests)
        }
        Err(ForkError::Interrupted) => (TurnOutcome::Interrupted, Default::default(), 0),
        Err(ForkError::Failed(message)) => (
            TurnOutcome::Failed {
                kind: ErrorKind::Skill,
                message,
            },
            Default::default(),
            0,
        ),
    };
    if let Some(left_out) = crate::agent::turn::end_turn(state, ctx, &outcome) {
        ctx.events.emit(left_out);
    }
    ctx.events.emit(Event::TurnComplete {
        outcome: outcome.clone(),
        final_text,
        usage,
        requests,
    });
    outcome
}

/// A command's `allowed-tools` as grants for its turn: only a command from the user's
/// home is trusted to pre-approve; what is not granted is said in a warning.
fn command_grant(
    state: &SessionState,
    ctx: &TurnContext,
    skill: &Skill,
) -> Option<crate::agent::approval::TurnGrant> {
    let allowed = &skill.frontmatter.allowed_tools;
    if !matches!(skill.kind, SkillKind::Command(_)) || allowed.is_empty() {
        return None;
    }
    let warn = |message: String| ctx.events.emit(Event::Warning { message });
    if skill.root.kind != RootKind::User {
        warn(format!(
            "/{}: its allowed-tools ({}) were not pre-approved: a command from the repository \
             cannot grant tools (like the project's permission file before it is trusted), so \
             its calls are asked about as usual",
            skill.name,
            allowed.join(", ")
        ));
        return None;
    }
    let (rules, unknown) = crate::skills::commands::grant_rules(allowed);
    if !unknown.is_empty() {
        warn(format!(
            "/{}: allowed-tools {} name no harness9 tool; not pre-approved",
            skill.name,
            unknown.join(", ")
        ));
    }
    let (grant, errors) = state.policy.grant_for_turn(&rules);
    for e in errors {
        warn(format!(
            "/{}: allowed-tools: {e}; not pre-approved",
            skill.name
        ));
    }
    Some(grant)
}

#[cfg(test)]
mod gate_tests {
    use crate::test_support::assert_contains;
    use std::path::Path;

    use super::*;
    use crate::agent::Approver;
    use crate::permissions::PermissionsSetup;

    #[test]
    fn inline_commands_in_full_auto_pass_the_same_rules_as_bash() {
        let setup = PermissionsSetup::built_in(Path::new("/p"), Path::new("/h"));
        let full = ApprovalPolicy::new(ApprovalMode::FullAuto, Approver::Frontend, setup.clone());
        let Permission::Checked(gate) = inline_permission(&full) else {
            panic!("full-auto checks each command")
        };
        assert_eq!(gate.check("git log -1 --oneline"), Ok(()));
        let secret = gate.check("cat .env").unwrap_err();
        assert_contains(&secret, "*(**/.env*)");
        let destructive = gate.check("git reset --hard").unwrap_err();
        assert_contains(&destructive, "discards");
        let suggest = ApprovalPolicy::new(ApprovalMode::Suggest, Approver::Frontend, setup);
        let Permission::Checked(gate) = inline_permission(&suggest) else {
            panic!("every mode is checked when a command is about to run")
        };
        assert_eq!(
            gate.check("git log -1").unwrap_err(),
            "approval mode suggest does not allow commands"
        );
        // A switch holds for a gate made before it.
        suggest.set_mode(ApprovalMode::FullAuto);
        assert_eq!(gate.check("git log -1 --oneline"), Ok(()));
    }
}
