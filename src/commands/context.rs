//! `harness9 context [--json]`: what a session started here would put in the model's
//! context, as `/context` shows it at the start of a session — the instruction files of
//! the chain, the skill roots, the MCP index, the system prompt and tools and what they
//! cost. The session is assembled as a real one is (`session::prepare`) and its report
//! taken before anything is sent: nothing is asked of the endpoint, nothing is started.
//!
//! It must not know how the report is computed or worded (the agent's and the
//! protocol's).

use std::io::{self, Write};

use crate::agent::{Approver, conversation::Conversation};
use crate::config::{Config, EndpointNeed, OllamaProbe, Overrides};
use crate::safe_text::SafeWriter;
use crate::session;
use crate::sink::Sink;

use super::{CommandError, warn};

/// Where the model would be asked when no endpoint is configured: only to build the
/// client the assembly needs; the report sends nothing.
const NO_ENDPOINT: &str = "http://127.0.0.1/v1";

/// Writes the report to stdout, as text or one JSON object.
pub fn run(overrides: &Overrides, config: &Config, json: bool) -> Result<(), CommandError> {
    // The window follows the model a session would use: resolved as a session resolves
    // it when an endpoint is configured (without looking for a local server).
    let mut config = Config::resolve(
        overrides,
        &|name| std::env::var(name).ok(),
        EndpointNeed::Required,
        OllamaProbe::Disabled,
    )
    .unwrap_or_else(|_| config.clone());
    if config.provider.base_url.trim().is_empty() {
        config.provider.base_url = NO_ENDPOINT.to_string();
    }
    for warning in &config.warnings {
        warn(warning);
    }
    let prepared =
        session::prepare(&config, Approver::Nobody).map_err(CommandError::ContextAssembly)?;
    for warning in &prepared.info.startup_warnings {
        if !config.warnings.contains(warning) {
            warn(warning);
        }
    }
    let setup = &prepared.setup;
    let conversation = Conversation::new(setup.system_prompt.clone(), None);
    let report = crate::agent::context::report(setup, &conversation);
    // Paths are the repository's: written through the writer that neutralizes (or,
    // in JSON, escapes) what a terminal would act on.
    let sink = Sink::new(io::stdout().lock());
    let written = if json {
        let mut out = SafeWriter::json(sink);
        serde_json::to_writer_pretty(&mut out, &report.to_json())
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
            .and_then(|()| out.flush())
    } else {
        let mut out = SafeWriter::text(sink);
        report
            .lines()
            .iter()
            .try_for_each(|line| writeln!(out, "{line}"))
            .and_then(|()| out.flush())
    };
    written.map_err(CommandError::ContextOutput)
}
