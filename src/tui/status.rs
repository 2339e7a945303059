//! The status line under the composer: the turn state on the left (thinking, running a
//! tool, waiting for approval, with a spinner and elapsed time), and on the right the
//! model, working directory, context used, tokens in/out and skills loaded. Segments are
//! dropped from the least important end when the terminal is narrow.
//!
//! It only draws what it is given; it knows nothing about events or keys.

use std::path::Path;
use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use crate::protocol::Usage;

/// What the current turn is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnState {
    /// No turn running.
    Idle,
    /// Waiting for the model.
    Thinking,
    /// The model is writing its answer.
    Responding,
    /// A tool is running.
    RunningTool {
        /// The tool's name.
        name: String,
    },
    /// An approval overlay is open.
    WaitingApproval,
    /// Shutdown was requested.
    Exiting,
}

/// Session facts shown on the right.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStatus {
    /// Model id.
    pub model: String,
    /// Project directory as shown (home abbreviated to `~`).
    pub workdir: String,
    /// The model's context window.
    pub context_window: Option<u64>,
    /// Input tokens of the latest request.
    pub context_tokens: u64,
    /// Session totals.
    pub usage: Usage,
    /// What each sub-agent consumed (part of `usage`), for `/usage`.
    pub sub_agents: crate::protocol::SubAgentUsage,
    /// Skills in the index.
    pub skills: usize,
    /// The approval mode in force (Shift+Tab and `/approvals` switch it).
    pub approval_mode: crate::protocol::ApprovalMode,
    /// The reasoning effort in force (`None`: none is sent).
    pub effort: Option<crate::protocol::Effort>,
}

/// Shortens `path` with `~` for the user's home directory.
pub fn display_dir(path: &Path, user_home: Option<&Path>) -> String {
    if let Some(home) = user_home
        && let Ok(rest) = path.strip_prefix(home)
    {
        return if rest.as_os_str().is_empty() {
            "~".to_string()
        } else {
            format!("~/{}", rest.display())
        };
    }
    path.display().to_string()
}

/// Token counts in short form: 950, 12.3k, 1.2M.
pub fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// Everything the status line shows besides the session facts.
#[derive(Debug, Clone, Copy)]
pub struct StatusView<'a> {
    /// The turn state.
    pub state: &'a TurnState,
    /// Time since the turn started.
    pub elapsed: Option<Duration>,
    /// Spinner frame.
    pub spinner: &'a str,
    /// A transient hint that replaces the state (e.g. "press Ctrl+C again to exit").
    pub hint: Option<&'a str>,
}

/// Draws the status line in the first row of `area`.
pub fn render_status(area: Rect, buf: &mut Buffer, session: &SessionStatus, view: StatusView<'_>) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let dim = Style::new().fg(Color::DarkGray);
    let busy = Style::new().fg(Color::Yellow);
    let elapsed = view
        .elapsed
        .map(|d| format!(" {}s", d.as_secs()))
        .unwrap_or_default();
    let (left, left_style) = match (view.hint, view.state) {
        (Some(hint), _) => (hint.to_string(), Style::new().add_modifier(Modifier::BOLD)),
        (None, TurnState::Idle) => ("ready · / for commands".to_string(), dim),
        (None, TurnState::Thinking) => (
            format!("{} thinking{elapsed} · esc to interrupt", view.spinner),
            busy,
        ),
        (None, TurnState::Responding) => (
            format!("{} responding{elapsed} · esc to interrupt", view.spinner),
            busy,
        ),
        (None, TurnState::RunningTool { name }) => (
            format!(
                "{} running {name}{elapsed} · esc to interrupt",
                view.spinner
            ),
            busy,
        ),
        (None, TurnState::WaitingApproval) => (
            "waiting for approval".to_string(),
            Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
        ),
        (None, TurnState::Exiting) => ("exiting…".to_string(), dim),
    };

    // (priority, text): the lowest priority goes first when space runs out.
    let mode = match session.approval_mode {
        crate::protocol::ApprovalMode::Suggest => "suggest",
        crate::protocol::ApprovalMode::AutoEdit => "auto-edit",
        crate::protocol::ApprovalMode::FullAuto => "full-auto",
        crate::protocol::ApprovalMode::Plan => "plan",
    };
    let mut segments: Vec<(u8, String)> = vec![
        (6, mode.to_string()),
        (5, session.model.clone()),
        (2, session.workdir.clone()),
    ];
    if let Some(window) = session.context_window.filter(|w| *w > 0) {
        let pct = (session.context_tokens.saturating_mul(100) / window).min(100);
        segments.push((4, format!("ctx {pct}%")));
    }
    let approx = if session.usage.estimated { "~" } else { "" };
    segments.push((
        3,
        format!(
            "{approx}↑{} ↓{}",
            short_count(session.usage.input_tokens),
            short_count(session.usage.output_tokens)
        ),
    ));
    if session.usage.cached_input_tokens > 0
        && let Some(percent) = session.usage.cache_hit_percent()
    {
        segments.push((3, format!("cache {percent}%")));
    }
    if let Some(cost) = session.usage.cost {
        segments.push((3, format!("{approx}{cost}")));
    }
    let s = if session.skills == 1 { "" } else { "s" };
    segments.push((1, format!("{} skill{s}", session.skills)));

    let width = usize::from(area.width);
    let left_width = unicode_width::UnicodeWidthStr::width(left.as_str());
    let join = |segments: &[(u8, String)]| {
        segments
            .iter()
            .map(|(_, s)| s.as_str())
            .collect::<Vec<_>>()
            .join(" · ")
    };
    let mut right = join(&segments);
    while left_width + 2 + unicode_width::UnicodeWidthStr::width(right.as_str()) > width {
        let Some(lowest) = segments
            .iter()
            .enumerate()
            .min_by_key(|(_, (p, _))| *p)
            .map(|(i, _)| i)
        else {
            break;
        };
        segments.remove(lowest);
        right = join(&segments);
    }
    buf.set_stringn(area.x, area.y, &left, width, left_style);
    let right_width = unicode_width::UnicodeWidthStr::width(right.as_str());
    if !right.is_empty() && left_width + 2 + right_width <= width {
        let x = area.x + (width - right_width) as u16;
        buf.set_string(x, area.y, &right, dim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::drawn;
    use insta::assert_snapshot;

    fn session() -> SessionStatus {
        SessionStatus {
            model: "gpt-4o-mini".into(),
            workdir: "~/src/demo".into(),
            context_window: Some(128_000),
            context_tokens: 16_000,
            usage: Usage {
                input_tokens: 23_400,
                output_tokens: 812,
                cached_input_tokens: 0,
                cache_write_tokens: 0,
                estimated: false,
                cost: None,
            },
            sub_agents: Default::default(),
            skills: 3,
            approval_mode: crate::protocol::ApprovalMode::Suggest,
            effort: None,
        }
    }

    fn draw(width: u16, state: TurnState, hint: Option<&str>) -> String {
        drawn(width, 1, |f| {
            let view = StatusView {
                state: &state,
                elapsed: Some(Duration::from_secs(4)),
                spinner: "⠋",
                hint,
            };
            render_status(f.area(), f.buffer_mut(), &session(), view)
        })
    }

    #[test]
    fn status_line_states() {
        let all = [
            draw(100, TurnState::Idle, None),
            draw(100, TurnState::Thinking, None),
            draw(
                100,
                TurnState::RunningTool {
                    name: "bash".into(),
                },
                None,
            ),
            draw(100, TurnState::WaitingApproval, None),
            draw(100, TurnState::Idle, Some("press Ctrl+C again to exit")),
        ]
        .join("");
        assert_snapshot!(all);
    }

    #[test]
    fn narrow_status_line_drops_segments() {
        let narrow = draw(60, TurnState::Thinking, None);
        assert!(narrow.contains("gpt-4o-mini"), "{narrow}");
        assert!(!narrow.contains("skills"), "{narrow}");
    }

    #[test]
    fn the_cache_hit_rate_shows_once_the_cache_was_read() {
        let cold = draw(100, TurnState::Idle, None);
        assert!(!cold.contains("cache"), "{cold}");
        let mut warm = session();
        warm.usage.cached_input_tokens = 18_720;
        let line = drawn(100, 1, |f| {
            let view = StatusView {
                state: &TurnState::Idle,
                elapsed: None,
                spinner: "⠋",
                hint: None,
            };
            render_status(f.area(), f.buffer_mut(), &warm, view)
        });
        assert!(line.contains("↑23.4k ↓812 · cache 80%"), "{line}");
    }

    #[test]
    fn short_counts() {
        assert_eq!(short_count(950), "950");
        assert_eq!(short_count(12_345), "12.3k");
        assert_eq!(short_count(1_200_000), "1.2M");
    }

    #[test]
    fn home_is_abbreviated() {
        let home = Path::new("/home/ann");
        assert_eq!(
            display_dir(Path::new("/home/ann/src/x"), Some(home)),
            "~/src/x"
        );
        assert_eq!(display_dir(Path::new("/srv/x"), Some(home)), "/srv/x");
    }
}
