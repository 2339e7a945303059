//! The plan `update_plan` keeps, as the TUI draws it above the composer: every step
//! with its mark when there is room, one line with the count and the step under way
//! when the window is small or the plan is done; gone after `/clear`.

use super::*;
use crate::protocol::{PlanStep, PlanUpdate, StepStatus};

fn plan(statuses: &[StepStatus]) -> Event {
    let names = [
        "read the parser",
        "add a cache",
        "test it",
        "write the docs",
    ];
    Event::Plan {
        plan: PlanUpdate {
            items: statuses
                .iter()
                .zip(names)
                .map(|(status, step)| PlanStep {
                    step: step.into(),
                    status: *status,
                })
                .collect(),
            explanation: None,
        },
    }
}

/// The screen as the event loop draws it: the height asked first, then drawn.
fn live_screen(h: &mut Harness, width: u16, rows: u16) -> String {
    let height = h.app.desired_height(width, rows, h.now);
    h.screen(width, height)
}

#[test]
fn the_plan_is_drawn_above_the_composer_and_short_when_the_window_is_small() {
    use StepStatus::*;
    let mut h = Harness::new();
    h.event(plan(&[Done, InProgress, Pending, Pending]));
    let tall = live_screen(&mut h, 60, 30);
    insta::assert_snapshot!("plan_tall", tall);
    assert_shows(
        &tall,
        &[
            "Plan 1/4 done",
            "✔ read the parser",
            "▸ add a cache",
            "○ test it",
        ],
    );
    let small = live_screen(&mut h, 60, 9);
    insta::assert_snapshot!("plan_small", small);
    assert_shows(&small, &["Plan 1/4 done · now: add a cache"]);
    assert!(!small.contains("○ test it"), "{small}");
    // Done: one line.
    h.event(plan(&[Done, Done, Done, Done]));
    let done = live_screen(&mut h, 60, 30);
    assert_shows(&done, &["Plan 4/4 done"]);
    assert!(!done.contains("✔"), "{done}");
    h.event(Event::ConversationCleared);
    assert!(!live_screen(&mut h, 60, 30).contains("Plan"));
}

#[test]
fn a_step_is_drawn_inert() {
    let mut h = Harness::new();
    h.event(Event::Plan {
        plan: PlanUpdate {
            items: vec![PlanStep {
                step: "evil \u{1b}[2Jstep".into(),
                status: StepStatus::InProgress,
            }],
            explanation: None,
        },
    });
    let screen = live_screen(&mut h, 60, 30);
    assert!(screen.contains("evil"), "{screen}");
    assert!(!screen.contains('\u{1b}'), "{screen}");
}
