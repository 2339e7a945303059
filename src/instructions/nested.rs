//! Instruction files below the working folder ("nested"): a folder under the working
//! folder with its own `AGENTS.override.md`, `AGENTS.md` or `CLAUDE.md` (the chain's
//! precedence) has its text attached to the result of the first tool call that works
//! there, never to the system prompt, which stays byte-identical for the whole session.
//! Given the place a call works at (a file or a folder, its real path, as the tool
//! resolved it), [`Nested::gather`] names every folder strictly between the working
//! folder and that place, outer first, and reads the file of each one that is not in
//! force yet: the caller says which are (the conversation knows).
//!
//! The files come with the repository (or were just written by a command the model ran)
//! and are untrusted: each is opened without following any link on its whole path
//! (`nofollow`: a link is refused, wherever it leads — even inside the project it could
//! lead to a secret file the rules ask about), FIFOs, sockets and devices refused, no
//! read longer than the cap; the caller's permission rules must let the model read it
//! unasked (a file a rule asks about or denies is not attached). Each file shows at most [`PER_FILE_SHARE`]th of `instructions_max_bytes`, and the
//! chain and the nested files in force share that cap: a file over what is left is
//! shortened (its head kept) and says so, to the model in its block and to the user in a
//! warning. A refused file is reported to the user once.
//!
//! It must not know which tools work where, how results are sent or saved.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{
    Head, InstructionFile, Instructions, NotRead, Origin, boundary, file_in, not_read, read_capped,
};
use crate::nofollow;
use crate::protocol::InstructionFileInfo;

/// A nested file shows at most this share of the cap (a quarter: 8 KiB by default).
pub const PER_FILE_SHARE: usize = 4;

/// The session's nested instruction files: where they may be, and the cap they share
/// with the chain.
#[derive(Debug)]
pub struct Nested {
    root: PathBuf,
    workdir: PathBuf,
    max_bytes: usize,
    /// Bytes of the chain's text in the system prompt.
    chain_shown: usize,
    /// The chain's files as `/context` lists them.
    chain: Vec<InstructionFileInfo>,
    /// Files already reported to the user (refused, shortened).
    told: Mutex<HashSet<PathBuf>>,
}

/// What work at one place attaches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gathered {
    /// The files attached, outer first.
    pub files: Vec<InstructionFileInfo>,
    /// Their blocks, each after a blank line: appended to the tool result as it is.
    pub text: String,
    /// What the user should be told (a file refused or shortened), each once a session.
    pub warnings: Vec<String>,
}

impl Nested {
    /// Nested files of the project `root` below `workdir` (both canonical), sharing
    /// `chain`'s cap.
    pub fn new(root: &Path, workdir: &Path, chain: &Instructions) -> Nested {
        Nested {
            root: root.to_path_buf(),
            workdir: workdir.to_path_buf(),
            max_bytes: chain.max_bytes,
            chain_shown: chain.shown_bytes(),
            chain: chain.files.iter().map(InstructionFile::info).collect(),
            told: Mutex::new(HashSet::new()),
        }
    }

    /// The most one nested file shows.
    pub fn per_file_cap(&self) -> usize {
        self.max_bytes / PER_FILE_SHARE
    }

    /// The chain's files (in the system prompt), the most general first.
    pub fn chain(&self) -> &[InstructionFileInfo] {
        &self.chain
    }

    /// The cap the chain and the nested files share (`instructions_max_bytes`).
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The folders strictly below the working folder from it down to `place` (the
    /// folder itself, or the folder holding the file), outer first; none when `place`
    /// is not below the working folder.
    pub fn folders_to(&self, place: &Path) -> Vec<PathBuf> {
        let below = place
            .strip_prefix(&self.workdir)
            .is_ok_and(|rel| !rel.as_os_str().is_empty());
        if !below {
            return Vec::new();
        }
        // `place` is a real path (no link on the way): a folder is a place of its own.
        let is_folder = std::fs::symlink_metadata(place).is_ok_and(|m| m.is_dir());
        let deepest = if is_folder {
            Some(place)
        } else {
            place.parent()
        };
        let Some(deepest) = deepest else {
            return Vec::new();
        };
        let mut folders: Vec<PathBuf> = deepest
            .ancestors()
            .take_while(|a| *a != self.workdir && a.starts_with(&self.workdir))
            .map(Path::to_path_buf)
            .collect();
        folders.reverse();
        // A folder git ignores (a dependency's or a build's: `node_modules/`, `target/`)
        // and everything below it holds no instructions of this project.
        if let Some(first) = folders.iter().position(|f| git_ignores(&self.root, f)) {
            folders.truncate(first);
        }
        folders
    }

    /// The files work at `place` attaches: the instruction file of every folder between
    /// the working folder and `place` that is not among `in_force` (the nested files
    /// the conversation holds) and that `may_read` (the permission rules) lets the model
    /// read unasked, read and fitted to what is left of the shared cap.
    pub fn gather(
        &self,
        place: &Path,
        in_force: &[InstructionFileInfo],
        may_read: &dyn Fn(&Path) -> bool,
    ) -> Gathered {
        let mut got = Gathered::default();
        let folders = self.folders_to(place);
        if folders.is_empty() {
            return got;
        }
        let used: u64 = in_force.iter().map(|f| f.shown).sum();
        let used = usize::try_from(used).unwrap_or(usize::MAX);
        let mut left = self
            .max_bytes
            .saturating_sub(self.chain_shown)
            .saturating_sub(used);
        let per_file = self.per_file_cap();
        for folder in folders {
            let Some(path) = file_in(&folder) else {
                continue;
            };
            if in_force.iter().any(|f| f.path == path) {
                continue;
            }
            if !may_read(&path) {
                if self.first_time(&path) {
                    got.warnings.push(format!(
                        "instruction file {} was not attached: the permission rules ask \
                         about or deny reading it",
                        path.display()
                    ));
                }
                continue;
            }
            let head = match read_nested(&path, &self.root, per_file) {
                Ok(head) => head,
                Err(why) => {
                    if self.first_time(&path) {
                        got.warnings.push(not_read(&path, &why));
                    }
                    continue;
                }
            };
            if String::from_utf8_lossy(&head.head).trim().is_empty() {
                continue;
            }
            let limit = per_file.min(left);
            let end = boundary(&head.head, limit);
            left -= end;
            let file = InstructionFile {
                path,
                origin: Origin::Nested,
                size: head.size,
                shown: String::from_utf8_lossy(&head.head[..end]).into_owned(),
            };
            // The cap that cut it: the file's own, or what the shared one left.
            let cap = if per_file <= limit {
                per_file
            } else {
                self.max_bytes
            };
            if file.shortened() && self.first_time(&file.path) {
                got.warnings.push(format!(
                    "instruction file {} was attached shortened ({} of {} bytes): a file \
                     below the working folder shows at most {per_file} bytes, and all \
                     instruction files together at most {} (instructions_max_bytes in \
                     config.toml)",
                    file.path.display(),
                    file.shown.len(),
                    file.size,
                    self.max_bytes
                ));
            }
            got.text.push_str("\n\n");
            got.text.push_str(&file.block(cap));
            got.files.push(file.info());
        }
        got
    }

    /// Whether `path` has not been reported yet (and is now).
    fn first_time(&self, path: &Path) -> bool {
        self.told
            .lock()
            .map(|mut told| told.insert(path.to_path_buf()))
            .unwrap_or(true)
    }
}

/// A nested file: inside the project root, opened without following any link.
/// The most of one `.gitignore` that is read.
const GITIGNORE_MAX: u64 = 256 * 1024;

/// Whether the `.gitignore` files from the project `root` down to `folder`'s parent
/// ignore `folder` (the deepest file that has a say wins, as in git). Each file is
/// repository input: opened without following a link, a plain file only, capped; one
/// that cannot be read that way has no say.
fn git_ignores(root: &Path, folder: &Path) -> bool {
    use std::io::Read;
    let Some(parent) = folder.parent() else {
        return false;
    };
    if !parent.starts_with(root) {
        return false;
    }
    let mut levels: Vec<&Path> = parent
        .ancestors()
        .take_while(|a| a.starts_with(root))
        .collect();
    levels.reverse();
    let mut ignored = false;
    for level in levels {
        let path = level.join(".gitignore");
        let Ok(file) = crate::nofollow::open_read(&path) else {
            continue;
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            continue;
        }
        let mut text = String::new();
        if file.take(GITIGNORE_MAX).read_to_string(&mut text).is_err() {
            continue;
        }
        let mut builder = ignore::gitignore::GitignoreBuilder::new(level);
        for line in text.lines() {
            // A line git would not understand is skipped, as git does.
            let _ = builder.add_line(None, line);
        }
        let Ok(matcher) = builder.build() else {
            continue;
        };
        match matcher.matched_path_or_any_parents(folder, true) {
            ignore::Match::Ignore(_) => ignored = true,
            ignore::Match::Whitelist(_) => ignored = false,
            ignore::Match::None => {}
        }
    }
    ignored
}

fn read_nested(path: &Path, root: &Path, max: usize) -> Result<Head, NotRead> {
    if !path.starts_with(root) {
        return Err(NotRead::LeavesProject(path.to_path_buf()));
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(NotRead::Link);
    }
    let file = nofollow::open_read(path)?;
    read_capped(file, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_contains, write};

    struct Env {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    impl Env {
        fn new() -> Env {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().canonicalize().unwrap().join("repo");
            std::fs::create_dir_all(root.join("pkg/x/deep")).unwrap();
            Env { _tmp: tmp, root }
        }
        fn p(&self, rel: &str) -> PathBuf {
            self.root.join(rel)
        }
        fn nested(&self, max_bytes: usize) -> Nested {
            let chain = crate::instructions::load(crate::instructions::Places {
                harness9_home: &self.p("no-home"),
                user_home: None,
                root: &self.root,
                workdir: &self.root,
                max_bytes,
            });
            Nested::new(&self.root, &self.root, &chain)
        }
    }

    impl Nested {
        /// [`Nested::gather`] with every file readable.
        fn gather_all(&self, place: &Path, in_force: &[InstructionFileInfo]) -> Gathered {
            self.gather(place, in_force, &|_| true)
        }
    }

    fn paths(got: &Gathered) -> Vec<PathBuf> {
        got.files.iter().map(|f| f.path.clone()).collect()
    }

    #[test]
    fn every_folder_between_the_working_folder_and_the_place_counts_outer_first() {
        let env = Env::new();
        write(&env.p("AGENTS.md"), "root: in the chain\n");
        write(&env.p("pkg/AGENTS.md"), "pkg rule\n");
        write(&env.p("pkg/x/CLAUDE.md"), "x rule\n");
        write(&env.p("pkg/x/main.rs"), "fn main() {}\n");
        let nested = env.nested(crate::instructions::DEFAULT_MAX_BYTES);
        let got = nested.gather_all(&env.p("pkg/x/main.rs"), &[]);
        assert_eq!(
            paths(&got),
            [env.p("pkg/AGENTS.md"), env.p("pkg/x/CLAUDE.md")]
        );
        assert_eq!(
            got.text,
            format!(
                "\n\n<instructions path=\"{}\">\npkg rule\n</instructions>\n\n\
                 <instructions path=\"{}\">\nx rule\n</instructions>",
                env.p("pkg/AGENTS.md").display(),
                env.p("pkg/x/CLAUDE.md").display()
            )
        );
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
        // A folder is a place of its own; a file of the working folder is not below it.
        assert_eq!(
            paths(&nested.gather_all(&env.p("pkg/x"), &got.files[..1])),
            [env.p("pkg/x/CLAUDE.md")]
        );
        assert_eq!(
            nested.gather_all(&env.p("pkg/x/main.rs"), &got.files),
            Gathered::default()
        );
        assert_eq!(
            nested.gather_all(&env.p("README.md"), &[]),
            Gathered::default()
        );
        assert_eq!(nested.gather_all(&env.root, &[]), Gathered::default());
        assert_eq!(
            nested.gather_all(Path::new("/etc/passwd"), &[]),
            Gathered::default()
        );
        // Not yet existing files place their folder.
        assert_eq!(
            paths(&nested.gather_all(&env.p("pkg/new.rs"), &[])),
            [env.p("pkg/AGENTS.md")]
        );
    }

    /// A dependency's or a build's folder (git-ignored) brings no instructions, and
    /// neither does anything below it; a folder the ignore file lets back in does.
    #[test]
    fn folders_git_ignores_attach_nothing() {
        let env = Env::new();
        write(&env.p(".gitignore"), "node_modules/\nbuild*\n!buildkit/\n");
        write(&env.p("web/.gitignore"), "generated/\n");
        for folder in [
            "node_modules/left-pad",
            "buildout",
            "buildkit",
            "web/generated",
            "web/src",
        ] {
            write(&env.p(&format!("{folder}/AGENTS.md")), "Rule.\n");
            write(&env.p(&format!("{folder}/f.rs")), "x\n");
        }
        write(&env.p("node_modules/AGENTS.md"), "Dependency rule.\n");
        write(&env.p("web/AGENTS.md"), "Web rule.\n");
        let nested = env.nested(32 * 1024);
        let attached = |rel: &str| paths(&nested.gather_all(&env.p(rel), &[]));
        assert!(attached("node_modules/left-pad/f.rs").is_empty());
        assert!(attached("buildout/f.rs").is_empty());
        assert_eq!(attached("buildkit/f.rs"), vec![env.p("buildkit/AGENTS.md")]);
        assert_eq!(attached("web/generated/f.rs"), vec![env.p("web/AGENTS.md")]);
        assert_eq!(
            attached("web/src/f.rs"),
            vec![env.p("web/AGENTS.md"), env.p("web/src/AGENTS.md")]
        );
    }

    #[test]
    fn the_override_wins_and_empty_files_attach_nothing() {
        let env = Env::new();
        write(&env.p("pkg/AGENTS.md"), "plain\n");
        write(&env.p("pkg/AGENTS.override.md"), "override\n");
        write(&env.p("pkg/x/AGENTS.md"), "  \n\n");
        let got = env.nested(1000).gather_all(&env.p("pkg/x/a.rs"), &[]);
        assert_eq!(paths(&got), [env.p("pkg/AGENTS.override.md")]);
        assert_contains(&got.text, "override");
        assert!(!got.text.contains("plain"), "{}", got.text);
    }

    #[test]
    fn links_wherever_they_lead_fifos_and_devices_are_refused_once() {
        let env = Env::new();
        let outside = env.root.parent().unwrap().join("outside.md");
        write(&outside, "SECRET-OUTSIDE\n");
        std::os::unix::fs::symlink(&outside, env.p("pkg/AGENTS.md")).unwrap();
        nix::unistd::mkfifo(&env.p("pkg/x/AGENTS.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink("/dev/zero", env.p("pkg/x/deep/CLAUDE.md")).unwrap();
        let nested = env.nested(1000);
        let got = nested.gather_all(&env.p("pkg/x/deep/f.rs"), &[]);
        assert!(got.files.is_empty(), "{:?}", got.files);
        assert!(!got.text.contains("SECRET"));
        let warnings = got.warnings.join("\n");
        assert_eq!(got.warnings.len(), 3, "{warnings}");
        assert_eq!(
            warnings.matches("is a symbolic link").count(),
            2,
            "{warnings}"
        );
        assert_contains(&warnings, "FIFO");
        // Told once.
        assert!(
            nested
                .gather_all(&env.p("pkg/x/deep/f.rs"), &[])
                .warnings
                .is_empty()
        );
        // A link inside the project is refused too: it could lead to a secret file
        // (`.env`) that reading would ask about.
        write(&env.p(".env"), "API_KEY=SECRET-INSIDE\n");
        write(&env.p("docs/rules.md"), "linked rule\n");
        std::fs::create_dir_all(env.p("a")).unwrap();
        std::os::unix::fs::symlink("../.env", env.p("a/AGENTS.md")).unwrap();
        std::fs::create_dir_all(env.p("b")).unwrap();
        std::os::unix::fs::symlink("../docs/rules.md", env.p("b/AGENTS.md")).unwrap();
        for place in ["a/f.rs", "b/f.rs"] {
            let got = nested.gather_all(&env.p(place), &[]);
            assert!(got.files.is_empty(), "{place}: {:?}", got.files);
            assert_contains(&got.warnings.join("\n"), "is a symbolic link");
        }
        // A link on the way (a folder put there after the place was resolved) is not
        // followed either.
        std::fs::create_dir_all(env.p("real")).unwrap();
        write(&env.p("real/AGENTS.md"), "REAL-RULE\n");
        std::os::unix::fs::symlink(env.p("real"), env.p("linked")).unwrap();
        let got = nested.gather_all(&env.p("linked/f.rs"), &[]);
        assert!(got.files.is_empty(), "{:?}", got.files);
        assert!(!got.text.contains("REAL-RULE"));
    }

    #[test]
    fn a_file_the_rules_do_not_let_the_model_read_unasked_is_not_attached() {
        let env = Env::new();
        write(&env.p("pkg/AGENTS.md"), "PKG-RULE\n");
        write(&env.p("pkg/x/AGENTS.md"), "X-RULE\n");
        let nested = env.nested(1000);
        let refused = env.p("pkg/AGENTS.md");
        let got = nested.gather(&env.p("pkg/x/f.rs"), &[], &|p: &Path| p != refused);
        assert_eq!(paths(&got), [env.p("pkg/x/AGENTS.md")]);
        assert!(!got.text.contains("PKG-RULE"));
        assert_contains(
            &got.warnings.join("\n"),
            "the permission rules ask about or deny",
        );
    }

    #[test]
    fn each_file_has_its_own_cap_and_all_share_what_the_chain_leaves() {
        let env = Env::new();
        write(&env.p("AGENTS.md"), &"r".repeat(100));
        write(&env.p("pkg/AGENTS.md"), &"p".repeat(100));
        write(&env.p("pkg/x/AGENTS.md"), &"x".repeat(100));
        // 400 bytes: 100 for the chain, at most 100 a file.
        let nested = env.nested(400);
        let got = nested.gather_all(&env.p("pkg/x/f.rs"), &[]);
        let shown: Vec<u64> = got.files.iter().map(|f| f.shown).collect();
        assert_eq!(shown, [100, 100]);
        assert!(got.warnings.is_empty());
        // Over a file's own cap: shortened, and said in the block and to the user.
        write(&env.p("pkg/AGENTS.md"), &"p".repeat(150));
        let got = nested.gather_all(&env.p("pkg/f.rs"), &[]);
        assert_eq!(got.files[0].shown, 100);
        assert_contains(
            &got.text,
            "[shortened to fit the 100-byte cap on instruction files: 100 of 150 bytes shown; \
             read the file for the rest]",
        );
        assert_contains(&got.warnings.join("\n"), "100 of 150 bytes");
        // What is in force counts: 100 (chain) + 150 in force leave 150, then 100 + 50.
        let in_force = [InstructionFileInfo::new(
            env.p("elsewhere/AGENTS.md"),
            Origin::Nested,
            150,
            150,
        )];
        let got = nested.gather_all(&env.p("pkg/x/f.rs"), &in_force);
        let shown: Vec<u64> = got.files.iter().map(|f| f.shown).collect();
        assert_eq!(shown, [100, 50]);
        assert_contains(&got.text, "[shortened to fit the 400-byte cap");
        // Nothing left: named, shown as nothing.
        let full = [InstructionFileInfo::new(
            env.p("elsewhere/AGENTS.md"),
            Origin::Nested,
            400,
            400,
        )];
        let got = nested.gather_all(&env.p("pkg/x/f.rs"), &full);
        assert_eq!(got.files.len(), 2);
        assert_contains(&got.text, "0 of 100 bytes shown");
    }
}
