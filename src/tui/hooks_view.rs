//! `/hooks` as one cell: the shared wording ([`crate::protocol::describe_hooks`]) of
//! every hook by event, styled — events bold, hooks in force green, hooks not in force
//! yellow, files dim. What it shows came from files a repository may have written, so
//! every line is neutralized before it is drawn.
//!
//! It reads the listing; it changes nothing.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use crate::protocol::{HookLineKind, HookListing, HookStanding, describe_hooks};

/// The cell for `/hooks`.
pub fn hooks(listing: &HookListing) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!(
            "Hooks ({} configured, {} not in force)",
            listing.hooks.len(),
            listing.not_in_force()
        ),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    for line in describe_hooks(listing) {
        let style = match line.kind {
            HookLineKind::Heading => Style::new().add_modifier(Modifier::BOLD),
            HookLineKind::Hook(HookStanding::InForce(_)) => Style::new().fg(Color::Green),
            HookLineKind::Hook(HookStanding::NotInForce(_)) | HookLineKind::Problem => {
                Style::new().fg(Color::Yellow)
            }
            HookLineKind::Origin => Style::new().fg(Color::DarkGray),
            HookLineKind::Summary => Style::new(),
        };
        let safe = crate::safe_text::neutralize(&line.text).into_owned();
        lines.push(Line::styled(format!("  {safe}"), style));
    }
    lines
}
