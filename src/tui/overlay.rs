//! What sits on top of the composer, and the one order in which it is seen: Ctrl+T's
//! view of the whole transcript (over everything), a switch to full-auto waiting for
//! its yes, the approval questions, the resume picker, the rewind picker, the history
//! search, and the popups (`/` commands or the `@` picker). Several can be open at once
//! (the picker stays under an approval that arrives); [`Overlay::focus`] says which one
//! takes the keys and [`Overlay::shown`] which one is drawn, both from [`Overlay::layers`],
//! where the priority is written once. The app's keys, pastes, Ctrl+C and drawing all
//! ask it.
//!
//! It owns these states and their drawing; it must not know what the agent does with an
//! answer, nor how the composer edits text.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::approval::ApprovalOverlay;
use super::history_search::HistorySearch;
use super::mention_popup::MentionPopup;
use super::picker::SessionPicker;
use super::popup::SlashPopup;
use super::rewind::RewindPicker;
use super::transcript_view::TranscriptView;

/// One state on top of the composer, or the composer itself when nothing is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Ctrl+T's view of the whole transcript, over everything (the full height).
    Transcript,
    /// A switch to full-auto waiting for y/n (shown as the status line's hint).
    ModeConfirm,
    /// Approval questions, in the composer's place.
    Approval,
    /// The `/resume` picker, in the composer's place.
    Picker,
    /// The rewind picker (Esc Esc), in the composer's place.
    Rewind,
    /// Ctrl+R's history search, in the composer's place.
    Search,
    /// A popup under the composer (`/` commands or the `@` picker).
    Popup,
    /// Nothing: the composer has the keys.
    Composer,
}

/// The popup under the composer: at most one at a time.
#[derive(Debug)]
pub enum Popup {
    /// Built-ins, skills and MCP prompts matching the `/` command being typed.
    Slash(SlashPopup),
    /// Files matching the `@` mention being typed.
    Mention(MentionPopup),
}

/// Every state on top of the composer.
#[derive(Debug, Default)]
pub struct Overlay {
    /// Ctrl+T's view of the whole transcript, while open.
    pub transcript: Option<TranscriptView>,
    /// A switch to full-auto waiting for the user's yes, with its question.
    pub mode_confirm: Option<String>,
    /// The approval questions, answered in order.
    pub approvals: ApprovalOverlay,
    /// The saved sessions to choose from, while `/resume` shows them.
    pub picker: Option<SessionPicker>,
    /// The earlier messages to rewind to, while Esc Esc shows them.
    pub rewind: Option<RewindPicker>,
    /// Ctrl+R's search through the input history, in the composer's place.
    pub search: Option<HistorySearch>,
    /// The popup under the composer.
    pub popup: Option<Popup>,
    /// The mention (where its `@` stands) whose picker Esc closed.
    pub mention_dismissed: Option<usize>,
}

impl Overlay {
    /// The layers open now, the one with the user's attention first, ending with the
    /// composer: the priority order, written once.
    pub fn layers(&self) -> impl Iterator<Item = Layer> {
        [
            (self.transcript.is_some(), Layer::Transcript),
            (self.mode_confirm.is_some(), Layer::ModeConfirm),
            (self.approvals.is_active(), Layer::Approval),
            (self.picker.is_some(), Layer::Picker),
            (self.rewind.is_some(), Layer::Rewind),
            (self.search.is_some(), Layer::Search),
            (self.popup.is_some(), Layer::Popup),
            (true, Layer::Composer),
        ]
        .into_iter()
        .filter_map(|(open, layer)| open.then_some(layer))
    }

    /// The layer that takes the next key.
    pub fn focus(&self) -> Layer {
        self.layers().next().unwrap_or(Layer::Composer)
    }

    /// The layer drawn over or under the composer (and that takes pastes and Ctrl+C):
    /// the first after the mode switch's question, which lives in the status line.
    pub fn shown(&self) -> Layer {
        self.layers()
            .find(|layer| *layer != Layer::ModeConfirm)
            .unwrap_or(Layer::Composer)
    }

    /// The question of a pending switch to full-auto, for the status line.
    pub fn hint(&self) -> Option<&str> {
        self.mode_confirm.as_deref()
    }

    /// The `@` picker, when it is the popup.
    pub fn mention(&self) -> Option<&MentionPopup> {
        match &self.popup {
            Some(Popup::Mention(mention)) => Some(mention),
            _ => None,
        }
    }

    /// The `@` picker, when it is the popup, to change.
    pub fn mention_mut(&mut self) -> Option<&mut MentionPopup> {
        match &mut self.popup {
            Some(Popup::Mention(mention)) => Some(mention),
            _ => None,
        }
    }

    /// The `/` popup, when it is the popup.
    pub fn slash(&self) -> Option<&SlashPopup> {
        match &self.popup {
            Some(Popup::Slash(slash)) => Some(slash),
            _ => None,
        }
    }

    /// The `/` popup, when it is the popup, to change.
    pub fn slash_mut(&mut self) -> Option<&mut SlashPopup> {
        match &mut self.popup {
            Some(Popup::Slash(slash)) => Some(slash),
            _ => None,
        }
    }

    /// Rows of the layer drawn in the composer's place (0: the composer is drawn).
    pub fn covering_height(&self, width: u16) -> u16 {
        match self.shown() {
            Layer::Approval => self.approvals.height(width),
            Layer::Picker => self.picker.as_ref().map_or(0, SessionPicker::height),
            Layer::Rewind => self.rewind.as_ref().map_or(0, RewindPicker::height),
            Layer::Search => self.search.as_ref().map_or(0, |s| s.height(width)),
            Layer::Transcript | Layer::ModeConfirm | Layer::Popup | Layer::Composer => 0,
        }
    }

    /// Rows of the popup under the composer (0 when none is drawn).
    pub fn popup_height(&self) -> u16 {
        match (self.shown(), &self.popup) {
            (Layer::Popup, Some(Popup::Slash(slash))) => slash.height(),
            (Layer::Popup, Some(Popup::Mention(mention))) => mention.height(),
            _ => 0,
        }
    }

    /// Draws the layer that covers the composer into `area`; returns where the cursor
    /// goes, if that layer has one.
    pub fn render_covering(&mut self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        match self.shown() {
            Layer::Approval => self.approvals.render(area, buf),
            Layer::Picker => {
                if let Some(picker) = &mut self.picker {
                    picker.render(area, buf);
                }
                None
            }
            Layer::Rewind => {
                if let Some(rewind) = &mut self.rewind {
                    rewind.render(area, buf);
                }
                None
            }
            Layer::Search => self.search.as_ref().and_then(|s| s.render(area, buf)),
            Layer::Transcript | Layer::ModeConfirm | Layer::Popup | Layer::Composer => None,
        }
    }

    /// Draws the popup under the composer into `area`.
    pub fn render_popup(&self, area: Rect, buf: &mut Buffer) {
        match &self.popup {
            Some(Popup::Slash(slash)) => slash.render(area, buf),
            Some(Popup::Mention(mention)) => mention.render(area, buf),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picker() -> SessionPicker {
        SessionPicker::new(vec![crate::protocol::SessionListing {
            id: "20260101-000000-aaaaaa".into(),
            modified_ms: 0,
            turns: 1,
            model: "m".into(),
            first_prompt: None,
        }])
        .unwrap()
    }

    #[test]
    fn the_first_open_layer_has_the_keys_and_the_question_is_never_drawn() {
        let mut overlay = Overlay::default();
        assert_eq!(overlay.focus(), Layer::Composer);
        overlay.popup = Some(Popup::Slash(
            SlashPopup::for_draft("/", &crate::protocol::SlashCommands::default(), None).unwrap(),
        ));
        assert_eq!(
            (overlay.focus(), overlay.shown()),
            (Layer::Popup, Layer::Popup)
        );
        overlay.search = Some(HistorySearch::new(&[]));
        assert_eq!(
            (overlay.focus(), overlay.shown()),
            (Layer::Search, Layer::Search)
        );
        assert_eq!(overlay.popup_height(), 0, "a covered popup is not drawn");
        overlay.picker = Some(picker());
        assert_eq!(overlay.focus(), Layer::Picker);
        overlay.mode_confirm = Some("Full-auto? y/n".into());
        assert_eq!(
            (overlay.focus(), overlay.shown()),
            (Layer::ModeConfirm, Layer::Picker)
        );
        assert_eq!(
            overlay.layers().collect::<Vec<_>>(),
            [
                Layer::ModeConfirm,
                Layer::Picker,
                Layer::Search,
                Layer::Popup,
                Layer::Composer
            ]
        );
    }
}
