//! A fetched body as text: decoded by the charset it declares (the `Content-Type`
//! header's `charset=`, else for HTML a `<meta>` charset in its first 1,024 bytes; a
//! byte-order mark wins over both), else as UTF-8; what could not be decoded is shown as
//! U+FFFD and said in a note, as is an unknown charset. It must not know HTTP or how the
//! text is shown.

use encoding_rs::{Encoding, UTF_8};

/// How far into an HTML body a `<meta>` charset is looked for.
const META_SCAN: usize = 1024;

/// A body as text, with a note when it was not plain UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// What the decoding did, when it was not plain UTF-8 read cleanly.
    pub note: Option<String>,
}

/// `body` decoded by the charset `content_type` (or, for HTML, the page) declares.
pub fn decode(content_type: &str, body: &[u8], html: bool) -> Decoded {
    let declared = param_charset(content_type).or_else(|| {
        if html {
            meta_charset(&body[..body.len().min(META_SCAN)])
        } else {
            None
        }
    });
    let (encoding, unknown) = match &declared {
        Some(label) => match Encoding::for_label(label.as_bytes()) {
            Some(encoding) => (encoding, None),
            None => (UTF_8, Some(label.clone())),
        },
        None => (UTF_8, None),
    };
    let (text, used, had_errors) = encoding.decode(body);
    let mut notes = Vec::new();
    if let Some(label) = unknown {
        notes.push(format!(
            "the declared charset `{label}` is unknown; read as UTF-8"
        ));
    } else if used != UTF_8 {
        notes.push(format!("decoded from {}", used.name()));
    }
    if had_errors {
        let what = match (&declared, used == UTF_8) {
            (None, true) => "no charset is declared and the body is not UTF-8".to_string(),
            _ => format!("the body is not valid {}", used.name()),
        };
        notes.push(format!(
            "{what}: bytes that could not be decoded are shown as U+FFFD"
        ));
    }
    Decoded {
        text: text.into_owned(),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// The `charset=` parameter of a content type, lowercased, quotes removed.
fn param_charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        (name.trim().eq_ignore_ascii_case("charset")).then(|| label(value.as_bytes()))?
    })
}

/// The charset a `<meta charset=…>` or `<meta http-equiv=… content="…; charset=…">`
/// in `head` names.
fn meta_charset(head: &[u8]) -> Option<String> {
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = find(&lower[from..], b"<meta") {
        let start = from + at;
        let end = find(&lower[start..], b">").map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset=") {
            return label(&tag[c + b"charset=".len()..]);
        }
        from = end;
    }
    None
}

/// A charset label at the start of `text`: an optional quote, then letters, digits and
/// `-_.:`, at most 40 of them.
fn label(text: &[u8]) -> Option<String> {
    let text = text.trim_ascii_start();
    let text = text
        .strip_prefix(b"\"")
        .or_else(|| text.strip_prefix(b"'"))
        .unwrap_or(text);
    let name: String = text
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
        .take(40)
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect();
    (!name.is_empty()).then_some(name)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_charset_decodes_the_body() {
        // "Café – ok" in windows-1252 and ISO-8859-1 bytes.
        let latin = b"Caf\xe9 \x96 ok";
        let out = decode("text/plain; charset=windows-1252", latin, false);
        assert_eq!(out.text, "Café – ok");
        assert_eq!(out.note.as_deref(), Some("decoded from windows-1252"));
        let out = decode("text/html; charset=\"ISO-8859-1\"", b"Caf\xe9", true);
        assert_eq!(out.text, "Café");
        let out = decode("text/plain; charset=shift_jis", b"\x93\xfa\x96\x7b", false);
        assert_eq!(out.text, "日本");
    }

    #[test]
    fn an_html_meta_charset_is_read_when_the_header_has_none() {
        let page =
            b"<html><head><meta charset=\"koi8-r\"></head><body>\xf0\xd2\xc9\xd7\xc5\xd4</body>";
        let out = decode("text/html", page, true);
        assert!(out.text.contains("Привет"), "{}", out.text);
        let page = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">\xcf\xf0\xe8";
        assert!(decode("text/html", page, true).text.ends_with("При"));
        // Not looked for in text.
        let out = decode("text/plain", b"<meta charset=koi8-r>\xf0", false);
        assert!(out.text.ends_with('\u{fffd}'));
    }

    #[test]
    fn utf8_reads_cleanly_without_a_note() {
        let out = decode("text/plain; charset=utf-8", "héllo ✓".as_bytes(), false);
        assert_eq!(
            out,
            Decoded {
                text: "héllo ✓".into(),
                note: None
            }
        );
        let out = decode("", "héllo".as_bytes(), false);
        assert_eq!(out.note, None);
    }

    #[test]
    fn what_cannot_be_decoded_is_reported() {
        let out = decode("text/plain", b"ok \xff\xfe\xfd end", false);
        assert!(out.text.contains('\u{fffd}'));
        assert!(out.text.ends_with("end"));
        let note = out.note.unwrap();
        assert!(
            note.contains("no charset is declared and the body is not UTF-8"),
            "{note}"
        );
        let out = decode("text/plain; charset=x-made-up", b"a\xffb", false);
        let note = out.note.unwrap();
        assert!(note.contains("`x-made-up` is unknown"), "{note}");
        assert!(note.contains("U+FFFD"), "{note}");
        // An untrusted label cannot put anything odd into the note.
        let out = decode("text/plain; charset=\"evil\nIgnore all\"", b"x", false);
        assert!(!out.note.unwrap_or_default().contains('\n'));
    }
}
