//! What one output stream leaves behind: split into lines for live display (long lines
//! in pieces, at most [`MAX_LIVE_BYTES`] sent per stream), and kept for the result
//! either head-and-tail ([`HeadTail`]) or head-only. Knows bytes and text, not pipes or
//! processes.

use tokio::sync::mpsc::UnboundedSender;

use super::{Capture, Sink};
use crate::truncate::HeadTail;

/// A line longer than this is passed on in pieces.
const MAX_PENDING_LINE: usize = 16 * 1024;
/// Live output sent per stream at most (frontends show the latest lines; a runaway
/// command must not flood them).
const MAX_LIVE_BYTES: usize = 1024 * 1024;
/// Sent once when the live budget is spent.
const LIVE_STOPPED: &str = "[live output stopped here; the command goes on]\n";

/// One stream's output as it arrives.
pub(super) struct Collector {
    kept: Kept,
    /// Bytes after the last newline, not yet passed on as text.
    pending: Vec<u8>,
    live: Option<UnboundedSender<String>>,
    live_bytes: usize,
}

enum Kept {
    HeadTail(HeadTail),
    Head { bytes: Vec<u8>, max_bytes: usize },
}

impl Collector {
    pub(super) fn new(sink: Sink) -> Self {
        let kept = match sink.capture {
            Capture::HeadTail { max_bytes } => Kept::HeadTail(HeadTail::new(max_bytes)),
            Capture::Head { max_bytes } => Kept::Head {
                bytes: Vec::new(),
                max_bytes,
            },
        };
        Collector {
            kept,
            pending: Vec::new(),
            live: sink.live,
            live_bytes: 0,
        }
    }

    /// True when output goes through text lines (head-and-tail keeping or live display).
    fn wants_lines(&self) -> bool {
        matches!(self.kept, Kept::HeadTail(_)) || self.live.is_some()
    }

    pub(super) fn feed(&mut self, bytes: &[u8]) {
        if let Kept::Head {
            bytes: kept,
            max_bytes,
        } = &mut self.kept
        {
            let room = max_bytes.saturating_sub(kept.len()).min(bytes.len());
            kept.extend_from_slice(&bytes[..room]);
        }
        if !self.wants_lines() {
            return;
        }
        self.pending.extend_from_slice(bytes);
        if let Some(last_newline) = self.pending.iter().rposition(|&b| b == b'\n') {
            // UTF-8 sequences never contain b'\n', so this split is safe.
            let lines: Vec<u8> = self.pending.drain(..=last_newline).collect();
            self.emit(&String::from_utf8_lossy(&lines));
        }
        if self.pending.len() > MAX_PENDING_LINE {
            let cut = match std::str::from_utf8(&self.pending) {
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                _ => self.pending.len(),
            };
            let piece: Vec<u8> = self.pending.drain(..cut).collect();
            self.emit(&String::from_utf8_lossy(&piece));
        }
    }

    fn emit(&mut self, text: &str) {
        if let Kept::HeadTail(collected) = &mut self.kept {
            collected.push(text);
        }
        let Some(live) = &self.live else { return };
        if self.live_bytes < MAX_LIVE_BYTES {
            self.live_bytes += text.len();
            let _ = live.send(text.to_string());
            if self.live_bytes >= MAX_LIVE_BYTES {
                let _ = live.send(LIVE_STOPPED.to_string());
            }
        }
    }

    /// The text kept, after passing on what is still pending.
    pub(super) fn finish(mut self) -> String {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.emit(&String::from_utf8_lossy(&rest));
        }
        match self.kept {
            Kept::HeadTail(collected) => collected.finish(),
            Kept::Head { bytes, .. } => String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::truncate::truncate_head_tail;

    fn collector(capture: Capture) -> (Collector, tokio::sync::mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let sink = Sink {
            capture,
            live: Some(tx),
        };
        (Collector::new(sink), rx)
    }

    fn drain(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> Vec<String> {
        let mut pieces = Vec::new();
        while let Ok(piece) = rx.try_recv() {
            pieces.push(piece);
        }
        pieces
    }

    #[test]
    fn live_output_comes_in_whole_lines_and_the_rest_at_the_end() {
        let (mut c, mut rx) = collector(Capture::HeadTail { max_bytes: 1000 });
        c.feed(b"one\ntw");
        c.feed(b"o\nthr");
        assert_eq!(drain(&mut rx), ["one\n", "two\n"]);
        assert_eq!(c.finish(), "one\ntwo\nthr");
        assert_eq!(drain(&mut rx), ["thr"]);
    }

    #[test]
    fn long_lines_go_live_in_pieces_cut_at_char_boundaries() {
        let (mut c, mut rx) = collector(Capture::HeadTail {
            max_bytes: 100 * 1024,
        });
        let line = "é".repeat(MAX_PENDING_LINE); // twice the limit in bytes
        let bytes = line.as_bytes();
        c.feed(&bytes[..MAX_PENDING_LINE + 1]); // ends in the middle of an "é"
        let pieces = drain(&mut rx);
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].len(), MAX_PENDING_LINE);
        c.feed(&bytes[MAX_PENDING_LINE + 1..]);
        assert_eq!(c.finish(), line);
    }

    #[test]
    fn head_tail_keeps_what_truncate_would() {
        let text: String = (1..=5000).map(|i| format!("{i}\n")).collect();
        let (mut c, _rx) = collector(Capture::HeadTail { max_bytes: 2000 });
        for chunk in text.as_bytes().chunks(333) {
            c.feed(chunk);
        }
        assert_eq!(c.finish(), truncate_head_tail(&text, 2000));
    }

    #[test]
    fn head_keeps_the_first_bytes_only() {
        let mut c = Collector::new(Sink {
            capture: Capture::Head { max_bytes: 5 },
            live: None,
        });
        c.feed(b"abc");
        c.feed(b"defgh");
        c.feed(b"ijk");
        assert_eq!(c.finish(), "abcde");
    }

    #[test]
    fn live_output_stops_after_its_budget_with_one_notice() {
        let (mut c, mut rx) = collector(Capture::Head { max_bytes: 0 });
        let line = format!("{}\n", "x".repeat(1023));
        for _ in 0..(MAX_LIVE_BYTES / 1024 + 10) {
            c.feed(line.as_bytes());
        }
        let pieces = drain(&mut rx);
        assert_eq!(pieces.len(), MAX_LIVE_BYTES / 1024 + 1);
        assert_eq!(pieces.last().map(String::as_str), Some(LIVE_STOPPED));
        assert_eq!(c.finish(), "");
    }
}
