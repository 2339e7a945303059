//! A program driven over JSON lines on its pipes, as an editor drives `harness9 acp` and
//! a program drives `--input-format stream-json`: started with stdin and stdout piped,
//! lines written, lines awaited with a deadline (never a sleep), stdin closed and the
//! exit awaited. It knows processes and JSON lines, not what the lines mean.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a line or an exit is waited for.
pub const LINES_DEADLINE: Duration = Duration::from_secs(30);

/// A running program with its pipes; killed when dropped.
pub struct JsonLines {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// Every line read so far.
    seen: Vec<Value>,
}

impl JsonLines {
    /// Starts `command` with stdin and stdout piped (stderr dropped); every stdout line
    /// must be JSON.
    pub fn spawn(command: &mut Command) -> JsonLines {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        JsonLines {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Writes `bytes` and a newline.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    /// Lines until one satisfies `done` (returned last); panics with every line seen
    /// when none does within [`LINES_DEADLINE`].
    pub fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + LINES_DEADLINE;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("never came; saw {:#?}", self.seen));
            self.seen.push(line.clone());
            let stop = done(&line);
            got.push(line);
            if stop {
                return got;
            }
        }
    }

    /// Closes stdin (unless closed already), waits for the exit and reads the rest of
    /// stdout: the exit status and every line read since the start.
    pub fn finish(mut self) -> (ExitStatus, Vec<Value>) {
        drop(self.stdin.take());
        let deadline = Instant::now() + LINES_DEADLINE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the program did not exit; saw {:#?}",
                self.seen
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends at EOF: every line is in the channel by then.
        while let Ok(line) = self.lines.recv_timeout(LINES_DEADLINE) {
            self.seen.push(line);
        }
        (status, std::mem::take(&mut self.seen))
    }

    /// Closes stdin and waits for the exit status.
    pub fn close(self) -> ExitStatus {
        self.finish().0
    }
}

impl Drop for JsonLines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
