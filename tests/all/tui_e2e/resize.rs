//! Resize storms (issue 29): the terminal is resized at random, 36 times in about 3 s,
//! while a 500-line answer streams, while an approval is shown and while a command's
//! output arrives, inline and on the alternate screen. Afterwards the terminal's whole
//! history (vt100's scrollback and screen) must hold every streamed line exactly once,
//! in order, and nothing else: no partial copy of a streamed line, no stale rule or
//! status line of an earlier frame.
//!
//! The sizes come from a seeded generator: a failure names its seed, and
//! `HARNESS9_STORM_SEED=N` replays it. The storm is paced (a pause between resizes, as a
//! window manager's drag is), but nothing is asserted on timing: every check waits on
//! the screen with a deadline.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::*;
use crate::support::{Ev, Reply, bash_reply};

/// Lines of the streamed answer.
const LINES: usize = 500;
/// Resizes in a storm.
const RESIZES: usize = 36;
/// Pause between two resizes of a storm: 36 in about 3 s.
const PACE: Duration = Duration::from_millis(80);

/// SplitMix64: a small seeded generator, so a failing storm can be replayed.
struct Storm {
    seed: u64,
    state: u64,
}

impl Storm {
    fn new(default_seed: u64) -> Storm {
        let seed = std::env::var("HARNESS9_STORM_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default_seed);
        Storm { seed, state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `lo..=hi`.
    fn between(&mut self, lo: u16, hi: u16) -> u16 {
        lo + u16::try_from(self.next() % u64::from(hi - lo + 1)).unwrap()
    }

    /// Resizes `tui` at random `count` times, `PACE` apart, to sizes from 12x40 to
    /// 45x140, and back to `rows` x `cols` at the end; returns the sizes used.
    fn blow(&mut self, tui: &Tui, count: usize, (rows, cols): (u16, u16)) -> Vec<(u16, u16)> {
        let mut sizes = Vec::with_capacity(count + 1);
        for _ in 0..count {
            let size = (self.between(12, 45), self.between(40, 140));
            tui.resize(size.0, size.1);
            sizes.push(size);
            std::thread::sleep(PACE);
        }
        tui.resize(rows, cols);
        sizes.push((rows, cols));
        sizes
    }
}

/// `row-001 of the storm` .. `row-500 of the storm`, one line each, streamed one line
/// per event, 6 ms apart (about 3 s).
fn storm_answer() -> Reply {
    let events: Vec<Ev> = (1..=LINES)
        .map(|i| text(&format!("row-{i:03} of the storm\n")))
        .chain([finish("stop")])
        .collect();
    sse(events).delay_ms(6)
}

/// Checks that the `row-NNN` lines of `lines` are exactly `row-001`..`row-{last}` in
/// order, each whole, and that no other line carries a piece of one.
fn assert_rows_once(lines: &[String], first: usize, last: usize, why: &str) {
    let rows: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_end())
        .filter(|l| l.contains("row-") || l.contains("of the storm"))
        .collect();
    let want: Vec<String> = (first..=last)
        .map(|i| format!("row-{i:03} of the storm"))
        .collect();
    if rows != want {
        let missing: Vec<&String> = want
            .iter()
            .filter(|w| !rows.contains(&w.as_str()))
            .collect();
        let extra: Vec<&&str> = rows
            .iter()
            .filter(|r| {
                rows.iter().filter(|x| x == r).count() > 1 || !want.iter().any(|w| w == **r)
            })
            .collect();
        panic!(
            "{why}: {} row lines for {} expected; missing {missing:?}; repeated or partial \
             {extra:?}; history:\n{}",
            rows.len(),
            want.len(),
            lines.join("\n")
        );
    }
}

/// Checks that each line equal to one of `once` appears exactly once in `lines` (the
/// frame's own rows: a stale copy of one is residue of an earlier frame).
fn assert_each_once(lines: &[String], once: &[&str], why: &str) {
    for wanted in once {
        let n = lines
            .iter()
            .filter(|l| l.trim_end().starts_with(wanted))
            .count();
        assert_eq!(
            n,
            1,
            "{why}: {wanted:?} {n} times; history:\n{}",
            lines.join("\n")
        );
    }
}

/// The number of the first `row-NNN` line on a screen.
fn first_row(screen: &str) -> Option<usize> {
    screen.lines().find_map(|l| {
        l.strip_prefix("row-")
            .and_then(|r| r.get(..3)?.parse().ok())
    })
}

/// Rows made only of the composer's rule.
fn rules(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|l| !l.trim().is_empty() && l.trim().chars().all(|c| c == '─'))
        .count()
}

#[test]
fn a_resize_storm_while_an_answer_streams_keeps_every_line_once_inline() {
    let mut storm = Storm::new(29);
    let why = format!("seed {}", storm.seed);
    let server = MockServer::start(vec![storm_answer()]);
    let dirs = Arc::new(Dirs::new());
    let mut tui = Tui::spawn_in(&server, &[], &[], dirs, (30, 100));
    tui.wait_ready();
    tui.submit("storm");
    tui.wait_for_text("row-001");
    let asked = tui.positions_asked.load(Ordering::SeqCst);
    let sizes = storm.blow(&tui, RESIZES, (30, 100));
    tui.wait_for_text("row-500 of the storm");
    tui.wait_ready();
    assert_eq!(
        tui.positions_asked.load(Ordering::SeqCst),
        asked,
        "with no key waiting, a resize asks the terminal nothing"
    );
    tui.sync("after");
    let lines = tui.all_lines();
    let why = format!("{why}, sizes {sizes:?}");
    assert_rows_once(&lines, 1, LINES, &why);
    assert_each_once(
        &lines,
        &["› storm", "ready · / for commands", "harness9 · m"],
        &why,
    );
    assert_eq!(
        rules(&lines),
        1,
        "{why}: one rule, the composer's:\n{}",
        lines.join("\n")
    );
    tui.exit_with_ctrl_c_twice();
    // After exit the conversation stays, still once.
    let lines = tui.all_lines();
    assert_rows_once(&lines, 1, LINES, &format!("{why}, after exit"));
}

#[test]
fn a_resize_storm_during_an_approval_and_a_command_s_output_keeps_every_line_once() {
    let mut storm = Storm::new(2029);
    let why = format!("seed {}", storm.seed);
    let command = "for i in $(seq 1 60); do echo out-$i; sleep 0.04; done";
    let server = MockServer::start(vec![bash_reply("call_1", command), storm_answer()]);
    let dirs = Arc::new(Dirs::new());
    let mut tui = Tui::spawn_in(
        &server,
        &["--approval-mode", "suggest"],
        &[],
        dirs,
        (30, 100),
    );
    tui.wait_ready();
    tui.submit("run and storm");
    tui.wait_for_text("Run this command?");
    storm.blow(&tui, RESIZES / 3, (30, 100));
    tui.wait_for_text("Run this command?");
    tui.send("y");
    tui.wait_for_text("out-1");
    // Resizes while the command prints, then while the answer streams.
    storm.blow(&tui, RESIZES / 3, (30, 100));
    tui.wait_for_text("row-001");
    storm.blow(&tui, RESIZES / 3, (30, 100));
    tui.wait_for_text("row-500 of the storm");
    tui.wait_ready();
    tui.sync("after");
    let lines = tui.all_lines();
    assert_rows_once(&lines, 1, LINES, &why);
    assert_each_once(
        &lines,
        &["› run and storm", "✓ bash", "ready · / for commands"],
        &why,
    );
    assert!(
        !lines.iter().any(|l| l.contains("Run this command?")),
        "{why}: a stale approval is residue:\n{}",
        lines.join("\n")
    );
    // The finished command's cell, collapsed, once.
    assert_each_once(&lines, &["  └ out-1", "    out-3", "    … +"], &why);
    assert_eq!(
        rules(&lines),
        1,
        "{why}: one rule, the composer's:\n{}",
        lines.join("\n")
    );
    tui.exit_with_ctrl_c_twice();
}

#[test]
fn a_resize_storm_on_the_alternate_screen_leaves_a_redraw_of_the_transcript() {
    let mut storm = Storm::new(7);
    let why = format!("seed {}", storm.seed);
    let server = MockServer::start(vec![storm_answer()]);
    let dirs = Arc::new(Dirs::new());
    let mut tui = Tui::spawn_in(&server, &["--alt-screen"], &[], dirs, (30, 100));
    tui.wait_ready();
    tui.submit("storm");
    tui.wait_for_text("row-001");
    storm.blow(&tui, RESIZES, (30, 100));
    tui.wait_for_text("row-500 of the storm");
    tui.wait_ready();
    tui.sync("after");
    // The screen is the transcript's tail drawn afresh: the newest rows in order above
    // the composer, nothing left of the frames drawn at other sizes.
    let screen: Vec<String> = tui.contents().lines().map(str::to_string).collect();
    let first_shown = first_row(&tui.contents())
        .unwrap_or_else(|| panic!("{why}: no row shown:\n{}", screen.join("\n")));
    assert_rows_once(&screen, first_shown, LINES, &why);
    assert_eq!(rules(&screen), 1, "{why}:\n{}", screen.join("\n"));
    // Paging up through the transcript shows every other row once, in order.
    let mut seen: Vec<String> = screen.clone();
    let mut top = first_shown;
    while top > 1 {
        tui.send("\x1b[5~");
        tui.wait_for("the transcript to scroll up", |s| {
            first_row(&s.contents()).is_some_and(|n| n < top)
        });
        let page: Vec<String> = tui.contents().lines().map(str::to_string).collect();
        let new_top = first_row(&tui.contents()).unwrap_or(top);
        // The rows of this page above the previous top, in order.
        let above: Vec<String> = page
            .iter()
            .filter(|l| {
                l.strip_prefix("row-")
                    .and_then(|r| r[..3].parse::<usize>().ok())
                    .is_some_and(|n| n < top)
            })
            .cloned()
            .collect();
        let mut next = above;
        next.extend(seen);
        seen = next;
        top = new_top;
    }
    assert_rows_once(&seen, 1, LINES, &format!("{why}, paged"));
    tui.exit_with_ctrl_c_twice();
}
