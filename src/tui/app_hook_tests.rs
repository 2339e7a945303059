//! Tests of what the TUI shows of hook runs (issue 32): a cell for a run that blocked a
//! call or a guard that could not answer, a dim line for a hook's `systemMessage`,
//! nothing for a plain run, and a hook's text drawn inert.

use std::time::Instant;

use super::app::{App, CellHistory};
use super::test_support::{catalog_with_skill, drawn, session_info};
use crate::protocol::{Event, HookEvent, HookKeepGoing, HookOrigin, HookRan, HookResult};

fn ran(result: HookResult, system_message: Option<&str>) -> Event {
    Event::HookRan(Box::new(HookRan {
        event: HookEvent::PreToolUse,
        command: "/hooks/no-rm.sh".into(),
        origin: HookOrigin::UserConfig,
        origin_path: "/home/u/.harness9/config.toml".into(),
        tool: Some("bash".into()),
        result,
        keep_going: HookKeepGoing::Yes,
        system_message: system_message.map(str::to_string),
        elapsed_ms: 4,
    }))
}

fn screen_after(events: Vec<Event>) -> String {
    let (_dir, catalog) = catalog_with_skill();
    let mut app = App::new(&session_info(catalog), CellHistory::Transcript);
    let now = Instant::now();
    for event in events {
        app.on_event(event, now);
    }
    drawn(140, 24, |f| {
        let area = f.area();
        let _ = app.render(area, f.buffer_mut(), now);
    })
}

#[test]
fn a_block_and_a_failed_guard_get_a_cell_and_a_plain_run_does_not() {
    let screen = screen_after(vec![
        ran(HookResult::Answered, None),
        ran(
            HookResult::Blocked {
                reason: "rm -rf is not allowed here".into(),
            },
            None,
        ),
        ran(
            HookResult::GuardFailed {
                reason: "it exited with code 127".into(),
            },
            None,
        ),
    ]);
    assert!(
        screen.contains("hook `/hooks/no-rm.sh` blocked bash: rm -rf is not allowed here"),
        "{screen}"
    );
    assert!(
        screen.contains("the guard could not answer, so it denies: it exited with code 127"),
        "{screen}"
    );
    assert_eq!(screen.matches("/hooks/no-rm.sh").count(), 2, "{screen}");
    assert!(!screen.contains("4 ms"), "{screen}");
}

#[test]
fn a_system_message_is_a_dim_line_drawn_inert() {
    let screen = screen_after(vec![ran(
        HookResult::Answered,
        Some("formatted 2 files \u{1b}]0;pwned\u{7}"),
    )]);
    assert!(screen.contains("hook: formatted 2 files"), "{screen}");
    assert!(!screen.contains('\u{1b}'), "{screen:?}");
}
