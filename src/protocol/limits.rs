//! The run's hard limits as the contract carries them: which one stopped a turn
//! ([`RunLimit`], in [`super::TurnOutcome::LimitReached`]), its error kind and its one
//! wording. Plain data: the limits are kept by the agent (`agent/limits.rs`).

use serde::{Deserialize, Serialize};

use super::{Cost, ErrorKind};

/// A limit of the run (`--timeout`, `--max-cost`) that stopped a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunLimit {
    /// `--timeout`: the run lasted as long as it was allowed to.
    Time {
        /// The limit, in milliseconds.
        timeout_ms: u64,
    },
    /// `--max-cost`: the run's spend passed the limit.
    Cost {
        /// The limit, in US dollars.
        max_usd: Cost,
        /// What the run had spent when it was stopped, in US dollars.
        spent_usd: Cost,
    },
    /// `--max-cost`, and a request was answered by a model without a price: what it
    /// cost cannot be counted, so the run stops rather than spend blind.
    Unpriced {
        /// The model.
        model: String,
    },
}

impl RunLimit {
    /// The error kind scripts see: `time_limit` or `cost_limit`.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RunLimit::Time { .. } => ErrorKind::TimeLimit,
            RunLimit::Cost { .. } | RunLimit::Unpriced { .. } => ErrorKind::CostLimit,
        }
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            RunLimit::Time { timeout_ms } => format!(
                "stopped at the run's time limit (--timeout {}); running commands were stopped",
                shown_duration(*timeout_ms)
            ),
            RunLimit::Cost { max_usd, spent_usd } => format!(
                "stopped at the run's cost limit (--max-cost {:.6}): {spent_usd} spent",
                max_usd.dollars()
            ),
            RunLimit::Unpriced { model } => format!(
                "stopped: --max-cost is set but model `{model}` has no price in config.toml \
                 ([prices]), so its cost cannot be counted"
            ),
        }
    }
}

/// `90s`, `10m`, `1h30m`, `1.5s`: milliseconds as the flag would take them back.
fn shown_duration(ms: u64) -> String {
    if !ms.is_multiple_of(1000) {
        return format!("{}s", ms as f64 / 1000.0);
    }
    let seconds = ms / 1000;
    match seconds {
        s if s.is_multiple_of(3600) && s > 0 => format!("{}h", s / 3600),
        s if s.is_multiple_of(60) && s > 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_has_its_kind_and_words() {
        let time = RunLimit::Time { timeout_ms: 90_000 };
        assert_eq!(time.kind(), ErrorKind::TimeLimit);
        assert!(
            time.describe().contains("--timeout 90s"),
            "{}",
            time.describe()
        );
        let cost = RunLimit::Cost {
            max_usd: Cost::from_micros(10_000),
            spent_usd: Cost::from_micros(12_500),
        };
        assert_eq!(cost.kind(), ErrorKind::CostLimit);
        assert!(
            cost.describe().contains("$0.0125 spent"),
            "{}",
            cost.describe()
        );
        let json = serde_json::to_value(&cost).unwrap();
        assert_eq!(json["kind"], "cost");
        assert_eq!(json["max_usd"], 0.01);
        assert_eq!(shown_duration(600_000), "10m");
        assert_eq!(shown_duration(7_200_000), "2h");
        assert_eq!(shown_duration(1_500), "1.5s");
    }
}
