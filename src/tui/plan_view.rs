//! The model's plan (`update_plan`) drawn above the composer: a header with how many
//! steps are done, then every step with its mark (✔ done, ▸ in progress, ○ pending); when
//! the rows given are fewer than that, one line with the count and the step under way.
//! The steps are the model's words: made inert before they are drawn. It knows nothing
//! of the agent.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::wrap::sanitize;
use crate::protocol::{PlanUpdate, StepStatus};

/// The plan's lines for a live area `width` columns wide with at most `rows` rows for
/// it (none when `rows` is 0).
pub fn plan_lines(plan: &PlanUpdate, width: u16, rows: u16) -> Vec<Line<'static>> {
    if rows == 0 || plan.items.is_empty() {
        return Vec::new();
    }
    let width = usize::from(width.max(8));
    let dim = Style::new().fg(Color::DarkGray);
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let count = format!("{}/{} done", plan.done(), plan.items.len());
    let all_done = plan.done() == plan.items.len();
    if usize::from(rows) < plan.items.len() + 1 || all_done {
        let now = match plan.current() {
            Some(step) => format!(" · now: {}", sanitize(&step.step)),
            None => String::new(),
        };
        return vec![Line::from(vec![
            Span::styled("Plan ", bold),
            Span::styled(cut(&format!("{count}{now}"), width.saturating_sub(5)), dim),
        ])];
    }
    let mut lines = vec![Line::from(vec![
        Span::styled("Plan ", bold),
        Span::styled(count, dim),
    ])];
    for item in &plan.items {
        let (mark, style) = match item.status {
            StepStatus::Done => ("  ✔ ", Style::new().fg(Color::Green)),
            StepStatus::InProgress => (
                "  ▸ ",
                Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            ),
            StepStatus::Pending => ("  ○ ", dim),
        };
        let text_style = match item.status {
            StepStatus::Done => dim.add_modifier(Modifier::CROSSED_OUT),
            StepStatus::InProgress => bold,
            StepStatus::Pending => Style::new(),
        };
        lines.push(Line::from(vec![
            Span::styled(mark, style),
            Span::styled(
                cut(&sanitize(&item.step), width.saturating_sub(4)),
                text_style,
            ),
        ]));
    }
    lines
}

/// `text` on one line of at most `width` characters (an ellipsis where it was cut).
fn cut(text: &str, width: usize) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    if one_line.chars().count() <= width {
        return one_line;
    }
    let mut kept: String = one_line.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}
