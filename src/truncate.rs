//! Caps tool output for the model: keeps the head and the tail, cut at character (and,
//! when cheap, line) boundaries, with one marker line in the middle saying how many bytes
//! and lines were cut.
//!
//! [`HeadTail`] collects output as it streams (bash) in bounded memory;
//! [`truncate_head_tail`] caps a finished string. Neither knows where the text came from.

/// Room kept for the marker line so that head + marker + tail stay within the limit.
const MARKER_RESERVE: usize = 64;

/// Collects streamed text, keeping at most the first and last bytes of a budget and
/// counting what falls in between. Memory stays bounded by about twice the budget.
#[derive(Debug, Clone)]
pub struct HeadTail {
    head_cap: usize,
    tail_cap: usize,
    head: String,
    head_full: bool,
    /// A suffix of everything pushed after the head filled up; compacted lazily.
    tail: String,
    cut_bytes: u64,
    cut_lines: u64,
}

impl HeadTail {
    /// A collector whose finished text is at most `max_bytes` long (the marker is kept
    /// even when `max_bytes` is smaller than the marker itself).
    pub fn new(max_bytes: usize) -> Self {
        let budget = max_bytes.saturating_sub(MARKER_RESERVE);
        let head_cap = budget / 2;
        HeadTail {
            head_cap,
            tail_cap: budget - head_cap,
            head: String::new(),
            head_full: false,
            tail: String::new(),
            cut_bytes: 0,
            cut_lines: 0,
        }
    }

    /// Appends a piece of output (any split; pieces are concatenated as they are).
    pub fn push(&mut self, mut text: &str) {
        if !self.head_full {
            let room = self.head_cap - self.head.len();
            if text.len() <= room {
                self.head.push_str(text);
                return;
            }
            let split = text.floor_char_boundary(room);
            self.head.push_str(&text[..split]);
            self.head_full = true;
            text = &text[split..];
        }
        self.tail.push_str(text);
        if self.tail.len() > self.tail_cap.saturating_mul(2).max(self.tail_cap + 4096) {
            self.compact_tail();
        }
    }

    /// True when something has been (or will be) cut.
    pub fn is_truncated(&self) -> bool {
        self.cut_bytes > 0 || self.tail.len() > self.tail_cap
    }

    /// Drops the front of the tail down to `tail_cap` bytes (at a char boundary).
    fn compact_tail(&mut self) {
        if self.tail.len() <= self.tail_cap {
            return;
        }
        let cut = self
            .tail
            .ceil_char_boundary(self.tail.len() - self.tail_cap);
        self.count_cut(cut, CutSide::TailFront);
    }

    fn count_cut(&mut self, bytes: usize, side: CutSide) {
        let removed = match side {
            CutSide::TailFront => self.tail.drain(..bytes),
            CutSide::HeadBack => {
                let start = self.head.len() - bytes;
                self.head.drain(start..)
            }
        };
        self.cut_lines += removed.as_str().bytes().filter(|&b| b == b'\n').count() as u64;
        drop(removed);
        self.cut_bytes += bytes as u64;
    }

    /// The collected text: everything when it fit, else head, marker line and tail.
    pub fn finish(mut self) -> String {
        self.compact_tail();
        if self.cut_bytes == 0 {
            self.head.push_str(&self.tail);
            return self.head;
        }
        // Prefer whole lines when that loses at most half of either side.
        if let Some(pos) = self.head.rfind('\n') {
            let keep = pos + 1;
            if keep >= self.head.len() / 2 {
                self.count_cut(self.head.len() - keep, CutSide::HeadBack);
            }
        }
        if let Some(pos) = self.tail.find('\n') {
            let drop_to = pos + 1;
            if drop_to <= self.tail.len() / 2 {
                self.count_cut(drop_to, CutSide::TailFront);
            }
        }
        let mut out = self.head;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker(self.cut_bytes, self.cut_lines));
        out.push('\n');
        out.push_str(&self.tail);
        out
    }
}

enum CutSide {
    TailFront,
    HeadBack,
}

/// The marker line (without newline) put where text was cut.
pub fn marker(bytes: u64, lines: u64) -> String {
    let plural = if lines == 1 { "" } else { "s" };
    format!("[... {bytes} bytes ({lines} line{plural}) cut ...]")
}

/// `text` unchanged when it fits in `max_bytes`, else its head and tail around a marker.
pub fn truncate_head_tail(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let mut collector = HeadTail::new(max_bytes);
    collector.push(text);
    collector.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::numbered_lines;

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(truncate_head_tail("hello\nworld\n", 100), "hello\nworld\n");
        let mut c = HeadTail::new(1000);
        c.push("a");
        c.push("b\n");
        assert!(!c.is_truncated());
        assert_eq!(c.finish(), "ab\n");
    }

    #[test]
    fn long_text_keeps_head_and_tail_with_exact_counts() {
        let text = numbered_lines(10_000); // 11 bytes per line
        let out = truncate_head_tail(&text, 2_000);
        assert!(out.len() <= 2_000, "{}", out.len());
        assert!(out.starts_with("line 00001\n"));
        assert!(out.ends_with("line 10000\n"));
        let marker_line = out.lines().find(|l| l.starts_with("[...")).unwrap();
        let kept: usize = out.lines().filter(|l| l.starts_with("line ")).count();
        let cut_lines = 10_000 - kept;
        let cut_bytes = cut_lines * 11;
        assert_eq!(
            marker_line,
            format!("[... {cut_bytes} bytes ({cut_lines} lines) cut ...]")
        );
        // Whole lines on both sides of the marker.
        assert!(
            out.lines()
                .all(|l| l.starts_with("line ") && l.len() == 10 || l == marker_line)
        );
    }

    #[test]
    fn multibyte_text_is_cut_at_char_boundaries() {
        let text = "é".repeat(5_000) + "ü" + &"ß".repeat(5_000); // no newlines at all
        let out = truncate_head_tail(&text, 301);
        assert!(out.len() <= 301);
        let (head, rest) = out.split_once('\n').unwrap();
        let (marker_line, tail) = rest.split_once('\n').unwrap();
        assert!(head.chars().all(|c| c == 'é'));
        assert!(tail.chars().all(|c| c == 'ß'));
        let cut = text.len() - head.len() - tail.len();
        assert_eq!(marker_line, format!("[... {cut} bytes (0 lines) cut ...]"));
    }

    #[test]
    fn streaming_in_small_pieces_equals_one_shot() {
        let text = numbered_lines(3_000) + "unterminated ünïcode tail";
        let one_shot = truncate_head_tail(&text, 5_000);
        let mut c = HeadTail::new(5_000);
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let n = rest.ceil_char_boundary(7.min(rest.len()));
            c.push(&rest[..n]);
            rest = &rest[n..];
        }
        assert!(c.is_truncated());
        assert_eq!(c.finish(), one_shot);
        assert!(one_shot.ends_with("unterminated ünïcode tail"));
    }

    #[test]
    fn tiny_limit_keeps_only_the_marker() {
        let out = truncate_head_tail("abcdefghijklmnopqrstuvwxyz", 10);
        assert_eq!(out, "[... 26 bytes (0 lines) cut ...]\n");
    }
}
