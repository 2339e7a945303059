//! Streaming Markdown for the line REPL: turns the assistant's text deltas into readable
//! plain text (piped stdout, `NO_COLOR`) or lightly styled text (a terminal), line by
//! line, as the text arrives.
//!
//! Block structure (fences, headings, lists, quotes, rules) is decided per line; inline
//! markup (emphasis, code, links) is parsed by pulldown-cmark one line at a time, so a
//! construct spread over several lines stays as written. A prose line is streamed as it
//! comes while it has no markup character in it, so long paragraphs show up as they come.
//! Each delta costs time in proportion to its own length: what was already scanned of
//! the unfinished line is never scanned again.
//!
//! At most [`MAX_HELD`] bytes (64 KiB) of one unfinished line are held. When a line grows
//! past that, the held part is printed as rendered text and the line goes on from there:
//! the held part is cut before its last whitespace run when that keeps at most half of
//! it, so words stay whole; it is rendered as a line start (block markers and inline
//! markup within it apply), and each later piece of the same line is rendered as
//! continuation text of a paragraph (inline markup within the piece, no block markers).
//! A construct that spans a cut shows its markers literally; no byte of the answer is
//! dropped or printed twice. A code line inside a fence, an indented code line and a
//! line that would open a fence are printed verbatim past the cap, so a line longer than
//! the cap never opens or closes a fence. Normal lines render exactly as if whole.
//! The text is untrusted (it is the model's): each delta is neutralized first
//! ([`crate::safe_text::Neutralizer`]: control characters made visible, a `\r` held
//! until its `\n`), and so is what the Markdown parser decodes from character
//! references (`&#27;` is ESC) and link targets, so the only escape sequences in the
//! output are the styling this module adds itself.
//! It knows nothing of the agent or of events: text in, text out.

use pulldown_cmark::{CodeBlockKind, Event as Md, Options, Parser, Tag, TagEnd};

use crate::safe_text::{Neutralizer, neutralize};

/// The most bytes of one unfinished line a [`MarkdownStream`] holds.
pub const MAX_HELD: usize = 64 << 10;

/// How a [`MAX_HELD`] cut leaves a line's rest.
const MAX_CARRY: usize = MAX_HELD / 2;

/// How Markdown is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkdownStyle {
    /// Plain text, no escape sequences: markers removed, code indented by four spaces.
    Plain,
    /// Light ANSI styling for a terminal: bold headings and strong text, italic
    /// emphasis, coloured inline code, dimmed fences and link targets.
    Ansi,
}

const BOLD: &str = "1";
const DIM: &str = "2";
const ITALIC: &str = "3";
const UNDERLINE: &str = "4";
const STRIKE: &str = "9";
const CYAN: &str = "36";

/// Characters that may start inline markup; a partial line holding none of them can be
/// printed before its end without changing how it renders.
const INLINE_SPECIALS: &[char] = &['*', '_', '`', '\\', '[', ']', '<', '>', '&', '~', '!'];

/// An open code fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    marker: char,
    len: usize,
}

/// Where the held text sits in its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    /// The line's start: everything of the line so far is held.
    Start,
    /// The line went past [`MAX_HELD`]; the held text continues a paragraph whose
    /// earlier part ended with `after` (only its kind matters, see [`context_char`]).
    Inline { after: char },
    /// The line went past [`MAX_HELD`] and is printed verbatim as it comes.
    Raw,
}

/// Renders a stream of Markdown text deltas.
#[derive(Debug)]
pub struct MarkdownStream {
    style: MarkdownStyle,
    /// The held part of the current line (never more than [`MAX_HELD`] bytes).
    pending: String,
    segment: Segment,
    /// Bytes of `pending` already printed (a streamed prose prefix).
    emitted: usize,
    /// Bytes of `pending` already searched for [`INLINE_SPECIALS`].
    scanned: usize,
    /// A markup character was found at `scanned`: nothing past it streams.
    blocked: bool,
    /// End of the streamable prefix without its trailing whitespace.
    head_end: usize,
    fence: Option<Fence>,
    /// Makes each delta safe before anything else looks at it.
    guard: Neutralizer,
    /// Bytes looked at (searched, rendered or copied), to test that work is linear.
    #[cfg(test)]
    work: usize,
}

impl MarkdownStream {
    /// A renderer in `style`.
    pub fn new(style: MarkdownStyle) -> Self {
        MarkdownStream {
            style,
            pending: String::new(),
            segment: Segment::Start,
            emitted: 0,
            scanned: 0,
            blocked: false,
            head_end: 0,
            fence: None,
            guard: Neutralizer::new(),
            #[cfg(test)]
            work: 0,
        }
    }

    /// True when part of a line has been printed and its end has not.
    pub fn mid_line(&self) -> bool {
        self.emitted > 0 || self.segment != Segment::Start
    }

    /// Takes a delta; returns what to print now.
    pub fn push(&mut self, delta: &str) -> String {
        let mut out = String::new();
        let delta = self.guard.push(delta);
        let mut rest = &*delta;
        while let Some(i) = rest.find('\n') {
            self.count(i + 1);
            self.take(&rest[..i], &mut out);
            self.end_line(&mut out);
            rest = &rest[i + 1..];
        }
        self.count(rest.len());
        self.take(rest, &mut out);
        self.stream_prefix(&mut out);
        out
    }

    /// Ends the text (a turn or a model request finished): prints the unfinished line,
    /// ending it with a newline, and closes any open fence.
    pub fn finish(&mut self) -> String {
        let held = self.guard.finish();
        let mut out = String::new();
        if !held.is_empty() {
            self.take(held, &mut out);
        }
        if !self.pending.is_empty() || self.mid_line() {
            self.end_line(&mut out);
        }
        self.fence = None;
        out
    }

    #[cfg(test)]
    fn count(&mut self, bytes: usize) {
        self.work += bytes;
    }

    #[cfg(not(test))]
    fn count(&mut self, _bytes: usize) {}

    /// Adds `text` (no newline in it) to the current line, cutting the line at
    /// [`MAX_HELD`] bytes.
    fn take(&mut self, mut text: &str, out: &mut String) {
        while !text.is_empty() {
            if self.segment == Segment::Raw {
                return self.raw(text, out);
            }
            let mut room = MAX_HELD - self.pending.len();
            if room >= text.len() {
                self.pending.push_str(text);
                return;
            }
            while !text.is_char_boundary(room) {
                room -= 1;
            }
            self.pending.push_str(&text[..room]);
            text = &text[room..];
            self.cut(out);
        }
    }

    /// Prints text of a verbatim line at once, holding back only a final `\r` (which
    /// may be half of a CRLF line end).
    fn raw(&mut self, text: &str, out: &mut String) {
        self.count(text.len());
        if !text.is_empty() {
            out.push_str(&self.pending);
            self.pending.clear();
        }
        match text.strip_suffix('\r') {
            Some(head) => {
                out.push_str(head);
                self.pending.push('\r');
            }
            None => out.push_str(text),
        }
    }

    /// The held text has reached [`MAX_HELD`]: prints it (or all but its last word) as
    /// rendered text and goes on with the rest of the line as a new segment.
    fn cut(&mut self, out: &mut String) {
        let held = std::mem::take(&mut self.pending);
        self.count(held.len());
        let emitted = std::mem::take(&mut self.emitted);
        self.reset_scan();
        if self.segment == Segment::Start {
            let verbatim = match self.fence {
                Some(_) if self.style == MarkdownStyle::Plain => Some(format!("    {held}")),
                Some(_) => Some(held.clone()),
                // Neither starts with a letter, so nothing of them streamed.
                None if opens_fence(&held).is_some() => Some(held.clone()),
                None => render_inline(&held, self.style).1.then(|| held.clone()),
            };
            if let Some(text) = verbatim {
                self.segment = Segment::Raw;
                return self.raw(&text, out);
            }
        }
        let content = held.trim_end().len();
        let mut body_end = content;
        if let Some(i) = held[..content].rfind(char::is_whitespace) {
            let run = held[..i].trim_end().len();
            if run > 0 && held.len() - run <= MAX_CARRY {
                body_end = run;
            }
        }
        let body = &held[..body_end];
        if let Some(text) = self.render_piece(body) {
            emit_rendered(body, &text, emitted.min(body.len()), out);
        }
        let mut carry = &held[body_end..];
        if carry.len() > MAX_CARRY {
            // Only whitespace is left and there is too much of it to hold: it sits
            // inside the line, where a paragraph keeps it.
            out.push_str(&carry[emitted.saturating_sub(body_end).min(carry.len())..]);
            carry = "";
        }
        let after = body
            .chars()
            .next_back()
            .or(match self.segment {
                Segment::Inline { after } => Some(after),
                _ => None,
            })
            .unwrap_or(' ');
        self.segment = Segment::Inline { after };
        self.pending.push_str(carry);
        // What was printed of the carry is prose: streaming goes on from there.
        self.emitted = emitted.saturating_sub(body_end).min(self.pending.len());
    }

    /// Renders a cut piece (no newline, no trailing whitespace) for the current segment.
    fn render_piece(&self, piece: &str) -> Option<String> {
        if piece.is_empty() {
            return None;
        }
        match self.segment {
            Segment::Start => Some(render_inline(piece, self.style).0),
            Segment::Inline { after } => Some(render_continuation(piece, after, self.style)),
            Segment::Raw => Some(piece.to_string()),
        }
    }

    fn reset_scan(&mut self) {
        self.scanned = 0;
        self.blocked = false;
        self.head_end = 0;
    }

    /// Prints the start of an unfinished prose line, up to its last complete word.
    /// Only the part not searched before is searched.
    fn stream_prefix(&mut self, out: &mut String) {
        let streams = match self.segment {
            Segment::Start => self.fence.is_none() && self.pending.starts_with(char::is_alphabetic),
            Segment::Inline { .. } => true,
            Segment::Raw => false,
        };
        if !streams || self.blocked {
            return;
        }
        let new = &self.pending[self.scanned..];
        let (part, blocked) = match new.find(INLINE_SPECIALS) {
            Some(i) => (&new[..i], true),
            None => (new, false),
        };
        let content = part.trim_end().len();
        if content > 0 {
            self.head_end = self.scanned + content;
        }
        let searched = part.len();
        self.scanned += searched;
        self.blocked = blocked;
        self.count(searched);
        if self.head_end > self.emitted {
            out.push_str(&self.pending[self.emitted..self.head_end]);
            self.emitted = self.head_end;
        }
    }

    /// The line has ended: prints the rest of it and its newline.
    fn end_line(&mut self, out: &mut String) {
        let line = std::mem::take(&mut self.pending);
        self.count(line.len());
        let segment = std::mem::replace(&mut self.segment, Segment::Start);
        self.reset_scan();
        let line = line.strip_suffix('\r').unwrap_or(&line);
        match segment {
            Segment::Start => self.finish_line(line, out),
            Segment::Inline { after } => {
                let emitted = std::mem::take(&mut self.emitted);
                let piece = line.trim_end();
                if !piece.is_empty() {
                    let text = render_continuation(piece, after, self.style);
                    emit_rendered(piece, &text, emitted.min(piece.len()), out);
                }
                out.push('\n');
            }
            Segment::Raw => {
                self.emitted = 0;
                out.push_str(line);
                out.push('\n');
            }
        }
    }

    fn finish_line(&mut self, line: &str, out: &mut String) {
        let emitted = std::mem::take(&mut self.emitted);
        // A streamed prefix is prose, never a fence line, so it always renders.
        let Some(text) = self.render_line(line) else {
            return;
        };
        emit_rendered(line, &text, emitted, out);
        out.push('\n');
    }

    /// One complete line, rendered, without its newline; `None` to print nothing.
    fn render_line(&mut self, line: &str) -> Option<String> {
        if let Some(fence) = self.fence {
            if closes_fence(line, fence) {
                self.fence = None;
                return self.fence_line(line);
            }
            return Some(match self.style {
                MarkdownStyle::Plain => format!("    {line}"),
                MarkdownStyle::Ansi => line.to_string(),
            });
        }
        if let Some(fence) = opens_fence(line) {
            self.fence = Some(fence);
            return self.fence_line(line);
        }
        if line.trim().is_empty() {
            return Some(String::new());
        }
        Some(render_inline(line, self.style).0)
    }

    fn fence_line(&self, line: &str) -> Option<String> {
        match self.style {
            MarkdownStyle::Plain => None,
            MarkdownStyle::Ansi => Some(styled(DIM, line.trim())),
        }
    }

    /// Bytes held of the current line (tests).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.pending.len()
    }
}

/// Prints the rendering `text` of `source`, of which the first `emitted` bytes were
/// printed already as they streamed.
fn emit_rendered(source: &str, text: &str, emitted: usize, out: &mut String) {
    match source
        .get(..emitted)
        .and_then(|head| text.strip_prefix(head))
    {
        Some(rest) if emitted > 0 => out.push_str(rest),
        _ if emitted > 0 => {
            out.push('\n');
            out.push_str(text);
        }
        _ => out.push_str(text),
    }
}

/// A character to put before a continuation piece so that it parses as the inside of
/// a paragraph line: never a block marker, and the same flanking (word character or
/// punctuation) as the text the piece follows.
fn context_char(after: char) -> char {
    if after.is_alphanumeric() || after.is_whitespace() {
        'x'
    } else {
        '.'
    }
}

/// Renders a piece of a line cut at [`MAX_HELD`] that continues a paragraph.
fn render_continuation(piece: &str, after: char, style: MarkdownStyle) -> String {
    let c = context_char(after);
    let mut line = String::with_capacity(piece.len() + 1);
    line.push(c);
    line.push_str(piece);
    let text = render_inline(&line, style).0;
    match text.strip_prefix(c) {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

fn styled(code: &str, text: &str) -> String {
    format!("\x1b[{code}m{text}\x1b[0m")
}

fn opens_fence(line: &str) -> Option<Fence> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    if marker == '`' && rest[len..].contains('`') {
        return None;
    }
    Some(Fence { marker, len })
}

fn closes_fence(line: &str, fence: Fence) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let len = rest.chars().take_while(|c| *c == fence.marker).count();
    len >= fence.len && rest[len..].trim().is_empty()
}

/// Renders one non-fence, non-blank line; true with it when the line is indented code
/// (then it is returned as it is).
fn render_inline(line: &str, style: MarkdownStyle) -> (String, bool) {
    let indent = &line[..line.len() - line.trim_start().len()];
    let mut w = LineWriter {
        style,
        out: String::new(),
        stack: Vec::new(),
        links: Vec::new(),
    };
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut indented_code = false;
    for event in Parser::new_ext(line, Options::ENABLE_STRIKETHROUGH) {
        match event {
            Md::Start(Tag::CodeBlock(CodeBlockKind::Indented)) => indented_code = true,
            Md::Start(Tag::Heading { .. }) => w.push(BOLD),
            Md::End(TagEnd::Heading(_)) => w.pop(),
            Md::Start(Tag::BlockQuote(_)) => match style {
                MarkdownStyle::Plain => w.out.push_str("> "),
                MarkdownStyle::Ansi => w.out.push_str(&styled(DIM, "│ ")),
            },
            Md::Start(Tag::List(start)) => lists.push(start),
            Md::End(TagEnd::List(_)) => {
                lists.pop();
            }
            Md::Start(Tag::Item) => {
                let marker = match lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ if style == MarkdownStyle::Ansi => "• ".to_string(),
                    _ => "- ".to_string(),
                };
                w.out.push_str(&marker);
            }
            Md::Start(Tag::Emphasis) => w.push(ITALIC),
            Md::Start(Tag::Strong) => w.push(BOLD),
            Md::Start(Tag::Strikethrough) => {
                if style == MarkdownStyle::Plain {
                    w.out.push_str("~~");
                }
                w.push(STRIKE);
            }
            Md::End(TagEnd::Strikethrough) => {
                w.pop();
                if style == MarkdownStyle::Plain {
                    w.out.push_str("~~");
                }
            }
            Md::End(TagEnd::Emphasis | TagEnd::Strong) => w.pop(),
            Md::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                w.links
                    .push((neutralize(&dest_url).into_owned(), String::new()));
                w.push(UNDERLINE);
            }
            Md::End(TagEnd::Link | TagEnd::Image) => {
                w.pop();
                if let Some((url, text)) = w.links.pop()
                    && url != text
                    && !url.is_empty()
                {
                    let target = format!(" ({url})");
                    match style {
                        MarkdownStyle::Plain => w.out.push_str(&target),
                        MarkdownStyle::Ansi => w.out.push_str(&styled(DIM, &target)),
                    }
                }
            }
            Md::Text(t) if indented_code => w.out.push_str(t.trim_end_matches('\n')),
            Md::Text(t) => w.text(&t),
            Md::Code(t) => {
                w.push(CYAN);
                w.text(&t);
                w.pop();
            }
            Md::Html(t) | Md::InlineHtml(t) => w.text(t.trim_end_matches('\n')),
            Md::Rule => match style {
                MarkdownStyle::Plain => w.out.push_str(line.trim()),
                MarkdownStyle::Ansi => w.out.push_str(&styled(DIM, &"─".repeat(40))),
            },
            Md::SoftBreak | Md::HardBreak => w.out.push(' '),
            _ => {}
        }
    }
    if indented_code {
        return (line.to_string(), true);
    }
    w.reset_all();
    (format!("{indent}{}", w.out), false)
}

/// Writes inline text with a stack of ANSI styles.
struct LineWriter {
    style: MarkdownStyle,
    out: String,
    stack: Vec<&'static str>,
    /// Open links: target and the text seen so far.
    links: Vec<(String, String)>,
}

impl LineWriter {
    /// Appends text the parser produced, which may hold characters decoded from
    /// references (`&#27;`): neutralized again.
    fn text(&mut self, t: &str) {
        let t = &*neutralize(t);
        self.out.push_str(t);
        for (_, text) in &mut self.links {
            text.push_str(t);
        }
    }

    fn push(&mut self, code: &'static str) {
        self.stack.push(code);
        if self.style == MarkdownStyle::Ansi {
            self.out.push_str(&format!("\x1b[{code}m"));
        }
    }

    fn pop(&mut self) {
        if self.stack.pop().is_none() || self.style != MarkdownStyle::Ansi {
            return;
        }
        self.out.push_str("\x1b[0m");
        for code in &self.stack {
            self.out.push_str(&format!("\x1b[{code}m"));
        }
    }

    fn reset_all(&mut self) {
        if !self.stack.is_empty() && self.style == MarkdownStyle::Ansi {
            self.out.push_str("\x1b[0m");
        }
        self.stack.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> String {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        let mut out = md.push(text);
        out.push_str(&md.finish());
        out
    }

    fn ansi(text: &str) -> String {
        let mut md = MarkdownStream::new(MarkdownStyle::Ansi);
        let mut out = md.push(text);
        out.push_str(&md.finish());
        out
    }

    /// Feeds `text` in pieces of `n` bytes (on char boundaries).
    fn plain_in_pieces(text: &str, n: usize) -> String {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        let mut out = String::new();
        let mut piece = String::new();
        for c in text.chars() {
            piece.push(c);
            if piece.len() >= n {
                out.push_str(&md.push(&piece));
                piece.clear();
            }
        }
        out.push_str(&md.push(&piece));
        out.push_str(&md.finish());
        out
    }

    /// Raw controls that must never come out of the renderer (its own styling aside).
    fn foreign_controls(out: &str) -> Vec<char> {
        // Take away the styling this module writes itself, then look for any control.
        let mut rest = out.to_string();
        for code in ["0", BOLD, DIM, ITALIC, UNDERLINE, STRIKE, CYAN] {
            rest = rest.replace(&format!("\x1b[{code}m"), "");
        }
        rest.chars()
            .filter(|&c| crate::safe_text::is_forbidden(c) && c != '\r')
            .collect()
    }

    #[test]
    fn escapes_in_the_answer_are_shown_not_obeyed_and_the_styling_survives() {
        let hostile = "**bold** \x1b]0;PWNED\x07 and `c\x1b[?1049h` \u{9b}31m\n";
        let out = plain(hostile);
        assert_eq!(out, "bold ^[]0;PWNED^G and c^[[?1049h <U+009B>31m\n");
        let out = ansi(hostile);
        assert!(foreign_controls(&out).is_empty(), "{out:?}");
        assert!(
            out.starts_with("\x1b[1mbold\x1b[0m ^[]0;PWNED^G"),
            "{out:?}"
        );
        // Cut inside the escapes, one byte at a time.
        let out = plain_in_pieces("go \x1b]0;PWNED\x07 x\r\n```\n\x1b[?25l\n```\n", 1);
        assert_eq!(out, "go ^[]0;PWNED^G x\n    ^[[?25l\n");
    }

    #[test]
    fn character_references_cannot_make_escapes() {
        for style in [MarkdownStyle::Plain, MarkdownStyle::Ansi] {
            let mut md = MarkdownStream::new(style);
            let mut out = md.push("a &#27;]0;PWNED&#7; [x](&#x1b;[?1049h) &#155;31m *&#x1b;*\n");
            out.push_str(&md.finish());
            assert!(foreign_controls(&out).is_empty(), "{style:?}: {out:?}");
            assert!(out.contains("^[]0;PWNED^G"), "{out:?}");
            assert!(out.contains("<U+009B>31m"), "{out:?}");
        }
    }

    #[test]
    fn a_lone_carriage_return_at_the_end_is_shown() {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        let mut out = md.push("visible\r");
        out.push_str(&md.finish());
        assert_eq!(out, "visible^M\n");
    }

    const SAMPLE: &str = "# Plan\n\nRun **all** the *tests* with `cargo test`, see [docs](https://x.dev/a).\n\n- first\n- second\n\n1. one\n2. two\n\n> quoted _text_\n\n```rust\nfn main() {}\n```\nDone.";

    #[test]
    fn plain_removes_markers_and_indents_code() {
        assert_eq!(
            plain(SAMPLE),
            "Plan\n\nRun all the tests with cargo test, see docs (https://x.dev/a).\n\n- first\n- second\n\n1. one\n2. two\n\n> quoted text\n\n    fn main() {}\nDone.\n"
        );
    }

    #[test]
    fn plain_output_is_the_same_whatever_the_delta_sizes() {
        let whole = plain(SAMPLE);
        for n in [1, 2, 3, 5, 8, 13] {
            assert_eq!(plain_in_pieces(SAMPLE, n), whole, "pieces of {n}");
        }
    }

    #[test]
    fn plain_has_no_escape_sequences() {
        assert!(!plain(SAMPLE).contains('\x1b'));
    }

    #[test]
    fn ansi_styles_lightly() {
        let out = ansi("# Title\nsome **bold** and `code`\n```\nx\n```\n");
        assert_eq!(
            out,
            "\x1b[1mTitle\x1b[0m\nsome \x1b[1mbold\x1b[0m and \x1b[36mcode\x1b[0m\n\x1b[2m```\x1b[0m\nx\n\x1b[2m```\x1b[0m\n"
        );
    }

    #[test]
    fn prose_streams_word_by_word_before_the_line_ends() {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        assert_eq!(md.push("Hello wor"), "Hello wor");
        assert!(md.mid_line());
        assert_eq!(md.push("ld and "), "ld and");
        assert_eq!(md.push("more"), " more");
        assert_eq!(md.push(" `x` end\n"), " x end\n");
        assert!(!md.mid_line());
    }

    #[test]
    fn markup_stops_streaming_until_the_line_is_complete() {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        assert_eq!(md.push("a **b"), "a");
        assert_eq!(md.push(" c** d"), "");
        assert_eq!(md.push("\n"), " b c d\n");
    }

    #[test]
    fn block_lines_wait_for_their_end() {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        assert_eq!(md.push("- item one two"), "");
        assert_eq!(md.push("\n"), "- item one two\n");
    }

    #[test]
    fn finish_ends_a_partial_line_and_closes_fences() {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        assert_eq!(md.push("```\nlet x"), "");
        assert_eq!(md.finish(), "    let x\n");
        assert_eq!(md.push("*a*\n"), "a\n");
        assert_eq!(md.finish(), "");
    }

    #[test]
    fn nested_lists_keep_their_indentation() {
        assert_eq!(plain("- a\n  - b\n"), "- a\n  - b\n");
        assert_eq!(ansi("- a\n"), "• a\n");
    }

    #[test]
    fn autolinks_are_not_repeated() {
        assert_eq!(plain("see <https://a.b/c>\n"), "see https://a.b/c\n");
    }
}

/// Lines under the cap render exactly as before cutting existed, and lines over it are
/// held to the cap with linear work and without losing or repeating a byte.
#[cfg(test)]
mod long_line_tests {
    use super::*;

    /// Kinds of line, each repeated to the lengths in [`GOLDEN`].
    const KINDS: &[&str] = &[
        "lorem ipsum dolor sit amet ",
        "see `code` and **bold** or *em* text ",
        "# heading words ",
        "- item with _emphasis_ and [a link](https://x.dev/p) ",
        "> quoted ~~gone~~ words & more ",
        "1. numbered <b>html</b> \\*escaped\\* ",
        "    indented code line ",
        "plain words then `tick ",
        "naïve café — ünïcödé words ",
    ];

    /// (kind, length, style, FNV-1a hash of the output), recorded from the renderer
    /// as it was before lines were cut at [`MAX_HELD`] (commit 7c0d54e).
    const GOLDEN: &[(usize, usize, MarkdownStyle, u64)] = &[
        (0, 40, MarkdownStyle::Plain, 0xe2c030471153c819),
        (0, 40, MarkdownStyle::Ansi, 0x138e9d759a3aa7ed),
        (0, 700, MarkdownStyle::Plain, 0x4f5b0e4263528ac9),
        (0, 700, MarkdownStyle::Ansi, 0x19d352d61ee314bd),
        (0, 5000, MarkdownStyle::Plain, 0x7f1e34de6c7bcc89),
        (0, 5000, MarkdownStyle::Ansi, 0xc2918f5ab1c3707d),
        (0, 60000, MarkdownStyle::Plain, 0xb7a4fd803497b317),
        (0, 60000, MarkdownStyle::Ansi, 0xa3944210c29e8d3b),
        (1, 40, MarkdownStyle::Plain, 0xa03f457dea58579d),
        (1, 40, MarkdownStyle::Ansi, 0x2f7cb2a0ed3da749),
        (1, 700, MarkdownStyle::Plain, 0xc335a25d3e35a349),
        (1, 700, MarkdownStyle::Ansi, 0xd3aca22c9ac4bd7d),
        (1, 5000, MarkdownStyle::Plain, 0x9e3ddf2f7549e6cd),
        (1, 5000, MarkdownStyle::Ansi, 0xe8987b85a9c3d489),
        (1, 60000, MarkdownStyle::Plain, 0x77a4d8c7fd876c1d),
        (1, 60000, MarkdownStyle::Ansi, 0xb0676b68dd085ec9),
        (2, 40, MarkdownStyle::Plain, 0x4508b7cf0bdd0f1d),
        (2, 40, MarkdownStyle::Ansi, 0x0b3a9892eaa6de93),
        (2, 700, MarkdownStyle::Plain, 0x907b0e8b4dd941bf),
        (2, 700, MarkdownStyle::Ansi, 0xe4de100b2bb05f4d),
        (2, 5000, MarkdownStyle::Plain, 0xfbce3a4d4718ee4d),
        (2, 5000, MarkdownStyle::Ansi, 0x230e600f0b312fd3),
        (2, 60000, MarkdownStyle::Plain, 0x681a9d11585121bf),
        (2, 60000, MarkdownStyle::Ansi, 0x91b93b88d61e7d1d),
        (3, 40, MarkdownStyle::Plain, 0x21b5e5bbeecbed7f),
        (3, 40, MarkdownStyle::Ansi, 0x6d87721519a2bc47),
        (3, 700, MarkdownStyle::Plain, 0x28a1ef6aa5c5aedd),
        (3, 700, MarkdownStyle::Ansi, 0x42c165f3991b7a4b),
        (3, 5000, MarkdownStyle::Plain, 0x9811ae51c351755f),
        (3, 5000, MarkdownStyle::Ansi, 0xe521f52fe17e7d4f),
        (3, 60000, MarkdownStyle::Plain, 0x1afd212d2260b4ff),
        (3, 60000, MarkdownStyle::Ansi, 0xd8b103d6f995e5d7),
        (4, 40, MarkdownStyle::Plain, 0x4422672d37fc9ffb),
        (4, 40, MarkdownStyle::Ansi, 0xfff1e0701f3b5ae3),
        (4, 700, MarkdownStyle::Plain, 0x9f76b5be0b568fb6),
        (4, 700, MarkdownStyle::Ansi, 0x177470ead6668ae0),
        (4, 5000, MarkdownStyle::Plain, 0xb4c66e15573ab09b),
        (4, 5000, MarkdownStyle::Ansi, 0x401848eaafa30143),
        (4, 60000, MarkdownStyle::Plain, 0x37221f6d5347d8dd),
        (4, 60000, MarkdownStyle::Ansi, 0x279aeb5df397d149),
        (5, 40, MarkdownStyle::Plain, 0xa0fd44d01ddf3615),
        (5, 40, MarkdownStyle::Ansi, 0xe9bcd008b8a62ac9),
        (5, 700, MarkdownStyle::Plain, 0x1a77e9d4ceecdfdd),
        (5, 700, MarkdownStyle::Ansi, 0xcb8e1c0a35f80d89),
        (5, 5000, MarkdownStyle::Plain, 0xc1277ac36cbbc3a1),
        (5, 5000, MarkdownStyle::Ansi, 0x46b04bbb93771b89),
        (5, 60000, MarkdownStyle::Plain, 0xea65b7184c2ad921),
        (5, 60000, MarkdownStyle::Ansi, 0xec0b0c87d3d88569),
        (6, 40, MarkdownStyle::Plain, 0x984b9055c5235019),
        (6, 40, MarkdownStyle::Ansi, 0x4e901a52d8a52a05),
        (6, 700, MarkdownStyle::Plain, 0xade33612fb1c492d),
        (6, 700, MarkdownStyle::Ansi, 0x56699c38104729f1),
        (6, 5000, MarkdownStyle::Plain, 0x78c0a337b82cc839),
        (6, 5000, MarkdownStyle::Ansi, 0x9b864ff7784286e5),
        (6, 60000, MarkdownStyle::Plain, 0x22a6b55ceef67535),
        (6, 60000, MarkdownStyle::Ansi, 0xab0ee37789ec8559),
        (7, 40, MarkdownStyle::Plain, 0xeee14fa96969b8bf),
        (7, 40, MarkdownStyle::Ansi, 0xa83def6b64ad098b),
        (7, 700, MarkdownStyle::Plain, 0x38ef4eb2986054d4),
        (7, 700, MarkdownStyle::Ansi, 0x7bc3599d4ce9ea10),
        (7, 5000, MarkdownStyle::Plain, 0x681739b970905d57),
        (7, 5000, MarkdownStyle::Ansi, 0x91a99c13b9d9cd5b),
        (7, 60000, MarkdownStyle::Plain, 0xec95cd1c460ff952),
        (7, 60000, MarkdownStyle::Ansi, 0x0e1279a652d8cf82),
        (8, 40, MarkdownStyle::Plain, 0xe559d6d703af432d),
        (8, 40, MarkdownStyle::Ansi, 0x935ed06e376f64a9),
        (8, 700, MarkdownStyle::Plain, 0x9c094da08771464d),
        (8, 700, MarkdownStyle::Ansi, 0x94481397dc6c77c9),
        (8, 5000, MarkdownStyle::Plain, 0x7901ebfb074f890d),
        (8, 5000, MarkdownStyle::Ansi, 0xce4fef0de3c73235),
        (8, 60000, MarkdownStyle::Plain, 0x42ddb9a383599ccd),
        (8, 60000, MarkdownStyle::Ansi, 0x519644a78e01c175),
    ];

    fn repeat_to(kind: &str, len: usize) -> String {
        let mut s = String::new();
        while s.len() < len {
            s.push_str(kind);
        }
        s
    }

    /// Feeds `text` in deltas of about `piece` bytes (on char boundaries).
    fn render(style: MarkdownStyle, text: &str, piece: usize) -> (String, MarkdownStream) {
        let mut md = MarkdownStream::new(style);
        let mut out = String::new();
        let mut start = 0;
        while start < text.len() {
            let mut end = start.saturating_add(piece).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            out.push_str(&md.push(&text[start..end]));
            assert!(md.held() <= MAX_HELD, "held {} bytes", md.held());
            start = end;
        }
        out.push_str(&md.finish());
        (out, md)
    }

    fn fnv(s: &str) -> u64 {
        s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    #[test]
    fn lines_under_the_cap_render_as_before_whatever_the_deltas() {
        assert_eq!(GOLDEN.len(), KINDS.len() * 8);
        for &(kind, len, style, hash) in GOLDEN {
            let line = repeat_to(KINDS[kind], len);
            assert!(line.len() < MAX_HELD);
            let text = format!("{line}\nafter\n```\n{line}\r\n```\n{line}");
            for piece in [usize::MAX, 4096, 61] {
                let (out, _) = render(style, &text, piece);
                assert_eq!(
                    fnv(&out),
                    hash,
                    "kind {kind}, {len} bytes, {style:?}, deltas of {piece}"
                );
            }
        }
    }

    #[test]
    fn a_long_prose_line_streams_with_bounded_memory_and_linear_work() {
        let line = repeat_to("lorem ipsum dolor sit amet ", 2 << 20);
        for piece in [16, 1000, usize::MAX] {
            let (out, md) = render(MarkdownStyle::Plain, &line, piece);
            assert_eq!(out, format!("{}\n", line.trim_end()), "deltas of {piece}");
            // Each byte is searched once when it arrives, once more when a cut carries
            // it over, and rendered once at its cut.
            assert!(md.work <= 4 * line.len(), "{} bytes of work", md.work);
        }
    }

    #[test]
    fn each_delta_is_searched_once_until_the_line_ends() {
        let mut md = MarkdownStream::new(MarkdownStyle::Plain);
        md.push("word");
        for _ in 0..1000 {
            let before = md.work;
            assert_eq!(md.push(" word"), " word");
            // The delta is looked at twice (line ends, markup), not the line so far.
            assert!(
                md.work - before <= 2 * " word".len(),
                "{}",
                md.work - before
            );
        }
        assert!(md.held() < MAX_HELD);
    }

    #[test]
    fn a_long_marked_up_line_renders_as_if_whole_when_cuts_fall_between_words() {
        let unit = "lorem *ipsum* dolor `sit` **amet** ";
        let line = format!("see `code` and {}", repeat_to(unit, 1 << 20));
        let plain_unit = "lorem ipsum dolor sit amet ";
        let expected = format!(
            "see code and {}\n",
            repeat_to(unit, 1 << 20)
                .replace(unit, plain_unit)
                .trim_end()
        );
        for piece in [16, 5000, usize::MAX] {
            let (out, md) = render(MarkdownStyle::Plain, &line, piece);
            assert_eq!(out, expected, "deltas of {piece}");
            assert!(md.work <= 4 * line.len(), "{} bytes of work", md.work);
        }
        let (ansi, _) = render(MarkdownStyle::Ansi, &line, 777);
        assert!(ansi.starts_with("see \x1b[36mcode\x1b[0m and lorem \x1b[3mipsum\x1b[0m"));
        assert!(
            ansi.ends_with("\x1b[1mamet\x1b[0m\n"),
            "{}",
            &ansi[ansi.len() - 40..]
        );
    }

    #[test]
    fn cuts_never_drop_or_repeat_a_byte() {
        // Markup spread over cuts, words longer than the cap, whitespace runs.
        let mut line = String::from("start **bold ");
        line.push_str(&"x".repeat(MAX_HELD + 10));
        line.push_str("** then _a ");
        line.push_str(&" ".repeat(MAX_CARRY + 100));
        line.push_str(&repeat_to("é*z ", 3 * MAX_HELD));
        line.push_str("end");
        for piece in [13, 4096, usize::MAX] {
            let (out, _) = render(MarkdownStyle::Plain, &line, piece);
            let strip = |s: &str| s.replace(['*', '_'], "");
            assert_eq!(
                strip(&out),
                format!("{}\n", strip(&line)),
                "deltas of {piece}"
            );
        }
    }

    #[test]
    fn long_code_lines_stay_verbatim_and_do_not_close_the_fence() {
        let code = repeat_to("let x = a * b_c; ", 3 * MAX_HELD);
        let text = format!(
            "```\n{code}\r\n```{}\nstill code\n```\n*done*\n",
            " ".repeat(MAX_HELD)
        );
        let (plain, _) = render(MarkdownStyle::Plain, &text, 999);
        assert_eq!(
            plain,
            format!(
                "    {code}\n    ```{}\n    still code\ndone\n",
                " ".repeat(MAX_HELD)
            )
        );
        let (ansi, _) = render(MarkdownStyle::Ansi, &text, 999);
        assert!(ansi.contains(&format!("\n{code}\n```")));
        // An indented code line and a would-be fence opener print as they are.
        for line in [format!("    {code}"), format!("```{code}")] {
            let (out, _) = render(MarkdownStyle::Plain, &format!("{line}\n*a*\n"), 500);
            assert_eq!(out, format!("{line}\na\n"));
        }
    }

    #[test]
    fn a_cut_crlf_line_end_is_not_printed() {
        let line = "y".repeat(MAX_HELD + 5);
        let text = format!("```\n{line}\r\n```\n");
        let mut md = MarkdownStream::new(MarkdownStyle::Ansi);
        let mut out = md.push(&format!("```\n{line}\r"));
        assert!(md.mid_line());
        out.push_str(&md.push("\n```\n"));
        assert_eq!(
            out,
            format!("\x1b[2m```\x1b[0m\n{line}\n\x1b[2m```\x1b[0m\n")
        );
        assert_eq!(render(MarkdownStyle::Ansi, &text, 3).0, out);
    }
}
