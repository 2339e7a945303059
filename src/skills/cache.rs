//! The discovery cache, `$HARNESS9_HOME/cache/skills-index`: what the last discovery
//! found, so the next one validates with one `stat` per `SKILL.md` instead of opening and
//! reading it. Per `SKILL.md` it keeps the outcome of reading the head (the parsed
//! frontmatter and its notes, or why there is no frontmatter) and per directory searched
//! its filtered, sorted list of subdirectories, each with the file's identity (device,
//! inode, size, mtime and ctime in ns). An entry is used only when a fresh `stat` gives
//! exactly that identity; anything else is read again as if there were no cache.
//!
//! Entries changed within [`RACY_WINDOW_NS`] of the run that saw them are never stored
//! (a second change within one timestamp tick could keep the same identity). The file is
//! versioned (format, harness9 version, and the running executable's identity, so a
//! rebuilt parser never trusts old results), checksummed, written to a temporary file
//! and renamed into place, and only when something changed. Failures to read or write it
//! are `tracing` debug lines: discovery works the same without it.
//!
//! This module owns the format and the identity check. It knows nothing of roots,
//! precedence or the catalog.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::frontmatter::{EXPECTED, Frontmatter, ParseNote};

/// The cache file below `$HARNESS9_HOME`.
pub const RELATIVE_PATH: [&str; 2] = ["cache", "skills-index"];
/// Entries whose mtime or ctime is this close to (or after) the start of the run that
/// saw them are not stored: 2 s covers filesystems with coarse timestamps.
pub const RACY_WINDOW_NS: i64 = 2_000_000_000;

const MAGIC: &[u8; 8] = b"h9skidx\n";
const FORMAT_VERSION: u32 = 1;
const KIND_DIR: u8 = 1;
const KIND_FILE: u8 = 2;

/// What reading a `SKILL.md` head gave (an I/O error is not an outcome: never stored).
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

/// Reads the cache file; `None` when it is missing or unreadable.
pub fn read(path: &Path) -> Option<Vec<u8>> {
    match std::fs::read(path) {
        Ok(bytes) => Some(bytes),
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

/// One stored entry, borrowed from the loaded file.
struct Entry<'a> {
    identity: Identity,
    /// What follows the identity (a listing or an outcome).
    rest: &'a [u8],
    /// The whole record, copied as is when the file is written again.
    raw: &'a [u8],
    used: Cell<bool>,
}

type FastMap<'a> = HashMap<&'a [u8], Entry<'a>, BuildHasherDefault<Fnv>>;

/// The entries of a loaded cache file.
pub struct Index<'a> {
    files: FastMap<'a>,
    dirs: FastMap<'a>,
}

impl<'a> Index<'a> {
    /// Reads the entries of a cache file. `None` when it is from another format, version
    /// or build, or damaged.
    pub fn parse(bytes: &'a [u8]) -> Option<Index<'a>> {
        let stamp = build_stamp()?;
        let mut r = In { b: bytes };
        if r.take(MAGIC.len())? != MAGIC || r.bytes()? != stamp {
            return None;
        }
        let len = usize::try_from(r.u64()?).ok()?;
        let sum = r.u64()?;
        let body = r.take(len)?;
        if !r.b.is_empty() || checksum(body) != sum {
            tracing::debug!("skills cache damaged; ignored");
            return None;
        }
        let mut index = Index {
            files: FastMap::default(),
            dirs: FastMap::default(),
        };
        let mut r = In { b: body };
        while !r.b.is_empty() {
            let start = r.b;
            let kind = r.u8()?;
            let payload = r.bytes()?;
            let raw = &start[..start.len() - r.b.len()];
            let mut p = In { b: payload };
            let path = p.bytes()?;
            let identity = p.identity()?;
            let entry = Entry {
                identity,
                rest: p.b,
                raw,
                used: Cell::new(false),
            };
            match kind {
                KIND_DIR => index.dirs.insert(path, entry),
                KIND_FILE => index.files.insert(path, entry),
                _ => return None,
            };
        }
        Some(index)
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
pub enum DirProbe {
    /// Unchanged: its stored listing.
    Hit(Vec<(OsString, bool)>),
    /// List it; the identity is from before listing, when known and settled.
    List(Option<Identity>),
}

/// One discovery's use of the cache: lookups, and the entries for the next file.
pub struct Run<'a> {
    old: Option<Index<'a>>,
    started_ns: i64,
    used: usize,
    fresh: Vec<Vec<u8>>,
}

impl<'a> Run<'a> {
    /// A run starting now, validating against `old` (if any).
    pub fn new(old: Option<Index<'a>>) -> Run<'a> {
        let started_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Run {
            old,
            started_ns,
            used: 0,
            fresh: Vec::new(),
        }
    }

    fn lookup(&mut self, dirs: bool, path: &Path) -> Option<(Identity, &'a [u8])> {
        let old = self.old.as_ref()?;
        let map = if dirs { &old.dirs } else { &old.files };
        let entry = map.get(path.as_os_str().as_bytes())?;
        Some((entry.identity, entry.rest))
    }

    fn mark_used(&mut self, dirs: bool, path: &Path) {
        let Some(old) = self.old.as_ref() else { return };
        let map = if dirs { &old.dirs } else { &old.files };
        if let Some(entry) = map.get(path.as_os_str().as_bytes())
            && !entry.used.replace(true)
        {
            self.used += 1;
        }
    }

    /// Validates a `SKILL.md` path with one `stat` (following links, as `open` does).
    pub fn probe_file(&mut self, path: &Path) -> FileProbe<'a> {
        let Some((identity, rest)) = self.lookup(false, path) else {
            return FileProbe::Read;
        };
        match std::fs::metadata(path) {
            Ok(meta) if Identity::of(&meta) == identity => {
                self.mark_used(false, path);
                FileProbe::Hit(rest)
            }
            Ok(_) => FileProbe::Read,
            Err(e) => match e.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
                    FileProbe::Absent
                }
                _ => FileProbe::Read,
            },
        }
    }

    /// Validates a directory with one `stat`. A miss `stat`s it before it is listed.
    pub fn probe_dir(&mut self, dir: &Path) -> DirProbe {
        let meta = std::fs::metadata(dir).ok();
        let now = meta.as_ref().map(Identity::of);
        if let (Some((identity, rest)), Some(now)) = (self.lookup(true, dir), now)
            && identity == now
            && let Some(listing) = decode_listing(rest)
        {
            self.mark_used(true, dir);
            return DirProbe::Hit(listing);
        }
        DirProbe::List(meta.as_ref().and_then(|m| self.settled(m)))
    }

    /// The identity `meta` gives, when settled enough to store.
    pub fn settled(&self, meta: &Metadata) -> Option<Identity> {
        let id = Identity::of(meta);
        id.settled(self.started_ns).then_some(id)
    }

    /// Stores a directory just listed.
    pub fn record_dir(&mut self, dir: &Path, identity: Identity, listing: &[(OsString, bool)]) {
        let mut rest = Out::default();
        rest.u32(u32::try_from(listing.len()).unwrap_or(u32::MAX));
        for (name, is_link) in listing {
            rest.bytes(name.as_bytes());
            rest.u8(u8::from(*is_link));
        }
        self.fresh.push(record(KIND_DIR, dir, identity, &rest.0));
    }

    /// Stores a file record made by [`encode_file`].
    pub fn record_file(&mut self, record: Vec<u8>) {
        self.fresh.push(record);
    }

    /// True when the file on disk no longer describes what this run saw.
    pub fn changed(&self) -> bool {
        let stored = self
            .old
            .as_ref()
            .map_or(0, |o| o.files.len() + o.dirs.len());
        !self.fresh.is_empty() || self.used != stored
    }

    /// Writes the cache file when something changed: to a temporary file beside it,
    /// then renamed into place (concurrent runs: the last rename wins, never a mix).
    /// Failures are debug log lines.
    pub fn finish(self, path: &Path) {
        if !self.changed() {
            return;
        }
        if let Err(e) = self.write(path) {
            tracing::debug!("skills cache {} not written: {e}", path.display());
        }
    }

    fn write(&self, path: &Path) -> std::io::Result<()> {
        let stamp = build_stamp().ok_or_else(|| std::io::Error::other("no build stamp"))?;
        let mut body = Vec::new();
        if let Some(old) = &self.old {
            for e in old.files.values().chain(old.dirs.values()) {
                if e.used.get() {
                    body.extend_from_slice(e.raw);
                }
            }
        }
        for r in &self.fresh {
            body.extend_from_slice(r);
        }
        let mut out = Out(Vec::with_capacity(body.len() + 128));
        out.0.extend_from_slice(MAGIC);
        out.bytes(stamp);
        out.u64(body.len() as u64);
        out.u64(checksum(&body));
        out.0.extend_from_slice(&body);
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".skills-index.{}.{}.tmp",
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

fn record(kind: u8, path: &Path, identity: Identity, rest: &[u8]) -> Vec<u8> {
    let mut payload = Out::default();
    payload.bytes(path.as_os_str().as_bytes());
    payload.identity(identity);
    payload.0.extend_from_slice(rest);
    let mut out = Out(Vec::with_capacity(payload.0.len() + 5));
    out.u8(kind);
    out.bytes(&payload.0);
    out.0
}

/// A file record for [`Run::record_file`]. `None` when the outcome cannot be stored.
pub fn encode_file(path: &Path, identity: Identity, outcome: &Outcome) -> Option<Vec<u8>> {
    let mut out = Out::default();
    match outcome {
        Outcome::NoFrontmatter { reason } => {
            out.u8(0);
            out.str(reason);
        }
        Outcome::Parsed { frontmatter, notes } => {
            out.u8(1);
            encode_frontmatter(&mut out, frontmatter);
            out.u32(u32::try_from(notes.len()).ok()?);
            for note in notes {
                match note {
                    ParseNote::Fallback { error, field } => {
                        out.u8(0);
                        out.str(error);
                        out.opt_str(field.as_deref());
                    }
                    ParseNote::BadField { field, expected } => {
                        out.u8(1);
                        out.str(field);
                        let i = EXPECTED.iter().position(|e| e == expected)?;
                        out.u8(u8::try_from(i).ok()?);
                    }
                }
            }
        }
    }
    Some(record(KIND_FILE, path, identity, &out.0))
}

fn encode_frontmatter(out: &mut Out, fm: &Frontmatter) {
    // Every field by name: a field added to Frontmatter must be added here too.
    let Frontmatter {
        name,
        description,
        trigger,
        when_to_use,
        allowed_tools,
        user_invocable,
        disable_model_invocation,
        argument_hint,
        context,
        license,
        compatibility,
        metadata,
        extra,
    } = fm;
    for s in [
        name,
        description,
        trigger,
        when_to_use,
        argument_hint,
        context,
        license,
        compatibility,
    ] {
        out.opt_str(s.as_deref());
    }
    out.u32(u32::try_from(allowed_tools.len()).unwrap_or(u32::MAX));
    for t in allowed_tools {
        out.str(t);
    }
    out.u8(u8::from(*user_invocable));
    out.u8(u8::from(*disable_model_invocation));
    out.opt_str(metadata.as_ref().map(Value::to_string).as_deref());
    out.u32(u32::try_from(extra.len()).unwrap_or(u32::MAX));
    for (k, v) in extra {
        out.str(k);
        out.str(&v.to_string());
    }
}

/// The outcome stored in a file entry. `None` when it does not decode.
pub fn decode_outcome(rest: &[u8]) -> Option<Outcome> {
    let mut r = In { b: rest };
    let outcome = match r.u8()? {
        0 => Outcome::NoFrontmatter {
            reason: r.string()?,
        },
        1 => {
            let frontmatter = decode_frontmatter(&mut r)?;
            let n = r.u32()?;
            let mut notes = Vec::with_capacity(n.min(64) as usize);
            for _ in 0..n {
                notes.push(match r.u8()? {
                    0 => ParseNote::Fallback {
                        error: r.string()?,
                        field: r.opt_string()?,
                    },
                    1 => ParseNote::BadField {
                        field: r.string()?,
                        expected: EXPECTED.get(usize::from(r.u8()?))?,
                    },
                    _ => return None,
                });
            }
            Outcome::Parsed { frontmatter, notes }
        }
        _ => return None,
    };
    r.b.is_empty().then_some(outcome)
}

fn decode_frontmatter(r: &mut In<'_>) -> Option<Frontmatter> {
    let name = r.opt_string()?;
    let description = r.opt_string()?;
    let trigger = r.opt_string()?;
    let when_to_use = r.opt_string()?;
    let argument_hint = r.opt_string()?;
    let context = r.opt_string()?;
    let license = r.opt_string()?;
    let compatibility = r.opt_string()?;
    let n = r.u32()?;
    let mut allowed_tools = Vec::with_capacity(n.min(64) as usize);
    for _ in 0..n {
        allowed_tools.push(r.string()?);
    }
    let user_invocable = r.u8()? != 0;
    let disable_model_invocation = r.u8()? != 0;
    let metadata = match r.opt_string()? {
        Some(json) => Some(serde_json::from_str(&json).ok()?),
        None => None,
    };
    let mut extra = std::collections::BTreeMap::new();
    for _ in 0..r.u32()? {
        let key = r.string()?;
        let value: Value = serde_json::from_str(std::str::from_utf8(r.bytes()?).ok()?).ok()?;
        extra.insert(key, value);
    }
    Some(Frontmatter {
        name,
        description,
        trigger,
        when_to_use,
        allowed_tools,
        user_invocable,
        disable_model_invocation,
        argument_hint,
        context,
        license,
        compatibility,
        metadata,
        extra,
    })
}

fn decode_listing(rest: &[u8]) -> Option<Vec<(OsString, bool)>> {
    let mut r = In { b: rest };
    let n = r.u32()?;
    let mut out = Vec::with_capacity(n.min(4096) as usize);
    for _ in 0..n {
        let name = OsString::from_vec(r.bytes()?.to_vec());
        out.push((name, r.u8()? != 0));
    }
    r.b.is_empty().then_some(out)
}

/// Little-endian, length-prefixed output.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(u32::try_from(b.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    fn identity(&mut self, id: Identity) {
        self.u64(id.dev);
        self.u64(id.ino);
        self.u64(id.size);
        self.i64(id.mtime_ns);
        self.i64(id.ctime_ns);
    }
}

/// Reads what [`Out`] wrote; every read is bounds-checked.
struct In<'a> {
    b: &'a [u8],
}

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.b.len() {
            return None;
        }
        let (head, tail) = self.b.split_at(n);
        self.b = tail;
        Some(head)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.array()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    /// `Some(None)` for an absent string, `None` when the input is bad.
    fn opt_string(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.string()?)),
            _ => None,
        }
    }
    fn identity(&mut self) -> Option<Identity> {
        Some(Identity {
            dev: self.u64()?,
            ino: self.u64()?,
            size: self.u64()?,
            mtime_ns: self.i64()?,
            ctime_ns: self.i64()?,
        })
    }
}

/// FNV-1a: hashes the paths that key the entries (local data, no need for SipHash).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A word-at-a-time checksum of the body: catches a damaged file, not an attacker.
fn checksum(bytes: &[u8]) -> u64 {
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(0xff51_afd7_ed55_8ccd).rotate_left(31);
    let mut h = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        h = mix(h, u64::from_le_bytes(a));
    }
    let mut a = [0u8; 8];
    a[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    mix(h, u64::from_le_bytes(a))
}
