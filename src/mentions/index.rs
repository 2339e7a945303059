//! The project's files for the `@` picker: a walk on its own thread (the same walker as
//! the tools, so ignored files stay out) fills an index in chunks, and a matcher thread
//! ranks it against the latest query with `nucleo-matcher`, publishing the best
//! [`MAX_MATCHES`] each time the query changes or the index grows. The frontend only
//! reads the published list, so drawing a frame never waits for a walk or a match, on
//! any size of tree; it is told of a new list through the `on_update` callback.
//!
//! A query only ever ranks entries, never reads files. The index is walked when the
//! first picker opens and walked again (the old list kept until the new one is done)
//! when a picker opens after [`STALE_AFTER`]. It knows paths; it must not know terminals.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// Entries ranked and published at most.
pub const MAX_MATCHES: usize = 50;
/// Entries indexed at most; a larger tree is cut (and says so).
pub const MAX_ENTRIES: usize = 500_000;
/// A finished index older than this is walked again when a picker opens.
pub const STALE_AFTER: Duration = Duration::from_secs(10);
/// Entries handed from the walk to the matcher at a time.
const CHUNK: usize = 4096;
/// While the walk runs, a growing index is matched again at most this often.
const REMATCH_EVERY: Duration = Duration::from_millis(80);

/// One ranked entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    /// The path relative to the project, `/`-separated; a folder ends with `/`.
    pub path: String,
    /// The matched characters (char indices into `path`), for highlighting.
    pub indices: Vec<u32>,
}

/// The best entries for one query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchList {
    /// The query they answer.
    pub query: String,
    /// Best first, at most [`MAX_MATCHES`].
    pub items: Vec<Matched>,
    /// How many entries matched in all.
    pub matched: usize,
    /// How many entries were searched.
    pub indexed: usize,
    /// Whether the walk was still running (more entries may come).
    pub walking: bool,
    /// Whether the tree had more than [`MAX_ENTRIES`] entries.
    pub capped: bool,
}

/// Where the walk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// The first walk is filling the index.
    First,
    /// A later walk runs; the previous index answers meanwhile.
    Refreshing,
    /// Done at this time.
    Done(Instant),
}

/// What the threads share under the lock.
struct State {
    chunks: Vec<Arc<[Box<str>]>>,
    entries: usize,
    /// Counts changes to the index (a chunk added, a refresh swapped in).
    generation: u64,
    capped: bool,
    walk: Walk,
    /// The latest query and its number.
    query: Option<(u64, String)>,
    /// What the published list answered: query number, index generation, walk running.
    answered: Option<(u64, u64, bool)>,
    last_match: Option<Instant>,
}

struct Shared {
    root: PathBuf,
    state: Mutex<State>,
    wake: Condvar,
    stop: AtomicBool,
    published: Mutex<Option<Arc<MatchList>>>,
    version: AtomicU64,
    on_update: Box<dyn Fn() + Send + Sync>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The project's file index; dropping it stops its threads.
pub struct FileIndex {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FileIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileIndex")
            .field("root", &self.shared.root)
            .field("version", &self.version())
            .finish_non_exhaustive()
    }
}

impl FileIndex {
    /// Starts indexing `root` in the background; `on_update` is called (from another
    /// thread) each time a new list is published.
    pub fn start(root: &Path, on_update: impl Fn() + Send + Sync + 'static) -> FileIndex {
        let shared = Arc::new(Shared {
            root: root.to_path_buf(),
            state: Mutex::new(State {
                chunks: Vec::new(),
                entries: 0,
                generation: 0,
                capped: false,
                walk: Walk::First,
                query: None,
                answered: None,
                last_match: None,
            }),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
            published: Mutex::new(None),
            version: AtomicU64::new(0),
            on_update: Box::new(on_update),
        });
        spawn_walk(&shared, Walk::First);
        let matcher = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("file-index-match".into())
            .spawn(move || match_loop(&matcher));
        if let Err(e) = spawned {
            tracing::warn!("cannot start the file matcher: {e}");
        }
        FileIndex { shared }
    }

    /// Asks for the best entries for `query` (fuzzy, smart case); the answer is
    /// published when ready.
    pub fn search(&self, query: &str) {
        let mut state = self.shared.state();
        if state.query.as_ref().is_some_and(|(_, q)| q == query) {
            return;
        }
        let number = state.query.as_ref().map_or(1, |(n, _)| n + 1);
        state.query = Some((number, query.to_string()));
        drop(state);
        self.shared.wake.notify_all();
    }

    /// Walks the tree again when the index is older than [`STALE_AFTER`].
    pub fn refresh_if_stale(&self) {
        let mut state = self.shared.state();
        if let Walk::Done(at) = state.walk
            && at.elapsed() >= STALE_AFTER
        {
            state.walk = Walk::Refreshing;
            drop(state);
            spawn_walk(&self.shared, Walk::Refreshing);
        }
    }

    /// The number of the latest published list (0: none yet).
    pub fn version(&self) -> u64 {
        self.shared.version.load(Ordering::Acquire)
    }

    /// The latest published list.
    pub fn latest(&self) -> Option<Arc<MatchList>> {
        self.shared
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for FileIndex {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.wake.notify_all();
    }
}

fn spawn_walk(shared: &Arc<Shared>, walk: Walk) {
    let walker = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("file-index-walk".into())
        .spawn(move || walk_tree(&walker, walk));
    if let Err(e) = spawned {
        tracing::warn!("cannot start the file index: {e}");
        shared.state().walk = Walk::Done(Instant::now());
    }
}

/// Walks the tree. The first walk hands each full chunk over at once, so the picker
/// shows entries while it runs; a refresh swaps the whole index in at the end.
fn walk_tree(shared: &Shared, walk: Walk) {
    let root = &shared.root;
    let mut chunk: Vec<Box<str>> = Vec::with_capacity(CHUNK);
    let mut kept: Vec<Arc<[Box<str>]>> = Vec::new();
    let mut entries = 0usize;
    let mut capped = false;
    let hand_over = |chunk: &mut Vec<Box<str>>, kept: &mut Vec<Arc<[Box<str>]>>| {
        let full: Arc<[Box<str>]> = std::mem::take(chunk).into();
        if walk == Walk::First {
            let mut state = shared.state();
            state.entries += full.len();
            state.generation += 1;
            state.chunks.push(full);
            drop(state);
            shared.wake.notify_all();
        } else {
            kept.push(full);
        }
    };
    for entry in crate::project_walk::project_walker(root).build().flatten() {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str().filter(|r| !r.is_empty()) else {
            continue;
        };
        if entries == MAX_ENTRIES {
            capped = true;
            break;
        }
        let dir = entry.file_type().is_some_and(|t| t.is_dir());
        let mut path = rel.replace(std::path::MAIN_SEPARATOR, "/");
        if dir {
            path.push('/');
        }
        chunk.push(path.into_boxed_str());
        entries += 1;
        if chunk.len() == CHUNK {
            hand_over(&mut chunk, &mut kept);
        }
    }
    if !chunk.is_empty() {
        hand_over(&mut chunk, &mut kept);
    }
    let mut state = shared.state();
    if walk == Walk::Refreshing {
        state.chunks = kept;
        state.entries = entries;
        state.generation += 1;
    }
    state.capped = capped;
    state.walk = Walk::Done(Instant::now());
    drop(state);
    shared.wake.notify_all();
}

/// Waits for a new query or a grown index, ranks, publishes; until the index drops.
fn match_loop(shared: &Shared) {
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    loop {
        let job = {
            let mut state = shared.state();
            loop {
                if shared.stop.load(Ordering::Acquire) {
                    return;
                }
                match due(&state) {
                    Due::Now => break,
                    Due::Never => {
                        state = shared
                            .wake
                            .wait(state)
                            .unwrap_or_else(PoisonError::into_inner);
                    }
                    Due::In(wait) => {
                        state = shared
                            .wake
                            .wait_timeout(state, wait)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                    }
                }
            }
            let Some((number, query)) = state.query.clone() else {
                continue;
            };
            let walking = !matches!(state.walk, Walk::Done(_));
            state.answered = Some((number, state.generation, walking));
            state.last_match = Some(Instant::now());
            Job {
                query,
                chunks: state.chunks.clone(),
                entries: state.entries,
                walking,
                capped: state.capped,
            }
        };
        let list = rank(&job, &mut matcher);
        *shared
            .published
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(list));
        shared.version.fetch_add(1, Ordering::AcqRel);
        (shared.on_update)();
    }
}

/// When the matcher has work.
enum Due {
    Now,
    In(Duration),
    Never,
}

fn due(state: &State) -> Due {
    let Some((number, _)) = &state.query else {
        return Due::Never;
    };
    let walking = !matches!(state.walk, Walk::Done(_));
    match state.answered {
        None => Due::Now,
        Some((answered, _, _)) if answered != *number => Due::Now,
        // The walk ended since: the final answer.
        Some((_, _, true)) if !walking => Due::Now,
        Some((_, generation, _)) if generation != state.generation => {
            let since = state.last_match.map_or(REMATCH_EVERY, |t| t.elapsed());
            if since >= REMATCH_EVERY {
                Due::Now
            } else {
                Due::In(REMATCH_EVERY - since)
            }
        }
        Some(_) => Due::Never,
    }
}

/// What one ranking works on (a snapshot; the walk goes on meanwhile).
struct Job {
    query: String,
    chunks: Vec<Arc<[Box<str>]>>,
    entries: usize,
    walking: bool,
    capped: bool,
}

/// The best entries for the job's query: by score, then shorter paths, then by name.
/// An empty query ranks every entry alike, so the shallowest come first.
fn rank(job: &Job, matcher: &mut Matcher) -> MatchList {
    let pattern = Pattern::parse(&job.query, CaseMatching::Smart, Normalization::Smart);
    let mut buf = Vec::new();
    let mut hits: Vec<(u32, &str)> = Vec::new();
    for path in job.chunks.iter().flat_map(|c| c.iter()) {
        if let Some(score) = pattern.score(Utf32Str::new(path, &mut buf), matcher) {
            hits.push((score, path));
        }
    }
    let matched = hits.len();
    let order = |a: &(u32, &str), b: &(u32, &str)| {
        b.0.cmp(&a.0)
            .then_with(|| depth(a.1).cmp(&depth(b.1)))
            .then_with(|| a.1.len().cmp(&b.1.len()))
            .then_with(|| a.1.cmp(b.1))
    };
    if hits.len() > MAX_MATCHES {
        hits.select_nth_unstable_by(MAX_MATCHES - 1, order);
        hits.truncate(MAX_MATCHES);
    }
    hits.sort_unstable_by(order);
    let items = hits
        .into_iter()
        .map(|(_, path)| {
            let mut indices = Vec::new();
            pattern.indices(Utf32Str::new(path, &mut buf), matcher, &mut indices);
            indices.sort_unstable();
            indices.dedup();
            Matched {
                path: path.to_string(),
                indices,
            }
        })
        .collect();
    MatchList {
        query: job.query.clone(),
        items,
        matched,
        indexed: job.entries,
        walking: job.walking,
        capped: job.capped,
    }
}

/// Folders above a path (a folder's own trailing `/` not counted).
fn depth(path: &str) -> usize {
    path.trim_end_matches('/').matches('/').count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::temp_tree;
    use std::sync::mpsc;

    /// Waits (with a deadline) for a published list answering `query` after the walk.
    fn settled(index: &FileIndex, rx: &mpsc::Receiver<()>, query: &str) -> Arc<MatchList> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(list) = index.latest()
                && list.query == query
                && !list.walking
            {
                return list;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no settled list for {query:?}");
            let _ = rx.recv_timeout(left.min(Duration::from_millis(200)));
        }
    }

    fn tree() -> tempfile::TempDir {
        temp_tree(&[
            ("src/main.rs", "x"),
            ("src/tui/app.rs", "x"),
            ("src/tui/composer.rs", "x"),
            ("docs/ARCHITECTURE.md", "x"),
            ("README.md", "x"),
            ("target/debug/junk.rs", "x"),
            ("with space/notes.txt", "x"),
            (".gitignore", "target/\n"),
            (".git/config", "x"),
        ])
    }

    fn start(root: &Path) -> (FileIndex, mpsc::Receiver<()>) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let index = FileIndex::start(root, move || {
            let _ = tx.lock().unwrap().send(());
        });
        (index, rx)
    }

    fn paths(list: &MatchList) -> Vec<&str> {
        list.items.iter().map(|m| m.path.as_str()).collect()
    }

    #[test]
    fn ranks_fuzzy_matches_best_first_and_skips_ignored_files() {
        let dir = tree();
        let (index, rx) = start(dir.path());
        index.search("comp");
        let list = settled(&index, &rx, "comp");
        assert_eq!(paths(&list), ["src/tui/composer.rs"]);
        assert_eq!(list.items[0].indices, [8, 9, 10, 11]);
        index.search("");
        let all = settled(&index, &rx, "");
        let shown = paths(&all);
        // Shallow first; folders end with `/`; ignored and .git entries never appear.
        assert_eq!(&shown[..2], ["src/", "docs/"]);
        assert!(shown.contains(&"with space/notes.txt"));
        assert!(
            !shown
                .iter()
                .any(|p| p.starts_with("target") || p.contains(".git/"))
        );
        assert_eq!(all.matched, all.indexed);
        index.search("rs");
        let rs = settled(&index, &rx, "rs");
        assert_eq!(rs.items[0].path, "src/main.rs");
    }

    #[test]
    fn smart_case_and_no_match() {
        let dir = tree();
        let (index, rx) = start(dir.path());
        index.search("ARCH");
        assert_eq!(
            paths(&settled(&index, &rx, "ARCH")),
            ["docs/ARCHITECTURE.md"]
        );
        index.search("Zq9");
        let none = settled(&index, &rx, "Zq9");
        assert!(none.items.is_empty());
        assert_eq!(none.matched, 0);
    }

    #[test]
    fn a_stale_index_is_walked_again_and_the_old_one_answers_meanwhile() {
        let dir = tree();
        let (index, rx) = start(dir.path());
        index.search("fresh");
        assert!(settled(&index, &rx, "fresh").items.is_empty());
        std::fs::write(dir.path().join("fresh.txt"), "x").unwrap();
        // Make the index old, then ask again.
        if let Walk::Done(at) = &mut index.shared.state().walk {
            *at -= STALE_AFTER;
        }
        index.refresh_if_stale();
        index.search("fresh.");
        assert_eq!(paths(&settled(&index, &rx, "fresh.")), ["fresh.txt"]);
    }

    #[test]
    fn hostile_names_are_ranked_without_harm() {
        let dir = temp_tree(&[
            ("\u{9b}[31mred", "x"),
            ("ünïcödé.txt", "x"),
            ("tab\there", "x"),
            ("new\nline", "x"),
            ("日本語.md", "x"),
        ]);
        let (index, rx) = start(dir.path());
        index.search("ü");
        let list = settled(&index, &rx, "ü");
        assert_eq!(paths(&list), ["ünïcödé.txt"]);
        index.search("語");
        assert_eq!(paths(&settled(&index, &rx, "語")), ["日本語.md"]);
        index.search("");
        assert_eq!(settled(&index, &rx, "").indexed, 5);
    }
}
