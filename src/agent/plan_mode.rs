//! Plan mode's judgement of what a call may change: the plan file (where it lies, and
//! whether an edit really lands on it, judged on the resolved path), the tools a plan
//! offers, and the words of its refusals.
//!
//! The plan file is `.harness9/plans/<session>.md` beneath the project root, or, when
//! that folder cannot be made (a read-only project, a link where a folder should be),
//! `$HARNESS9_HOME/plans/<session>.md`. An edit is let through only when the path it
//! would write, every link resolved, is the plan file and the plan file's own path has
//! no link at or above it; the write itself then goes through `nofollow` (write_file,
//! edit_file), so a link put in its way later fails the write instead of redirecting it.
//! Commands are not judged here: plan mode hands them a sandbox that writes nothing
//! (`tools::CommandWrites::Nothing`). It must not know how a frontend asks or how a tool
//! runs.

use std::path::{Path, PathBuf};

use crate::protocol::{ApprovalMode, ApprovalRequestKind, McpAction};
use crate::tools::{CommandWrites, ToolSet};

/// Where plan files may go: the project's folder first, the harness9 home's second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanPlaces {
    /// `<project root>/.harness9/plans`.
    pub project: PathBuf,
    /// `$HARNESS9_HOME/plans`.
    pub fallback: PathBuf,
}

impl PlanPlaces {
    /// The places for the project rooted at `root`, with `home` as harness9's home.
    pub fn new(root: &Path, home: &Path) -> PlanPlaces {
        PlanPlaces {
            project: root.join(".harness9").join("plans"),
            fallback: home.join("plans"),
        }
    }

    /// The plan file of session `id`: in the project's folder when it can be made and
    /// reached with no link on the way, else in the fallback folder (made private).
    /// `None` when neither can be made.
    pub fn place(&self, id: &str) -> Option<PathBuf> {
        let name = format!("{id}.md");
        [&self.project, &self.fallback]
            .into_iter()
            .find_map(|dir| usable_folder(dir).map(|dir| dir.join(&name)))
    }
}

/// `dir`, made if missing without following any link on the way (`nofollow`), when it
/// is reached through no link and this user can write in it.
fn usable_folder(dir: &Path) -> Option<PathBuf> {
    let dir = crate::paths::normalize(dir);
    crate::nofollow::open_dir(&dir, crate::nofollow::Parents::Create).ok()?;
    if crate::permissions::resolve::real_path(&dir) != dir {
        return None;
    }
    nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK)
        .ok()
        .map(|()| dir)
}

/// What plan mode says of a call before the rules judge it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanJudgement {
    /// Judge it as usual (reads, MCP resources).
    AsUsual,
    /// It writes the plan file: it runs unless a deny rule refuses it.
    PlanFile,
    /// It runs in the read-only sandbox unless a rule denies or asks.
    ReadOnlyCommand,
    /// Refused: why.
    Refused(String),
}

/// What plan mode says of `request`, with `plan_file` the session's plan file.
pub fn judge(request: &ApprovalRequestKind, plan_file: Option<&Path>) -> PlanJudgement {
    match request {
        ApprovalRequestKind::Read { .. } | ApprovalRequestKind::ReadOutside { .. } => {
            PlanJudgement::AsUsual
        }
        ApprovalRequestKind::Mcp {
            action: McpAction::ReadResource,
            ..
        } => PlanJudgement::AsUsual,
        ApprovalRequestKind::Mcp { server, tool, .. } => PlanJudgement::Refused(format!(
            "plan mode does not call MCP tools (`{tool}` of `{server}`): what they do cannot \
             be confined to reading"
        )),
        ApprovalRequestKind::Command { .. } => PlanJudgement::ReadOnlyCommand,
        // web_fetch is not offered in plan mode; were it called, it is judged as usual
        // (it changes nothing here).
        ApprovalRequestKind::Fetch { .. } | ApprovalRequestKind::Search { .. } => {
            PlanJudgement::AsUsual
        }
        // Asked of a person before the rules are consulted (see ApprovalPolicy::verdict_in).
        ApprovalRequestKind::Plan { .. } => PlanJudgement::AsUsual,
        ApprovalRequestKind::Edit { path, .. } => match plan_file {
            Some(plan) if is_plan_file(path, plan) => PlanJudgement::PlanFile,
            Some(plan) => PlanJudgement::Refused(format!(
                "plan mode writes only the plan file {}; {} is not it (every link on the \
                 way resolved)",
                plan.display(),
                path.display()
            )),
            None => PlanJudgement::Refused(
                "plan mode writes only the plan file, and this session has none (neither \
                 .harness9/plans nor $HARNESS9_HOME/plans could be made)"
                    .into(),
            ),
        },
    }
}

/// Whether an edit of `path` (the real path the tool will write, links resolved) lands
/// on `plan`, the plan file, and nothing at or above `plan` is a link.
pub fn is_plan_file(path: &Path, plan: &Path) -> bool {
    let plan_real = crate::permissions::resolve::real_path(plan);
    let path_real = crate::permissions::resolve::real_path(path);
    plan_real == crate::paths::normalize(plan) && path_real == plan_real
}

/// The message the model gets when plan mode refuses a call.
pub fn denial(why: &str) -> String {
    format!(
        "Denied in plan mode: {why}. Do not retry it: read, search and run read-only \
         commands, write your plan to the plan file, then call exit_plan to have it \
         approved."
    )
}

/// The model's note when plan mode begins.
pub fn entered_note(plan_file: Option<&Path>) -> String {
    let file = match plan_file {
        Some(path) => format!("the plan file {}", path.display()),
        None => "no file (none could be made: give the plan in your answer)".to_string(),
    };
    format!(
        "[Plan mode is on: do not change the project. You may read and search, and run \
         commands, which run in a sandbox that lets them write nothing. The only file you \
         may write is {file}: write your plan there (steps, files to change, risks), then \
         call exit_plan to show it to the user for approval.]"
    )
}

/// The model's note when plan mode ends by a switch of the user's.
pub fn left_note(mode: &str) -> String {
    format!(
        "[Plan mode is off: the approval mode is now {mode}, and the tools are yours to use \
         again.]"
    )
}

/// What the model is told when the user keeps planning instead of approving.
pub fn kept_planning(feedback: Option<&str>) -> String {
    match feedback {
        Some(feedback) => format!(
            "The user did not approve the plan yet; plan mode stays on. Their feedback: \
             {feedback}\nRevise the plan file accordingly, then call exit_plan again."
        ),
        None => "The user did not approve the plan yet; plan mode stays on. Ask what to \
                 change, or revise the plan file, then call exit_plan again."
            .to_string(),
    }
}

/// The refusal of a tool plan mode does not offer.
pub fn withheld(tool: &str) -> String {
    format!("the tool `{tool}` does not run in plan mode")
}

/// The tools a request offers in `mode`.
pub fn tool_set(mode: ApprovalMode) -> ToolSet {
    match mode {
        ApprovalMode::Plan => ToolSet::Plan,
        ApprovalMode::Suggest | ApprovalMode::AutoEdit | ApprovalMode::FullAuto => ToolSet::All,
    }
}

/// What commands started in `mode` may write.
pub fn command_writes(mode: ApprovalMode) -> CommandWrites {
    match mode {
        ApprovalMode::Plan => CommandWrites::Nothing,
        ApprovalMode::Suggest | ApprovalMode::AutoEdit | ApprovalMode::FullAuto => {
            CommandWrites::AsSession
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Location;

    fn edit(path: &Path) -> ApprovalRequestKind {
        ApprovalRequestKind::Edit {
            path: path.to_path_buf(),
            via: None,
            diff: None,
            location: Location::Inside,
        }
    }

    #[test]
    fn the_plan_file_goes_to_the_project_and_else_to_the_home() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        let places = PlanPlaces::new(&root, &home);
        assert_eq!(
            places.place("abc"),
            Some(root.join(".harness9/plans/abc.md"))
        );
        // A link where the folder should be: the home's folder instead.
        let other = tempfile::tempdir().unwrap();
        let root2 = tempfile::tempdir().unwrap();
        let root2 = std::fs::canonicalize(root2.path()).unwrap();
        std::os::unix::fs::symlink(other.path(), root2.join(".harness9")).unwrap();
        let places = PlanPlaces::new(&root2, &home);
        assert_eq!(places.place("abc"), Some(home.join("plans/abc.md")));
        assert!(!other.path().join("plans").exists());
    }

    #[test]
    fn only_the_plan_file_reached_through_no_link_above_it_is_writable() {
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        let plans = root.join(".harness9/plans");
        std::fs::create_dir_all(&plans).unwrap();
        let plan = plans.join("s.md");
        assert_eq!(judge(&edit(&plan), Some(&plan)), PlanJudgement::PlanFile);
        for other in [root.join("src/a"), plans.join("t.md"), root.join("s.md")] {
            assert!(matches!(
                judge(&edit(&other), Some(&plan)),
                PlanJudgement::Refused(_)
            ));
        }
        assert!(matches!(
            judge(&edit(&plan), None),
            PlanJudgement::Refused(_)
        ));
        // A link at the plan file, or above it, redirects nothing: refused.
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("x.md");
        std::os::unix::fs::symlink(&target, &plan).unwrap();
        assert!(!is_plan_file(&plan, &plan));
        assert!(!is_plan_file(&target, &plan));
        std::fs::remove_file(&plan).unwrap();
        std::fs::remove_dir(&plans).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &plans).unwrap();
        assert!(!is_plan_file(&plan, &plan));
        assert!(!is_plan_file(&elsewhere.path().join("s.md"), &plan));
    }

    #[test]
    fn mcp_tools_are_refused_and_resources_judged_as_usual() {
        let call = |action| ApprovalRequestKind::Mcp {
            server: "s".into(),
            tool: "t".into(),
            action,
            arguments: String::new(),
        };
        assert_eq!(
            judge(&call(McpAction::ReadResource), None),
            PlanJudgement::AsUsual
        );
        assert!(matches!(
            judge(&call(McpAction::CallTool), None),
            PlanJudgement::Refused(_)
        ));
    }

    /// The policy in plan mode over a real project folder, its plan file placed.
    fn planning(
        extra: &[(&str, crate::protocol::Effect)],
    ) -> (
        tempfile::TempDir,
        crate::agent::approval::ApprovalPolicy,
        PathBuf,
    ) {
        use crate::agent::approval::ApprovalPolicy;
        use crate::permissions::{ActiveRule, PermissionsSetup, Rule};
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut setup = PermissionsSetup::built_in(&root, &root.join("h9"));
        for (text, effect) in extra {
            setup.book.push(ActiveRule {
                rule: Rule::parse(text, None).unwrap(),
                effect: *effect,
                source: crate::protocol::Source::Session,
            });
        }
        let policy = ApprovalPolicy::new(ApprovalMode::Plan, crate::agent::Approver::Nobody, setup)
            .with_plan_places(PlanPlaces::new(&root, &root.join("h9")));
        let plan = policy.place_plan_file("s1").unwrap();
        (dir, policy, plan)
    }

    fn command(line: &str, cwd: &Path) -> crate::tools::Access {
        crate::tools::Access::NeedsApproval(ApprovalRequestKind::Command {
            command: line.into(),
            cwd: cwd.to_path_buf(),
        })
    }

    #[test]
    fn plan_mode_runs_commands_writes_the_plan_file_and_refuses_other_edits() {
        use crate::agent::approval::Verdict;
        use crate::protocol::Effect;
        let (dir, policy, plan) = planning(&[("bash(curl:*)", Effect::Deny)]);
        let root = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(plan, root.join(".harness9/plans/s1.md"));
        // Commands run by themselves (the sandbox that writes nothing holds them), even
        // ones that would write or destroy; a deny rule still refuses.
        for line in ["touch x", "rm -rf src", "cargo build", "ls"] {
            assert_eq!(
                policy.verdict("bash", command(line, &root)),
                Verdict::Run,
                "{line}"
            );
        }
        assert!(matches!(
            policy.verdict("bash", command("curl example.com", &root)),
            Verdict::DeniedByRule { .. }
        ));
        // Only the plan file is written.
        let write = |path: &Path| crate::tools::Access::NeedsApproval(edit(path).clone());
        assert_eq!(policy.verdict("write_file", write(&plan)), Verdict::Run);
        for other in [root.join("src/a"), root.join(".harness9/permissions.toml")] {
            assert!(matches!(
                policy.verdict("write_file", write(&other)),
                Verdict::DeniedInPlan { .. }
            ));
        }
        // Leaving plan mode gives the rules back their say: suggest asks (nobody here).
        policy.set_mode(ApprovalMode::Suggest);
        assert!(matches!(
            policy.verdict("write_file", write(&plan)),
            Verdict::DenyUnattended(_)
        ));
    }

    #[test]
    fn the_model_is_told_when_plan_mode_begins_and_ends_once_each() {
        let (_dir, policy, plan) = planning(&[]);
        let note = policy.take_mode_note().unwrap();
        assert!(note.contains(&plan.display().to_string()), "{note}");
        assert!(note.contains("exit_plan"), "{note}");
        assert_eq!(policy.take_mode_note(), None);
        policy.set_mode(ApprovalMode::AutoEdit);
        assert!(policy.take_mode_note().unwrap().contains("auto-edit"));
        policy.set_mode(ApprovalMode::FullAuto);
        assert_eq!(policy.take_mode_note(), None, "other switches say nothing");
    }
}
