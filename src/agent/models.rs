//! `/model NAME` checked against the models the endpoint lists: a name it does not list
//! (when it lists any) is refused with the names it does, so a typo never becomes a
//! session of failing requests. An endpoint that lists nothing, or cannot be asked, is
//! taken at its word. It must not know how the refusal is shown.

use crate::llm::ProviderConfig;

/// The most names a refusal quotes.
const NAMES_SHOWN: usize = 12;

/// `Err` with the reason when the endpoint lists models and `model` is not one of them
/// (Ollama's `NAME` stands for its `NAME:latest`).
pub async fn check_listed(provider: &ProviderConfig, model: &str) -> Result<(), String> {
    let Some(listed) = crate::llm::window::listed_models(provider).await else {
        return Ok(());
    };
    refusal(&listed, model).map_or(Ok(()), Err)
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
