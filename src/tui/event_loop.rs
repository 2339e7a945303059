//! The event loop: waits for whichever comes first (a terminal event, an agent event,
//! a spinner tick while a turn runs, a timer, a signal), hands it to the [`App`], then
//! sends the app's ops to the agent, inserts its finished lines into the scrollback and
//! redraws the live area once. Agent events that are already queued are taken in the
//! same pass, so a burst of streamed text costs one frame. Nothing runs while idle.
//!
//! It owns the terminal for the session (through [`TerminalGuard`]) and the `$EDITOR`
//! round trip; it knows nothing about what keys or events mean.

use std::io::{self, Write};
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Instant;

use crossterm::event::{Event as TermEvent, EventStream};
use futures_core::Stream;
use ratatui::layout::Position;
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::sleep_until;

use super::EndingSignal;
use super::app::{Action, App, CellHistory, FRAME, HistoryRedraw, Lifecycle};
use super::cells::NoticeKind;
use super::screen::{Placement, Screen};
use super::terminal::{Modes, TerminalGuard};
use super::{ScreenMode, TuiError, TuiOptions};
use crate::agent::{AgentHandle, SessionInfo};
use crate::protocol::{Op, Usage};

/// Agent events taken in one pass before drawing.
const BATCH: usize = 512;
/// Terminal events taken in one pass after a resize, so a drag's burst of resizes
/// costs one redraw of the history.
const INPUT_BATCH: usize = 64;
/// Rows of history printed again after a resize in inline mode: more than terminals
/// keep by default (xterm 1,024, tmux 2,000), so the scrollback looks whole, while a
/// resize costs a bounded write however long the session. The first row then says how
/// many lines were left out.
const REPRINT_MAX_ROWS: usize = 10_000;

/// Waits for the next terminal event, or forever when there is no stream.
async fn next_input(stream: &mut Option<EventStream>) -> Option<io::Result<TermEvent>> {
    match stream {
        Some(s) => std::future::poll_fn(|cx| Pin::new(&mut *s).poll_next(cx)).await,
        None => std::future::pending().await,
    }
}

/// crossterm's reader stops at the first ready source of a wake-up: when a resize
/// signal and typed bytes arrive together it reports the resize and the bytes wait,
/// unread and not signalled again, until the next key. After a resize, bytes still
/// waiting on stdin are such keys: asking the terminal where the cursor is makes it
/// answer, and reading that answer takes the waiting keys in too.
fn unstick_input() {
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    let mut fds = [nix::poll::PollFd::new(
        stdin.as_fd(),
        nix::poll::PollFlags::POLLIN,
    )];
    if nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO).is_ok_and(|n| n > 0) {
        let _ = crossterm::cursor::position();
    }
}

/// Runs the TUI until the session ends.
pub async fn run(
    handle: AgentHandle,
    info: SessionInfo,
    options: TuiOptions,
) -> Result<Usage, TuiError> {
    let alt = options.screen == ScreenMode::AltScreen;
    let guard = TerminalGuard::enter(Modes { alt_screen: alt })?;
    let (cols, rows) = crossterm::terminal::size()?;
    let (placement, cursor) = if alt {
        (Placement::Full, Position::new(0, 0))
    } else {
        // Asked once, before the input stream exists (they share the terminal reader).
        let (x, y) = crossterm::cursor::position().unwrap_or((0, rows.saturating_sub(1)));
        (Placement::Inline, Position::new(x, y))
    };
    let cells = if alt {
        CellHistory::Transcript
    } else {
        CellHistory::Scrollback
    };
    let mut app = App::new(&info, cells);
    app.start(options.start);
    app.set_width(cols);
    if let Some(text) = &options.first_prompt {
        app.first_prompt(text, options.start);
    }
    let mut lp = Loop {
        handle,
        guard,
        screen: Screen::new(placement, cols, rows, cursor),
        input: Some(EventStream::new()),
        stdout: io::stdout(),
    };
    let result = lp.run(&mut app).await;
    // Leave the conversation on screen, drop the live area, give the terminal back.
    let Loop {
        mut screen,
        guard,
        mut stdout,
        input,
        ..
    } = lp;
    drop(input);
    let _ = screen.insert_lines(&app.take_lines());
    let _ = screen.finish();
    let _ = screen.flush_to(&mut stdout);
    drop(guard);
    result
}

struct Loop {
    handle: AgentHandle,
    guard: TerminalGuard,
    screen: Screen,
    input: Option<EventStream>,
    stdout: io::Stdout,
}

impl Loop {
    fn send_ops(&mut self, app: &mut App) -> Result<(), TuiError> {
        for op in app.take_ops() {
            if self.handle.ops.send(op).is_err() {
                return Err(TuiError::AgentGone);
            }
        }
        Ok(())
    }

    /// Follows a change of the terminal's size: the next frame redraws the history
    /// from the transcript (see [`Screen::resize`]).
    fn follow_resize(&mut self, cols: u16, rows: u16) -> io::Result<()> {
        if (cols, rows) == self.screen.size() {
            return Ok(());
        }
        self.screen.resize(cols, rows)
    }

    fn draw(&mut self, app: &mut App) -> io::Result<()> {
        // The terminal may have been resized since its Resize event was read (or its
        // event may come after input typed later): a frame drawn for the old size
        // would land where the terminal no longer has the live area.
        if let Ok((cols, rows)) = crossterm::terminal::size() {
            self.follow_resize(cols, rows)?;
        }
        let lines = app.take_lines();
        if app.take_history_redraw() == HistoryRedraw::Reprint {
            self.screen.forget_history();
        }
        if self.screen.wants_history() {
            // The new lines are in the transcript too: printed with the rest, once.
            let (width, _) = self.screen.size();
            self.screen
                .reprint(&app.history_rows(width, REPRINT_MAX_ROWS))?;
        } else {
            self.screen.insert_lines(&lines)?;
        }
        let now = Instant::now();
        let (width, _) = self.screen.size();
        app.set_width(width);
        let height = app.desired_height(width, self.screen.max_height(), now);
        self.screen
            .draw(height, |area, buf| app.render(area, buf, now))?;
        self.screen.flush_to(&mut self.stdout)
    }

    async fn run(&mut self, app: &mut App) -> Result<Usage, TuiError> {
        let mut sigterm = signal(SignalKind::terminate())?;
        let mut sighup = signal(SignalKind::hangup())?;
        let mut sigint = signal(SignalKind::interrupt())?;
        let waker = app.waker();
        loop {
            self.send_ops(app)?;
            if let Lifecycle::Finished(usage) = app.lifecycle() {
                return Ok(usage);
            }
            self.draw(app)?;

            let tick = tokio::time::Instant::now() + FRAME;
            let deadline = app.deadline().map(tokio::time::Instant::from_std);
            tokio::select! {
                event = self.handle.events.recv() => {
                    let now = Instant::now();
                    let Some(event) = event else {
                        return match app.lifecycle() {
                            Lifecycle::Active => Err(TuiError::AgentGone),
                            _ => Ok(app.usage()),
                        };
                    };
                    app.on_event(event, now);
                    for _ in 0..BATCH {
                        match self.handle.events.try_recv() {
                            Ok(event) => app.on_event(event, now),
                            Err(_) => break,
                        }
                    }
                }
                input = next_input(&mut self.input) => {
                    let resized = matches!(input, Some(Ok(TermEvent::Resize(..))));
                    self.on_input(app, input).await?;
                    if resized {
                        // A drag sends many: take those already waiting before drawing.
                        for _ in 0..INPUT_BATCH {
                            if !crossterm::event::poll(std::time::Duration::ZERO)? {
                                break;
                            }
                            let input = Some(crossterm::event::read());
                            self.on_input(app, input).await?;
                        }
                        unstick_input();
                    }
                }
                _ = waker.notified() => {
                    app.on_wake();
                }
                _ = sleep_until(tick), if app.animating() => {}
                _ = async { if let Some(d) = deadline { sleep_until(d).await } }, if deadline.is_some() => {
                    app.tick(Instant::now());
                }
                _ = sigterm.recv() => return self.signalled(EndingSignal::Terminate).await,
                _ = sighup.recv() => return self.signalled(EndingSignal::Hangup).await,
                _ = sigint.recv() => return self.signalled(EndingSignal::Interrupt).await,
            }
        }
    }

    /// Applies one terminal event.
    async fn on_input(
        &mut self,
        app: &mut App,
        input: Option<io::Result<TermEvent>>,
    ) -> Result<(), TuiError> {
        let now = Instant::now();
        match input {
            Some(Ok(TermEvent::Key(key))) => match app.on_key(key, now) {
                Action::OpenEditor => self.edit_draft(app).await?,
                Action::PasteClipboardImage => {
                    if let Some(max) = app.image_cap() {
                        let tools = crate::tui::image_paste::system_tools();
                        let found = crate::tui::image_paste::read_clipboard(&tools, max).await;
                        app.on_clipboard(found);
                    }
                }
                Action::None => {}
            },
            Some(Ok(TermEvent::Paste(text))) => app.on_paste(&text),
            Some(Ok(TermEvent::Resize(cols, rows))) => self.follow_resize(cols, rows)?,
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(TuiError::Io(e)),
            None => {
                return Err(TuiError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the terminal closed its input",
                )));
            }
        }
        Ok(())
    }

    /// A signal ends the session: ask the agent to stop, stop every command and server
    /// it started, give it a moment, and report (the terminal is restored on the way
    /// out).
    async fn signalled(&mut self, signal: EndingSignal) -> Result<Usage, TuiError> {
        let _ = self.handle.ops.send(Op::Shutdown);
        crate::signals::stop_everything().await;
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), async {
            while let Some(event) = self.handle.events.recv().await {
                if matches!(event, crate::protocol::Event::ShutdownComplete { .. }) {
                    break;
                }
            }
        })
        .await;
        Err(TuiError::Signal { signal })
    }

    /// Ctrl+G: hands the terminal to `$VISUAL`/`$EDITOR` with the draft, then takes it
    /// back and redraws everything.
    async fn edit_draft(&mut self, app: &mut App) -> Result<(), TuiError> {
        let editor = std::env::var("VISUAL")
            .ok()
            .or_else(|| std::env::var("EDITOR").ok())
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| "vi".to_string());
        let path: PathBuf =
            std::env::temp_dir().join(format!("harness9-draft-{}.md", std::process::id()));
        std::fs::write(&path, app.draft())?;

        // The input stream must stop reading before the editor reads the terminal.
        drop(self.input.take());
        let _ = self.screen.finish();
        self.screen.flush_to(&mut self.stdout)?;
        self.guard.suspend()?;
        let mut words = editor.split_whitespace();
        let program = words.next().unwrap_or("vi").to_string();
        let status = tokio::process::Command::new(&program)
            .args(words)
            .arg(&path)
            .status()
            .await;
        self.guard.resume()?;
        self.input = Some(EventStream::new());
        self.screen.invalidate();
        let _ = self.stdout.flush();

        match status {
            Ok(s) if s.success() => match std::fs::read_to_string(&path) {
                Ok(text) => app.set_draft(&text),
                Err(e) => app.notice(
                    NoticeKind::Error,
                    &format!("cannot read the draft back: {e}"),
                ),
            },
            Ok(s) => app.notice(
                NoticeKind::Warning,
                &format!("{program} exited with {s}; the draft is unchanged"),
            ),
            Err(e) => app.notice(
                NoticeKind::Error,
                &format!("cannot run {program}: {e}; set $VISUAL or $EDITOR"),
            ),
        }
        let _ = std::fs::remove_file(&path);
        Ok(())
    }
}
