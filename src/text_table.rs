//! Laying out a table of styled text for a terminal of a given width: how wide each
//! column is, and each cell's text word-wrapped into its column. A table that fits keeps
//! every cell on one line; one that does not gives each column at least its longest word
//! (or an even share when even those do not fit) and the rest of the room in proportion
//! to what each column lacks, then wraps the cells: text is wrapped, never cut.
//!
//! It is generic over the style a piece of text carries, so the TUI (ratatui styles) and
//! the line REPL (ANSI codes) share it; it knows nothing of Markdown, borders or
//! terminals. Widths are display columns (`unicode-width`).

use unicode_width::UnicodeWidthStr;

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<S> {
    /// The text (no newlines).
    pub text: String,
    /// Its style.
    pub style: S,
}

/// How a column's cells sit in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    /// Left (the default).
    #[default]
    Left,
    /// Centred.
    Center,
    /// Right.
    Right,
}

/// One line of a laid-out cell: its pieces and their display width.
pub type CellLine<S> = Vec<Piece<S>>;

/// A laid-out table: column widths, and for each row each cell's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout<S> {
    /// The width of each column's text (borders and padding not included).
    pub widths: Vec<usize>,
    /// Rows, each with one entry per column: the cell's wrapped lines.
    pub rows: Vec<Vec<Vec<CellLine<S>>>>,
}

/// Columns each border and padding takes around `n` columns in `│ a │ b │`: one rule
/// per column plus one, and a space each side of every cell.
pub fn chrome(n: usize) -> usize {
    3 * n + 1
}

/// Lays `rows` (each a list of cells, each a list of pieces) out in `width` columns
/// including [`chrome`]. Rows shorter than the widest get empty cells.
pub fn layout<S: Clone>(rows: &[Vec<Vec<Piece<S>>>], width: usize) -> Layout<S> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return Layout {
            widths: Vec::new(),
            rows: Vec::new(),
        };
    }
    let mut natural = vec![0usize; columns];
    let mut longest_word = vec![0usize; columns];
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            natural[c] = natural[c].max(cell_width(cell));
            longest_word[c] = longest_word[c].max(longest(cell));
        }
    }
    let widths = column_widths(
        &natural,
        &longest_word,
        width.saturating_sub(chrome(columns)),
    );
    let rows = rows
        .iter()
        .map(|row| {
            (0..columns)
                .map(|c| match row.get(c) {
                    Some(cell) => wrap(cell, widths[c]),
                    None => vec![Vec::new()],
                })
                .collect()
        })
        .collect();
    Layout { widths, rows }
}

/// Each column's width within `room` columns of text.
fn column_widths(natural: &[usize], longest_word: &[usize], room: usize) -> Vec<usize> {
    let natural: Vec<usize> = natural.iter().map(|w| (*w).max(1)).collect();
    if natural.iter().sum::<usize>() <= room {
        return natural;
    }
    let n = natural.len();
    let share = (room / n).max(1);
    // Each column gets its longest word when all of them fit, else at most an even share.
    let words_fit = longest_word.iter().sum::<usize>() <= room;
    let mut widths: Vec<usize> = natural
        .iter()
        .zip(longest_word)
        .map(|(nat, word)| {
            let floor = if words_fit { *word } else { (*word).min(share) };
            floor.clamp(1, *nat)
        })
        .collect();
    // The rest of the room in proportion to what each column still lacks.
    let mut left = room.saturating_sub(widths.iter().sum());
    let lacking: usize = natural.iter().zip(&widths).map(|(n, w)| n - w).sum();
    if lacking > 0 && left > 0 {
        let total = left;
        for (w, nat) in widths.iter_mut().zip(&natural) {
            let gap = nat - *w;
            let add = (gap * total / lacking).min(left);
            *w += add;
            left -= add;
        }
        // What rounding left over goes to the columns still lacking, left to right.
        for (w, nat) in widths.iter_mut().zip(&natural) {
            if left == 0 {
                break;
            }
            if *w < *nat {
                *w += 1;
                left -= 1;
            }
        }
    }
    widths
}

fn cell_width<S>(cell: &[Piece<S>]) -> usize {
    cell.iter().map(|p| p.text.width()).sum()
}

fn longest<S>(cell: &[Piece<S>]) -> usize {
    let text: String = cell.iter().map(|p| p.text.as_str()).collect();
    text.split_whitespace()
        .map(UnicodeWidthStr::width)
        .max()
        .unwrap_or(0)
}

/// A word (or the space before one) with its pieces.
struct Token<S> {
    pieces: Vec<Piece<S>>,
    width: usize,
    space: bool,
}

/// Splits a cell into words and the spaces between them, keeping styles.
fn tokens<S: Clone>(cell: &[Piece<S>]) -> Vec<Token<S>> {
    let mut out: Vec<Token<S>> = Vec::new();
    for piece in cell {
        let mut rest = piece.text.as_str();
        while let Some(c) = rest.chars().next() {
            let space = c.is_whitespace();
            let end = rest
                .char_indices()
                .find(|(_, ch)| ch.is_whitespace() != space)
                .map_or(rest.len(), |(i, _)| i);
            let (part, tail) = rest.split_at(end);
            rest = tail;
            let text = if space {
                " ".to_string()
            } else {
                part.to_string()
            };
            let width = text.width();
            match out.last_mut() {
                Some(last) if last.space == space && !space => {
                    last.width += width;
                    last.pieces.push(Piece {
                        text,
                        style: piece.style.clone(),
                    });
                }
                Some(last) if last.space && space => {}
                _ => out.push(Token {
                    pieces: vec![Piece {
                        text,
                        style: piece.style.clone(),
                    }],
                    width,
                    space,
                }),
            }
        }
    }
    out
}

/// Word-wraps a cell to `width` columns; a word longer than that is broken.
fn wrap<S: Clone>(cell: &[Piece<S>], width: usize) -> Vec<CellLine<S>> {
    let width = width.max(1);
    let mut lines: Vec<CellLine<S>> = Vec::new();
    let mut line: CellLine<S> = Vec::new();
    let mut used = 0usize;
    for token in tokens(cell) {
        if token.space {
            if used > 0 && used < width {
                line.extend(token.pieces);
                used += 1;
            }
            continue;
        }
        if used > 0 && used + token.width > width {
            trim_end(&mut line);
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if token.width <= width {
            line.extend(token.pieces);
            used += token.width;
            continue;
        }
        // Longer than the column: character by character.
        for piece in token.pieces {
            let mut fresh = true;
            for ch in piece.text.chars() {
                let w = UnicodeWidthStr::width(ch.encode_utf8(&mut [0; 4]) as &str);
                if used > 0 && used + w > width {
                    lines.push(std::mem::take(&mut line));
                    used = 0;
                    fresh = true;
                }
                match line.last_mut() {
                    Some(last) if !fresh => last.text.push(ch),
                    _ => line.push(Piece {
                        text: ch.to_string(),
                        style: piece.style.clone(),
                    }),
                }
                fresh = false;
                used += w;
            }
        }
    }
    trim_end(&mut line);
    lines.push(line);
    lines
}

fn trim_end<S>(line: &mut CellLine<S>) {
    while let Some(last) = line.last_mut() {
        let trimmed = last.text.trim_end().len();
        if trimmed == 0 {
            line.pop();
        } else {
            last.text.truncate(trimmed);
            break;
        }
    }
}

/// Plain text in columns for a subcommand's listing: every column but the last padded to
/// its widest cell (counted in characters), two spaces between columns, one line per row.
pub fn plain_columns<const N: usize>(rows: &[[String; N]]) -> Vec<String> {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == N {
                    line.push_str(cell);
                } else {
                    let pad = widths[i] - cell.chars().count();
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad + 2));
                }
            }
            line
        })
        .collect()
}

/// The display width of a laid-out cell line.
pub fn line_width<S>(line: &[Piece<S>]) -> usize {
    cell_width(line)
}

/// The spaces before and after a line of `used` columns in a column of `width`.
pub fn padding(align: Align, used: usize, width: usize) -> (usize, usize) {
    let free = width.saturating_sub(used);
    match align {
        Align::Left => (0, free),
        Align::Right => (free, 0),
        Align::Center => (free / 2, free - free / 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(text: &str) -> Vec<Piece<()>> {
        vec![Piece {
            text: text.to_string(),
            style: (),
        }]
    }

    fn texts(cell: &[CellLine<()>]) -> Vec<String> {
        cell.iter()
            .map(|l| l.iter().map(|p| p.text.as_str()).collect())
            .collect()
    }

    #[test]
    fn a_table_that_fits_keeps_its_natural_widths() {
        let rows = vec![
            vec![cell("name"), cell("size")],
            vec![cell("main.rs"), cell("12")],
        ];
        let l = layout(&rows, 80);
        assert_eq!(l.widths, vec![7, 4]);
        assert_eq!(texts(&l.rows[1][0]), vec!["main.rs"]);
    }

    #[test]
    fn a_wide_table_wraps_its_cells_within_the_width_and_keeps_every_word() {
        let long = "the quick brown fox jumps over the lazy dog and keeps running far away";
        let rows = vec![
            vec![cell("key"), cell("description")],
            vec![cell("a"), cell(long)],
        ];
        let l = layout(&rows, 30);
        assert!(
            l.widths.iter().sum::<usize>() + chrome(2) <= 30,
            "{:?}",
            l.widths
        );
        let wrapped = texts(&l.rows[1][1]);
        assert!(wrapped.len() > 1, "{wrapped:?}");
        assert_eq!(wrapped.join(" "), long, "nothing cut");
        for line in &l.rows[1][1] {
            assert!(line_width(line) <= l.widths[1]);
        }
    }

    #[test]
    fn a_word_longer_than_its_column_is_broken_not_cut() {
        let rows = vec![vec![cell("x"), cell("supercalifragilistic")]];
        let l = layout(&rows, 15);
        let wrapped = texts(&l.rows[0][1]);
        assert_eq!(wrapped.concat(), "supercalifragilistic");
        assert!(wrapped.iter().all(|w| w.width() <= l.widths[1]));
    }

    #[test]
    fn styles_stay_with_their_words_and_short_rows_get_empty_cells() {
        let styled = vec![
            Piece {
                text: "plain ".to_string(),
                style: 0,
            },
            Piece {
                text: "bold".to_string(),
                style: 1,
            },
        ];
        let rows = vec![vec![styled, vec![]], vec![]];
        let l = layout(&rows, 8);
        assert_eq!(l.rows[0][0][0][0].style, 0);
        assert_eq!(l.rows[0][0].last().unwrap()[0].style, 1);
        assert_eq!(l.rows[1].len(), 2);
        assert_eq!(padding(Align::Center, 3, 8), (2, 3));
        assert_eq!(padding(Align::Right, 3, 8), (5, 0));
    }
}
