//! A skill's frontmatter as the catalog keeps it ([`LazyFrontmatter`]): parsed (a file
//! read in this run), or the discovery cache's stored bytes, decoded the first time a
//! field is read. Start-up reads of every skill only its name and description (in
//! [`super::Skill`]) and the three fields every listing needs, kept apart; so 10,000
//! skills from a warm cache are not 10,000 frontmatters built and mostly never looked
//! at. It reads as a [`Frontmatter`] (`Deref`), the same value either way.
//!
//! It knows the cache's byte format only through `cache::decode_outcome`; nothing of
//! discovery or precedence.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use super::cache::{self, Outcome};
use super::frontmatter::Frontmatter;

/// A frontmatter, parsed or decoded on first use.
#[derive(Clone)]
pub struct LazyFrontmatter {
    stored: Stored,
    decoded: OnceLock<Box<Frontmatter>>,
    /// `user-invocable`, read without decoding.
    user_invocable: bool,
    /// `disable-model-invocation`, likewise.
    disable_model_invocation: bool,
    /// `argument-hint`, likewise.
    argument_hint: Option<Box<str>>,
}

#[derive(Clone)]
enum Stored {
    Parsed(Box<Frontmatter>),
    /// An `Outcome::Parsed` as the cache stores it, `buffer[start..end]` (the cache file
    /// read at start-up, shared by every skill taken from it): bytes that decoded (as a
    /// summary, which checks everything the whole decoding reads) when the catalog was
    /// built.
    Encoded {
        buffer: Arc<Vec<u8>>,
        start: u32,
        end: u32,
    },
}

impl LazyFrontmatter {
    /// A frontmatter parsed in this run.
    pub fn parsed(frontmatter: Frontmatter) -> Self {
        LazyFrontmatter {
            user_invocable: frontmatter.user_invocable,
            disable_model_invocation: frontmatter.disable_model_invocation,
            argument_hint: frontmatter.argument_hint.as_deref().map(Box::from),
            stored: Stored::Parsed(Box::new(frontmatter)),
            decoded: OnceLock::new(),
        }
    }

    /// A frontmatter stored as `bytes` (a cached outcome, a part of `buffer`, which is
    /// kept rather than copied from), with the fields the summary of those bytes gave.
    pub fn encoded(
        buffer: &Arc<Vec<u8>>,
        bytes: &[u8],
        user_invocable: bool,
        disable_model_invocation: bool,
        argument_hint: Option<&str>,
    ) -> Self {
        let (buffer, start) = match cache::offset_in(buffer, bytes) {
            Some(start) => (Arc::clone(buffer), start),
            None => (Arc::new(bytes.to_vec()), 0),
        };
        let end = start.saturating_add(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
        LazyFrontmatter {
            stored: Stored::Encoded { buffer, start, end },
            decoded: OnceLock::new(),
            user_invocable,
            disable_model_invocation,
            argument_hint: argument_hint.map(Box::from),
        }
    }

    /// `user-invocable`, without decoding the rest.
    pub fn user_invocable(&self) -> bool {
        self.user_invocable
    }

    /// `disable-model-invocation`, without decoding the rest.
    pub fn disable_model_invocation(&self) -> bool {
        self.disable_model_invocation
    }

    /// `argument-hint`, without decoding the rest.
    pub fn argument_hint(&self) -> Option<&str> {
        self.argument_hint.as_deref()
    }

    /// Whether the whole frontmatter is built (parsed, or decoded by a read).
    #[cfg(test)]
    pub fn is_built(&self) -> bool {
        matches!(self.stored, Stored::Parsed(_)) || self.decoded.get().is_some()
    }
}

impl Deref for LazyFrontmatter {
    type Target = Frontmatter;

    fn deref(&self) -> &Frontmatter {
        match &self.stored {
            Stored::Parsed(frontmatter) => frontmatter,
            Stored::Encoded { buffer, start, end } => self.decoded.get_or_init(|| {
                let bytes = buffer
                    .get(*start as usize..*end as usize)
                    .unwrap_or_default();
                match cache::decode_outcome(bytes) {
                    Some(Outcome::Parsed { frontmatter, .. }) => Box::new(frontmatter),
                    // Cannot happen: these bytes decoded as a summary, which refuses
                    // exactly what the whole decoding refuses. The fields kept apart
                    // are the best that can be said then.
                    _ => Box::new(Frontmatter {
                        user_invocable: self.user_invocable,
                        disable_model_invocation: self.disable_model_invocation,
                        argument_hint: self.argument_hint.as_deref().map(String::from),
                        ..Frontmatter::default()
                    }),
                }
            }),
        }
    }
}

impl PartialEq for LazyFrontmatter {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for LazyFrontmatter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter::parse;

    #[test]
    fn stored_bytes_read_as_the_parsed_frontmatter() {
        let (frontmatter, notes) = parse(
            "name: a\ndescription: d\nargument-hint: [file]\nuser-invocable: false\n\
             allowed-tools: [Read]\nmetadata: {k: 1}\n",
        );
        let bytes = crate::skills::cache::encode_outcome_for_tests(&Outcome::Parsed {
            frontmatter: frontmatter.clone(),
            notes,
        });
        let mut file = b"header".to_vec();
        file.extend_from_slice(&bytes);
        let buffer: Arc<Vec<u8>> = Arc::new(file);
        let lazy = LazyFrontmatter::encoded(&buffer, &buffer[6..], false, false, Some("[file]"));
        // Bytes from elsewhere are copied.
        let copied = LazyFrontmatter::encoded(&Arc::new(Vec::new()), &bytes, false, false, None);
        assert_eq!(*copied, frontmatter);
        let parsed = LazyFrontmatter::parsed(frontmatter.clone());
        assert_eq!(*lazy, frontmatter);
        assert_eq!(lazy, parsed);
        assert!(!parsed.user_invocable() && !parsed.disable_model_invocation());
        assert_eq!(parsed.argument_hint(), Some("[file]"));
        assert_eq!(lazy.allowed_tools, ["Read"]);
    }
}
