//! Esc Esc rewinding on the real binary when a folder on the path of the files to put
//! back was swapped for a link out of the project after the turn: the conversation is
//! rewound, no file is put back through the link, nothing outside changes, and the
//! screen says why.

use super::*;

#[test]
fn a_rewind_puts_nothing_back_through_a_folder_swapped_for_a_link() {
    let server = MockServer::start(vec![
        tool_reply(
            "c1",
            "bash",
            &serde_json::json!({
                "command": "printf 'after\\n' > sub/f.txt && printf 'made\\n' > sub/new.txt"
            })
            .to_string(),
        ),
        answer("changed them"),
    ]);
    let mut tui = Tui::ready(&server, &["--approval-mode", "full-auto"], |_, project| {
        crate::support::write(&project.join("sub/f.txt"), "before\n");
    });
    let p = std::fs::canonicalize(tui.dirs.project()).unwrap();
    tui.submit("change sub");
    tui.wait_for_text("changed them");
    tui.wait_ready();
    // After the turn, `sub/` is swapped for a link to a folder outside that holds the
    // same files (a check reading through the link would find nothing changed).
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = std::fs::canonicalize(outside_dir.path()).unwrap();
    crate::support::write(&outside.join("f.txt"), "after\n");
    crate::support::write(&outside.join("new.txt"), "made\n");
    std::fs::remove_dir_all(p.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, p.join("sub")).unwrap();

    tui.send("\x1b");
    tui.wait_for_text("press Esc again to rewind");
    tui.send("\x1b");
    tui.wait_for_text("Rewind to an earlier message");
    tui.wait_for_text("change sub");
    tui.send("\r");
    tui.wait_for_text("Rewinding puts back 2 file(s) changed since that message");
    tui.send("y");
    tui.wait_for_text("Rewound the conversation to before that message");
    tui.wait_for_text("nothing was put back");
    let screen = tui.contents().replace('\n', " ");
    let screen = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        screen.contains(
            "a symbolic link stands on the way now to sub/f.txt, sub/new.txt (it could lead \
             out of the project); nothing was put back through it"
        ),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("f.txt")).unwrap(),
        "after\n"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("new.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 2);
    // The message is back in the composer; clear it, then leave.
    tui.wait_for_text("› change sub");
    tui.send("\x15");
    tui.exit_with_ctrl_c_twice();
}
