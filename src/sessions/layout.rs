//! Where session files live: `$HARNESS9_HOME/sessions/<project-dir>/<id>.jsonl`. This
//! module owns the project a working directory belongs to ([`project_of`]), the folder
//! name derived from it ([`project_dir_name`]) and the private permissions of what the
//! store creates (folders 0700, files 0600 on Unix, through [`crate::private_files`];
//! folders an older version made wider are tightened).
//!
//! It must not know what is inside a session file.

use std::path::{Component, Path, PathBuf};

/// The extension of session files.
pub const EXTENSION: &str = "jsonl";

/// Longest readable part of a project folder name, before the hash.
const READABLE_MAX: usize = 48;

/// The project a working directory belongs to: its project root
/// ([`crate::project_root::find`]: the nearest folder holding a `.git` of this user's,
/// else the directory itself), canonical when it can be resolved.
pub fn project_of(workdir: &Path) -> PathBuf {
    crate::project_root::find(workdir).path
}

/// The folder of a project's sessions: a readable, filesystem-safe name from the path's
/// last two components, then eight hex digits of a hash of the whole path, e.g.
/// `work-main-3f2a9c1b`. The hash (FNV-1a 64, folded to 32 bits) is stable across runs,
/// platforms and Rust versions, so a project keeps its folder.
pub fn project_dir_name(project: &Path) -> String {
    let hash = fnv1a64(project.as_os_str().as_encoded_bytes());
    let short = (hash >> 32) ^ (hash & 0xffff_ffff);
    let parts: Vec<String> = project
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(safe_part(&name.to_string_lossy())),
            _ => None,
        })
        .filter(|p| !p.is_empty())
        .collect();
    let tail = parts[parts.len().saturating_sub(2)..].join("-");
    // Keep the end (the project's own name); every char is ASCII after `safe_part`.
    let readable = &tail[tail.len().saturating_sub(READABLE_MAX)..];
    let readable = readable.trim_start_matches(['.', '-', '_']);
    if readable.is_empty() {
        format!("{short:08x}")
    } else {
        format!("{readable}-{short:08x}")
    }
}

/// ASCII letters, digits, `.`, `_` and `-` kept; every run of anything else becomes one
/// `_`.
fn safe_part(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out
}

/// FNV-1a, 64 bits: a tiny hash whose value is fixed by its definition.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(PRIME))
}

pub(crate) use crate::private_files::{create_private_dir, private_append_options};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn project_dir_names_are_readable_stable_and_distinct() {
        let name = project_dir_name(Path::new("/work/main"));
        // Fixed by FNV-1a's definition: the same on every run and every machine.
        assert_eq!(name, "work-main-70b5e677");
        assert_eq!(name, project_dir_name(Path::new("/work/main")));
        let other = project_dir_name(Path::new("/other/work/main"));
        assert!(other.starts_with("work-main-"), "{other}");
        assert_ne!(other, name);
        assert_ne!(
            project_dir_name(Path::new("/a/b c")),
            project_dir_name(Path::new("/a/b_c"))
        );
        assert!(project_dir_name(Path::new("/a/b c/d é")).starts_with("b_c-d_-"));
        let root = project_dir_name(Path::new("/"));
        assert_eq!(root.len(), 8, "{root}");
        assert!(!project_dir_name(Path::new("/x/.hidden")).starts_with('.'));
        let long = format!("/p/{}", "x".repeat(300));
        assert!(project_dir_name(Path::new(&long)).len() <= READABLE_MAX + 9);
    }

    #[test]
    fn the_project_is_the_git_root_else_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let deep = root.join("repo/src/deep");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(project_of(&deep), deep);
        std::fs::create_dir(root.join("repo/.git")).unwrap();
        assert_eq!(project_of(&deep), root.join("repo"));
        // A worktree's `.git` is a file.
        let wt = root.join("wt/sub");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(project_of(&wt), root.join("wt"));
    }
}
