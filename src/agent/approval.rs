//! The approval policy: given the approval mode, what a call would do, and what the user
//! already approved for this session, decide whether a call runs, must be asked about,
//! or is denied because nobody can answer.
//!
//! It owns the session's "always" approvals. Clones share them: a forked skill's
//! sub-agent works under the same policy as the conversation that started it, so an
//! "always" given in either holds in both. It must not know how a frontend asks.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::agent::{ApprovalMode, Approver};
use crate::protocol::{ApprovalDecision, ApprovalRequestKind, Location};
use crate::tools::Access;

/// What to do with a call before running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Run,
    /// Ask the frontend about this request.
    Ask(ApprovalRequestKind),
    /// Deny it at once: nobody can be asked.
    DenyUnattended(ApprovalRequestKind),
}

/// The session's approval state. Cheap to clone; clones share the "always" grants.
#[derive(Debug, Clone)]
pub struct ApprovalPolicy {
    mode: ApprovalMode,
    approver: Approver,
    grants: Arc<Mutex<Grants>>,
}

/// What the user approved for the whole session.
#[derive(Debug, Default)]
struct Grants {
    command_prefixes: Vec<String>,
    edits_in_project: bool,
    reads_outside: bool,
}

impl ApprovalPolicy {
    /// A policy with nothing approved for the session yet.
    pub fn new(mode: ApprovalMode, approver: Approver) -> Self {
        ApprovalPolicy {
            mode,
            approver,
            grants: Arc::default(),
        }
    }

    fn grants(&self) -> MutexGuard<'_, Grants> {
        // Every update is one assignment or push: a poisoned lock holds a whole state.
        self.grants.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The approval mode.
    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    /// Decides about a call.
    pub fn verdict(&self, access: Access) -> Verdict {
        let request = match access {
            Access::ReadOnly => return Verdict::Run,
            Access::NeedsApproval(request) => request,
        };
        if self.allowed_without_asking(&request) {
            return Verdict::Run;
        }
        match self.approver {
            Approver::Frontend => Verdict::Ask(request),
            Approver::Nobody => Verdict::DenyUnattended(request),
        }
    }

    fn allowed_without_asking(&self, request: &ApprovalRequestKind) -> bool {
        let grants = self.grants();
        match (self.mode, request) {
            (ApprovalMode::FullAuto, _) => true,
            (_, ApprovalRequestKind::Command { command, .. }) => {
                command_prefix(command).is_some_and(|p| grants.command_prefixes.contains(&p))
            }
            (
                ApprovalMode::AutoEdit,
                ApprovalRequestKind::Edit {
                    location: Location::Inside,
                    ..
                },
            ) => true,
            (
                _,
                ApprovalRequestKind::Edit {
                    location: Location::Inside,
                    ..
                },
            ) => grants.edits_in_project,
            (_, ApprovalRequestKind::Edit { .. }) => false,
            (_, ApprovalRequestKind::ReadOutside { .. }) => grants.reads_outside,
        }
    }

    /// Records a decision; `ApproveForSession` widens what runs without asking.
    pub fn record(&self, request: &ApprovalRequestKind, decision: &ApprovalDecision) {
        if *decision != ApprovalDecision::ApproveForSession {
            return;
        }
        let mut grants = self.grants();
        match request {
            ApprovalRequestKind::Command { command, .. } => {
                if let Some(prefix) = command_prefix(command)
                    && !grants.command_prefixes.contains(&prefix)
                {
                    grants.command_prefixes.push(prefix);
                }
            }
            ApprovalRequestKind::Edit { .. } => grants.edits_in_project = true,
            ApprovalRequestKind::ReadOutside { .. } => grants.reads_outside = true,
        }
    }

    /// The message the model sees when nobody could approve a call.
    pub fn unattended_denial(&self, request: &ApprovalRequestKind) -> String {
        let (what, flag) = match request {
            ApprovalRequestKind::Command { command, .. } => {
                (format!("running `{command}`"), "--approval-mode full-auto")
            }
            ApprovalRequestKind::Edit {
                path,
                location: Location::Inside,
                ..
            } => (
                format!("editing {}", path.display()),
                "--approval-mode auto-edit",
            ),
            ApprovalRequestKind::Edit { path, .. } => (
                format!("editing {} (outside the project)", path.display()),
                "--approval-mode full-auto",
            ),
            ApprovalRequestKind::ReadOutside { path } => (
                format!("reading {} (outside the project)", path.display()),
                "--approval-mode full-auto",
            ),
        };
        let mode = match self.mode {
            ApprovalMode::Suggest => "suggest",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::FullAuto => "full-auto",
        };
        format!(
            "Denied: {what} needs approval in approval mode '{mode}', and this run is \
             non-interactive, so nobody can approve it. Do not retry it; continue without it \
             or tell the user it needs {flag}."
        )
    }
}

/// The first word of a command (what "always allow this command" covers), ignoring
/// leading environment assignments like `FOO=1`.
pub fn command_prefix(command: &str) -> Option<String> {
    command
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with('='))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn cmd(c: &str) -> Access {
        Access::NeedsApproval(ApprovalRequestKind::Command {
            command: c.into(),
            cwd: PathBuf::from("/p"),
        })
    }
    fn edit(outside: bool) -> Access {
        Access::NeedsApproval(ApprovalRequestKind::Edit {
            path: PathBuf::from("/p/a.rs"),
            diff: None,
            location: if outside {
                Location::Outside
            } else {
                Location::Inside
            },
        })
    }

    #[test]
    fn modes_decide_what_runs_without_asking() {
        let suggest = ApprovalPolicy::new(ApprovalMode::Suggest, Approver::Frontend);
        assert_eq!(suggest.verdict(Access::ReadOnly), Verdict::Run);
        assert!(matches!(suggest.verdict(edit(false)), Verdict::Ask(_)));
        assert!(matches!(suggest.verdict(cmd("ls")), Verdict::Ask(_)));

        let auto_edit = ApprovalPolicy::new(ApprovalMode::AutoEdit, Approver::Frontend);
        assert_eq!(auto_edit.verdict(edit(false)), Verdict::Run);
        assert!(matches!(auto_edit.verdict(edit(true)), Verdict::Ask(_)));
        assert!(matches!(auto_edit.verdict(cmd("ls")), Verdict::Ask(_)));

        let full = ApprovalPolicy::new(ApprovalMode::FullAuto, Approver::Nobody);
        assert_eq!(full.verdict(edit(true)), Verdict::Run);
        assert_eq!(full.verdict(cmd("rm -rf x")), Verdict::Run);
    }

    #[test]
    fn nobody_to_ask_means_deny_at_once() {
        let p = ApprovalPolicy::new(ApprovalMode::Suggest, Approver::Nobody);
        let Verdict::DenyUnattended(req) = p.verdict(cmd("cargo test")) else {
            panic!()
        };
        let msg = p.unattended_denial(&req);
        assert!(
            msg.contains("cargo test") && msg.contains("full-auto"),
            "{msg}"
        );
    }

    #[test]
    fn always_covers_the_command_prefix_and_edits() {
        let p = ApprovalPolicy::new(ApprovalMode::Suggest, Approver::Frontend);
        let Verdict::Ask(req) = p.verdict(cmd("RUST_LOG=1 cargo test -q")) else {
            panic!()
        };
        p.record(&req, &ApprovalDecision::ApproveForSession);
        assert_eq!(p.verdict(cmd("cargo build")), Verdict::Run);
        assert!(matches!(p.verdict(cmd("git push")), Verdict::Ask(_)));

        let Verdict::Ask(req) = p.verdict(edit(false)) else {
            panic!()
        };
        p.record(&req, &ApprovalDecision::Approve);
        assert!(matches!(p.verdict(edit(false)), Verdict::Ask(_)));
        p.record(&req, &ApprovalDecision::ApproveForSession);
        assert_eq!(p.verdict(edit(false)), Verdict::Run);
        assert!(matches!(p.verdict(edit(true)), Verdict::Ask(_)));
    }

    #[test]
    fn a_sub_agents_policy_shares_the_sessions_always_answers() {
        let session = ApprovalPolicy::new(ApprovalMode::Suggest, Approver::Frontend);
        let sub_agent = session.clone();
        let Verdict::Ask(req) = sub_agent.verdict(cmd("cargo test")) else {
            panic!()
        };
        sub_agent.record(&req, &ApprovalDecision::ApproveForSession);
        assert_eq!(session.verdict(cmd("cargo build")), Verdict::Run);
        let Verdict::Ask(req) = session.verdict(edit(false)) else {
            panic!()
        };
        session.record(&req, &ApprovalDecision::ApproveForSession);
        assert_eq!(sub_agent.verdict(edit(false)), Verdict::Run);
    }
}
