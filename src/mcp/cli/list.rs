//! `harness9 mcp list`: every configured server, where it is defined, what runs and its
//! state, the usable ones started side by side to say what they offer (text or JSON).

use std::io::{self, Write};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Format, LIST_START_LIMIT, McpCliError, Probe, StartOptions, blocked};
use crate::mcp::config::{self, McpServerConfig, McpSetup, McpTransport, ServerOrigin};
use crate::mcp::manager::McpServers;
use crate::safe_text::SafeWriter;

/// Starts `name` (within `limit`) and says what it offers.
async fn probe(servers: McpServers, name: String, limit: Duration) -> Probe {
    match tokio::time::timeout(limit, servers.tools(&name)).await {
        Err(_) => Probe::Failed(format!(
            "MCP server `{name}` did not start within {} s",
            limit.as_secs()
        )),
        Ok(Err(e)) => Probe::Failed(e.to_string()),
        Ok(Ok((conn, tools))) => Probe::Ok {
            tools: tools.len(),
            prompts: servers.memo(&name).map_or(0, |m| m.prompts.len()),
            resources: conn.identity().has_resources,
            implementation: conn.identity().implementation.clone(),
        },
    }
}

/// The scope word of a definition's origin (text, JSON).
fn scope_words(origin: &ServerOrigin) -> (&'static str, &'static str) {
    match origin {
        ServerOrigin::User { .. } => ("user", "user"),
        ServerOrigin::Project { .. } => ("project", "project"),
        ServerOrigin::McpJson { .. } => ("project", "mcp_json"),
        ServerOrigin::Plugin { .. } => ("plugin", "plugin"),
        ServerOrigin::Editor => ("editor", "editor"),
    }
}

fn transport_word(config: &McpServerConfig) -> &'static str {
    match config.transport {
        McpTransport::Stdio { .. } => "stdio",
        McpTransport::Http { .. } => "http",
    }
}

/// `mcp list [--json]`: every configured server with where it is defined, what runs and
/// its state; the enabled, approved ones are started side by side (each within its
/// start-up timeout, at most [`LIST_START_LIMIT`]). Problems with the definitions go
/// to `err` as warnings; when there were any, the listing is incomplete
/// ([`McpCliError::Incomplete`]). A server that fails is part of the answer, not an
/// error.
pub async fn list(
    servers: &McpServers,
    options: &StartOptions,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), McpCliError> {
    let setup = servers.setup();
    let mut pending = Vec::new();
    for config in &setup.servers {
        match blocked(config, options) {
            Some(probe) => pending.push(Err(probe)),
            None => {
                let limit = config.startup_timeout.min(LIST_START_LIMIT);
                let task = probe(servers.clone(), config.name.clone(), limit);
                pending.push(Ok(tokio::spawn(task)));
            }
        }
    }
    let mut probes = Vec::new();
    for item in pending {
        probes.push(match item {
            Err(probe) => probe,
            Ok(task) => task
                .await
                .unwrap_or_else(|e| Probe::Failed(format!("the check stopped: {e}"))),
        });
    }
    match format {
        Format::Json => {
            let items: Vec<Value> = setup
                .servers
                .iter()
                .zip(&probes)
                .map(|(c, p)| list_item(c, p))
                .collect();
            let text = serde_json::to_string_pretty(&items).unwrap_or_default();
            let mut safe = SafeWriter::json(&mut *out);
            writeln!(safe, "{text}")?;
            safe.flush()?;
        }
        Format::Text => {
            let mut safe = SafeWriter::text(&mut *out);
            list_text(setup, &probes, &mut safe)?;
            safe.flush()?;
        }
    }
    let mut safe = SafeWriter::text(err);
    for warning in &setup.warnings {
        writeln!(safe, "harness9: warning: {warning}")?;
    }
    safe.flush()?;
    match setup.warnings.len() {
        0 => Ok(()),
        problems => Err(McpCliError::Incomplete { problems }),
    }
}

fn list_text(setup: &McpSetup, probes: &[Probe], out: &mut dyn Write) -> io::Result<()> {
    if setup.servers.is_empty() {
        writeln!(
            out,
            "No MCP servers are configured. Add one with `harness9 mcp add NAME -- COMMAND \
             [ARGS...]` or `harness9 mcp add NAME --url URL`."
        )?;
        return Ok(());
    }
    for (i, (config, probe)) in setup.servers.iter().zip(probes).enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}  {}", config.name, probe.words())?;
        writeln!(out, "    {:<6} {}", transport_word(config), config.target())?;
        writeln!(
            out,
            "    {:<6} {} ({})",
            "file",
            config.origin.path().display(),
            scope_words(&config.origin).0
        )?;
    }
    Ok(())
}

fn list_item(config: &McpServerConfig, probe: &Probe) -> Value {
    let (tools, prompts, resources, server) = match probe {
        Probe::Ok {
            tools,
            prompts,
            resources,
            implementation,
        } => (
            json!(tools),
            json!(prompts),
            json!(resources),
            json!(implementation),
        ),
        _ => (Value::Null, Value::Null, Value::Null, Value::Null),
    };
    json!({
        "name": config.name,
        "scope": scope_words(&config.origin).1,
        "file": config.origin.path().display().to_string(),
        "transport": transport_word(config),
        "target": config.target(),
        "description": config.description,
        "preload": config.preload == config::Preload::AtStart,
        "state": probe.state(),
        "error": match probe {
            Probe::Failed(message) => json!(message),
            _ => Value::Null,
        },
        "tools": tools,
        "prompts": prompts,
        "resources": resources,
        "server": server,
    })
}
