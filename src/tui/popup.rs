//! The slash popup: while the draft is a `/` command name, it lists the built-ins and
//! skills that match (name, argument hint, description), filtered as the user types,
//! with one selected. Tab or Enter completes the selection.
//!
//! The candidates come from the shared input router ([`crate::input::completions`]), so
//! the popup offers exactly what the router accepts; argument hints come from the
//! session's slash commands (as the agent last sent them). It knows nothing about the
//! agent.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::input::completions;
use crate::protocol::SlashCommands;

/// Rows the popup shows at most; more candidates scroll.
pub const MAX_ROWS: u16 = 8;

/// Built-ins that take no arguments: Enter on them runs them at once. The others
/// (`/skill`, `/compact`, `/resume`, `/export`, `/model`) take arguments, some optional:
/// completing them leaves a space to type on, and Enter again runs them.
const NO_ARGS: &[&str] = &["help", "skills", "clear", "usage", "exit", "quit"];

/// One candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// What follows the `/` (e.g. `go-refactor` or `skill go-refactor`).
    pub name: String,
    /// One-line description.
    pub description: String,
    /// The skill's argument hint, if it has one.
    pub hint: Option<String>,
}

/// The popup's candidates and selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashPopup {
    candidates: Vec<Candidate>,
    selected: usize,
}

/// What completing did to the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The new draft.
    pub text: String,
    /// True when the command takes no arguments and can run at once.
    pub complete: bool,
}

impl SlashPopup {
    /// The popup for this draft, or `None` when the draft is not a command name being
    /// typed or nothing matches. `previous` keeps the selection on the same name.
    pub fn for_draft(
        draft: &str,
        commands: &SlashCommands,
        previous: Option<&SlashPopup>,
    ) -> Option<Self> {
        if !draft.starts_with('/') || draft.contains('\n') {
            return None;
        }
        let candidates: Vec<Candidate> = completions(draft, commands)
            .into_iter()
            .map(|(name, description)| {
                let skill_name = name.strip_prefix("skill ").unwrap_or(&name);
                let hint = commands
                    .skill(skill_name)
                    .and_then(|s| s.argument_hint.clone());
                Candidate {
                    name,
                    description,
                    hint,
                }
            })
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let typed = draft.trim_start_matches('/');
        let exact = candidates.iter().position(|c| c.name == typed);
        let selected = exact
            .or_else(|| {
                previous
                    .and_then(|p| p.candidates.get(p.selected))
                    .and_then(|c| candidates.iter().position(|n| n.name == c.name))
            })
            .unwrap_or(0);
        Some(SlashPopup {
            candidates,
            selected,
        })
    }

    /// The candidates, in order.
    #[cfg(test)]
    pub fn candidates(&self) -> &[Candidate] {
        &self.candidates
    }

    /// Moves the selection up (wrapping).
    pub fn up(&mut self) {
        let n = self.candidates.len();
        self.selected = (self.selected + n - 1) % n.max(1);
    }

    /// Moves the selection down (wrapping).
    pub fn down(&mut self) {
        self.selected = (self.selected + 1) % self.candidates.len().max(1);
    }

    /// The draft after completing the selection; `None` when it is already complete.
    pub fn complete(&self, draft: &str) -> Option<Completion> {
        let c = self.candidates.get(self.selected)?;
        let typed = draft.trim_start_matches('/').trim_end();
        let no_args = NO_ARGS.contains(&c.name.as_str());
        if typed == c.name {
            return None;
        }
        Some(Completion {
            text: if no_args {
                format!("/{}", c.name)
            } else {
                format!("/{} ", c.name)
            },
            complete: no_args,
        })
    }

    /// Rows wanted.
    pub fn height(&self) -> u16 {
        (self.candidates.len() as u16).min(MAX_ROWS)
    }

    /// Draws the candidates around the selection.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let rows = usize::from(area.height);
        if rows == 0 {
            return;
        }
        let first = (self.selected + 1).saturating_sub(rows);
        let name_width = self
            .candidates
            .iter()
            .map(|c| c.name.chars().count() + 1)
            .max()
            .unwrap_or(0)
            .min(32);
        let dim = Style::new().fg(Color::DarkGray);
        for (i, c) in self.candidates.iter().enumerate().skip(first).take(rows) {
            let selected = i == self.selected;
            let name_style = if selected {
                Style::new()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::new().fg(Color::Cyan)
            };
            let mut spans = vec![
                Span::raw("  "),
                Span::styled(format!("/{:<name_width$}", c.name), name_style),
                Span::raw(" "),
            ];
            if let Some(hint) = &c.hint {
                spans.push(Span::styled(
                    format!("{hint} "),
                    Style::new().fg(Color::Yellow),
                ));
            }
            spans.push(Span::styled(c.description.clone(), dim));
            let y = area.y + (i - first) as u16;
            Line::from(spans).render(Rect::new(area.x, y, area.width, 1), buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::Catalog;
    use crate::tui::test_support::{commands, drawn};
    use insta::assert_snapshot;

    fn draw(popup: &SlashPopup, width: u16) -> String {
        drawn(width, popup.height(), |f| {
            popup.render(f.area(), f.buffer_mut())
        })
    }

    #[test]
    fn lists_builtins_filtered_as_typed() {
        let catalog = Catalog::empty();
        let all = SlashPopup::for_draft("/", &commands(&catalog), None).unwrap();
        assert!(all.candidates().len() >= 6);
        let popup = SlashPopup::for_draft("/s", &commands(&catalog), None).unwrap();
        let names: Vec<&str> = popup.candidates().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["skills", "skill", "status"]);
        let exact = SlashPopup::for_draft("/skill", &commands(&catalog), None).unwrap();
        assert_eq!(
            exact.complete("/skill"),
            None,
            "an exact name is selected, not /skills"
        );
        assert_snapshot!(draw(&popup, 60));
    }

    #[test]
    fn lists_skills_with_argument_hints() {
        let (_dir, catalog) = crate::tui::test_support::catalog_with_skill();
        let popup = SlashPopup::for_draft("/go", &commands(&catalog), None).unwrap();
        assert_eq!(popup.candidates()[0].hint.as_deref(), Some("[goal] [file]"));
        assert_snapshot!(draw(&popup, 70));
        let skill = SlashPopup::for_draft("/skill g", &commands(&catalog), None).unwrap();
        assert_eq!(skill.candidates()[0].name, "skill go-refactor");
    }

    #[test]
    fn only_builtins_without_arguments_run_on_completion() {
        for name in NO_ARGS {
            assert!(crate::protocol::is_builtin(name), "{name} is a built-in");
        }
        for takes_arguments in ["skill", "compact", "resume", "export", "model"] {
            assert!(crate::protocol::is_builtin(takes_arguments));
            assert!(!NO_ARGS.contains(&takes_arguments), "{takes_arguments}");
        }
        let catalog = Catalog::empty();
        let popup = SlashPopup::for_draft("/res", &commands(&catalog), None).unwrap();
        assert_eq!(
            popup.complete("/res"),
            Some(Completion {
                text: "/resume ".into(),
                complete: false
            })
        );
    }

    #[test]
    fn hidden_when_not_a_command_name() {
        let catalog = Catalog::empty();
        assert!(SlashPopup::for_draft("hello", &commands(&catalog), None).is_none());
        assert!(SlashPopup::for_draft("/help me", &commands(&catalog), None).is_none());
        assert!(SlashPopup::for_draft("/zzz", &commands(&catalog), None).is_none());
    }

    #[test]
    fn completion_and_selection() {
        let catalog = Catalog::empty();
        let mut popup = SlashPopup::for_draft("/", &commands(&catalog), None).unwrap();
        let first = popup.complete("/").unwrap();
        assert_eq!(
            first,
            Completion {
                text: "/help".into(),
                complete: true
            }
        );
        popup.down();
        popup.down();
        let third = popup.candidates()[2].name.clone();
        let kept = SlashPopup::for_draft("/", &commands(&catalog), Some(&popup)).unwrap();
        assert_eq!(kept.candidates()[kept.selected].name, third);
        popup.up();
        popup.up();
        popup.up();
        assert_eq!(popup.selected, popup.candidates().len() - 1, "wraps");
        let model = SlashPopup::for_draft("/mod", &commands(&catalog), None).unwrap();
        assert_eq!(
            model.complete("/mod"),
            Some(Completion {
                text: "/model ".into(),
                complete: false
            })
        );
        assert_eq!(
            model.complete("/model"),
            None,
            "typed in full: nothing to complete"
        );
    }
}
