//! Commands that destroy work that cannot be recovered, which ask in every approval mode
//! unless a rule names them exactly: `rm -r`, `find -delete`, `shred`, `truncate`,
//! `dd of=`, `rsync --delete`, file system makers, and the git commands that discard
//! changes or history (`reset --hard`, `clean -f`, `checkout -- <paths>`, `switch
//! --discard-changes`, `restore`, `push --force`, `branch -D`, `stash drop`, …).
//!
//! It judges an effective command ([`super::peel`] has already looked through wrappers,
//! `bash -c` and `find -exec`) and reads options the way getopt and git do: short flags
//! in clusters anywhere before `--`, long options by any prefix, git's global options
//! before the subcommand. Targets are placed by where they really lead (symlinks
//! followed), against every folder the line may run in. It must not know rules or modes.

use std::path::{Path, PathBuf};

use super::peel::ExtraArgs;
use super::resolve::real_path;
use super::shell::semantics::{long_option_is, short_cluster_has};

/// Where a command may run and what counts as scratch space.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// Every folder the command may run in (`cd` earlier in the line adds some).
    pub cwds: &'a [PathBuf],
    /// The project.
    pub project: &'a Path,
    /// The temp folders (deleting beneath them is not destroying work, unless the
    /// project is there).
    pub temp: &'a [&'a Path],
}

/// Why this command destroys work, if it does.
pub fn destructive(words: &[String], extra: ExtraArgs, places: Places<'_>) -> Option<String> {
    let (name, args) = words.split_first()?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match name.as_str() {
        "rm" => rm(&args, extra, places),
        "find" if args.contains(&"-delete") => {
            let roots: Vec<&str> = args
                .iter()
                .copied()
                .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                .collect();
            let roots = if roots.is_empty() { vec!["."] } else { roots };
            (!roots.iter().all(|r| scratch(r, places)))
                .then(|| format!("`find {} -delete` deletes files for good", roots.join(" ")))
        }
        "shred" => Some("`shred` destroys file contents".into()),
        "truncate" => {
            let targets = operands(&args, &["-s", "-r", "--size", "--reference"]);
            (extra == ExtraArgs::Unknown || !targets.iter().all(|t| scratch(t, places)))
                .then(|| "`truncate` cuts files, losing what was in them".into())
        }
        "dd" => args
            .iter()
            .filter_map(|a| a.strip_prefix("of="))
            .find(|out| *out != "/dev/null" && !scratch(out, places))
            .map(|out| format!("`dd of={out}` overwrites it")),
        "wipefs" | "sfdisk" | "fdisk" | "parted" | "blkdiscard" => {
            Some(format!("`{name}` changes disks and partitions"))
        }
        name if name.starts_with("mkfs") || name.starts_with("mke2fs") => Some(format!(
            "`{name}` makes a new file system, erasing what was there"
        )),
        "rsync"
            if args.iter().any(|a| {
                long_option_is(a, "delete")
                    || a.starts_with("--delete")
                    || long_option_is(a, "remove-source-files")
            }) =>
        {
            Some("`rsync --delete` deletes files in the destination".into())
        }
        "git" => git(&args, places),
        _ => None,
    }
}

/// The words that are not options or values of `with_value` options.
fn operands<'a>(args: &[&'a str], with_value: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(a) = args.get(i) {
        if options_done || !a.starts_with('-') || *a == "-" {
            out.push(*a);
        } else if *a == "--" {
            options_done = true;
        } else if with_value.contains(a) {
            i += 1;
        }
        i += 1;
    }
    out
}

fn rm(args: &[&str], extra: ExtraArgs, places: Places<'_>) -> Option<String> {
    let mut recursive = false;
    let mut targets = Vec::new();
    let mut options_done = false;
    for arg in args {
        if !options_done && *arg == "--" {
            options_done = true;
        } else if !options_done && arg.starts_with("--") {
            recursive |= long_option_is(arg, "recursive");
        } else if !options_done && arg.starts_with('-') && arg.len() > 1 {
            recursive |= arg.contains('r') || arg.contains('R');
        } else {
            targets.push(*arg);
        }
    }
    if extra == ExtraArgs::Unknown {
        return Some("`rm` deletes every file it is handed (by xargs or find), for good".into());
    }
    if !recursive {
        return None;
    }
    let kept: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|t| !scratch(t, places))
        .collect();
    if kept.is_empty() && !targets.is_empty() {
        return None;
    }
    Some(format!(
        "`rm -r {}` deletes a directory tree for good",
        kept.join(" ")
    ))
}

/// Whether `target`, from every folder the command may run in, is strictly beneath a
/// temp folder and neither holds nor lies in the project: by its spelling and by where
/// it really leads.
fn scratch(target: &str, places: Places<'_>) -> bool {
    if target.contains(['$', '`', '*', '?', '[', '{', '~']) || target.is_empty() {
        return false;
    }
    places.cwds.iter().all(|cwd| {
        let lexical = crate::paths::normalize(&crate::paths::absolute(target, cwd));
        let real = real_path(&lexical);
        [lexical, real].iter().all(|path| {
            places
                .temp
                .iter()
                .any(|tmp| path.starts_with(tmp) && path.as_path() != *tmp)
                && !path.starts_with(places.project)
                && !places.project.starts_with(path)
        })
    })
}

/// Git's options before the subcommand, with a value.
const GIT_GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
];

fn git(args: &[&str], places: Places<'_>) -> Option<String> {
    let mut i = 0;
    let mut dirs: Vec<PathBuf> = places.cwds.to_vec();
    while let Some(a) = args.get(i) {
        if !a.starts_with('-') {
            break;
        }
        if GIT_GLOBAL_WITH_VALUE.contains(a) {
            if *a == "-C"
                && let Some(dir) = args.get(i + 1)
            {
                let moved: Vec<PathBuf> = dirs
                    .iter()
                    .map(|d| crate::paths::normalize(&crate::paths::absolute(dir, d)))
                    .collect();
                dirs.extend(moved);
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    let sub = *args.get(i)?;
    let rest = &args[i + 1..];
    let long = |names: &[&str]| {
        rest.iter()
            .take_while(|a| **a != "--")
            .any(|a| names.iter().any(|n| long_option_is(a, n)))
    };
    let short = |flags: &[char]| {
        rest.iter()
            .take_while(|a| **a != "--")
            .any(|a| flags.iter().any(|f| short_cluster_has(a, *f)))
    };
    let says = |what: &str| Some(what.to_string());
    match sub {
        "reset" if long(&["hard", "merge", "keep"]) => {
            says("`git reset --hard` discards uncommitted changes")
        }
        "clean" if !(short(&['n']) || long(&["dry-run"])) => {
            says("`git clean` deletes untracked files")
        }
        "checkout" => {
            let paths = rest.contains(&"--")
                || rest.contains(&".")
                || short(&['f', 'p', 'B'])
                || long(&["force", "patch", "ours", "theirs", "pathspec-from-file"])
                || rest.iter().filter(|a| !a.starts_with('-')).any(|a| {
                    dirs.iter()
                        .any(|d| crate::paths::absolute(a, d).symlink_metadata().is_ok())
                });
            paths.then(|| {
                "`git checkout` of paths or with --force discards uncommitted changes".into()
            })
        }
        "switch" if short(&['f', 'C']) || long(&["discard-changes", "force", "force-create"]) => {
            says("`git switch --discard-changes` discards uncommitted changes")
        }
        "restore" => {
            let staged = short(&['S']) || long(&["staged"]);
            let worktree = short(&['W']) || long(&["worktree"]);
            (!staged || worktree).then(|| "`git restore` discards uncommitted changes".into())
        }
        "push"
            if short(&['f', 'd'])
                || long(&[
                    "force",
                    "force-with-lease",
                    "force-if-includes",
                    "mirror",
                    "delete",
                    "prune",
                ])
                || rest
                    .iter()
                    .any(|a| a.starts_with('+') || a.starts_with(':')) =>
        {
            says("`git push --force` rewrites or deletes remote history")
        }
        "branch"
            if short(&['D', 'M', 'C'])
                || ((short(&['d']) || long(&["delete"]))
                    && (short(&['f']) || long(&["force"])))
                || short(&['f'])
                || long(&["force"]) =>
        {
            says("`git branch -D` deletes or resets a branch that may not be merged")
        }
        "stash" if rest.first().is_some_and(|a| matches!(*a, "drop" | "clear")) => {
            says("`git stash drop|clear` deletes stashed changes")
        }
        "update-ref" if short(&['d']) || long(&["delete"]) => {
            says("`git update-ref -d` deletes a reference")
        }
        "reflog"
            if rest
                .first()
                .is_some_and(|a| matches!(*a, "expire" | "delete")) =>
        {
            says("`git reflog expire|delete` drops the history that recovers lost commits")
        }
        "gc" if long(&["prune"]) => says("`git gc --prune` deletes unreachable commits"),
        "prune" | "filter-branch" | "filter-repo" => {
            Some(format!("`git {sub}` deletes or rewrites history"))
        }
        "worktree" if rest.first() == Some(&"remove") && (short(&['f']) || long(&["force"])) => {
            says("`git worktree remove --force` deletes a work tree with its changes")
        }
        "submodule"
            if rest.first() == Some(&"deinit") && (short(&['f']) || long(&["force", "all"])) =>
        {
            says("`git submodule deinit --force` deletes submodule work trees")
        }
        "rm" | "checkout-index" if short(&['f']) || long(&["force"]) => {
            Some(format!("`git {sub} -f` discards uncommitted changes"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::peel::{Effective, effective};
    use crate::permissions::shell::first_command as cmd;

    fn destroys(line: &str, cwd: &Path, project: &Path, temp: &[&Path]) -> bool {
        let cwds = [cwd.to_path_buf()];
        let places = Places {
            cwds: &cwds,
            project,
            temp,
        };
        effective(&cmd(line)).iter().any(|e| match e {
            Effective::Seen { words, extra } => destructive(words, *extra, places).is_some(),
            Effective::Unseen { .. } => false,
        })
    }

    #[test]
    fn destructive_commands_are_named_however_they_are_spelled() {
        let p = Path::new("/p");
        let tmp = [Path::new("/tmp")];
        let destroying = [
            "rm -rf build",
            "rm -r -f /",
            "rm --recursive src",
            "rm --recur --force src",
            "rm --rec src",
            "rm src -rf",
            "rm -fr /tmp/../home",
            "rm -rf $DIR",
            "rm -rf /tmp",
            "/bin/rm -rf src",
            "command rm -rf src",
            "env rm -rf src",
            "bash -c 'rm -rf src'",
            "sh -c \"cd x; rm -rf src\"",
            "xargs rm -rf",
            "find src -exec rm -rf {} +",
            "find src -delete",
            "find -delete",
            "find . -name x -exec rm {} +",
            "xargs rm",
            "sudo rm -rf /",
            "timeout 5 rm -rf src",
            "git reset --hard",
            "git reset --ha",
            "git reset --hard HEAD~3",
            "git -C . reset --hard",
            "git -c x=y reset --merge",
            "git --no-pager reset --keep",
            "git clean -fdx",
            "git clean --force",
            "git clean -d",
            "git checkout -- .",
            "git checkout .",
            "git checkout -f main",
            "git switch --discard-changes main",
            "git switch --disc main",
            "git switch -f main",
            "git restore src/main.rs",
            "git restore --staged --worktree x",
            "git push --force",
            "git push --forc",
            "git push -f origin main",
            "git push origin +main",
            "git push --force-with-lease",
            "git push origin :main",
            "git push --delete origin x",
            "git branch -D topic",
            "git branch -d -f topic",
            "git branch --delete --force topic",
            "git branch -f main HEAD~5",
            "git stash clear",
            "git stash drop",
            "git update-ref -d refs/heads/x",
            "git reflog expire --all",
            "git gc --prune=now",
            "git rm -f x",
            "shred -u key",
            "truncate -s 0 src/main.rs",
            "dd if=/dev/zero of=src/main.rs",
            "mkfs.ext4 /dev/sdb1",
            "rsync -a --delete a/ b/",
        ];
        let harmless = [
            "rm file.txt",
            "rm -f a b",
            "rm -rf /tmp/work",
            "rm -rf /tmp/a /tmp/b",
            "find /tmp/x -delete",
            "git reset HEAD~1",
            "git reset --soft HEAD~1",
            "git clean -n",
            "git clean --dry-run -d",
            "git checkout main",
            "git checkout -b topic",
            "git switch main",
            "git restore --staged x",
            "git push origin main",
            "git branch -d merged",
            "git branch topic",
            "git stash pop",
            "dd if=x of=/dev/null",
            "dd if=x of=/tmp/y",
            "truncate -s 0 /tmp/log",
            "rsync -a a/ b/",
            "git status",
        ];
        for (lines, expected) in [(&destroying[..], true), (&harmless[..], false)] {
            for line in lines {
                assert_eq!(destroys(line, p, p, &tmp), expected, "{line}");
            }
        }
        // Relative to a cwd inside the temp dir.
        assert!(!destroys("rm -rf x", Path::new("/tmp/w"), p, &tmp));
        // A project that lives in the temp dir is still the project.
        let in_tmp = Path::new("/tmp/proj");
        assert!(destroys("rm -rf build", in_tmp, in_tmp, &tmp));
        assert!(destroys("rm -rf /tmp", in_tmp, in_tmp, &tmp));
    }

    #[test]
    fn a_link_in_the_temp_folder_to_the_project_is_the_project() {
        let project = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(project.path()).unwrap();
        let tmp = std::fs::canonicalize(scratch.path()).unwrap();
        std::os::unix::fs::symlink(&project, tmp.join("link")).unwrap();
        let line = format!("rm -rf {}/link/", tmp.display());
        assert!(destroys(&line, &tmp, &project, &[tmp.as_path()]));
        let line = format!("rm -rf {}/plain", tmp.display());
        assert!(!destroys(&line, &tmp, &project, &[tmp.as_path()]));
    }
}
