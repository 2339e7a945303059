//! Text made harmless to write where a terminal may read it: what stands between
//! untrusted text (a model's answer, a file's contents, a skill's description, an error
//! body) and the bytes harness9 writes to stdout and stderr outside the TUI. Without it,
//! an answer holding `ESC ] 0 ; … BEL` retitles the window, `ESC [ ? 1049 h` switches to
//! the alternate screen, and a C1 `U+009B` starts a control sequence on terminals that
//! honour it.
//!
//! It owns the rule and its visible forms ([`neutralize`], [`Neutralizer`] for text that
//! arrives in pieces, [`escape_json`] for serialized JSON, and [`SafeWriter`] that applies
//! one of them to everything written through it). It must not know terminals, terminal
//! libraries or frontends: it is a pure text transformation, and the frontends decide
//! where it applies (docs/ARCHITECTURE.md, "Terminal safety").
//!
//! The rule, one character at a time (so a piece boundary can never join two harmless
//! halves into something harmful: every control character is replaced on its own):
//!
//! - kept: line feed `\n`, tab `\t`, and a carriage return directly followed by a line
//!   feed (`\r\n`, a Windows line end);
//! - a lone carriage return would move the cursor back over the line and let text hide
//!   what came before it: shown as `^M`;
//! - ESC and every other C0 control (U+0000–U+001F) in caret notation: ESC is `^[`,
//!   BEL `^G`, NUL `^@`;
//! - DEL (U+007F) as `^?`;
//! - C1 controls (U+0080–U+009F, of which U+009B is CSI and U+009D is OSC on some
//!   terminals) as `<U+009B>`.
//!
//! Everything else passes unchanged; the replacements are printable ASCII. Text holding
//! none of these comes back borrowed, without allocating.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Whether `c` on its own must not reach a terminal: a C0 control other than `\n` and
/// `\t`, DEL, or a C1 control. (`\r` is one; [`neutralize`] keeps it only before `\n`.)
pub fn is_forbidden(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        _ => false,
    }
}

/// `text` with every control character that could steer a terminal replaced by its
/// visible form (see the module documentation); newlines, tabs and `\r\n` are kept.
/// Borrowed, without allocating, when nothing had to change.
pub fn neutralize(text: &str) -> Cow<'_, str> {
    let Some(first) = first_unsafe(text) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut chars = text[first..].chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            out.push('\r');
        } else {
            push_visible(c, &mut out);
        }
    }
    Cow::Owned(out)
}

/// The byte offset of the first character [`neutralize`] would change. Bytes suffice:
/// C0 controls and DEL are single bytes, and a C1 control is `0xC2` followed by
/// `0x80..=0x9F`; `0xC2` is never a continuation byte in UTF-8, so every offset returned
/// is a character boundary.
fn first_unsafe(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            b'\n' | b'\t' => i += 1,
            0x00..=0x1f | 0x7f => return Some(i),
            0xc2 if matches!(bytes.get(i + 1), Some(0x80..=0x9f)) => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Appends `c`, or its visible form when it is forbidden.
fn push_visible(c: char, out: &mut String) {
    let code = u32::from(c);
    match c {
        '\n' | '\t' => out.push(c),
        '\u{0}'..='\u{1f}' => {
            out.push('^');
            out.push(char::from_u32(code + 0x40).unwrap_or('?'));
        }
        '\u{7f}' => out.push_str("^?"),
        '\u{80}'..='\u{9f}' => {
            let _ = write!(out, "<U+{code:04X}>");
        }
        _ => out.push(c),
    }
}

/// [`neutralize`] for text that arrives in pieces (streamed answer deltas). The result of
/// pushing the pieces and then calling [`Neutralizer::finish`] is exactly
/// `neutralize(whole)`, wherever the pieces were cut: each control character is replaced
/// on its own, so an escape sequence split over two pieces leaves only visible text
/// behind in both, and a `\r` that ends a piece is held until the next piece says whether
/// a `\n` follows it.
#[derive(Debug, Default, Clone)]
pub struct Neutralizer {
    /// The last piece ended with a `\r` not yet written.
    cr_held: bool,
}

impl Neutralizer {
    /// A neutralizer with nothing held.
    pub fn new() -> Self {
        Self::default()
    }

    /// The safe form of `piece`, given what came before; borrowed when nothing changed
    /// and nothing was held.
    pub fn push<'a>(&mut self, piece: &'a str) -> Cow<'a, str> {
        if piece.is_empty() {
            return Cow::Borrowed(piece);
        }
        let held = std::mem::replace(&mut self.cr_held, false);
        let body = match piece.strip_suffix('\r') {
            Some(body) => {
                self.cr_held = true;
                body
            }
            None => piece,
        };
        let safe = neutralize(body);
        if !held {
            return safe;
        }
        let lead = if piece.starts_with('\n') { "\r" } else { "^M" };
        let mut out = String::with_capacity(lead.len() + safe.len());
        out.push_str(lead);
        out.push_str(&safe);
        Cow::Owned(out)
    }

    /// Ends the text: the visible form of a held `\r` (nothing follows it, so it is
    /// lone), or nothing.
    pub fn finish(&mut self) -> &'static str {
        if std::mem::replace(&mut self.cr_held, false) {
            "^M"
        } else {
            ""
        }
    }
}

/// Serialized JSON made safe without changing what it parses to: every character
/// [`is_forbidden`] names becomes a `\u00XX` escape. `serde_json` already escapes C0
/// controls inside strings but writes DEL and C1 controls raw; this escapes them too.
/// Only for JSON whose forbidden characters are all inside strings (any `serde_json`
/// output: its only whitespace between tokens is `\n` and spaces).
pub fn escape_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_forbidden) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_forbidden(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// What a [`SafeWriter`] does to the text written through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SafeMode {
    /// Text for people: [`neutralize`] (visible forms).
    Text,
    /// Serialized JSON: [`escape_json`] (same document once parsed).
    Json,
}

/// A writer that passes everything written through it through [`neutralize`] (or
/// [`escape_json`]) on its way to `inner`. Bytes are taken as UTF-8: a character cut
/// between two writes is put together again, and bytes that are not UTF-8 are written as
/// U+FFFD. A held `\r` (text mode) or an unfinished character is written at
/// [`Write::flush`], which means "nothing more of this follows": a `\r\n` cut by a flush
/// shows as `^M` and a line end.
#[derive(Debug)]
pub struct SafeWriter<W> {
    inner: W,
    mode: SafeMode,
    text: Neutralizer,
    /// The start of a character whose other bytes have not been written yet.
    partial: Vec<u8>,
}

impl<W: Write> SafeWriter<W> {
    /// Neutralizes text on its way to `inner`.
    pub fn text(inner: W) -> Self {
        Self::new(inner, SafeMode::Text)
    }

    /// Escapes what serialized JSON holds raw on its way to `inner`.
    pub fn json(inner: W) -> Self {
        Self::new(inner, SafeMode::Json)
    }

    /// A writer in `mode`.
    pub fn new(inner: W, mode: SafeMode) -> Self {
        SafeWriter {
            inner,
            mode,
            text: Neutralizer::new(),
            partial: Vec::new(),
        }
    }

    /// The wrapped writer back; anything held (see [`SafeWriter`]) is dropped, so flush
    /// first.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// The wrapped writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    fn emit(&mut self, text: &str) -> io::Result<()> {
        let safe = match self.mode {
            SafeMode::Text => self.text.push(text),
            SafeMode::Json => escape_json(text),
        };
        self.inner.write_all(safe.as_bytes())
    }
}

impl<W: Write> Write for SafeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let joined;
        let mut rest = buf;
        if !self.partial.is_empty() {
            let mut bytes = std::mem::take(&mut self.partial);
            bytes.extend_from_slice(buf);
            joined = bytes;
            rest = &joined;
        }
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.emit(text)?;
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    self.emit(std::str::from_utf8(good).unwrap_or_default())?;
                    match e.error_len() {
                        // The last character is not complete yet.
                        None => {
                            self.partial.extend_from_slice(bad);
                            break;
                        }
                        Some(n) => {
                            self.emit("\u{FFFD}")?;
                            rest = &bad[n..];
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.partial.is_empty() {
            self.partial.clear();
            self.emit("\u{FFFD}")?;
        }
        let held = self.text.finish();
        if !held.is_empty() {
            self.inner.write_all(held.as_bytes())?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOSTILE: &str = "a\x1b]0;PWNED\x07\x1b[?1049h\x1b[?25l\u{9b}31mb";

    /// Characters the output must never hold (a `\r` is checked separately: allowed
    /// only before `\n`).
    fn assert_safe(text: &str) {
        for (i, c) in text.char_indices() {
            if c == '\r' {
                assert_eq!(
                    text[i + 1..].chars().next(),
                    Some('\n'),
                    "lone CR in {text:?}"
                );
            } else {
                assert!(!is_forbidden(c), "{c:?} in {text:?}");
            }
        }
    }

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(
            neutralize(HOSTILE),
            "a^[]0;PWNED^G^[[?1049h^[[?25l<U+009B>31mb"
        );
        assert_eq!(
            neutralize("\0\x01\x1f\x7f\u{80}\u{9f}"),
            "^@^A^_^?<U+0080><U+009F>"
        );
    }

    #[test]
    fn newlines_tabs_and_crlf_are_kept_a_lone_cr_is_not() {
        assert!(matches!(
            neutralize("a\tb\nc\r\nd"),
            Cow::Borrowed("a\tb\nc\r\nd")
        ));
        assert_eq!(neutralize("secret\rpublic"), "secret^Mpublic");
        assert_eq!(neutralize("end\r"), "end^M");
        assert_eq!(neutralize("\r\r\n"), "^M\r\n");
    }

    #[test]
    fn printable_unicode_is_untouched_and_borrowed() {
        let text = "naïve → ✓ 日本 \u{a0}\u{a9}\u{ff} 🦀";
        assert!(matches!(neutralize(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn an_escape_split_across_pieces_stays_visible() {
        let mut n = Neutralizer::new();
        let mut out = String::new();
        for piece in ["ok \x1b", "]0;PWNED", "\x07 \r", "\n\x1b[?10", "49h end\r"] {
            out.push_str(&n.push(piece));
        }
        out.push_str(n.finish());
        assert_eq!(out, "ok ^[]0;PWNED^G \r\n^[[?1049h end^M");
        assert_safe(&out);
    }

    #[test]
    fn the_writer_mends_characters_cut_between_writes() {
        let mut w = SafeWriter::text(Vec::new());
        let bytes = HOSTILE.as_bytes();
        // Cut inside the two-byte C1 character (0xC2 0x9B) and inside the escape.
        let cut = HOSTILE.find('\u{9b}').unwrap() + 1;
        w.write_all(&bytes[..3]).unwrap();
        w.write_all(&bytes[3..cut]).unwrap();
        w.write_all(&bytes[cut..]).unwrap();
        w.flush().unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner()).unwrap(),
            neutralize(HOSTILE)
        );
    }

    #[test]
    fn the_writer_turns_bytes_that_are_not_utf8_into_replacement_characters() {
        let mut w = SafeWriter::text(Vec::new());
        w.write_all(b"a\x9b[31mb\xc2").unwrap();
        w.flush().unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner()).unwrap(),
            "a\u{FFFD}[31mb\u{FFFD}"
        );
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_its_raw_controls() {
        let value = serde_json::json!({"text": HOSTILE, "del": "\u{7f}"});
        let raw = serde_json::to_string_pretty(&value).unwrap();
        let safe = escape_json(&raw);
        assert_safe(&safe);
        assert!(
            !safe.contains('\u{9b}') && safe.contains("\\u009b"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
        let mut w = SafeWriter::json(Vec::new());
        w.write_all(raw.as_bytes()).unwrap();
        w.flush().unwrap();
        assert_eq!(String::from_utf8(w.into_inner()).unwrap(), safe);
    }

    fn any_text() -> impl Strategy<Value = String> {
        // Mostly the interesting characters, with plain and wide ones between them.
        let interesting = prop::sample::select(vec![
            '\x1b', '\x07', '\r', '\n', '\t', '\0', '\x7f', '\u{9b}', '\u{9d}', '\u{85}', '[', ']',
            ';', 'a', ' ', 'é', '✓', '🦀', '\u{a0}',
        ]);
        prop::collection::vec(prop_oneof![interesting, any::<char>()], 0..64)
            .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn output_never_holds_a_forbidden_character(text in any_text()) {
            assert_safe(&neutralize(&text));
        }

        #[test]
        fn text_without_controls_comes_back_borrowed_and_unchanged(
            text in "[^\\x00-\\x1f\\x7f-\\x9f]*|[a-z \\n\\t]*"
        ) {
            match neutralize(&text) {
                Cow::Borrowed(same) => prop_assert_eq!(same, text.as_str()),
                Cow::Owned(changed) => prop_assert!(false, "changed to {:?}", changed),
            }
        }

        #[test]
        fn newlines_and_tabs_are_kept(text in any_text()) {
            let safe = neutralize(&text);
            prop_assert_eq!(safe.matches('\n').count(), text.matches('\n').count());
            prop_assert_eq!(safe.matches('\t').count(), text.matches('\t').count());
        }

        #[test]
        fn pieces_come_out_as_the_whole_would(text in any_text(), cuts in prop::collection::vec(0usize..80, 0..6)) {
            let mut bounds: Vec<usize> = cuts
                .into_iter()
                .map(|c| c.min(text.len()))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            bounds.sort_unstable();
            let mut n = Neutralizer::new();
            let mut out = String::new();
            let mut start = 0;
            for end in bounds.into_iter().chain([text.len()]) {
                out.push_str(&n.push(&text[start..end]));
                start = end;
            }
            out.push_str(n.finish());
            prop_assert_eq!(out, neutralize(&text).into_owned());
        }

        #[test]
        fn the_writer_matches_neutralize_for_any_byte_cuts(text in any_text(), cut in 0usize..80) {
            let bytes = text.as_bytes();
            let cut = cut.min(bytes.len());
            let mut w = SafeWriter::text(Vec::new());
            w.write_all(&bytes[..cut]).unwrap();
            w.write_all(&bytes[cut..]).unwrap();
            w.flush().unwrap();
            prop_assert_eq!(String::from_utf8(w.into_inner()).unwrap(), neutralize(&text).into_owned());
        }

        #[test]
        fn json_escaping_never_changes_the_value(text in any_text()) {
            let raw = serde_json::to_string(&serde_json::json!([text])).unwrap();
            let safe = escape_json(&raw);
            assert_safe(&safe);
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            prop_assert_eq!(back[0].as_str(), Some(text.as_str()));
        }
    }
}
