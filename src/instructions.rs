//! The instruction files of a session (the `AGENTS.md` chain): found, read and fitted
//! to one combined cap, then worded as the system prompt's "Project instructions"
//! section. In order, the most general first: the user's global files
//! (`~/.agents/AGENTS.md`, then `$HARNESS9_HOME/AGENTS.md`), then one file for every
//! folder from the project root down to the working folder: `AGENTS.override.md` where
//! a folder has one, else `AGENTS.md`, else `CLAUDE.md`. Over the cap, the farthest
//! files are shortened first (their heads kept), and every shortened or left-out file
//! is named in the prompt and in a warning for the user: nothing is dropped silently.
//!
//! A project's files come with the repository, so they are untrusted input: a file
//! whose real path leaves the project root (a link out) is refused, the real path is
//! opened without following links (`nofollow`: FIFOs, sockets and devices are
//! refused from `lstat` and again from `fstat`), and no read takes more than the cap.
//! The global files are the user's own: links are followed, but only a plain file is
//! read (`plain_file`), capped the same way.
//!
//! It is read once when a session is assembled; the prompt never changes afterwards.
//! It must not know how the prompt is sent or how frontends show the warnings.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::nofollow;
use crate::protocol::InstructionFileInfo;

pub mod nested;

/// The default combined cap on the instruction files' text, in bytes (Codex's too).
pub const DEFAULT_MAX_BYTES: usize = 32 * 1024;
/// The largest cap config.toml may set.
pub const MAX_MAX_BYTES: usize = 1024 * 1024;
/// The names looked for in each folder, the first present taken.
pub const FOLDER_FILES: [&str; 3] = ["AGENTS.override.md", "AGENTS.md", "CLAUDE.md"];

/// Whose file it is: global, a folder of the chain, or a folder below the working
/// folder ([`nested`]).
pub use crate::protocol::InstructionOrigin as Origin;

/// One instruction file in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Where it is, as found (not through its links).
    pub path: PathBuf,
    /// Whose it is.
    pub origin: Origin,
    /// Its size in bytes.
    pub size: u64,
    /// What the prompt shows of it: its head, within the cap.
    pub shown: String,
}

impl InstructionFile {
    /// Whether less than the whole file is shown.
    pub fn shortened(&self) -> bool {
        (self.shown.len() as u64) < self.size
    }

    /// What `/context` and stream-json show of it.
    pub fn info(&self) -> InstructionFileInfo {
        InstructionFileInfo::new(
            self.path.clone(),
            self.origin,
            self.size,
            self.shown.len() as u64,
        )
    }

    /// Its block as the model reads it: `<instructions path="…">`, the text shown, and
    /// when shortened a line saying how much of it, under the `max_bytes` cap.
    fn block(&self, max_bytes: usize) -> String {
        let mut out = format!("<instructions path=\"{}\">\n", self.path.display());
        let text = self.shown.trim_end();
        out.push_str(text);
        if self.shortened() {
            if !text.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!(
                "[shortened to fit the {max_bytes}-byte cap on instruction files: {} of {} \
                 bytes shown; read the file for the rest]",
                self.shown.len(),
                self.size
            ));
        }
        out.push_str("\n</instructions>");
        out
    }
}

/// Where the files are looked for, and the cap.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// `$HARNESS9_HOME`.
    pub harness9_home: &'a Path,
    /// The user's home folder, when known.
    pub user_home: Option<&'a Path>,
    /// The project root (canonical).
    pub root: &'a Path,
    /// The working folder (canonical, at or below `root`).
    pub workdir: &'a Path,
    /// The combined cap in bytes.
    pub max_bytes: usize,
}

/// The session's instruction files and what the user should be told about them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// The files, the most general first.
    pub files: Vec<InstructionFile>,
    /// The combined cap they were fitted to.
    pub max_bytes: usize,
    /// Files refused or unreadable, and the files shortened, in words for the user.
    pub warnings: Vec<String>,
    /// How the section is worded.
    layout: Layout,
}

/// How the prompt section is worded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Layout {
    /// The working folder is the root and its `AGENTS.md` is the only file: worded as
    /// before the chain existed, so such a project's prompt keeps its bytes (and the
    /// provider's prompt cache) across the upgrade.
    #[default]
    SingleProjectFile,
    /// Each file in a block naming its path.
    Chain,
}

/// Finds, reads and fits the instruction files.
pub fn load(places: Places<'_>) -> Instructions {
    let mut warnings = Vec::new();
    let mut read: Vec<(PathBuf, Origin, Head)> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let globals = places
        .user_home
        .map(|home| home.join(".agents").join("AGENTS.md"))
        .into_iter()
        .chain([places.harness9_home.join("AGENTS.md")]);
    for path in globals {
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        seen.push(real);
        match read_global(&path, places.max_bytes) {
            Ok(got) => read.push((path, Origin::Global, got)),
            Err(why) => warnings.push(not_read(&path, &why)),
        }
    }
    for folder in crate::project_root::chain(places.root, places.workdir) {
        let Some(path) = file_in(&folder) else {
            continue;
        };
        let real = path.canonicalize().ok();
        if real.as_ref().is_some_and(|r| seen.contains(r)) {
            continue;
        }
        match read_project(&path, places.root, places.max_bytes) {
            Ok(got) => {
                seen.extend(real);
                read.push((path, Origin::Project, got));
            }
            Err(why) => warnings.push(not_read(&path, &why)),
        }
    }
    read.retain(|(_, _, got)| !String::from_utf8_lossy(&got.head).trim().is_empty());
    let files = fit(read, places.max_bytes);
    let shortened: Vec<String> = files
        .iter()
        .filter(|f| f.shortened())
        .map(|f| {
            format!(
                "{} ({} of {} bytes)",
                f.path.display(),
                f.shown.len(),
                f.size
            )
        })
        .collect();
    if !shortened.is_empty() {
        warnings.push(format!(
            "the instruction files are over the {}-byte cap (instructions_max_bytes in \
             config.toml), so the farthest were shortened, and the prompt says so: {}",
            places.max_bytes,
            shortened.join(", ")
        ));
    }
    let layout = match files.as_slice() {
        [only]
            if only.origin == Origin::Project
                && places.root == places.workdir
                && only.path == places.workdir.join("AGENTS.md") =>
        {
            Layout::SingleProjectFile
        }
        _ => Layout::Chain,
    };
    Instructions {
        files,
        max_bytes: places.max_bytes,
        warnings,
        layout,
    }
}

/// The instruction file of `folder`: the first of [`FOLDER_FILES`] present there (a
/// link counts as present, and is judged when it is read).
fn file_in(folder: &Path) -> Option<PathBuf> {
    FOLDER_FILES
        .iter()
        .map(|name| folder.join(name))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
}

/// What one read got: the head (at most the cap and one byte more, to find a character
/// boundary) and the file's size.
#[derive(Debug)]
struct Head {
    head: Vec<u8>,
    size: u64,
}

/// Why an instruction file was not read.
#[derive(Debug, thiserror::Error)]
enum NotRead {
    /// A project's file whose real path is outside the project root.
    #[error("it leads out of the project (to {}), and a repository's links are not followed out of it", .0.display())]
    LeavesProject(PathBuf),
    /// A nested file (below the working folder) that is a symbolic link.
    #[error(
        "it is a symbolic link, and a file below the working folder is read only when it is \
         a plain file (a link could lead anywhere, a secret file too)"
    )]
    Link,
    /// A project's file that could not be opened without links, or is not a plain file.
    #[error("{0}")]
    Open(#[from] nofollow::FileError),
    /// Anything else the system said.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A project file: refused when its real path leaves `root`; opened without links.
fn read_project(path: &Path, root: &Path, max: usize) -> Result<Head, NotRead> {
    let real = path.canonicalize()?;
    if !real.starts_with(root) {
        return Err(NotRead::LeavesProject(real));
    }
    let file = nofollow::open_read(&real)?;
    read_capped(file, max)
}

/// A global file: the user's own, links followed, a plain file only.
fn read_global(path: &Path, max: usize) -> Result<Head, NotRead> {
    let file = crate::plain_file::open(path)?;
    read_capped(file, max)
}

fn read_capped(file: std::fs::File, max: usize) -> Result<Head, NotRead> {
    let size = file.metadata()?.len();
    let mut head = Vec::new();
    file.take(max as u64 + 1).read_to_end(&mut head)?;
    // A file that grew after its size was taken is shown as far as it was read.
    let size = size.max(head.len() as u64);
    Ok(Head { head, size })
}

fn not_read(path: &Path, why: &NotRead) -> String {
    format!("instruction file {} was not read: {why}", path.display())
}

/// Fits the files to `max` bytes: the nearest keeps the most, the farthest are
/// shortened first (their heads kept, cut at a character boundary).
fn fit(read: Vec<(PathBuf, Origin, Head)>, max: usize) -> Vec<InstructionFile> {
    let mut left = max;
    let mut files: Vec<InstructionFile> = read
        .into_iter()
        .rev()
        .map(|(path, origin, got)| {
            let end = boundary(&got.head, left);
            left -= end;
            InstructionFile {
                path,
                origin,
                size: got.size,
                shown: String::from_utf8_lossy(&got.head[..end]).into_owned(),
            }
        })
        .collect();
    files.reverse();
    files
}

/// Where to cut `bytes` to keep at most `limit` of them without splitting a character.
fn boundary(bytes: &[u8], limit: usize) -> usize {
    let mut end = bytes.len().min(limit);
    while end > 0 && end < bytes.len() && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    end
}

impl Instructions {
    /// Bytes of the files' text the system prompt shows.
    pub fn shown_bytes(&self) -> usize {
        self.files.iter().map(|f| f.shown.len()).sum()
    }

    /// The system prompt's section, or `None` when there is no file.
    pub fn section(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let mut out = String::from("## Project instructions (AGENTS.md)\n");
        if let (Layout::SingleProjectFile, [only]) = (self.layout, self.files.as_slice()) {
            let mut text = only.shown.clone();
            if only.shortened() {
                text.push_str(&format!(
                    "\n[AGENTS.md truncated: {} of {} bytes shown]",
                    only.shown.len(),
                    only.size
                ));
            }
            out.push_str(text.trim_end());
            return Some(out);
        }
        out.push_str(
            "The instruction files in force, the most general first: where two disagree, \
             the later one (nearer the working folder) wins.",
        );
        for file in &self.files {
            out.push_str("\n\n");
            out.push_str(&file.block(self.max_bytes));
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_contains, write};

    struct Env {
        _tmp: tempfile::TempDir,
        base: PathBuf,
    }

    impl Env {
        fn new() -> Env {
            let tmp = tempfile::tempdir().unwrap();
            let base = tmp.path().canonicalize().unwrap();
            for d in ["home/h9", "repo/sub/deep"] {
                std::fs::create_dir_all(base.join(d)).unwrap();
            }
            Env { _tmp: tmp, base }
        }
        fn p(&self, rel: &str) -> PathBuf {
            self.base.join(rel)
        }
        fn load(&self, workdir: &str, max_bytes: usize) -> Instructions {
            let (home, h9, root, workdir) = (
                self.p("home"),
                self.p("home/h9"),
                self.p("repo"),
                self.p(workdir),
            );
            load(Places {
                harness9_home: &h9,
                user_home: Some(&home),
                root: &root,
                workdir: &workdir,
                max_bytes,
            })
        }
    }

    fn paths(i: &Instructions) -> Vec<String> {
        i.files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    }

    #[test]
    fn the_chain_runs_from_the_global_files_through_the_root_to_the_working_folder() {
        let env = Env::new();
        write(&env.p("home/.agents/AGENTS.md"), "agents-global\n");
        write(&env.p("home/h9/AGENTS.md"), "h9-global\n");
        write(&env.p("repo/AGENTS.md"), "root rule\n");
        write(&env.p("repo/sub/AGENTS.md"), "sub rule\n");
        write(
            &env.p("repo/sub/deep/AGENTS.md"),
            "below: not in the chain\n",
        );
        let got = env.load("repo/sub", DEFAULT_MAX_BYTES);
        let p = |r: &str| env.p(r).display().to_string();
        assert_eq!(
            paths(&got),
            [
                p("home/.agents/AGENTS.md"),
                p("home/h9/AGENTS.md"),
                p("repo/AGENTS.md"),
                p("repo/sub/AGENTS.md")
            ]
        );
        let section = got.section().unwrap();
        let at = |s: &str| section.find(s).unwrap();
        assert!(at("agents-global") < at("h9-global"));
        assert!(at("h9-global") < at("root rule"));
        assert!(at("root rule") < at("sub rule"));
        assert_contains(
            &section,
            &format!(
                "<instructions path=\"{}\">\nsub rule\n</instructions>",
                p("repo/sub/AGENTS.md")
            ),
        );
        assert!(!section.contains("below"));
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    }

    #[test]
    fn an_override_wins_in_its_folder_and_claude_md_stands_in_where_agents_md_is_missing() {
        let env = Env::new();
        write(&env.p("repo/AGENTS.md"), "root agents\n");
        write(&env.p("repo/AGENTS.override.md"), "root override\n");
        write(&env.p("repo/CLAUDE.md"), "root claude\n");
        write(&env.p("repo/sub/CLAUDE.md"), "sub claude\n");
        let section = env.load("repo/sub", DEFAULT_MAX_BYTES).section().unwrap();
        assert_contains(&section, "root override");
        assert_contains(&section, "sub claude");
        for absent in ["root agents", "root claude"] {
            assert!(!section.contains(absent), "{section}");
        }
        // Where AGENTS.md is, CLAUDE.md is not read.
        write(&env.p("repo/sub/AGENTS.md"), "sub agents\n");
        let section = env.load("repo/sub", DEFAULT_MAX_BYTES).section().unwrap();
        assert_contains(&section, "sub agents");
        assert!(!section.contains("sub claude"), "{section}");
    }

    #[test]
    fn the_cap_shortens_the_farthest_first_and_says_so() {
        let env = Env::new();
        write(&env.p("home/h9/AGENTS.md"), &"g".repeat(100));
        write(&env.p("repo/AGENTS.md"), &"r".repeat(100));
        write(&env.p("repo/sub/AGENTS.md"), &"s".repeat(100));
        let got = env.load("repo/sub", 150);
        let shown: Vec<usize> = got.files.iter().map(|f| f.shown.len()).collect();
        assert_eq!(shown, [0, 50, 100]);
        let section = got.section().unwrap();
        assert_contains(
            &section,
            "[shortened to fit the 150-byte cap on instruction files: 50 of 100 bytes shown",
        );
        assert_contains(&section, "0 of 100 bytes shown");
        assert_eq!(section.matches("<instructions path=").count(), 3);
        let warning = got.warnings.join("\n");
        assert_contains(&warning, "instructions_max_bytes");
        assert_contains(
            &warning,
            &format!("{} (50 of 100 bytes)", env.p("repo/AGENTS.md").display()),
        );
        assert!(!warning.contains("repo/sub/AGENTS.md"), "{warning}");
        // A cut never splits a character.
        write(&env.p("repo/sub/AGENTS.md"), &"é".repeat(100));
        let got = env.load("repo/sub", 151);
        assert_eq!(got.files.last().unwrap().shown.len(), 150);
    }

    #[test]
    fn a_lone_agents_md_in_the_root_reads_as_before_the_chain() {
        let env = Env::new();
        assert_eq!(env.load("repo", DEFAULT_MAX_BYTES).section(), None);
        write(&env.p("repo/AGENTS.md"), "Use tabs.\n");
        assert_eq!(
            env.load("repo", DEFAULT_MAX_BYTES).section().unwrap(),
            "## Project instructions (AGENTS.md)\nUse tabs."
        );
        write(&env.p("repo/AGENTS.md"), &"é".repeat(DEFAULT_MAX_BYTES));
        let section = env.load("repo", DEFAULT_MAX_BYTES).section().unwrap();
        assert_contains(
            &section,
            &format!(
                "\n[AGENTS.md truncated: {} of {} bytes shown]",
                DEFAULT_MAX_BYTES,
                2 * DEFAULT_MAX_BYTES
            ),
        );
    }

    #[test]
    fn links_out_of_the_project_fifos_and_devices_are_refused_with_a_warning() {
        let env = Env::new();
        write(&env.p("outside/secret.txt"), "SECRET-OUTSIDE\n");
        std::os::unix::fs::symlink(env.p("outside/secret.txt"), env.p("repo/AGENTS.md")).unwrap();
        nix::unistd::mkfifo(&env.p("repo/sub/AGENTS.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink("/dev/zero", env.p("repo/sub/deep/CLAUDE.md")).unwrap();
        let got = env.load("repo/sub/deep", DEFAULT_MAX_BYTES);
        assert!(got.files.is_empty(), "{:?}", got.files);
        let warnings = got.warnings.join("\n");
        assert_contains(&warnings, "leads out of the project");
        assert_contains(&warnings, "FIFO");
        assert_eq!(got.warnings.len(), 3, "{warnings}");
        // A link inside the project is read.
        std::fs::remove_file(env.p("repo/AGENTS.md")).unwrap();
        write(&env.p("repo/docs/rules.md"), "linked rule\n");
        std::os::unix::fs::symlink("docs/rules.md", env.p("repo/AGENTS.md")).unwrap();
        let section = env.load("repo", DEFAULT_MAX_BYTES).section().unwrap();
        assert_contains(&section, "linked rule");
    }
}
