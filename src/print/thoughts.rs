//! The model's reasoning on stderr in the text format, shown only when asked for
//! (`--show-reasoning` or `show_reasoning = true`): each thought as it streams, dimmed
//! on a terminal, its control characters made visible like all other text, and ended
//! (style reset, line closed) before anything else is written. Stdout stays the answer.
//! It must not know where the reasoning came from or how the answer is rendered.

use std::io::{self, Write};

use crate::safe_text::Neutralizer;

/// Whether and how reasoning is shown in the text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThoughtDisplay {
    /// Not shown (the default).
    #[default]
    Hidden,
    /// Shown on stderr, dimmed (a terminal without `NO_COLOR`).
    Dimmed,
    /// Shown on stderr as plain text (stderr is not a terminal, or `NO_COLOR`).
    Plain,
}

impl ThoughtDisplay {
    /// Shown when `shown`, dimmed only when stderr is a terminal and `NO_COLOR` is unset.
    pub fn choose(shown: bool, stderr_is_terminal: bool, no_color: bool) -> ThoughtDisplay {
        match (shown, stderr_is_terminal && !no_color) {
            (false, _) => ThoughtDisplay::Hidden,
            (true, true) => ThoughtDisplay::Dimmed,
            (true, false) => ThoughtDisplay::Plain,
        }
    }
}

/// SGR faint, and its reset.
const DIM: &[u8] = b"\x1b[2m";
const RESET: &[u8] = b"\x1b[0m";

/// One thought being written.
#[derive(Debug, Default)]
pub(super) struct Thoughts {
    display: ThoughtDisplay,
    text: Neutralizer,
    /// A thought was started and not ended.
    open: bool,
    /// What was written of it does not end a line.
    mid_line: bool,
}

/// A gone reader (EPIPE) is not an error for a side channel.
fn quietly(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

impl Thoughts {
    pub(super) fn new(display: ThoughtDisplay) -> Thoughts {
        Thoughts {
            display,
            ..Thoughts::default()
        }
    }

    /// Whether thoughts are written at all.
    pub(super) fn shown(&self) -> bool {
        self.display != ThoughtDisplay::Hidden
    }

    /// Writes a piece of reasoning to `err` (the raw stream: the text is made inert
    /// here, and only this module's own style bytes pass unchanged).
    pub(super) fn piece(&mut self, err: &mut impl Write, piece: &str) -> io::Result<()> {
        if !self.shown() {
            return Ok(());
        }
        let safe = self.text.push(piece).into_owned();
        if safe.is_empty() {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(safe.len() + DIM.len());
        if !self.open {
            self.open = true;
            if self.display == ThoughtDisplay::Dimmed {
                bytes.extend_from_slice(DIM);
            }
        }
        bytes.extend_from_slice(safe.as_bytes());
        self.mid_line = !safe.ends_with('\n');
        quietly(err.write_all(&bytes).and_then(|()| err.flush()))
    }

    /// Ends the thought being written, if any: the style reset and the line closed.
    pub(super) fn end(&mut self, err: &mut impl Write) -> io::Result<()> {
        if !self.open {
            return Ok(());
        }
        self.open = false;
        let held = self.text.finish();
        let mut bytes = held.as_bytes().to_vec();
        if self.display == ThoughtDisplay::Dimmed {
            bytes.extend_from_slice(RESET);
        }
        if std::mem::take(&mut self.mid_line) || !held.is_empty() {
            bytes.push(b'\n');
        }
        quietly(err.write_all(&bytes).and_then(|()| err.flush()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(display: ThoughtDisplay, pieces: &[&str]) -> String {
        let mut t = Thoughts::new(display);
        let mut err = Vec::new();
        for p in pieces {
            t.piece(&mut err, p).unwrap();
        }
        t.end(&mut err).unwrap();
        t.end(&mut err).unwrap();
        String::from_utf8(err).unwrap()
    }

    #[test]
    fn thoughts_are_dimmed_inert_and_closed_or_not_written() {
        assert_eq!(shown(ThoughtDisplay::Hidden, &["a", "b"]), "");
        assert_eq!(
            shown(ThoughtDisplay::Plain, &["let me ", "see\x1b[31m"]),
            "let me see^[[31m\n"
        );
        assert_eq!(
            shown(ThoughtDisplay::Dimmed, &["one\n"]),
            "\x1b[2mone\n\x1b[0m"
        );
        assert_eq!(shown(ThoughtDisplay::Dimmed, &[]), "");
        assert_eq!(
            ThoughtDisplay::choose(true, true, true),
            ThoughtDisplay::Plain
        );
        assert_eq!(
            ThoughtDisplay::choose(false, true, false),
            ThoughtDisplay::Hidden
        );
    }
}
