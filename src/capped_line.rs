//! Lines of untrusted input read with a cap on their length, never holding more than the
//! cap of a line: a longer line is skipped to its end and reported as too long. One
//! [`LineTaker`] is the step both readers share — the ACP server's async one and the
//! stream-json driver's blocking one — fed whatever the reader's buffer holds.
//!
//! It knows bytes and newlines; it must not know what the lines mean or how they are read.

/// One line as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CappedLine {
    /// A complete line, without its newline (the last line may lack one).
    Text(Vec<u8>),
    /// A line longer than the cap, skipped to its end.
    TooLong,
    /// The input ended.
    End,
}

/// The line being read: what was kept of it, and whether it passed the cap.
#[derive(Debug)]
pub struct LineTaker {
    limit: usize,
    line: Vec<u8>,
    too_long: bool,
}

impl LineTaker {
    /// A line of at most `limit` bytes.
    pub fn new(limit: usize) -> LineTaker {
        LineTaker {
            limit,
            line: Vec::new(),
            too_long: false,
        }
    }

    /// Takes what `available` (the reader's buffer, not empty) holds of the line: how
    /// many bytes to consume, and the line when its newline was among them.
    pub fn take(&mut self, available: &[u8]) -> (usize, Option<CappedLine>) {
        let newline = memchr::memchr(b'\n', available);
        let chunk = &available[..newline.unwrap_or(available.len())];
        if !self.too_long {
            if self.line.len() + chunk.len() > self.limit {
                self.too_long = true;
                self.line = Vec::new();
            } else {
                self.line.extend_from_slice(chunk);
            }
        }
        match newline {
            Some(at) => (at + 1, Some(self.finished())),
            None => (available.len(), None),
        }
    }

    /// The input ended: the line read so far, or [`CappedLine::End`] when there is none.
    pub fn ended(&mut self) -> CappedLine {
        if !self.too_long && self.line.is_empty() {
            return CappedLine::End;
        }
        self.finished()
    }

    fn finished(&mut self) -> CappedLine {
        if std::mem::take(&mut self.too_long) {
            CappedLine::TooLong
        } else {
            CappedLine::Text(std::mem::take(&mut self.line))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `pieces` as successive buffers; the lines in order, then what the end gives.
    fn lines(pieces: &[&[u8]], limit: usize) -> Vec<CappedLine> {
        let mut taker = LineTaker::new(limit);
        let mut out = Vec::new();
        for piece in pieces {
            let mut rest = *piece;
            while !rest.is_empty() {
                let (used, line) = taker.take(rest);
                assert!(used > 0 && used <= rest.len());
                rest = &rest[used..];
                out.extend(line);
            }
        }
        out.push(taker.ended());
        out
    }

    #[test]
    fn lines_are_cut_at_newlines_across_buffers_and_the_last_may_lack_one() {
        let text = |s: &str| CappedLine::Text(s.as_bytes().to_vec());
        assert_eq!(
            lines(&[b"ab", b"c\nde", b"\n\nf"], 10),
            [text("abc"), text("de"), text(""), text("f")]
        );
        assert_eq!(lines(&[b"x\n"], 10), [text("x"), CappedLine::End]);
        assert_eq!(lines(&[], 10), [CappedLine::End]);
    }

    #[test]
    fn a_line_past_the_cap_is_too_long_and_the_next_is_read_whole() {
        let text = |s: &str| CappedLine::Text(s.as_bytes().to_vec());
        assert_eq!(
            lines(&[b"12345", b"6\nok\n"], 5),
            [CappedLine::TooLong, text("ok"), CappedLine::End]
        );
        // Exactly the cap is not too long; an unterminated long last line is.
        assert_eq!(lines(&[b"12345\n"], 5), [text("12345"), CappedLine::End]);
        assert_eq!(lines(&[b"123456"], 5), [CappedLine::TooLong]);
    }
}
