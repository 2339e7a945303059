//! The approval overlay: shows what a tool call wants to do (the command and where it
//! runs, or the file and the diff of an edit), why it is asked (a rule, a destructive
//! command), and takes the answer: y (once), a (add the offered rules for this
//! session), p (add them to the project's rule file), n (deny, then an optional reason
//! for the model), Esc (deny and interrupt the turn). The footer names the exact rules
//! an "always" adds, or why none is offered. Requests that arrive while one is open
//! wait in a queue.
//!
//! It knows nothing about the agent: it turns keys into an [`ApprovalAnswer`] that the
//! app sends on.

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Padding, Paragraph, Widget, Wrap};

use super::cells::diff_lines;
use super::wrap::{sanitize, wrap_lines};
use crate::protocol::{
    ApprovalAsk, ApprovalDecision, ApprovalMode, ApprovalRequestKind, AskBecause, Location,
    McpAction, Offer,
};

/// What an answer does to the running turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAnswer {
    /// The turn goes on.
    Continue,
    /// The turn is interrupted too (Esc).
    Interrupt,
}

/// The user's answer to the request on top.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalAnswer {
    /// The call answered.
    pub call_id: String,
    /// The decision.
    pub decision: ApprovalDecision,
    /// What happens to the turn (Esc also interrupts it).
    pub turn: AfterAnswer,
}

/// The queue of requests and the state of the one shown.
#[derive(Debug, Default)]
pub struct ApprovalOverlay {
    queue: VecDeque<ApprovalAsk>,
    /// `Some` while the user types a reason for denying.
    reason: Option<String>,
}

impl ApprovalOverlay {
    /// Queues a request.
    pub fn push(&mut self, request: ApprovalAsk) {
        self.queue.push_back(request);
    }

    /// True when a request is shown.
    pub fn is_active(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Drops every request (the turn ended or was interrupted).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.reason = None;
    }

    /// Adds pasted text to the reason being typed.
    pub fn paste(&mut self, text: &str) {
        if let Some(reason) = &mut self.reason {
            reason.push_str(&text.replace(['\r', '\n'], " "));
        }
    }

    fn answer(&mut self, decision: ApprovalDecision, turn: AfterAnswer) -> Option<ApprovalAnswer> {
        self.reason = None;
        let request = self.queue.pop_front()?;
        Some(ApprovalAnswer {
            call_id: request.call_id,
            decision,
            turn,
        })
    }

    /// Applies a key; returns the answer when the request is decided.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<ApprovalAnswer> {
        if let Some(reason) = &mut self.reason {
            match key.code {
                KeyCode::Enter => {
                    let text = reason.trim().to_string();
                    let reason = (!text.is_empty()).then_some(text);
                    return self.answer(ApprovalDecision::Deny { reason }, AfterAnswer::Continue);
                }
                KeyCode::Esc => {
                    return self.answer(
                        ApprovalDecision::Deny { reason: None },
                        AfterAnswer::Interrupt,
                    );
                }
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    reason.clear();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    reason.push(c);
                }
                _ => {}
            }
            return None;
        }
        if self.is_plan() {
            let approve = |mode| ApprovalDecision::ApprovePlan { mode };
            return match key.code {
                KeyCode::Char('y' | 'Y' | 'e' | 'E') => {
                    self.answer(approve(ApprovalMode::AutoEdit), AfterAnswer::Continue)
                }
                KeyCode::Char('s' | 'S') => {
                    self.answer(approve(ApprovalMode::Suggest), AfterAnswer::Continue)
                }
                KeyCode::Char('f' | 'F') => {
                    self.answer(approve(ApprovalMode::FullAuto), AfterAnswer::Continue)
                }
                KeyCode::Char('n' | 'N') => {
                    self.reason = Some(String::new());
                    None
                }
                KeyCode::Esc => self.answer(
                    ApprovalDecision::Deny { reason: None },
                    AfterAnswer::Interrupt,
                ),
                _ => None,
            };
        }
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => {
                self.answer(ApprovalDecision::Approve, AfterAnswer::Continue)
            }
            KeyCode::Char('a') | KeyCode::Char('A') if self.offers_rules() => {
                self.answer(ApprovalDecision::ApproveForSession, AfterAnswer::Continue)
            }
            KeyCode::Char('p') | KeyCode::Char('P') if self.offers_rules() => {
                self.answer(ApprovalDecision::ApproveForProject, AfterAnswer::Continue)
            }
            KeyCode::Char('n') | KeyCode::Char('N') => {
                self.reason = Some(String::new());
                None
            }
            KeyCode::Esc => self.answer(
                ApprovalDecision::Deny { reason: None },
                AfterAnswer::Interrupt,
            ),
            _ => None,
        }
    }

    /// Whether the request shown is a plan to approve (`exit_plan`).
    fn is_plan(&self) -> bool {
        self.queue
            .front()
            .is_some_and(|r| matches!(r.request, ApprovalRequestKind::Plan { .. }))
    }

    fn offers_rules(&self) -> bool {
        self.queue
            .front()
            .is_some_and(|r| matches!(r.offer, Offer::Rules { .. }))
    }

    fn body(&self, request: &ApprovalAsk) -> (String, Vec<Line<'static>>) {
        let (title, mut lines) = self.what(request);
        let warn = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
        if let Some(because) = &request.because {
            let why = match because {
                AskBecause::Rule { rule, source } => {
                    format!("asked because of the rule `ask {rule}` ({source})")
                }
                AskBecause::Destructive { what, .. } => format!("destructive: {what}"),
                AskBecause::Opaque { why }
                | AskBecause::Unconfined { why }
                | AskBecause::Hook { why } => {
                    format!("asked because {why}")
                }
            };
            lines.push(Line::styled(sanitize(&why), warn));
        }
        (title, lines)
    }

    fn what(&self, request: &ApprovalAsk) -> (String, Vec<Line<'static>>) {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let warn = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
        let dim = Style::new().fg(Color::DarkGray);
        match &request.request {
            ApprovalRequestKind::Command { command, cwd } => {
                let mut lines: Vec<Line<'static>> = sanitize(command)
                    .lines()
                    .enumerate()
                    .map(|(i, l)| {
                        let lead = if i == 0 { "$ " } else { "  " };
                        Line::from(vec![
                            Span::styled(lead, dim),
                            Span::styled(l.to_string(), bold),
                        ])
                    })
                    .collect();
                lines.push(Line::styled(format!("in {}", cwd.display()), dim));
                (format!(" Run this command? ({}) ", request.name), lines)
            }
            ApprovalRequestKind::Edit { diff, location, .. } => {
                let mut lines = vec![Line::from(vec![
                    Span::raw("edit "),
                    Span::styled(request.request.shown_path().unwrap_or_default(), bold),
                ])];
                lines.extend(through_link(&request.request, warn));
                if *location == Location::Outside {
                    lines.push(Line::styled("this file is outside the project", warn));
                }
                match diff {
                    Some(diff) => lines.extend(diff_lines(diff, usize::MAX)),
                    None => lines.push(Line::styled("(no diff available)", dim)),
                }
                (format!(" Apply this edit? ({}) ", request.name), lines)
            }
            ApprovalRequestKind::ReadOutside { .. } => {
                let mut lines = vec![Line::from(vec![
                    Span::raw("read "),
                    Span::styled(request.request.shown_path().unwrap_or_default(), bold),
                ])];
                lines.extend(through_link(&request.request, warn));
                lines.push(Line::styled("this path is outside the project", warn));
                (
                    format!(" Read outside the project? ({}) ", request.name),
                    lines,
                )
            }
            ApprovalRequestKind::Read { .. } => {
                let mut lines = vec![Line::from(vec![
                    Span::raw("read "),
                    Span::styled(request.request.shown_path().unwrap_or_default(), bold),
                ])];
                lines.extend(through_link(&request.request, warn));
                (format!(" Read this file? ({}) ", request.name), lines)
            }
            ApprovalRequestKind::Mcp {
                server,
                tool,
                action,
                arguments,
            } => {
                let title = match action {
                    McpAction::CallTool => " Call this MCP tool? ",
                    McpAction::ReadResource => " Read this MCP server's resources? ",
                };
                let mut lines = vec![Line::from(vec![
                    Span::raw("server "),
                    Span::styled(sanitize(server), bold),
                    Span::raw("  tool "),
                    Span::styled(sanitize(tool), bold),
                ])];
                lines.extend(
                    sanitize(arguments)
                        .lines()
                        .map(|l| Line::styled(l.to_string(), dim)),
                );
                (title.to_string(), lines)
            }
            ApprovalRequestKind::Fetch { url, domain } => {
                let lines = vec![
                    Line::from(vec![
                        Span::raw("host "),
                        Span::styled(sanitize(domain), bold),
                    ]),
                    Line::styled(sanitize(url), dim),
                ];
                (format!(" Fetch this web page? ({}) ", request.name), lines)
            }
            ApprovalRequestKind::Search { query, backend } => {
                let lines = vec![
                    Line::from(vec![
                        Span::raw("query "),
                        Span::styled(sanitize(query), bold),
                    ]),
                    Line::styled(format!("through {}", sanitize(backend)), dim),
                ];
                (format!(" Search the web? ({}) ", request.name), lines)
            }
            ApprovalRequestKind::Plan { file, text } => {
                let mut lines = vec![Line::styled(format!("{}", file.display()), dim)];
                lines.extend(sanitize(text).lines().map(|l| Line::raw(l.to_string())));
                (" Approve this plan? ".to_string(), lines)
            }
        }
    }

    fn footer(&self, offer: &Offer) -> Line<'static> {
        let key = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
        match &self.reason {
            Some(reason) if self.is_plan() => Line::from(vec![
                Span::styled("What to change (Enter to keep planning): ", key),
                Span::raw(reason.clone()),
            ]),
            Some(reason) => Line::from(vec![
                Span::styled("Reason for the model (optional, Enter to deny): ", key),
                Span::raw(reason.clone()),
            ]),
            None if self.is_plan() => Line::from(vec![
                Span::styled("y", key),
                Span::raw(" approve, then auto-edit  "),
                Span::styled("s", key),
                Span::raw(" then suggest  "),
                Span::styled("f", key),
                Span::raw(" then full-auto  "),
                Span::styled("n", key),
                Span::raw(" keep planning  "),
                Span::styled("esc", key),
                Span::raw(" stop"),
            ]),
            None => {
                let dim = Style::new().fg(Color::DarkGray);
                let mut spans = vec![Span::styled("y", key), Span::raw(" yes once  ")];
                match offer {
                    Offer::Rules { rules } => {
                        let rules = sanitize(&rules.join(", "));
                        spans.extend([
                            Span::styled("a", key),
                            Span::raw(format!(" this session: {rules}  ")),
                            Span::styled("p", key),
                            Span::raw(" this project (saved)  "),
                        ]);
                    }
                    Offer::OnceOnly { why } => {
                        spans.push(Span::styled(
                            format!("(no \"always\": {})  ", sanitize(why)),
                            dim,
                        ));
                    }
                }
                spans.extend([
                    Span::styled("n", key),
                    Span::raw(" no  "),
                    Span::styled("esc", key),
                    Span::raw(" no and stop"),
                ]);
                Line::from(spans)
            }
        }
    }

    fn all_lines(&self, width: u16) -> Option<(String, Vec<Line<'static>>, Line<'static>)> {
        let request = self.queue.front()?;
        let (title, body) = self.body(request);
        let inner = width.saturating_sub(4).max(1);
        Some((title, wrap_lines(&body, inner), self.footer(&request.offer)))
    }

    /// Rows wanted at this width (borders included), before any cap.
    pub fn height(&self, width: u16) -> u16 {
        match self.all_lines(width) {
            Some((_, body, footer)) => {
                let footer_rows = wrap_lines(&[footer], width.saturating_sub(4).max(1)).len();
                (body.len() + footer_rows + 3) as u16
            }
            None => 0,
        }
    }

    /// Draws the overlay in `area`, cutting the body to fit; returns the cursor position
    /// while a reason is typed.
    pub fn render(&self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        let (title, mut body, footer) = self.all_lines(area.width)?;
        let inner_width = area.width.saturating_sub(4).max(1);
        let footer = wrap_lines(&[footer], inner_width);
        let room = usize::from(area.height.saturating_sub(3)).saturating_sub(footer.len());
        if body.len() > room {
            let hidden = body.len() - room.saturating_sub(1);
            body.truncate(room.saturating_sub(1));
            body.push(Line::styled(
                format!("… {hidden} more lines"),
                Style::new().fg(Color::DarkGray),
            ));
        }
        let mut lines = body;
        lines.push(Line::raw(""));
        let footer_top = lines.len();
        lines.extend(footer);
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .padding(Padding::horizontal(1))
            .border_style(Style::new().fg(Color::Magenta))
            .title(Span::styled(
                title,
                Style::new().add_modifier(Modifier::BOLD),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new(lines.clone())
            .wrap(Wrap { trim: false })
            .render(inner, buf);
        self.reason.as_ref().map(|_| {
            let last = lines.len().saturating_sub(1);
            let width = super::wrap::line_width(&lines[last]) as u16 % inner.width.max(1);
            let y = inner.y + (last.max(footer_top) as u16).min(inner.height.saturating_sub(1));
            Position::new(inner.x + width, y)
        })
    }
}

/// A warning line when the path as written goes through a symbolic link (the request
/// names the real file after `->`).
fn through_link(request: &ApprovalRequestKind, warn: Style) -> Option<Line<'static>> {
    match request {
        ApprovalRequestKind::Edit { via: Some(_), .. }
        | ApprovalRequestKind::Read { via: Some(_), .. }
        | ApprovalRequestKind::ReadOutside { via: Some(_), .. } => Some(Line::styled(
            "the path written is a symbolic link: this is the file it reaches",
            warn,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::drawn;
    use insta::assert_snapshot;
    use std::path::PathBuf;

    fn edit() -> ApprovalAsk {
        ApprovalAsk {
            call_id: "call_1".into(),
            name: "edit_file".into(),
            request: ApprovalRequestKind::Edit {
                path: PathBuf::from("main.go"),
                via: None,
                diff: Some(
                    "--- a/main.go\n+++ b/main.go\n@@ -1,2 +1,2 @@\n package main\n-var x = 1\n+var count = 1\n"
                        .into(),
                ),
                location: Location::Inside,
            },
            because: None,
            offer: Offer::Rules {
                rules: vec!["edit(**)".into()],
            },
        }
    }

    /// A `bash` call of `command` in /work/demo.
    fn bash(
        call_id: &str,
        command: &str,
        because: Option<AskBecause>,
        offer: Offer,
    ) -> ApprovalAsk {
        ApprovalAsk {
            call_id: call_id.into(),
            name: "bash".into(),
            request: ApprovalRequestKind::Command {
                command: command.into(),
                cwd: PathBuf::from("/work/demo"),
            },
            because,
            offer,
        }
    }

    fn command() -> ApprovalAsk {
        let offer = Offer::Rules {
            rules: vec!["bash(cargo test:*)".into()],
        };
        bash("call_2", "cargo test --all", None, offer)
    }

    fn destructive() -> ApprovalAsk {
        let because = AskBecause::Destructive {
            what: "`git reset --hard` discards uncommitted changes".into(),
            exact_rule: "bash(git reset --hard)".into(),
        };
        let offer = Offer::OnceOnly {
            why: "it uses command substitution `$(…)`".into(),
        };
        bash("call_3", "echo $(git reset --hard)", Some(because), offer)
    }

    fn draw(overlay: &ApprovalOverlay, width: u16, height: u16) -> String {
        drawn(width, height, |f| {
            overlay.render(f.area(), f.buffer_mut());
        })
    }

    #[test]
    fn edit_overlay_shows_the_diff() {
        let mut o = ApprovalOverlay::default();
        o.push(edit());
        assert_eq!(o.height(70), 12);
        assert_snapshot!(draw(&o, 70, 12));
    }

    /// A path through a symlink: the question names both, and says which is real.
    #[test]
    fn a_path_through_a_link_names_the_written_path_and_the_real_file() {
        let mut o = ApprovalOverlay::default();
        let mut ask = edit();
        ask.request = ApprovalRequestKind::Edit {
            path: PathBuf::from("/p/.git/config"),
            via: Some(PathBuf::from("/p/docs/settings.ini")),
            diff: None,
            location: Location::Inside,
        };
        o.push(ask);
        let mut read = edit();
        read.call_id = "mention-1".into();
        read.name = "@notes.txt".into();
        read.request = ApprovalRequestKind::Read {
            path: PathBuf::from("/p/.env"),
            via: Some(PathBuf::from("/p/notes.txt")),
        };
        o.push(read);
        let screen = draw(&o, 80, o.height(80));
        assert!(
            screen.contains("edit /p/docs/settings.ini -> /p/.git/config"),
            "{screen}"
        );
        assert!(
            screen.contains("the path written is a symbolic link"),
            "{screen}"
        );
        o.handle_key(KeyEvent::from(KeyCode::Char('y')));
        let screen = draw(&o, 80, o.height(80));
        assert!(screen.contains("read /p/notes.txt -> /p/.env"), "{screen}");
        assert!(screen.contains("(@notes.txt)"), "{screen}");
    }

    #[test]
    fn command_overlay() {
        let mut o = ApprovalOverlay::default();
        o.push(command());
        assert_snapshot!(draw(&o, 70, o.height(70)));
    }

    #[test]
    fn long_diff_is_cut_to_the_area() {
        let mut o = ApprovalOverlay::default();
        o.push(edit());
        let screen = draw(&o, 70, 8);
        assert!(screen.contains("more lines"), "{screen}");
        assert!(screen.contains("y yes"), "{screen}");
    }

    #[test]
    fn keys_decide() {
        let mut o = ApprovalOverlay::default();
        o.push(edit());
        o.push(command());
        o.push(edit());
        let yes = o.handle_key(KeyEvent::from(KeyCode::Char('y'))).unwrap();
        assert_eq!(yes.decision, ApprovalDecision::Approve);
        assert_eq!(yes.call_id, "call_1");
        let always = o.handle_key(KeyEvent::from(KeyCode::Char('a'))).unwrap();
        assert_eq!(always.decision, ApprovalDecision::ApproveForSession);
        assert_eq!(always.call_id, "call_2");
        assert!(o.handle_key(KeyEvent::from(KeyCode::Char('n'))).is_none());
        for c in "not now".chars() {
            assert!(o.handle_key(KeyEvent::from(KeyCode::Char(c))).is_none());
        }
        let screen = draw(&o, 70, 12);
        assert!(screen.contains("Enter to deny): not now"), "{screen}");
        let no = o.handle_key(KeyEvent::from(KeyCode::Enter)).unwrap();
        assert_eq!(
            no.decision,
            ApprovalDecision::Deny {
                reason: Some("not now".into())
            }
        );
        assert!(!o.is_active());
    }

    #[test]
    fn the_footer_names_the_scope_or_why_there_is_none() {
        let mut o = ApprovalOverlay::default();
        o.push(destructive());
        let screen = draw(&o, 90, o.height(90));
        assert_snapshot!(screen);
        assert!(
            screen.contains("destructive: `git reset --hard`"),
            "{screen}"
        );
        // No "always" is offered: a and p do nothing.
        assert!(o.handle_key(KeyEvent::from(KeyCode::Char('a'))).is_none());
        assert!(o.handle_key(KeyEvent::from(KeyCode::Char('p'))).is_none());
        o.clear();
        o.push(command());
        let project = o.handle_key(KeyEvent::from(KeyCode::Char('p'))).unwrap();
        assert_eq!(project.decision, ApprovalDecision::ApproveForProject);
    }

    #[test]
    fn esc_denies_and_interrupts() {
        let mut o = ApprovalOverlay::default();
        o.push(command());
        let answer = o.handle_key(KeyEvent::from(KeyCode::Esc)).unwrap();
        assert_eq!(answer.decision, ApprovalDecision::Deny { reason: None });
        assert_eq!(answer.turn, AfterAnswer::Interrupt);
    }
}
