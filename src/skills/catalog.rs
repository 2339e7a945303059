//! The catalog: every skill discovered at start-up, split into winners (one per name, by
//! root precedence), shadowed skills and invalid files, with the warnings to show. It
//! owns precedence and the read of each `SKILL.md`'s frontmatter (never its body), taken
//! from the discovery cache ([`super::cache`]) when the file is unchanged.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::assess::{self, Verdict};
use super::cache::{self, FastMap, Outcome};
use super::discovery::{Site, Source, Walker};
use super::frontmatter;
use super::warning::{SkillWarning, WarningKind};
use super::{DiscoveryOptions, LazyFrontmatter, Skill, SkillRoot, SkillStatus};

/// A `SKILL.md` that could not be loaded as a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSkill {
    /// The `name` field (trimmed) when the frontmatter has one, whether or not it is
    /// the problem.
    pub name: Option<String>,
    /// The file.
    pub path: PathBuf,
    /// The root it was found under.
    pub root: SkillRoot,
    /// Why it was skipped (also in the warnings).
    pub reason: WarningKind,
}

/// What discovery cost in this run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    /// Roots that exist and were searched.
    pub roots_searched: usize,
    /// Directories searched (listed now, or their listing taken from the cache).
    pub dirs_visited: usize,
    /// Directories whose listing came from the cache (included in `dirs_visited`).
    pub dirs_cached: usize,
    /// `SKILL.md` files opened and read in this run.
    pub files_read: usize,
    /// `SKILL.md` files found unchanged (one `stat`) and taken from the cache, not read.
    pub cache_hits: usize,
    /// Bytes read from `SKILL.md` files in this run (frontmatter only).
    pub bytes_read: u64,
}

/// The skills of a session.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    skills: Vec<Skill>,
    shadowed: Vec<Skill>,
    invalid: Vec<InvalidSkill>,
    warnings: Vec<SkillWarning>,
    stats: DiscoveryStats,
}

impl Catalog {
    /// Searches every root in precedence order. Never fails: problems become warnings
    /// (also logged with `tracing`; frontends show them to the user).
    ///
    /// Uses the discovery cache in `$HARNESS9_HOME/cache/skills-index` (see
    /// `super::cache`): a `SKILL.md` whose `stat` is unchanged is not read, a directory
    /// whose `stat` is unchanged is not listed. The catalog is the same as
    /// [`Catalog::discover_uncached`] gives, warnings included; only [`Catalog::stats`]
    /// shows the difference.
    pub fn discover(options: &DiscoveryOptions) -> Catalog {
        let Some(path) = cache::path_for(&options.harness9_home) else {
            return Catalog::discover_uncached(options);
        };
        let bytes = cache::read(&path);
        let roots = options.roots();
        let paths: Vec<&Path> = roots.iter().map(|r| &*r.path).collect();
        let mut run = cache::Run::new(bytes.as_ref(), &paths);
        let catalog = discover_with(options, Some(&mut run), bytes.as_ref());
        run.finish(&path);
        catalog
    }

    /// [`Catalog::discover`] without the cache: every `SKILL.md` is opened and read.
    pub fn discover_uncached(options: &DiscoveryOptions) -> Catalog {
        discover_with(options, None, None)
    }

    /// A catalog with no skills.
    pub fn empty() -> Catalog {
        Catalog::default()
    }

    /// The winning skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The winning skill with this name.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.skills[i])
    }

    /// Skills that lost to a higher-precedence skill of the same name, in discovery order.
    pub fn shadowed(&self) -> &[Skill] {
        &self.shadowed
    }

    /// `SKILL.md` files that could not be loaded, in discovery order.
    pub fn invalid(&self) -> &[InvalidSkill] {
        &self.invalid
    }

    /// The invalid files named `name` (the `name` field), or else those in a directory
    /// called `name`, in discovery order: what `skills show NAME` explains.
    pub fn invalid_named(&self, name: &str) -> Vec<&InvalidSkill> {
        let by_field: Vec<&InvalidSkill> = self
            .invalid
            .iter()
            .filter(|b| b.name.as_deref() == Some(name))
            .collect();
        if !by_field.is_empty() {
            return by_field;
        }
        self.invalid
            .iter()
            .filter(|b| {
                b.path
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|d| d == name)
            })
            .collect()
    }

    /// Every problem found, roots first, then files, then precedence and collisions.
    pub fn warnings(&self) -> &[SkillWarning] {
        &self.warnings
    }

    /// True when there is no winning skill.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// What discovery read.
    pub fn stats(&self) -> DiscoveryStats {
        self.stats
    }

    /// Names of the winners that may be slash-invoked (`user-invocable` not false).
    pub fn user_invocable_names(&self) -> impl Iterator<Item = &str> {
        self.skills
            .iter()
            .filter(|s| s.user_invocable())
            .map(|s| s.name.as_str())
    }

    /// Names of the winners the model may load (`disable-model-invocation` not true).
    pub fn model_invocable_names(&self) -> impl Iterator<Item = &str> {
        self.skills
            .iter()
            .filter(|s| s.model_invocable())
            .map(|s| s.name.as_str())
    }
}

/// One discovery: walk (with or without the cache), read, assemble.
///
/// One thread walks the directories (in name order) and opens each `SKILL.md`; with
/// more than one CPU, worker threads read and parse the frontmatter meanwhile. The
/// result is put back in walk order, so it does not depend on thread timing.
/// `buffer` is the cache file the run's stored outcomes are parts of.
fn discover_with(
    options: &DiscoveryOptions,
    mut cache: Option<&mut cache::Run<'_>>,
    buffer: Option<&Arc<Vec<u8>>>,
) -> Catalog {
    let roots = options.roots();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4);
    let mut walk = if workers > 1 {
        load_parallel(&roots, workers, cache.as_deref_mut(), buffer)
    } else {
        load_sequential(&roots, cache.as_deref_mut(), buffer)
    };
    // Sequence numbers are unique: an unstable sort gives the one order, in place.
    walk.loaded.sort_unstable_by_key(|l| l.seq);
    let opened = walk.loaded.iter().filter(|l| l.opened).count();
    let stats = DiscoveryStats {
        roots_searched: roots.iter().filter(|r| r.path.is_dir()).count(),
        dirs_visited: walk.dirs_visited,
        dirs_cached: walk.dirs_cached,
        files_read: opened,
        cache_hits: walk.loaded.len() - opened,
        bytes_read: walk.bytes_read,
    };
    let mut catalog = assemble(walk.loaded, walk.warnings, stats, cache);
    catalog.add_commands(super::commands::discover(options));
    catalog
}

impl Catalog {
    /// Adds the commands found (in precedence order) below the skills: a skill of the
    /// same name wins, as in Claude Code, and a nearer command over a farther one; the
    /// losers are shadowed and reported.
    fn add_commands(&mut self, found: super::commands::Found) {
        self.warnings.extend(found.warnings);
        self.invalid.extend(found.invalid);
        let mut added: Vec<Skill> = Vec::new();
        for mut command in found.skills {
            let winner = self
                .get(&command.name)
                .or_else(|| added.iter().find(|c| c.name == command.name))
                .map(|w| w.path.clone());
            match winner {
                Some(by) => {
                    self.warnings.push(SkillWarning {
                        path: command.path.clone(),
                        kind: WarningKind::Shadowed {
                            name: command.name.clone(),
                            winner: by.clone(),
                        },
                    });
                    command.status = SkillStatus::Shadowed { by };
                    self.shadowed.push(command);
                }
                None => {
                    if let Some(kind) = assess::builtin_collision(&command.name) {
                        command.status = SkillStatus::Warning;
                        self.warnings.push(SkillWarning {
                            path: command.path.clone(),
                            kind,
                        });
                    }
                    added.push(command);
                }
            }
        }
        if !added.is_empty() {
            self.skills.append(&mut added);
            self.skills.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        }
    }
}

/// The catalog from the files loaded (in walk order): winners by precedence, the
/// shadowed and the invalid, and the warnings in a fixed order (the walk's, each file's,
/// shadowing, built-in collisions). New cache records go to `cache`.
fn assemble(
    loaded: Vec<Loaded>,
    mut warnings: Vec<SkillWarning>,
    stats: DiscoveryStats,
    mut cache: Option<&mut cache::Run<'_>>,
) -> Catalog {
    // First, by reference: the winner of each name (the first usable skill of that
    // name in walk order) and, for the rare loser, the winner's file.
    let mut first: FastMap<&str, usize> =
        FastMap::with_capacity_and_hasher(loaded.len(), Default::default());
    let mut lost_to: FastMap<usize, PathBuf> = FastMap::default();
    for (i, l) in loaded.iter().enumerate() {
        if let Found::Skill(skill) = &l.found {
            match first.get(skill.name.as_str()) {
                Some(&w) => {
                    if let Found::Skill(winner) = &loaded[w].found {
                        lost_to.insert(i, winner.path.clone());
                    }
                }
                None => {
                    first.insert(&skill.name, i);
                }
            }
        }
    }
    drop(first);
    let mut shadowed: Vec<Skill> = Vec::new();
    let mut invalid = Vec::new();
    let mut shadowing = Vec::new();
    // Then moving each out, in walk order, into what it is; the winners are collected
    // into the walk's own buffer (no second copy of every skill at once).
    let mut winners: Vec<Skill> = loaded
        .into_iter()
        .enumerate()
        .filter_map(|(i, l)| {
            warnings.extend(l.notes);
            if let (Some(cache), Some(record)) = (cache.as_deref_mut(), l.record) {
                cache.record_file(l.root_index, record);
            }
            let mut skill = match l.found {
                Found::Skill(skill) => skill,
                Found::Invalid(bad) => {
                    invalid.push(bad);
                    return None;
                }
            };
            match lost_to.remove(&i) {
                Some(winner) => {
                    shadowing.push(SkillWarning {
                        path: skill.path.clone(),
                        kind: WarningKind::Shadowed {
                            name: skill.name.clone(),
                            winner: winner.clone(),
                        },
                    });
                    skill.status = SkillStatus::Shadowed { by: winner };
                    shadowed.push(skill);
                    None
                }
                None => Some(skill),
            }
        })
        .collect();
    warnings.append(&mut shadowing);
    // Winners' names are unique: an unstable sort gives the one order, in place.
    winners.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    for skill in &mut winners {
        if let Some(kind) = assess::builtin_collision(&skill.name) {
            // Every skill a warning names is `warning`, this one too.
            skill.status = SkillStatus::Warning;
            warnings.push(SkillWarning {
                path: skill.path.clone(),
                kind,
            });
        }
    }
    Catalog {
        skills: winners,
        shadowed,
        invalid,
        warnings,
        stats,
    }
}

/// What a `SKILL.md` turned out to be. Most files are skills: boxing them to shrink
/// the rare invalid case would cost an allocation each.
#[allow(clippy::large_enum_variant)]
enum Found {
    /// A usable skill.
    Skill(Skill),
    /// Not one, and why.
    Invalid(InvalidSkill),
}

/// One `SKILL.md` loaded, tagged with its place in the walk.
struct Loaded {
    seq: usize,
    found: Found,
    notes: Vec<SkillWarning>,
    /// Read from the file (not taken from the cache).
    opened: bool,
    /// A new cache record for it.
    record: Option<Vec<u8>>,
    /// The root it was found under.
    root_index: usize,
}

/// Everything the walk produced.
struct Walk {
    loaded: Vec<Loaded>,
    warnings: Vec<SkillWarning>,
    dirs_visited: usize,
    dirs_cached: usize,
    bytes_read: u64,
}

fn load_one(
    seq: usize,
    site: Site<'_>,
    roots: &[SkillRoot],
    buffer: Option<&Arc<Vec<u8>>>,
    bytes_read: &mut u64,
) -> Option<Loaded> {
    let root_index = site.root_index;
    let root = roots.get(root_index)?;
    let mut notes = Vec::new();
    let (found, opened, record) = load(site, root, buffer, bytes_read, &mut notes);
    Some(Loaded {
        seq,
        found,
        notes,
        opened,
        record,
        root_index,
    })
}

/// Walks every root, calling `visit` for each site; returns the walker's warnings,
/// directories searched and directories taken from the cache.
fn walk_roots<'a>(
    roots: &[SkillRoot],
    visit: &mut dyn FnMut(Site<'a>),
    cache: Option<&mut cache::Run<'a>>,
) -> (Vec<SkillWarning>, usize, usize) {
    let mut walker = Walker::new(visit);
    if let Some(cache) = cache {
        walker = walker.with_cache(cache);
    }
    for (i, root) in roots.iter().enumerate() {
        walker.walk_root(&root.path, i);
    }
    (walker.warnings, walker.dirs_visited, walker.dirs_cached)
}

fn load_sequential(
    roots: &[SkillRoot],
    cache: Option<&mut cache::Run<'_>>,
    buffer: Option<&Arc<Vec<u8>>>,
) -> Walk {
    let mut loaded = Vec::new();
    let mut bytes_read = 0u64;
    let mut seq = 0usize;
    let mut visit = |site: Site<'_>| {
        loaded.extend(load_one(seq, site, roots, buffer, &mut bytes_read));
        seq += 1;
    };
    let (warnings, dirs_visited, dirs_cached) = walk_roots(roots, &mut visit, cache);
    Walk {
        loaded,
        warnings,
        dirs_visited,
        dirs_cached,
        bytes_read,
    }
}

/// Open files waiting for a worker, at most (bounds the open descriptors).
const QUEUE: usize = 128;

fn load_parallel<'a>(
    roots: &[SkillRoot],
    workers: usize,
    cache: Option<&mut cache::Run<'a>>,
    buffer: Option<&Arc<Vec<u8>>>,
) -> Walk {
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Site<'a>)>(QUEUE);
    let rx = std::sync::Mutex::new(rx);
    std::thread::scope(|scope| {
        // Workers start at the first file to read: a warm cache needs none.
        let mut handles = Vec::new();
        let mut inline = Vec::with_capacity(cache.as_ref().map_or(0, |c| c.stored_files()));
        let mut inline_bytes = 0u64;
        let mut seq = 0usize;
        let mut visit = |site: Site<'a>| {
            if matches!(site.source, Source::Cached(_)) {
                // Decoding a stored outcome is cheaper than handing it to a worker.
                inline.extend(load_one(seq, site, roots, buffer, &mut inline_bytes));
            } else {
                if handles.is_empty() {
                    handles = (0..workers)
                        .map(|_| {
                            let rx = &rx;
                            scope.spawn(move || {
                                let mut out = Vec::new();
                                let mut bytes = 0u64;
                                loop {
                                    let next = match rx.lock() {
                                        Ok(r) => r.recv(),
                                        Err(_) => break,
                                    };
                                    let Ok((seq, site)) = next else { break };
                                    // Workers get files to read, never cached ones.
                                    out.extend(load_one(seq, site, roots, None, &mut bytes));
                                }
                                (out, bytes)
                            })
                        })
                        .collect();
                }
                // A send fails only when every worker is gone; nothing to do then.
                let _ = tx.send((seq, site));
            }
            seq += 1;
        };
        let (warnings, dirs_visited, dirs_cached) = walk_roots(roots, &mut visit, cache);
        drop(tx);
        let mut loaded = inline;
        let mut bytes_read = inline_bytes;
        for h in handles {
            if let Ok((out, bytes)) = h.join() {
                loaded.extend(out);
                bytes_read += bytes;
            }
        }
        Walk {
            loaded,
            warnings,
            dirs_visited,
            dirs_cached,
            bytes_read,
        }
    })
}

/// Reads a site's head (or takes it from the cache) and makes it a skill (or says why
/// it cannot be one). Also returns whether the file was read and, for a file read with
/// a settled identity, its new cache record.
fn load(
    site: Site<'_>,
    root: &SkillRoot,
    buffer: Option<&Arc<Vec<u8>>>,
    bytes_read: &mut u64,
    notes: &mut Vec<SkillWarning>,
) -> (Found, bool, Option<Vec<u8>>) {
    let Site {
        dir, path, source, ..
    } = site;
    let (outcome, opened, record) = match source {
        Source::Cached(stored) => match cache::decode_summary(stored) {
            // The verdict needs only the summary; the rest stays stored until used.
            Some(summary) => {
                let found = skill_from_summary(summary, (buffer, stored), dir, path, root, notes);
                return (found, false, None);
            }
            // Not expected (the file is checksummed): read it as if not cached.
            None => match crate::plain_file::open(&path) {
                Ok(mut file) => (read_outcome(&mut file, bytes_read), true, None),
                Err(e) => (Err(e.to_string()), true, None),
            },
        },
        Source::File { mut file, identity } => {
            let outcome = read_outcome(&mut file, bytes_read);
            let record = match (&outcome, identity) {
                (Ok(o), Some(id)) => cache::encode_file(&path, id, o),
                _ => None,
            };
            (outcome, true, record)
        }
    };
    (skill_from(outcome, dir, path, root, notes), opened, record)
}

/// Reads and parses a head; `Err` holds an I/O error's text.
fn read_outcome(file: &mut dyn Read, bytes_read: &mut u64) -> Result<Outcome, String> {
    match frontmatter::read_head(file, bytes_read) {
        Ok(head) => {
            let (frontmatter, notes) = frontmatter::parse(&head.yaml);
            Ok(Outcome::Parsed { frontmatter, notes })
        }
        Err(frontmatter::HeadError::Io(e)) => Err(e.to_string()),
        Err(e) => Ok(Outcome::NoFrontmatter {
            reason: e.to_string(),
        }),
    }
}

/// Why a file is not a skill, recorded in `notes` too.
fn invalid(
    name: Option<String>,
    reason: WarningKind,
    path: &Path,
    root: &SkillRoot,
    notes: &mut Vec<SkillWarning>,
) -> Found {
    notes.push(SkillWarning {
        path: path.to_path_buf(),
        kind: reason.clone(),
    });
    Found::Invalid(InvalidSkill {
        name,
        path: path.to_path_buf(),
        root: root.clone(),
        reason,
    })
}

/// A skill from the verdict on its frontmatter's name, description and notes (every
/// problem goes to `notes`), with its frontmatter as `stored` makes it; or why not.
fn judged(
    name: Option<&str>,
    description: Option<&str>,
    parse_notes: Vec<frontmatter::ParseNote>,
    stored: impl FnOnce() -> LazyFrontmatter,
    place: (PathBuf, PathBuf, &SkillRoot),
    notes: &mut Vec<SkillWarning>,
) -> Found {
    let (dir, path, root) = place;
    let assessment = assess::assess_fields(name, description, parse_notes);
    let status = if assessment.warnings.is_empty() {
        SkillStatus::Ok
    } else {
        SkillStatus::Warning
    };
    notes.extend(assessment.warnings.into_iter().map(|kind| SkillWarning {
        path: path.clone(),
        kind,
    }));
    match assessment.verdict {
        Verdict::Usable { name, description } => Found::Skill(Skill {
            name,
            description,
            dir,
            path,
            root: root.clone(),
            frontmatter: stored(),
            status,
            kind: super::SkillKind::Folder,
        }),
        Verdict::Invalid { reason } => {
            let name = name
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string);
            invalid(name, reason, &path, root, notes)
        }
    }
}

/// A skill from a stored outcome's summary (see [`judged`]).
fn skill_from_summary(
    summary: cache::Summary<'_>,
    stored: (Option<&Arc<Vec<u8>>>, &[u8]),
    dir: PathBuf,
    path: PathBuf,
    root: &SkillRoot,
    notes: &mut Vec<SkillWarning>,
) -> Found {
    match summary {
        cache::Summary::NoFrontmatter { reason } => invalid(
            None,
            WarningKind::BadFrontmatter {
                reason: reason.to_string(),
            },
            &path,
            root,
            notes,
        ),
        cache::Summary::Parsed {
            name,
            description,
            argument_hint,
            user_invocable,
            disable_model_invocation,
            notes: parse_notes,
        } => judged(
            name,
            description,
            parse_notes,
            || {
                let (buffer, bytes) = stored;
                let own;
                let buffer = match buffer {
                    Some(buffer) => buffer,
                    None => {
                        own = Arc::new(bytes.to_vec());
                        &own
                    }
                };
                LazyFrontmatter::encoded(
                    buffer,
                    bytes,
                    user_invocable,
                    disable_model_invocation,
                    argument_hint,
                )
            },
            (dir, path, root),
            notes,
        ),
    }
}

/// A skill from the outcome of reading its head, or why it cannot be one: the verdict
/// is [`assess::assess`]'s. Every problem goes to `notes`.
fn skill_from(
    outcome: Result<Outcome, String>,
    dir: PathBuf,
    path: PathBuf,
    root: &SkillRoot,
    notes: &mut Vec<SkillWarning>,
) -> Found {
    let (frontmatter, parse_notes) = match outcome {
        Ok(Outcome::Parsed { frontmatter, notes }) => (frontmatter, notes),
        Ok(Outcome::NoFrontmatter { reason }) => {
            return invalid(
                None,
                WarningKind::BadFrontmatter { reason },
                &path,
                root,
                notes,
            );
        }
        Err(error) => {
            return invalid(None, WarningKind::Unreadable { error }, &path, root, notes);
        }
    };
    let name = frontmatter.name.clone();
    let description = frontmatter.description.clone();
    judged(
        name.as_deref(),
        description.as_deref(),
        parse_notes,
        || LazyFrontmatter::parsed(frontmatter),
        (dir, path, root),
        notes,
    )
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
