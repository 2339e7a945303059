//! The discovery cache, `$HARNESS9_HOME/cache/skills-index`: what the last discovery
//! found, so the next one validates with one `stat` per `SKILL.md` instead of opening and
//! reading it. Per `SKILL.md` it keeps the outcome of reading the head (the parsed
//! frontmatter and its notes, or why there is no frontmatter) and per directory searched
//! its filtered, sorted list of subdirectories, each with the file's identity (device,
//! inode, size, mtime and ctime in ns). An entry is used only when a fresh `stat` gives
//! exactly that identity; anything else is read again as if there were no cache.
//!
//! Entries are grouped by the root they were found under, so projects with different
//! roots do not evict each other (the sections of roots not searched in a run are kept,
//! the [`MAX_OTHER_ROOTS`] most recently written). Entries changed within
//! [`RACY_WINDOW_NS`] of the run that saw them are never stored (a second change within
//! one timestamp tick could keep the same identity). The file is versioned (format,
//! harness9 version, and the running executable's identity, so a rebuilt parser never
//! trusts old results), checksummed, written to a temporary file and renamed into place,
//! and only when something changed. Failures to read or write it are `tracing` debug
//! lines: discovery works the same without it.
//!
//! This module owns the file, the identity check and the sections. It knows nothing of
//! precedence or the catalog; the byte format is in `codec`.

mod codec;

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::Metadata;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

pub use self::codec::{Summary, decode_outcome, decode_summary};

/// A stored outcome's bytes, as a cache record holds them (tests).
#[cfg(test)]
pub(crate) fn encode_outcome_for_tests(outcome: &Outcome) -> Vec<u8> {
    codec::encode_outcome(outcome).unwrap_or_default()
}
use self::codec::{In, KIND_DIR, KIND_FILE, Out};
use super::frontmatter::{Frontmatter, ParseNote};

/// The cache file below `$HARNESS9_HOME`.
pub const RELATIVE_PATH: [&str; 2] = ["cache", "skills-index"];
/// Entries whose mtime or ctime is this close to (or after) the start of the run that
/// saw them are not stored: 2 s covers filesystems with coarse timestamps.
pub const RACY_WINDOW_NS: i64 = 2_000_000_000;
/// Sections of roots not searched in a run that are kept (the most recently written).
pub const MAX_OTHER_ROOTS: usize = 64;

const MAGIC: &[u8; 8] = b"h9skidx\n";
/// Also bumped when the parse of a head changes (2: Claude Code's `argument-hint: [a] [b]`
/// reads as text), so no stored outcome of the old parser is used.
const FORMAT_VERSION: u32 = 2;

/// What reading a `SKILL.md` head gave (an I/O error is not an outcome: never stored).
// One short-lived value per file, nearly always `Parsed`: boxing would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Frontmatter found and parsed.
    Parsed {
        /// The fields.
        frontmatter: Frontmatter,
        /// What the parse noted.
        notes: Vec<ParseNote>,
    },
    /// No usable frontmatter block (the `HeadError` text).
    NoFrontmatter {
        /// Why.
        reason: String,
    },
}

/// What makes a file or directory the same one as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl Identity {
    /// The identity `meta` describes.
    pub fn of(meta: &Metadata) -> Identity {
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// True when the last change is old enough, against a run started at `started_ns`,
    /// for any later change to show in the identity.
    fn settled(&self, started_ns: i64) -> bool {
        self.mtime_ns.max(self.ctime_ns) < started_ns.saturating_sub(RACY_WINDOW_NS)
    }
}

/// The cache file for a harness9 home (`None` for an empty home: no cache).
pub fn path_for(harness9_home: &Path) -> Option<PathBuf> {
    if harness9_home.as_os_str().is_empty() {
        return None;
    }
    Some(
        RELATIVE_PATH
            .iter()
            .fold(harness9_home.to_path_buf(), |p, c| p.join(c)),
    )
}

/// Reads the cache file; `None` when it is missing or unreadable. Shared: the skills a
/// run takes from it keep their stored frontmatter as a part of it.
pub fn read(path: &Path) -> Option<Arc<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Some(Arc::new(bytes)),
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::debug!("skills cache {} not read: {e}", path.display());
            }
            None
        }
    }
}

/// What identifies this build: the format version, the harness9 version and the
/// running executable (path, size, mtime). `None` when the executable cannot be
/// identified: no cache then.
fn build_stamp() -> Option<&'static [u8]> {
    static STAMP: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    STAMP
        .get_or_init(|| {
            let exe = std::env::current_exe().ok()?;
            let id = Identity::of(&std::fs::metadata(&exe).ok()?);
            let mut out = Out::default();
            out.u32(FORMAT_VERSION);
            out.bytes(env!("CARGO_PKG_VERSION").as_bytes());
            out.bytes(exe.as_os_str().as_bytes());
            out.u64(id.size);
            out.i64(id.mtime_ns);
            Some(out.0)
        })
        .as_deref()
}

/// A `SKILL.md` record for [`Run::record_file`]. `None` when the outcome cannot be
/// stored.
pub fn encode_file(path: &Path, identity: Identity, outcome: &Outcome) -> Option<Vec<u8>> {
    let rest = codec::encode_outcome(outcome)?;
    Some(codec::record(KIND_FILE, path, identity, &rest))
}

/// One stored entry, borrowed from the loaded file.
struct Entry<'a> {
    identity: Identity,
    /// What follows the identity (a listing or an outcome).
    rest: &'a [u8],
    /// The whole record, copied as is when the file is written again.
    raw: &'a [u8],
    /// Its place in `Prefetch` (files only).
    slot: usize,
    used: Cell<bool>,
}

/// A hash map keyed by paths or names, with a fast hasher (local data, no need for
/// SipHash's flood resistance).
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// What a `stat` of a stored `SKILL.md` path gave.
#[derive(Debug, Clone, Copy)]
enum Stat {
    Found(Identity),
    /// NotFound or NotADirectory: `open` would say the same.
    Absent,
    /// Any other error: let `open` say what it is.
    Failed,
}

impl Stat {
    fn of(path: &[u8]) -> Stat {
        match std::fs::metadata(Path::new(OsStr::from_bytes(path))) {
            Ok(meta) => Stat::Found(Identity::of(&meta)),
            Err(e) => match e.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => Stat::Absent,
                _ => Stat::Failed,
            },
        }
    }
}

/// The `stat`s of the stored `SKILL.md` paths (by slot, in walk order): the walk takes
/// them from the first slot on, helper threads from the last slot back, until they meet.
/// Nobody waits for anybody: a slot not yet taken is `stat`ed by whoever needs it.
struct Prefetch {
    /// The cache file the paths are parts of.
    buffer: Arc<Vec<u8>>,
    /// Where each path is in `buffer`.
    ranges: Vec<(u32, u32)>,
    stats: Vec<OnceLock<Stat>>,
    /// Set when the walk is over: helpers stop.
    stop: AtomicBool,
}

impl Prefetch {
    fn new(buffer: Arc<Vec<u8>>, paths: &[&[u8]]) -> Prefetch {
        let ranges = paths
            .iter()
            .map(|p| match offset_in(&buffer, p) {
                Some(start) => (
                    start,
                    start.saturating_add(u32::try_from(p.len()).unwrap_or(u32::MAX)),
                ),
                None => (0, 0),
            })
            .collect();
        Prefetch {
            buffer,
            ranges,
            stats: (0..paths.len()).map(|_| OnceLock::new()).collect(),
            stop: AtomicBool::new(false),
        }
    }

    /// The `stat` of slot `i` (taken now if no one has yet).
    fn get(&self, i: usize) -> Stat {
        let (Some(cell), Some(&(start, end))) = (self.stats.get(i), self.ranges.get(i)) else {
            return Stat::Failed;
        };
        if let Some(stat) = cell.get() {
            return *stat;
        }
        let Some(path) = self.buffer.get(start as usize..end as usize) else {
            return Stat::Failed;
        };
        let stat = Stat::of(path);
        // Another thread may have set it meanwhile (to the same answer).
        let _ = cell.set(stat);
        cell.get().copied().unwrap_or(stat)
    }

    /// Helper `h` of `n` takes the slots from the last one back, every `n`th.
    fn run(&self, h: usize, n: usize) {
        for i in (0..self.stats.len()).rev().skip(h).step_by(n.max(1)) {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            if self.stats[i].get().is_none() {
                self.get(i);
            }
        }
    }
}

/// Where `part` starts in `buffer`, when it is a part of it (and the buffer is under
/// 4 GiB, as every cache file is).
pub fn offset_in(buffer: &[u8], part: &[u8]) -> Option<u32> {
    let start = (part.as_ptr() as usize).checked_sub(buffer.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= buffer.len())
        .then(|| u32::try_from(start).ok())
        .flatten()
        .filter(|_| u32::try_from(end).is_ok())
}

/// Helper threads `stat`ing ahead of the walk: one fewer than the CPUs (at most three),
/// none for a small cache.
fn start_helpers(prefetch: &Arc<Prefetch>) -> Vec<std::thread::JoinHandle<()>> {
    if prefetch.stats.len() < 64 {
        return Vec::new();
    }
    let n = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        - 1;
    (0..n)
        .filter_map(|h| {
            let p = Arc::clone(prefetch);
            std::thread::Builder::new()
                .name("skills-stat".to_string())
                .spawn(move || p.run(h, n))
                .ok()
        })
        .collect()
}

/// The entries found under one root.
#[derive(Default)]
struct Section<'a> {
    root: Vec<u8>,
    /// The section as loaded, copied as is when nothing in it changed.
    raw: Option<&'a [u8]>,
    /// In file order.
    entries: Vec<Entry<'a>>,
    /// Path → entry, for `SKILL.md` files and for directories.
    files: FastMap<&'a [u8], usize>,
    dirs: FastMap<&'a [u8], usize>,
    /// Distinct entries loaded.
    stored: usize,
    /// Entries validated in this run.
    used: usize,
    /// Records made in this run.
    fresh: Vec<Vec<u8>>,
}

impl Section<'_> {
    fn changed(&self) -> bool {
        !self.fresh.is_empty() || self.used != self.stored
    }
}

/// What the cache says about a `SKILL.md` path, after a `stat`.
pub enum FileProbe<'a> {
    /// Unchanged: its stored outcome (decode with [`decode_outcome`]).
    Hit(&'a [u8]),
    /// There is no such file (open would fail with NotFound or NotADirectory).
    Absent,
    /// Open and read it.
    Read,
}

/// What the cache says about a directory, after a `stat`.
pub enum DirProbe<'a> {
    /// Unchanged: its stored listing (names borrowed from the cache file).
    Hit(Vec<(Cow<'a, OsStr>, bool)>),
    /// List it; the identity is from before listing, when known and settled.
    List(Option<Identity>),
}

/// One discovery's use of the cache: lookups, and the records for the next file.
/// Dropping it (or [`Run::finish`]) stops and joins its helper threads.
pub struct Run<'a> {
    started_ns: i64,
    /// One per distinct root path, in root order.
    sections: Vec<Section<'a>>,
    /// Root index → section.
    by_root: Vec<usize>,
    /// The section of the root being walked.
    current: usize,
    /// The `stat` of every stored `SKILL.md` of these roots, by slot.
    prefetch: Arc<Prefetch>,
    helpers: Vec<std::thread::JoinHandle<()>>,
    /// Sections of other roots, kept as they are: (when written, bytes).
    others: Vec<(i64, &'a [u8])>,
}

impl<'a> Run<'a> {
    /// A run starting now over `roots` (in root order), validating against the cache
    /// file's `bytes` when they are from this build and intact. Takes the `stat` of every
    /// stored `SKILL.md` under these roots now, on up to four threads.
    pub fn new(bytes: Option<&'a Arc<Vec<u8>>>, roots: &[&Path]) -> Run<'a> {
        let started_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        let mut sections: Vec<Section<'a>> = Vec::new();
        let mut by_root = Vec::with_capacity(roots.len());
        for root in roots {
            let key = root.as_os_str().as_bytes();
            let i = match sections.iter().position(|s| s.root == key) {
                Some(i) => i,
                None => {
                    sections.push(Section {
                        root: key.to_vec(),
                        ..Section::default()
                    });
                    sections.len() - 1
                }
            };
            by_root.push(i);
        }
        let mut run = Run {
            started_ns,
            sections,
            by_root,
            current: 0,
            prefetch: Arc::new(Prefetch::new(Arc::new(Vec::new()), &[])),
            helpers: Vec::new(),
            others: Vec::new(),
        };
        if let Some(buffer) = bytes {
            let fresh: Vec<Vec<u8>> = run.sections.iter().map(|s| s.root.clone()).collect();
            match load(buffer, &fresh) {
                Some((sections, paths, others)) => {
                    run.sections = sections;
                    run.others = others;
                    run.prefetch = Arc::new(Prefetch::new(Arc::clone(buffer), &paths));
                    run.helpers = start_helpers(&run.prefetch);
                }
                None => tracing::debug!("skills cache from another build, or damaged; ignored"),
            }
        }
        run
    }

    /// How many `SKILL.md` entries the cache holds for these roots.
    pub fn stored_files(&self) -> usize {
        self.prefetch.stats.len()
    }

    /// The walk moves to the root with this index.
    pub fn enter_root(&mut self, root_index: usize) {
        self.current = self.by_root.get(root_index).copied().unwrap_or(0);
    }

    /// Validates a `SKILL.md` path (under the current root) with its `stat`, taken when
    /// the run started (following links, as `open` does).
    pub fn probe_file(&mut self, path: &Path) -> FileProbe<'a> {
        let Some(Section {
            entries,
            files,
            used,
            ..
        }) = self.sections.get_mut(self.current)
        else {
            return FileProbe::Read;
        };
        let Some(entry) = files
            .get(path.as_os_str().as_bytes())
            .and_then(|&i| entries.get(i))
        else {
            return FileProbe::Read;
        };
        match self.prefetch.get(entry.slot) {
            Stat::Found(now) if now == entry.identity => {
                if !entry.used.replace(true) {
                    *used += 1;
                }
                FileProbe::Hit(entry.rest)
            }
            Stat::Absent => FileProbe::Absent,
            _ => FileProbe::Read,
        }
    }

    /// Validates a directory (under the current root) with one `stat`. A miss's
    /// identity is from that `stat`, taken before the directory is listed.
    pub fn probe_dir(&mut self, dir: &Path) -> DirProbe<'a> {
        let meta = std::fs::metadata(dir).ok();
        let started_ns = self.started_ns;
        if let (
            Some(Section {
                entries,
                dirs,
                used,
                ..
            }),
            Some(meta),
        ) = (self.sections.get_mut(self.current), &meta)
            && let Some(entry) = dirs
                .get(dir.as_os_str().as_bytes())
                .and_then(|&i| entries.get(i))
            && entry.identity == Identity::of(meta)
            && let Some(listing) = codec::decode_listing(entry.rest)
        {
            if !entry.used.replace(true) {
                *used += 1;
            }
            return DirProbe::Hit(listing);
        }
        DirProbe::List(
            meta.map(|m| Identity::of(&m))
                .filter(|id| id.settled(started_ns)),
        )
    }

    /// The identity `meta` gives, when settled enough to store.
    pub fn settled(&self, meta: &Metadata) -> Option<Identity> {
        let id = Identity::of(meta);
        id.settled(self.started_ns).then_some(id)
    }

    /// Stores a directory (under the current root) just listed.
    pub fn record_dir(
        &mut self,
        dir: &Path,
        identity: Identity,
        listing: &[(Cow<'_, OsStr>, bool)],
    ) {
        let rest = codec::encode_listing(listing);
        if let Some(s) = self.sections.get_mut(self.current) {
            s.fresh.push(codec::record(KIND_DIR, dir, identity, &rest));
        }
    }

    /// Stores a file record made by [`encode_file`] for a file found under the root with
    /// this index.
    pub fn record_file(&mut self, root_index: usize, record: Vec<u8>) {
        let section = self.by_root.get(root_index).copied();
        if let Some(s) = section.and_then(|i| self.sections.get_mut(i)) {
            s.fresh.push(record);
        }
    }

    /// True when the file on disk no longer describes what this run saw.
    pub fn changed(&self) -> bool {
        self.sections.iter().any(Section::changed)
    }

    /// Writes the cache file when something changed: to a temporary file beside it,
    /// then renamed into place (concurrent runs: the last rename wins, never a mix).
    /// Failures are debug log lines.
    pub fn finish(mut self, path: &Path) {
        self.stop_helpers();
        if !self.changed() {
            return;
        }
        if let Err(e) = self.write(path) {
            tracing::debug!("skills cache {} not written: {e}", path.display());
        }
    }

    fn stop_helpers(&mut self) {
        self.prefetch.stop.store(true, Ordering::Relaxed);
        for h in self.helpers.drain(..) {
            let _ = h.join();
        }
    }

    fn write(mut self, path: &Path) -> std::io::Result<()> {
        let stamp = build_stamp().ok_or_else(|| std::io::Error::other("no build stamp"))?;
        let mut body = Vec::new();
        for s in &self.sections {
            match s.raw {
                Some(raw) if !s.changed() => body.extend_from_slice(raw),
                _ => {
                    let mut records = Vec::new();
                    for e in &s.entries {
                        if e.used.get() {
                            records.extend_from_slice(e.raw);
                        }
                    }
                    for r in &s.fresh {
                        records.extend_from_slice(r);
                    }
                    if !records.is_empty() {
                        let mut out = Out(body);
                        out.bytes(&s.root);
                        out.i64(self.started_ns);
                        out.bytes(&records);
                        body = out.0;
                    }
                }
            }
        }
        self.others
            .sort_by_key(|(written, _)| std::cmp::Reverse(*written));
        for (_, raw) in self.others.iter().take(MAX_OTHER_ROOTS) {
            body.extend_from_slice(raw);
        }
        let mut out = Out(Vec::with_capacity(body.len() + 128));
        out.0.extend_from_slice(MAGIC);
        out.bytes(stamp);
        out.u64(body.len() as u64);
        out.u64(codec::checksum(&body));
        out.0.extend_from_slice(&body);
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        // Unique per process and per write, so concurrent writers never share one.
        static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(
            ".skills-index.{}.{n}.{}.tmp",
            std::process::id(),
            self.started_ns
        ));
        let written = std::fs::write(&tmp, &out.0).and_then(|()| std::fs::rename(&tmp, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// What a cache file holds for the sections of `roots` (same order), the `SKILL.md`
/// paths they store (by slot) and the other sections. `None` when the file is from
/// another format, version or build, or damaged.
#[allow(clippy::type_complexity)]
fn load<'a>(
    bytes: &'a [u8],
    roots: &[Vec<u8>],
) -> Option<(Vec<Section<'a>>, Vec<&'a [u8]>, Vec<(i64, &'a [u8])>)> {
    let stamp = build_stamp()?;
    let mut r = In { b: bytes };
    if r.take(MAGIC.len())? != MAGIC || r.bytes()? != stamp {
        return None;
    }
    let len = usize::try_from(r.u64()?).ok()?;
    let sum = r.u64()?;
    let body = r.take(len)?;
    if !r.b.is_empty() || codec::checksum(body) != sum {
        return None;
    }
    let mut sections: Vec<Section<'a>> = roots
        .iter()
        .map(|root| Section {
            root: root.clone(),
            ..Section::default()
        })
        .collect();
    let mut paths = Vec::new();
    let mut others = Vec::new();
    let mut r = In { b: body };
    while !r.b.is_empty() {
        let start = r.b;
        let root = r.bytes()?;
        let written = r.i64()?;
        let records = r.bytes()?;
        let raw = &start[..start.len() - r.b.len()];
        match sections.iter_mut().find(|s| s.root == root) {
            Some(s) if s.raw.is_none() => {
                s.raw = Some(raw);
                load_records(s, records, &mut paths)?;
            }
            Some(_) => return None,
            None => others.push((written, raw)),
        }
    }
    Some((sections, paths, others))
}

fn load_records<'a>(
    s: &mut Section<'a>,
    records: &'a [u8],
    paths: &mut Vec<&'a [u8]>,
) -> Option<()> {
    // Room for every record at once, rather than tables doubling on the way.
    let mut count = In { b: records };
    let mut n = 0usize;
    while !count.b.is_empty() {
        count.u8()?;
        count.bytes()?;
        n += 1;
    }
    s.entries.reserve(n);
    s.files.reserve(n);
    paths.reserve(n);
    let mut r = In { b: records };
    while !r.b.is_empty() {
        let start = r.b;
        let kind = r.u8()?;
        let payload = r.bytes()?;
        let raw = &start[..start.len() - r.b.len()];
        let mut p = In { b: payload };
        let path = p.bytes()?;
        let identity = p.identity()?;
        let index = s.entries.len();
        let slot = match kind {
            KIND_DIR => {
                s.dirs.insert(path, index);
                0
            }
            KIND_FILE => {
                s.files.insert(path, index);
                paths.push(path);
                paths.len() - 1
            }
            _ => return None,
        };
        s.entries.push(Entry {
            identity,
            rest: p.b,
            raw,
            slot,
            used: Cell::new(false),
        });
    }
    s.stored = s.files.len() + s.dirs.len();
    Some(())
}

impl Drop for Run<'_> {
    fn drop(&mut self) {
        self.stop_helpers();
    }
}

/// A multiply-rotate hasher taking eight bytes at a time, for [`FastMap`].
#[derive(Default)]
pub struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        // Spread the last multiply's high bits down as well.
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.add(u64::from_le_bytes(a));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut a = [0u8; 8];
            a[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(a) ^ ((rest.len() as u64) << 59));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}
