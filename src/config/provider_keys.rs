//! One provider's client settings as config.toml writes them (`ProviderKeys`, the same
//! keys at the top level and in each `[providers.NAME]` table) applied to a
//! [`ProviderConfig`], with the checks they need: the base URL's scheme, the key header's
//! name, and `extra_body` never setting what harness9 sets itself.
//!
//! It must not know where the keys were written, the environment beyond the idle
//! timeout's test variable, or anything about the session.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{ConfigError, ToolChoiceMode, ToolChoiceSetting};
use crate::llm::wire::OWNED_BODY_KEYS;
use crate::llm::{
    AuthHeader, ImageSupport, ProviderConfig, ReasoningEcho, StreamMode, ToolChoice,
    UsageReporting, WireSetting,
};

/// The environment lookup.
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The keys that set up one provider's client, wherever they are written (the top level
/// of config.toml or a `[providers.NAME]` table).
#[derive(Debug, Clone, Copy)]
pub(super) struct ProviderKeys<'a> {
    pub(super) wire: Option<WireSetting>,
    pub(super) headers: &'a BTreeMap<String, String>,
    pub(super) auth_header: Option<&'a str>,
    pub(super) extra_body: Option<&'a serde_json::Map<String, serde_json::Value>>,
    pub(super) tool_choice: Option<&'a ToolChoiceSetting>,
    pub(super) max_output_tokens: Option<u32>,
    pub(super) include_usage: Option<bool>,
    pub(super) stream: Option<bool>,
    pub(super) send_reasoning: Option<bool>,
    pub(super) reasoning_effort: Option<crate::protocol::Effort>,
    pub(super) effort_dialect: Option<crate::llm::effort::EffortDialect>,
    pub(super) prompt_cache: Option<crate::llm::cache::PromptCache>,
    pub(super) structured_output: Option<crate::llm::StructuredOutput>,
    pub(super) idle_timeout_secs: Option<u64>,
    pub(super) attempt_timeout_secs: Option<u64>,
    pub(super) total_timeout_secs: Option<u64>,
    pub(super) max_retries: Option<u32>,
    pub(super) images: Option<bool>,
}

/// The provider's settings from config.toml (and the idle timeout's test variable).
pub(super) fn apply(
    provider: &mut ProviderConfig,
    file: ProviderKeys<'_>,
    env: Env<'_>,
) -> Result<(), ConfigError> {
    provider.extra_headers = file.headers.clone().into_iter().collect();
    if let Some(name) = file.auth_header {
        provider.auth_header = auth_header_from(name)?;
    }
    if let Some(wire) = file.wire {
        provider.wire = wire;
    }
    if let Some(extra) = file.extra_body {
        validate_extra_body(extra, file.max_output_tokens)?;
        validate_responses_extra_body(extra, provider.wire)?;
        provider.extra_body = extra.clone();
    }
    if let Some(n) = file.max_output_tokens {
        if n == 0 {
            return Err(ConfigError::Invalid {
                what: "max_output_tokens".into(),
                message: "must be at least 1 (leave it unset to let the server decide)".into(),
            });
        }
        provider.max_output_tokens = Some(n);
    }
    if file.include_usage == Some(false) {
        provider.usage_reporting = UsageReporting::Omit;
    }
    if file.stream == Some(false) {
        provider.stream_mode = StreamMode::NonStreaming;
    }
    provider.reasoning_echo = match file.send_reasoning {
        None => ReasoningEcho::Auto,
        Some(true) => ReasoningEcho::Always,
        Some(false) => ReasoningEcho::Never,
    };
    provider.reasoning_effort = file.reasoning_effort;
    provider.prompt_cache = file.prompt_cache.unwrap_or_default();
    provider.images = match file.images {
        None => ImageSupport::Try,
        Some(true) => ImageSupport::Yes,
        Some(false) => ImageSupport::No,
    };
    provider.structured_output = file.structured_output.unwrap_or_default();
    if let Some(dialect) = file.effort_dialect {
        provider.effort_dialect = crate::llm::effort::DialectChoice::Configured { dialect };
    }
    if let Some(choice) = file.tool_choice {
        provider.tool_choice = match choice.clone() {
            ToolChoiceSetting::Mode(ToolChoiceMode::Auto) => ToolChoice::Auto,
            ToolChoiceSetting::Mode(ToolChoiceMode::NoneSent) => ToolChoice::Omit,
            ToolChoiceSetting::Mode(ToolChoiceMode::Required) => ToolChoice::Required,
            ToolChoiceSetting::Function { function } => ToolChoice::Function { name: function },
        };
    }
    for (key, value, slot) in [
        (
            "idle_timeout_secs",
            file.idle_timeout_secs,
            &mut provider.idle_timeout,
        ),
        (
            "attempt_timeout_secs",
            file.attempt_timeout_secs,
            &mut provider.attempt_timeout,
        ),
        (
            "total_timeout_secs",
            file.total_timeout_secs,
            &mut provider.total_timeout,
        ),
    ] {
        if let Some(secs) = value {
            if secs == 0 {
                return Err(ConfigError::Invalid {
                    what: key.into(),
                    message: "must be at least 1".into(),
                });
            }
            *slot = Duration::from_secs(secs);
        }
    }
    if let Some(n) = file.max_retries {
        provider.retry.max_retries = n;
    }
    if let Some(ms) = env("HARNESS9_IDLE_TIMEOUT_MS").and_then(|v| v.parse::<u64>().ok()) {
        provider.idle_timeout = Duration::from_millis(ms.max(1));
    }
    Ok(())
}

pub(super) fn validate_url(url: &str) -> Result<(), ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(ConfigError::Invalid {
            what: "base URL".into(),
            message: format!(
                "{url:?} must start with http:// or https:// (e.g. https://api.openai.com/v1)"
            ),
        })
    }
}

/// The provider's key header from `auth_header`: `Authorization` (any case) is the
/// default `Bearer` form; any other valid header name gets the raw key.
fn auth_header_from(name: &str) -> Result<AuthHeader, ConfigError> {
    let name = name.trim();
    if name.eq_ignore_ascii_case("authorization") {
        return Ok(AuthHeader::Bearer);
    }
    // RFC 9110 token characters.
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if valid {
        Ok(AuthHeader::Named {
            name: name.to_string(),
        })
    } else {
        Err(ConfigError::Invalid {
            what: "auth_header".into(),
            message: format!(
                "{name:?} is not a valid HTTP header name (letters, digits and -_. only, \
                 e.g. \"api-key\")"
            ),
        })
    }
}

/// With `wire = "responses"`, `extra_body` may not set what the Responses body sets
/// either (`input`, `store`, `include`, …). With `auto` such keys are skipped on that
/// wire's requests instead.
fn validate_responses_extra_body(
    extra: &serde_json::Map<String, serde_json::Value>,
    wire: crate::llm::WireSetting,
) -> Result<(), ConfigError> {
    use crate::llm::responses::request::OWNED_KEYS;
    let responses = crate::llm::WireSetting::Always {
        wire: crate::llm::Wire::Responses,
    };
    match extra.keys().find(|k| OWNED_KEYS.contains(&k.as_str())) {
        Some(key) if wire == responses => Err(ConfigError::Invalid {
            what: format!("extra_body.{key}"),
            message: format!(
                "harness9 sets `{key}` itself on the Responses wire (extra_body may not set {})",
                OWNED_KEYS.join(", ")
            ),
        }),
        _ => Ok(()),
    }
}

/// `extra_body` may not set what harness9 sets itself, nor `max_tokens` together with
/// `max_output_tokens`.
fn validate_extra_body(
    extra: &serde_json::Map<String, serde_json::Value>,
    max_output_tokens: Option<u32>,
) -> Result<(), ConfigError> {
    if let Some(key) = extra.keys().find(|k| OWNED_BODY_KEYS.contains(&k.as_str())) {
        return Err(ConfigError::Invalid {
            what: format!("extra_body.{key}"),
            message: format!(
                "harness9 sets `{key}` itself and it cannot be overridden (extra_body may not \
                 set {})",
                OWNED_BODY_KEYS.join(", ")
            ),
        });
    }
    if extra.contains_key("max_tokens") && max_output_tokens.is_some() {
        return Err(ConfigError::Invalid {
            what: "extra_body.max_tokens".into(),
            message: "max_output_tokens is set too: keep only max_output_tokens".into(),
        });
    }
    Ok(())
}
