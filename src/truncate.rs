//! Caps tool output for the model: keeps the head and the tail, cut at character (and,
//! when cheap, line) boundaries, with one marker line in the middle saying how many bytes
//! and lines were cut, and, when the caller gives one, a note (why, and how to get the
//! rest).
//!
//! [`HeadTail`] collects output as it streams (bash) in bounded memory;
//! [`truncate_head_tail`] and [`truncate_noting`] cap a finished string; a marker line of
//! an earlier cut that falls in the cut part is counted in the new one, so the counts
//! stay those of the original text. Neither knows where the text came from.

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
    /// Said at the end of the marker line (empty: nothing).
    note: String,
}

impl HeadTail {
    /// A collector whose finished text is at most `max_bytes` long (the marker is kept
    /// even when `max_bytes` is smaller than the marker itself).
    pub fn new(max_bytes: usize) -> Self {
        Self::noting(max_bytes, "")
    }

    /// Like [`HeadTail::new`], with `note` said in the marker line after "cut" (e.g.
    /// "; call it again with a smaller range"); the note's room is taken from the text.
    pub fn noting(max_bytes: usize, note: &str) -> Self {
        let budget = max_bytes.saturating_sub(MARKER_RESERVE + note.len());
        let head_cap = budget / 2;
        HeadTail {
            head_cap,
            tail_cap: budget - head_cap,
            head: String::new(),
            head_full: false,
            tail: String::new(),
            cut_bytes: 0,
            cut_lines: 0,
            note: note.to_string(),
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
    pub fn finish(self) -> String {
        match self.finish_parts() {
            Ok(whole) => whole,
            Err(cut) => cut.join(),
        }
    }

    /// The whole text when nothing was cut, else the parts around the cut.
    fn finish_parts(mut self) -> Result<String, Cut> {
        self.compact_tail();
        if self.cut_bytes == 0 {
            self.head.push_str(&self.tail);
            return Ok(self.head);
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
        Err(Cut {
            head: self.head,
            tail: self.tail,
            bytes: self.cut_bytes,
            lines: self.cut_lines,
            note: self.note,
        })
    }
}

/// A finished text that was cut: what is kept on each side and what went.
struct Cut {
    head: String,
    tail: String,
    bytes: u64,
    lines: u64,
    note: String,
}

impl Cut {
    fn join(self) -> String {
        let mut out = self.head;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker_noting(self.bytes, self.lines, &self.note));
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
    marker_noting(bytes, lines, "")
}

fn marker_noting(bytes: u64, lines: u64, note: &str) -> String {
    let plural = if lines == 1 { "" } else { "s" };
    format!("[... {bytes} bytes ({lines} line{plural}) cut{note} ...]")
}

/// The bytes and lines an earlier marker line says were cut, when `line` is one.
fn earlier_cut(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix("[... ")?;
    let (bytes, rest) = rest.split_once(" bytes (")?;
    let (lines, rest) = rest.split_once(" line")?;
    let rest = rest.strip_prefix("s").unwrap_or(rest);
    rest.strip_prefix(") cut")?;
    Some((bytes.parse().ok()?, lines.parse().ok()?))
}

/// `text` unchanged when it fits in `max_bytes`, else its head and tail around a marker.
pub fn truncate_head_tail(text: &str, max_bytes: usize) -> String {
    truncate_noting(text, max_bytes, "")
}

/// Like [`truncate_head_tail`], with `note` at the end of the marker line. The marker
/// line of an earlier cut that falls in the cut part is counted as what it says was cut
/// (not as its own bytes), so the counts are those of the original output.
pub fn truncate_noting(text: &str, max_bytes: usize, note: &str) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let mut collector = HeadTail::noting(max_bytes, note);
    collector.push(text);
    let mut cut = match collector.finish_parts() {
        Ok(whole) => return whole,
        Err(cut) => cut,
    };
    // The head and tail are a prefix and a suffix of `text` (the head may have lost a
    // partial line, the tail starts after a newline): the rest is what was cut.
    let removed = text
        .get(cut.head.len()..text.len().saturating_sub(cut.tail.len()))
        .unwrap_or("");
    for line in removed.lines() {
        if let Some((bytes, lines)) = earlier_cut(line) {
            let own = line.len() as u64 + 1;
            cut.bytes = cut.bytes.saturating_sub(own).saturating_add(bytes);
            cut.lines = cut.lines.saturating_sub(1).saturating_add(lines);
        }
    }
    cut.join()
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

    #[test]
    fn a_note_is_said_in_the_marker_and_the_limit_still_holds() {
        let text = numbered_lines(1_000);
        let note = "; ask for a part with offset and limit";
        let out = truncate_noting(&text, 1_500, note);
        assert!(out.len() <= 1_500, "{}", out.len());
        let marker_line = out.lines().find(|l| l.starts_with("[...")).unwrap();
        assert!(
            marker_line.ends_with(" lines) cut; ask for a part with offset and limit ...]"),
            "{marker_line}"
        );
        assert_eq!(truncate_noting("short", 100, note), "short");
    }

    #[test]
    fn cutting_a_cut_text_again_counts_what_the_original_lost() {
        let text = numbered_lines(10_000); // 11 bytes per line, 110,000 bytes
        let once = truncate_head_tail(&text, 30_000);
        let twice = truncate_noting(&once, 3_000, "; again");
        assert!(twice.len() <= 3_000);
        let marker_line = twice.lines().find(|l| l.starts_with("[...")).unwrap();
        let kept = twice.lines().filter(|l| l.starts_with("line ")).count();
        let cut_lines = 10_000 - kept;
        assert_eq!(
            marker_line,
            format!(
                "[... {} bytes ({cut_lines} lines) cut; again ...]",
                cut_lines * 11
            )
        );
        assert!(twice.starts_with("line 00001\n") && twice.ends_with("line 10000\n"));
    }
}
