//! Images in the draft: a pasted image path and Ctrl+V's clipboard image stand as
//! `[image #N]` chips that move and delete as one piece, go with the message through
//! `Op::with_images`, number from 1 in each message, and stay text with a note when
//! the model takes no images.

use super::*;
use crate::images::ImageIntake;
use crate::protocol::ImageInput;
use crate::tui::image_paste::Clipboard;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-one";
const GIF: &[u8] = b"GIF89a-two";

/// A harness whose project folder holds `shot.png`, `anim.gif` and `notes.txt`.
fn project(images: ImageIntake) -> (Harness, PathBuf) {
    let (dir, catalog) = catalog_with_skill();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("shot.png"), PNG).unwrap();
    std::fs::write(work.join("anim.gif"), GIF).unwrap();
    std::fs::write(work.join("notes.txt"), "just text").unwrap();
    let mut info = session_info(catalog);
    info.workdir = work.clone();
    info.images = images;
    (Harness::with(info, Some(dir)), work)
}

fn accepting() -> (Harness, PathBuf) {
    project(ImageIntake::Accept { max_bytes: 1 << 20 })
}

fn bytes(input: &ImageInput) -> &[u8] {
    match input {
        ImageInput::Bytes { bytes, .. } => bytes,
        ImageInput::File { .. } => panic!("a chip holds bytes"),
    }
}

/// The one user message sent, as (text, images).
fn one_message(ops: Vec<Op>) -> (String, Vec<ImageInput>) {
    match ops.as_slice() {
        [Op::UserInput { text, images, .. }] => (text.clone(), images.clone()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_pasted_image_path_is_a_chip_sent_with_the_message() {
    let (mut h, work) = accepting();
    h.typ("see ");
    h.app
        .on_paste(&format!("'{}'", work.join("shot.png").display()));
    h.typ(" and ");
    h.app
        .on_paste(&format!("file://{}", work.join("anim.gif").display()));
    let screen = h.screen(60, 8);
    assert_shows(&screen, &["see [image #1] and [image #2]"]);
    // The path itself is nowhere in the draft.
    assert!(!screen.contains("shot.png"), "{screen}");
    h.key(KeyCode::Enter);
    let (text, images) = one_message(h.ops());
    assert_eq!(text, "see [image #1] and [image #2]");
    assert_eq!(images.len(), 2);
    assert_eq!(bytes(&images[0]), PNG);
    assert_eq!(bytes(&images[1]), GIF);
    // The next message numbers from 1 again and carries no image of the last one.
    h.app.on_paste(&work.join("anim.gif").display().to_string());
    assert_shows(&h.screen(60, 8), &["› [image #1]"]);
    h.key(KeyCode::Enter);
    let (text, images) = one_message(h.ops());
    assert_eq!(text, "[image #1]");
    assert_eq!(images.len(), 1);
    assert_eq!(bytes(&images[0]), GIF);
}

#[test]
fn a_chip_moves_and_deletes_as_one_piece_and_takes_its_image_with_it() {
    let (mut h, work) = accepting();
    h.typ("a ");
    h.app.on_paste(&work.join("shot.png").display().to_string());
    h.typ("b");
    h.app.on_paste(&work.join("anim.gif").display().to_string());
    assert_shows(&h.screen(60, 8), &["a [image #1]b[image #2]"]);
    // Backspace at the end of a chip takes all of it, and its image.
    h.key(KeyCode::Backspace);
    assert_shows(&h.screen(60, 8), &["a [image #1]b"]);
    assert!(!h.screen(60, 8).contains("[image #2]"));
    // Left from after "b" and once more jumps over the whole chip.
    h.key(KeyCode::Left);
    h.key(KeyCode::Left);
    h.key(KeyCode::Char('X'));
    assert_shows(&h.screen(60, 8), &["a X[image #1]b"]);
    // Delete in front of it takes it whole.
    h.key(KeyCode::Delete);
    assert_shows(&h.screen(60, 8), &["a Xb"]);
    h.key(KeyCode::Enter);
    let (text, images) = one_message(h.ops());
    assert_eq!(text, "a Xb");
    assert!(images.is_empty(), "{images:?}");
}

#[test]
fn what_is_no_image_stays_text() {
    let (mut h, work) = accepting();
    for text in [
        work.join("notes.txt").display().to_string(),
        work.join("missing.png").display().to_string(),
        format!("look at {}", work.join("shot.png").display()),
    ] {
        h.app.on_paste(&text);
        assert_shows(&h.screen(120, 8), &[&text]);
        h.key(KeyCode::Enter);
        let (sent, images) = one_message(h.ops());
        assert_eq!(sent, text);
        assert!(images.is_empty());
    }
}

#[test]
fn with_images_off_a_pasted_image_stays_text_with_a_note() {
    let (mut h, work) = project(ImageIntake::Refuse);
    let path = work.join("shot.png").display().to_string();
    h.app.on_paste(&path);
    let screen = h.screen(120, 10);
    assert_shows(
        &screen,
        &[&path, "images are off for this model (images = false)"],
    );
    assert!(!screen.contains("[image #1]"), "{screen}");
    // Ctrl+V does not even look at the clipboard.
    assert_eq!(h.ctrl('v'), Action::None);
    assert_shows(&h.screen(120, 10), &["nothing was pasted"]);
    h.key(KeyCode::Enter);
    let (sent, images) = one_message(h.ops());
    assert_eq!(sent, path);
    assert!(images.is_empty());
}

#[test]
fn ctrl_v_puts_the_clipboard_image_in_the_draft_or_says_why_not_once() {
    let (mut h, _work) = accepting();
    h.typ("here: ");
    assert_eq!(h.ctrl('v'), Action::PasteClipboardImage);
    h.app.on_clipboard(Clipboard::Image {
        image: ImageInput::Bytes {
            bytes: PNG.to_vec(),
            name: "clipboard".into(),
        },
    });
    assert_shows(&h.screen(60, 8), &["here: [image #1]"]);
    // No tool installed: said once, however often Ctrl+V is pressed.
    h.app.on_clipboard(Clipboard::NoTool);
    h.app.on_clipboard(Clipboard::NoTool);
    let screen = h.screen(120, 12);
    assert_eq!(screen.matches("install wl-paste").count(), 1, "{screen}");
    h.app.on_clipboard(Clipboard::NoImage {
        reason: "xclip: no image on the clipboard".into(),
    });
    assert_shows(
        &h.screen(120, 12),
        &["No clipboard image (xclip: no image on the clipboard)"],
    );
    h.key(KeyCode::Enter);
    let (text, images) = one_message(h.ops());
    assert_eq!(text, "here: [image #1]");
    assert_eq!(images.len(), 1);
    assert_eq!(bytes(&images[0]), PNG);
}
