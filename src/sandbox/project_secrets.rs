//! The project's secret files, for the launcher to mask: every file
//! `permissions::is_secret_file` names (and every folder whose contents it names as a
//! whole, like `.ssh/`), found by a walk of the project that does not read `.gitignore`
//! (most projects ignore `.env`, which is exactly the file to find). The walk skips
//! `.git`, `node_modules` and cache folders (those holding a `CACHEDIR.TAG`, like cargo's
//! `target/`), stops after [`MAX_ENTRIES`] entries or [`MAX_FOUND`] secret files
//! (shallow folders first), and follows no symlink: a link with a secret name is masked
//! at its target when that is a regular file in the project or the user's home (a
//! repository's `.env -> /etc/ld.so.cache` must not hide a system file from every
//! command).
//!
//! No command pays for a walk: the first one starts when the sandbox is configured, and
//! later ones run in the background when a command starts and the last walk is older
//! than [`REFRESH`]. What each launch gets is the last walk's list plus a fresh look at
//! the project's top folder, so a `.env` created there a moment ago is masked too. A
//! secret file created deeper after the last walk is not, until the next one.
//!
//! It must not know how masks are applied.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::permissions::is_secret_file;

/// How old the last walk may be before a command start begins another one.
pub const REFRESH: Duration = Duration::from_secs(10);
/// Entries a walk looks at, at most (files and folders).
pub const MAX_ENTRIES: usize = 200_000;
/// Secret files a walk keeps, at most: each is an argument of every launch, and a
/// command line has a limit (the shallowest are kept).
pub const MAX_FOUND: usize = 2_000;
/// Folders never walked: git's own (its objects are no one's secret files), and
/// installed dependencies.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules"];

/// The walks of one project.
#[derive(Default)]
struct Walks {
    state: Mutex<State>,
    done: Condvar,
}

#[derive(Default)]
struct State {
    /// The last finished walk.
    found: Option<Found>,
    /// A walk is running.
    running: bool,
}

struct Found {
    paths: Vec<PathBuf>,
    at: Instant,
}

fn walks_of(project: &Path) -> Arc<Walks> {
    static PROJECTS: OnceLock<Mutex<HashMap<PathBuf, Arc<Walks>>>> = OnceLock::new();
    let projects = PROJECTS.get_or_init(Default::default);
    let mut map = projects.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(map.entry(project.to_path_buf()).or_default())
}

/// Starts the first walk of `project` in the background (once).
pub fn start(project: &Path) {
    let walks = walks_of(project);
    let mut state = walks.state.lock().unwrap_or_else(PoisonError::into_inner);
    if state.found.is_none() && !state.running {
        state.running = true;
        drop(state);
        spawn_walk(project, walks);
    }
}

/// The project's secret files as known now: the last walk's (waiting for the first one
/// if it has not finished) and those in its top folder. Starts a new walk in the
/// background when the last one is older than [`REFRESH`].
pub fn current(project: &Path) -> Vec<PathBuf> {
    start(project);
    let walks = walks_of(project);
    let mut state = walks.state.lock().unwrap_or_else(PoisonError::into_inner);
    while state.found.is_none() {
        state = walks
            .done
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
    }
    let mut paths = state
        .found
        .as_ref()
        .map(|f| f.paths.clone())
        .unwrap_or_default();
    let stale = state
        .found
        .as_ref()
        .is_some_and(|f| f.at.elapsed() > REFRESH);
    if stale && !state.running {
        state.running = true;
        drop(state);
        spawn_walk(project, Arc::clone(&walks));
    } else {
        drop(state);
    }
    for path in top_folder(project) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

fn spawn_walk(project: &Path, walks: Arc<Walks>) {
    let project = project.to_path_buf();
    let job = {
        let walks = Arc::clone(&walks);
        let project = project.clone();
        // A walk that panicked still finishes (with what is known: the top folder is
        // looked at by every launch), so no command waits for it forever.
        move || {
            let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| walk(&project)));
            finish(&walks, found.unwrap_or_default());
        }
    };
    if std::thread::Builder::new()
        .name("harness9-secret-walk".into())
        .spawn(job)
        .is_err()
    {
        // No thread to be had: walk here rather than mask nothing.
        finish(&walks, walk(&project));
    }
}

fn finish(walks: &Walks, paths: Vec<PathBuf>) {
    let mut state = walks.state.lock().unwrap_or_else(PoisonError::into_inner);
    state.found = Some(Found {
        paths,
        at: Instant::now(),
    });
    state.running = false;
    walks.done.notify_all();
}

/// What one entry of the project is, for masking.
enum Verdict {
    /// Mask this path (a secret file, a secret folder, or a link's regular target).
    Mask(PathBuf),
    /// Look inside (an ordinary folder).
    Descend,
    /// Nothing to do.
    Skip,
}

/// Where the project and the user's home really are, for links' targets.
struct Places {
    project: PathBuf,
    real: Vec<PathBuf>,
}

impl Places {
    fn of(project: &Path) -> Places {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute() && h.parent().is_some());
        let real = [Some(project.to_path_buf()), home]
            .into_iter()
            .flatten()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .filter(|p| p.parent().is_some())
            .collect();
        Places {
            project: project.to_path_buf(),
            real,
        }
    }

    fn judge(&self, path: &Path, kind: std::fs::FileType) -> Verdict {
        let Ok(relative) = path.strip_prefix(&self.project) else {
            return Verdict::Skip;
        };
        if kind.is_dir() {
            let name = relative.file_name().map(|n| n.to_string_lossy());
            if name.is_some_and(|n| SKIPPED_DIRS.contains(&n.as_ref()))
                || path.join("CACHEDIR.TAG").exists()
            {
                return Verdict::Skip;
            }
            // A folder whose every file is secret (`.ssh/`, `.config/gcloud/`).
            if is_secret_file(&relative.join("x")) {
                return Verdict::Mask(path.to_path_buf());
            }
            return Verdict::Descend;
        }
        if !is_secret_file(relative) {
            return Verdict::Skip;
        }
        if !kind.is_symlink() {
            return Verdict::Mask(path.to_path_buf());
        }
        // Masked where it leads, when that is a regular file of the project's or the
        // user's: a link to a folder, a device or a system file is not followed.
        match std::fs::canonicalize(path) {
            Ok(target) if target.is_file() && self.real.iter().any(|r| target.starts_with(r)) => {
                Verdict::Mask(target)
            }
            _ => Verdict::Skip,
        }
    }
}

/// Walks `project` (see the module's documentation), shallow folders first, keeping at
/// most [`MAX_FOUND`] paths.
pub fn walk(project: &Path) -> Vec<PathBuf> {
    let places = Places::of(project);
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([project.to_path_buf()]);
    let mut seen = 0usize;
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            match places.judge(&entry.path(), kind) {
                Verdict::Mask(_) if found.len() >= MAX_FOUND => return found,
                Verdict::Mask(path) => found.push(path),
                Verdict::Descend => queue.push_back(entry.path()),
                Verdict::Skip => {}
            }
        }
    }
    found
}

/// The secret files and folders directly in the project's top folder.
fn top_folder(project: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(project) else {
        return Vec::new();
    };
    let places = Places::of(project);
    entries
        .flatten()
        .filter_map(|entry| {
            let kind = entry.file_type().ok()?;
            match places.judge(&entry.path(), kind) {
                Verdict::Mask(path) => Some(path),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn the_walk_finds_ignored_secret_files_and_skips_dependencies_and_caches() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for name in [
            ".env",
            "app/config/.env.production",
            "certs/server.pem",
            "deploy/id_ed25519",
            ".ssh/known_hosts",
            "node_modules/pkg/.env",
            "target/debug/.env",
            "src/main.rs",
            ".venv/bin/python",
        ] {
            touch(&p.join(name));
        }
        std::fs::write(p.join(".gitignore"), ".env\n*.pem\n").unwrap();
        std::fs::write(p.join("target/CACHEDIR.TAG"), "Signature").unwrap();
        // Links: to a project file (masked there), to a folder and to a system file
        // (neither followed).
        touch(&p.join("config/prod.ini"));
        std::os::unix::fs::symlink(p.join("config/prod.ini"), p.join(".env.local")).unwrap();
        std::os::unix::fs::symlink("/usr", p.join(".env.dir")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", p.join(".env.system")).unwrap();
        let mut found = walk(p);
        found.sort();
        let mut expected = vec![
            p.join(".env"),
            p.join("app/config/.env.production"),
            p.join("certs/server.pem"),
            p.join("deploy/id_ed25519"),
            p.join(".ssh"),
            std::fs::canonicalize(p.join("config/prod.ini")).unwrap(),
        ];
        expected.sort();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_launch_sees_a_secret_file_made_in_the_top_folder_since_the_last_walk() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        touch(&p.join("deep/.env"));
        assert_eq!(current(p), vec![p.join("deep/.env")]);
        touch(&p.join(".env"));
        let now = current(p);
        assert!(now.contains(&p.join(".env")), "{now:?}");
        assert!(now.contains(&p.join("deep/.env")), "{now:?}");
    }
}
