//! Markdown to terminal lines: headings, paragraphs, emphasis, inline code, links, lists,
//! block quotes, rules, fenced code (highlighted by [`super::highlight`]) and tables
//! (drawn by [`super::table`] with box rules, cells wrapped to the width).
//!
//! Lines come out width-independent (the screen wraps them) except tables, which are
//! laid out for the width given; source line breaks inside a paragraph are kept, so
//! rendering a growing prefix of a streamed answer only ever adds lines at the end. With
//! [`Streaming::Partial`], a code block whose closing fence has not arrived yet is left
//! open, so its fence is not committed too early, and a table that may still grow (or a
//! trailing paragraph of `|` rows that may become one) is not settled: [`Rendered`] says
//! how many lines are final.
//!
//! It knows nothing about cells, streaming state or the screen.

use pulldown_cmark::{CodeBlockKind, Event as Md, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::{highlight_line, plain_code_style};
use super::table::TableBuild;
use super::wrap::sanitize;

/// Whether the source is a whole answer or a prefix of one still streaming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streaming {
    /// The answer is complete.
    Complete,
    /// More text may follow.
    Partial,
}

/// The width tables are laid out for when the caller knows none.
pub const DEFAULT_WIDTH: u16 = 100;

/// Rendered lines, and how many of them are final.
#[derive(Debug, Default)]
pub struct Rendered {
    /// The lines.
    pub lines: Vec<Line<'static>>,
    /// The first `settled` lines stay as they are however the source goes on.
    pub settled: usize,
}

/// Renders Markdown `source` to styled lines, tables laid out for [`DEFAULT_WIDTH`].
pub fn render_markdown(source: &str, streaming: Streaming) -> Vec<Line<'static>> {
    render(source, streaming, DEFAULT_WIDTH).lines
}

/// Renders Markdown `source` to styled lines, tables laid out for `width` columns.
pub fn render(source: &str, streaming: Streaming, width: u16) -> Rendered {
    let source = sanitize(source);
    let mut options = Options::empty();
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    options.insert(Options::ENABLE_TABLES);
    let mut r = Renderer {
        width,
        ..Renderer::default()
    };
    // Where the last table and the last paragraph began (line, source offset), and
    // whether anything followed the table.
    let mut table_end: Option<usize> = None;
    let mut after_table = false;
    let mut paragraph: Option<(usize, usize)> = None;
    for (event, range) in Parser::new_ext(&source, options).into_offset_iter() {
        let ends_table = matches!(event, Md::End(TagEnd::Table));
        if table_end.is_some() && !ends_table {
            after_table = true;
        }
        if matches!(event, Md::Start(Tag::Table(_))) {
            table_end = None;
            after_table = false;
        }
        let starts_paragraph = matches!(event, Md::Start(Tag::Paragraph));
        r.event(event, &source[range.clone()], streaming);
        if starts_paragraph {
            // After its blank line: the paragraph's first line comes next.
            paragraph = Some((r.lines.len(), range.start));
        }
        if ends_table {
            table_end = Some(range.end);
        }
    }
    r.flush_line();
    let mut settled = r.lines.len();
    if streaming == Streaming::Partial {
        if let (Some(end), Some(start)) = (table_end, r.table_start)
            && !after_table
            && !source[end.min(source.len())..].contains('\n')
        {
            settled = start;
        }
        // A last paragraph with a `|` line may be a table's header whose delimiter row
        // has not arrived yet.
        if let Some((line, offset)) = paragraph
            && source[offset..]
                .lines()
                .any(|l| l.trim_start().starts_with('|'))
        {
            settled = settled.min(line);
        }
    }
    Rendered {
        lines: r.lines,
        settled,
    }
}

/// A block that prefixes the lines inside it.
enum Container {
    Quote,
    Item {
        /// The marker for the first line (taken when used), e.g. "• " or "2. ".
        marker: Option<String>,
        width: usize,
    },
}

#[derive(Default)]
struct Renderer {
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    line_style: Style,
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// For each open list, the next number (None for bullets).
    lists: Vec<Option<u64>>,
    /// Inside a code block: its language and text so far.
    code: Option<(String, bool, String)>,
    link: Option<String>,
    needs_blank: bool,
    item_fresh: bool,
    /// The width tables are laid out for.
    width: u16,
    /// The table being read.
    table: Option<TableBuild>,
    /// The line the last table began at.
    table_start: Option<usize>,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, patch: Style) {
        let style = self.style().patch(patch);
        self.styles.push(style);
    }

    fn prefix(&mut self) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        for c in &mut self.containers {
            match c {
                Container::Quote => spans.push(Span::styled("│ ", Style::new().dim())),
                Container::Item { marker, width } => match marker.take() {
                    Some(m) => spans.push(Span::styled(
                        m,
                        Style::new().fg(ratatui::style::Color::Blue),
                    )),
                    None => spans.push(Span::raw(" ".repeat(*width))),
                },
            }
        }
        spans
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if let Some(table) = self.table.as_mut().filter(|t| t.in_cell) {
            table.push(text, style);
            return;
        }
        for (i, part) in text.split('\n').enumerate() {
            if i > 0 {
                self.break_line();
            }
            if part.is_empty() {
                continue;
            }
            if self.current.is_empty() {
                self.current = self.prefix();
            }
            self.current.push(Span::styled(part.to_string(), style));
        }
    }

    fn break_line(&mut self) {
        if self.current.is_empty() {
            self.current = self.prefix();
        }
        self.flush_line();
    }

    fn flush_line(&mut self) {
        if !self.current.is_empty() {
            let spans = std::mem::take(&mut self.current);
            self.lines.push(Line::from(spans).style(self.line_style));
        }
    }

    fn blank(&mut self) {
        let quotes = self
            .containers
            .iter()
            .filter(|c| matches!(c, Container::Quote))
            .count();
        let text = "│ ".repeat(quotes);
        self.lines.push(Line::from(Span::styled(
            text.trim_end().to_string(),
            Style::new().dim(),
        )));
    }

    fn start_block(&mut self) {
        self.flush_line();
        if self.needs_blank && !self.lines.is_empty() && !self.item_fresh {
            self.blank();
        }
        self.needs_blank = false;
        self.item_fresh = false;
    }

    fn end_block(&mut self) {
        self.flush_line();
        self.needs_blank = true;
    }

    fn event(&mut self, event: Md<'_>, raw: &str, streaming: Streaming) {
        match event {
            Md::Start(tag) => self.start(tag),
            Md::End(tag) => self.end(tag, raw, streaming),
            Md::Text(text) => {
                if let Some((_, _, code)) = &mut self.code {
                    code.push_str(&text);
                } else {
                    let style = self.style();
                    self.push_text(&text, style);
                }
            }
            Md::Code(text) => {
                let style = self.style().patch(plain_code_style());
                self.push_text(&text, style);
            }
            Md::InlineMath(text) | Md::DisplayMath(text) => {
                let style = self.style();
                self.push_text(&text, style);
            }
            Md::Html(text) | Md::InlineHtml(text) => {
                let style = self.style().dim();
                self.push_text(text.trim_end_matches('\n'), style);
                if raw.ends_with('\n') {
                    self.flush_line();
                }
            }
            Md::FootnoteReference(name) => {
                let style = self.style();
                self.push_text(&format!("[^{name}]"), style);
            }
            Md::SoftBreak | Md::HardBreak => self.break_line(),
            Md::Rule => {
                self.start_block();
                self.push_text(&"─".repeat(24), Style::new().dim());
                self.end_block();
            }
            Md::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                let style = self.style();
                self.push_text(mark, style);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                let style = match level {
                    HeadingLevel::H1 => Style::new().bold().underlined(),
                    HeadingLevel::H2 => Style::new().bold(),
                    _ => Style::new().bold().italic(),
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let (lang, fenced) = match kind {
                    CodeBlockKind::Fenced(info) => (info.to_string(), true),
                    CodeBlockKind::Indented => (String::new(), false),
                };
                if fenced {
                    self.push_text(&format!("```{lang}"), Style::new().dim());
                    self.flush_line();
                }
                self.code = Some((lang, fenced, String::new()));
            }
            Tag::HtmlBlock => self.start_block(),
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.start_block();
                } else {
                    self.flush_line();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_line();
                if self.needs_blank {
                    self.blank();
                    self.needs_blank = false;
                }
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                let width = marker.chars().count();
                self.containers.push(Container::Item {
                    marker: Some(marker),
                    width,
                });
                self.item_fresh = true;
            }
            Tag::FootnoteDefinition(name) => {
                self.start_block();
                self.push_text(&format!("[^{name}]: "), Style::new().dim());
            }
            Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.start_block(),
            Tag::Table(aligns) => {
                self.start_block();
                self.table_start = Some(self.lines.len());
                self.table = Some(TableBuild {
                    aligns: aligns.into_iter().map(super::table::align).collect(),
                    ..TableBuild::default()
                });
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.start_row(true);
                }
                self.push_style(Style::new().bold());
            }
            Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.start_row(false);
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.start_cell();
                }
            }
            Tag::Emphasis => self.push_style(Style::new().italic()),
            Tag::Strong => self.push_style(Style::new().bold()),
            Tag::Strikethrough => self.push_style(Style::new().crossed_out()),
            Tag::Superscript | Tag::Subscript => self.push_style(Style::new()),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(
                    Style::new()
                        .fg(ratatui::style::Color::Blue)
                        .add_modifier(Modifier::UNDERLINED),
                );
            }
            Tag::Image { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(Style::new().italic());
                let style = self.style();
                self.push_text("[image: ", style);
            }
        }
    }

    fn end(&mut self, tag: TagEnd, raw: &str, streaming: Streaming) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.end_block(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_line();
                self.containers.pop();
                self.needs_blank = true;
            }
            TagEnd::CodeBlock => self.end_code(raw, streaming),
            TagEnd::List(_) => {
                self.flush_line();
                self.lists.pop();
                self.needs_blank = self.lists.is_empty();
            }
            TagEnd::Item => {
                self.flush_line();
                self.containers.pop();
                self.item_fresh = false;
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => self.end_block(),
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let prefix = self.prefix();
                    let used: usize = prefix.iter().map(|s| s.content.chars().count()).sum();
                    let width = usize::from(self.width).saturating_sub(used);
                    self.lines.extend(table.lines(width, &prefix));
                }
                self.end_block();
            }
            TagEnd::TableHead => {
                self.styles.pop();
            }
            TagEnd::TableRow => {}
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    t.in_cell = false;
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown: String = self
                        .current
                        .iter()
                        .rev()
                        .take(1)
                        .map(|s| s.content.to_string())
                        .collect();
                    if !url.is_empty() && shown != url && !url.starts_with('#') {
                        self.push_text(&format!(" ({url})"), Style::new().dim());
                    }
                }
            }
            TagEnd::Image => {
                let style = self.style();
                self.push_text("]", style);
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    self.push_text(&format!(" ({url})"), Style::new().dim());
                }
            }
        }
    }

    fn end_code(&mut self, raw: &str, streaming: Streaming) {
        let Some((lang, fenced, code)) = self.code.take() else {
            return;
        };
        let code = code.strip_suffix('\n').unwrap_or(&code);
        if !code.is_empty() || !fenced {
            for line in code.split('\n') {
                let mut spans = self.prefix();
                if !fenced {
                    spans.push(Span::raw("    "));
                }
                spans.extend(highlight_line(&lang, line));
                self.lines.push(Line::from(spans));
            }
        }
        if fenced && (streaming == Streaming::Complete || fence_closed(raw)) {
            self.push_text("```", Style::new().dim());
        }
        self.end_block();
    }
}

/// True when a fenced code block's source ends with its closing fence.
fn fence_closed(raw: &str) -> bool {
    let mut lines = raw.trim_end_matches('\n').lines();
    let Some(first) = lines.next() else {
        return false;
    };
    let opener = first.trim_start();
    let fence_char = opener.chars().next().unwrap_or('`');
    let fence_len = opener.chars().take_while(|c| *c == fence_char).count();
    match lines.last() {
        Some(last) => {
            let last = last.trim();
            last.len() >= fence_len && last.chars().all(|c| c == fence_char)
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::texts;

    fn md(src: &str) -> Vec<String> {
        texts(&render_markdown(src, Streaming::Complete))
    }

    #[test]
    fn paragraphs_keep_source_line_breaks_and_blank_lines_between_blocks() {
        assert_eq!(
            md("# Title\n\nfirst line\nsecond line\n\nnext"),
            vec!["Title", "", "first line", "second line", "", "next"]
        );
    }

    #[test]
    fn lists_nest_and_number() {
        assert_eq!(
            md("- a\n- b\n  - c\n\n1. one\n2. two"),
            vec!["• a", "• b", "  • c", "", "1. one", "2. two"]
        );
    }

    #[test]
    fn emphasis_and_inline_code_are_styled() {
        let lines = render_markdown("a **b** *c* `d`", Streaming::Complete);
        let spans = &lines[0].spans;
        assert_eq!(spans[1].content, "b");
        assert!(spans[1].style.add_modifier.contains(Modifier::BOLD));
        assert!(spans[3].style.add_modifier.contains(Modifier::ITALIC));
        assert_eq!(spans[5].style.fg, plain_code_style().fg);
    }

    #[test]
    fn links_show_their_target() {
        assert_eq!(
            md("see [docs](https://example.com)"),
            vec!["see docs (https://example.com)"]
        );
    }

    #[test]
    fn fenced_code_keeps_fences_and_highlights() {
        let lines = render_markdown("```rust\nfn main() {}\n```\n", Streaming::Complete);
        assert_eq!(texts(&lines), vec!["```rust", "fn main() {}", "```"]);
        assert_eq!(lines[1].spans[0].content, "fn");
    }

    #[test]
    fn open_fence_while_streaming_is_not_closed() {
        let src = "text\n\n```go\nx := 1\n";
        assert_eq!(
            texts(&render_markdown(src, Streaming::Partial)),
            vec!["text", "", "```go", "x := 1"]
        );
        let src = "```go\nx := 1\n```\n";
        assert_eq!(
            texts(&render_markdown(src, Streaming::Partial)),
            vec!["```go", "x := 1", "```"]
        );
    }

    #[test]
    fn growing_prefix_only_appends_lines() {
        let full =
            "# Plan\n\n1. read\n2. edit\n\nSome text\nmore text\n\n```sh\nls\n```\n\nDone.\n";
        let mut previous: Vec<String> = Vec::new();
        for (i, _) in full.match_indices('\n') {
            let now = texts(&render_markdown(&full[..=i], Streaming::Partial));
            assert!(now.len() >= previous.len(), "at {i}: {now:?}");
            assert_eq!(&now[..previous.len()], &previous[..], "at {i}");
            previous = now;
        }
    }

    #[test]
    fn a_table_wider_than_the_width_wraps_its_cells_and_keeps_inline_markup() {
        let src = "| name | what |\n|---|---|\n| **bold** | a description far too long for one row of thirty columns |\n";
        let lines = render(src, Streaming::Complete, 30).lines;
        let shown = texts(&lines);
        for line in &shown {
            assert!(line.chars().count() <= 30, "{line:?} in {shown:#?}");
        }
        let words: String = shown
            .iter()
            .filter(|l| l.starts_with('│'))
            .map(|l| l.trim_matches('│').to_string())
            .collect::<Vec<_>>()
            .join(" ");
        for word in "a description far too long for one row of thirty columns".split(' ') {
            assert!(words.contains(word), "{word} cut: {shown:#?}");
        }
        let bold = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content == "bold")
            .unwrap();
        assert!(bold.style.add_modifier.contains(Modifier::BOLD));
        assert!(!shown.iter().any(|l| l.contains("**")), "{shown:#?}");
    }

    #[test]
    fn a_table_still_streaming_is_not_settled() {
        let head = "| a | b |\n";
        assert_eq!(render(head, Streaming::Partial, 40).settled, 0);
        let table = "| a | b |\n|---|---|\n| 1 | 2 |\n";
        assert_eq!(render(table, Streaming::Partial, 40).settled, 0);
        let done = render(&format!("{table}\nnext\n"), Streaming::Partial, 40);
        assert_eq!(done.settled, done.lines.len());
    }

    #[test]
    fn block_quotes_are_prefixed() {
        assert_eq!(md("> quoted\n> more"), vec!["│ quoted", "│ more"]);
    }
}
