//! The run's hard limits (`--timeout`, `--max-cost`; docs/CI.md), kept for the whole
//! session and every sub-agent in it. Each turn's interrupt token is a child of one
//! session-wide token, so reaching a limit interrupts whatever runs (the model's
//! stream, every command, every sub-agent) the way Ctrl-C does, and every later turn
//! is born interrupted; the turn's outcome then names the limit
//! ([`TurnOutcome::LimitReached`]) instead of an interrupt by the user.
//!
//! The time runs from the session's start; the cost is the priced usage of every
//! request the run makes (the main conversation's and its sub-agents'), counted as
//! each request ends. A request answered by a model without a price stops the run
//! when a cost limit is set: it cannot be counted, so it is not risked again.
//!
//! It owns the limits' state; it must not know frontends, exit codes or how a turn
//! works inside.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::protocol::{Cost, RunLimit, TurnOutcome, Usage};

/// The limits of one run and what has been used of them.
#[derive(Debug)]
pub struct RunLimits {
    /// `--timeout`, and when the run started.
    time: Option<(Duration, Instant)>,
    /// `--max-cost`.
    max_cost: Option<Cost>,
    /// The priced usage of every request so far.
    spent: Mutex<Cost>,
    /// The first limit reached (the run stops at the first).
    reached: OnceLock<RunLimit>,
    /// Cancelled when a limit is reached: every turn's token is its child.
    stop: CancellationToken,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits::new(None, None)
    }
}

impl RunLimits {
    /// The limits of a run starting now.
    pub fn new(timeout: Option<Duration>, max_cost: Option<Cost>) -> Self {
        RunLimits {
            time: timeout.map(|t| (t, Instant::now())),
            max_cost,
            spent: Mutex::new(Cost::default()),
            reached: OnceLock::new(),
            stop: CancellationToken::new(),
        }
    }

    /// The interrupt token for a new turn: cancelled at once when a limit was already
    /// reached, and when one is reached while the turn runs.
    pub fn turn_token(&self) -> CancellationToken {
        self.stop.child_token()
    }

    /// The limit that stopped the run, if one did.
    pub fn reached(&self) -> Option<&RunLimit> {
        self.reached.get()
    }

    /// Marks `limit` as reached (the first one stays) and interrupts everything.
    fn reach(&self, limit: RunLimit) {
        let _ = self.reached.set(limit);
        self.stop.cancel();
    }

    /// Waits for the time limit and reaches it; returns at once without one. Spawned
    /// once per session.
    pub async fn watch_time(self: Arc<Self>) {
        let Some((timeout, started)) = self.time else {
            return;
        };
        tokio::time::sleep_until(tokio::time::Instant::from_std(started + timeout)).await;
        self.reach(RunLimit::Time {
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        });
    }

    /// Counts one request's priced `usage` (answered by `model`) against the cost
    /// limit; the limit when this request reached it (or had no price to count).
    pub fn count(&self, model: &str, usage: &Usage) -> Option<RunLimit> {
        let max = self.max_cost?;
        let Some(cost) = usage.cost else {
            let limit = RunLimit::Unpriced {
                model: model.to_string(),
            };
            self.reach(limit.clone());
            return Some(limit);
        };
        let spent = {
            // A poisoned lock only means another request's count panicked; the sum
            // it holds is still the best there is.
            let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
            *spent = spent.plus(cost);
            *spent
        };
        (spent > max).then(|| {
            let limit = RunLimit::Cost {
                max_usd: max,
                spent_usd: spent,
            };
            self.reach(limit.clone());
            limit
        })
    }

    /// `outcome` as the run reports it: an interrupt that a limit caused names the
    /// limit.
    pub fn explain(&self, outcome: TurnOutcome) -> TurnOutcome {
        match (outcome, self.reached()) {
            (TurnOutcome::Interrupted, Some(limit)) => TurnOutcome::LimitReached {
                limit: limit.clone(),
            },
            (outcome, _) => outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priced(micros: u64) -> Usage {
        Usage {
            cost: Some(Cost::from_micros(micros)),
            ..Usage::default()
        }
    }

    #[test]
    fn the_cost_limit_is_passed_only_by_spending_more_and_then_stops_every_turn() {
        let limits = RunLimits::new(None, Some(Cost::from_micros(1_000)));
        let running = limits.turn_token();
        assert_eq!(limits.count("m", &priced(600)), None);
        assert_eq!(
            limits.count("m", &priced(400)),
            None,
            "exactly the limit is allowed"
        );
        assert!(!running.is_cancelled());
        let reached = limits.count("m", &priced(1));
        assert_eq!(
            reached,
            Some(RunLimit::Cost {
                max_usd: Cost::from_micros(1_000),
                spent_usd: Cost::from_micros(1_001),
            })
        );
        assert!(running.is_cancelled(), "the running turn is interrupted");
        assert!(limits.turn_token().is_cancelled(), "a later turn too");
        assert!(matches!(
            limits.explain(TurnOutcome::Interrupted),
            TurnOutcome::LimitReached { .. }
        ));
        assert_eq!(
            limits.explain(TurnOutcome::Completed),
            TurnOutcome::Completed
        );
    }

    #[test]
    fn an_unpriced_request_stops_a_run_with_a_cost_limit_and_nothing_without_one() {
        let limits = RunLimits::new(None, Some(Cost::from_micros(1_000)));
        let reached = limits.count("free", &Usage::default());
        assert_eq!(
            reached,
            Some(RunLimit::Unpriced {
                model: "free".into()
            })
        );
        let unlimited = RunLimits::default();
        assert_eq!(unlimited.count("free", &Usage::default()), None);
        assert!(!unlimited.turn_token().is_cancelled());
        assert_eq!(
            unlimited.explain(TurnOutcome::Interrupted),
            TurnOutcome::Interrupted
        );
    }

    #[tokio::test]
    async fn the_time_limit_interrupts_the_running_turn_when_it_passes() {
        let far = Arc::new(RunLimits::new(Some(Duration::from_secs(3600)), None));
        tokio::spawn(far.clone().watch_time());
        tokio::task::yield_now().await;
        assert!(!far.turn_token().is_cancelled(), "not before the time");
        let limits = Arc::new(RunLimits::new(Some(Duration::from_millis(20)), None));
        let running = limits.turn_token();
        tokio::spawn(limits.clone().watch_time());
        tokio::time::timeout(Duration::from_secs(30), running.cancelled())
            .await
            .expect("interrupted when the time is up");
        assert_eq!(limits.reached(), Some(&RunLimit::Time { timeout_ms: 20 }));
    }
}
