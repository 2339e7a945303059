//! What `/model` with no argument shows: for each configured provider, the models its
//! `/models` offers, or why it could not be asked ([`ModelList`]). Plain data; it must
//! not know how providers are asked or how the list is drawn.

use serde::Serialize;

/// Every provider's models, after [`super::Op::ListModels`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelList {
    /// The model in use, written as `/model` takes it (`NAME/model` on a named provider).
    pub current: String,
    /// One entry per provider, the default one first.
    pub providers: Vec<ProviderModels>,
}

/// One provider's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderModels {
    /// `default` for the top-level endpoint, else the `[providers.NAME]` name.
    pub name: String,
    /// What it offers.
    pub listing: ModelListing,
}

/// What a provider's `/models` said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ModelListing {
    /// The ids it lists (maybe none), sorted.
    Listed {
        /// Model ids.
        models: Vec<String>,
    },
    /// It could not be asked, or its answer was no list.
    Failed {
        /// What went wrong.
        error: String,
    },
}

impl ModelList {
    /// The lines every frontend shows: the model in use, then each provider with its
    /// models written as `/model` takes them (at most `per_provider` each, then how many
    /// more).
    pub fn lines(&self, per_provider: usize) -> Vec<String> {
        self.lines_raw(per_provider)
            .into_iter()
            .map(|line| crate::safe_text::neutralize(&line).into_owned())
            .collect()
    }

    /// The lines before the servers' text is made inert.
    fn lines_raw(&self, per_provider: usize) -> Vec<String> {
        let mut lines = vec![format!("model: {}", self.current)];
        for provider in &self.providers {
            match &provider.listing {
                ModelListing::Failed { error } => {
                    lines.push(format!("{}: cannot list models: {error}", provider.name));
                }
                ModelListing::Listed { models } if models.is_empty() => {
                    lines.push(format!("{}: lists no models", provider.name));
                }
                ModelListing::Listed { models } => {
                    lines.push(format!(
                        "{} ({} model{}):",
                        provider.name,
                        models.len(),
                        if models.len() == 1 { "" } else { "s" }
                    ));
                    for id in models.iter().take(per_provider) {
                        let shown = if provider.name == "default" {
                            id.clone()
                        } else {
                            format!("{}/{id}", provider.name)
                        };
                        lines.push(format!("  {shown}"));
                    }
                    if models.len() > per_provider {
                        lines.push(format!("  … and {} more", models.len() - per_provider));
                    }
                }
            }
        }
        lines.push("Switch with /model NAME/MODEL (or a model id on the provider in use).".into());
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_written_as_model_takes_them_and_made_inert() {
        let list = ModelList {
            current: "or/a".into(),
            providers: vec![
                ProviderModels {
                    name: "default".into(),
                    listing: ModelListing::Listed {
                        models: vec!["m\u{1b}[2J".into(), "n".into()],
                    },
                },
                ProviderModels {
                    name: "or".into(),
                    listing: ModelListing::Listed {
                        models: vec!["a".into(), "b".into(), "c".into()],
                    },
                },
                ProviderModels {
                    name: "down".into(),
                    listing: ModelListing::Failed {
                        error: "HTTP 500".into(),
                    },
                },
            ],
        };
        let lines = list.lines(2);
        assert!(lines.iter().all(|l| !l.contains('\u{1b}')), "{lines:?}");
        assert!(lines.contains(&"  m^[[2J".to_string()), "{lines:?}");
        assert!(lines.contains(&"  or/a".to_string()), "{lines:?}");
        assert!(lines.contains(&"  … and 1 more".to_string()), "{lines:?}");
        assert!(lines.contains(&"down: cannot list models: HTTP 500".to_string()));
    }
}
