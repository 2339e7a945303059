//! How a reasoning [`Effort`] is told to each kind of server: the [`EffortDialect`]
//! (decided from the base URL and the model id, or set in config.toml) and the body
//! fields it adds to a chat request. Nothing is added when no effort is set, so a strict
//! server never sees a key it does not know unless the user asked for one. It must not
//! know about HTTP, the agent or frontends.

use serde_json::{Value, json};

use crate::protocol::Effort;

/// Which body field carries the effort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffortDialect {
    /// `"reasoning_effort": "low" | "medium" | "high"`, off as `"none"` (OpenAI, and
    /// any other server).
    ReasoningEffort,
    /// DeepSeek: `"reasoning_effort"` for the level, and off as
    /// `"thinking": {"type": "disabled"}` (its documented switch; `"none"` is not one of
    /// its levels).
    Deepseek,
    /// `"reasoning": {"effort": …}`, off as `{"enabled": false}` (OpenRouter).
    Openrouter,
    /// `"chat_template_kwargs": {"enable_thinking": …}`, false only when off (Qwen3 served
    /// by vLLM, SGLang or llama.cpp's server).
    ChatTemplateKwargs,
    /// Ollama: `"think"` (true or false; the level itself for gpt-oss models, the only
    /// ones that take one) and `"reasoning_effort"`, which Ollama's OpenAI-compatible
    /// endpoint reads (off as `"none"`).
    Ollama,
}

/// Where the dialect comes from (`effort_dialect` in config.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DialectChoice {
    /// Decided from the base URL and the model of each request (the default).
    #[default]
    FromEndpoint,
    /// As configured.
    Configured {
        /// The dialect.
        dialect: EffortDialect,
    },
}

impl DialectChoice {
    /// The dialect for a request to `base_url` for `model`.
    pub fn dialect(self, base_url: &str, model: &str) -> EffortDialect {
        match self {
            DialectChoice::Configured { dialect } => dialect,
            DialectChoice::FromEndpoint => EffortDialect::detect(base_url, model),
        }
    }
}

impl EffortDialect {
    /// The dialect a server at `base_url` serving `model` speaks: OpenRouter by its host,
    /// Ollama by its port (11434) or a host named for it, Qwen3 models elsewhere by their
    /// id (`Qwen/Qwen3-8B`, `qwen3:32b`), and `reasoning_effort` for everything else.
    pub fn detect(base_url: &str, model: &str) -> EffortDialect {
        let host = host_and_port(base_url).to_ascii_lowercase();
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        if host == "openrouter.ai" || host.ends_with(".openrouter.ai") {
            EffortDialect::Openrouter
        } else if host == "api.deepseek.com" {
            EffortDialect::Deepseek
        } else if host.ends_with(":11434") || host.split([':', '.']).any(|p| p == "ollama") {
            EffortDialect::Ollama
        } else if name.starts_with("qwen3") && !is_hosted_api(&host) {
            EffortDialect::ChatTemplateKwargs
        } else {
            EffortDialect::ReasoningEffort
        }
    }

    /// The top-level body fields that carry `effort` for `model`.
    pub fn fields(self, effort: Effort, model: &str) -> Vec<(&'static str, Value)> {
        let level = match effort {
            Effort::Off => "none",
            other => other.as_str(),
        };
        match self {
            EffortDialect::ReasoningEffort => vec![("reasoning_effort", json!(level))],
            EffortDialect::Deepseek => match effort {
                Effort::Off => vec![("thinking", json!({"type": "disabled"}))],
                _ => vec![("reasoning_effort", json!(level))],
            },
            EffortDialect::Openrouter => vec![(
                "reasoning",
                match effort {
                    Effort::Off => json!({"enabled": false}),
                    _ => json!({"effort": level}),
                },
            )],
            EffortDialect::ChatTemplateKwargs => vec![(
                "chat_template_kwargs",
                json!({"enable_thinking": effort != Effort::Off}),
            )],
            EffortDialect::Ollama => {
                let name = model.rsplit('/').next().unwrap_or(model);
                let think = match effort {
                    Effort::Off => json!(false),
                    _ if name.to_ascii_lowercase().starts_with("gpt-oss") => json!(level),
                    _ => json!(true),
                };
                vec![("think", think), ("reasoning_effort", json!(level))]
            }
        }
    }
}

/// `host[:port]` of a URL.
fn host_and_port(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    authority.rsplit('@').next().unwrap_or(authority)
}

/// Hosted APIs with a `reasoning_effort` of their own, where a Qwen3 id does not mean a
/// chat template is being filled in.
fn is_hosted_api(host: &str) -> bool {
    ["api.openai.com", "api.deepseek.com"].contains(&host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialects_are_told_by_host_port_and_model() {
        let cases = [
            (
                "https://api.openai.com/v1",
                "o3",
                EffortDialect::ReasoningEffort,
            ),
            (
                "https://api.deepseek.com",
                "deepseek-reasoner",
                EffortDialect::Deepseek,
            ),
            (
                "https://openrouter.ai/api/v1",
                "qwen/qwen3-32b",
                EffortDialect::Openrouter,
            ),
            (
                "http://127.0.0.1:11434/v1",
                "qwen3:8b",
                EffortDialect::Ollama,
            ),
            ("http://ollama.lan:8080/v1", "llama3", EffortDialect::Ollama),
            (
                "http://127.0.0.1:8000/v1",
                "Qwen/Qwen3-8B",
                EffortDialect::ChatTemplateKwargs,
            ),
            (
                "http://127.0.0.1:8080/v1",
                "qwen3-30b-a3b",
                EffortDialect::ChatTemplateKwargs,
            ),
            (
                "http://127.0.0.1:8080/v1",
                "qwen2.5-coder",
                EffortDialect::ReasoningEffort,
            ),
            (
                "http://user@10.0.0.2:9000/v1",
                "gpt-oss-20b",
                EffortDialect::ReasoningEffort,
            ),
        ];
        for (url, model, want) in cases {
            assert_eq!(EffortDialect::detect(url, model), want, "{url} {model}");
        }
        let fixed = DialectChoice::Configured {
            dialect: EffortDialect::Ollama,
        };
        assert_eq!(
            fixed.dialect("https://api.openai.com/v1", "o3"),
            EffortDialect::Ollama
        );
    }

    #[test]
    fn each_dialect_names_its_own_fields() {
        let body = |dialect: EffortDialect, effort, model| {
            serde_json::Value::Object(
                dialect
                    .fields(effort, model)
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            )
        };
        use EffortDialect::*;
        assert_eq!(
            body(Deepseek, Effort::High, "d"),
            json!({"reasoning_effort": "high"})
        );
        assert_eq!(
            body(Deepseek, Effort::Off, "d"),
            json!({"thinking": {"type": "disabled"}})
        );
        assert_eq!(
            body(ReasoningEffort, Effort::High, "o3"),
            json!({"reasoning_effort": "high"})
        );
        assert_eq!(
            body(ReasoningEffort, Effort::Off, "o3"),
            json!({"reasoning_effort": "none"})
        );
        assert_eq!(
            body(Openrouter, Effort::Low, "x"),
            json!({"reasoning": {"effort": "low"}})
        );
        assert_eq!(
            body(Openrouter, Effort::Off, "x"),
            json!({"reasoning": {"enabled": false}})
        );
        assert_eq!(
            body(ChatTemplateKwargs, Effort::Medium, "q"),
            json!({"chat_template_kwargs": {"enable_thinking": true}})
        );
        assert_eq!(
            body(ChatTemplateKwargs, Effort::Off, "q"),
            json!({"chat_template_kwargs": {"enable_thinking": false}})
        );
        assert_eq!(
            body(Ollama, Effort::High, "qwen3:8b"),
            json!({"think": true, "reasoning_effort": "high"})
        );
        assert_eq!(
            body(Ollama, Effort::High, "gpt-oss:20b"),
            json!({"think": "high", "reasoning_effort": "high"})
        );
        assert_eq!(
            body(Ollama, Effort::Off, "qwen3:8b"),
            json!({"think": false, "reasoning_effort": "none"})
        );
    }
}
