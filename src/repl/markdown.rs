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
//! Consecutive `|` lines are held until the table they make ends, then drawn with
//! aligned columns by [`super::table`] (at most [`MAX_HELD`] bytes of them are held; past
//! that the rows so far are drawn and the rest start anew).
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

/// The width tables are laid out for when the caller says none.
pub const DEFAULT_WIDTH: usize = 80;

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
    /// The `|` rows of a table being held until it ends (at most [`MAX_HELD`] bytes).
    table: Vec<String>,
    /// Bytes in `table`.
    table_bytes: usize,
    /// The width tables are laid out for.
    width: usize,
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
            table: Vec::new(),
            table_bytes: 0,
            width: DEFAULT_WIDTH,
            #[cfg(test)]
            work: 0,
        }
    }

    /// Lays tables out for `width` columns.
    pub fn with_width(mut self, width: usize) -> Self {
        self.width = width.max(20);
        self
    }

    /// Prints the held table rows: as a table when they make one, else as lines.
    fn flush_table(&mut self, out: &mut String) {
        if self.table.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.table);
        self.table_bytes = 0;
        if let Some(table) = super::table::render(&rows, self.style, self.width) {
            out.push_str(&table);
            return;
        }
        for row in rows {
            if let Some(text) = self.render_line(&row) {
                out.push_str(&text);
                out.push('\n');
            }
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
        self.flush_table(&mut out);
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
        if segment != Segment::Start {
            self.flush_table(out);
        }
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
        if self.fence.is_none() && emitted == 0 && super::table::is_row(line) {
            // Held until the table ends: its columns depend on every row.
            if self.table_bytes + line.len() > MAX_HELD {
                self.flush_table(out);
            }
            self.table_bytes += line.len();
            self.table.push(line.to_string());
            return;
        }
        self.flush_table(out);
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

pub(super) fn styled(code: &str, text: &str) -> String {
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
pub(super) fn render_inline(line: &str, style: MarkdownStyle) -> (String, bool) {
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
#[path = "markdown_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "markdown_long_line_tests.rs"]
mod long_line_tests;
