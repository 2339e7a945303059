//! Views of one cell each: the welcome header, `/help`, `/usage` (from what the TUI
//! knows), and the agent's listings styled: `/skills` (every skill with its source,
//! status and the index budget it uses) and `/mcp`.
//!
//! It reads plain data (the slash commands, the listings, the session status); it
//! changes nothing.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::status::{SessionStatus, short_count};
use crate::protocol::ApprovalMode;
use crate::protocol::BUILTINS;
use crate::protocol::{McpHealth, McpServerEntry, SkillListing, SkillStanding, SlashCommands};

fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

fn heading(text: &str) -> Line<'static> {
    Line::styled(text.to_string(), bold())
}

/// What `/model` alone shows: the model in use, then each provider's models (at most
/// 30 each) or its error.
pub fn model_list(list: &crate::protocol::ModelList) -> Vec<Line<'static>> {
    let mut lines = vec![heading("Models")];
    lines.extend(list.lines(30).into_iter().map(|line| {
        if line.starts_with("  ") {
            Line::raw(line)
        } else {
            Line::styled(line, dim())
        }
    }));
    lines
}

/// What `/status` shows: a heading, then one dimmed label and its value a line.
pub fn status(report: &crate::protocol::StatusReport) -> Vec<Line<'static>> {
    let rows = report.lines();
    let width = rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    let mut lines = vec![heading("Status")];
    lines.extend(rows.into_iter().map(|(label, value)| {
        Line::from(vec![
            Span::styled(format!("  {label:<width$}  "), dim()),
            Span::raw(value),
        ])
    }));
    lines
}

/// What `/plugins` shows: a heading, then one line per plugin.
pub fn plugins(listing: &crate::protocol::PluginListing) -> Vec<Line<'static>> {
    let mut lines = vec![heading("Plugins")];
    lines.extend(
        listing
            .lines()
            .into_iter()
            .map(|line| Line::from(Span::raw(format!("  {line}")))),
    );
    lines
}

/// What `/context` shows: a heading, then the report's lines (the section headings
/// bold, the rest as worded).
pub fn context(report: &crate::protocol::ContextReport) -> Vec<Line<'static>> {
    let mut lines = vec![heading("Context")];
    lines.extend(report.lines().into_iter().map(|line| {
        if line.starts_with(' ') {
            Line::raw(format!("  {line}"))
        } else {
            Line::from(vec![Span::raw("  "), Span::styled(line, bold())])
        }
    }));
    lines
}

/// The header shown once at start.
pub fn welcome(
    status: &SessionStatus,
    mode: ApprovalMode,
    mcp_servers: usize,
) -> Vec<Line<'static>> {
    let mode = match mode {
        ApprovalMode::Suggest => "suggest",
        ApprovalMode::AutoEdit => "auto-edit",
        ApprovalMode::FullAuto => "full-auto",
        ApprovalMode::Plan => "plan",
    };
    let s = if status.skills == 1 { "" } else { "s" };
    // Only a sandbox in force is named: without one, the approval mode says it all.
    let sandbox = crate::sandbox::session()
        .map(|sandbox| {
            let network = match sandbox.policy.network {
                crate::sandbox::Network::Deny => "no network",
                crate::sandbox::Network::Allow => "network",
            };
            format!(" · sandbox: {}, {network}", sandbox.policy.mode.as_str())
        })
        .unwrap_or_default();
    let servers = match mcp_servers {
        0 => String::new(),
        1 => " · 1 MCP server".to_string(),
        n => format!(" · {n} MCP servers"),
    };
    vec![
        Line::from(vec![
            Span::styled("harness9", bold().fg(Color::Cyan)),
            Span::raw(format!(" · {} · {}", status.model, status.workdir)),
        ]),
        Line::styled(
            format!(
                "{} skill{s}{servers} · approvals: {mode}{sandbox} · /help for commands and keys",
                status.skills
            ),
            dim(),
        ),
    ]
}

/// `/help`: commands, skills and keys.
pub fn help(commands: &SlashCommands) -> Vec<Line<'static>> {
    let mut lines = vec![heading("Commands")];
    for (name, description) in BUILTINS {
        lines.push(Line::from(vec![
            Span::styled(format!("  /{name:<10}"), Style::new().fg(Color::Cyan)),
            Span::styled(description.to_string(), dim()),
        ]));
    }
    let skills: Vec<&str> = commands.user_invocable_names().collect();
    if !skills.is_empty() {
        lines.push(Line::default());
        lines.push(heading("Skills (run with /name args)"));
        let shown = skills
            .iter()
            .take(20)
            .map(|n| format!("/{n}"))
            .collect::<Vec<_>>();
        let more = skills.len().saturating_sub(20);
        let mut text = format!("  {}", shown.join("  "));
        if more > 0 {
            text.push_str(&format!("  … and {more} more (/skills)"));
        }
        lines.push(Line::styled(text, Style::new().fg(Color::Cyan)));
    }
    lines.push(Line::default());
    lines.push(heading("Keys"));
    for (keys, what) in [
        ("enter", "send"),
        ("shift+enter, alt+enter, ctrl+j", "new line"),
        ("up / down", "previous / next input"),
        ("ctrl+r", "search the input history"),
        ("@", "pick a file or folder to attach"),
        (
            "!command",
            "run a shell command (judged like the model's); output goes to the model",
        ),
        ("tab", "complete a command or an @ path"),
        ("shift+tab", "switch the approval mode"),
        ("ctrl+o", "show a collapsed paste in full"),
        ("esc", "interrupt the running turn"),
        ("esc esc", "rewind to an earlier message (and its files)"),
        ("ctrl+c", "clear the input or interrupt; twice to exit"),
        ("ctrl+d", "exit (on an empty input)"),
        ("ctrl+g", "edit the input in $EDITOR"),
        ("ctrl+t", "the whole transcript, every tool output in full"),
    ] {
        lines.push(Line::from(vec![
            Span::styled(format!("  {keys:<32}"), Style::new().fg(Color::Cyan)),
            Span::styled(what.to_string(), dim()),
        ]));
    }
    lines
}

/// `/skills`: the shared listing ([`crate::skills::listing`]) with colours.
pub fn skills(listing: &SkillListing) -> Vec<Line<'static>> {
    let mut lines = vec![heading(&format!("Skills ({})", listing.skills.len()))];
    if listing.skills.is_empty() {
        lines.push(Line::styled(
            "  none found: add skills/<name>/SKILL.md to the project or ~/.harness9/skills/",
            dim(),
        ));
    }
    for entry in &listing.skills {
        let mut spans = vec![
            Span::styled(format!("  /{}", entry.name), Style::new().fg(Color::Cyan)),
            Span::raw(" "),
        ];
        if let Some(hint) = &entry.argument_hint {
            spans.push(Span::styled(
                format!("{hint} "),
                Style::new().fg(Color::Yellow),
            ));
        }
        let status_style = match entry.standing {
            SkillStanding::Ok => Style::new().fg(Color::Green),
            SkillStanding::Warning | SkillStanding::Shadowed => Style::new().fg(Color::Yellow),
        };
        spans.push(Span::styled(
            entry.standing.as_str().to_string(),
            status_style,
        ));
        let notes: Vec<&str> = entry.notes.iter().map(|n| n.label()).collect();
        spans.push(Span::styled(format!(" ({})", notes.join(", ")), dim()));
        lines.push(Line::from(spans));
        lines.push(Line::styled(format!("      {}", entry.description), dim()));
        lines.push(Line::styled(
            format!("      {}", entry.path.display()),
            dim(),
        ));
    }
    for (name, path) in &listing.shadowed {
        lines.push(Line::styled(
            format!("  {name} (shadowed) {}", path.display()),
            Style::new().fg(Color::Yellow),
        ));
    }
    for (path, reason) in &listing.invalid {
        lines.push(Line::styled(
            format!("  invalid: {}: {reason}", path.display()),
            Style::new().fg(Color::Red),
        ));
    }
    if listing.warnings > 0 {
        lines.push(Line::styled(
            format!(
                "  {} warning(s): run `harness9 skills validate` for details",
                listing.warnings
            ),
            Style::new().fg(Color::Yellow),
        ));
    }
    lines.push(Line::styled(
        format!(
            "  index: {} of {} characters ({}% of the budget)",
            listing.index_used,
            listing.index_budget,
            listing.index_percent()
        ),
        dim(),
    ));
    lines
}

/// `/mcp`: the shared listing ([`crate::mcp::listing`]) of the MCP servers, their state
/// and prompts, with colours.
pub fn mcp(entries: &[McpServerEntry]) -> Vec<Line<'static>> {
    let mut lines = vec![heading(&format!("MCP servers ({})", entries.len()))];
    if entries.is_empty() {
        lines.push(Line::styled(
            "  none configured: harness9 mcp add NAME -- COMMAND (docs/MCP.md)",
            dim(),
        ));
    }
    for e in entries {
        let state = match e.health {
            McpHealth::Failed => Style::new().fg(Color::Red),
            McpHealth::Fine => Style::new().fg(Color::Green),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("  {}", e.name), Style::new().fg(Color::Cyan)),
            Span::raw("  "),
            Span::styled(e.state.clone(), state),
        ]));
        lines.push(Line::styled(format!("    {}", e.detail), dim()));
        if !e.prompts.is_empty() {
            lines.push(Line::styled(
                format!("    prompts: {}", e.prompts.join(", ")),
                dim(),
            ));
        }
    }
    lines
}

/// `/usage`: token counts for the session.
pub fn usage(status: &SessionStatus) -> Vec<Line<'static>> {
    let u = status.usage;
    let approx = if u.estimated { " (estimated)" } else { "" };
    let mut lines = vec![
        heading(&format!("Usage this session{approx}")),
        Line::raw(format!(
            "  input {} (cached {}) · output {} · total {}",
            short_count(u.input_tokens),
            short_count(u.cached_input_tokens),
            short_count(u.output_tokens),
            short_count(u.total())
        )),
    ];
    if let Some(cache) = u.cache_summary() {
        lines.push(Line::raw(format!("  prompt cache: {cache}")));
    }
    if let Some(cost) = u.cost {
        lines.push(Line::raw(format!("  cost: {cost}{approx}")));
    }
    for line in status.sub_agents.lines() {
        lines.push(Line::raw(format!("  {line}")));
    }
    if let Some(window) = status.context_window.filter(|w| *w > 0) {
        lines.push(Line::raw(format!(
            "  context: {} of {} tokens ({}%)",
            short_count(status.context_tokens),
            short_count(window),
            status.context_tokens.saturating_mul(100) / window
        )));
    }
    lines
}
