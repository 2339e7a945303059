//! `harness9 mcp list|tools|add|remove|trust` dispatched to [`crate::mcp::cli`]. `list`
//! and `tools` start servers as a session would: secrets kept out of their environment,
//! `sandbox = true` servers in the sandbox (or reported, when it is asked for and cannot
//! be had).

use std::io;

use super::CommandError;
use crate::cli::McpAction;
use crate::config::Config;
use crate::mcp::McpServers;
use crate::mcp::cli::{self, StartOptions};
use crate::sandbox::{Decision, SessionSandbox};
use crate::session;
use crate::sink::Sink;

/// Runs one `mcp` action.
pub(super) fn run(config: &Config, action: &McpAction) -> Result<(), CommandError> {
    let files = cli::Files {
        user_config: config.home.join("config.toml"),
        project: config.project_root.clone(),
    };
    let format = |json: bool| {
        if json {
            cli::Format::Json
        } else {
            cli::Format::Text
        }
    };
    let mut out = Sink::new(io::stdout().lock());
    let mut err = Sink::new(io::stderr());
    match action {
        McpAction::List { json } => {
            let (runtime, servers, options) = servers_started(config)?;
            runtime.block_on(cli::list(
                &servers,
                &options,
                format(*json),
                &mut out,
                &mut err,
            ))?;
        }
        McpAction::Tools { name, json } => {
            let (runtime, servers, options) = servers_started(config)?;
            runtime.block_on(cli::tools(
                &servers,
                &options,
                name,
                format(*json),
                &mut out,
            ))?;
        }
        McpAction::Add(args) => cli::add(&config.mcp, &files, &args.request(), &mut out)?,
        McpAction::Remove { name, scope } => {
            cli::remove(&config.mcp, &files, name, scope.map(Into::into), &mut out)?;
        }
        McpAction::Trust => cli::trust(&config.mcp, &mut out, &mut err)?,
    }
    Ok(())
}

/// The runtime and the servers for `mcp list|tools`, with this run's secrets rule and
/// sandbox set up as a session's are.
fn servers_started(
    config: &Config,
) -> Result<(tokio::runtime::Runtime, McpServers, StartOptions), CommandError> {
    crate::exec::secrets::configure(config.secret_policy.clone());
    let mut options = StartOptions::default();
    match crate::sandbox::decide(
        &config.sandbox,
        config.approval_mode,
        &config.workdir,
        &config.project_root,
    ) {
        Ok(Decision::Confined(policy)) => {
            let launcher = std::env::current_exe().map_err(CommandError::OwnBinary)?;
            crate::sandbox::configure(SessionSandbox {
                policy: std::sync::Arc::new(policy),
                launcher,
            });
        }
        Ok(Decision::Unconfined { .. }) => {}
        Err(refusal) => options.sandbox_refusal = Some(refusal.to_string()),
    }
    let runtime = super::current_thread_runtime()?;
    Ok((runtime, session::mcp_servers(config), options))
}
