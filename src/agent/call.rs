//! One tool call, in five steps: **parse** (the tool exists, the arguments are a JSON
//! object the tool accepts: it parses them once, into the call it approves and runs),
//! **approve** (the approval policy: run, ask the frontend, or deny when
//! nobody can answer), **run** (with live output forwarded, and a forker for tools that
//! start sub-agents), **size** (the text cut to the tools' output limit, then to what
//! the context window leaves, room made for it first: `fit.rs`), **report** (the
//! `ToolCallEnd` event, whose summary says when the window cut the text, and the text
//! the model gets). Every step that ends the call early reports through the same
//! function, so the frontend always sees one begin and one end per call.
//!
//! It must not know how events are drawn or what any tool does.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::agent::approval::{ApprovalPolicy, AskPlan, HookStance, Verdict};
use crate::agent::fit::Sized;
use crate::agent::fork::AgentForker;
use crate::agent::hooks::{
    AfterHooks, PermissionAnswer, PostTool, PreTool, Ran, permission_request, post_tool_use,
    pre_tool_use,
};
use crate::agent::plan_mode;
use crate::agent::turn::{SessionState, TurnContext};
use crate::instructions::nested::Gathered;
use crate::llm::{ToolCall, ToolSpec};
use crate::protocol::{ApprovalAsk, ApprovalDecision, AutoDenyReason, Event, ToolStatus, Usage};
use crate::protocol::{ApprovalMode, ApprovalRequestKind};
use crate::tools::{
    Access, PlanUse, PreparedCall, Tool, ToolContext, ToolFatal, ToolOutput, WebReach, WorksIn,
};

/// How one tool call ended, for the turn.
pub(super) enum CallEnd {
    /// The model gets a result and the turn goes on.
    Done,
    /// The user interrupted: the turn stops after recording the result.
    Interrupted,
    /// harness9 itself failed: the turn stops with this message.
    Fatal(String),
    /// A hook said `continue: false`: the turn ends after recording the result.
    HookStopped,
    /// A plan nobody here can approve (`-p`, a pipe): the turn ends, the plan its answer.
    PlanProposed(String),
}

/// What the model and the frontend are told when a call ends.
struct Report {
    status: ToolStatus,
    content: String,
    diff: Option<String>,
    /// The changed file's text before and after, for frontends beside an editor.
    change: Option<Box<crate::protocol::FileChange>>,
    end: CallEnd,
    /// Where the call worked, when it ran.
    works_in: WorksIn,
    /// Whether the tool itself ran (its post hooks fire only then).
    executed: Executed,
    /// The arguments it ran with (a PreToolUse hook's `updatedInput` included), kept
    /// only when PostToolUse or PostToolUseFailure hooks will read them.
    ran_with: Option<Box<serde_json::Value>>,
    /// What the sub-agents it started consumed, not yet added to the session's usage
    /// (boxed: most calls start none).
    sub_usage: Option<Box<Usage>>,
    /// The plan an `update_plan` call set, not yet saved in the conversation.
    plan: Option<Box<crate::protocol::PlanUpdate>>,
    /// The images the tool returned for the model.
    images: Vec<crate::images::Image>,
}

/// Whether a call's tool ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Executed {
    /// It ran: its result (or error) is the tool's.
    Yes,
    /// It never started (unknown tool, bad arguments, denied).
    No,
}

impl Report {
    fn new(status: ToolStatus, content: String, end: CallEnd) -> Report {
        Report {
            status,
            content,
            diff: None,
            change: None,
            end,
            works_in: WorksIn::Nowhere,
            executed: Executed::No,
            ran_with: None,
            sub_usage: None,
            plan: None,
            images: Vec::new(),
        }
    }
}

/// What one call gives the conversation.
pub(super) struct CallResult {
    /// The text for the model.
    pub content: String,
    /// How the call ended.
    pub end: CallEnd,
    /// Instruction files appended to `content` (their text ends it).
    pub attached: Option<Gathered>,
    /// Images the tool returned, sent in a user message after the results.
    pub images: Vec<crate::images::Image>,
}

/// Runs one call: parse, approve, run, size, report. Returns the text for the model,
/// with the instruction files of the folders it worked in that the conversation does
/// not hold yet appended. `specs` are the tools the request that asked for the call
/// offered (what the next request is sized with).
pub(super) async fn run_call(
    state: &mut SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    specs: &[ToolSpec],
) -> CallResult {
    let report = run_to_report(state, ctx, call).await;
    complete(state, ctx, call, specs, report).await
}

/// Runs `calls` (each an `agent` call) at once, at most `cap` at a time: each is
/// parsed, approved and run as [`run_call`] does (their sub-agents side by side,
/// approvals asked one at a time), then each is sized and reported in call order.
pub(super) async fn run_calls_together(
    state: &mut SessionState,
    ctx: &TurnContext,
    calls: &[ToolCall],
    specs: &[ToolSpec],
    cap: usize,
) -> Vec<CallResult> {
    let reports = {
        let shared: &SessionState = state;
        let gate = tokio::sync::Semaphore::new(cap.max(1));
        let gate = &gate;
        let runs = calls.iter().map(|call| async move {
            // A closed gate cannot happen (it is never closed); run anyway.
            let _permit = gate.acquire().await.ok();
            run_to_report(shared, ctx, call).await
        });
        super::delegate::join_all(runs.collect()).await
    };
    let mut results = Vec::with_capacity(calls.len());
    for (call, report) in calls.iter().zip(reports) {
        results.push(complete(state, ctx, call, specs, report).await);
    }
    results
}

/// Sizes and reports a call that ran: its sub-agents' usage added, the instruction
/// files of where it worked attached, the text fitted to the window, the end event.
async fn complete(
    state: &mut SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    specs: &[ToolSpec],
    mut report: Report,
) -> CallResult {
    settle(state, ctx, &mut report);
    let mut summary = summary_of(&report.content, report.diff.as_deref());
    let hooks_said = after_call(state, ctx, call, &report).await;
    if hooks_said.after == AfterHooks::Stop && matches!(report.end, CallEnd::Done) {
        report.end = CallEnd::HookStopped;
    }
    if report.content.lines().count() > SUMMARY_LINES {
        ctx.emit(Event::ToolResult {
            call_id: call.id.clone(),
            content: report.content.clone(),
        });
    }
    let ran = matches!(report.end, CallEnd::Done)
        && matches!(report.status, ToolStatus::Ok | ToolStatus::Error);
    let attached = if ran {
        super::nested::gather(state, ctx, &report.works_in).await
    } else {
        None
    };
    let mut content = std::mem::take(&mut report.content);
    // Plan mode began or ended during the call (an approved plan, Shift+Tab): the model
    // learns it with the result, not only with the user's next message.
    if !ctx.events.is_forked()
        && let Some(note) = state.policy.take_mode_note()
    {
        content.push_str("\n\n");
        content.push_str(&note);
    }
    let kept = attached.as_ref().map_or(0, |a| a.text.len()) + hooks_said.appended.len();
    if attached.is_some() || !hooks_said.appended.is_empty() {
        // The blocks open with their own blank line.
        content.truncate(content.trim_end_matches('\n').len());
    }
    if let Some(a) = &attached {
        content.push_str(&a.text);
    }
    content.push_str(&hooks_said.appended);
    if !hooks_said.appended.is_empty() {
        summary.push_str("\n+ hook output for the model");
    }
    let whole = content.len() - kept;
    let (content, sized) = super::fit::fit_result(state, ctx, call, specs, content, kept).await;
    if content.len() < whole + kept {
        summary.push_str(&format!(
            "\n… the model got {} of its {whole} bytes (cut to fit the context window)",
            content.len().saturating_sub(kept)
        ));
    }
    if let Some(a) = &attached {
        let names: Vec<String> = a
            .files
            .iter()
            .map(|f| crate::tools::path::display_relative(&f.path, &ctx.setup.workdir))
            .collect();
        summary.push_str(&format!("\n+ instructions: {}", names.join(", ")));
    }
    report.content = content;
    if sized == Sized::Interrupted && matches!(report.end, CallEnd::Done) {
        report.end = CallEnd::Interrupted;
    }
    let images = std::mem::take(&mut report.images);
    let (content, end) = finish(ctx, call, report, summary);
    CallResult {
        content,
        end,
        attached,
        images,
    }
}

/// The PostToolUse (or PostToolUseFailure) hooks of a call that ran: what they append
/// for the model, and whether the turn goes on. A call that did not run (denied,
/// refused, interrupted) fires neither.
async fn after_call(
    state: &SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    report: &Report,
) -> PostTool {
    let ran = match (&report.end, report.status, report.executed) {
        (CallEnd::Done, ToolStatus::Ok, Executed::Yes) => Ran::Succeeded {
            content: &report.content,
        },
        (CallEnd::Done, ToolStatus::Error, Executed::Yes) => Ran::Failed {
            error: &report.content,
        },
        _ => {
            return PostTool {
                appended: String::new(),
                after: AfterHooks::GoOn,
            };
        }
    };
    post_tool_use(state, ctx, call, report.ran_with.as_deref(), ran).await
}

/// A `bash` call the user made (`!cmd`): parse, approve, run and report like the
/// model's, without fitting the text into the window (it is no tool result: it goes
/// with the user's next message, capped at the tools' output limit). Returns how it
/// ended and the text.
pub(super) async fn run_user_call(
    state: &mut SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
) -> (ToolStatus, String) {
    let mut report = run_to_report(state, ctx, call).await;
    settle(state, ctx, &mut report);
    let summary = summary_of(&report.content, report.diff.as_deref());
    let status = report.status;
    let (content, _) = finish(ctx, call, report, summary);
    (status, content)
}

/// Parse, approve, run: the report of what happened.
async fn run_to_report(state: &SessionState, ctx: &TurnContext, call: &ToolCall) -> Report {
    match parse(ctx, call) {
        Err(msg) => {
            begin(ctx, call, String::new(), Vec::new());
            Report::new(ToolStatus::Error, msg, CallEnd::Done)
        }
        // PreToolUse hooks first: a denial ends the call; their updatedInput is what is
        // prepared and judged. Arguments the tool refuses are reported at once: there is
        // nothing to approve.
        Ok((tool, args)) => match pre_tool_use(state, ctx, call, args).await {
            PreTool::Denied { message, after } => {
                begin(ctx, call, String::new(), Vec::new());
                let end = match after {
                    AfterHooks::GoOn => CallEnd::Done,
                    AfterHooks::Stop => CallEnd::HookStopped,
                };
                Report::new(ToolStatus::Denied, message, end)
            }
            PreTool::Proceed { args, stance } => {
                // The mode is read once: what the call may do and how its commands are
                // confined follow the same mode.
                let mode = state.policy.mode();
                if mode == ApprovalMode::Plan && tool.plan_use() == PlanUse::Withheld {
                    begin(ctx, call, String::new(), Vec::new());
                    return denied_in_plan(ctx, call, None, plan_mode::withheld(&call.name));
                }
                // What PermissionRequest hooks read, kept only when there are some.
                let hooks = &ctx.setup.hooks;
                let asked = HookAsk {
                    stance,
                    args: hooks
                        .has(crate::hooks::Event::PermissionRequest)
                        .then(|| args.clone()),
                };
                let post = [
                    crate::hooks::Event::PostToolUse,
                    crate::hooks::Event::PostToolUseFailure,
                ];
                let ran_with = post
                    .into_iter()
                    .any(|event| hooks.has(event))
                    .then(|| Box::new(args.clone()));
                match tool.prepare(args) {
                    Err(refusal) => {
                        begin(ctx, call, String::new(), Vec::new());
                        outcome(ctx, Ok(refusal))
                    }
                    Ok(prepared) => Report {
                        ran_with,
                        ..approve_and_run(state, ctx, call, prepared, &asked, mode).await
                    },
                }
            }
        },
    }
}

/// The call's tool and its arguments, or the error text for the model.
fn parse(ctx: &TurnContext, call: &ToolCall) -> Result<(Arc<dyn Tool>, serde_json::Value), String> {
    let tools = &ctx.setup.tools;
    let Some(tool) = tools.get(&call.name) else {
        let msg = format!(
            "Error: unknown tool '{}'. Available tools: {}.",
            call.name,
            tools.names().join(", ")
        );
        return Err(msg);
    };
    let raw = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(v @ serde_json::Value::Object(_)) => Ok((tool, v)),
        parsed => {
            let detail = parsed
                .err()
                .map_or_else(|| "not a JSON object".to_string(), |e| e.to_string());
            let msg = format!(
                "Error: the arguments for {} are not a valid JSON object ({detail}). Call it \
                 again with a JSON object that matches its schema.",
                call.name
            );
            Err(msg)
        }
    }
}

/// What the hooks said of a call, for its approval: the PreToolUse stance, and the
/// arguments PermissionRequest hooks read (`None` when there are none).
struct HookAsk {
    stance: HookStance,
    args: Option<serde_json::Value>,
}

async fn approve_and_run(
    state: &SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    prepared: Box<dyn PreparedCall + '_>,
    hooks: &HookAsk,
    mode: ApprovalMode,
) -> Report {
    let (live_tx, live_rx) = mpsc::unbounded_channel::<String>();
    // Sub-agents get no forker: a forked skill cannot fork again.
    let forker = (!ctx.events.is_forked()).then(|| AgentForker::new(ctx.clone(), state));
    let mut tool_ctx = ToolContext {
        workdir: ctx.setup.workdir.clone(),
        cancel: ctx.cancel.clone(),
        limits: ctx.setup.tool_limits,
        live_output: Some(live_tx),
        forker: forker.clone().map(|f| f as Arc<dyn crate::tools::Forker>),
        artifacts: state.artifacts.clone(),
        writes: plan_mode::command_writes(mode),
        plan_file: state.policy.plan_file(),
        commands: ctx.setup.commands.clone(),
        call_id: call.id.clone(),
        web_reach: WebReach::PublicOnly,
        files: ctx.setup.files.clone(),
    };
    // A call that is denied, or interrupted while waiting for approval, never began:
    // the frontend saw the approval request (or the denial) and then its end.
    let access = prepared.access(&tool_ctx);
    let may_change_files = access.needs_approval();
    let parts = access.into_parts();
    // Each part is judged, and asked about, in turn; the first refusal ends the call.
    for part in parts.iter().cloned() {
        if let Err(report) = approve(state, ctx, call, part, hooks, mode).await {
            return report;
        }
    }
    // After the answers: an "always" may have added the rule that names the host.
    tool_ctx.web_reach = state.policy.web_reach(&call.name, &parts);
    if may_change_files {
        before_change(ctx).await;
    }
    begin(ctx, call, prepared.summary(), prepared.locations(&tool_ctx));
    let works_in = prepared.works_in(&tool_ctx);
    let forward = forward_live_output(ctx, call, live_rx);
    let result = prepared.run(&tool_ctx).await;
    drop(tool_ctx);
    let sub_usage = forker
        .map(|f| f.take_usage())
        .filter(|u| *u != Usage::default())
        .map(Box::new);
    // The forwarder ends when the tool drops its sender; wait so deltas precede the end.
    let _ = forward.await;
    Report {
        works_in,
        executed: Executed::Yes,
        sub_usage,
        ..outcome(ctx, result)
    }
}

/// The report of a call plan mode refused, after telling the frontend (`request`: what
/// it would have done, when it got that far).
fn denied_in_plan(
    ctx: &TurnContext,
    call: &ToolCall,
    request: Option<ApprovalRequestKind>,
    why: String,
) -> Report {
    let msg = plan_mode::denial(&why);
    if let Some(request) = request {
        ctx.emit(Event::AutoDenied {
            call_id: call.id.clone(),
            name: call.name.clone(),
            request,
            reason: AutoDenyReason::PlanMode { why },
        });
    }
    Report::new(ToolStatus::Denied, msg, CallEnd::Done)
}

/// Settles what a call left for the session: what its sub-agents consumed is added to
/// the session's usage (and said), the plan it set is saved in the conversation.
fn settle(state: &mut SessionState, ctx: &TurnContext, report: &mut Report) {
    if let Some(plan) = report.plan.take() {
        state.conversation.record_plan(&plan);
    }
    if let Some(sub) = report.sub_usage.take() {
        state.usage.add(&sub);
        ctx.emit(Event::Usage {
            turn: *sub,
            session: state.usage,
            context_tokens: None,
        });
    }
}

/// Takes the turn's "before" picture of the project, once, before the first call that
/// may change files runs (for `/undo`); a failure is a warning, and the call runs.
async fn before_change(ctx: &TurnContext) {
    let Some(snapshots) = ctx.setup.snapshots.clone() else {
        return;
    };
    let taken = tokio::task::spawn_blocking(move || snapshots.before_change()).await;
    let problem = match taken {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    ctx.emit(Event::Warning {
        message: format!("{problem}; /undo cannot put back this turn's changes"),
    });
}

/// Asks the policy (and, when it says so, the frontend) whether the call may run.
async fn approve(
    state: &SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    access: Access,
    hooks: &HookAsk,
    mode: ApprovalMode,
) -> Result<(), Report> {
    let verdict = state
        .policy
        .verdict_with_hook(mode, &call.name, access, &hooks.stance);
    // PermissionRequest hooks answer a question about to be asked (or, headless, about
    // to be denied for want of anyone to ask).
    if let Verdict::Ask(plan) | Verdict::DenyUnattended(plan) = &verdict {
        match permission_request(state, ctx, call, hooks.args.as_ref(), plan).await {
            PermissionAnswer::Ask => {}
            PermissionAnswer::Allow => return Ok(()),
            PermissionAnswer::Deny { message } => {
                return Err(Report::new(ToolStatus::Denied, message, CallEnd::Done));
            }
        }
    }
    match verdict {
        Verdict::Run => Ok(()),
        Verdict::DeniedInPlan { request, why } => {
            Err(denied_in_plan(ctx, call, Some(request), why))
        }
        Verdict::DeniedByRule {
            request,
            rule,
            source,
        } => {
            let msg = ApprovalPolicy::rule_denial(&rule, &source);
            ctx.emit(Event::AutoDenied {
                call_id: call.id.clone(),
                name: call.name.clone(),
                request,
                reason: AutoDenyReason::Rule { rule, source },
            });
            Err(Report::new(ToolStatus::Denied, msg, CallEnd::Done))
        }
        Verdict::DenyUnattended(AskPlan {
            request: ApprovalRequestKind::Plan { file, text },
            ..
        }) => {
            // Nobody can approve it here: the run ends with the plan, in plan mode still.
            let msg = format!(
                "The plan in {} was handed to the user, who will approve it in another \
                 session. Stop here.",
                file.display()
            );
            Err(Report::new(
                ToolStatus::Ok,
                msg,
                CallEnd::PlanProposed(text),
            ))
        }
        Verdict::DenyUnattended(plan) => {
            let msg = state.policy.unattended_denial(&plan);
            ctx.emit(Event::AutoDenied {
                call_id: call.id.clone(),
                name: call.name.clone(),
                request: plan.request,
                reason: AutoDenyReason::NobodyToAsk {
                    because: plan.because,
                },
            });
            Err(Report::new(ToolStatus::Denied, msg, CallEnd::Done))
        }
        Verdict::Ask(plan) => {
            let asked = ask_frontend(ctx, &state.policy, &call.id, &call.name, &plan).await;
            let Some(decision) = asked else {
                let msg =
                    "Not run: the turn was interrupted while waiting for approval.".to_string();
                return Err(Report::new(
                    ToolStatus::Interrupted,
                    msg,
                    CallEnd::Interrupted,
                ));
            };
            let is_plan = matches!(plan.request, ApprovalRequestKind::Plan { .. });
            match decision {
                ApprovalDecision::Deny { reason } if is_plan => {
                    let feedback = reason.filter(|r| !r.trim().is_empty());
                    Err(Report::new(
                        ToolStatus::Denied,
                        plan_mode::kept_planning(feedback.as_deref()),
                        CallEnd::Done,
                    ))
                }
                // The user's choice of mode; a plain yes leaves plan mode for the mode
                // that asks about everything.
                ApprovalDecision::ApprovePlan { mode } if is_plan => {
                    approve_plan(state, ctx, mode);
                    Ok(())
                }
                ApprovalDecision::Approve
                | ApprovalDecision::ApproveForSession
                | ApprovalDecision::ApproveForProject
                    if is_plan =>
                {
                    approve_plan(state, ctx, ApprovalMode::Suggest);
                    Ok(())
                }
                ApprovalDecision::Deny { reason } => {
                    let msg = match reason.filter(|r| !r.trim().is_empty()) {
                        Some(r) => format!("The user denied this call: {r}"),
                        None => "The user denied this call. Do not retry it unchanged; ask \
                                 or adapt."
                            .to_string(),
                    };
                    Err(Report::new(ToolStatus::Denied, msg, CallEnd::Done))
                }
                ApprovalDecision::Approve
                | ApprovalDecision::ApproveForSession
                | ApprovalDecision::ApproveForProject
                | ApprovalDecision::ApprovePlan { .. } => Ok(()),
            }
        }
    }
}

/// An approved plan: plan mode ends for `mode` (never plan mode again by this answer),
/// and every frontend hears it.
fn approve_plan(state: &SessionState, ctx: &TurnContext, mode: ApprovalMode) {
    let mode = match mode {
        ApprovalMode::Plan => ApprovalMode::Suggest,
        other => other,
    };
    state.policy.set_mode(mode);
    ctx.emit(Event::ApprovalModeChanged { mode });
}

/// Asks the frontend about `plan` under `call_id` (shown as `name`) and waits for the
/// answer, or for the turn to be interrupted (`None`); what the answer grants is
/// recorded in `policy`. Tool calls and typed mentions ask through it.
pub(super) async fn ask_frontend(
    ctx: &TurnContext,
    policy: &ApprovalPolicy,
    call_id: &str,
    name: &str,
    plan: &AskPlan,
) -> Option<ApprovalDecision> {
    // Sub-agents running side by side ask one at a time: the user answers one question
    // before the next is shown.
    let _turn = tokio::select! {
        held = ctx.setup.approval_queue.take_turn() => held,
        () = ctx.cancel.cancelled() => return None,
    };
    let (tx, rx) = oneshot::channel();
    if let Ok(mut pending) = ctx.pending.lock() {
        pending.insert(call_id.to_string(), tx);
    }
    super::hooks_session::notify_permission_prompt(ctx, name);
    ctx.emit(Event::ApprovalRequest(ApprovalAsk {
        call_id: call_id.to_string(),
        name: name.to_string(),
        request: plan.request.clone(),
        because: plan.because.clone(),
        offer: plan.offer.clone(),
    }));
    let decision = tokio::select! {
        d = rx => d.ok(),
        () = ctx.cancel.cancelled() => None,
    };
    if let Ok(mut pending) = ctx.pending.lock() {
        pending.remove(call_id);
    }
    let decision = decision?;
    let recorded = policy.record(plan, &decision);
    if let Some(message) = recorded.warning {
        ctx.emit(Event::Warning { message });
    }
    for (rule, source) in recorded.added {
        ctx.emit(Event::RuleAdded { rule, source });
    }
    Some(decision)
}

fn begin(
    ctx: &TurnContext,
    call: &ToolCall,
    summary: String,
    locations: Vec<crate::protocol::FileLocation>,
) {
    ctx.emit(Event::ToolCallBegin {
        call_id: call.id.clone(),
        name: call.name.clone(),
        summary,
        locations,
    });
}

/// Sends the tool's live output as `ToolOutputDelta`s until the tool drops its sender.
fn forward_live_output(
    ctx: &TurnContext,
    call: &ToolCall,
    mut live_rx: mpsc::UnboundedReceiver<String>,
) -> tokio::task::JoinHandle<()> {
    let events = ctx.events.clone();
    let call_id = call.id.clone();
    tokio::spawn(async move {
        while let Some(text) = live_rx.recv().await {
            events.emit(Event::ToolOutputDelta {
                call_id: call_id.clone(),
                text,
            });
        }
    })
}

/// The report for what the tool returned.
fn outcome(ctx: &TurnContext, result: Result<ToolOutput, ToolFatal>) -> Report {
    match result {
        Ok(ToolOutput {
            content,
            is_error,
            diff,
            change,
            warnings,
            plan,
            images,
        }) => {
            for message in warnings {
                ctx.emit(Event::Warning { message });
            }
            if let Some(plan) = &plan {
                ctx.emit(Event::Plan {
                    plan: (**plan).clone(),
                });
            }
            let content = crate::truncate::truncate_head_tail(
                &content,
                ctx.setup.tool_limits.max_output_bytes,
            );
            let status = if is_error {
                ToolStatus::Error
            } else {
                ToolStatus::Ok
            };
            Report {
                status,
                content,
                diff,
                change,
                end: CallEnd::Done,
                works_in: WorksIn::Nowhere,
                executed: Executed::No,
                ran_with: None,
                sub_usage: None,
                plan,
                images,
            }
        }
        Err(ToolFatal::Interrupted) => Report::new(
            ToolStatus::Interrupted,
            // A limit of the run interrupts as the user does; the model is told which.
            match ctx.setup.limits.reached() {
                Some(limit) => format!("Stopped: {}.", limit.describe()),
                None => "Interrupted by the user.".to_string(),
            },
            CallEnd::Interrupted,
        ),
        Err(ToolFatal::Internal(message)) => Report::new(
            ToolStatus::Error,
            format!("Error: {message}"),
            CallEnd::Fatal(message),
        ),
    }
}

/// Emits the call's end (with `summary`) and returns the text for the model.
fn finish(
    ctx: &TurnContext,
    call: &ToolCall,
    report: Report,
    summary: String,
) -> (String, CallEnd) {
    ctx.emit(Event::ToolCallEnd {
        call_id: call.id.clone(),
        name: call.name.clone(),
        status: report.status,
        summary,
        diff: report.diff,
        change: report.change,
    });
    (report.content, report.end)
}

/// What frontends show of a result: its first lines, without the diff that travels
/// beside it (shown once, from `diff`).
fn summary_of(content: &str, diff: Option<&str>) -> String {
    match diff {
        Some(d) if !d.is_empty() && content.contains(d) => {
            first_lines(content.replacen(d, "", 1).trim_end(), SUMMARY_LINES)
        }
        _ => first_lines(content, SUMMARY_LINES),
    }
}

/// Lines of a result a summary shows.
const SUMMARY_LINES: usize = 3;

/// The first `n` lines of `text`, with a count of the rest.
fn first_lines(text: &str, n: usize) -> String {
    let total = text.lines().count();
    let mut out: Vec<&str> = text.lines().take(n).collect();
    let more = total.saturating_sub(n);
    let extra;
    if more > 0 {
        extra = format!("… +{more} lines");
        out.push(&extra);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_leaves_out_the_diff_shown_beside_it() {
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        let content = format!("Edited x: replaced 1 occurrence, +1 -1 lines.\n{diff}");
        assert_eq!(
            summary_of(&content, Some(diff)),
            "Edited x: replaced 1 occurrence, +1 -1 lines."
        );
        assert_eq!(summary_of("a\nb", None), "a\nb");
    }

    #[test]
    fn first_lines_counts_the_rest() {
        assert_eq!(first_lines("a\nb\nc\nd\ne", 2), "a\nb\n… +3 lines");
        assert_eq!(first_lines("a", 3), "a");
    }
}
