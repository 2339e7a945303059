//! Frame-time benchmark (ignored by default): the whole per-frame path of the event
//! loop (apply a streamed text delta, insert finished lines, plan and render the live
//! area, diff it into terminal bytes) for a fresh session and for one with thousands of
//! turns behind it, inline and alternate-screen. It fails when the long session's median
//! frame is more than [`MAX_RATIO`] times the fresh one's (plus [`SLACK`]); the two are
//! measured frame by frame in turn, so a loaded machine slows both alike.
//!
//! Run: `cargo test --release --lib tui::bench_tests -- --ignored --nocapture`

use std::time::{Duration, Instant};

use ratatui::layout::Position;

use super::app::{App, CellHistory};
use super::screen::{Placement, Screen};
use super::test_support::{complete, session_info};
use crate::protocol::Event;
use crate::skills::Catalog;

const FRAMES: usize = 2000;

fn delta(i: usize) -> Event {
    let text = match i % 12 {
        11 => "line.\n".to_string(),
        5 => format!("`code{i}` "),
        _ => format!("word{i} "),
    };
    Event::TextDelta { text }
}

/// One app and its screen, `turns` finished turns into a session.
struct Bench {
    app: App,
    screen: Screen,
    now: Instant,
    frame: usize,
}

impl Bench {
    fn new(turns: usize, alt: bool) -> Bench {
        let info = session_info(Catalog::empty());
        let cells = if alt {
            CellHistory::Transcript
        } else {
            CellHistory::Scrollback
        };
        let mut app = App::new(&info, cells);
        let placement = if alt {
            Placement::Full
        } else {
            Placement::Inline
        };
        let mut screen = Screen::new(placement, 120, 40, Position::new(0, 0));
        let now = Instant::now();
        for i in 0..turns {
            app.on_event(
                Event::TurnStarted {
                    text: format!("question {i}"),
                },
                now,
            );
            app.on_event(
                Event::TextDelta {
                    text: format!("An answer with **markdown** number {i}.\n\n- one\n- two\n"),
                },
                now,
            );
            app.on_event(complete(), now);
            screen.insert_lines(&app.take_lines()).unwrap();
            let _ = screen.take_output();
        }
        Bench {
            app,
            screen,
            now,
            frame: 0,
        }
    }

    /// One frame (a new turn every 120): its time and the bytes it wrote.
    fn frame(&mut self) -> (Duration, usize) {
        let (app, screen, now, f) = (&mut self.app, &mut self.screen, self.now, self.frame);
        self.frame += 1;
        if f % 120 == 0 {
            app.on_event(complete(), now);
            app.on_event(Event::TurnStarted { text: "go".into() }, now);
        }
        let start = Instant::now();
        app.on_event(delta(f), now);
        let bytes = present(app, screen, now);
        (start.elapsed(), bytes)
    }
}

/// What the event loop does after input: finished lines inserted, the live area planned,
/// rendered and diffed; returns the bytes written.
fn present(app: &mut App, screen: &mut Screen, now: Instant) -> usize {
    screen.insert_lines(&app.take_lines()).unwrap();
    let (width, _) = screen.size();
    let height = app.desired_height(width, screen.max_height(), now);
    screen
        .draw(height, |area, buf| app.render(area, buf, now))
        .unwrap();
    screen.take_output().len()
}

/// Median and 99th percentile of the per-frame time, and bytes written per frame.
struct Stats {
    median: Duration,
    p99: Duration,
    bytes: usize,
}

fn stats(mut times: Vec<Duration>, bytes: usize) -> Stats {
    times.sort();
    Stats {
        median: times[times.len() / 2],
        p99: times[times.len() * 99 / 100],
        bytes: bytes / times.len(),
    }
}

/// [`FRAMES`] frames each of a fresh session and of one `turns` turns in, interleaved
/// frame by frame so that whatever else the machine does slows both alike.
fn measure(turns: usize, alt: bool) -> (Stats, Stats) {
    let mut fresh = Bench::new(0, alt);
    let mut long = Bench::new(turns, alt);
    let (mut fresh_times, mut long_times) = (Vec::new(), Vec::new());
    let (mut fresh_bytes, mut long_bytes) = (0, 0);
    for f in 0..FRAMES {
        // Alternate which goes first, so neither always runs on a warm cache.
        let order = if f % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            if which == 0 {
                let (t, b) = fresh.frame();
                fresh_times.push(t);
                fresh_bytes += b;
            } else {
                let (t, b) = long.frame();
                long_times.push(t);
                long_bytes += b;
            }
        }
    }
    (
        stats(fresh_times, fresh_bytes),
        stats(long_times, long_bytes),
    )
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// How much slower the median frame of a long session may be than a fresh one's: frame
/// work that grew with the session (re-wrapping or re-rendering the transcript) would
/// be hundreds of times slower at 10,000 turns, so a generous bound still catches it on
/// a loaded machine. The slack covers timer resolution on very fast frames.
const MAX_RATIO: f64 = 3.0;
const SLACK: Duration = Duration::from_micros(50);

#[test]
#[ignore = "benchmark; run with --release --ignored --nocapture"]
fn frame_time_does_not_grow_with_the_session() {
    const TURNS: usize = 10_000;
    println!("frame time, 120x40, {FRAMES} frames each (one streamed delta per frame)");
    let mut failures = Vec::new();
    for alt in [false, true] {
        let mode = if alt { "alt-screen" } else { "inline" };
        let (fresh, long) = measure(TURNS, alt);
        for (turns, s) in [(0, &fresh), (TURNS, &long)] {
            println!(
                "{mode:>10} after {turns:>6} turns: median {:>7.1} µs, p99 {:>7.1} µs, {} bytes/frame",
                micros(s.median),
                micros(s.p99),
                s.bytes
            );
        }
        let bound = fresh.median.mul_f64(MAX_RATIO) + SLACK;
        if long.median > bound {
            failures.push(format!(
                "{mode}: median frame {:.1} µs after {TURNS} turns, {:.1} µs fresh \
                 (allowed: {:.1} µs)",
                micros(long.median),
                micros(fresh.median),
                micros(bound)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "frame time grows with the session:\n{}",
        failures.join("\n")
    );
}

/// A tree of `dirs` × 100 files: `pkgAA/modBB/file_CCC.rs`.
fn big_tree(dirs: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..dirs {
        let folder = dir
            .path()
            .join(format!("pkg{:02}/mod{:02}", d / 50, d % 50));
        std::fs::create_dir_all(&folder).unwrap();
        for f in 0..100 {
            std::fs::write(folder.join(format!("file_{f:03}.rs")), "x").unwrap();
        }
    }
    dir
}

/// Types `text` into the app and waits (deadline 60 s) for the picker to show a list
/// answering it with the walk finished; returns how long the answer took.
fn type_and_wait(app: &mut App, text: &str, want: &str) -> Duration {
    use crossterm::event::{KeyCode, KeyEvent};
    let start = Instant::now();
    for c in text.chars() {
        app.on_key(KeyEvent::from(KeyCode::Char(c)), Instant::now());
    }
    loop {
        app.on_wake();
        let drawn = crate::tui::test_support::drawn(120, 14, |f| {
            let area = f.area();
            app.render(area, f.buffer_mut(), Instant::now());
        });
        if drawn.contains(want) && !drawn.contains("indexing") && !drawn.contains("searching") {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no list:\n{drawn}"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
#[ignore = "benchmark; run with --release --ignored --nocapture"]
fn frame_time_with_the_file_picker_open_over_100k_files() {
    use crossterm::event::{KeyCode, KeyEvent};
    let tree = big_tree(1000);
    let mut info = session_info(Catalog::empty());
    info.workdir = tree.path().to_path_buf();
    let mut app = App::new(&info, CellHistory::Scrollback);
    let mut screen = Screen::new(Placement::Inline, 120, 40, Position::new(0, 0));
    let first = type_and_wait(&mut app, "@", "101,020 files and folders");
    let query = type_and_wait(&mut app, "mod3", "of 101,020");
    let narrower = type_and_wait(&mut app, "f099", "of 101,020");
    println!(
        "picker over 101,020 entries: first list (walk included) {:.0} ms; \
         answer to a 4-character query {:.1} ms, to 4 more {:.1} ms",
        first.as_secs_f64() * 1e3,
        query.as_secs_f64() * 1e3,
        narrower.as_secs_f64() * 1e3
    );
    let mut times = Vec::with_capacity(FRAMES);
    let mut bytes = 0;
    for f in 0..FRAMES {
        let now = Instant::now();
        // Every frame moves the selection, so every frame has something to draw.
        let key = if f % 16 < 8 {
            KeyCode::Down
        } else {
            KeyCode::Up
        };
        let start = Instant::now();
        app.on_key(KeyEvent::from(key), now);
        app.on_wake();
        bytes += present(&mut app, &mut screen, now);
        times.push(start.elapsed());
    }
    let s = stats(times, bytes);
    println!(
        "frame with the picker open (a selection move each): median {:.1} µs, p99 {:.1} µs, \
         {} bytes/frame",
        micros(s.median),
        micros(s.p99),
        s.bytes
    );
    assert!(
        s.median < Duration::from_micros(100),
        "median frame {:.1} µs with the picker open",
        micros(s.median)
    );
}
