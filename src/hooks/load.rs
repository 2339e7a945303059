//! Finding and reading the project's hook files: `.harness9/hooks.toml`,
//! `.claude/settings.json` and `.claude/settings.local.json` beneath the project root.
//! They are repository input: read through `nofollow` (a link anywhere below the root,
//! or a FIFO or device in the file's place, is refused and reported), at most
//! [`MAX_FILE_BYTES`], UTF-8 only. A missing file is no problem; every other failure is
//! a [`HookFileError`] naming the file.
//!
//! It knows the places; it must not know whether the project is trusted (the caller
//! keeps project hooks out of force until it is).

use std::io::Read;
use std::path::Path;

use super::config::{HookFileError, Problem, parse_json_settings, parse_toml_text};
use super::{HookSet, Origin, OriginKind};
use crate::nofollow::{self, FileError};

/// The largest hook file read, in bytes.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// The project's hooks beneath `root`, in the order `.harness9/hooks.toml`,
/// `.claude/settings.json`, `.claude/settings.local.json`, and what could not be used.
/// `root` is resolved first (the user chose it; links above it are theirs); below it no
/// link is followed.
pub fn load_project(root: &Path) -> (HookSet, Vec<HookFileError>) {
    let mut set = HookSet::new();
    let mut problems = Vec::new();
    let root = match std::fs::canonicalize(root) {
        Ok(real) => real,
        Err(e) => {
            problems.push(HookFileError {
                path: root.to_path_buf(),
                problem: Problem::Unreadable {
                    reason: e.to_string(),
                },
            });
            return (set, problems);
        }
    };
    let places = [
        (".harness9/hooks.toml", OriginKind::ProjectToml),
        (".claude/settings.json", OriginKind::ClaudeSettings),
        (
            ".claude/settings.local.json",
            OriginKind::ClaudeLocalSettings,
        ),
    ];
    for (relative, kind) in places {
        let origin = Origin {
            kind,
            path: root.join(relative),
        };
        let text = match read_capped(&origin.path) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(problem) => {
                problems.push(HookFileError {
                    path: origin.path.clone(),
                    problem,
                });
                continue;
            }
        };
        let (found, mut wrong) = match kind {
            OriginKind::ProjectToml | OriginKind::UserConfig => parse_toml_text(&text, &origin),
            OriginKind::ClaudeSettings | OriginKind::ClaudeLocalSettings | OriginKind::Plugin => {
                parse_json_settings(&text, &origin)
            }
        };
        set.extend(found);
        problems.append(&mut wrong);
    }
    (set, problems)
}

/// The text of the file at the resolved path `real`, read without following links and
/// capped; `None` when there is no file.
pub fn read_capped(real: &Path) -> Result<Option<String>, Problem> {
    let unreadable = |reason: String| Problem::Unreadable { reason };
    let file = match nofollow::open_read(real) {
        Ok(file) => file,
        Err(FileError::NotFound) => return Ok(None),
        Err(e) => return Err(unreadable(e.to_string())),
    };
    let mut bytes = Vec::new();
    let cap = u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Problem::TooLarge {
            limit: MAX_FILE_BYTES,
        });
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| unreadable("not UTF-8 text".into()))
}
