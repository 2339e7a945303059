//! Which wire protocol a request speaks: the Chat Completions API (`/chat/completions`,
//! what every OpenAI-compatible server offers) or OpenAI's Responses API (`/responses`,
//! the only one OpenAI's codex and `-pro` models answer). Owns the setting (`wire` in
//! config.toml, `auto` when unset) and the rule that picks the Responses wire by itself
//! for those models on api.openai.com. It must not know either wire's field names.

/// A wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// `POST {base_url}/chat/completions`.
    Chat,
    /// `POST {base_url}/responses`.
    Responses,
}

/// The configured choice of wire (`wire = "auto" | "chat" | "responses"` in config.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(from = "WireName")]
pub enum WireSetting {
    /// Not set: the Responses wire for OpenAI's Responses-only models on
    /// api.openai.com ([`responses_only`]), the Chat wire for everything else.
    #[default]
    Auto,
    /// Set in config.toml: this wire for every model.
    Always {
        /// The wire.
        wire: Wire,
    },
}

/// How config.toml spells a [`WireSetting`].
#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum WireName {
    Auto,
    Chat,
    Responses,
}

impl From<WireName> for WireSetting {
    fn from(name: WireName) -> Self {
        match name {
            WireName::Auto => WireSetting::Auto,
            WireName::Chat => WireSetting::Always { wire: Wire::Chat },
            WireName::Responses => WireSetting::Always {
                wire: Wire::Responses,
            },
        }
    }
}

impl WireSetting {
    /// The wire a request for `model` at `base_url` goes over.
    pub fn for_model(self, base_url: &str, model: &str) -> Wire {
        match self {
            WireSetting::Always { wire } => wire,
            WireSetting::Auto if is_openai_api(base_url) && responses_only(model) => {
                Wire::Responses
            }
            WireSetting::Auto => Wire::Chat,
        }
    }
}

/// Whether `base_url` is OpenAI's own API (`https://api.openai.com/...`), judged on the
/// parsed host, not on a substring (`https://api.openai.com.example/` is not it).
fn is_openai_api(base_url: &str) -> bool {
    reqwest::Url::parse(base_url).is_ok_and(|url| {
        url.scheme() == "https"
            && url
                .host_str()
                .is_some_and(|h| h.eq_ignore_ascii_case("api.openai.com"))
    })
}

/// Whether OpenAI serves `model` through the Responses API only. The list follows the
/// models OpenAI's OpenAPI spec accepts for `/responses` beyond the shared chat models
/// (`ResponsesModel` in openai-python's `types/shared/responses_model.py`: `o1-pro`,
/// `o3-pro`, the deep-research models, `computer-use-preview`, `gpt-5-codex`,
/// `gpt-5.1-codex-max`, `gpt-5-pro`, `gpt-5.5-pro`, `gpt-5.6-cyber`,
/// `gpt-rosalind-research`, the `gpt-daybreak-*` models, with their dated ids), widened
/// to whole families where OpenAI's model pages say "Responses API only" for every
/// member: every codex model (`gpt-5.1-codex`, `codex-mini-latest`, …) and every
/// `gpt-5.N-pro`. The id's last path segment is judged, case-folded, so
/// `openai/o3-pro` reads the same.
pub fn responses_only(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let codex = name.starts_with("codex-") || name.contains("-codex");
    let pro = ["o1-pro", "o3-pro", "gpt-5-pro"]
        .iter()
        .any(|family| is_family(&name, family))
        || gpt5_point_pro(&name);
    let named = ["gpt-5.6-cyber", "gpt-rosalind-research"]
        .iter()
        .any(|id| is_family(&name, id))
        || name.starts_with("gpt-daybreak-");
    codex
        || pro
        || named
        || name.contains("deep-research")
        || name.starts_with("computer-use-preview")
}

/// `name` is `family` itself or a dated/suffixed id of it (`o3-pro-2025-06-10`).
fn is_family(name: &str, family: &str) -> bool {
    name.strip_prefix(family)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
}

/// `gpt-5.N-pro` (and its dated ids).
fn gpt5_point_pro(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("gpt-5.") else {
        return false;
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && is_family(&rest[digits..], "-pro")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_only_models_are_known_by_family() {
        for model in [
            "gpt-5-codex",
            "gpt-5.1-codex",
            "gpt-5.1-codex-max",
            "gpt-5.1-codex-mini",
            "codex-mini-latest",
            "o1-pro",
            "o3-pro",
            "o3-pro-2025-06-10",
            "gpt-5-pro",
            "gpt-5.2-pro",
            "gpt-5.5-pro-2026-04-23",
            "gpt-5-pro-2025-10-06",
            "o3-deep-research",
            "gpt-5.6-cyber",
            "gpt-rosalind-research",
            "gpt-daybreak-blue-latest",
            "o4-mini-deep-research",
            "computer-use-preview",
            "openai/O3-PRO",
        ] {
            assert!(responses_only(model), "{model}");
        }
        for model in [
            "gpt-4o",
            "gpt-5",
            "gpt-5.1",
            "o3",
            "o3-mini",
            "o1",
            "gpt-5-nano",
            "o3-professional",
            "gpt-5.x-pro",
            "llama-3-pro-max",
            "",
        ] {
            assert!(!responses_only(model), "{model}");
        }
    }

    #[test]
    fn auto_picks_responses_only_on_openai_for_those_models() {
        let auto = WireSetting::Auto;
        let openai = "https://api.openai.com/v1";
        assert_eq!(auto.for_model(openai, "gpt-5-codex"), Wire::Responses);
        assert_eq!(
            auto.for_model("https://API.OpenAI.com/v1/", "o3-pro"),
            Wire::Responses
        );
        assert_eq!(auto.for_model(openai, "gpt-4o"), Wire::Chat);
        // Another host serving the same id (a proxy, OpenRouter) keeps its own wire.
        for other in [
            "https://openrouter.ai/api/v1",
            "https://api.openai.com.example/v1",
            "http://api.openai.com/v1",
            "http://127.0.0.1:8080/v1",
            "not a url",
        ] {
            assert_eq!(auto.for_model(other, "gpt-5-codex"), Wire::Chat, "{other}");
        }
        let set = WireSetting::Always {
            wire: Wire::Responses,
        };
        assert_eq!(
            set.for_model("http://127.0.0.1:1/v1", "gpt-4o"),
            Wire::Responses
        );
        let chat = WireSetting::Always { wire: Wire::Chat };
        assert_eq!(chat.for_model(openai, "gpt-5-codex"), Wire::Chat);
    }
}
