//! Named providers: `[providers.NAME]` tables in config.toml, each an endpoint of its
//! own (base URL, the variable holding its key, headers, extra body, wire, prices,
//! window and the per-provider request settings), next to the top-level endpoint, which
//! stays the default provider. It owns the tables' format, resolving each into a
//! [`ProviderConfig`] and reading `NAME/model`: `NAME/` counts only when NAME is a
//! configured provider, so a model id with a slash of its own
//! (`anthropic/claude-sonnet-4`) is still a model id.
//!
//! It must not know the agent, frontends or how a switch is recorded. A provider's key
//! is read here from the variable the table names and from nowhere else: a table with no
//! `api_key_env` has no key, so no provider is ever sent another one's key.

use super::provider_keys::ProviderKeys;
use std::collections::BTreeMap;

use serde::Deserialize;

use super::{ConfigError, ToolChoiceSetting};
use crate::cost::{ModelPrice, PriceTable};
use crate::llm::{ProviderConfig, WireSetting};

/// The name that stands for the top-level endpoint (`/model default/MODEL`); no table
/// may take it.
pub const DEFAULT_PROVIDER: &str = "default";

/// One `[providers.NAME]` table.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    /// Base URL up to the API version (required).
    pub base_url: Option<String>,
    /// The variable holding this provider's key; without it no key is sent.
    pub api_key_env: Option<String>,
    /// `auto` (the default), `chat` or `responses`.
    pub wire: Option<WireSetting>,
    /// The model's context window in tokens on this provider.
    pub context_window: Option<u64>,
    /// Prices per model on this provider (over the top-level `[prices]`).
    #[serde(default)]
    pub prices: BTreeMap<String, ModelPrice>,
    /// Extra HTTP headers for every request to this provider.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Top-level keys merged into every request body.
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// The header the key goes in.
    pub auth_header: Option<String>,
    /// `auto`, `none-sent` or `required`, or `{ function = "NAME" }`.
    pub tool_choice: Option<ToolChoiceSetting>,
    /// Sent as `max_tokens`.
    pub max_output_tokens: Option<u32>,
    /// Send `stream_options.include_usage` (default true).
    pub include_usage: Option<bool>,
    /// Stream responses (default true).
    pub stream: Option<bool>,
    /// Send reasoning back on assistant messages: unset decides per host and model.
    pub send_reasoning: Option<bool>,
    /// The reasoning effort to ask for (unset: none is sent).
    pub reasoning_effort: Option<crate::protocol::Effort>,
    /// Which body field carries the effort (unset: decided from the base URL and model).
    pub effort_dialect: Option<crate::llm::effort::EffortDialect>,
    /// Prompt-cache markers: `auto` (the default), `explicit` or `off`.
    pub prompt_cache: Option<crate::llm::cache::PromptCache>,
    /// `--output-schema` asked of the server: `off` (the default) or `json-schema`.
    pub structured_output: Option<crate::llm::StructuredOutput>,
    /// Seconds without bytes before an attempt fails.
    pub idle_timeout_secs: Option<u64>,
    /// Seconds one attempt may take in all.
    pub attempt_timeout_secs: Option<u64>,
    /// Seconds all attempts of one request may take together.
    pub total_timeout_secs: Option<u64>,
    /// Retries after the first attempt.
    pub max_retries: Option<u32>,
    /// Whether this provider's models take images (unset: try).
    pub images: Option<bool>,
}

impl ProviderFile {
    fn keys(&self) -> ProviderKeys<'_> {
        ProviderKeys {
            wire: self.wire,
            headers: &self.headers,
            auth_header: self.auth_header.as_deref(),
            extra_body: self.extra_body.as_ref(),
            tool_choice: self.tool_choice.as_ref(),
            max_output_tokens: self.max_output_tokens,
            include_usage: self.include_usage,
            stream: self.stream,
            send_reasoning: self.send_reasoning,
            reasoning_effort: self.reasoning_effort,
            effort_dialect: self.effort_dialect,
            prompt_cache: self.prompt_cache,
            structured_output: self.structured_output,
            idle_timeout_secs: self.idle_timeout_secs,
            attempt_timeout_secs: self.attempt_timeout_secs,
            total_timeout_secs: self.total_timeout_secs,
            max_retries: self.max_retries,
            images: self.images,
        }
    }
}

/// Which endpoint a model is asked on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProviderId {
    /// The top-level endpoint of config.toml (and the environment and flags).
    Default,
    /// A `[providers.NAME]` table.
    Named {
        /// The table's name.
        name: String,
    },
}

impl ProviderId {
    /// The name shown and written before `/`: `default` or the table's name.
    pub fn name(&self) -> &str {
        match self {
            ProviderId::Default => DEFAULT_PROVIDER,
            ProviderId::Named { name } => name,
        }
    }

    /// How a model on this provider is written: the bare id on the default provider
    /// (as before named providers existed), `NAME/model` on a named one.
    pub fn qualify(&self, model: &str) -> String {
        match self {
            ProviderId::Default => model.to_string(),
            ProviderId::Named { name } => format!("{name}/{model}"),
        }
    }
}

/// One endpoint a session can switch to.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Which it is.
    pub id: ProviderId,
    /// Its client settings (its own key, or none).
    pub provider: ProviderConfig,
    /// Its `context_window`, when set.
    pub context_window: Option<u64>,
    /// Its prices (its own table over the top-level one).
    pub prices: PriceTable,
}

/// A model and the provider it is asked on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The provider.
    pub provider: ProviderId,
    /// The model id as that provider knows it.
    pub model: String,
}

/// Every endpoint of the configuration: the default one (when one is configured or
/// found) and the named ones.
#[derive(Debug, Clone, Default)]
pub struct ProviderBook {
    default: Option<Endpoint>,
    named: BTreeMap<String, Endpoint>,
}

impl ProviderBook {
    /// A book of the default endpoint alone (tests, and configurations without tables).
    pub fn single(default: Endpoint) -> Self {
        ProviderBook {
            default: Some(default),
            named: BTreeMap::new(),
        }
    }

    /// Reads `spec`: `NAME/model` when NAME is a configured provider (or `default`, once
    /// any is), else a model id on `current`.
    pub fn choose(&self, spec: &str, current: &ProviderId) -> Choice {
        if let Some((name, model)) = spec.split_once('/') {
            if name == DEFAULT_PROVIDER && self.has_named() {
                return Choice {
                    provider: ProviderId::Default,
                    model: model.to_string(),
                };
            }
            if self.named.contains_key(name) {
                return Choice {
                    provider: ProviderId::Named {
                        name: name.to_string(),
                    },
                    model: model.to_string(),
                };
            }
        }
        Choice {
            provider: current.clone(),
            model: spec.to_string(),
        }
    }

    /// The endpoint of `id`, if configured.
    pub fn endpoint(&self, id: &ProviderId) -> Option<&Endpoint> {
        match id {
            ProviderId::Default => self.default.as_ref(),
            ProviderId::Named { name } => self.named.get(name),
        }
    }

    /// Every endpoint, the default first, then the named ones by name.
    pub fn all(&self) -> impl Iterator<Item = &Endpoint> {
        self.default.iter().chain(self.named.values())
    }

    /// Whether any `[providers.NAME]` table is configured.
    pub fn has_named(&self) -> bool {
        !self.named.is_empty()
    }

    /// Every key and header value of every endpoint: none reaches a command, and none
    /// is saved in a session file.
    pub fn secret_values(&self) -> impl Iterator<Item = String> + '_ {
        self.all().flat_map(|e| {
            e.provider
                .api_key
                .iter()
                .cloned()
                .chain(e.provider.extra_headers.iter().map(|(_, v)| v.clone()))
        })
    }
}

/// The named tables resolved, each with its own key from its own variable.
pub(super) fn resolve_named(
    tables: &BTreeMap<String, ProviderFile>,
    top_prices: &PriceTable,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, Endpoint>, ConfigError> {
    let mut named = BTreeMap::new();
    for (name, table) in tables {
        let what = |key: &str| format!("providers.{name}.{key}");
        if name == DEFAULT_PROVIDER || name.is_empty() || name.contains('/') {
            return Err(ConfigError::Invalid {
                what: format!("providers.{name}"),
                message: format!(
                    "a provider cannot be named {name:?} (`{DEFAULT_PROVIDER}` is the \
                     top-level endpoint; names have no `/`)"
                ),
            });
        }
        let base_url = table.base_url.clone().ok_or_else(|| ConfigError::Invalid {
            what: what("base_url"),
            message: "every provider needs a base_url (e.g. https://openrouter.ai/api/v1)".into(),
        })?;
        super::provider_keys::validate_url(&base_url)?;
        let mut provider = ProviderConfig::new(name.clone(), base_url.trim_end_matches('/'));
        match &table.api_key_env {
            Some(var) => {
                provider.api_key = env(var).filter(|k| !k.trim().is_empty());
                provider.api_key_source = var.clone();
            }
            None => provider.api_key_source = format!("providers.{name}.api_key_env (unset)"),
        }
        super::provider_keys::apply(&mut provider, table.keys(), env).map_err(|e| match e {
            ConfigError::Invalid { what: key, message } => ConfigError::Invalid {
                what: what(&key),
                message,
            },
            other => other,
        })?;
        let mut prices = top_prices.clone();
        for (model, price) in &table.prices {
            price.check().map_err(|message| ConfigError::Invalid {
                what: format!("providers.{name}.prices.\"{model}\""),
                message,
            })?;
            prices.insert(model.clone(), *price);
        }
        named.insert(
            name.clone(),
            Endpoint {
                id: ProviderId::Named { name: name.clone() },
                provider,
                context_window: table.context_window,
                prices,
            },
        );
    }
    Ok(named)
}

/// The book of the resolved default endpoint (when there is one) and the named ones.
pub(super) fn book(default: Option<Endpoint>, named: BTreeMap<String, Endpoint>) -> ProviderBook {
    ProviderBook { default, named }
}

#[cfg(test)]
#[path = "providers_tests.rs"]
mod tests;
