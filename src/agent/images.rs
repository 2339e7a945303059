//! Images into the conversation: whether the model in use takes them (`images` of its
//! provider) and how large (`max_image_bytes`), the images a frontend hands over with a
//! message (`Op::UserInput`'s `images`: files the user named, bytes they pasted) read,
//! checked and numbered after the message's mentioned ones, and every image stored once
//! in the session's store before the message that refers to it is recorded. It must not
//! know the wire, terminals or how a mention is judged.

use crate::images::{Image, ImageIntake, ImageRef, ImageStore};
use crate::protocol::{ImageInput, TurnOutcome};

use super::turn::{Attached, SessionState, TurnContext, internal_failure, usage_failure};

/// What the model in use may be sent.
pub(super) fn intake(ctx: &TurnContext) -> ImageIntake {
    ctx.setup.image_intake()
}

impl super::AgentSetup {
    /// What the model in use may be sent.
    pub fn image_intake(&self) -> ImageIntake {
        if self.client.config().images.sends_images() {
            ImageIntake::Accept {
                max_bytes: self.tool_limits.max_image_bytes,
            }
        } else {
            ImageIntake::Refuse
        }
    }
}

/// Stores `images`; the message's error when one cannot be.
pub(super) fn store_all(store: &ImageStore, images: &[Image]) -> Result<Vec<ImageRef>, String> {
    images
        .iter()
        .map(|image| store.put(image).map_err(|e| e.to_string()))
        .collect()
}

/// `attached` with the images the user gave besides the text: each read (a file
/// relative to the project) and checked like a mentioned one, stored, and named in the
/// text as `[image #N: name]`. A model that takes no images refuses them all; nothing
/// is sent.
pub(super) async fn add_given(
    state: &SessionState,
    ctx: &TurnContext,
    mut attached: Attached,
    given: Vec<ImageInput>,
) -> Result<Attached, TurnOutcome> {
    if given.is_empty() {
        return Ok(attached);
    }
    let max_bytes = match intake(ctx) {
        ImageIntake::Accept { max_bytes } => max_bytes,
        ImageIntake::Refuse => return Err(usage_failure(crate::images::IMAGES_OFF.to_string())),
    };
    let workdir = ctx.setup.workdir.clone();
    let store = state.images.clone();
    let read = tokio::task::spawn_blocking(move || {
        let images = given
            .into_iter()
            .map(|input| read_given(input, &workdir, max_bytes))
            .collect::<Result<Vec<Image>, String>>()?;
        let refs = store_all(&store, &images)?;
        Ok::<_, String>(refs)
    })
    .await;
    let refs = match read {
        Ok(Ok(refs)) => refs,
        Ok(Err(message)) => return Err(usage_failure(message)),
        Err(e) => return Err(internal_failure(e)),
    };
    let first = attached.images.len() + 1;
    let names: Vec<String> = refs
        .iter()
        .enumerate()
        .map(|(i, image)| format!("[image #{}: {}]", first + i, image.name))
        .collect();
    if !attached.text.is_empty() {
        attached.text.push_str("\n\n");
    }
    attached.text.push_str(&names.join("\n"));
    attached.images.extend(refs);
    Ok(attached)
}

/// Sends the images tools returned (`view_image`) as one user message right after the
/// batch's results: a tool result cannot carry an image on the Chat wire for most
/// servers. The message says which call each came from. `false` when one could not be
/// stored (then none is sent).
pub(super) async fn show_to_model(state: &mut SessionState, shown: Vec<(String, Image)>) -> bool {
    let store = state.images.clone();
    let (ids, images): (Vec<String>, Vec<Image>) = shown.into_iter().unzip();
    let stored = tokio::task::spawn_blocking(move || store_all(&store, &images)).await;
    let Ok(Ok(refs)) = stored else {
        return false;
    };
    let lines: Vec<String> = ids
        .iter()
        .zip(&refs)
        .enumerate()
        .map(|(i, (id, image))| {
            format!(
                "[image #{}: {} ({} bytes), returned by tool call {id}]",
                i + 1,
                image.name,
                image.size
            )
        })
        .collect();
    state.conversation.push(crate::llm::Message::User {
        content: lines.join("\n"),
        images: refs,
    });
    true
}

/// One given image, read and checked.
fn read_given(
    input: ImageInput,
    workdir: &std::path::Path,
    max_bytes: u64,
) -> Result<Image, String> {
    match input {
        ImageInput::File { path } => {
            let full = workdir.join(&path);
            // The user named this file themselves: links are followed, to the real file,
            // which is then read without following any.
            let real = std::fs::canonicalize(&full)
                .map_err(|e| format!("image {}: {e}", path.display()))?;
            crate::images::read_file(&real, max_bytes)
                .map_err(|e| format!("image {}: {e}", path.display()))
        }
        ImageInput::Bytes { bytes, name } => {
            Image::from_bytes(bytes, &name, max_bytes).map_err(|e| format!("image {name}: {e}"))
        }
    }
}

/// The bytes of the images the conversation refers to, read back from the store off
/// the async threads (nothing is read when there are none).
pub(super) async fn read_back(state: &SessionState) -> crate::images::ImageData {
    let refs: Vec<crate::images::ImageRef> = state
        .conversation
        .messages()
        .iter()
        .flat_map(crate::llm::Message::images)
        .cloned()
        .collect();
    if refs.is_empty() {
        return crate::images::ImageData::default();
    }
    let store = state.images.clone();
    tokio::task::spawn_blocking(move || store.load(&refs))
        .await
        .unwrap_or_default()
}
