//! Files a command reads without naming them: `grep -r`, `rg` and `diff -r` read every
//! file beneath their folders. Where the sandbox masks secret files, the kernel keeps
//! their contents out of reach whatever the command; where it does not, the secret-file
//! rule must see these files too, so the folders are walked (bounded) and the first
//! secret file found is judged like a named one.
//!
//! It knows these programs' recursion options and walks folders; it must not know
//! rules or modes.

use std::path::{Path, PathBuf};

use super::shell::semantics::{long_option_is, short_cluster_has};

/// The most entries looked at before the folders count as too large to check.
pub const WALK_BUDGET: usize = 20_000;

/// Whether a walk follows symbolic links to folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Only links named on the command line (`grep -r`).
    No,
    /// Every link (`grep -R`, `rg -L`).
    Yes,
}

/// The folders a recursive reader reads beneath (as written), if the command is one.
pub fn recursive_roots(words: &[String]) -> Option<(Vec<String>, Follow)> {
    let (name, args) = words.split_first()?;
    let options: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && *a != "-")
        .collect();
    let has = |short: char, long: &str| {
        options
            .iter()
            .any(|a| short_cluster_has(a, short) || long_option_is(a, long))
    };
    match name.as_str() {
        "grep" | "egrep" | "fgrep" => {
            let recursive = has('r', "recursive")
                || has('R', "dereference-recursive")
                || options
                    .iter()
                    .any(|a| a.starts_with("--directories=recurse"))
                || args.windows(2).any(|w| w[0] == "-d" && w[1] == "recurse");
            if !recursive {
                return None;
            }
            let follow = if has('R', "dereference-recursive") {
                Follow::Yes
            } else {
                Follow::No
            };
            let pattern_given = has('e', "regexp") || has('f', "file");
            Some((operands(args, pattern_given, "."), follow))
        }
        "rg" => {
            if has('l', "files-with-matches") && options.contains(&"--files") {
                return None;
            }
            let follow = if has('L', "follow") {
                Follow::Yes
            } else {
                Follow::No
            };
            let pattern_given =
                has('e', "regexp") || has('f', "file") || options.contains(&"--files");
            Some((operands(args, pattern_given, "."), follow))
        }
        "diff" if has('r', "recursive") => Some((operands(args, true, "."), Follow::No)),
        _ => None,
    }
}

/// The operands (the first is the pattern unless `pattern_given`), or `default`.
fn operands(args: &[String], pattern_given: bool, default: &str) -> Vec<String> {
    let mut options_done = false;
    let mut out: Vec<String> = Vec::new();
    let mut skip_value = false;
    for a in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        if !options_done && a == "--" {
            options_done = true;
            continue;
        }
        if !options_done && a.starts_with('-') && a != "-" {
            // Options whose value is the next word.
            skip_value = matches!(
                a.as_str(),
                "-e" | "-f"
                    | "-m"
                    | "-A"
                    | "-B"
                    | "-C"
                    | "-g"
                    | "-t"
                    | "-T"
                    | "-d"
                    | "-j"
                    | "--regexp"
                    | "--file"
                    | "--glob"
                    | "--type"
                    | "--max-count"
            );
            continue;
        }
        out.push(a.clone());
    }
    if !pattern_given && !out.is_empty() {
        out.remove(0);
    }
    if out.is_empty() {
        out.push(default.to_string());
    }
    out
}

/// What a walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A secret file (the first met).
    Secret(PathBuf),
    /// None among every file.
    Nothing,
    /// More than [`WALK_BUDGET`] entries: not all were looked at.
    TooMany,
}

/// The first file beneath `root` (or `root` itself) that `is_secret` holds for, looking
/// at no more than `budget` entries (counted down across calls).
pub fn first_secret(
    root: &Path,
    follow: Follow,
    budget: &mut usize,
    is_secret: &dyn Fn(&Path) -> bool,
) -> Found {
    let mut pending = vec![root.to_path_buf()];
    let mut first = true;
    while let Some(path) = pending.pop() {
        if *budget == 0 {
            return Found::TooMany;
        }
        *budget -= 1;
        let real = super::resolve::real_path(&path);
        if is_secret(&path) || is_secret(&real) {
            return Found::Secret(path);
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let descend = meta.is_dir()
            || (meta.file_type().is_symlink() && (first || follow == Follow::Yes) && real.is_dir());
        first = false;
        if !descend {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.flatten() {
            pending.push(entry.path());
        }
    }
    Found::Nothing
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::shell::first_command as cmd;

    fn roots(line: &str) -> Option<Vec<String>> {
        recursive_roots(&cmd(line).words).map(|(r, _)| r)
    }

    #[test]
    fn recursive_readers_and_their_folders() {
        assert_eq!(roots("grep -r KEY ."), Some(vec![".".into()]));
        assert_eq!(roots("grep -rn KEY"), Some(vec![".".into()]));
        assert_eq!(
            roots("grep -R -e KEY src lib"),
            Some(vec!["src".into(), "lib".into()])
        );
        assert_eq!(roots("rg KEY"), Some(vec![".".into()]));
        assert_eq!(roots("rg -i -g '*.rs' KEY src"), Some(vec!["src".into()]));
        assert_eq!(roots("diff -r a b"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(roots("grep KEY file"), None);
        assert_eq!(roots("cat x"), None);
    }

    #[test]
    fn a_walk_finds_a_secret_through_a_named_link_and_stops_at_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join("src/deep/.env"), "K=1").unwrap();
        let secret = |p: &Path| p.file_name().is_some_and(|n| n == ".env");
        let mut budget = 100;
        assert_eq!(
            first_secret(&root, Follow::No, &mut budget, &secret),
            Found::Secret(root.join("src/deep/.env"))
        );
        std::os::unix::fs::symlink(root.join("src"), root.join("link")).unwrap();
        let mut budget = 100;
        assert!(matches!(
            first_secret(&root.join("link"), Follow::No, &mut budget, &secret),
            Found::Secret(_)
        ));
        let mut budget = 2;
        assert_eq!(
            first_secret(&root, Follow::No, &mut budget, &secret),
            Found::TooMany
        );
    }
}
