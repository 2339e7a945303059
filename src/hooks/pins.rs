//! The scripts inside the project a hook's command names, pinned by content when the
//! session starts: a hook whose script changed since (the model may edit project files
//! in auto-edit) does not run the new text — a guard denies, a plain hook is reported and
//! skipped — so a hook is never a way around the approval of a command. Which words name
//! a script is `trust.rs`'s rule (the same scripts a project hook's trust covers).
//!
//! It owns the pins and their check; it must not know the agent loop or the sandbox.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::load::read_capped;

/// One script a hook names, and what it held when pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedScript {
    /// The script, inside the project.
    pub path: PathBuf,
    /// What it held.
    pub held: Held,
}

/// What a pinned script held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// No file there.
    Nothing,
    /// This text (its SHA-256, hex).
    Text {
        /// The digest.
        sha256: String,
    },
    /// Something that could not be read as a hook file (a link, a FIFO, too large).
    Unreadable,
}

/// What `path` holds now.
pub fn held(path: &Path) -> Held {
    match read_capped(path) {
        Ok(Some(text)) => Held::Text {
            sha256: Sha256::digest(text.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        },
        Ok(None) => Held::Nothing,
        Err(_) => Held::Unreadable,
    }
}

/// The scripts inside `root` that `command` names, as they are now.
pub fn pin(command: &str, root: &Path) -> Vec<PinnedScript> {
    super::trust::named_scripts(command, root)
        .into_iter()
        .map(|path| PinnedScript {
            held: held(&path),
            path,
        })
        .collect()
}

/// The first pinned script that no longer holds what it held, if any.
pub fn changed(pins: &[PinnedScript]) -> Option<&Path> {
    pins.iter()
        .find(|pin| held(&pin.path) != pin.held)
        .map(|pin| pin.path.as_path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_script_changed_replaced_by_a_link_or_removed_is_seen() {
        let root = tempfile::tempdir().unwrap();
        let script = root.path().join("scripts/check.sh");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "exit 2\n").unwrap();
        let pins = pin("bash scripts/check.sh --strict", root.path());
        assert_eq!(pins.len(), 1);
        assert_eq!(changed(&pins), None);
        std::fs::write(&script, "exit 0\n").unwrap();
        assert_eq!(changed(&pins), Some(script.as_path()));
        std::fs::write(&script, "exit 2\n").unwrap();
        assert_eq!(changed(&pins), None);
        std::fs::remove_file(&script).unwrap();
        std::fs::write(root.path().join("other.sh"), "exit 2\n").unwrap();
        std::os::unix::fs::symlink(root.path().join("other.sh"), &script).unwrap();
        assert_eq!(changed(&pins), Some(script.as_path()));
        std::fs::remove_file(&script).unwrap();
        assert_eq!(changed(&pins), Some(script.as_path()));
        // A file the hook writes its output to is data, not a script.
        let logging = pin(
            "bash scripts/check.sh >> \"$CLAUDE_PROJECT_DIR/events.jsonl\" 2> logs/err.txt",
            root.path(),
        );
        let paths: Vec<&Path> = logging.iter().map(|p| p.path.as_path()).collect();
        assert_eq!(paths, [script.as_path()]);
        let appended = pin("cat >>\"$CLAUDE_PROJECT_DIR/log/x.jsonl\"", root.path());
        assert!(appended.is_empty(), "{appended:?}");
        // A script that did not exist when pinned must not appear later either.
        let absent = pin("bash scripts/later.sh", root.path());
        assert_eq!(changed(&absent), None);
        std::fs::write(root.path().join("scripts/later.sh"), "exit 0\n").unwrap();
        assert!(changed(&absent).is_some());
    }
}
