//! Prompt caching: which requests carry cache markers and which a cache key
//! ([`PromptCache`], `prompt_cache` in config.toml, decided per request from the base
//! URL and the model as a [`CacheRoute`]), and where the `cache_control` breakpoints go
//! ([`breakpoints`]). Markers are only sent where the route is known to want them, so a
//! strict server never sees a key it does not know with the default setting. It must not
//! know about HTTP, the agent or frontends; the wire names are in `wire.rs`.

use super::Message;

/// The most `cache_control` breakpoints one request may carry (Anthropic's limit, which
/// OpenRouter passes on).
pub const MAX_BREAKPOINTS: usize = 4;

/// `prompt_cache` in config.toml.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PromptCache {
    /// Markers where the route is known to want them: `cache_control` breakpoints on
    /// OpenRouter's `anthropic/*` and `google/*` models, `prompt_cache_key` on
    /// api.openai.com; nothing anywhere else (the default).
    #[default]
    Auto,
    /// `cache_control` breakpoints on every request (a proxy of Anthropic's or Gemini's
    /// API that the URL does not tell).
    Explicit,
    /// No markers at all.
    Off,
}

/// What one request carries for the provider's prompt cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRoute {
    /// `cache_control: {"type": "ephemeral"}` on the system prompt and the newest
    /// messages ([`breakpoints`]).
    Breakpoints,
    /// `prompt_cache_key`: the session's id, so OpenAI routes the session's requests to
    /// the same cache.
    CacheKey,
    /// Nothing: the server caches by itself or not at all.
    Nothing,
}

impl PromptCache {
    /// The route for a request to `base_url` for `model`.
    pub fn route(self, base_url: &str, model: &str) -> CacheRoute {
        match self {
            PromptCache::Off => CacheRoute::Nothing,
            PromptCache::Explicit => CacheRoute::Breakpoints,
            PromptCache::Auto => {
                let host = host(base_url);
                let model = model.to_ascii_lowercase();
                if host == "openrouter.ai"
                    && (model.starts_with("anthropic/") || model.starts_with("google/"))
                {
                    CacheRoute::Breakpoints
                } else if host == "api.openai.com" {
                    CacheRoute::CacheKey
                } else {
                    CacheRoute::Nothing
                }
            }
        }
    }
}

/// The host of a URL, lowercased, without port or user.
fn host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    host_port
        .split(':')
        .next()
        .unwrap_or(host_port)
        .to_ascii_lowercase()
}

/// Which messages carry a breakpoint, by index: the system prompt (so its bytes are the
/// same in every request of the session: it always carries one) and the newest messages
/// with text, at most [`MAX_BREAKPOINTS`] in all. An assistant message with no text
/// (only tool calls) cannot carry one and is passed over. The earlier messages are
/// sent as they always are; only the markers move to the newest ones, which the
/// providers' caches do not count as part of the prefix.
pub fn breakpoints(messages: &[Message]) -> Vec<usize> {
    let has_text = |m: &Message| match m {
        Message::System { content } | Message::User { content, .. } => !content.is_empty(),
        Message::Tool { content, .. } => !content.is_empty(),
        Message::Assistant { content, .. } => !content.is_empty(),
    };
    let system = messages
        .iter()
        .position(|m| matches!(m, Message::System { .. }) && has_text(m));
    let mut marked: Vec<usize> = system.into_iter().collect();
    let newest = messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(i, m)| Some(*i) != system && has_text(m))
        .map(|(i, _)| i)
        .take(MAX_BREAKPOINTS - marked.len());
    marked.extend(newest);
    marked.sort_unstable();
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_follow_the_setting_the_host_and_the_model() {
        let auto = PromptCache::Auto;
        let or = "https://openrouter.ai/api/v1";
        assert_eq!(
            auto.route(or, "anthropic/claude-sonnet-4"),
            CacheRoute::Breakpoints
        );
        assert_eq!(
            auto.route(or, "google/gemini-2.5-pro"),
            CacheRoute::Breakpoints
        );
        assert_eq!(auto.route(or, "openai/gpt-4.1"), CacheRoute::Nothing);
        assert_eq!(
            auto.route("https://api.openai.com/v1", "gpt-4.1"),
            CacheRoute::CacheKey
        );
        // Local and unknown servers get nothing they might refuse.
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "https://api.deepseek.com",
        ] {
            assert_eq!(
                auto.route(url, "anthropic/claude"),
                CacheRoute::Nothing,
                "{url}"
            );
        }
        assert_eq!(
            PromptCache::Explicit.route("http://127.0.0.1:4000/v1", "claude"),
            CacheRoute::Breakpoints
        );
        assert_eq!(
            PromptCache::Off.route(or, "anthropic/claude"),
            CacheRoute::Nothing
        );
    }

    #[test]
    fn breakpoints_are_the_system_prompt_and_the_newest_texts_at_most_four() {
        let user = |t: &str| Message::user(t);
        let tool = |t: &str| Message::Tool {
            tool_call_id: "c".into(),
            content: t.into(),
        };
        let calls_only = Message::Assistant {
            content: "".into(),
            reasoning: None,
            tool_calls: Vec::new(),
        };
        let system = Message::System {
            content: "sys".into(),
        };
        assert_eq!(breakpoints(&[system.clone(), user("a")]), vec![0, 1]);
        let long = vec![
            system.clone(),
            user("a"),
            calls_only.clone(),
            tool("r1"),
            user("b"),
            calls_only.clone(),
            tool("r2"),
            tool("r3"),
            calls_only,
        ];
        assert_eq!(breakpoints(&long), vec![0, 4, 6, 7]);
        assert!(breakpoints(&long).len() <= MAX_BREAKPOINTS);
        // No system prompt: the four newest texts.
        assert_eq!(breakpoints(&long[1..]), vec![2, 3, 5, 6]);
        assert!(breakpoints(&[]).is_empty());
    }
}
