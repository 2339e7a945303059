//! `harness9 mcp add|remove|trust`: the `[mcp_servers.NAME]` tables of the user's
//! config.toml or the project's `.harness9/config.toml` edited through
//! [`crate::mcp::edit`] (comments and layout kept), and the project's definitions
//! approved.

use std::io::Write;

use super::{AddRequest, Files, McpCliError, Scope, count};
use crate::mcp::config::{
    self, Enabled, MCP_JSON, McpServerConfig, McpSetup, McpTransport, PROJECT_CONFIG, ServerOrigin,
    ServerSandbox, Trust,
};
use crate::mcp::edit::{self, ConfigFile};
use crate::mcp::manager::list_or_none;
use crate::safe_text::SafeWriter;

/// `mcp add`: writes `[mcp_servers.NAME]` into the scope's file (created when
/// missing), keeping the rest of the file as written; a server the user adds to the
/// project is approved at once. A name already defined (in any file) is a usage error
/// unless `force`. A project server written but not approved is
/// [`McpCliError::NotApproved`].
pub fn add(
    setup: &McpSetup,
    files: &Files,
    request: &AddRequest,
    out: &mut dyn Write,
) -> Result<(), McpCliError> {
    let name = request.name.as_str();
    let usage = |reason: String| McpCliError::Usage(format!("MCP server `{name}`: {reason}"));
    config::check_name(name).map_err(usage)?;
    if request.server.command.is_none() && request.server.url.is_none() {
        return Err(usage(
            "say what to run: `harness9 mcp add NAME -- COMMAND [ARGS...]` (a stdio server) \
             or `harness9 mcp add NAME --url URL` (streamable HTTP)"
                .into(),
        ));
    }
    config::check(name, &request.server).map_err(usage)?;
    let path = files.of(request.scope);
    let mut file = ConfigFile::open(&path)?;
    let here = file.defines(name);
    let elsewhere = setup
        .get(name)
        .filter(|s| s.origin.path() != path)
        .map(|s| s.origin.clone());
    if !request.force {
        let place = if here {
            Some(path.clone())
        } else {
            elsewhere.as_ref().map(|o| o.path().to_path_buf())
        };
        if let Some(place) = place {
            return Err(usage(format!(
                "it is already defined in {}; `--force` replaces it (or pick another name)",
                place.display()
            )));
        }
    }
    file.set(name, &request.server)?;
    file.save(request.scope.links())?;

    let mut safe = SafeWriter::text(out);
    let out: &mut dyn Write = &mut safe;
    let verb = if here { "Replaced" } else { "Added" };
    let prep = if here { "in" } else { "to" };
    writeln!(out, "{verb} MCP server `{name}` {prep} {}:", path.display())?;
    writeln!(out)?;
    write!(out, "{}", edit::table_text(name, &request.server))?;
    writeln!(out)?;
    if let Some(origin) = &elsewhere {
        // Precedence: the project's .harness9/config.toml, then .mcp.json, then the user's.
        let other = origin.path().display();
        if request.scope == Scope::Project {
            writeln!(
                out,
                "It takes precedence over the definition in {other}, which stays."
            )?;
        } else {
            writeln!(
                out,
                "Note: the definition in {other} takes precedence over this one."
            )?;
        }
    }
    let mut approved = true;
    if request.scope == Scope::Project {
        approved = config::trust_project_server(setup, name)?;
        if approved {
            writeln!(
                out,
                "It is approved on this machine (you added it). Anyone else who gets this \
                 project approves it with `harness9 mcp trust`."
            )?;
        }
    }
    writeln!(out, "Check it with `harness9 mcp tools {name}`.")?;
    out.flush()?;
    if approved {
        Ok(())
    } else {
        Err(McpCliError::NotApproved {
            name: name.to_string(),
            path,
        })
    }
}

/// `mcp remove NAME [--scope]`: removes the table from the scope's file, or (no scope)
/// from the file whose definition is in force: the project's `.harness9/config.toml`,
/// else the user's config.toml. A server only `.mcp.json` defines is a usage error
/// (harness9 does not edit that file); a name no file defines is not found.
pub fn remove(
    setup: &McpSetup,
    files: &Files,
    name: &str,
    scope: Option<Scope>,
    out: &mut dyn Write,
) -> Result<(), McpCliError> {
    let json_path = files.project.join(MCP_JSON);
    let in_json = edit::json_defines(&json_path, name);
    let mut found = None;
    for candidate in [Scope::Project, Scope::User] {
        if scope.is_some_and(|s| s != candidate) {
            continue;
        }
        let file = ConfigFile::open(&files.of(candidate))?;
        if file.defines(name) {
            found = Some((file, candidate));
            break;
        }
        // Without a scope, `.mcp.json` comes between the project's file and the user's.
        if scope.is_none() && candidate == Scope::Project && in_json {
            return Err(McpCliError::Usage(format!(
                "MCP server `{name}` is defined in {}, which harness9 does not edit (other \
                 tools share it); remove it there by hand{}",
                json_path.display(),
                if ConfigFile::open(&files.user_config)?.defines(name) {
                    ", or use `--scope user` to remove the one in config.toml"
                } else {
                    ""
                }
            )));
        }
    }
    let Some((mut file, found_in)) = found else {
        let names: Vec<String> = setup.servers.iter().map(|s| s.name.clone()).collect();
        let where_ = match scope {
            Some(s) => format!("in {}", files.of(s).display()),
            None => "in config.toml or .harness9/config.toml".to_string(),
        };
        let elsewhere = match setup.get(name) {
            Some(s) => format!("; it is defined in {}", s.origin.path().display()),
            None => format!(" (servers: {})", list_or_none(&names)),
        };
        return Err(McpCliError::NotFound(format!(
            "no MCP server named `{name}` is defined {where_}{elsewhere}"
        )));
    };
    file.remove(name)?;
    file.save(found_in.links())?;
    let path = file.path();
    let mut safe = SafeWriter::text(out);
    writeln!(safe, "Removed MCP server `{name}` from {}.", path.display())?;
    let mut others = Vec::new();
    for other in [files.of(Scope::Project), files.user_config.clone()] {
        if other != path && ConfigFile::open(&other)?.defines(name) {
            others.push(other);
        }
    }
    if in_json {
        others.push(json_path);
    }
    for other in others {
        writeln!(safe, "It is still defined in {}.", other.display())?;
    }
    safe.flush()?;
    Ok(())
}

/// `mcp trust`: lists the project's server definitions (name, file, what runs, the
/// names of the variables and headers set — never their values) and approves them as
/// they are now. Problems with the project's files go to `err` first.
pub fn trust(
    setup: &McpSetup,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), McpCliError> {
    let mut safe_err = SafeWriter::text(err);
    for warning in &setup.warnings {
        writeln!(safe_err, "harness9: warning: {warning}")?;
    }
    safe_err.flush()?;
    let mut safe = SafeWriter::text(out);
    let out: &mut dyn Write = &mut safe;
    let project: Vec<&McpServerConfig> = setup
        .servers
        .iter()
        .filter(|s| {
            matches!(
                s.origin,
                ServerOrigin::Project { .. } | ServerOrigin::McpJson { .. }
            )
        })
        .collect();
    if project.is_empty() {
        writeln!(
            out,
            "{} defines no MCP servers ({PROJECT_CONFIG}, {MCP_JSON}); there is nothing to \
             approve.",
            setup.project.display()
        )?;
        out.flush()?;
        return Ok(());
    }
    writeln!(
        out,
        "The MCP servers of {} (approving one lets harness9 run it on this machine):",
        setup.project.display()
    )?;
    for server in &project {
        writeln!(out)?;
        let mut notes = Vec::new();
        if server.trust == Trust::Trusted {
            notes.push("already approved");
        }
        if server.enabled == Enabled::No {
            notes.push("disabled");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        writeln!(out, "{}{notes}", server.name)?;
        writeln!(out, "    file     {}", server.origin.path().display())?;
        match &server.transport {
            McpTransport::Stdio {
                env,
                env_vars,
                cwd,
                sandbox,
                ..
            } => {
                writeln!(out, "    command  {}", server.target())?;
                if let Some(cwd) = cwd {
                    writeln!(out, "    cwd      {}", cwd.display())?;
                }
                if !env.is_empty() {
                    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                    writeln!(out, "    env      {}", keys.join(", "))?;
                }
                if !env_vars.is_empty() {
                    writeln!(out, "    passes   {}", env_vars.join(", "))?;
                }
                if *sandbox == ServerSandbox::Session {
                    writeln!(out, "    sandbox  the session's")?;
                }
            }
            McpTransport::Http {
                url,
                headers,
                bearer_token_env,
            } => {
                writeln!(out, "    url      {url}")?;
                if !headers.is_empty() {
                    let keys: Vec<&str> = headers.keys().map(String::as_str).collect();
                    writeln!(out, "    headers  {}", keys.join(", "))?;
                }
                if let Some(var) = bearer_token_env {
                    writeln!(out, "    token    from ${var}")?;
                }
            }
        }
    }
    let approved = config::trust_project(setup)?;
    writeln!(out)?;
    writeln!(
        out,
        "Approved {} for this machine: {}. A definition that changes needs approving again.",
        count(approved.len(), "MCP server", "MCP servers"),
        approved.join(", ")
    )?;
    out.flush()?;
    Ok(())
}
