//! Streaming Markdown for the line REPL: turns the assistant's text deltas into readable
//! plain text (piped stdout, `NO_COLOR`) or lightly styled text (a terminal), line by
//! line, as the text arrives.
//!
//! Block structure (fences, headings, lists, quotes, rules) is decided per line; inline
//! markup (emphasis, code, links) is parsed by pulldown-cmark one line at a time, so a
//! construct spread over several lines stays as written. A prose line is streamed as it
//! comes while it has no markup character in it, so long paragraphs show up as they come.
//! It knows nothing of the agent or of events: text in, text out.

use pulldown_cmark::{CodeBlockKind, Event as Md, Options, Parser, Tag, TagEnd};

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

/// Renders a stream of Markdown text deltas.
#[derive(Debug)]
pub struct MarkdownStream {
    style: MarkdownStyle,
    /// The current line, not yet ended by `\n`.
    pending: String,
    /// Bytes of `pending` already printed (a streamed prose prefix).
    emitted: usize,
    fence: Option<Fence>,
}

impl MarkdownStream {
    /// A renderer in `style`.
    pub fn new(style: MarkdownStyle) -> Self {
        MarkdownStream {
            style,
            pending: String::new(),
            emitted: 0,
            fence: None,
        }
    }

    /// True when part of a line has been printed and its end has not.
    pub fn mid_line(&self) -> bool {
        self.emitted > 0
    }

    /// Takes a delta; returns what to print now.
    pub fn push(&mut self, delta: &str) -> String {
        let mut out = String::new();
        let mut rest = delta;
        while let Some(i) = rest.find('\n') {
            self.pending.push_str(&rest[..i]);
            let line = std::mem::take(&mut self.pending);
            self.finish_line(&line, &mut out);
            rest = &rest[i + 1..];
        }
        self.pending.push_str(rest);
        self.stream_prefix(&mut out);
        out
    }

    /// Ends the text (a turn or a model request finished): prints the unfinished line,
    /// ending it with a newline, and closes any open fence.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if !self.pending.is_empty() || self.emitted > 0 {
            let line = std::mem::take(&mut self.pending);
            self.finish_line(&line, &mut out);
        }
        self.fence = None;
        out
    }

    /// Prints the start of an unfinished prose line, up to its last complete word.
    fn stream_prefix(&mut self, out: &mut String) {
        if self.fence.is_some() || !self.pending.starts_with(char::is_alphabetic) {
            return;
        }
        let Some(stop) = self.pending.find(INLINE_SPECIALS) else {
            return self.stream_upto(self.pending.len(), out);
        };
        self.stream_upto(stop, out);
    }

    /// Prints `pending` up to `limit`, without trailing whitespace (which a paragraph
    /// drops at its end but keeps inside).
    fn stream_upto(&mut self, limit: usize, out: &mut String) {
        let head = self.pending[..limit].trim_end();
        if head.len() <= self.emitted {
            return;
        }
        out.push_str(&head[self.emitted..]);
        self.emitted = head.len();
    }

    fn finish_line(&mut self, line: &str, out: &mut String) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let emitted = std::mem::take(&mut self.emitted);
        // A streamed prefix is prose, never a fence line, so it always renders.
        let Some(text) = self.render_line(line) else {
            return;
        };
        match line.get(..emitted).and_then(|head| text.strip_prefix(head)) {
            Some(rest) if emitted > 0 => out.push_str(rest),
            _ if emitted > 0 => {
                out.push('\n');
                out.push_str(&text);
            }
            _ => out.push_str(&text),
        }
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
        Some(render_inline_line(line, self.style))
    }

    fn fence_line(&self, line: &str) -> Option<String> {
        match self.style {
            MarkdownStyle::Plain => None,
            MarkdownStyle::Ansi => Some(styled(DIM, line.trim())),
        }
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

/// Renders one non-fence, non-blank line.
fn render_inline_line(line: &str, style: MarkdownStyle) -> String {
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
                w.links.push((dest_url.to_string(), String::new()));
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
        return line.to_string();
    }
    w.reset_all();
    format!("{indent}{}", w.out)
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
    fn text(&mut self, t: &str) {
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
