//! Turns that change files in every way a tool can (write, delete, create, chmod,
//! symlink), undone; refusals when a file changed after the turn; ignored files left
//! alone; `/diff` of the session.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;

use crate::test_support::write_tree;

/// Writes `text` to `root/rel`, creating its folders.
fn write(root: &Path, rel: &str, text: &str) {
    write_tree(root, &[(rel, text)]);
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

/// A project `p` in a temporary folder (kept while the first value lives), its path, and
/// its snapshots under the folder's `home/snapshots`.
fn setup() -> (tempfile::TempDir, PathBuf, Snapshots) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    write_tree(
        &project,
        &[
            ("src/main.rs", "fn main() {}\n"),
            ("README.md", "hello\n"),
            ("doomed.txt", "bye\n"),
            (".gitignore", "target/\n"),
            ("target/out.bin", "build\n"),
            (".git/HEAD", "ref: refs/heads/main\n"),
        ],
    );
    let snapshots = Snapshots::new(&project, &dir.path().join("home/snapshots"));
    (dir, project, snapshots)
}

#[test]
fn a_turns_writes_deletions_creations_and_modes_are_put_back() {
    let (_dir, p, s) = setup();
    s.before_change().unwrap();
    write(&p, "src/main.rs", "fn main() { changed() }\n");
    std::fs::remove_file(p.join("doomed.txt")).unwrap();
    write(&p, "src/new.rs", "pub fn new() {}\n");
    std::fs::set_permissions(p.join("README.md"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&p, "target/out.bin", "rebuilt\n");
    assert_eq!(s.end_turn(1).unwrap(), 4);

    let diff = s.diff().unwrap().unwrap();
    assert!(
        diff.contains("-fn main() {}\n+fn main() { changed() }"),
        "{diff}"
    );
    assert!(diff.contains("+++ b/src/new.rs"), "{diff}");
    assert!(diff.contains("--- a/doomed.txt\n+++ /dev/null"), "{diff}");
    assert!(
        !diff.contains("target/"),
        "ignored files are not shown: {diff}"
    );

    match s.undo().unwrap() {
        UndoOutcome::Restored {
            restored,
            removed,
            removed_folders,
        } => {
            assert_eq!(restored, ["README.md", "doomed.txt", "src/main.rs"]);
            assert_eq!(removed, ["src/new.rs"]);
            assert!(removed_folders.is_empty(), "src/ was there before");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(read(&p, "src/main.rs"), "fn main() {}\n");
    assert_eq!(read(&p, "doomed.txt"), "bye\n");
    assert!(!p.join("src/new.rs").exists());
    let mode = std::fs::metadata(p.join("README.md"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(
        mode,
        0o644 & !0o022 | (mode & 0o644),
        "mode back to what it was"
    );
    assert_eq!(mode & 0o111, 0);
    // Ignored files and .git are not the snapshot's business.
    assert_eq!(read(&p, "target/out.bin"), "rebuilt\n");
    assert_eq!(
        s.undo().unwrap(),
        UndoOutcome::NothingToUndo { undone_before: 1 }
    );
}

#[test]
fn a_file_changed_after_the_turn_makes_undo_refuse_and_touch_nothing() {
    let (_dir, p, s) = setup();
    s.before_change().unwrap();
    write(&p, "src/main.rs", "by the turn\n");
    write(&p, "created.txt", "by the turn\n");
    s.end_turn(1).unwrap();
    // The user edits the file afterwards, and a file the turn did not touch.
    write(&p, "src/main.rs", "by the user\n");
    write(&p, "README.md", "user's own\n");
    assert_eq!(
        s.undo().unwrap(),
        UndoOutcome::Refused {
            changed_since: vec!["src/main.rs".into()],
            too_large: vec![],
            links_on_the_way: vec![],
        }
    );
    assert_eq!(read(&p, "src/main.rs"), "by the user\n");
    assert!(p.join("created.txt").exists());
    assert_eq!(read(&p, "README.md"), "user's own\n");
}

#[test]
fn turns_are_undone_newest_first_and_a_turn_without_changes_is_not_one() {
    let (_dir, p, s) = setup();
    s.before_change().unwrap();
    write(&p, "README.md", "one\n");
    s.end_turn(1).unwrap();
    s.before_change().unwrap();
    assert_eq!(s.end_turn(1).unwrap(), 0);
    s.before_change().unwrap();
    write(&p, "README.md", "two\n");
    std::os::unix::fs::symlink("src/main.rs", p.join("link")).unwrap();
    s.end_turn(1).unwrap();
    assert!(matches!(s.undo().unwrap(), UndoOutcome::Restored { .. }));
    assert_eq!(read(&p, "README.md"), "one\n");
    assert!(p.join("link").symlink_metadata().is_err());
    assert!(matches!(s.undo().unwrap(), UndoOutcome::Restored { .. }));
    assert_eq!(read(&p, "README.md"), "hello\n");
    let nothing = s.undo().unwrap();
    assert_eq!(nothing, UndoOutcome::NothingToUndo { undone_before: 2 });
    let said = nothing.describe();
    assert!(!said.contains("no turn of this session changed"), "{said}");
    assert!(
        said.contains("the 2 turns that changed files were undone"),
        "{said}"
    );
}

#[test]
fn nothing_to_undo_in_a_session_without_changes_says_so() {
    let (_dir, _p, s) = setup();
    let said = s.undo().unwrap().describe();
    assert!(
        said.contains("no turn of this session changed a file"),
        "{said}"
    );
}

#[test]
fn undo_removes_the_folders_a_turn_created_once_empty_and_no_other() {
    let (_dir, p, s) = setup();
    std::fs::create_dir_all(p.join("was_empty")).unwrap();
    s.before_change().unwrap();
    write(&p, "new/deep/er/file.txt", "x\n");
    write(&p, "was_empty/inside.txt", "x\n");
    write(&p, "kept/file.txt", "x\n");
    std::fs::create_dir_all(p.join("bare/dir")).unwrap();
    s.end_turn(1).unwrap();
    // The user puts a file of their own in one of them after the turn.
    write(&p, "kept/mine.txt", "the user's\n");
    let UndoOutcome::Restored {
        removed,
        removed_folders,
        ..
    } = s.undo().unwrap()
    else {
        panic!("undone");
    };
    assert!(
        removed.contains(&"new/deep/er/file.txt".to_string()),
        "{removed:?}"
    );
    assert_eq!(
        removed_folders,
        ["bare", "bare/dir", "new", "new/deep", "new/deep/er"]
    );
    assert!(!p.join("new").exists());
    assert!(!p.join("bare").exists());
    assert!(p.join("was_empty").is_dir(), "it was there before the turn");
    assert!(
        p.join("kept/mine.txt").exists(),
        "a folder still holding a file stays"
    );
    assert!(!p.join("kept/file.txt").exists());
}

#[test]
fn a_rewind_undoes_the_turns_from_the_one_chosen_newest_first() {
    let (_dir, p, s) = setup();
    for (turn, text) in [(1, "one\n"), (2, "two\n"), (3, "three\n")] {
        s.before_change().unwrap();
        write(&p, "README.md", text);
        write(&p, &format!("t{turn}.txt"), text);
        s.end_turn(turn).unwrap();
    }
    assert_eq!(s.changed_since_turn(2), ["README.md", "t2.txt", "t3.txt"]);
    let outcomes = s.rewind(2).unwrap();
    assert_eq!(outcomes.len(), 2);
    assert_eq!(read(&p, "README.md"), "one\n");
    assert!(p.join("t1.txt").exists() && !p.join("t2.txt").exists());
    assert!(s.changed_since_turn(2).is_empty());
    // Turn 1 is still there for /undo.
    assert!(matches!(s.undo().unwrap(), UndoOutcome::Restored { .. }));
    assert_eq!(read(&p, "README.md"), "hello\n");
}

#[test]
fn the_store_lives_under_the_home_and_goes_with_the_session() {
    let (dir, _, s) = setup();
    s.before_change().unwrap();
    let store_dir = s.0.store.dir().to_path_buf();
    assert!(store_dir.starts_with(dir.path().join("home/snapshots")));
    assert!(store_dir.is_dir());
    let mode = std::fs::metadata(&store_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the store is private");
    drop(s);
    assert!(!store_dir.exists());
    assert!(!dir.path().join("p/.git/harness9").exists());
}

#[test]
fn undo_never_removes_a_folder_reached_through_a_link_put_there_since() {
    let (dir, p, s) = setup();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("deep")).unwrap();
    s.before_change().unwrap();
    std::fs::create_dir_all(p.join("new/deep")).unwrap();
    s.end_turn(1).unwrap();
    // After the turn, its folder is swapped for a link to a folder elsewhere.
    std::fs::remove_dir_all(p.join("new")).unwrap();
    std::os::unix::fs::symlink(&outside, p.join("new")).unwrap();
    // The whole undo is refused, naming both folders (a link where one was, and on the
    // way to the other).
    assert_eq!(
        s.undo().unwrap(),
        UndoOutcome::Refused {
            changed_since: vec![],
            too_large: vec![],
            links_on_the_way: vec!["new".into(), "new/deep".into()],
        }
    );
    assert!(
        outside.join("deep").is_dir(),
        "a folder outside was removed"
    );
}

/// How a turn changed something in a folder there before the turn (`sub/` or one below
/// it; the names below are in `sub/`), which `/undo` and rewinding would put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// `sub/f.txt` rewritten: its content is written back.
    Written,
    /// `sub/f.txt` deleted: it is written back.
    Deleted,
    /// `sub/new.txt` created: it is removed.
    Created,
    /// The link `sub/l` deleted: it is put back.
    LinkDeleted,
    /// The link `sub/l` replaced by a file: the link is put back over it.
    LinkReplaced,
    /// The folder `sub/made/` created: it is removed.
    FolderCreated,
}

const EVERY_CHANGE: [Change; 6] = [
    Change::Written,
    Change::Deleted,
    Change::Created,
    Change::LinkDeleted,
    Change::LinkReplaced,
    Change::FolderCreated,
];

/// Which way the files are put back.
#[derive(Debug, Clone, Copy)]
enum Way {
    Undo,
    Rewind,
}

impl Way {
    fn run(self, s: &Snapshots) -> Result<Vec<UndoOutcome>, UndoError> {
        match self {
            Way::Undo => s.undo().map(|o| vec![o]),
            Way::Rewind => s.rewind(1),
        }
    }
}

/// A project whose turn made `change` in the folder `dir` (`sub` or a folder below it;
/// it rewrote `README.md` too), and a folder `outside` the project.
struct Attack {
    _dir: tempfile::TempDir,
    p: PathBuf,
    outside: PathBuf,
    s: Snapshots,
    /// The path the refusal names.
    named: String,
}

/// The folders the changes are made in: `sub/` itself is what is swapped for a link, so
/// the link is the file's folder or a folder higher up.
const DEPTHS: [&str; 2] = ["sub", "sub/deep"];

impl Attack {
    fn new(change: Change, dir_rel: &str) -> Attack {
        let (dir, p, s) = setup();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let at = |name: &str| format!("{dir_rel}/{name}");
        write(&p, &at("keep.txt"), "kept\n");
        match change {
            Change::Written | Change::Deleted => write(&p, &at("f.txt"), "before\n"),
            Change::LinkDeleted | Change::LinkReplaced => {
                std::os::unix::fs::symlink("../README.md", p.join(at("l"))).unwrap();
            }
            Change::Created | Change::FolderCreated => {}
        }
        s.before_change().unwrap();
        write(&p, "README.md", "by the turn\n");
        let named = match change {
            Change::Written => {
                write(&p, &at("f.txt"), "after\n");
                at("f.txt")
            }
            Change::Deleted => {
                std::fs::remove_file(p.join(at("f.txt"))).unwrap();
                at("f.txt")
            }
            Change::Created => {
                write(&p, &at("new.txt"), "made\n");
                at("new.txt")
            }
            Change::LinkDeleted => {
                std::fs::remove_file(p.join(at("l"))).unwrap();
                at("l")
            }
            Change::LinkReplaced => {
                std::fs::remove_file(p.join(at("l"))).unwrap();
                write(&p, &at("l"), "a file now\n");
                at("l")
            }
            Change::FolderCreated => {
                std::fs::create_dir(p.join(at("made"))).unwrap();
                at("made")
            }
        };
        s.end_turn(1).unwrap();
        Attack {
            _dir: dir,
            p,
            outside,
            s,
            named,
        }
    }

    /// Fills `outside` with what `sub/` holds after the turn (same names, content and
    /// modes: a check reading through a link would find nothing changed).
    fn mirror(&self) {
        copy_tree(&self.p.join("sub"), &self.outside);
    }
}

/// Replaces the folder `p/sub` with a link to `outside`.
fn swap_for_link(p: &Path, outside: &Path) {
    std::fs::remove_dir_all(p.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside, p.join("sub")).unwrap();
}

/// Copies files (with their modes), links and folders from `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        let meta = source.symlink_metadata().unwrap();
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &dest).unwrap();
        } else if meta.is_dir() {
            std::fs::create_dir(&dest).unwrap();
            copy_tree(&source, &dest);
        } else {
            std::fs::write(&dest, std::fs::read(&source).unwrap()).unwrap();
            std::fs::set_permissions(&dest, meta.permissions()).unwrap();
        }
    }
}

/// Every entry under `dir`, byte for byte: files with content and mode, links with their
/// target, folders with their mode.
fn picture(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u32, Vec<u8>)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(here) = stack.pop() {
        for entry in std::fs::read_dir(&here).unwrap() {
            let path = entry.unwrap().path();
            let meta = path.symlink_metadata().unwrap();
            let bytes = if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_dir() {
                stack.push(path.clone());
                b"<dir>".to_vec()
            } else {
                std::fs::read(&path).unwrap()
            };
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            out.insert(rel, (meta.permissions().mode(), bytes));
        }
    }
    out
}

/// The class "a folder on the path of a file to put back was swapped for a link to a
/// folder outside after the turn" (the file's folder, or a folder higher up), for every
/// kind of putting back, by `/undo` and by a rewind: the outside folder holds what `sub/` held after the turn (so a check reading
/// through the link finds nothing changed), yet nothing outside changes, nothing in the
/// project is put back either, and the refusal says why.
#[test]
fn undo_and_rewind_put_nothing_back_through_a_folder_swapped_for_a_link() {
    for (change, depth) in EVERY_CHANGE
        .into_iter()
        .flat_map(|c| DEPTHS.map(|d| (c, d)))
    {
        for way in [Way::Undo, Way::Rewind] {
            let a = Attack::new(change, depth);
            a.mirror();
            swap_for_link(&a.p, &a.outside);
            let outside_before = picture(&a.outside);
            let outcomes = way.run(&a.s).unwrap();
            assert_eq!(
                outcomes,
                [UndoOutcome::Refused {
                    changed_since: vec![],
                    too_large: vec![],
                    links_on_the_way: vec![a.named.clone()],
                }],
                "{change:?} {depth} {way:?}"
            );
            assert_eq!(
                picture(&a.outside),
                outside_before,
                "{change:?} {depth} {way:?}: something outside the project changed"
            );
            let said = outcomes[0].describe();
            assert!(
                said.contains(&format!(
                    "a symbolic link stands on the way now to {}",
                    a.named
                )) && said.contains("nothing was put back through it"),
                "{change:?} {depth} {way:?}: {said}"
            );
            assert_eq!(
                read(&a.p, "README.md"),
                "by the turn\n",
                "{change:?} {depth} {way:?}: the whole undo is refused"
            );
            assert!(
                a.s.changed_since_turn(1).contains(&"README.md".to_string()),
                "{change:?} {depth} {way:?}: a refused turn stays to be undone"
            );
        }
    }
}

/// Runs `hook` between the check and the act of the next undo on this thread.
fn between_check_and_act(hook: impl FnMut() + 'static) {
    BETWEEN_CHECK_AND_ACT.with_borrow_mut(|h| *h = Some(Box::new(hook)));
}

/// The race: the folder is swapped for the link after the check found nothing wrong and
/// before the files are put back. The act fails at the link, naming the path; nothing
/// outside changes.
#[test]
fn a_link_swapped_in_between_the_check_and_the_act_stops_the_act_at_it() {
    for (change, depth) in EVERY_CHANGE
        .into_iter()
        .flat_map(|c| DEPTHS.map(|d| (c, d)))
    {
        for way in [Way::Undo, Way::Rewind] {
            let a = Attack::new(change, depth);
            a.mirror();
            let outside_before = picture(&a.outside);
            let (p, outside) = (a.p.clone(), a.outside.clone());
            between_check_and_act(move || swap_for_link(&p, &outside));
            let result = way.run(&a.s);
            BETWEEN_CHECK_AND_ACT.with_borrow_mut(|h| *h = None);
            let Err(err @ UndoError::LinkOnTheWay { .. }) = result else {
                panic!("{change:?} {depth} {way:?}: {result:?}");
            };
            assert_eq!(
                err.to_string(),
                format!(
                    "{}: a symbolic link stands on the way now; nothing was put back through it",
                    a.named
                ),
                "{change:?} {depth} {way:?}"
            );
            assert!(
                a.p.join("sub").symlink_metadata().unwrap().is_symlink(),
                "{change:?} {depth} {way:?}: the hook ran"
            );
            assert_eq!(
                picture(&a.outside),
                outside_before,
                "{change:?} {depth} {way:?}: something outside the project changed"
            );
        }
    }
}

/// A second process flipping the folder and the link back and forth (each flip one
/// atomic exchange, so `sub` is always there) while undo and rewind run: whatever each
/// run ends in (put back, refused, stopped at the link), in no run does anything outside
/// the project change. Bounded by a count and a deadline; no outcome depends on timing.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_second_process_flipping_the_folder_and_a_link_never_gets_a_write_outside() {
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut runs = 0;
    'runs: for round in 0..8 {
        for change in EVERY_CHANGE {
            if std::time::Instant::now() > deadline {
                break 'runs;
            }
            let way = if round % 2 == 0 {
                Way::Undo
            } else {
                Way::Rewind
            };
            let a = Attack::new(change, DEPTHS[round % 2]);
            a.mirror();
            let outside_before = picture(&a.outside);
            let (sub, link) = (a.p.join("sub"), a.p.join("sub.link"));
            std::os::unix::fs::symlink(&a.outside, &link).unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let flips = Arc::new(AtomicUsize::new(0));
            let flipper = {
                let (stop, flips) = (stop.clone(), flips.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        renameat2(
                            AT_FDCWD,
                            &sub,
                            AT_FDCWD,
                            &link,
                            RenameFlags::RENAME_EXCHANGE,
                        )
                        .unwrap();
                        flips.fetch_add(1, Ordering::Relaxed);
                    }
                })
            };
            // The flipper is under way before the undo starts.
            while flips.load(Ordering::Relaxed) < 2 {
                std::thread::yield_now();
            }
            let result = way.run(&a.s);
            stop.store(true, Ordering::Relaxed);
            flipper.join().unwrap();
            assert_eq!(
                picture(&a.outside),
                outside_before,
                "{change:?} {way:?}: something outside changed ({result:?})"
            );
            runs += 1;
        }
    }
    assert!(runs >= EVERY_CHANGE.len(), "only {runs} runs");
}
