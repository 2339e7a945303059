//! `harness9 plugin add|list|remove|trust`: the store of the configured home handed to
//! [`crate::plugins::cli`], stdout as a [`Sink`].
//!
//! It must not know how plugins are read or trusted.

use std::io;

use super::CommandError;
use crate::cli::PluginAction;
use crate::config::Config;
use crate::plugins::PluginStore;
use crate::plugins::cli::{self, ListFormat};
use crate::sink::Sink;

/// Runs one `plugin` action.
pub fn run(config: &Config, action: &PluginAction) -> Result<(), CommandError> {
    let store = PluginStore::new(&config.home);
    let env = |name: &str| std::env::var(name).ok();
    let mut out = Sink::new(io::stdout().lock());
    match action {
        PluginAction::Add { source, name } => {
            cli::add(
                &store,
                source,
                name.as_deref(),
                &config.workdir,
                &env,
                &mut out,
            )?;
        }
        PluginAction::List { json } => {
            let format = if *json {
                ListFormat::Json
            } else {
                ListFormat::Text
            };
            cli::list(&store, format, &env, &mut out)?;
        }
        PluginAction::Remove { name } => cli::remove(&store, name, &mut out)?,
        PluginAction::Trust { name } => cli::trust(&store, name, &env, &mut out)?,
    }
    Ok(())
}
