//! The `@` picker: while the word at the cursor is an `@` mention, it lists the
//! project's files and folders that fuzzy-match what follows the `@`, best first, with
//! the matched characters lit and one row selected, and a last row saying how many
//! matched and whether the index is still being built. Up/Down move; Tab or Enter puts
//! the selected path in place of the word (a folder keeps the picker open on its
//! contents); Esc closes it for that word.
//!
//! The ranking happens on the index's own thread ([`crate::mentions::FileIndex`]); the
//! popup only shows the latest list it was handed, so drawing it costs the same on any
//! size of tree. It knows nothing about the agent.

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use unicode_width::UnicodeWidthChar;

use super::wrap::visible;
use crate::mentions::{FileIndex, MatchList};

/// Rows of paths shown at most; more scroll.
pub const MAX_ROWS: u16 = 8;

/// The open picker.
#[derive(Debug)]
pub struct MentionPopup {
    /// Where the mention's `@` stands in the draft (a byte offset).
    at: usize,
    /// What follows the `@` up to the cursor.
    query: String,
    /// The latest list the index published, and its number.
    list: Option<Arc<MatchList>>,
    seen: u64,
    selected: usize,
}

/// What Tab or Enter puts in the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pick {
    /// The draft's byte range the mention being typed takes.
    pub range: std::ops::Range<usize>,
    /// Its replacement: `@path ` (`@"path" ` with spaces); a folder without the space.
    pub text: String,
}

impl MentionPopup {
    /// A picker for the mention at byte `at`, asking `index` for `query`.
    pub fn open(at: usize, query: &str, index: &FileIndex) -> MentionPopup {
        index.search(query);
        let mut popup = MentionPopup {
            at,
            query: query.to_string(),
            list: None,
            seen: 0,
            selected: 0,
        };
        popup.update(index);
        popup
    }

    /// Where the mention's `@` stands.
    pub fn at(&self) -> usize {
        self.at
    }

    /// Follows the draft: the mention now at `at` reads `query`.
    pub fn retarget(&mut self, at: usize, query: &str, index: &FileIndex) {
        if self.at != at || self.query != query {
            self.at = at;
            self.query = query.to_string();
            self.selected = 0;
            index.search(query);
        }
    }

    /// Takes the index's latest list if it is new; true when something changed. A list
    /// for an older query stays shown until the answer to this one arrives.
    pub fn update(&mut self, index: &FileIndex) -> bool {
        let version = index.version();
        if version == self.seen {
            return false;
        }
        self.seen = version;
        self.list = index.latest();
        let n = self.items_len();
        if self.selected >= n {
            self.selected = n.saturating_sub(1);
        }
        true
    }

    fn items_len(&self) -> usize {
        self.list.as_ref().map_or(0, |l| l.items.len())
    }

    /// Whether the shown list answers the query typed.
    fn current(&self) -> bool {
        self.list.as_ref().is_some_and(|l| l.query == self.query)
    }

    /// Moves the selection up (wrapping).
    pub fn up(&mut self) {
        let n = self.items_len().max(1);
        self.selected = (self.selected + n - 1) % n;
    }

    /// Moves the selection down (wrapping).
    pub fn down(&mut self) {
        self.selected = (self.selected + 1) % self.items_len().max(1);
    }

    /// The replacement for the selected path, with the cursor at `cursor`; `None` when
    /// nothing is listed.
    pub fn pick(&self, cursor: usize) -> Option<Pick> {
        let path = &self.list.as_ref()?.items.get(self.selected)?.path;
        let mut text = crate::mentions::written(path);
        if !path.ends_with('/') || text.ends_with('"') {
            text.push(' ');
        }
        Some(Pick {
            range: self.at..cursor,
            text,
        })
    }

    /// Rows wanted: the paths, then the count line.
    pub fn height(&self) -> u16 {
        (self.items_len() as u16).min(MAX_ROWS) + 1
    }

    /// Draws the paths around the selection and the count line.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        if area.height == 0 {
            return;
        }
        let rows = usize::from(area.height - 1);
        let dim = Style::new().fg(Color::DarkGray);
        let width = usize::from(area.width);
        if let Some(list) = &self.list {
            let first = (self.selected + 1).saturating_sub(rows);
            for (i, item) in list.items.iter().enumerate().skip(first).take(rows) {
                let y = area.y + (i - first) as u16;
                let selected = i == self.selected;
                draw_path(buf, area.x, y, width, &item.path, &item.indices, selected);
            }
        }
        let footer = self.footer();
        let y = area.y + area.height - 1;
        buf.set_stringn(area.x, y, footer, width, dim);
    }

    fn footer(&self) -> String {
        let Some(list) = &self.list else {
            return "  indexing the project…".to_string();
        };
        let mut line = if !self.current() {
            "  searching…".to_string()
        } else if list.items.is_empty() {
            format!(
                "  no file matches @{}",
                self.query.chars().map(visible).collect::<String>()
            )
        } else if list.query.is_empty() {
            format!("  {} files and folders", thousands(list.indexed))
        } else {
            format!(
                "  {} of {}",
                thousands(list.matched),
                thousands(list.indexed)
            )
        };
        if list.walking {
            line.push_str(" · indexing…");
        } else if list.capped {
            line.push_str(" · index stopped at its limit");
        }
        line.push_str(" · tab inserts · esc closes");
        line
    }
}

/// Draws one path: two spaces, then the path (its start cut with `…` when too wide),
/// matched characters in bold yellow, the whole row reversed when selected.
fn draw_path(
    buf: &mut Buffer,
    x: u16,
    y: u16,
    width: usize,
    path: &str,
    indices: &[u32],
    selected: bool,
) {
    let base = if selected {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new()
    };
    let lit = base.fg(Color::Yellow).add_modifier(Modifier::BOLD);
    let chars: Vec<(u32, char)> = path
        .chars()
        .enumerate()
        .map(|(i, c)| (i as u32, visible(c)))
        .collect();
    let room = width.saturating_sub(2);
    let total: usize = chars.iter().map(|(_, c)| c.width().unwrap_or(0)).sum();
    // Too wide: keep the end (the file name) and mark the cut.
    let mut skip = 0;
    let mut cut = false;
    if total > room {
        let mut shown = total;
        while skip < chars.len() && shown + 1 > room {
            shown -= chars[skip].1.width().unwrap_or(0);
            skip += 1;
        }
        cut = true;
    }
    let mut col = x;
    buf.set_string(col, y, "  ", base);
    col += 2;
    if cut {
        buf.set_string(col, y, "…", base);
        col += 1;
    }
    for &(i, c) in &chars[skip..] {
        let style = if indices.binary_search(&i).is_ok() {
            lit
        } else {
            base
        };
        let w = c.width().unwrap_or(0) as u16;
        if w == 0 {
            continue;
        }
        let mut tmp = [0u8; 4];
        buf.set_string(col, y, c.encode_utf8(&mut tmp), style);
        col += w;
    }
}

/// `123456` as `123,456`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mentions::Matched;
    use crate::tui::test_support::drawn;
    use insta::assert_snapshot;

    fn popup(query: &str, paths: &[(&str, &[u32])], walking: bool) -> MentionPopup {
        let items: Vec<Matched> = paths
            .iter()
            .map(|(p, i)| Matched {
                path: (*p).to_string(),
                indices: i.to_vec(),
            })
            .collect();
        MentionPopup {
            at: 4,
            query: query.to_string(),
            list: Some(Arc::new(MatchList {
                query: query.to_string(),
                matched: items.len(),
                items,
                indexed: 104_233,
                walking,
                capped: false,
            })),
            seen: 1,
            selected: 0,
        }
    }

    fn draw(p: &MentionPopup, width: u16) -> String {
        drawn(width, p.height(), |f| p.render(f.area(), f.buffer_mut()))
    }

    #[test]
    fn lists_matches_with_the_count_and_picks_the_selection() {
        let mut p = popup(
            "comp",
            &[
                ("src/tui/composer.rs", &[8, 9, 10, 11]),
                ("docs/components/", &[5, 6, 7, 8]),
                (
                    "a very long folder name/with/a deep/path/to/component.rs",
                    &[45, 46, 47, 48],
                ),
            ],
            true,
        );
        p.down();
        assert_snapshot!(draw(&p, 48));
        // A folder keeps the picker going (no space); a file ends the word.
        assert_eq!(
            p.pick(9),
            Some(Pick {
                range: 4..9,
                text: "@docs/components/".into()
            })
        );
        p.up();
        assert_eq!(p.pick(9).unwrap().text, "@src/tui/composer.rs ");
        p.up();
        assert_eq!(p.selected, 2);
    }

    #[test]
    fn empty_searching_and_hostile_states() {
        let none = popup("zzz", &[], false);
        assert_snapshot!(draw(&none, 60));
        assert_eq!(none.pick(8), None);
        let mut stale = popup("a", &[("with space/a\u{9b}b.md", &[0])], false);
        stale.query = "ab".into();
        assert_snapshot!(draw(&stale, 60));
        assert_eq!(stale.pick(7).unwrap().text, "@\"with space/a\u{9b}b.md\" ");
        let waiting = MentionPopup {
            at: 0,
            query: String::new(),
            list: None,
            seen: 0,
            selected: 0,
        };
        assert_eq!(waiting.height(), 1);
        assert_snapshot!(draw(&waiting, 60));
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(999), "999");
    }
}
