//! The byte format of the discovery cache: little-endian integers and length-prefixed
//! byte strings, written by [`Out`] and read back by [`In`] with every read
//! bounds-checked. It encodes a directory's listing and the outcome of reading a
//! `SKILL.md` head (frontmatter fields by name, JSON text for the free-form values), and
//! the body checksum. It knows nothing of files, identities' meaning or validation.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::Value;

use super::{Identity, Outcome};
use crate::skills::frontmatter::{EXPECTED, Frontmatter, ParseNote};

/// A directory record.
pub const KIND_DIR: u8 = 1;
/// A `SKILL.md` record.
pub const KIND_FILE: u8 = 2;

/// A record: kind, then (length-prefixed) the path, the identity and `rest`.
pub fn record(kind: u8, path: &Path, identity: Identity, rest: &[u8]) -> Vec<u8> {
    let mut payload = Out::default();
    payload.bytes(path.as_os_str().as_bytes());
    payload.identity(identity);
    payload.0.extend_from_slice(rest);
    let mut out = Out(Vec::with_capacity(payload.0.len() + 5));
    out.u8(kind);
    out.bytes(&payload.0);
    out.0
}

/// What follows a directory record's identity: its listing.
pub fn encode_listing(listing: &[(Cow<'_, OsStr>, bool)]) -> Vec<u8> {
    let mut rest = Out::default();
    rest.u32(u32::try_from(listing.len()).unwrap_or(u32::MAX));
    for (name, is_link) in listing {
        rest.bytes(name.as_bytes());
        rest.u8(u8::from(*is_link));
    }
    rest.0
}

/// What follows a file record's identity: the outcome. `None` when it cannot be stored.
pub fn encode_outcome(outcome: &Outcome) -> Option<Vec<u8>> {
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
    Some(out.0)
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
            let notes = decode_notes(&mut r)?;
            Outcome::Parsed { frontmatter, notes }
        }
        _ => return None,
    };
    r.b.is_empty().then_some(outcome)
}

fn decode_frontmatter(r: &mut In<'_>) -> Option<Frontmatter> {
    // Fields are read in the order `encode_frontmatter` wrote them: a struct literal's
    // fields are evaluated as written, so this literal's order is the format.
    Some(Frontmatter {
        name: r.opt_string()?,
        description: r.opt_string()?,
        trigger: r.opt_string()?,
        when_to_use: r.opt_string()?,
        argument_hint: r.opt_string()?,
        context: r.opt_string()?,
        license: r.opt_string()?,
        compatibility: r.opt_string()?,
        allowed_tools: {
            let n = r.u32()?;
            let mut tools = Vec::with_capacity(n.min(64) as usize);
            for _ in 0..n {
                tools.push(r.string()?);
            }
            tools
        },
        user_invocable: r.u8()? != 0,
        disable_model_invocation: r.u8()? != 0,
        metadata: match r.opt_string()? {
            Some(json) => Some(serde_json::from_str(&json).ok()?),
            None => None,
        },
        extra: {
            let mut extra = std::collections::BTreeMap::new();
            for _ in 0..r.u32()? {
                let key = r.string()?;
                let value: Value =
                    serde_json::from_str(std::str::from_utf8(r.bytes()?).ok()?).ok()?;
                extra.insert(key, value);
            }
            extra
        },
    })
}

/// What the catalog reads of a stored outcome at start-up: the fields that decide the
/// verdict and what every listing shows, borrowed from the bytes; the rest of the
/// frontmatter is checked but not built (`decode_outcome` builds it when a skill is
/// used). `None` exactly when [`decode_outcome`] gives `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Summary<'a> {
    /// [`Outcome::NoFrontmatter`].
    NoFrontmatter {
        /// Why.
        reason: &'a str,
    },
    /// [`Outcome::Parsed`], in part.
    Parsed {
        /// `name`.
        name: Option<&'a str>,
        /// `description`.
        description: Option<&'a str>,
        /// `argument-hint`.
        argument_hint: Option<&'a str>,
        /// `user-invocable`.
        user_invocable: bool,
        /// `disable-model-invocation`.
        disable_model_invocation: bool,
        /// The parser's notes.
        notes: Vec<ParseNote>,
    },
}

/// The [`Summary`] of a stored outcome (see there).
pub fn decode_summary(rest: &[u8]) -> Option<Summary<'_>> {
    let mut r = In { b: rest };
    let summary = match r.u8()? {
        0 => Summary::NoFrontmatter { reason: r.str()? },
        1 => {
            // The order `encode_frontmatter` wrote.
            let name = r.opt_str()?;
            let description = r.opt_str()?;
            for _ in 0..2 {
                r.opt_str()?; // trigger, when_to_use
            }
            let argument_hint = r.opt_str()?;
            for _ in 0..3 {
                r.opt_str()?; // context, license, compatibility
            }
            for _ in 0..r.u32()? {
                r.str()?; // allowed_tools
            }
            let user_invocable = r.u8()? != 0;
            let disable_model_invocation = r.u8()? != 0;
            if let Some(json) = r.opt_str()? {
                json_checked(json)?;
            }
            for _ in 0..r.u32()? {
                r.str()?;
                json_checked(std::str::from_utf8(r.bytes()?).ok()?)?;
            }
            let notes = decode_notes(&mut r)?;
            Summary::Parsed {
                name,
                description,
                argument_hint,
                user_invocable,
                disable_model_invocation,
                notes,
            }
        }
        _ => return None,
    };
    r.b.is_empty().then_some(summary)
}

/// The parse notes of a stored outcome (both decoders read them the same way).
fn decode_notes(r: &mut In<'_>) -> Option<Vec<ParseNote>> {
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
    Some(notes)
}

/// Whether `json` is what `decode_frontmatter` would read as a value (without building
/// it).
fn json_checked(json: &str) -> Option<()> {
    serde_json::from_str::<serde::de::IgnoredAny>(json)
        .ok()
        .map(|_| ())
}

/// A directory record's listing. `None` when it does not decode.
pub fn decode_listing(rest: &[u8]) -> Option<Vec<(Cow<'_, OsStr>, bool)>> {
    let mut r = In { b: rest };
    let n = r.u32()?;
    let mut out = Vec::with_capacity(n.min(4096) as usize);
    for _ in 0..n {
        let name = Cow::Borrowed(OsStr::from_bytes(r.bytes()?));
        out.push((name, r.u8()? != 0));
    }
    r.b.is_empty().then_some(out)
}

/// Little-endian, length-prefixed output.
#[derive(Default)]
pub struct Out(pub Vec<u8>);

impl Out {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.u32(u32::try_from(b.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(b);
    }
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    pub fn identity(&mut self, id: Identity) {
        self.u64(id.dev);
        self.u64(id.ino);
        self.u64(id.size);
        self.i64(id.mtime_ns);
        self.i64(id.ctime_ns);
    }
}

/// Reads what [`Out`] wrote; every read is bounds-checked.
pub struct In<'a> {
    /// What is left to read.
    pub b: &'a [u8],
}

impl<'a> In<'a> {
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.b.len() {
            return None;
        }
        let (head, tail) = self.b.split_at(n);
        self.b = tail;
        Some(head)
    }
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Some(a)
    }
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    pub fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.array()?))
    }
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
    /// [`In::opt_string`], borrowed.
    pub fn opt_str(&mut self) -> Option<Option<&'a str>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.str()?)),
            _ => None,
        }
    }
    /// `Some(None)` for an absent string, `None` when the input is bad.
    pub fn opt_string(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.string()?)),
            _ => None,
        }
    }
    pub fn identity(&mut self) -> Option<Identity> {
        Some(Identity {
            dev: self.u64()?,
            ino: self.u64()?,
            size: self.u64()?,
            mtime_ns: self.i64()?,
            ctime_ns: self.i64()?,
        })
    }
}

/// A word-at-a-time checksum of the body: catches a damaged file, not an attacker.
pub fn checksum(bytes: &[u8]) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter::parse;

    fn round_trip(outcome: &Outcome) {
        let bytes = encode_outcome(outcome).unwrap();
        assert_eq!(decode_outcome(&bytes).as_ref(), Some(outcome));
        assert_eq!(decode_summary(&bytes), Some(summary_of(outcome)));
        // Any truncation is refused, never misread.
        for n in 0..bytes.len() {
            assert_eq!(decode_outcome(&bytes[..n]), None, "truncated at {n}");
            assert_eq!(decode_summary(&bytes[..n]), None, "truncated at {n}");
        }
    }

    /// The summary `decode_summary` must give for `outcome`.
    fn summary_of(outcome: &Outcome) -> Summary<'_> {
        match outcome {
            Outcome::NoFrontmatter { reason } => Summary::NoFrontmatter { reason },
            Outcome::Parsed { frontmatter, notes } => Summary::Parsed {
                name: frontmatter.name.as_deref(),
                description: frontmatter.description.as_deref(),
                argument_hint: frontmatter.argument_hint.as_deref(),
                user_invocable: frontmatter.user_invocable,
                disable_model_invocation: frontmatter.disable_model_invocation,
                notes: notes.clone(),
            },
        }
    }

    #[test]
    fn the_summary_refuses_what_the_full_decoding_refuses() {
        let (frontmatter, notes) = parse("name: j\ndescription: d\nmetadata: {a: 1}\nx: [1]\n");
        let good = encode_outcome(&Outcome::Parsed { frontmatter, notes }).unwrap();
        // Every single-byte change: both decoders accept it or both refuse it.
        for i in 0..good.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                assert_eq!(
                    decode_outcome(&bad).is_some(),
                    decode_summary(&bad).is_some(),
                    "byte {i} ^ {flip:#x}"
                );
            }
        }
    }

    #[test]
    fn every_frontmatter_field_and_note_survives_the_round_trip() {
        let yaml = "name: full\ndescription: |\n  Two\n  lines\ntrigger: t\nwhen_to_use: w\n\
                    allowed-tools: [Read, \"Bash(git diff:*)\"]\nuser-invocable: false\n\
                    disable-model-invocation: true\nargument-hint: [file]\ncontext: fork\n\
                    license: MIT\ncompatibility: c\nmetadata: {a: 1, b: [x, 2.5], c: null}\n\
                    custom: {deep: [true, -3]}\nversion: 1.0\nuser_invocable: maybe\n";
        let (frontmatter, notes) = parse(yaml);
        assert!(!frontmatter.extra.is_empty() && frontmatter.metadata.is_some());
        assert!(!notes.is_empty(), "a BadField note is part of the test");
        round_trip(&Outcome::Parsed { frontmatter, notes });
        let (frontmatter, notes) = parse("name: x\ndescription: Use when: y\n");
        assert!(matches!(notes[0], ParseNote::Fallback { .. }));
        round_trip(&Outcome::Parsed { frontmatter, notes });
        round_trip(&Outcome::NoFrontmatter {
            reason: "no closing `---`".to_string(),
        });
    }

    #[test]
    fn listings_round_trip() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let listing: Vec<(Cow<'_, OsStr>, bool)> = vec![
            (Cow::Owned(OsString::from("a")), false),
            (Cow::Owned(OsString::from_vec(vec![0xff, b'x'])), true),
        ];
        assert_eq!(decode_listing(&encode_listing(&listing)), Some(listing));
        assert_eq!(decode_listing(&[1, 0, 0]), None);
    }

    #[test]
    fn the_checksum_sees_any_single_byte_change() {
        let data: Vec<u8> = (0..100u8).collect();
        let sum = checksum(&data);
        for i in 0..data.len() {
            let mut d = data.clone();
            d[i] ^= 1;
            assert_ne!(checksum(&d), sum, "byte {i}");
        }
        assert_ne!(checksum(&data[..99]), sum);
    }
}
