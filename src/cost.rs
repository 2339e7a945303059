//! What requests cost, from per-model prices the user sets in config.toml
//! (`[prices."MODEL"]`: US dollars per million input, cached input and output tokens).
//! A model's price is the entry whose name is the longest prefix of its id, so
//! `gpt-4.1` prices `gpt-4.1-2025-04-14`. Costs are kept in micro-dollars so sums are
//! exact; they are shown and written to JSON as dollars. Without a price for the model,
//! a request has no cost (not zero). It knows token counts, nothing of providers.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::protocol::{Cost, Usage};

/// One model's prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Input (prompt) tokens.
    pub input: f64,
    /// Output (completion) tokens.
    pub output: f64,
    /// Input tokens served from the provider's cache (default: the input price).
    pub cached_input: Option<f64>,
    /// Input tokens written to the provider's cache (default: the input price).
    pub cache_write: Option<f64>,
}

impl ModelPrice {
    /// What `usage` costs at these prices.
    pub fn cost(&self, usage: &Usage) -> Cost {
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let written = usage.cache_write_tokens.min(usage.input_tokens - cached);
        let fresh = usage.input_tokens - cached - written;
        let per_token = |price: f64| price.max(0.0); // dollars per million = micros per token
        let micros = fresh as f64 * per_token(self.input)
            + cached as f64 * per_token(self.cached_input.unwrap_or(self.input))
            + written as f64 * per_token(self.cache_write.unwrap_or(self.input))
            + usage.output_tokens as f64 * per_token(self.output);
        Cost::from_micros(micros.round() as u64)
    }

    /// Why these prices cannot be used, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        let all = [
            Some(self.input),
            Some(self.output),
            self.cached_input,
            self.cache_write,
        ];
        if all.iter().flatten().any(|p| !p.is_finite() || *p < 0.0) {
            return Err(
                "prices must be numbers of at least 0 (US dollars per million tokens)".into(),
            );
        }
        Ok(())
    }
}

/// The prices of every model the user priced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable(BTreeMap<String, ModelPrice>);

impl PriceTable {
    /// A table over `prices` (checked by the caller).
    pub fn new(prices: BTreeMap<String, ModelPrice>) -> Self {
        PriceTable(prices)
    }

    /// Adds or replaces the price of `model` (checked by the caller).
    pub fn insert(&mut self, model: String, price: ModelPrice) {
        self.0.insert(model, price);
    }

    /// Whether `model` has a price.
    pub fn has(&self, model: &str) -> bool {
        self.for_model(model).is_some()
    }

    /// The price of `model`: the entry that is the longest prefix of its id.
    pub fn for_model(&self, model: &str) -> Option<&ModelPrice> {
        self.0
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| price)
    }

    /// `usage` with its cost at `model`'s price (unchanged when the model has none).
    pub fn priced(&self, model: &str, mut usage: Usage) -> Usage {
        if let Some(price) = self.for_model(model) {
            usage.cost = Some(price.cost(&usage));
        }
        usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, cached: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn costs_use_the_longest_prefix_and_the_cached_price() {
        let table = PriceTable::new(BTreeMap::from([
            (
                "gpt-4.1".to_string(),
                ModelPrice {
                    input: 2.0,
                    output: 8.0,
                    cached_input: Some(0.5),
                    cache_write: None,
                },
            ),
            (
                "gpt-4.1-mini".to_string(),
                ModelPrice {
                    input: 0.4,
                    output: 1.6,
                    cached_input: None,
                    cache_write: None,
                },
            ),
        ]));
        let u = table.priced("gpt-4.1-2025-04-14", usage(1_000_000, 400_000, 100_000));
        // 600k fresh at $2 + 400k cached at $0.5 + 100k out at $8 = 1.2 + 0.2 + 0.8
        assert_eq!(u.cost, Some(Cost::from_micros(2_200_000)));
        assert_eq!(u.cost.unwrap().to_string(), "$2.20");
        let mini = table.priced("gpt-4.1-mini", usage(10_000, 0, 1_000));
        assert_eq!(mini.cost, Some(Cost::from_micros(5_600)));
        assert_eq!(mini.cost.unwrap().to_string(), "$0.0056");
        assert_eq!(table.priced("llama3", usage(5, 0, 5)).cost, None);
    }

    #[test]
    fn cache_writes_have_their_own_price() {
        let price = ModelPrice {
            input: 3.0,
            output: 15.0,
            cached_input: Some(0.3),
            cache_write: Some(3.75),
        };
        let u = Usage {
            cache_write_tokens: 200_000,
            ..usage(1_000_000, 700_000, 0)
        };
        // 100k fresh at $3 + 700k read at $0.30 + 200k written at $3.75
        // = 0.30 + 0.21 + 0.75
        assert_eq!(price.cost(&u), Cost::from_micros(1_260_000));
        // Without a write price, writes cost what input does.
        let plain = ModelPrice {
            cache_write: None,
            ..price
        };
        assert_eq!(plain.cost(&u), Cost::from_micros(1_110_000));
    }

    #[test]
    fn sums_keep_known_costs_and_json_is_dollars() {
        let mut total = Usage::default();
        total.add(&Usage {
            cost: Some(Cost::from_micros(1_500)),
            ..usage(1, 0, 1)
        });
        total.add(&usage(1, 0, 1));
        total.add(&Usage {
            cost: Some(Cost::from_micros(500)),
            ..usage(1, 0, 1)
        });
        assert_eq!(total.cost, Some(Cost::from_micros(2_000)));
        let json = serde_json::to_value(total).unwrap();
        assert_eq!(json["cost_usd"], 0.002);
        let back: Usage = serde_json::from_value(json).unwrap();
        assert_eq!(back.cost, Some(Cost::from_micros(2_000)));
        let none = serde_json::to_value(usage(1, 0, 1)).unwrap();
        assert!(none.get("cost_usd").is_none());
        assert!(
            ModelPrice {
                input: -1.0,
                output: 0.0,
                cached_input: None,
                cache_write: None,
            }
            .check()
            .is_err()
        );
    }
}
