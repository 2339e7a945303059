//! Images in the TUI on the real binary: a pasted image path and Ctrl+V's clipboard
//! image (a fake `wl-paste` on `PATH`) become `[image #N]` chips, Backspace takes a
//! chip and its image away, and Enter sends the text with the images that remain as
//! image parts.

use super::*;
use crate::images::{base64, image_urls, png};

#[test]
fn a_pasted_path_and_the_clipboard_image_become_chips_sent_as_image_parts() {
    let server = MockServer::start(vec![answer("Two screenshots.")]);
    let bin = tempfile::tempdir().unwrap();
    let shot = png(300);
    let clip = png(500);
    let clip_file = bin.path().join("clip.png");
    std::fs::write(&clip_file, &clip).unwrap();
    let tool = bin.path().join("wl-paste");
    std::fs::write(&tool, format!("#!/bin/sh\ncat '{}'\n", clip_file.display())).unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path),
        ("WAYLAND_DISPLAY", "wayland-test".to_string()),
    ];
    let shot_for_project = shot.clone();
    let mut tui = Tui::spawn_env(&server, &[], &env, move |_, work| {
        std::fs::write(work.join("my shot.png"), &shot_for_project).unwrap();
    });
    tui.wait_ready();
    tui.type_text("compare ");
    let pasted = format!("'{}'", tui.dirs.project().join("my shot.png").display());
    tui.send(&format!("\x1b[200~{pasted}\x1b[201~"));
    tui.wait_for_text("› compare [image #1]");
    tui.type_text(" with ");
    tui.send("\x16");
    tui.wait_for_text("› compare [image #1] with [image #2]");
    // Backspace takes the whole chip and its image; Ctrl+V again brings the clipboard's
    // image back as #2.
    tui.send("\x7f");
    tui.wait_for_prompt_line("› compare [image #1] with");
    tui.send("\x16");
    tui.wait_for_text("› compare [image #1] with [image #2]");
    assert!(server.chat_requests().is_empty());
    tui.send("\r");
    tui.wait_for_text("Two screenshots.");
    let requests = server.chat_requests();
    let urls: Vec<String> = image_urls(&requests[0]).into_iter().flatten().collect();
    assert_eq!(
        urls,
        vec![
            format!("data:image/png;base64,{}", base64(&shot)),
            format!("data:image/png;base64,{}", base64(&clip)),
        ]
    );
    let sent = server.everything_sent();
    assert!(
        sent.contains("compare [image #1] with [image #2]"),
        "{sent}"
    );
    tui.exit_with_ctrl_c_twice();
}
