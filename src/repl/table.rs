//! Markdown tables for the line REPL: the `|` rows of a table, held until the table
//! ends, drawn with aligned columns — ASCII rules when plain (a pipe, `NO_COLOR`), box
//! rules when styled — and cells wrapped to the width (the layout is
//! [`crate::text_table`]'s), never cut. Inline Markdown inside a cell is rendered as in
//! plain text (markers removed); a styled header is bold.
//!
//! It knows nothing of streaming: the caller hands it whole lines. The text is already
//! neutralized by the caller.

use crate::text_table::{Align, Piece, layout, line_width, padding};

use super::markdown::{MarkdownStyle, render_inline, styled};

/// True for a line that may be a table row.
pub fn is_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// The cells of a row: split at `|` not escaped by `\`, without the outer pipes.
fn cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = match line.strip_suffix('|') {
        Some(rest) if !rest.ends_with('\\') => rest,
        _ => line,
    };
    let mut out = vec![String::new()];
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '|' if !escaped => out.push(String::new()),
            _ => {
                if let Some(cell) = out.last_mut() {
                    if escaped && c != '|' {
                        cell.push('\\');
                    }
                    if c != '\\' || escaped {
                        cell.push(c);
                    }
                }
            }
        }
        escaped = c == '\\' && !escaped;
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The alignments of a delimiter row (`|:--|--:|`), or `None` when it is not one.
fn delimiter(line: &str) -> Option<Vec<Align>> {
    let row = cells(line);
    row.iter()
        .map(|cell| {
            let left = cell.starts_with(':');
            let right = cell.ends_with(':');
            let dashes = cell.trim_matches(':');
            if dashes.is_empty() || !dashes.chars().all(|c| c == '-') {
                return None;
            }
            Some(match (left, right) {
                (true, true) => Align::Center,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// The table the held `rows` make, drawn in `width` columns with a newline after each
/// line; `None` when they are no table (no delimiter row second).
pub fn render(rows: &[String], style: MarkdownStyle, width: usize) -> Option<String> {
    let aligns = delimiter(rows.get(1)?)?;
    let bold = match style {
        MarkdownStyle::Plain => None,
        MarkdownStyle::Ansi => Some("1"),
    };
    let parsed: Vec<Vec<Vec<Piece<Option<&str>>>>> = rows
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(i, row)| {
            cells(row)
                .into_iter()
                .map(|cell| {
                    let text = render_inline(&cell, MarkdownStyle::Plain).0;
                    vec![Piece {
                        text,
                        style: if i == 0 { bold } else { None },
                    }]
                })
                .collect()
        })
        .collect();
    let laid = layout(&parsed, width);
    let (h, v, corners) = match style {
        MarkdownStyle::Plain => ("-", "|", ["+", "+", "+", "+", "+", "+", "+", "+", "+"]),
        MarkdownStyle::Ansi => ("─", "│", ["┌", "┬", "┐", "├", "┼", "┤", "└", "┴", "┘"]),
    };
    let rule = |left: &str, mid: &str, right: &str| {
        let parts: Vec<String> = laid.widths.iter().map(|w| h.repeat(w + 2)).collect();
        let line = format!("{left}{}{right}", parts.join(mid));
        match style {
            MarkdownStyle::Plain => line,
            MarkdownStyle::Ansi => styled("2", &line),
        }
    };
    let bar = match style {
        MarkdownStyle::Plain => v.to_string(),
        MarkdownStyle::Ansi => styled("2", v),
    };
    let mut out = String::new();
    out.push_str(&rule(corners[0], corners[1], corners[2]));
    out.push('\n');
    for (r, row) in laid.rows.iter().enumerate() {
        if r == 1 {
            out.push_str(&rule(corners[3], corners[4], corners[5]));
            out.push('\n');
        }
        let height = row.iter().map(Vec::len).max().unwrap_or(1);
        for i in 0..height {
            out.push_str(&bar);
            for (c, cell) in row.iter().enumerate() {
                let empty = Vec::new();
                let line = cell.get(i).unwrap_or(&empty);
                let align = aligns.get(c).copied().unwrap_or_default();
                let (before, after) = padding(align, line_width(line), laid.widths[c]);
                out.push_str(&" ".repeat(before + 1));
                for piece in line {
                    match piece.style {
                        Some(code) => out.push_str(&styled(code, &piece.text)),
                        None => out.push_str(&piece.text),
                    }
                }
                out.push_str(&" ".repeat(after + 1));
                out.push_str(&bar);
            }
            out.push('\n');
        }
    }
    out.push_str(&rule(corners[6], corners[7], corners[8]));
    out.push('\n');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn a_plain_table_has_ascii_rules_and_aligned_columns() {
        let t = rows("| file | lines |\n|:---|---:|\n| **main.rs** | 12 |\n| a\\|b | 1200 |");
        let out = render(&t, MarkdownStyle::Plain, 80).unwrap();
        assert_eq!(
            out,
            "+---------+-------+\n\
             | file    | lines |\n\
             +---------+-------+\n\
             | main.rs |    12 |\n\
             | a|b     |  1200 |\n\
             +---------+-------+\n"
        );
    }

    #[test]
    fn a_wide_table_wraps_within_the_width_and_cuts_nothing() {
        let long = "a description far too long to fit in a narrow pipe of forty columns";
        let t = rows(&format!("| k | v |\n|---|---|\n| key | {long} |"));
        let out = render(&t, MarkdownStyle::Plain, 40).unwrap();
        for line in out.lines() {
            assert!(line.chars().count() <= 40, "{line:?}\n{out}");
        }
        let words: String = out.lines().collect::<Vec<_>>().join(" ");
        for word in long.split(' ') {
            assert!(words.contains(word), "{word}:\n{out}");
        }
    }

    #[test]
    fn rows_without_a_delimiter_are_no_table() {
        assert!(render(&rows("| a | b |\n| c | d |"), MarkdownStyle::Plain, 80).is_none());
        assert!(render(&rows("| a | b |"), MarkdownStyle::Plain, 80).is_none());
    }
}
