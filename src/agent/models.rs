//! `/model NAME` checked against the models the endpoint lists: a name it does not list
//! (when it lists any) is refused with the names it does, so a typo never becomes a
//! session of failing requests. An endpoint that lists nothing, or cannot be asked, is
//! taken at its word. `/model` alone: every provider asked at once, each within its time
//! limit, a failing one named with its error. It must not know how either is shown.

use crate::agent::AgentSetup;
use crate::config::providers::ProviderId;
use crate::llm::models::ListedModel;
use crate::protocol::{ModelList, ModelListing, ProviderModels};

/// The most names a refusal quotes.
const NAMES_SHOWN: usize = 12;

/// Why `model` cannot be switched to on provider `id`, given what it lists (Ollama's
/// `NAME` stands for its `NAME:latest`).
pub fn refusal_for(id: &ProviderId, listed: &[ListedModel], model: &str) -> Option<String> {
    let ids: Vec<String> = listed.iter().map(|m| m.id.clone()).collect();
    let refused = refusal(&ids, model)?;
    Some(match id {
        ProviderId::Default => refused,
        ProviderId::Named { name } => {
            refused.replacen("the endpoint", &format!("provider `{name}`"), 1)
        }
    })
}

/// What every provider lists, asked all at once (each within its own time limit).
pub async fn list_all(setup: &AgentSetup, current: String) -> ModelList {
    let asks: Vec<_> = setup
        .providers
        .all()
        .map(|endpoint| {
            let provider = endpoint.provider.clone();
            let name = endpoint.id.name().to_string();
            (
                name,
                tokio::spawn(async move { crate::llm::models::list(&provider).await }),
            )
        })
        .collect();
    let mut providers = Vec::with_capacity(asks.len());
    for (name, ask) in asks {
        let listing = match ask.await {
            Ok(Ok(listed)) => {
                let mut models: Vec<String> = listed.into_iter().map(|m| m.id).collect();
                models.sort_unstable();
                ModelListing::Listed { models }
            }
            Ok(Err(e)) => ModelListing::Failed {
                error: e.to_string(),
            },
            Err(e) => ModelListing::Failed {
                error: e.to_string(),
            },
        };
        providers.push(ProviderModels { name, listing });
    }
    ModelList { current, providers }
}

/// Why `model` cannot be switched to, given what the endpoint lists.
fn refusal(listed: &[String], model: &str) -> Option<String> {
    let latest = format!("{model}:latest");
    if listed.is_empty() || listed.iter().any(|id| id == model || *id == latest) {
        return None;
    }
    let mut names: Vec<&str> = listed
        .iter()
        .take(NAMES_SHOWN)
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    let more = listed.len().saturating_sub(NAMES_SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "the endpoint lists no model `{model}`; the model is unchanged (it lists: {}{more})",
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_name_the_endpoint_lists_is_taken() {
        let listed: Vec<String> = ["gpt-x", "llama3:latest"].map(String::from).to_vec();
        assert_eq!(refusal(&listed, "gpt-x"), None);
        assert_eq!(refusal(&listed, "llama3"), None);
        let no = refusal(&listed, "gtp-x").unwrap();
        assert!(
            no.contains("no model `gtp-x`") && no.contains("gpt-x, llama3:latest"),
            "{no}"
        );
        assert_eq!(refusal(&[], "anything"), None);
        let many: Vec<String> = (0..20).map(|i| format!("m{i:02}")).collect();
        assert!(refusal(&many, "x").unwrap().ends_with("and 8 more)"));
    }
}
