//! What a provider's `GET {base_url}/models` offers: the model ids, and the prices a
//! provider publishes with them (OpenRouter's `pricing`, US dollars per token as
//! strings). Each list is asked for within [`LIST_TIMEOUT`] and read to [`MAX_BODY`]; a
//! failure says what went wrong, so `/model` can name a failing provider with its error.
//!
//! It must not know which provider is in use or how a list is shown.

use std::time::Duration;

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use serde_json::Value;

use crate::cost::ModelPrice;
use crate::llm::ProviderConfig;

/// How long one provider's list may take, connecting included.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest list read (OpenRouter's is a few hundred KiB).
const MAX_BODY: usize = 8 << 20;

/// One model a provider lists.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedModel {
    /// The id requests name it by.
    pub id: String,
    /// Its prices, when the provider publishes them.
    pub price: Option<ModelPrice>,
}

/// Why a provider's list could not be had.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ListError {
    /// The base URL is not a URL.
    #[error("the base URL is not a valid URL")]
    BadUrl,
    /// The key or a header cannot be sent.
    #[error("{0}")]
    Headers(String),
    /// No answer within the time limit.
    #[error("no answer within {} s", LIST_TIMEOUT.as_secs())]
    Timeout,
    /// The connection or the request failed.
    #[error("request failed: {0}")]
    Request(String),
    /// The server answered with an error status.
    #[error("HTTP {0}")]
    Status(u16),
    /// The answer is longer than this reads.
    #[error("the list is over {} MiB", MAX_BODY >> 20)]
    TooLong,
    /// The answer is not an OpenAI-style model list.
    #[error("the answer is not a model list")]
    NotAList,
}

/// The models `provider` lists.
pub async fn list(provider: &ProviderConfig) -> Result<Vec<ListedModel>, ListError> {
    let base = provider.base_url.trim_end_matches('/');
    let url = reqwest::Url::parse(&format!("{base}/models")).map_err(|_| ListError::BadUrl)?;
    let plain_http = url.scheme() == "http";
    let build = move || {
        crate::http::builder(plain_http)
            .connect_timeout(LIST_TIMEOUT)
            .timeout(LIST_TIMEOUT)
            .build()
    };
    // Loading root certificates for https takes tens of milliseconds: off the async
    // threads.
    let client = tokio::task::spawn_blocking(build)
        .await
        .map_err(|e| ListError::Request(e.to_string()))?
        .map_err(|e| ListError::Request(e.to_string()))?;
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    super::client::add_provider_headers(&mut headers, provider)
        .map_err(|e| ListError::Headers(e.to_string()))?;
    let read = async {
        let mut response = client
            .get(url)
            .headers(headers)
            .send()
            .await
            .map_err(|e| ListError::Request(without_url(&e)))?;
        if !response.status().is_success() {
            return Err(ListError::Status(response.status().as_u16()));
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BODY as u64)
        {
            return Err(ListError::TooLong);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ListError::Request(without_url(&e)))?
        {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(ListError::TooLong);
            }
            body.extend_from_slice(&chunk);
        }
        let value: Value = serde_json::from_slice(&body).map_err(|_| ListError::NotAList)?;
        parse(&value).ok_or(ListError::NotAList)
    };
    tokio::time::timeout(LIST_TIMEOUT, read)
        .await
        .map_err(|_| ListError::Timeout)?
}

/// A reqwest error without the URL it names (which may carry a query with secrets).
fn without_url(e: &reqwest::Error) -> String {
    let mut innermost: &dyn std::error::Error = e;
    while let Some(source) = innermost.source() {
        innermost = source;
    }
    let cause = innermost.to_string();
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        format!("cannot connect: {cause}")
    } else {
        cause
    }
}

/// The models of an OpenAI-style list (`{"data": [{"id": …}]}`), empty ids left out.
pub fn parse(list: &Value) -> Option<Vec<ListedModel>> {
    let data = list.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| {
                let id = m.get("id")?.as_str().filter(|id| !id.is_empty())?;
                Some(ListedModel {
                    id: id.to_string(),
                    price: m.get("pricing").and_then(price),
                })
            })
            .collect(),
    )
}

/// OpenRouter's `pricing` (dollars per token, as strings or numbers) in dollars per
/// million tokens; `None` unless both input and output are there and sane.
fn price(pricing: &Value) -> Option<ModelPrice> {
    let per_million = |key: &str| -> Option<f64> {
        let v = pricing.get(key)?;
        let per_token = match v {
            Value::String(s) => s.trim().parse::<f64>().ok()?,
            Value::Number(n) => n.as_f64()?,
            _ => return None,
        };
        let million = per_token * 1_000_000.0;
        (million.is_finite() && million >= 0.0).then_some(million)
    };
    let price = ModelPrice {
        input: per_million("prompt")?,
        output: per_million("completion")?,
        cached_input: per_million("input_cache_read"),
        cache_write: per_million("input_cache_write"),
    };
    price.check().ok().map(|()| price)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openrouter_prices_are_read_per_million_tokens() {
        let list = json!({"data": [
            {"id": "anthropic/claude-sonnet-4", "context_length": 200000,
             "pricing": {"prompt": "0.000003", "completion": "0.000015",
                         "input_cache_read": "0.0000003"}},
            {"id": "plain"},
            {"id": "odd", "pricing": {"prompt": "-1", "completion": "x"}},
            {"id": ""},
        ]});
        let models = parse(&list).unwrap();
        assert_eq!(models.len(), 3);
        let price = models[0].price.unwrap();
        assert!((price.input - 3.0).abs() < 1e-9, "{price:?}");
        assert!((price.output - 15.0).abs() < 1e-9);
        assert!((price.cached_input.unwrap() - 0.3).abs() < 1e-9);
        assert_eq!(models[1].price, None);
        assert_eq!(models[2].price, None);
        assert_eq!(parse(&json!({"object": "list"})), None);
    }
}
