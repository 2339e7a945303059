//! Large pastes in the draft: a paste of more than [`COLLAPSE_LINES`] lines (or
//! [`COLLAPSE_CHARS`] characters) stands in the draft as one placeholder such as
//! `[pasted 300 lines]`, kept here with its full text. The placeholder moves and
//! deletes as one piece; sending (or Ctrl+O, or the editor) puts the full text in its
//! place, so nothing pasted is ever lost or sent shortened.
//!
//! It only maps placeholders to texts within a draft; the composer owns the draft and
//! the cursor, and it knows nothing about keys or the screen.

use std::ops::Range;

/// A paste of more lines than this is collapsed.
pub const COLLAPSE_LINES: usize = 10;
/// A paste of more characters than this is collapsed, whatever its lines.
pub const COLLAPSE_CHARS: usize = 2000;

/// The collapsed pastes of one draft, in the order pasted.
#[derive(Debug, Default, Clone)]
pub struct Pastes {
    /// Placeholder and full text.
    items: Vec<(String, String)>,
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
        self.items.push((label.clone(), text.to_string()));
        Some(label)
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

    /// `draft` with each placeholder replaced by its full text.
    pub fn expand(&self, draft: &str) -> String {
        let mut out = String::with_capacity(draft.len());
        let mut at = 0;
        for span in self.spans(draft) {
            out.push_str(&draft[at..span.start]);
            let label = &draft[span.clone()];
            if let Some((_, text)) = self.items.iter().find(|(l, _)| l == label) {
                out.push_str(text);
            }
            at = span.end;
        }
        out.push_str(&draft[at..]);
        out
    }

    /// Whether there is nothing collapsed.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
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
