//! Large pastes in the draft: a paste of more than [`COLLAPSE_LINES`] lines (or
//! [`COLLAPSE_CHARS`] characters) stands in the draft as one placeholder such as
//! `[pasted 300 lines]`, kept here with its full text. The placeholder moves and
//! deletes as one piece; sending (or Ctrl+O, or the editor) puts the full text in its
//! place, so nothing pasted is ever lost or sent shortened.
//!
//! An image pasted (a path to one, or Ctrl+V's clipboard image) is a chip of the same
//! kind: `[image #1]` stands in the draft, moves and deletes as one piece, and deleting
//! it drops the image; sending keeps the chip's text and hands the images over in the
//! order their chips stand. Chips are numbered from 1 in each draft.
//!
//! It only maps placeholders to what they stand for within a draft; the composer owns
//! the draft and the cursor, and it knows nothing about keys or the screen.

use std::ops::Range;

use crate::protocol::ImageInput;

/// A paste of more lines than this is collapsed.
pub const COLLAPSE_LINES: usize = 10;
/// A paste of more characters than this is collapsed, whatever its lines.
pub const COLLAPSE_CHARS: usize = 2000;

/// What a placeholder stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Chip {
    /// A large paste: its full text, put in its place when sent.
    Text {
        /// The text pasted.
        text: String,
    },
    /// An image: the placeholder stays in the text sent, the image goes with it.
    Image {
        /// The image's bytes and name.
        image: ImageInput,
    },
}

/// The collapsed pastes and image chips of one draft, in the order pasted.
#[derive(Debug, Default, Clone)]
pub struct Pastes {
    /// Placeholder and what it stands for.
    items: Vec<(String, Chip)>,
}

impl Pastes {
    /// The placeholder for `text` when it is large enough to collapse (recorded with
    /// its text); `None` when it should go in the draft as it is. `draft` is the text
    /// it goes into, so the placeholder is unique within it.
    pub fn collapse(&mut self, text: &str, draft: &str) -> Option<String> {
        let lines = text.lines().count();
        let chars = text.chars().count();
        let base = if lines > COLLAPSE_LINES {
            format!("pasted {lines} lines")
        } else if chars > COLLAPSE_CHARS {
            format!("pasted {chars} characters")
        } else {
            return None;
        };
        let mut label = format!("[{base}]");
        let mut n = 1;
        while draft.contains(&label) || self.items.iter().any(|(l, _)| *l == label) {
            n += 1;
            label = format!("[{base} #{n}]");
        }
        self.items.push((
            label.clone(),
            Chip::Text {
                text: text.to_string(),
            },
        ));
        Some(label)
    }

    /// The chip for `image`, recorded: `[image #N]` with the lowest N not standing in
    /// `draft` already (so numbering starts again with each message).
    pub fn add_image(&mut self, image: ImageInput, draft: &str) -> String {
        let mut n = 1;
        let mut label = format!("[image #{n}]");
        while draft.contains(&label) || self.items.iter().any(|(l, _)| *l == label) {
            n += 1;
            label = format!("[image #{n}]");
        }
        self.items.push((label.clone(), Chip::Image { image }));
        label
    }

    /// The images whose chips stand in `draft`, in the order they stand.
    pub fn images(&self, draft: &str) -> Vec<ImageInput> {
        let mut found: Vec<(usize, &ImageInput)> = self
            .items
            .iter()
            .filter_map(|(label, chip)| match chip {
                Chip::Image { image } => draft.find(label.as_str()).map(|at| (at, image)),
                Chip::Text { .. } => None,
            })
            .collect();
        found.sort_by_key(|(at, _)| *at);
        found.into_iter().map(|(_, image)| image.clone()).collect()
    }

    /// Where each placeholder stands in `draft`, in the order they appear.
    pub fn spans(&self, draft: &str) -> Vec<Range<usize>> {
        let mut spans: Vec<Range<usize>> = self
            .items
            .iter()
            .filter_map(|(label, _)| draft.find(label.as_str()).map(|i| i..i + label.len()))
            .collect();
        spans.sort_by_key(|r| r.start);
        spans
    }

    /// The placeholder `pos` falls strictly inside.
    pub fn inside(&self, draft: &str, pos: usize) -> Option<Range<usize>> {
        self.spans(draft)
            .into_iter()
            .find(|r| r.start < pos && pos < r.end)
    }

    /// `range` grown to take in whole every placeholder it touches.
    pub fn widen(&self, draft: &str, range: Range<usize>) -> Range<usize> {
        let mut out = range.clone();
        for span in self.spans(draft) {
            let touches = if range.is_empty() {
                span.start < range.start && range.start < span.end
            } else {
                span.start < range.end && range.start < span.end
            };
            if touches {
                out.start = out.start.min(span.start);
                out.end = out.end.max(span.end);
            }
        }
        out
    }

    /// Forgets the pastes whose placeholder is no longer in `draft`.
    pub fn prune(&mut self, draft: &str) {
        self.items
            .retain(|(label, _)| draft.contains(label.as_str()));
    }

    /// `draft` with each collapsed paste's placeholder replaced by its full text
    /// (image chips stay as they are).
    pub fn expand(&self, draft: &str) -> String {
        let mut out = String::with_capacity(draft.len());
        let mut at = 0;
        for span in self.spans(draft) {
            out.push_str(&draft[at..span.start]);
            let label = &draft[span.clone()];
            match self.items.iter().find(|(l, _)| l == label) {
                Some((_, Chip::Text { text })) => out.push_str(text),
                Some((_, Chip::Image { .. })) | None => out.push_str(label),
            }
            at = span.end;
        }
        out.push_str(&draft[at..]);
        out
    }

    /// Whether no paste is collapsed (image chips aside).
    pub fn is_empty(&self) -> bool {
        !self
            .items
            .iter()
            .any(|(_, chip)| matches!(chip, Chip::Text { .. }))
    }

    /// Forgets the collapsed pastes, keeping the image chips (Ctrl+O put their text
    /// in the draft).
    pub fn forget_texts(&mut self) {
        self.items
            .retain(|(_, chip)| matches!(chip, Chip::Image { .. }));
    }

    /// Forgets everything (the draft was replaced or sent).
    pub fn clear(&mut self) {
        self.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::numbered_lines as lines;

    #[test]
    fn only_large_pastes_collapse_and_labels_are_unique() {
        let mut p = Pastes::default();
        assert_eq!(p.collapse(&lines(10), ""), None);
        assert_eq!(p.collapse(&"x".repeat(2000), ""), None);
        assert_eq!(
            p.collapse(&lines(300), "").as_deref(),
            Some("[pasted 300 lines]")
        );
        assert_eq!(
            p.collapse(&lines(300), "a [pasted 300 lines]").as_deref(),
            Some("[pasted 300 lines #2]")
        );
        assert_eq!(
            p.collapse(&"é".repeat(2001), "").as_deref(),
            Some("[pasted 2001 characters]")
        );
    }

    #[test]
    fn expands_in_place_and_widens_edits_to_whole_placeholders() {
        let mut p = Pastes::default();
        let body = lines(12);
        let label = p.collapse(&body, "").unwrap();
        let draft = format!("see {label} and {label}x");
        // Only the first occurrence is the placeholder; the text around stays.
        assert_eq!(p.expand(&draft), format!("see {body} and {label}x"));
        let start = 4;
        let end = start + label.len();
        assert_eq!(p.inside(&draft, start + 3), Some(start..end));
        assert_eq!(p.inside(&draft, start), None);
        assert_eq!(p.inside(&draft, end), None);
        // A deletion that cuts into it takes all of it; one beside it does not.
        assert_eq!(p.widen(&draft, end - 6..end + 2), start..end + 2);
        assert_eq!(p.widen(&draft, 0..start), 0..start);
        assert_eq!(p.widen(&draft, end..end + 1), end..end + 1);
        p.prune("nothing left");
        assert!(p.is_empty());
        assert_eq!(p.expand(&draft), draft);
    }
}
