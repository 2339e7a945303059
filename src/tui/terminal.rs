//! Terminal modes: entering raw mode, bracketed paste, keyboard enhancement (only when
//! the terminal confirms it supports it) and, on request, the alternate screen; and
//! putting every one of them back on normal exit, on error, on panic (a panic hook) and
//! when the event loop catches SIGTERM/SIGHUP. What was turned on is recorded in
//! process-wide flags, so restoring is idempotent and safe from a panic hook. Mouse
//! capture is never turned on: the terminal keeps native selection.
//!
//! It knows nothing about what is drawn.

use std::io::{self, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::cursor::Show;
use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};

static RAW: AtomicBool = AtomicBool::new(false);
static PASTE: AtomicBool = AtomicBool::new(false);
static KEYBOARD: AtomicBool = AtomicBool::new(false);
static ALT: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// The modes to turn on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modes {
    /// Use the alternate screen.
    pub alt_screen: bool,
}

/// Restores the terminal when dropped.
#[derive(Debug)]
pub struct TerminalGuard {
    modes: Modes,
}

impl TerminalGuard {
    /// Turns the modes on (and installs the panic hook, once per process).
    pub fn enter(modes: Modes) -> io::Result<TerminalGuard> {
        install_panic_hook();
        let guard = TerminalGuard { modes };
        guard.apply()?;
        Ok(guard)
    }

    fn apply(&self) -> io::Result<()> {
        enable_raw_mode()?;
        RAW.store(true, Ordering::SeqCst);
        let mut out = io::stdout();
        execute!(out, EnableBracketedPaste)?;
        PASTE.store(true, Ordering::SeqCst);
        // Ask first; push flags only when the terminal answered that it supports them.
        if supports_keyboard_enhancement().unwrap_or(false) {
            execute!(
                out,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )?;
            KEYBOARD.store(true, Ordering::SeqCst);
        }
        if self.modes.alt_screen {
            execute!(out, EnterAlternateScreen)?;
            ALT.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    /// Gives the terminal back for a while (to run `$EDITOR`).
    pub fn suspend(&self) -> io::Result<()> {
        restore()
    }

    /// Takes the terminal again after [`TerminalGuard::suspend`].
    pub fn resume(&self) -> io::Result<()> {
        self.apply()
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = restore();
    }
}

/// Puts back every mode that was turned on: resets the scrolling region, pops keyboard
/// flags, disables bracketed paste, leaves the alternate screen, shows the cursor and
/// leaves raw mode. Safe to call more than once and from a panic hook.
pub fn restore() -> io::Result<()> {
    let any = [&RAW, &PASTE, &KEYBOARD, &ALT]
        .iter()
        .any(|flag| flag.load(Ordering::SeqCst));
    if !any {
        return Ok(());
    }
    let mut out = io::stdout();
    // The scrolling region is normally reset right after use; reset it anyway, saving
    // and restoring the cursor around it (DECSTBM moves the cursor home).
    let _ = out.write_all(b"\x1b7\x1b[r\x1b8");
    if KEYBOARD.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    if PASTE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableBracketedPaste);
    }
    if ALT.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, LeaveAlternateScreen);
    }
    let _ = execute!(out, Show);
    let _ = out.flush();
    if RAW.swap(false, Ordering::SeqCst) {
        disable_raw_mode()?;
    }
    Ok(())
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = restore();
            previous(info);
        }));
    });
}
