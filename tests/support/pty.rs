//! The real binary in a pseudo-terminal, its screen kept by vt100, for the terminal
//! tests (the TUI and the line REPL): [`harness9_pty_command`] is the command line both
//! start from, [`Terminal::spawn`] runs it (a thread reads what it writes into the
//! screen and may answer the terminal's questions), and every wait has a deadline and
//! fails showing the screen. It knows the binary's flags, not its screens.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// How long a wait on the terminal lasts before the test fails.
pub const PTY_DEADLINE: Duration = Duration::from_secs(30);

/// The writing end of the pseudo-terminal (what the user types).
pub type PtyWriter = Arc<Mutex<Box<dyn Write + Send>>>;

/// `harness9 --base-url URL --model m -C work EXTRA` with the key `test`, `home` as
/// `$HARNESS9_HOME`, `TERM=xterm-256color`, and no `NO_COLOR`, `OPENAI_BASE_URL` or
/// `HARNESS9_MODEL` from the test's own environment.
pub fn harness9_pty_command(
    server_url: &str,
    home: &Path,
    work: &Path,
    extra: &[&str],
) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_harness9"));
    cmd.args(["--base-url", server_url, "--model", "m", "-C"]);
    cmd.arg(work);
    cmd.args(extra);
    cmd.env("OPENAI_API_KEY", "test");
    cmd.env("HARNESS9_HOME", home);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    cmd.env_remove("OPENAI_BASE_URL");
    cmd.env_remove("HARNESS9_MODEL");
    cmd
}

/// A program running in a pseudo-terminal and the screen it has drawn.
pub struct Terminal {
    /// The emulated terminal.
    pub screen: Arc<Mutex<vt100::Parser>>,
    writer: PtyWriter,
    /// The program.
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    /// The controlling end (to resize the terminal or read its modes).
    pub master: Arc<Mutex<Box<dyn portable_pty::MasterPty + Send>>>,
    /// Set once the reader has taken the last byte (every writer to the terminal gone).
    drained: Arc<AtomicBool>,
}

impl Terminal {
    /// Runs `cmd` in a `rows` x `cols` terminal keeping `scrollback` lines; `on_output`
    /// sees every piece of output once the screen has taken it, with the writer to
    /// answer through.
    pub fn spawn(
        cmd: CommandBuilder,
        (rows, cols): (u16, u16),
        scrollback: usize,
        mut on_output: impl FnMut(&[u8], &vt100::Parser, &PtyWriter) + Send + 'static,
    ) -> Terminal {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer: PtyWriter = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        let master = Arc::new(Mutex::new(pair.master));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZero::new(rows).unwrap(),
            std::num::NonZero::new(cols).unwrap(),
            scrollback,
        )));
        let drained = Arc::new(AtomicBool::new(false));
        {
            let screen = screen.clone();
            let writer = writer.clone();
            let drained = drained.clone();
            // Keep the master open as long as the reader runs.
            let keep = master.clone();
            std::thread::spawn(move || {
                let _keep = keep;
                let mut buf = [0u8; 8192];
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut parser = screen.lock().unwrap();
                    parser.process(&buf[..n]);
                    on_output(&buf[..n], &parser, &writer);
                }
                drained.store(true, Ordering::SeqCst);
            });
        }
        Terminal {
            screen,
            writer,
            child,
            master,
            drained,
        }
    }

    /// The text on the screen.
    pub fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Types `bytes` all at once.
    pub fn send(&self, bytes: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Waits until the screen satisfies `check`, or fails showing the screen.
    pub fn wait_for(&self, what: &str, check: impl Fn(&vt100::Screen) -> bool) {
        let start = Instant::now();
        loop {
            {
                let parser = self.screen.lock().unwrap();
                if check(parser.screen()) {
                    return;
                }
            }
            assert!(
                start.elapsed() < PTY_DEADLINE,
                "timed out waiting for {what}; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_for_text(&self, text: &str) {
        self.wait_for(text, |s| s.contents().contains(text));
    }

    /// Waits until the row holding the cursor reads `expected` (trailing blanks
    /// aside): a line editor back at its prompt, reading keys. Keys sent before that
    /// may be dropped when the editor switches the terminal to raw mode.
    pub fn wait_for_prompt_line(&self, expected: &str) {
        self.wait_for(&format!("the prompt line {expected:?}"), |s| {
            let (row, _) = s.cursor_position();
            s.rows(0, s.size().1.get())
                .nth(usize::from(row))
                .is_some_and(|line| line.trim_end() == expected)
        });
    }

    /// Waits for the program to exit and for the screen to have taken all it wrote;
    /// kills it and fails when it does not.
    pub fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.wait_for("the last output", |_| self.drained.load(Ordering::SeqCst));
                return status;
            }
            if start.elapsed() > PTY_DEADLINE {
                let _ = self.child.kill();
                panic!("harness9 did not exit; screen:\n{}", self.contents());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
