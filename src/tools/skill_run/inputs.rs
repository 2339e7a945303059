//! `skill_run`'s declarative inputs: `inputs: [{from, to?, mode?}]` puts files into the
//! run's workspace before the command starts.
//!
//! - `workspace://rel/path`: a file or folder of the project (read like `read_file`
//!   reads it: a secret file asks first);
//! - `skill://name/rel/path`: one from a skill's folder;
//! - `host:///abs/path`: one anywhere (outside the project, reading it is asked about
//!   like any read outside it);
//! - `artifact://name[@version]`: one the session saved (the latest version by default).
//!
//! Every source is resolved (symlinks and `..` included) and must stay inside its root;
//! `to` is relative to the workspace, defaults to `work/inputs/<basename>`, and may not
//! lead out of it, into the skill's copy, or onto another input. `mode: copy` (the
//! default) copies (a folder: its files the project walker sees, bounded);
//! `mode: link` makes a symbolic link when the run is sandboxed (the command cannot
//! write through it) and copies otherwise. Checks are pure; `stage` does the copying.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::workspace::{MAX_STAGED_BYTES, MAX_STAGED_FILES, Workspace};
use crate::artifacts::ArtifactStore;
use crate::protocol::ApprovalRequestKind;
use crate::skills::Catalog;
use crate::tools::Access;

/// Inputs per call at most.
const MAX_INPUTS: usize = 20;

/// One input as the model writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    from: String,
    to: Option<String>,
    #[serde(default)]
    mode: InputMode,
}

/// How an input reaches the workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputMode {
    /// A copy.
    #[default]
    Copy,
    /// A symbolic link (a copy when the run is not sandboxed).
    Link,
}

/// Where an input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    /// The project (read like `read_file` reads it).
    Project,
    /// A skill's folder (skills are readable already).
    Skill,
    /// One of the session's artifacts (its name).
    Artifact(String),
    /// Anywhere else on the machine.
    Outside,
}

/// A checked input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// As written.
    from: String,
    /// Canonical.
    source: PathBuf,
    origin: Origin,
    /// Relative to the workspace, `/`-separated.
    to: String,
    mode: InputMode,
}

/// What one input put in the workspace, for the result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Staged {
    from: String,
    to: String,
    mode: InputMode,
    files: usize,
    bytes: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skipped: Vec<String>,
}

/// Checks every input: its source exists inside its root, its destination is free and
/// inside the workspace.
pub fn check(
    specs: &[InputSpec],
    project: &Path,
    catalog: &Catalog,
    artifacts: Option<&ArtifactStore>,
) -> Result<Vec<Input>, String> {
    if specs.len() > MAX_INPUTS {
        return Err(format!("inputs: at most {MAX_INPUTS}, got {}", specs.len()));
    }
    let mut inputs: Vec<Input> = Vec::with_capacity(specs.len());
    for spec in specs {
        let (source, origin) = resolve_source(&spec.from, project, catalog, artifacts)?;
        let to = destination(spec, &source, &origin)?;
        if let Some(other) = inputs.iter().find(|i| overlaps(&i.to, &to)) {
            return Err(format!(
                "inputs: {:?} and {:?} both land on {to:?}; give one of them another `to`",
                other.from, spec.from
            ));
        }
        inputs.push(Input {
            from: spec.from.clone(),
            source,
            origin,
            to,
            mode: spec.mode,
        });
    }
    Ok(inputs)
}

/// What reading the inputs needs from the approval policy: project files as reads
/// inside, anything else as reads outside; skills' files need nothing.
pub fn accesses(inputs: &[Input], project: &Path) -> Vec<Access> {
    inputs
        .iter()
        .filter_map(|input| match input.origin {
            Origin::Skill | Origin::Artifact(_) => None,
            Origin::Project => Some(Access::ReadInside(input.source.clone())),
            Origin::Outside if input.source.starts_with(project) => {
                Some(Access::ReadInside(input.source.clone()))
            }
            Origin::Outside => Some(Access::NeedsApproval(ApprovalRequestKind::ReadOutside {
                path: input.source.clone(),
                via: None,
            })),
        })
        .collect()
}

/// Puts every input in the workspace; `sandboxed` says whether links are safe.
pub fn stage(inputs: &[Input], ws: &Workspace, sandboxed: bool) -> Result<Vec<Staged>, String> {
    let mut budget = Budget {
        files: MAX_STAGED_FILES,
        bytes: MAX_STAGED_BYTES,
    };
    let mut staged = Vec::with_capacity(inputs.len());
    for input in inputs {
        let to = ws.root.join(&input.to);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("inputs: cannot create {}: {e}", input.to))?;
        }
        let link = input.mode == InputMode::Link && sandboxed;
        let mut done = Staged {
            from: input.from.clone(),
            to: input.to.clone(),
            mode: if link {
                InputMode::Link
            } else {
                InputMode::Copy
            },
            files: 0,
            bytes: 0,
            skipped: Vec::new(),
        };
        if link {
            std::os::unix::fs::symlink(&input.source, &to)
                .map_err(|e| format!("inputs: cannot link {}: {e}", input.to))?;
        } else if input.source.is_dir() {
            copy_folder(input, &to, &mut budget, &mut done)?;
        } else {
            copy_file(&input.source, &to, &input.from, &mut budget, &mut done)?;
        }
        staged.push(done);
    }
    Ok(staged)
}

struct Budget {
    files: usize,
    bytes: u64,
}

fn copy_file(
    from: &Path,
    to: &Path,
    label: &str,
    budget: &mut Budget,
    done: &mut Staged,
) -> Result<(), String> {
    // A regular file only, opened without following links: a FIFO would block the call
    // and a device (`/dev/zero`) would fill the workspace.
    let source = crate::nofollow::open_read(from)
        .map_err(|e| format!("inputs: cannot read {label}: {e}"))?;
    let meta = source
        .metadata()
        .map_err(|e| format!("inputs: cannot read {label}: {e}"))?;
    let size = meta.len();
    if budget.files == 0 || size > budget.bytes {
        return Err(format!(
            "inputs: more than {MAX_STAGED_FILES} files or {} MiB in all; name fewer or \
             smaller inputs",
            MAX_STAGED_BYTES / (1024 * 1024)
        ));
    }
    let copy = || -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let mut target = std::fs::File::create(to)?;
        // No more than was counted, should the file grow meanwhile.
        std::io::copy(&mut std::io::Read::take(source, size), &mut target)?;
        target.set_permissions(std::fs::Permissions::from_mode(
            meta.permissions().mode() & 0o777,
        ))
    };
    copy().map_err(|e| format!("inputs: cannot copy {label}: {e}"))?;
    budget.files -= 1;
    budget.bytes -= size;
    done.files += 1;
    done.bytes += size;
    Ok(())
}

/// Copies the files of a folder the project walker sees (ignored files, `.git` and
/// symlinks left out); secret files of the project are skipped and named, since only
/// naming one directly asks about it.
fn copy_folder(
    input: &Input,
    to: &Path,
    budget: &mut Budget,
    done: &mut Staged,
) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("inputs: cannot create {}: {e}", input.to))?;
    for entry in crate::project_walk::project_walker(&input.source)
        .build()
        .flatten()
    {
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let Ok(rel) = entry.path().strip_prefix(&input.source) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let target = to.join(rel);
        if kind.is_dir() {
            std::fs::create_dir_all(&target)
                .map_err(|e| format!("inputs: cannot create {}: {e}", target.display()))?;
        } else if kind.is_file() {
            if input.origin != Origin::Skill && crate::permissions::is_secret_file(entry.path()) {
                done.skipped.push(format!(
                    "{} (a secret file: name it to include it)",
                    rel.display()
                ));
                continue;
            }
            let label = format!("{}/{}", input.from.trim_end_matches('/'), rel.display());
            copy_file(entry.path(), &target, &label, budget, done)?;
        }
    }
    Ok(())
}

/// The source of `from`, canonical, and where it comes from.
fn resolve_source(
    from: &str,
    project: &Path,
    catalog: &Catalog,
    artifacts: Option<&ArtifactStore>,
) -> Result<(PathBuf, Origin), String> {
    let bad = |why: &str| Err(format!("inputs: {from:?}: {why}"));
    if let Some(rel) = from.strip_prefix("workspace://") {
        let path = inside(project, rel).map_err(|why| format!("inputs: {from:?}: {why}"))?;
        return Ok((path, Origin::Project));
    }
    if let Some(rest) = from.strip_prefix("skill://") {
        let (name, rel) = rest.split_once('/').unwrap_or((rest, ""));
        let Some(skill) = catalog.get(name) else {
            return bad(&format!("no skill named {name:?}"));
        };
        let Some(folder) = skill.folder() else {
            return bad(&format!("{name:?} is a command: it has no folder"));
        };
        let root = std::fs::canonicalize(folder)
            .map_err(|e| format!("inputs: {from:?}: cannot open the skill's folder: {e}"))?;
        let path = if rel.is_empty() {
            root
        } else {
            inside(&root, rel).map_err(|why| format!("inputs: {from:?}: {why}"))?
        };
        return Ok((path, Origin::Skill));
    }
    if let Some(abs) = from.strip_prefix("host://") {
        if !abs.starts_with('/') {
            return bad("a host path is absolute: host:///abs/path");
        }
        let path = std::fs::canonicalize(abs).map_err(|e| format!("inputs: {from:?}: {e}"))?;
        return Ok((path, Origin::Outside));
    }
    if let Some(reference) = from.strip_prefix("artifact://") {
        let Some(store) = artifacts else {
            return bad("artifacts are kept with a saved session, and this one is not saved");
        };
        let (name, version) = crate::artifacts::parse_ref(reference);
        let (_, path) = store
            .find(name, version)
            .map_err(|e| format!("inputs: {from:?}: {e}"))?;
        return Ok((path, Origin::Artifact(name.to_string())));
    }
    bad("use workspace://rel/path, skill://name/rel/path or host:///abs/path")
}

/// `rel` below `root` (canonical), resolved, and still inside it.
fn inside(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let rel_path = Path::new(rel);
    if rel.is_empty() || rel_path.is_absolute() {
        return Err("give a path relative to its root".to_string());
    }
    if rel_path.components().any(|c| c == Component::ParentDir) {
        return Err("may not hold `..`".to_string());
    }
    let path = std::fs::canonicalize(root.join(rel_path)).map_err(|e| e.to_string())?;
    if !path.starts_with(root) {
        return Err(format!("leads outside {}", root.display()));
    }
    Ok(path)
}

/// Where an input lands, relative to the workspace.
fn destination(spec: &InputSpec, source: &Path, origin: &Origin) -> Result<String, String> {
    let to = match spec.to.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        Some(to) => to
            .trim_start_matches("./")
            .trim_end_matches('/')
            .to_string(),
        None => {
            // An artifact's content file is numbered: its name says what it is.
            let name = match origin {
                Origin::Artifact(name) => name.rsplit('/').next().unwrap_or(name).to_string(),
                _ => source
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "input".to_string()),
            };
            format!("work/inputs/{name}")
        }
    };
    // `inputs/…` is where the skill's copy links `inputs`: the work folder's.
    let to = match to.strip_prefix("inputs/") {
        Some(rest) => format!("work/inputs/{rest}"),
        None => super::checks::normalize_glob(&to),
    };
    let path = Path::new(&to);
    let bad = |why: &str| Err(format!("inputs: to {to:?} {why}"));
    if path.is_absolute() {
        return bad("must be relative to the workspace");
    }
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return bad("may not hold `..` or `.`");
    }
    match path.components().next() {
        None => bad("is empty"),
        Some(first) if first.as_os_str() == "skills" => {
            bad("would land in the skill's read-only copy; use work/ or out/")
        }
        Some(_) => Ok(to),
    }
}

/// Whether two destinations collide (one is the other or inside it).
fn overlaps(a: &str, b: &str) -> bool {
    a == b || b.starts_with(&format!("{a}/")) || a.starts_with(&format!("{b}/"))
}
