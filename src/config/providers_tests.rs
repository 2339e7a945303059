//! Tests of `[providers.NAME]`: resolving the tables, whose key goes where, and reading
//! `NAME/model`.

use super::super::*;
use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

/// Resolves `config` (config.toml) with `model` on the command line and `pairs` as the
/// environment (the home added).
fn resolve_with(
    config: &str,
    model: Option<&str>,
    pairs: &[(&str, &str)],
) -> Result<Config, ConfigError> {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    let wd = tempfile::tempdir().unwrap();
    let mut all: Vec<(&str, &str)> = pairs.to_vec();
    let home_path = home.path().to_str().unwrap().to_string();
    all.push(("HARNESS9_HOME", &home_path));
    let env = env_of(&all);
    let over = Overrides {
        workdir: Some(wd.path().into()),
        model: model.map(str::to_string),
        ..Default::default()
    };
    Config::resolve(&over, &env, EndpointNeed::Required, ServerProbe::Disabled)
}

const TWO: &str = r#"
base_url = "http://127.0.0.1:9/v1"
[prices."m"]
input = 1.0
output = 2.0
[providers.or]
base_url = "https://openrouter.ai/api/v1/"
api_key_env = "OR_KEY"
headers = { "X-Title" = "harness9" }
context_window = 200000
max_output_tokens = 1000
[providers.or.prices."anthropic/"]
input = 3.0
output = 15.0
[providers.local]
base_url = "http://127.0.0.1:8/v1"
wire = "responses"
"#;

#[test]
fn a_named_provider_gets_its_own_key_and_settings_and_no_other_key() {
    let config = resolve_with(
        TWO,
        None,
        &[("OPENAI_API_KEY", "sk-top-secret"), ("OR_KEY", "or-secret")],
    )
    .unwrap();
    // The top-level endpoint is unchanged and is where the session starts.
    assert_eq!(config.provider_id, ProviderId::Default);
    assert_eq!(config.provider.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(config.provider.api_key.as_deref(), Some("sk-top-secret"));
    let or = config
        .providers
        .endpoint(&ProviderId::Named { name: "or".into() })
        .unwrap();
    assert_eq!(or.provider.base_url, "https://openrouter.ai/api/v1");
    assert_eq!(or.provider.api_key.as_deref(), Some("or-secret"));
    assert_eq!(
        or.provider.extra_headers,
        vec![("X-Title".into(), "harness9".into())]
    );
    assert_eq!(or.provider.max_output_tokens, Some(1000));
    assert_eq!(or.context_window, Some(200_000));
    assert!(or.prices.has("anthropic/claude-sonnet-4"));
    assert!(
        or.prices.has("m"),
        "the top-level prices hold on every provider"
    );
    // A table without api_key_env has no key: OPENAI_API_KEY is never borrowed.
    let local = config
        .providers
        .endpoint(&ProviderId::Named {
            name: "local".into(),
        })
        .unwrap();
    assert_eq!(local.provider.api_key, None);
    assert_eq!(
        local.provider.wire,
        crate::llm::WireSetting::Always {
            wire: crate::llm::Wire::Responses
        }
    );
    assert_eq!(or.provider.wire, crate::llm::WireSetting::Auto);
    // Every key is kept from commands and from saved sessions.
    for secret in ["sk-top-secret", "or-secret", "harness9"] {
        assert!(
            config.secret_policy.values.iter().any(|v| v == secret),
            "{secret} missing from {:?}",
            config.secret_policy.values
        );
    }
}

#[test]
fn name_slash_model_starts_on_that_provider_and_other_slashes_are_model_ids() {
    let pairs = [("OPENAI_API_KEY", "k"), ("OR_KEY", "o")];
    let on_or = resolve_with(TWO, Some("or/anthropic/claude-sonnet-4"), &pairs).unwrap();
    assert_eq!(on_or.provider_id, ProviderId::Named { name: "or".into() });
    assert_eq!(on_or.model, "anthropic/claude-sonnet-4");
    assert_eq!(on_or.provider.base_url, "https://openrouter.ai/api/v1");
    assert_eq!(on_or.context_window, Some(200_000));
    // `anthropic` is no provider: the whole id goes to the default endpoint.
    let plain = resolve_with(TWO, Some("anthropic/claude-sonnet-4"), &pairs).unwrap();
    assert_eq!(plain.provider_id, ProviderId::Default);
    assert_eq!(plain.model, "anthropic/claude-sonnet-4");
    // `default/` names the top-level endpoint once providers exist...
    let back = resolve_with(TWO, Some("default/gpt-x"), &pairs).unwrap();
    assert_eq!(
        (back.provider_id, back.model.as_str()),
        (ProviderId::Default, "gpt-x")
    );
    // ...and is an ordinary model id without them (nothing changes for old configs).
    let old = resolve_with(
        "base_url = \"http://127.0.0.1:9/v1\"",
        Some("default/x"),
        &pairs,
    )
    .unwrap();
    assert_eq!(old.model, "default/x");
    let err = resolve_with(TWO, Some("or/"), &pairs)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no model after `or/`"), "{err}");
}

#[test]
fn a_named_provider_needs_no_top_level_endpoint() {
    let only = r#"
model = "or/some/model"
[providers.or]
base_url = "https://openrouter.ai/api/v1"
api_key_env = "OR_KEY"
"#;
    let config = resolve_with(only, None, &[("OR_KEY", "o")]).unwrap();
    assert_eq!(config.provider.base_url, "https://openrouter.ai/api/v1");
    assert_eq!(config.model, "some/model");
    assert!(config.providers.endpoint(&ProviderId::Default).is_none());
}

#[test]
fn bad_tables_are_refused_with_the_key_named() {
    let cases = [
        (
            "[providers.default]\nbase_url = \"http://a/v1\"",
            "providers.default",
        ),
        ("[providers.x]\napi_key_env = \"K\"", "providers.x.base_url"),
        ("[providers.x]\nbase_url = \"ftp://a\"", "base URL"),
        (
            "[providers.x]\nbase_url = \"http://a/v1\"\nmax_output_tokens = 0",
            "providers.x.max_output_tokens",
        ),
        (
            "[providers.x]\nbase_url = \"http://a/v1\"\nwire = \"grpc\"",
            "unknown variant",
        ),
        (
            "[providers.x]\nbase_url = \"http://a/v1\"\napi_key = \"sk-in-file\"",
            "unknown field",
        ),
        (
            "[providers.x]\nbase_url = \"http://a/v1\"\n[providers.x.prices.m]\ninput = -1.0\noutput = 1.0",
            "providers.x.prices",
        ),
    ];
    for (table, expected) in cases {
        let config = format!("base_url = \"http://127.0.0.1:9/v1\"\n{table}");
        let err = resolve_with(&config, None, &[]).unwrap_err().to_string();
        assert!(err.contains(expected), "{table}: {err}");
    }
}

#[test]
fn choose_reads_a_bare_id_on_the_provider_in_use() {
    let config = resolve_with(TWO, None, &[]).unwrap();
    let book = &config.providers;
    let or = ProviderId::Named { name: "or".into() };
    assert_eq!(
        book.choose("anthropic/x", &or),
        Choice {
            provider: or.clone(),
            model: "anthropic/x".into()
        }
    );
    assert_eq!(
        book.choose("local/q", &or),
        Choice {
            provider: ProviderId::Named {
                name: "local".into()
            },
            model: "q".into()
        }
    );
    assert_eq!(
        book.choose("default/m", &or),
        Choice {
            provider: ProviderId::Default,
            model: "m".into()
        }
    );
    assert_eq!(or.qualify("a/b"), "or/a/b");
    assert_eq!(ProviderId::Default.qualify("a/b"), "a/b");
}
