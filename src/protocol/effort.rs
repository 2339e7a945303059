//! How hard a reasoning model is asked to think: the [`Effort`] a session uses, set by
//! `reasoning_effort` in config.toml, `--effort` and `/effort`, carried by
//! `Op::SetEffort` and `Event::EffortChanged`. It names the levels only; how each
//! provider is told (a body field per dialect) is the model client's business.

use serde::{Deserialize, Serialize};

/// A reasoning effort level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    /// Thinking off, where the provider has a switch for it.
    Off,
    /// Little thinking.
    Low,
    /// Some thinking.
    Medium,
    /// Much thinking.
    High,
}

impl Effort {
    /// Every level, in the order `/effort` lists them.
    pub const ALL: [Effort; 4] = [Effort::Low, Effort::Medium, Effort::High, Effort::Off];

    /// The level's name as typed and shown (`low`, `medium`, `high`, `off`).
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Off => "off",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }

    /// The level named `text` (case-insensitive, surrounding blanks ignored).
    pub fn parse(text: &str) -> Option<Effort> {
        let text = text.trim();
        Effort::ALL
            .into_iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(text))
    }

    /// What a frontend shows for a session's effort: the level, or that none is set.
    pub fn describe(effort: Option<Effort>) -> &'static str {
        effort.map_or("not set (the server's default)", Effort::as_str)
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_from_their_names_only() {
        for effort in Effort::ALL {
            assert_eq!(Effort::parse(effort.as_str()), Some(effort));
            assert_eq!(
                Effort::parse(&format!(" {} ", effort.as_str().to_uppercase())),
                Some(effort)
            );
        }
        assert_eq!(Effort::parse("max"), None);
        assert_eq!(Effort::parse(""), None);
        assert_eq!(serde_json::to_value(Effort::High).unwrap(), "high");
        assert_eq!(Effort::describe(None), "not set (the server's default)");
    }
}
