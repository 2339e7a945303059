//! Which wire protocol a provider speaks (`wire` in config.toml): the Chat Completions
//! API or OpenAI's Responses API. Only the name of the protocol lives here, so that the
//! configuration can carry it without knowing either protocol's fields.

use serde::Deserialize;

/// The API a provider is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Wire {
    /// `POST {base_url}/chat/completions` (the default).
    #[default]
    Chat,
    /// `POST {base_url}/responses` (OpenAI's Responses-only models).
    Responses,
}

impl Wire {
    /// The name written in config.toml.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Chat => "chat",
            Wire::Responses => "responses",
        }
    }
}
