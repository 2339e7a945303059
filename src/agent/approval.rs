//! The approval policy: given the approval mode, the permission rules in force and
//! what a call would do, decide whether it runs, must be asked about, is refused by a
//! rule, or is denied because nobody can answer; and record what an answer grants —
//! for this session (rules kept in memory) or for the project (rules written to
//! `.harness9/permissions.toml`).
//!
//! A user command's `allowed-tools` become turn grants ([`ApprovalPolicy::grant_for_turn`]):
//! allow rules held apart from the book, consulted only where no rule, hazard or
//! destructive pattern decided, for calls inside the project, and never past the
//! sandbox's writable folders; they end with the turn ([`TurnGrant`] drops them).
//!
//! It owns the session's rule book. Clones share it: a forked skill's sub-agent works
//! under the same rules as the conversation that started it, so an "always" given in
//! either holds in both. It must not know how a frontend asks.

use std::path::{Path, PathBuf};

#[path = "approval_hook.rs"]
mod hook;
pub use hook::HookStance;
pub(super) use hook::hook_may_allow;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::agent::Approver;
use crate::agent::plan_mode::{self, PlanJudgement, PlanPlaces};
use crate::permissions::PermissionsSetup;
use crate::permissions::files::{self, Places};
use crate::permissions::{
    ActiveRule, AllowedBy, Judgement, ModeRuns, Rule, RuleError, Rulebook, Scope, SecretReads,
    Subject,
};
use crate::protocol::ApprovalMode;
use crate::protocol::{ApprovalDecision, ApprovalRequestKind, Location, McpAction};
use crate::protocol::{AskBecause, Effect, Offer, RuleView, Source};
use crate::tools::{Access, WebReach};

/// What to do with a call before running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Run,
    /// Ask the frontend.
    Ask(AskPlan),
    /// Deny it at once: nobody can be asked.
    DenyUnattended(AskPlan),
    /// Plan mode refuses it (an edit of another file than the plan, an MCP tool).
    DeniedInPlan {
        /// What the call would have done.
        request: ApprovalRequestKind,
        /// Why, in words for a person.
        why: String,
    },
    /// A deny rule refuses it.
    DeniedByRule {
        /// What the call would have done.
        request: ApprovalRequestKind,
        /// The rule.
        rule: String,
        /// Where it came from.
        source: Source,
    },
}

/// A question for the user: what the call does, why it is asked, and what "always"
/// would add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskPlan {
    /// What the call would do.
    pub request: ApprovalRequestKind,
    /// Why it is asked beyond the approval mode (`None`: the mode asks).
    pub because: Option<AskBecause>,
    /// What an "always" answer adds.
    pub offer: Offer,
}

/// What recording an "always" answer did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The rules added (as written) and where each holds.
    pub added: Vec<(String, Source)>,
    /// Why the project file could not take them (they hold for the session).
    pub warning: Option<String>,
}

/// The session's approval state. Cheap to clone; clones share the rule book and the
/// approval mode, so a switch (`/approvals`, Shift+Tab) holds for every clone's next
/// call: the running turn's, sub-agents', the inline-shell gate's.
#[derive(Debug, Clone)]
pub struct ApprovalPolicy {
    approver: Approver,
    shared: Arc<Mutex<Shared>>,
    /// This clone's own limits (a sub-agent's): never wider than the shared state.
    narrowed: Narrowing,
}

/// What one clone of the policy (a sub-agent's) may do less of than the session: a
/// mode it never exceeds, whatever the session switches to, and a sandbox of its own
/// for its commands (the read-only one).
#[derive(Debug, Clone, Default)]
struct Narrowing {
    at_most: Option<ApprovalMode>,
    sandbox: Option<CommandSandbox>,
}

/// The narrower of two approval modes. Plan mode is the narrowest: it writes nothing
/// but its plan, and its commands run in the read-only sandbox, whatever anyone answers
/// (a sub-agent started in plan mode stays in it).
pub fn narrower(a: ApprovalMode, b: ApprovalMode) -> ApprovalMode {
    use ApprovalMode::{AutoEdit, FullAuto, Plan, Suggest};
    match (a, b) {
        (Plan, _) | (_, Plan) => Plan,
        (Suggest, _) | (_, Suggest) => Suggest,
        (AutoEdit, _) | (_, AutoEdit) => AutoEdit,
        (FullAuto, FullAuto) => FullAuto,
    }
}

#[derive(Debug)]
struct Shared {
    mode: ApprovalMode,
    book: Rulebook,
    untrusted: Vec<String>,
    places: Places,
    temp: Vec<PathBuf>,
    sandbox: CommandSandbox,
    /// The running command's `allowed-tools` (allow rules only), for this turn.
    grants: Rulebook,
    /// Ask rules for this turn (`/init`'s AGENTS.md): they ask whatever the mode.
    asks: Rulebook,
    /// Where plan files may go (`None`: plan mode has no plan file to write).
    plan_places: Option<PlanPlaces>,
    /// The session's plan file, once placed ([`ApprovalPolicy::place_plan_file`]).
    plan_file: Option<PathBuf>,
    /// Whether the model was last told it is in plan mode ([`ApprovalPolicy::take_mode_note`]).
    told_plan: bool,
}

/// The grants of one command's turn: dropping it withdraws them.
#[derive(Debug)]
#[must_use = "the grants end when this is dropped"]
pub struct TurnGrant {
    policy: ApprovalPolicy,
}

impl Drop for TurnGrant {
    fn drop(&mut self) {
        let mut shared = self.policy.shared();
        shared.grants = Rulebook::default();
        shared.asks = Rulebook::default();
    }
}

/// Where the session's commands run, as far as approvals care: what the approval mode
/// runs by itself must stay inside what the sandbox confines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSandbox {
    /// Commands run in the sandbox, writing only beneath these folders.
    Confined {
        /// The folders commands may write beneath.
        writable: Vec<PathBuf>,
        /// Whether the sandbox masks secret files (its namespaces do; Landlock alone
        /// does not confine reads).
        secrets: SecretReads,
    },
    /// Commands run unconfined (`--sandbox off`, or no sandbox on this system).
    Unconfined,
}

impl CommandSandbox {
    /// The session's sandbox as configured at start-up.
    pub fn of_session() -> CommandSandbox {
        match crate::sandbox::session() {
            Some(sandbox) => CommandSandbox::Confined {
                writable: sandbox.policy.writable.clone(),
                secrets: match sandbox.policy.namespaces {
                    crate::sandbox::Namespaces::On => SecretReads::Masked,
                    crate::sandbox::Namespaces::Off => SecretReads::Visible,
                },
            },
            None => CommandSandbox::Unconfined,
        }
    }
}

/// What `/permissions` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionsView {
    /// Every rule in force, numbered.
    pub rules: Vec<RuleView>,
    /// The project file's `allow` rules not in force until approved.
    pub untrusted: Vec<String>,
    /// The project file.
    pub project_file: PathBuf,
}

/// Why a rule could not be removed.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// No rule has that number.
    #[error("there is no rule {0}; /permissions lists them with their numbers")]
    NoSuchRule(usize),
    /// Built-in rules are switched off in config.toml, not removed one by one.
    #[error(
        "rule {0} is built in; set `builtin_rules = \"off\"` under [permissions] in config.toml \
         to switch the built-in rules off"
    )]
    BuiltIn(usize),
    /// The file it came from could not be changed.
    #[error("cannot remove the rule from its file: {0}")]
    File(#[from] files::PermissionsError),
}

impl ApprovalPolicy {
    /// A policy over `permissions`, with nothing approved for the session yet.
    pub fn new(mode: ApprovalMode, approver: Approver, permissions: PermissionsSetup) -> Self {
        ApprovalPolicy {
            approver,
            shared: Arc::new(Mutex::new(Shared {
                mode,
                book: permissions.book,
                untrusted: permissions.untrusted,
                places: permissions.places,
                temp: permissions.temp,
                sandbox: CommandSandbox::Unconfined,
                grants: Rulebook::default(),
                asks: Rulebook::default(),
                plan_places: None,
                plan_file: None,
                told_plan: false,
            })),
            narrowed: Narrowing::default(),
        }
    }

    /// A clone sharing the rule book and the "always" answers (both ways) whose mode
    /// never exceeds `at_most` (nor the session's, whatever it is switched to), and
    /// whose commands are judged as running in `sandbox` when one is given (a
    /// read-only agent's). Narrowing a narrowed clone keeps the narrower of each.
    pub fn narrowed(&self, at_most: ApprovalMode, sandbox: Option<CommandSandbox>) -> Self {
        let mut clone = self.clone();
        clone.narrowed.at_most = Some(match self.narrowed.at_most {
            Some(already) => narrower(already, at_most),
            None => at_most,
        });
        if sandbox.is_some() {
            clone.narrowed.sandbox = sandbox;
        }
        clone
    }

    /// The mode this clone judges by: the session's, narrowed.
    fn effective_mode(&self, session: ApprovalMode) -> ApprovalMode {
        match self.narrowed.at_most {
            Some(cap) => narrower(session, cap),
            None => session,
        }
    }

    /// This policy for commands that run in `sandbox` (the session sets the sandbox it
    /// decided at start-up; without it, the mode's read-only commands ask).
    pub fn with_sandbox(self, sandbox: CommandSandbox) -> Self {
        self.shared().sandbox = sandbox;
        self
    }

    /// This policy with plan files placed in `places`.
    pub fn with_plan_places(self, places: PlanPlaces) -> Self {
        self.shared().plan_places = Some(places);
        self
    }

    /// Places the session's plan file for session `id` (the project's plans folder, else
    /// harness9's home's; see [`PlanPlaces::place`]) and returns it. Placed once: later
    /// calls return the same file.
    pub fn place_plan_file(&self, id: &str) -> Option<PathBuf> {
        let mut shared = self.shared();
        if shared.plan_file.is_none() {
            shared.plan_file = shared.plan_places.as_ref().and_then(|p| p.place(id));
        }
        shared.plan_file.clone()
    }

    /// The session's plan file, once placed.
    pub fn plan_file(&self) -> Option<PathBuf> {
        self.shared().plan_file.clone()
    }

    /// The note for the model's next message when plan mode began or ended since it was
    /// last told (`None` otherwise: other switches change nothing the model must know).
    pub fn take_mode_note(&self) -> Option<String> {
        let mut shared = self.shared();
        let in_plan = shared.mode == ApprovalMode::Plan;
        if in_plan == shared.told_plan {
            return None;
        }
        shared.told_plan = in_plan;
        Some(if in_plan {
            plan_mode::entered_note(shared.plan_file.as_deref())
        } else {
            plan_mode::left_note(mode_name(shared.mode))
        })
    }

    fn shared(&self) -> MutexGuard<'_, Shared> {
        // Every update is one push or removal: a poisoned lock holds a whole state.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The approval mode.
    pub fn mode(&self) -> ApprovalMode {
        let session = self.shared().mode;
        self.effective_mode(session)
    }

    /// Switches the approval mode for every clone's next call (a call already waiting
    /// for an answer keeps the verdict it got).
    pub fn set_mode(&self, mode: ApprovalMode) {
        self.shared().mode = mode;
    }

    /// Pre-approves `rules` (allow rules, e.g. `bash(git add:*)`) until the returned
    /// grant is dropped: a call they cover runs where the approval mode would otherwise
    /// ask, but only when no rule, hazard or destructive pattern decided it, it stays
    /// inside the project, and (for edits) beneath the sandbox's writable folders.
    /// Rules that do not parse are returned with why, and not granted.
    pub fn grant_for_turn(&self, rules: &[String]) -> (TurnGrant, Vec<RuleError>) {
        let home = self.shared().places.home.clone();
        let mut grants = Rulebook::default();
        let mut errors = Vec::new();
        for text in rules {
            let rule = match Rule::parse(text, home.as_deref()) {
                Ok(rule) => rule,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            grants.push(ActiveRule {
                rule,
                effect: Effect::Allow,
                source: Source::Session,
            });
        }
        self.shared().grants = grants;
        let grant = TurnGrant {
            policy: self.clone(),
        };
        (grant, errors)
    }

    /// Makes `rules` ask rules until the returned grant is dropped: a call they cover is
    /// asked about whatever the approval mode and the allow rules say (a deny rule still
    /// refuses it). Rules that do not parse are returned with why.
    pub fn ask_for_turn(&self, rules: &[&str]) -> (TurnGrant, Vec<RuleError>) {
        let home = self.shared().places.home.clone();
        let mut asks = Rulebook::default();
        let mut errors = Vec::new();
        for text in rules {
            match Rule::parse(text, home.as_deref()) {
                Ok(rule) => asks.push(ActiveRule {
                    rule,
                    effect: Effect::Ask,
                    source: Source::Session,
                }),
                Err(e) => errors.push(e),
            }
        }
        self.shared().asks = asks;
        let grant = TurnGrant {
            policy: self.clone(),
        };
        (grant, errors)
    }

    /// The project directory.
    pub fn project(&self) -> PathBuf {
        self.shared().places.project.clone()
    }

    /// Decides about a call to `tool` in the current approval mode. For [`Access::All`],
    /// the first part that does not simply run decides (an interactive caller asks about
    /// the parts one by one).
    pub fn verdict(&self, tool: &str, access: Access) -> Verdict {
        let mode = self.mode();
        self.verdict_in(mode, tool, access)
    }

    /// Decides about a call to `tool` as approval mode `mode` would (a caller that also
    /// confines the call by the mode reads the mode once and judges with it).
    pub fn verdict_in(&self, mode: ApprovalMode, tool: &str, access: Access) -> Verdict {
        if let Access::All(parts) = access {
            for part in parts {
                match self.verdict_in(mode, tool, part) {
                    Verdict::Run => {}
                    other => return other,
                }
            }
            return Verdict::Run;
        }
        // A plan is the user's to approve, whatever the rules say; only plan mode has one.
        if let Access::NeedsApproval(request @ ApprovalRequestKind::Plan { .. }) = access {
            if mode != ApprovalMode::Plan {
                return Verdict::DeniedInPlan {
                    request,
                    why: "exit_plan works only in plan mode".into(),
                };
            }
            let asked = AskPlan {
                request,
                because: None,
                offer: Offer::OnceOnly {
                    why: "a plan is approved once".into(),
                },
            };
            return match self.approver {
                Approver::Frontend => Verdict::Ask(asked),
                Approver::Nobody => Verdict::DenyUnattended(asked),
            };
        }
        let shared = self.shared();
        let project = shared.places.project.clone();
        let root = shared.places.root.clone();
        let temp: Vec<&Path> = shared.temp.iter().map(PathBuf::as_path).collect();
        let mode = self.effective_mode(mode);
        let sandbox = self.narrowed.sandbox.as_ref().unwrap_or(&shared.sandbox);
        let scope = Scope {
            project: &project,
            root: &root,
            temp: &temp,
            mode: match mode {
                ApprovalMode::Suggest => ModeRuns::NOTHING,
                // Plan mode's commands run read-only whatever the rules say; its edits
                // are judged by plan_mode before the rules.
                ApprovalMode::AutoEdit | ApprovalMode::FullAuto | ApprovalMode::Plan => {
                    ModeRuns::READS_AND_EDITS
                }
            },
            secrets: match sandbox {
                CommandSandbox::Confined { secrets, .. } => *secrets,
                CommandSandbox::Unconfined => SecretReads::Visible,
            },
        };
        let (request, subject_default) = match &access {
            Access::ReadOnly => return Verdict::Run,
            Access::ReadInside(path) => (
                ApprovalRequestKind::Read {
                    path: path.clone(),
                    via: None,
                },
                ModeDefault::Runs,
            ),
            Access::NeedsApproval(request) => (request.clone(), mode_default(mode, request)),
            // Taken apart above.
            Access::All(_) => return Verdict::Run,
        };
        let judge = |book: &Rulebook| match &request {
            ApprovalRequestKind::Command { command, cwd } => {
                book.judge(tool, Subject::Command { line: command, cwd }, &scope)
            }
            ApprovalRequestKind::Edit { path, .. } => {
                book.judge(tool, Subject::Edit { path }, &scope)
            }
            ApprovalRequestKind::Read { path, .. }
            | ApprovalRequestKind::ReadOutside { path, .. } => {
                book.judge(tool, Subject::Read { path }, &scope)
            }
            ApprovalRequestKind::Fetch { domain, .. } => {
                book.judge(tool, Subject::Fetch { domain }, &scope)
            }
            // Plans are answered above, before any rule; a search by `web_search` rules.
            ApprovalRequestKind::Mcp { .. }
            | ApprovalRequestKind::Search { .. }
            | ApprovalRequestKind::Plan { .. } => book.judge(tool, Subject::Call, &scope),
        };
        let judgement = match judge(&shared.book) {
            deny @ Judgement::Deny { .. } => deny,
            other if shared.asks.rules().is_empty() => other,
            other => match judge(&shared.asks) {
                asked @ Judgement::Ask(AskBecause::Rule { .. }) => asked,
                _ => other,
            },
        };
        let plan = match mode {
            ApprovalMode::Plan => plan_mode::judge(&request, shared.plan_file.as_deref()),
            ApprovalMode::Suggest | ApprovalMode::AutoEdit | ApprovalMode::FullAuto => {
                PlanJudgement::AsUsual
            }
        };
        if let PlanJudgement::Refused(why) = plan {
            return Verdict::DeniedInPlan { request, why };
        }
        let unconfined = unconfined_by_mode(mode, sandbox, &request);
        // A turn grant counts only inside the project; for edits, only beneath the
        // sandbox's writable folders (checked as the modes that edit by themselves do).
        let inside = !matches!(
            request,
            ApprovalRequestKind::ReadOutside { .. }
                | ApprovalRequestKind::Edit {
                    location: Location::Outside,
                    ..
                }
        );
        let granted = inside
            && !shared.grants.rules().is_empty()
            && matches!(judgement, Judgement::Undecided { .. })
            && matches!(
                judge(&shared.grants),
                Judgement::Allow {
                    by: AllowedBy::Rules
                }
            );
        let grant_unconfined = granted
            .then(|| unconfined_by_mode(ApprovalMode::FullAuto, sandbox, &request))
            .flatten();
        let secrets = scope.secrets;
        drop(shared);
        let plan_ask = |because, offer| AskPlan {
            request: request.clone(),
            because,
            offer,
        };
        let asked = match judgement {
            Judgement::Deny { rule, source } => {
                return Verdict::DeniedByRule {
                    request,
                    rule,
                    source,
                };
            }
            // The plan file, or a command in the sandbox that writes nothing (exec
            // refuses to start it where there is none): only what a person must see
            // still asks — an ask rule, or what reads secret files the sandbox shows.
            _ if plan == PlanJudgement::PlanFile => return Verdict::Run,
            Judgement::Ask(because @ (AskBecause::Rule { .. } | AskBecause::Opaque { .. }))
                if plan == PlanJudgement::ReadOnlyCommand
                    && !(matches!(because, AskBecause::Opaque { .. })
                        && secrets == SecretReads::Masked) =>
            {
                let why = match &because {
                    AskBecause::Rule { rule, source } => {
                        format!("the rule `ask {rule}` ({source}) asks every time")
                    }
                    AskBecause::Opaque { why } => why.clone(),
                    _ => String::new(),
                };
                plan_ask(Some(because), Offer::OnceOnly { why })
            }
            _ if plan == PlanJudgement::ReadOnlyCommand => return Verdict::Run,
            Judgement::Allow {
                by: AllowedBy::Rules,
            } => return Verdict::Run,
            Judgement::Allow {
                by: AllowedBy::Mode,
            } => match unconfined {
                None => return Verdict::Run,
                Some(why) => plan_ask(
                    Some(AskBecause::Unconfined { why: why.clone() }),
                    Offer::OnceOnly { why },
                ),
            },
            Judgement::Ask(because) => {
                let offer = match &because {
                    AskBecause::Destructive { exact_rule, .. } => Offer::Rules {
                        rules: vec![exact_rule.clone()],
                    },
                    AskBecause::Rule { rule, source } => Offer::OnceOnly {
                        why: format!("the rule `ask {rule}` ({source}) asks every time"),
                    },
                    AskBecause::Opaque { why }
                    | AskBecause::Unconfined { why }
                    | AskBecause::Hook { why } => Offer::OnceOnly { why: why.clone() },
                };
                plan_ask(Some(because), offer)
            }
            Judgement::Undecided { .. } if granted => match grant_unconfined {
                None => return Verdict::Run,
                Some(why) => plan_ask(
                    Some(AskBecause::Unconfined { why: why.clone() }),
                    Offer::OnceOnly { why },
                ),
            },
            Judgement::Undecided { offer } => match (subject_default, unconfined) {
                (ModeDefault::Runs, None) => return Verdict::Run,
                (ModeDefault::Runs, Some(why)) => {
                    plan_ask(Some(AskBecause::Unconfined { why }), offer)
                }
                (ModeDefault::Asks, _) => plan_ask(None, offer),
            },
        };
        match self.approver {
            Approver::Frontend => Verdict::Ask(asked),
            Approver::Nobody => Verdict::DenyUnattended(asked),
        }
    }

    /// Records a decision: "this session" adds the offered rules in memory, "this
    /// project" writes them to the project file too. Says which rules were added and
    /// where, and warns when the file could not be written (the rules still hold for
    /// the session).
    pub fn record(&self, plan: &AskPlan, decision: &ApprovalDecision) -> Recorded {
        let mut recorded = Recorded::default();
        let Offer::Rules { rules } = &plan.offer else {
            return recorded;
        };
        let source = match decision {
            ApprovalDecision::ApproveForSession => Source::Session,
            ApprovalDecision::ApproveForProject => Source::Project {
                path: self.shared().places.project_file(),
            },
            ApprovalDecision::Approve
            | ApprovalDecision::Deny { .. }
            | ApprovalDecision::ApprovePlan { .. } => return recorded,
        };
        let mut shared = self.shared();
        let mut warning = None;
        for text in rules {
            let Ok(rule) = Rule::parse(text, shared.places.home.as_deref()) else {
                continue;
            };
            if matches!(source, Source::Project { .. })
                && let Err(e) = files::add_to_project(&shared.places, Effect::Allow, text)
            {
                warning = Some(format!(
                    "could not save `{text}` for the project ({e}); it holds for this session"
                ));
            }
            let source = if warning.is_some() {
                Source::Session
            } else {
                source.clone()
            };
            recorded.added.push((text.clone(), source.clone()));
            shared.book.push(ActiveRule {
                rule,
                effect: Effect::Allow,
                source,
            });
        }
        recorded.warning = warning;
        recorded
    }

    /// Every rule in force and the project's unapproved `allow` rules.
    pub fn view(&self) -> PermissionsView {
        let shared = self.shared();
        PermissionsView {
            rules: shared.book.list(),
            untrusted: shared.untrusted.clone(),
            project_file: shared.places.project_file(),
        }
    }

    /// Removes rule `number` (as listed by [`ApprovalPolicy::view`]) from the session
    /// and from the file it came from.
    pub fn remove(&self, number: usize) -> Result<RuleView, RemoveError> {
        let mut shared = self.shared();
        let view = shared
            .book
            .list()
            .into_iter()
            .find(|r| r.number == number)
            .ok_or(RemoveError::NoSuchRule(number))?;
        if view.source == Source::BuiltIn {
            return Err(RemoveError::BuiltIn(number));
        }
        files::remove_from(&shared.places, &view.source, view.effect, &view.rule)?;
        shared.book.remove(number);
        Ok(view)
    }

    /// The message the model sees when nobody could approve a call.
    pub fn unattended_denial(&self, plan: &AskPlan) -> String {
        let what = match &plan.request {
            ApprovalRequestKind::Command { command, .. } => format!("running `{command}`"),
            ApprovalRequestKind::Edit {
                path,
                location: Location::Inside,
                ..
            } => format!("editing {}", path.display()),
            ApprovalRequestKind::Edit { path, .. } => {
                format!("editing {} (outside the project)", path.display())
            }
            ApprovalRequestKind::ReadOutside { path, .. } => {
                format!("reading {} (outside the project)", path.display())
            }
            ApprovalRequestKind::Read { path, .. } => format!("reading {}", path.display()),
            ApprovalRequestKind::Mcp { server, tool, .. } => {
                format!("the MCP tool `{tool}` of server `{server}`")
            }
            ApprovalRequestKind::Fetch { domain, .. } => format!("fetching from {domain}"),
            ApprovalRequestKind::Search { backend, .. } => {
                format!("searching the web through {backend}")
            }
            ApprovalRequestKind::Plan { file, .. } => {
                format!("the plan in {}", file.display())
            }
        };
        let needs = match (&plan.because, &plan.request) {
            (Some(AskBecause::Rule { rule, source }), _) => {
                format!("the rule `ask {rule}` ({source}) asks a person every time")
            }
            (Some(AskBecause::Destructive { what, exact_rule }), _) => format!(
                "{what}, so it needs a person's approval or an exact allow rule `{exact_rule}`"
            ),
            (
                Some(
                    AskBecause::Opaque { why }
                    | AskBecause::Unconfined { why }
                    | AskBecause::Hook { why },
                ),
                _,
            ) => {
                format!("{why}; a person must approve it")
            }
            (None, ApprovalRequestKind::Fetch { domain, .. }) => format!(
                "fetching asks a person in every approval mode; it runs unattended only with \
                 an allow rule `web_fetch({domain})`"
            ),
            (None, ApprovalRequestKind::Search { .. }) => "searching the web asks a person in \
                 every approval mode; it runs unattended only with an allow rule `web_search`"
                .to_string(),
            (None, request) => {
                let flag = match request {
                    ApprovalRequestKind::Edit {
                        location: Location::Inside,
                        ..
                    } => "--approval-mode auto-edit",
                    _ => "--approval-mode full-auto",
                };
                let because = match &plan.offer {
                    Offer::OnceOnly { why } => format!("; {why}"),
                    Offer::Rules { .. } => String::new(),
                };
                format!(
                    "it needs approval in approval mode '{}' (it would run with {flag} or an allow rule{because})",
                    mode_name(self.mode())
                )
            }
        };
        format!(
            "Denied: {what} was not run because {needs}, and this run is non-interactive, so \
             nobody can approve it. Do not retry it; continue without it or tell the user."
        )
    }

    /// Which addresses a call with these accesses may reach once approved: any address
    /// of a fetched host only when an allow rule names that host itself
    /// (`web_fetch(HOST)`); otherwise, whatever approved it (a wider rule, a "yes", a
    /// hook), public addresses only.
    pub fn web_reach(&self, tool: &str, parts: &[Access]) -> WebReach {
        let shared = self.shared();
        let named = parts.iter().find_map(|part| match part {
            Access::NeedsApproval(ApprovalRequestKind::Fetch { domain, .. }) => {
                shared.book.allow_naming_host(tool, domain)
            }
            _ => None,
        });
        match named {
            Some(active) => WebReach::AnyAddress {
                rule: active.rule.text().to_string(),
            },
            None => WebReach::PublicOnly,
        }
    }

    /// The message the model sees when a deny rule refused a call.
    pub fn rule_denial(rule: &str, source: &Source) -> String {
        format!(
            "Denied by the permission rule `deny {rule}` ({source}). Do not retry it or work \
             around it; continue without it or tell the user."
        )
    }
}

/// What the approval mode does when no rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ModeDefault {
    Runs,
    Asks,
}

/// Why a call the approval mode would run by itself must be asked about instead: the
/// mode runs commands (in `auto-edit`) only inside the sandbox, and edits only beneath
/// the folders the sandbox lets commands write. `None` when nothing stands in the way.
/// (`full-auto` with `--sandbox off` is the user's explicit choice: its commands run.)
fn unconfined_by_mode(
    mode: ApprovalMode,
    sandbox: &CommandSandbox,
    request: &ApprovalRequestKind,
) -> Option<String> {
    match (request, sandbox) {
        (ApprovalRequestKind::Command { .. }, CommandSandbox::Unconfined)
            if mode == ApprovalMode::AutoEdit =>
        {
            Some(
                "auto-edit runs read-only commands by itself only inside the sandbox, and \
                 this session has no sandbox"
                    .into(),
            )
        }
        (ApprovalRequestKind::Edit { path, .. }, CommandSandbox::Confined { writable, .. })
            if mode != ApprovalMode::Suggest =>
        {
            let real = crate::permissions::resolve::real_path(&crate::paths::normalize(path));
            let beneath = |p: &Path| writable.iter().any(|w| p.starts_with(w));
            (!(beneath(path) && beneath(&real))).then(|| {
                format!(
                    "{} is outside the folders the sandbox lets commands write, and edits \
                     follow the same rule",
                    path.display()
                )
            })
        }
        _ => None,
    }
}

/// What approval mode `mode` does with a call no rule decides.
fn mode_default(mode: ApprovalMode, request: &ApprovalRequestKind) -> ModeDefault {
    match (mode, request) {
        // Reaching the network from the harness9 process is asked about in every mode
        // (full-auto too): only a rule allows it unasked.
        (_, ApprovalRequestKind::Fetch { .. } | ApprovalRequestKind::Search { .. }) => {
            ModeDefault::Asks
        }
        (ApprovalMode::FullAuto, _)
        | (
            ApprovalMode::AutoEdit,
            ApprovalRequestKind::Edit {
                location: Location::Inside,
                ..
            },
        )
        | (_, ApprovalRequestKind::Read { .. })
        | (
            _,
            ApprovalRequestKind::Mcp {
                action: McpAction::ReadResource,
                ..
            },
        ) => ModeDefault::Runs,
        _ => ModeDefault::Asks,
    }
}

fn mode_name(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::Suggest => "suggest",
        ApprovalMode::AutoEdit => "auto-edit",
        ApprovalMode::FullAuto => "full-auto",
        ApprovalMode::Plan => "plan",
    }
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
