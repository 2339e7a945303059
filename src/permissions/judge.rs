//! The judgement of one call against the rule book and what the approval mode runs by
//! itself: deny wins over ask over allow; a command line is approvable by a rule or by
//! the mode's read-only list only when the shell reader sees every word as written (no
//! expansion, pattern, substitution, unknown builtin or assignment), every command it
//! runs (wrappers, `bash -c` and `find -exec` looked through) is covered, and every file
//! it writes by redirection is an edit the rules or the mode allow. Paths are judged by
//! their spelling and by where they really lead, from every folder the line may run in
//! (`cd` moves it). Destructive commands ask unless an exact rule names them, and a
//! command harness9 cannot see ask in every mode.
//!
//! It must not know how a frontend asks or what the approval mode is beyond
//! [`ModeRuns`].

use std::path::{Path, PathBuf};

use super::destructive::{self, Places};
use super::git_repo;
use super::peel::{self, Effective};
use super::readonly::{self, ReadOnly};
use super::reads;
use super::resolve::real_path;
use super::rule::{self, Case, ToolSelector};
use super::shell::{self, Direction, Parsed, SimpleCommand};
use super::{
    ActiveRule, AllowedBy, Judgement, ProjectEdits, ReadOnlyCommands, Rulebook, Scope, SecretReads,
    Subject,
};
use crate::paths;
use crate::protocol::{AskBecause, Effect, Offer};

/// The rule "always" adds for edits in the working folder, anchored at the project
/// root like every relative pattern: `edit(**)` when the two are one folder, else
/// `edit(SUB/**)`, so an answer given in a subfolder never allows the whole project.
fn edits_beneath(project: &Path, root: &Path) -> String {
    match project.strip_prefix(root) {
        Ok(sub) if sub.as_os_str().is_empty() => "edit(**)".to_string(),
        Ok(sub) => format!("edit({}/**)", globset::escape(&sub.to_string_lossy())),
        Err(_) => format!("edit({}/**)", globset::escape(&project.to_string_lossy())),
    }
}

/// Redirection targets that write nothing anyone keeps.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

impl Rulebook {
    /// Judges a call to `tool` in `scope`.
    pub fn judge(&self, tool: &str, subject: Subject<'_>, scope: &Scope<'_>) -> Judgement {
        match subject {
            Subject::Command { line, cwd } => self.judge_command(tool, line, cwd, scope),
            Subject::Read { path } => self.judge_path(tool, path, scope, PathUse::Read),
            Subject::Edit { path } => self.judge_path(tool, path, scope, PathUse::Edit),
            Subject::Call => self.judge_call(tool),
            Subject::Fetch { domain } => self.judge_fetch(tool, domain),
        }
    }

    /// A web request: deny and ask rules for the tool and this host (or the whole tool)
    /// first, then allow rules; "always" offers `tool(HOST)`.
    fn judge_fetch(&self, tool: &str, domain: &str) -> Judgement {
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(hit) = self.first(effect, |r| r.matches_domain(tool, domain)) {
                return verdict_of(hit);
            }
        }
        if self
            .first(Effect::Allow, |r| r.matches_domain(tool, domain))
            .is_some()
        {
            return Judgement::Allow {
                by: AllowedBy::Rules,
            };
        }
        Judgement::Undecided {
            offer: Offer::Rules {
                rules: vec![format!("{tool}({domain})")],
            },
        }
    }

    /// A call judged by its tool alone: rules that name the tool (or, for an MCP tool,
    /// its server: `mcp__NAME`) without a pattern; "always" offers the tool's name.
    fn judge_call(&self, tool: &str) -> Judgement {
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(hit) = self.first(effect, |r| r.covers_every_call(tool)) {
                return verdict_of(hit);
            }
        }
        if self
            .first(Effect::Allow, |r| r.covers_every_call(tool))
            .is_some()
        {
            return Judgement::Allow {
                by: AllowedBy::Rules,
            };
        }
        Judgement::Undecided {
            offer: Offer::Rules {
                rules: vec![tool.to_string()],
            },
        }
    }

    /// A file read or edit: the path as given and where it really leads are both judged;
    /// deny and ask rules match either (without regard to case), allow rules must cover
    /// both. Patterns are anchored at the project root; what "inside" means is the
    /// working folder.
    fn judge_path(&self, tool: &str, path: &Path, scope: &Scope<'_>, used: PathUse) -> Judgement {
        let (project, root) = (scope.project, scope.root);
        let candidates = spelled_and_real(path);
        for effect in [Effect::Deny, Effect::Ask] {
            let hit = self.first(effect, |r| {
                candidates
                    .iter()
                    .any(|p| r.matches_path_as(tool, p, root, Case::Folded))
            });
            if let Some(hit) = hit {
                return verdict_of(hit);
            }
        }
        let allowed = candidates.iter().all(|p| {
            self.first(Effect::Allow, |r| r.matches_path(tool, p, root))
                .is_some()
        });
        if allowed {
            return Judgement::Allow {
                by: AllowedBy::Rules,
            };
        }
        let inside = candidates.iter().all(|p| p.starts_with(project));
        let rule = match (used, inside) {
            (PathUse::Edit, true) => edits_beneath(project, root),
            (PathUse::Edit, false) => format!("edit({})", path.display()),
            (PathUse::Read, _) => {
                let dir = path.parent().unwrap_or(path);
                format!("read({}/**)", dir.display())
            }
        };
        Judgement::Undecided {
            offer: Offer::Rules { rules: vec![rule] },
        }
    }

    fn judge_command(&self, tool: &str, line: &str, cwd: &Path, scope: &Scope<'_>) -> Judgement {
        let parsed = shell::parse(line);
        let cwds = cwds_of(&parsed, cwd);
        let runs: Vec<Vec<Effective>> = parsed.commands.iter().map(peel::effective).collect();
        let line = Line {
            parsed: &parsed,
            cwds: &cwds,
            runs: &runs,
        };
        // Deny, then ask: any command it runs (substitutions, wrappers and command
        // strings included), any file a word names or a redirection touches.
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(hit) = self.command_hit(effect, tool, &line, scope.root) {
                return verdict_of(hit);
            }
        }
        if let Some(judgement) = self.unnamed_reads(tool, &line, scope) {
            return judgement;
        }
        if let Some(why) = runs.iter().flatten().find_map(|e| match e {
            Effective::Unseen { why } => Some(why),
            Effective::Seen { .. } => None,
        }) {
            let why = if self.has_deny_rules_for(tool) {
                format!("{why}, so the deny rules for `{tool}` cannot see what it runs")
            } else {
                format!("{why}, so harness9 cannot tell whether it destroys work")
            };
            return Judgement::Ask(AskBecause::Opaque { why });
        }
        if let Some(asked) = self.destructive(tool, &line, scope) {
            return asked;
        }
        if let Some(hazard) = parsed.hazards.first() {
            return once_only(hazard.describe());
        }
        let mut by = AllowedBy::Rules;
        match self.redirections(&line, scope) {
            Ok(allowed) => by = by.min(allowed),
            Err(why) => return once_only(why),
        }
        let mut proposed = Vec::new();
        for (i, command) in parsed.commands.iter().enumerate() {
            match self.command_allowed(tool, command, &cwds[i], scope) {
                Ok(allowed) => by = by.min(allowed),
                Err(Refusal::OnceOnly(why)) => return once_only(why),
                Err(Refusal::Offer) => {
                    if let Some(rule) = rule::proposed_prefix(tool, command)
                        && !proposed.contains(&rule)
                    {
                        proposed.push(rule);
                    }
                }
            }
        }
        if parsed.commands.is_empty() {
            return once_only("it runs no command".into());
        }
        if proposed.is_empty() {
            Judgement::Allow { by }
        } else {
            Judgement::Undecided {
                offer: Offer::Rules { rules: proposed },
            }
        }
    }

    /// Whether a deny rule exists for `tool` that a hidden command could dodge.
    fn has_deny_rules_for(&self, tool: &str) -> bool {
        self.rules.iter().any(|r| {
            r.effect == Effect::Deny
                && r.rule.covers_tool(tool)
                && *r.rule.tools() != ToolSelector::Any
        })
    }

    /// The first rule with `effect` that matches a command the line runs, a file one of
    /// its words names (`*(…)` rules), or a file it writes (`edit(…)` and `*(…)` rules).
    fn command_hit(
        &self,
        effect: Effect,
        tool: &str,
        line: &Line<'_>,
        root: &Path,
    ) -> Option<&ActiveRule> {
        self.rules.iter().filter(|r| r.effect == effect).find(|r| {
            line.parsed.commands.iter().enumerate().any(|(i, command)| {
                let cwds = &line.cwds[i];
                let seen = line.runs[i].iter().filter_map(|e| match e {
                    Effective::Seen { words, .. } => Some(words),
                    Effective::Unseen { .. } => None,
                });
                let names_a_command = r.rule.matches_command(tool, command)
                    || seen.clone().any(|words| {
                        r.rule.matches_command(
                            tool,
                            &SimpleCommand {
                                words: words.clone(),
                                ..SimpleCommand::default()
                            },
                        )
                    });
                let names_a_file = *r.rule.tools() == ToolSelector::Any
                    && seen
                        .flat_map(|words| named_paths(&words[1..], cwds))
                        .chain(redirect_paths(command, cwds, None))
                        .any(|p| r.rule.matches_path_as(tool, &p, root, Case::Folded));
                let writes_a_file = redirect_paths(command, cwds, Some(Direction::Write))
                    .any(|p| r.rule.matches_path_as("write_file", &p, root, Case::Folded));
                // A program not known to only read may write any file it names (`cp x
                // .git/hooks/pre-commit`, `rm -rf .git`): edit rules see those names too.
                let may_write_a_named_file = *r.rule.tools() == ToolSelector::Editors
                    && line.runs[i].iter().any(|run| match run {
                        Effective::Seen { words, .. } => {
                            readonly::read_only(&SimpleCommand {
                                words: words.clone(),
                                ..SimpleCommand::default()
                            }) == ReadOnly::No
                                && named_paths(&words[1..], cwds).any(|p| {
                                    r.rule.matches_path_as("write_file", &p, root, Case::Folded)
                                })
                        }
                        Effective::Unseen { .. } => false,
                    });
                names_a_command || names_a_file || writes_a_file || may_write_a_named_file
            })
        })
    }

    /// The secret files a command reads without naming them: a git command printing
    /// contents in a repository that tracks one (in every mode: git's objects are never
    /// masked), and a recursive reader's folders where commands see secret files.
    fn unnamed_reads(&self, tool: &str, line: &Line<'_>, scope: &Scope<'_>) -> Option<Judgement> {
        let mut budget = reads::WALK_BUDGET;
        for (i, runs) in line.runs.iter().enumerate() {
            for run in runs {
                let Effective::Seen { words, .. } = run else {
                    continue;
                };
                for cwd in &line.cwds[i] {
                    if readonly::git_shows_contents(words) {
                        match git_repo::tracked_secret(cwd) {
                            Ok(Some(path)) => {
                                if let Some(j) = self.secret_verdict(tool, Path::new(&path), scope)
                                {
                                    return Some(j);
                                }
                            }
                            Ok(None) => {}
                            Err(e) => {
                                return Some(Judgement::Ask(AskBecause::Opaque {
                                    why: format!(
                                        "{e}, so it cannot tell which secret files it shows"
                                    ),
                                }));
                            }
                        }
                    }
                    if scope.secrets == SecretReads::Masked {
                        continue;
                    }
                    let Some((roots, follow)) = reads::recursive_roots(words) else {
                        continue;
                    };
                    for root in roots {
                        let root = paths::normalize(&paths::absolute(&root, cwd));
                        match reads::first_secret(
                            &root,
                            follow,
                            &mut budget,
                            &super::is_secret_file,
                        ) {
                            reads::Found::Secret(path) => {
                                if let Some(j) = self.secret_verdict(tool, &path, scope) {
                                    return Some(j);
                                }
                            }
                            reads::Found::Nothing => {}
                            reads::Found::TooMany => {
                                return Some(Judgement::Ask(AskBecause::Opaque {
                                    why: format!(
                                        "`{}` reads more than {} files, too many to check for \
                                         secret files outside the sandbox",
                                        words.join(" "),
                                        reads::WALK_BUDGET
                                    ),
                                }));
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// What the deny and ask rules say about a secret file a command reads unnamed.
    fn secret_verdict(&self, tool: &str, path: &Path, scope: &Scope<'_>) -> Option<Judgement> {
        for effect in [Effect::Deny, Effect::Ask] {
            let hit = self.first(effect, |r| {
                *r.tools() == ToolSelector::Any
                    && r.matches_path_as(tool, path, scope.root, Case::Folded)
            });
            if let Some(hit) = hit {
                return Some(verdict_of(hit));
            }
        }
        None
    }

    /// Asks about a command that destroys work, unless an exact allow rule names it.
    fn destructive(&self, tool: &str, line: &Line<'_>, scope: &Scope<'_>) -> Option<Judgement> {
        for (i, command) in line.parsed.commands.iter().enumerate() {
            let places = Places {
                cwds: &line.cwds[i],
                project: scope.project,
                temp: scope.temp,
            };
            for run in &line.runs[i] {
                let Effective::Seen { words, extra } = run else {
                    continue;
                };
                let Some(what) = destructive::destructive(words, *extra, places) else {
                    continue;
                };
                let named = self
                    .rules
                    .iter()
                    .any(|r| r.effect == Effect::Allow && r.rule.names_exactly(tool, command));
                if !named {
                    return Some(Judgement::Ask(AskBecause::Destructive {
                        what,
                        exact_rule: rule::exact_rule(tool, command),
                    }));
                }
            }
        }
        None
    }

    /// Files the line writes by redirection: the temp folders and `/dev/null` are fine;
    /// a file in the project is an edit the edit rules or the mode must allow; anything
    /// else is approvable once only.
    fn redirections(&self, line: &Line<'_>, scope: &Scope<'_>) -> Result<AllowedBy, String> {
        let mut by = AllowedBy::Rules;
        for (i, command) in line.parsed.commands.iter().enumerate() {
            for redirect in &command.redirects {
                if redirect.direction != Direction::Write
                    || HARMLESS_TARGETS.contains(&redirect.target.as_str())
                {
                    continue;
                }
                for cwd in &line.cwds[i] {
                    let lexical = paths::normalize(&paths::absolute(&redirect.target, cwd));
                    let candidates = [lexical.clone(), real_path(&lexical)];
                    if candidates.iter().all(|p| {
                        scope.temp.iter().any(|t| p.starts_with(t)) && !p.starts_with(scope.project)
                    }) {
                        continue;
                    }
                    if !candidates.iter().all(|p| p.starts_with(scope.project)) {
                        return Err(format!(
                            "it writes to {}, outside the project",
                            redirect.target
                        ));
                    }
                    let by_rule = candidates.iter().all(|p| {
                        self.first(Effect::Allow, |r| {
                            r.matches_path("write_file", p, scope.root)
                        })
                        .is_some()
                    });
                    if by_rule {
                        continue;
                    }
                    match scope.mode.project_edits {
                        ProjectEdits::Allowed => by = AllowedBy::Mode,
                        ProjectEdits::Asked => {
                            return Err(format!(
                                "it writes to {} (an edit, which this approval mode asks about)",
                                redirect.target
                            ));
                        }
                    }
                }
            }
        }
        Ok(by)
    }

    /// Whether one simple command is allowed by a rule or by the mode's read-only list.
    fn command_allowed(
        &self,
        tool: &str,
        command: &SimpleCommand,
        cwds: &[PathBuf],
        scope: &Scope<'_>,
    ) -> Result<AllowedBy, Refusal> {
        let by_rule = self
            .rules
            .iter()
            .any(|r| r.effect == Effect::Allow && r.rule.matches_command(tool, command));
        let read_only = readonly::read_only(command);
        let by = if by_rule {
            AllowedBy::Rules
        } else if scope.mode.read_only_commands == ReadOnlyCommands::Allowed
            && read_only != ReadOnly::No
        {
            AllowedBy::Mode
        } else {
            return Err(Refusal::Offer);
        };
        // A read-only git command is a read only where the repository names no program.
        if let ReadOnly::Git { .. } = read_only {
            for cwd in cwds {
                git_repo::check(cwd).map_err(|e| Refusal::OnceOnly(e.to_string()))?;
            }
        }
        Ok(by)
    }
}

/// How a path is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathUse {
    Read,
    Edit,
}

/// Why a simple command is not allowed.
enum Refusal {
    /// "Always" may offer a rule for it.
    Offer,
    /// It can only be approved once: why.
    OnceOnly(String),
}

/// A parsed line with what each of its commands runs and where it may run.
struct Line<'a> {
    parsed: &'a Parsed,
    /// For each command, every folder it may run in.
    cwds: &'a [Vec<PathBuf>],
    /// For each command, what it runs.
    runs: &'a [Vec<Effective>],
}

fn once_only(why: String) -> Judgement {
    Judgement::Undecided {
        offer: Offer::OnceOnly { why },
    }
}

pub(super) fn verdict_of(hit: &ActiveRule) -> Judgement {
    match hit.effect {
        Effect::Deny => Judgement::Deny {
            rule: hit.rule.text().to_string(),
            source: hit.source.clone(),
        },
        _ => Judgement::Ask(AskBecause::Rule {
            rule: hit.rule.text().to_string(),
            source: hit.source.clone(),
        }),
    }
}

/// The path and, when a link makes it differ, where it really leads.
fn spelled_and_real(path: &Path) -> Vec<PathBuf> {
    let spelled = paths::normalize(path);
    let real = real_path(&spelled);
    if real == spelled {
        vec![spelled]
    } else {
        vec![spelled, real]
    }
}

/// For each command of the line, every folder it may run in: the line's folder, plus
/// each folder an earlier `cd` went to (pipelines and `||` make "earlier" uncertain, so
/// the folders only add up).
fn cwds_of(parsed: &Parsed, cwd: &Path) -> Vec<Vec<PathBuf>> {
    let mut current = vec![paths::normalize(cwd)];
    let mut out = Vec::with_capacity(parsed.commands.len());
    for command in &parsed.commands {
        out.push(current.clone());
        if command.name() == Some("cd") {
            let target = command.words[1..]
                .iter()
                .find(|a| !a.starts_with('-') || a.as_str() == "-")
                .map_or("~", String::as_str);
            let moved: Vec<PathBuf> = current
                .iter()
                .flat_map(|c| {
                    let lexical = paths::normalize(&paths::absolute(target, c));
                    [real_path(&lexical), lexical]
                })
                .collect();
            for dir in moved {
                if !current.contains(&dir) {
                    current.push(dir);
                }
            }
        }
    }
    out
}

/// Every path the arguments of a command may name, from each folder: each argument, the
/// value of `--opt=value`, and the path of git's `REV:path`; each as written and where
/// it really leads.
fn named_paths<'a>(args: &'a [String], cwds: &'a [PathBuf]) -> impl Iterator<Item = PathBuf> + 'a {
    let words = args.iter().flat_map(|word| {
        let value = word.split_once('=').map(|(_, v)| v);
        let in_revision = word
            .split_once(':')
            .map(|(_, path)| path.trim_start_matches("./"))
            .filter(|p| !p.is_empty() && !word.starts_with('-'));
        // `-f.env`: a short option's attached value (any letter of a cluster may take
        // one), so every tail of the cluster.
        let attached = word
            .strip_prefix('-')
            .filter(|rest| !rest.starts_with('-'))
            .into_iter()
            .flat_map(|rest| rest.char_indices().skip(1).map(move |(i, _)| &rest[i..]));
        std::iter::once(word.as_str())
            .chain(value)
            .chain(in_revision)
            .chain(attached)
            // `curl -d @.env`, `file:///home/u/.ssh/id_rsa`.
            .map(|w| {
                let w = w.trim_start_matches('@');
                w.strip_prefix("file://").unwrap_or(w)
            })
    });
    words
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .flat_map(move |w| {
            cwds.iter()
                .flat_map(move |cwd| spelled_and_real(&paths::absolute(w, cwd)))
        })
}

/// The files a command's redirections touch (those going `direction`, or all), from
/// each folder, as written and where they really lead.
fn redirect_paths<'a>(
    command: &'a SimpleCommand,
    cwds: &'a [PathBuf],
    direction: Option<Direction>,
) -> impl Iterator<Item = PathBuf> + 'a {
    command
        .redirects
        .iter()
        .filter(move |r| direction.is_none_or(|d| r.direction == d))
        .flat_map(move |r| {
            cwds.iter()
                .flat_map(move |cwd| spelled_and_real(&paths::absolute(&r.target, cwd)))
        })
}
