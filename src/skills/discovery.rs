//! The walk below one skills root: finds directories holding a `SKILL.md` and hands each
//! opened file to a visitor, in a deterministic order (entries sorted by name).
//!
//! It searches to a bounded depth and a bounded number of directories, includes hidden
//! folders (`.curated/`), skips `.git`, `node_modules` and `target`, does not descend into
//! a skill's own directory, follows a symlinked directory once (canonical paths, no
//! loops) and reports directories that hold no skill at all. It knows nothing of
//! frontmatter or precedence.
//!
//! With a [`cache::Run`], a `SKILL.md` whose `stat` matches the cache is handed on as its
//! stored outcome instead of an open file, and a directory whose `stat` matches is not
//! listed again; the walk itself (order, limits, links, warnings) is the same.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::cache::{self, DirProbe, FastMap, FileProbe, Identity};
use super::warning::{SkillWarning, WarningKind};

/// How many directory levels below a root are searched for skill directories.
pub const MAX_DEPTH: usize = 8;
/// How many directories are searched below one root.
pub const MAX_DIRS_PER_ROOT: usize = 100_000;
/// Directory names never searched.
const SKIPPED: [&str; 3] = [".git", "node_modules", "target"];

/// The file name that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// One `SKILL.md` found.
pub struct Site<'a> {
    /// The skill directory, as reached from the root.
    pub dir: PathBuf,
    /// `dir/SKILL.md`.
    pub path: PathBuf,
    /// The open file, or what the cache holds for it.
    pub source: Source<'a>,
    /// The `root_index` given to [`Walker::walk_root`].
    pub root_index: usize,
}

/// Where a site's head comes from.
pub enum Source<'a> {
    /// The file, opened; with a cache, its identity taken before reading (when settled
    /// enough to store).
    File {
        /// The open file.
        file: File,
        /// Its identity, to store the outcome under.
        identity: Option<Identity>,
    },
    /// Unchanged since the cache entry: the stored outcome ([`cache::decode_outcome`]).
    Cached(&'a [u8]),
}

/// Walks roots, remembering what it has seen so a directory reached twice (through a
/// symlink or two roots) is visited once.
pub struct Walker<'v, 'a> {
    visit: &'v mut dyn FnMut(Site<'a>),
    cache: Option<&'v mut cache::Run<'a>>,
    /// Problems found while walking.
    pub warnings: Vec<SkillWarning>,
    /// Directories searched, over all roots (listed, or their listing from the cache).
    pub dirs_visited: usize,
    /// Directories whose listing came from the cache.
    pub dirs_cached: usize,
    seen_roots: HashSet<PathBuf>,
    /// Canonical skill directories visited (as bytes: hashing a `Path` is slow).
    seen_skills: FastMap<OsString, ()>,
    followed: HashSet<PathBuf>,
    dirs_this_root: usize,
    root_index: usize,
}

/// What a subtree yielded.
#[derive(Clone, Copy)]
struct Yield {
    skills: usize,
    /// A warning already covers this subtree.
    reported: bool,
}

impl<'v, 'a> Walker<'v, 'a> {
    /// A walker calling `visit` for every `SKILL.md` found.
    pub fn new(visit: &'v mut dyn FnMut(Site<'a>)) -> Self {
        Walker {
            visit,
            cache: None,
            warnings: Vec::new(),
            dirs_visited: 0,
            dirs_cached: 0,
            seen_roots: HashSet::new(),
            seen_skills: FastMap::default(),
            followed: HashSet::new(),
            dirs_this_root: 0,
            root_index: 0,
        }
    }

    /// The same walker, validating against (and recording into) a cache run.
    pub fn with_cache(mut self, cache: &'v mut cache::Run<'a>) -> Self {
        // As many skills as the cache knows are likely: no rehashing on the way.
        self.seen_skills.reserve(cache.stored_files());
        self.cache = Some(cache);
        self
    }

    /// Searches one root. A root that does not exist is skipped silently; a root that is
    /// itself a skill directory is that one skill. Sites found carry `root_index`.
    /// Returns how many skills were found.
    pub fn walk_root(&mut self, root: &Path, root_index: usize) -> usize {
        self.root_index = root_index;
        if let Some(cache) = self.cache.as_deref_mut() {
            cache.enter_root(root_index);
        }
        let canonical = match std::fs::canonicalize(root) {
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::NotFound => return 0,
            Err(e) => {
                self.warn(
                    root,
                    WarningKind::Unreadable {
                        error: e.to_string(),
                    },
                );
                return 0;
            }
        };
        if !canonical.is_dir() {
            self.warn(root, WarningKind::RootNotDirectory);
            return 0;
        }
        if !self.seen_roots.insert(canonical.clone()) {
            return 0;
        }
        self.dirs_this_root = 0;
        let canonical = match self.try_skill(root.to_path_buf(), canonical) {
            Ok(y) => return y.skills,
            Err((_, canonical)) => canonical,
        };
        let mut empties = Vec::new();
        let y = self.children(root, &canonical, 1, &mut empties);
        for dir in empties {
            self.warn(&dir, WarningKind::NoSkillMd);
        }
        y.skills
    }

    fn warn(&mut self, path: &Path, kind: WarningKind) {
        self.warnings.push(SkillWarning {
            path: path.to_path_buf(),
            kind,
        });
    }

    /// Opens `dir/SKILL.md` (or finds it unchanged in the cache); `canonical` is where
    /// `dir` really is. `Err` gives both back when there is none (search below instead).
    fn try_skill(&mut self, dir: PathBuf, canonical: PathBuf) -> Result<Yield, (PathBuf, PathBuf)> {
        let path = dir.join(SKILL_FILE);
        let opened = match self.cache.as_deref_mut().map(|c| c.probe_file(&path)) {
            Some(FileProbe::Hit(outcome)) => Ok(Source::Cached(outcome)),
            Some(FileProbe::Absent) => return Err((dir, canonical)),
            Some(FileProbe::Read) | None => crate::plain_file::open(&path).map(|file| {
                // The identity is taken before the head is read: a change while reading
                // shows as a different identity next time.
                let identity = match &self.cache {
                    Some(c) => file.metadata().ok().and_then(|m| c.settled(&m)),
                    None => None,
                };
                Source::File { file, identity }
            }),
        };
        match opened {
            Ok(source) => {
                if self
                    .seen_skills
                    .insert(canonical.into_os_string(), ())
                    .is_none()
                {
                    (self.visit)(Site {
                        dir,
                        path,
                        source,
                        root_index: self.root_index,
                    });
                }
                Ok(Yield {
                    skills: 1,
                    reported: false,
                })
            }
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                Err((dir, canonical))
            }
            Err(e) => {
                self.warn(
                    &path,
                    WarningKind::Unreadable {
                        error: e.to_string(),
                    },
                );
                Ok(Yield {
                    skills: 0,
                    reported: true,
                })
            }
        }
    }

    /// Searches the subdirectories of `dir` (at `depth` below the root). Directories whose
    /// whole subtree holds no skill are collected in `empties` (topmost only).
    fn children(
        &mut self,
        dir: &Path,
        canonical: &Path,
        depth: usize,
        empties: &mut Vec<PathBuf>,
    ) -> Yield {
        let mut out = Yield {
            skills: 0,
            reported: false,
        };
        let subdirs = match self.list(dir) {
            Ok(subdirs) => subdirs,
            Err(e) => {
                self.warn(
                    dir,
                    WarningKind::Unreadable {
                        error: e.to_string(),
                    },
                );
                return Yield {
                    skills: 0,
                    reported: true,
                };
            }
        };
        self.dirs_visited += 1;
        for (name, is_link) in subdirs {
            let path = dir.join(&name);
            let child_canonical = if is_link {
                match self.follow(&path, canonical) {
                    Some(target) => target,
                    None => continue,
                }
            } else {
                canonical.join(&name)
            };
            if self.dirs_this_root >= MAX_DIRS_PER_ROOT {
                self.warn(
                    dir,
                    WarningKind::DirLimit {
                        limit: MAX_DIRS_PER_ROOT,
                    },
                );
                out.reported = true;
                break;
            }
            self.dirs_this_root += 1;
            let (path, child_canonical) = match self.try_skill(path, child_canonical) {
                Ok(y) => {
                    out.skills += y.skills;
                    out.reported |= y.reported;
                    continue;
                }
                Err(back) => back,
            };
            if depth >= MAX_DEPTH {
                let kind = if has_subdirectory(&path) {
                    WarningKind::DepthLimit { limit: MAX_DEPTH }
                } else {
                    WarningKind::NoSkillMd
                };
                self.warn(&path, kind);
                out.reported = true;
                continue;
            }
            let mut below = Vec::new();
            let y = self.children(&path, &child_canonical, depth + 1, &mut below);
            out.skills += y.skills;
            out.reported |= y.reported;
            if y.skills == 0 && !y.reported {
                empties.push(path);
            } else {
                empties.extend(below);
            }
        }
        out
    }

    /// The subdirectories and links to search in `dir` (skipped names left out), sorted:
    /// from the cache when `dir` is unchanged, else listed (and recorded).
    fn list(&mut self, dir: &Path) -> std::io::Result<Vec<(Cow<'a, OsStr>, bool)>> {
        let identity = match self.cache.as_deref_mut().map(|c| c.probe_dir(dir)) {
            Some(DirProbe::Hit(listing)) => {
                self.dirs_cached += 1;
                return Ok(listing);
            }
            Some(DirProbe::List(identity)) => identity,
            None => None,
        };
        let mut subdirs: Vec<(Cow<'a, OsStr>, bool)> = Vec::new();
        for entry in std::fs::read_dir(dir)?.flatten() {
            let name = entry.file_name();
            if SKIPPED.iter().any(|s| name == *s) {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => subdirs.push((Cow::Owned(name), false)),
                Ok(t) if t.is_symlink() => subdirs.push((Cow::Owned(name), true)),
                _ => {}
            }
        }
        subdirs.sort();
        if let (Some(cache), Some(identity)) = (self.cache.as_deref_mut(), identity) {
            cache.record_dir(dir, identity, &subdirs);
        }
        Ok(subdirs)
    }

    /// Resolves a symlink found in `parent` (canonical). `None` for links to non-
    /// directories, links back to an ancestor and targets already followed; broken links
    /// are reported.
    fn follow(&mut self, link: &Path, parent: &Path) -> Option<PathBuf> {
        let target = match std::fs::canonicalize(link) {
            Ok(t) => t,
            Err(e) => {
                self.warn(
                    link,
                    WarningKind::Unreadable {
                        error: format!("broken link: {e}"),
                    },
                );
                return None;
            }
        };
        if !target.is_dir() || parent.starts_with(&target) {
            return None;
        }
        self.followed.insert(target.clone()).then_some(target)
    }
}

fn has_subdirectory(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .any(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        })
        .unwrap_or(false)
}
