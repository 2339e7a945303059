//! The workspace of one `skill_run` call, laid out as the trpc-agent-go design has it,
//! created private (0700) under the system temp dir and removed when the call ends:
//!
//! ```text
//! $WORKSPACE_DIR/
//!   skills/<name>/    SKILL_DIR: a read-only copy of the skill's folder, where the
//!                     command runs; `out`, `work` and `inputs` in it link to the
//!                     folders below (unless the skill has files of those names)
//!   work/             WORK_DIR: scratch space
//!   work/inputs/      where declared inputs land by default
//!   out/              OUTPUT_DIR: files to hand back
//!   runs/<id>/        RUN_DIR: this run's own folder
//!   tmp/              TMPDIR
//! ```
//!
//! Staging a copy keeps the user's skill folder out of the command's reach even without
//! a sandbox; with one, the command may write only in `work/`, `out/`, `runs/` and
//! `tmp/` ([`Workspace::writable`]). A skill too large to copy within [`MAX_STAGED_FILES`]
//! and [`MAX_STAGED_BYTES`] is refused with the reason. Hidden files of the skill (`.git`,
//! `.env`) are not copied. It knows files, not processes or the tool trait.

use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::skills::folder::{self, WalkLimits};

/// Files of a skill folder copied at most.
pub const MAX_STAGED_FILES: usize = 4_000;
/// Bytes of a skill folder copied at most.
pub const MAX_STAGED_BYTES: u64 = 256 * 1024 * 1024;
/// Folder levels of a skill folder copied at most.
const MAX_STAGED_DEPTH: usize = 24;

/// Why a workspace could not be made.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The file system said no.
    #[error("cannot create the run's workspace in {}: {source}", dir.display())]
    Create {
        /// Where.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Copying the skill failed.
    #[error("cannot copy the skill's file {path} into the workspace: {source}")]
    Stage {
        /// The file, relative to the skill folder.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The skill folder is beyond the copy limits.
    #[error(
        "the skill's folder is too large to run from a workspace copy (more than {max_files} \
         files, {max_mib} MiB or {max_depth} folder levels); move large data out of it"
    )]
    TooLarge {
        /// The file limit.
        max_files: usize,
        /// The byte limit in MiB.
        max_mib: u64,
        /// The depth limit.
        max_depth: usize,
    },
}

/// One call's workspace; dropping it removes everything in it.
#[derive(Debug)]
pub struct Workspace {
    /// `WORKSPACE_DIR`, canonical.
    pub root: PathBuf,
    skill: String,
    run: String,
}

impl Workspace {
    /// Creates the workspace and stages a read-only copy of `skill_dir` as `skill`.
    pub fn create(skill: &str, skill_dir: &Path) -> Result<Workspace, WorkspaceError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let create = |source| WorkspaceError::Create {
            dir: base.clone(),
            source,
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut made = None;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!(
                "harness9-skill-run-{}-{nanos:08x}-{n}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    made = Some((path, n));
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(create(e)),
            }
        }
        let Some((path, n)) = made else {
            return Err(create(io::Error::other("no free workspace name")));
        };
        // From here on, drop removes it.
        let mut ws = Workspace {
            root: path,
            skill: skill.to_string(),
            run: format!("run-{n}"),
        };
        ws.root = std::fs::canonicalize(&ws.root).map_err(create)?;
        for dir in ws.layout() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(&dir)
                .map_err(create)?;
        }
        ws.stage(skill_dir)?;
        Ok(ws)
    }

    /// The folders every run's workspace has, made when it is created.
    fn layout(&self) -> [PathBuf; 6] {
        [
            self.work_dir(),
            self.inputs_dir(),
            self.output_dir(),
            self.run_dir(),
            self.tmp_dir(),
            self.skills_dir(),
        ]
    }

    /// `SKILLS_DIR`.
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// `SKILL_DIR`: the staged copy of the skill.
    pub fn skill_dir(&self) -> PathBuf {
        self.skills_dir().join(&self.skill)
    }

    /// `WORK_DIR`.
    pub fn work_dir(&self) -> PathBuf {
        self.root.join("work")
    }

    /// Where inputs land by default.
    pub fn inputs_dir(&self) -> PathBuf {
        self.work_dir().join("inputs")
    }

    /// `OUTPUT_DIR`.
    pub fn output_dir(&self) -> PathBuf {
        self.root.join("out")
    }

    /// `RUN_DIR`.
    pub fn run_dir(&self) -> PathBuf {
        self.root.join("runs").join(&self.run)
    }

    /// `TMPDIR`.
    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// Where a sandboxed command may write.
    pub fn writable(&self) -> Vec<PathBuf> {
        vec![
            self.work_dir(),
            self.output_dir(),
            self.root.join("runs"),
            self.tmp_dir(),
        ]
    }

    /// Copies the skill's files (not hidden ones) into `skills/<name>/`, links `out`,
    /// `work` and `inputs` in it, then makes the copy read-only.
    fn stage(&self, skill_dir: &Path) -> Result<(), WorkspaceError> {
        let limits = WalkLimits {
            max_depth: MAX_STAGED_DEPTH,
            max_files: MAX_STAGED_FILES,
        };
        let too_large = || WorkspaceError::TooLarge {
            max_files: MAX_STAGED_FILES,
            max_mib: MAX_STAGED_BYTES / (1024 * 1024),
            max_depth: MAX_STAGED_DEPTH,
        };
        let listing = folder::walk(skill_dir, "", limits, &|_| true);
        if listing.truncated {
            return Err(too_large());
        }
        if listing.files.iter().map(|f| f.size).sum::<u64>() > MAX_STAGED_BYTES {
            return Err(too_large());
        }
        let target = self.skill_dir();
        fn stage(path: &str) -> impl FnOnce(io::Error) -> WorkspaceError + '_ {
            move |source| WorkspaceError::Stage {
                path: path.to_string(),
                source,
            }
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&target)
            .map_err(stage("."))?;
        for file in &listing.files {
            let to = target.join(&file.path);
            if let Some(parent) = to.parent() {
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .recursive(true)
                    .create(parent)
                    .map_err(stage(&file.path))?;
            }
            std::fs::copy(skill_dir.join(&file.path), &to).map_err(stage(&file.path))?;
        }
        for (name, dest) in [
            ("out", self.output_dir()),
            ("work", self.work_dir()),
            ("inputs", self.inputs_dir()),
        ] {
            let link = target.join(name);
            if std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(&dest, &link).map_err(stage(name))?;
            }
        }
        set_writable(&target, false).map_err(stage("."))
    }
}

/// Adds or removes write permission on a folder tree (not following symlinks).
fn set_writable(dir: &Path, writable: bool) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            set_writable(&entry.path(), writable)?;
        }
        change_mode(&entry.path(), writable)?;
    }
    change_mode(dir, writable)
}

fn change_mode(path: &Path, writable: bool) -> io::Result<()> {
    let mode = std::fs::symlink_metadata(path)?.permissions().mode();
    let mode = if writable {
        mode | 0o200
    } else {
        mode & !0o222
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

impl Drop for Workspace {
    fn drop(&mut self) {
        // The staged copy is read-only: give its folders write permission back, or a
        // user without CAP_DAC_OVERRIDE could not remove them.
        let _ = set_writable(&self.skills_dir(), true);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill() -> tempfile::TempDir {
        let dir = crate::test_support::temp_tree(&[
            ("SKILL.md", "---\nname: demo\n---\n"),
            ("scripts/run.sh", "echo hi\n"),
            (".env", "SECRET=1\n"),
        ]);
        let script = dir.path().join("scripts/run.sh");
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    #[test]
    fn the_layout_is_made_private_with_a_read_only_copy_of_the_skill() {
        let src = skill();
        let ws = Workspace::create("demo", src.path()).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ws.root), 0o700);
        for dir in ws.layout() {
            assert!(dir.is_dir(), "{}", dir.display());
        }
        let staged = ws.skill_dir();
        assert_eq!(
            std::fs::read_to_string(staged.join("scripts/run.sh")).unwrap(),
            "echo hi\n"
        );
        // Executable bits kept, write bits gone; hidden files not copied.
        assert_eq!(mode(&staged.join("scripts/run.sh")), 0o555);
        assert_eq!(mode(&staged) & 0o222, 0);
        assert!(!staged.join(".env").exists());
        // The convenience links lead to the workspace's folders.
        assert_eq!(
            std::fs::read_link(staged.join("out")).unwrap(),
            ws.output_dir()
        );
        assert_eq!(
            std::fs::read_link(staged.join("inputs")).unwrap(),
            ws.inputs_dir()
        );
        let root = ws.root.clone();
        drop(ws);
        assert!(!root.exists(), "removed on drop, read-only copy included");
    }

    #[test]
    fn a_skill_with_its_own_out_folder_keeps_it() {
        let src = skill();
        std::fs::create_dir_all(src.path().join("out")).unwrap();
        std::fs::write(src.path().join("out/sample.txt"), "x").unwrap();
        let ws = Workspace::create("demo", src.path()).unwrap();
        assert!(ws.skill_dir().join("out/sample.txt").is_file());
        assert!(std::fs::read_link(ws.skill_dir().join("work")).is_ok());
    }

    #[test]
    fn a_skill_beyond_the_limits_is_refused() {
        let src = tempfile::tempdir().unwrap();
        for i in 0..=MAX_STAGED_FILES {
            std::fs::write(src.path().join(format!("f{i}")), "").unwrap();
        }
        let err = Workspace::create("big", src.path()).unwrap_err();
        assert!(matches!(err, WorkspaceError::TooLarge { .. }), "{err}");
        assert!(err.to_string().contains("more than 4000 files"), "{err}");
    }
}
