//! `harness9 mcp tools NAME`: one server started and what it offers: its tools (the name
//! the model calls and the server's), its prompts as slash commands, its resources.

use std::io::Write;

use serde_json::{Value, json};

use super::{Format, McpCliError, Probe, StartOptions, blocked, one_line, table};
use crate::mcp::connection::PromptInfo;
use crate::mcp::manager::{McpServers, list_or_none};
use crate::mcp::names;
use crate::mcp::tools::RESOURCES_TOOL;
use crate::safe_text::SafeWriter;

/// The most characters of a description's first line `mcp tools` shows.
pub(super) const DESCRIPTION_CHARS: usize = 160;

/// `mcp tools NAME [--json]`: starts the server and lists its tools (the name the model
/// calls, the server's name, the description's first line), its prompts as slash
/// commands and whether it has resources. An unknown, disabled or unapproved server is
/// a failure of its own kind ([`McpCliError::NotFound`], [`McpCliError::Usage`]); one
/// that fails to start is [`McpCliError::Server`].
pub async fn tools(
    servers: &McpServers,
    options: &StartOptions,
    name: &str,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), McpCliError> {
    let setup = servers.setup();
    let Some(config) = setup.get(name) else {
        let names: Vec<String> = setup.servers.iter().map(|s| s.name.clone()).collect();
        return Err(McpCliError::NotFound(format!(
            "no MCP server named `{name}` is configured (servers: {})",
            list_or_none(&names)
        )));
    };
    match blocked(config, options) {
        None => {}
        Some(Probe::Disabled) => {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is disabled (`enabled = false` in {})",
                config.origin.path().display()
            )));
        }
        Some(Probe::NotApproved) => {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is defined by the project ({}) and not approved on this \
                 machine, so it is not started; review it (`harness9 mcp list`), then run \
                 `harness9 mcp trust`",
                config.origin.path().display()
            )));
        }
        Some(Probe::Failed(reason)) => {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is not started: {reason}"
            )));
        }
        Some(Probe::Ok { .. }) => {}
    }
    let (conn, infos) = servers.tools(name).await?;
    let identity = conn.identity().clone();
    let prompts = servers.prompts(name).await;
    let mut wanted: Vec<&str> = infos.iter().map(|t| t.name.as_str()).collect();
    if identity.has_resources {
        wanted.push(RESOURCES_TOOL);
    }
    let api = names::api_names(name, wanted);
    let resources_tool = identity
        .has_resources
        .then(|| api.last().map(|(api, _)| api.clone()))
        .flatten();
    let rows: Vec<[String; 3]> = infos
        .iter()
        .zip(&api)
        .map(|(info, (api_name, _))| {
            [
                api_name.clone(),
                info.name.clone(),
                first_line(&info.description),
            ]
        })
        .collect();
    if format == Format::Json {
        let value = json!({
            "name": name,
            "server": identity.implementation,
            "tools": infos.iter().zip(&api).map(|(info, (api_name, _))| json!({
                "name": api_name,
                "server_name": info.name,
                "description": info.description,
            })).collect::<Vec<_>>(),
            "prompts": match &prompts {
                Ok(list) => json!(list.iter().map(|p| json!({
                    "command": format!("/{name}:{}", p.name),
                    "name": p.name,
                    "description": p.description,
                    "arguments": p.arguments.iter().map(|a| json!({
                        "name": a.name,
                        "required": a.required,
                        "description": a.description,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>()),
                Err(_) => Value::Null,
            },
            "prompts_error": prompts.as_ref().err().map(ToString::to_string),
            "resources": identity.has_resources,
            "resources_tool": resources_tool,
        });
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        let mut safe = SafeWriter::json(&mut *out);
        writeln!(safe, "{text}")?;
        safe.flush()?;
        return Ok(());
    }
    let mut safe = SafeWriter::text(&mut *out);
    let out: &mut dyn Write = &mut safe;
    let about = identity
        .implementation
        .as_deref()
        .map(|i| format!(" ({i})"))
        .unwrap_or_default();
    writeln!(out, "MCP server {name}{about}")?;
    writeln!(out)?;
    if rows.is_empty() {
        writeln!(out, "Tools: none")?;
    } else {
        writeln!(out, "Tools (the model calls each by the first name):")?;
        table(&rows, out)?;
    }
    writeln!(out)?;
    match &prompts {
        Ok(list) if list.is_empty() => writeln!(out, "Prompts: none")?,
        Ok(list) => {
            writeln!(out, "Prompts (* marks a required argument):")?;
            let rows: Vec<[String; 2]> = list
                .iter()
                .map(|p| [prompt_usage(name, p), first_line(&p.description)])
                .collect();
            table(&rows, out)?;
        }
        Err(e) => writeln!(
            out,
            "Prompts: could not be listed — {}",
            one_line(&e.to_string())
        )?,
    }
    writeln!(out)?;
    match &resources_tool {
        Some(tool) => writeln!(
            out,
            "Resources: yes (the model lists and reads them with {tool})"
        )?,
        None => writeln!(out, "Resources: none")?,
    }
    out.flush()?;
    Ok(())
}

/// `/server:prompt arg* other`.
pub(super) fn prompt_usage(server: &str, prompt: &PromptInfo) -> String {
    let mut text = format!("/{server}:{}", prompt.name);
    for arg in &prompt.arguments {
        text.push(' ');
        text.push_str(&arg.name);
        if arg.required {
            text.push('*');
        }
    }
    text
}

/// The first non-empty line of `text`, cut to [`DESCRIPTION_CHARS`].
pub(super) fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() > DESCRIPTION_CHARS {
        let mut cut: String = line.chars().take(DESCRIPTION_CHARS - 1).collect();
        cut.push('…');
        cut
    } else {
        line.to_string()
    }
}
