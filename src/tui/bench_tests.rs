//! Frame-time benchmark (ignored by default): the whole per-frame path of the event
//! loop (apply a streamed text delta, insert finished lines, plan and render the live
//! area, diff it into terminal bytes) for a fresh session and for one with thousands of
//! turns behind it, inline and alternate-screen.
//!
//! Run: `cargo test --release --lib tui::bench_tests -- --ignored --nocapture`

use std::time::{Duration, Instant};

use ratatui::layout::Position;

use super::app::{App, CellHistory};
use super::screen::{Placement, Screen};
use super::test_support::session_info;
use crate::protocol::{Event, TurnOutcome, Usage};
use crate::skills::Catalog;

const FRAMES: usize = 2000;

fn complete() -> Event {
    Event::TurnComplete {
        outcome: TurnOutcome::Completed,
        final_text: String::new(),
        usage: Usage::default(),
        requests: 1,
    }
}

fn delta(i: usize) -> Event {
    let text = match i % 12 {
        11 => "line.\n".to_string(),
        5 => format!("`code{i}` "),
        _ => format!("word{i} "),
    };
    Event::TextDelta { text }
}

/// Median and 99th percentile of the per-frame time, and bytes written per frame.
fn measure(turns_before: usize, alt: bool) -> (Duration, Duration, usize) {
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
    for i in 0..turns_before {
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
    let mut times = Vec::with_capacity(FRAMES);
    let mut bytes = 0usize;
    for f in 0..FRAMES {
        if f % 120 == 0 {
            app.on_event(complete(), now);
            app.on_event(Event::TurnStarted { text: "go".into() }, now);
        }
        let start = Instant::now();
        app.on_event(delta(f), now);
        screen.insert_lines(&app.take_lines()).unwrap();
        let (width, _) = screen.size();
        let height = app.desired_height(width, screen.max_height(), now);
        screen
            .draw(height, |area, buf| app.render(area, buf, now))
            .unwrap();
        bytes += screen.take_output().len();
        times.push(start.elapsed());
    }
    times.sort();
    (times[FRAMES / 2], times[FRAMES * 99 / 100], bytes / FRAMES)
}

#[test]
#[ignore = "benchmark; run with --release --ignored --nocapture"]
fn frame_time_does_not_grow_with_the_session() {
    println!("frame time, 120x40, {FRAMES} frames each (one streamed delta per frame)");
    for alt in [false, true] {
        for turns in [0usize, 10_000] {
            let (median, p99, bytes) = measure(turns, alt);
            let mode = if alt { "alt-screen" } else { "inline" };
            println!(
                "{mode:>10} after {turns:>6} turns: median {:>7.1} µs, p99 {:>7.1} µs, {bytes} bytes/frame",
                median.as_secs_f64() * 1e6,
                p99.as_secs_f64() * 1e6
            );
        }
    }
}
