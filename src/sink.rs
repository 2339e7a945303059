//! Output streams whose reader may go away: `harness9 … | head -1` closes the pipe after
//! one line, and the next write fails with `EPIPE`. A Unix tool then ends quietly; it
//! does not print "Broken pipe" or panic. [`Sink`] wraps stdout or stderr: once a write
//! finds the reader gone it records that, drops this and every later write, and
//! reports success, so renderers never fail half-way; the frontend asks
//! [`Sink::state`] (or a [`ReaderWatch`]) after each event and winds the session down.
//!
//! It owns only that rule (and [`stderr_line`], the binary's own messages, neutralized).
//! It must not know what is written or what a frontend does once the reader has gone.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether anybody still reads a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderState {
    /// Writes reach the reader.
    Reading,
    /// The reader closed its end (`EPIPE`); writes are dropped.
    Gone,
}

/// A shared view of a [`Sink`]'s reader state.
#[derive(Debug, Clone, Default)]
pub struct ReaderWatch(Arc<AtomicBool>);

impl ReaderWatch {
    /// The reader's state now.
    pub fn state(&self) -> ReaderState {
        if self.0.load(Ordering::Relaxed) {
            ReaderState::Gone
        } else {
            ReaderState::Reading
        }
    }

    fn mark_gone(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A writer that treats a closed reader as the end of output rather than an error.
/// Other write errors (a full disk, …) still reach the caller.
#[derive(Debug)]
pub struct Sink<W> {
    inner: W,
    watch: ReaderWatch,
}

impl<W: Write> Sink<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        Sink {
            inner,
            watch: ReaderWatch::default(),
        }
    }

    /// Whether the reader is still there.
    pub fn state(&self) -> ReaderState {
        self.watch.state()
    }

    /// A handle that sees when the reader goes.
    pub fn watch(&self) -> ReaderWatch {
        self.watch.clone()
    }

    /// The wrapped writer back.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// The wrapped writer, for bytes that must pass it unchanged (a reader gone is then
    /// the caller's to notice).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    fn outcome<T>(&self, result: io::Result<T>, dropped: T) -> io::Result<T> {
        match result {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.watch.mark_gone();
                Ok(dropped)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for Sink<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.watch.state() == ReaderState::Gone {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.outcome(result, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.watch.state() == ReaderState::Gone {
            return Ok(());
        }
        let result = self.inner.flush();
        self.outcome(result, ())
    }
}

/// Writes one line to stderr, as the binary's own messages do (errors that end a run,
/// start-up warnings), with control characters made visible
/// ([`crate::safe_text::neutralize`]): a message may quote hostile text (a config file,
/// an error body). A closed or failing stderr is ignored (unlike `eprintln!`, which
/// panics): there is nobody to tell.
pub fn stderr_line(message: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{}", crate::safe_text::neutralize(message));
    let _ = err.flush();
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A writer whose reader leaves after `limit` bytes, like `head -c`.
    pub(crate) struct ClosingPipe {
        pub(crate) written: Vec<u8>,
        pub(crate) limit: usize,
    }

    impl Write for ClosingPipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written.len() >= self.limit {
                return Err(io::Error::from(io::ErrorKind::BrokenPipe));
            }
            let n = buf.len().min(self.limit - self.written.len());
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_reader_ends_output_without_an_error() {
        let mut sink = Sink::new(ClosingPipe {
            written: Vec::new(),
            limit: 6,
        });
        let watch = sink.watch();
        writeln!(sink, "first").unwrap();
        assert_eq!(watch.state(), ReaderState::Reading);
        writeln!(sink, "second").unwrap();
        sink.flush().unwrap();
        assert_eq!(watch.state(), ReaderState::Gone);
        writeln!(sink, "third").unwrap();
        assert_eq!(sink.into_inner().written, b"first\n");
    }

    #[test]
    fn other_errors_still_fail() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::StorageFull))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut sink = Sink::new(Full);
        assert!(writeln!(sink, "x").is_err());
        assert_eq!(sink.state(), ReaderState::Reading);
    }
}
