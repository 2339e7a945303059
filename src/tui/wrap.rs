//! Text shaping shared by every cell: making untrusted text safe to draw (no control
//! characters reach the terminal, tabs become spaces) and word-wrapping styled lines to
//! a width, keeping a line's leading indent on its continuation rows.
//!
//! It knows nothing about cells, Markdown or the screen; callers hand it lines.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// How many columns a tab becomes.
const TAB_WIDTH: usize = 4;

/// Returns `text` with tabs expanded to spaces and every other control character
/// (escape sequences from tool output included) removed, except newlines.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str(&" ".repeat(TAB_WIDTH)),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// One character as a one-row widget shows it, keeping character positions: a tab as a
/// space, any other control character as `?`.
pub fn visible(c: char) -> char {
    match c {
        '\t' => ' ',
        c if c.is_control() => '?',
        c => c,
    }
}

/// Display width of a line in terminal columns.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| s.content.width()).sum()
}

/// Wraps every line to `width` columns (see [`wrap_line`]).
pub fn wrap_lines(lines: &[Line<'static>], width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        out.extend(wrap_line(line, width));
    }
    out
}

/// One grapheme with its style and width.
struct Piece<'a> {
    text: &'a str,
    style: Style,
    width: usize,
}

/// Where a line's text starts after its leading spaces and list or status marker
/// (`✓ `, `└ `, `- `, `12. `), so continuation rows line up under the text.
fn hanging_indent(pieces: &[Piece<'_>]) -> usize {
    let spaces = pieces.iter().take_while(|p| p.text == " ").count();
    let rest = &pieces[spaces..];
    let digits = rest
        .iter()
        .take_while(|p| p.text.len() == 1 && p.text.as_bytes()[0].is_ascii_digit())
        .count();
    let marker = match rest.get(digits) {
        Some(p) if digits > 0 && digits <= 3 && (p.text == "." || p.text == ")") => digits + 1,
        Some(p) if digits == 0 && !p.text.chars().any(char::is_alphanumeric) && p.text != " " => 1,
        _ => 0,
    };
    if marker > 0 && rest.get(marker).is_some_and(|p| p.text == " ") {
        let marker_width: usize = rest[..=marker].iter().map(|p| p.width).sum();
        spaces + marker_width
    } else {
        spaces
    }
}

/// The width of a diff line's gutter — leading spaces in a span of their own, then a
/// span that is exactly `+` or `-`, then the text (as the diff cells build them) — or
/// `None` for any other line.
fn diff_gutter(line: &Line<'_>) -> Option<usize> {
    let [indent, mark, _, ..] = line.spans.as_slice() else {
        return None;
    };
    let spaces = indent.content.chars().all(|c| c == ' ');
    let sign = mark.content == "+" || mark.content == "-";
    (spaces && sign).then(|| indent.content.chars().count() + 1)
}

/// Wraps one styled line to `width` columns: breaks after spaces where it can, inside a
/// word when a word is longer than the row, and indents continuation rows to where the
/// line's text starts (see [`hanging_indent`]; at most half the width).
pub fn wrap_line(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    if line_width(line) <= width {
        return vec![line.clone()];
    }
    let pieces: Vec<Piece<'_>> = line
        .spans
        .iter()
        .flat_map(|span| {
            let style = span.style;
            span.content.graphemes(true).map(move |g| Piece {
                text: g,
                style,
                width: g.width(),
            })
        })
        .collect();
    let gutter = diff_gutter(line).filter(|g| *g < width);
    let indent = gutter.unwrap_or_else(|| hanging_indent(&pieces).min(width / 2));
    let space = Piece {
        text: " ",
        style: Style::default(),
        width: 1,
    };

    let mut rows: Vec<Vec<&Piece<'_>>> = Vec::new();
    let mut row: Vec<&Piece<'_>> = Vec::new();
    let mut row_width = 0usize;
    let mut row_start_len = 0usize; // pieces in `row` that are indent
    let mut break_at: Option<usize> = None; // index in `row` after a space
    for piece in &pieces {
        // The pieces moved from the full row to the next one; `piece` goes after them.
        let mut tail: Vec<&Piece<'_>> = Vec::new();
        let wrapped = row_width + piece.width > width && row.len() > row_start_len;
        if wrapped {
            tail = match break_at {
                _ if piece.text == " " => Vec::new(),
                Some(at) if at > row_start_len && at < row.len() => row.split_off(at),
                _ => Vec::new(),
            };
            while row.last().is_some_and(|p| p.text == " ") && row.len() > row_start_len {
                row.pop();
            }
            rows.push(std::mem::take(&mut row));
            match gutter {
                // A diff line's `+`/`-` gutter, in its colour, on every row.
                Some(g) => row.extend(pieces[..g].iter()),
                None => row.extend(std::iter::repeat_n(&space, indent)),
            }
            row_start_len = row.len();
            row_width = indent;
            break_at = None;
        }
        for p in tail.into_iter().chain([piece]) {
            // A continuation row does not start with a space.
            if wrapped && p.text == " " && row.len() == row_start_len {
                continue;
            }
            row_width += p.width;
            row.push(p);
            if p.text == " " {
                break_at = Some(row.len());
            }
        }
    }
    if row.len() > row_start_len || rows.is_empty() {
        rows.push(row);
    }
    rows.into_iter()
        .map(|row| {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for p in row {
                match spans.last_mut() {
                    Some(last) if last.style == p.style => {
                        last.content.to_mut().push_str(p.text);
                    }
                    _ => spans.push(Span::styled(p.text.to_string(), p.style)),
                }
            }
            let mut out = Line::from(spans).style(line.style);
            out.alignment = line.alignment;
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::texts;
    use ratatui::style::Stylize;

    /// The rows of the unstyled line `text` wrapped at `width`.
    fn wrapped(text: &str, width: u16) -> Vec<String> {
        texts(&wrap_line(&Line::from(text.to_string()), width))
    }

    #[test]
    fn sanitize_drops_escape_sequences_and_expands_tabs() {
        assert_eq!(sanitize("a\x1b[31mb\tc\r\nd"), "a[31mb    c\nd");
    }

    #[test]
    fn short_lines_are_untouched() {
        assert_eq!(wrapped("hello world", 20), ["hello world"]);
    }

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(
            wrapped("the quick brown fox jumps", 10),
            ["the quick", "brown fox", "jumps"]
        );
    }

    #[test]
    fn breaks_long_words() {
        assert_eq!(wrapped("abcdefghijkl", 5), ["abcde", "fghij", "kl"]);
    }

    #[test]
    fn keeps_indent_on_continuation_rows() {
        assert_eq!(
            wrapped("  one two three four", 10),
            ["  one two", "  three", "  four"]
        );
    }

    #[test]
    fn continuation_rows_hang_under_the_text_after_a_marker() {
        assert_eq!(
            wrapped("✓ grep a long pattern in .", 14),
            ["✓ grep a long", "  pattern in ."]
        );
        assert_eq!(
            wrapped("  └ No matches for the pattern", 16),
            ["  └ No matches", "    for the", "    pattern"]
        );
        assert_eq!(
            wrapped("12. first item of the list", 12),
            ["12. first", "    item of", "    the list"]
        );
        // A word, or a symbol not followed by a space, is not a marker.
        assert_eq!(wrapped("go ahead now", 8), ["go ahead", "now"]);
        assert_eq!(wrapped("(see) the docs", 9), ["(see) the", "docs"]);
    }

    #[test]
    fn keeps_styles_across_rows() {
        let line = Line::from(vec!["aaa ".into(), "bbb ccc".bold()]);
        let rows = wrap_line(&line, 7);
        assert_eq!(texts(&rows), vec!["aaa bbb", "ccc"]);
        assert_eq!(rows[1].spans[0].style, Style::new().bold());
    }

    #[test]
    fn wide_characters_count_double() {
        assert_eq!(wrapped("日本語テキスト", 6), ["日本語", "テキス", "ト"]);
    }
}
