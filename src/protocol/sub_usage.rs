//! What each sub-agent consumed, for `/usage`: frontends feed it every
//! [`Event::SubAgent`] and show its [`SubAgentUsage::lines`] under the session's
//! totals (which already include the sub-agents'). Runs are grouped by the agent's (or
//! forked skill's) name, in the order first seen. Worded once here so the TUI and the
//! REPL say the same.

use super::{Event, Usage};

/// Usage per sub-agent name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubAgentUsage {
    by_name: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    name: String,
    runs: u32,
    usage: Usage,
}

impl SubAgentUsage {
    /// Counts what `event`, a sub-agent `name`'s own event, says: a run started, or the
    /// tokens of one of its requests.
    pub fn record(&mut self, name: &str, event: &Event) {
        let entry = match self.by_name.iter_mut().position(|e| e.name == name) {
            Some(i) => &mut self.by_name[i],
            None => {
                self.by_name.push(Entry {
                    name: name.to_string(),
                    runs: 0,
                    usage: Usage::default(),
                });
                let last = self.by_name.len() - 1;
                &mut self.by_name[last]
            }
        };
        match event {
            Event::TurnStarted { .. } => entry.runs += 1,
            Event::Usage { turn, .. } => entry.usage.add(turn),
            _ => {}
        }
    }

    /// One line per sub-agent name (none when no sub-agent ran).
    pub fn lines(&self) -> Vec<String> {
        self.by_name
            .iter()
            .filter(|e| e.runs > 0 || e.usage != Usage::default())
            .map(|e| {
                let runs = if e.runs == 1 {
                    "1 run".to_string()
                } else {
                    format!("{} runs", e.runs)
                };
                let cost = e.usage.cost.map(|c| format!(", {c}")).unwrap_or_default();
                format!(
                    "sub-agent {} ({runs}): {} in, {} out{cost}",
                    e.name, e.usage.input_tokens, e.usage.output_tokens
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input_tokens: u64, output_tokens: u64) -> Event {
        let turn = Usage {
            input_tokens,
            output_tokens,
            ..Usage::default()
        };
        Event::Usage {
            turn,
            session: turn,
            context_tokens: None,
        }
    }

    #[test]
    fn runs_of_one_name_add_up_and_names_keep_their_order() {
        let mut u = SubAgentUsage::default();
        let started = Event::TurnStarted { text: "t".into() };
        for name in ["explore", "reviewer", "explore"] {
            u.record(name, &started);
            u.record(name, &usage(100, 10));
        }
        u.record("explore", &usage(5, 1));
        assert_eq!(
            u.lines(),
            [
                "sub-agent explore (2 runs): 205 in, 21 out",
                "sub-agent reviewer (1 run): 100 in, 10 out"
            ]
        );
        assert!(SubAgentUsage::default().lines().is_empty());
    }
}
