//! The session store: the files under `$HARNESS9_HOME/sessions/`. It creates session
//! files and opens them for appending, finds a session by id or prefix across every
//! project, lists and summarises them, and removes old ones (by age, or the oldest
//! until a total size cap holds).
//!
//! It owns the folder layout's use (names come from [`super::layout`]) and the rules for
//! finding and pruning. It must not know the records' meaning beyond the header, nor how
//! a frontend shows a listing.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use super::error::{FindError, IoAction, MAX_CANDIDATES, SessionError};
use super::layout::{EXTENSION, create_private_dir, project_dir_name};
use super::reader::{SessionSummary, summary};
use super::record::{Header, SessionId};
use super::writer::SessionWriter;

/// Where session files live: `<home>/sessions/<project-dir>/<id>.jsonl`.
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
}

/// Which sessions a listing covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListScope {
    /// The sessions filed under this project (a path from [`super::project_of`]).
    Project(PathBuf),
    /// Every project's.
    All,
}

/// A session file as the folder listing sees it (no content read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The id (the file's name).
    pub id: SessionId,
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Its last modification, milliseconds since the Unix epoch.
    pub modified_ms: u64,
}

/// What a prune removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// The sessions removed, oldest first.
    pub removed: Vec<SessionId>,
    /// The bytes their files held.
    pub bytes_freed: u64,
}

impl SessionStore {
    /// The store under `home` (`$HARNESS9_HOME`). Nothing is created until a session is.
    pub fn new(home: &Path) -> SessionStore {
        SessionStore {
            root: home.join("sessions"),
        }
    }

    /// `<home>/sessions`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of a project's sessions.
    pub fn project_dir(&self, project: &Path) -> PathBuf {
        self.root.join(project_dir_name(project))
    }

    /// Creates the file of a new session under `header.project` and writes the header.
    /// Fails if the file already exists.
    pub fn create(&self, header: &Header) -> Result<SessionWriter, SessionError> {
        let id = SessionId::parse(header.id.as_str()).ok_or_else(|| SessionError::InvalidId {
            id: header.id.to_string(),
        })?;
        let dir = self.project_dir(&header.project);
        for private in [&self.root, &dir] {
            create_private_dir(private)
                .map_err(|e| SessionError::io(IoAction::Create, private, e))?;
        }
        SessionWriter::create(dir.join(format!("{id}.{EXTENSION}")), header)
    }

    /// The file [`SessionStore::create`] makes for `header` (before it exists).
    pub fn file_for(&self, header: &Header) -> PathBuf {
        self.project_dir(&header.project)
            .join(format!("{}.{EXTENSION}", header.id.as_str()))
    }

    /// Where session `id`'s artifacts live: beside its file (`<id>.artifacts/`), in
    /// whichever project folder holds it, else in `project`'s folder (a session whose
    /// file is not written yet).
    pub fn artifacts_dir(&self, project: &Path, id: &SessionId) -> PathBuf {
        match self.find(id.as_str()) {
            Ok(file) => artifacts_beside(&file),
            Err(_) => {
                artifacts_beside(&self.project_dir(project).join(format!("{id}.{EXTENSION}")))
            }
        }
    }

    /// Opens an existing session file to append to (resume).
    pub fn open_append(&self, path: &Path) -> Result<SessionWriter, SessionError> {
        SessionWriter::open_append(path)
    }

    /// The session whose id is `query` or starts with it, in any project.
    pub fn find(&self, query: &str) -> Result<PathBuf, FindError> {
        let query = query.trim();
        if SessionId::parse(query).is_none() {
            return Err(FindError::InvalidId {
                query: query.to_string(),
            });
        }
        let mut matches: Vec<SessionFile> = self
            .files(ListScope::All)?
            .into_iter()
            .filter(|f| f.id.as_str().starts_with(query))
            .collect();
        // The same id in two folders is one session copied: the newest copy wins.
        matches.sort_by(|a, b| a.id.cmp(&b.id).then(b.modified_ms.cmp(&a.modified_ms)));
        matches.dedup_by(|later, first| later.id == first.id);
        if let Some(exact) = matches.iter().find(|f| f.id.as_str() == query) {
            return Ok(exact.path.clone());
        }
        match matches.len() {
            0 => Err(FindError::NotFound {
                query: query.to_string(),
            }),
            1 => Ok(matches.remove(0).path),
            total => Err(FindError::Ambiguous {
                query: query.to_string(),
                candidates: matches
                    .into_iter()
                    .take(MAX_CANDIDATES)
                    .map(|f| f.id)
                    .collect(),
                total,
            }),
        }
    }

    /// The most recently modified session of `project`, if it has any.
    pub fn latest(&self, project: &Path) -> Result<Option<PathBuf>, SessionError> {
        Ok(self
            .files(ListScope::Project(project.to_path_buf()))?
            .into_iter()
            .max_by(|a, b| a.modified_ms.cmp(&b.modified_ms).then(a.id.cmp(&b.id)))
            .map(|f| f.path))
    }

    /// Summaries of the sessions in `scope`, newest (last modified) first. Files that are
    /// not sessions are left out.
    pub fn list(&self, scope: ListScope) -> Result<Vec<SessionSummary>, SessionError> {
        let mut summaries: Vec<SessionSummary> = self
            .files(scope)?
            .into_iter()
            .filter_map(|f| match summary(&f.path) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!("sessions: {e}");
                    None
                }
            })
            .collect();
        summaries.sort_by(|a, b| {
            b.modified_ms
                .cmp(&a.modified_ms)
                .then_with(|| b.id.cmp(&a.id))
        });
        Ok(summaries)
    }

    /// The session files in `scope`, unsorted; a missing folder holds none.
    pub fn files(&self, scope: ListScope) -> Result<Vec<SessionFile>, SessionError> {
        let dirs = match scope {
            ListScope::Project(project) => vec![self.project_dir(&project)],
            ListScope::All => self.project_dirs()?,
        };
        let mut files = Vec::new();
        for dir in dirs {
            files_in(&dir, &mut files)?;
        }
        Ok(files)
    }

    /// The session files not modified for longer than `older_than` at `now_ms`, oldest
    /// first, that no harness9 is writing: what [`SessionStore::prune`] would remove.
    pub fn stale(
        &self,
        older_than: Duration,
        now_ms: u64,
    ) -> Result<Vec<SessionFile>, SessionError> {
        let age = u64::try_from(older_than.as_millis()).unwrap_or(u64::MAX);
        let cutoff = now_ms.saturating_sub(age);
        let mut stale: Vec<SessionFile> = self
            .files(ListScope::All)?
            .into_iter()
            .filter(|f| f.modified_ms < cutoff)
            .filter(|f| super::lock::writer_of(&f.path).is_none())
            .collect();
        sort_oldest_first(&mut stale);
        Ok(stale)
    }

    /// Removes the sessions not modified for longer than `older_than` at `now_ms`, and
    /// the project folders left empty.
    pub fn prune(&self, older_than: Duration, now_ms: u64) -> Result<PruneReport, SessionError> {
        let stale = self.stale(older_than, now_ms)?;
        self.remove(stale)
    }

    /// Removes the oldest-modified sessions until all of them together take at most
    /// `max_bytes`; never `keep` (the session being written).
    pub fn enforce_cap(
        &self,
        max_bytes: u64,
        keep: Option<&SessionId>,
    ) -> Result<PruneReport, SessionError> {
        let mut files = self.files(ListScope::All)?;
        let mut total: u64 = files.iter().map(|f| f.bytes).sum();
        if total <= max_bytes {
            return Ok(PruneReport::default());
        }
        sort_oldest_first(&mut files);
        let mut doomed = Vec::new();
        for file in files {
            if total <= max_bytes {
                break;
            }
            // Neither this session nor one another harness9 is writing.
            if Some(&file.id) == keep || super::lock::writer_of(&file.path).is_some() {
                continue;
            }
            total = total.saturating_sub(file.bytes);
            doomed.push(file);
        }
        self.remove(doomed)
    }

    /// Removes `files`, then the folders they leave empty.
    fn remove(&self, files: Vec<SessionFile>) -> Result<PruneReport, SessionError> {
        let mut report = PruneReport::default();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for file in files {
            match std::fs::remove_file(&file.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(SessionError::io(IoAction::Remove, &file.path, e)),
            }
            // The session's artifacts go with it.
            let _ = std::fs::remove_dir_all(artifacts_beside(&file.path));
            report.bytes_freed += file.bytes;
            report.removed.push(file.id);
            if let Some(dir) = file.path.parent()
                && !dirs.iter().any(|d| d == dir)
            {
                dirs.push(dir.to_path_buf());
            }
        }
        for dir in dirs {
            let empty = std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_none());
            if empty && dir.starts_with(&self.root) {
                // Another run may have just created a session there: then it stays.
                let _ = std::fs::remove_dir(&dir);
            }
        }
        Ok(report)
    }

    /// Every project folder.
    fn project_dirs(&self) -> Result<Vec<PathBuf>, SessionError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(SessionError::io(IoAction::List, &self.root, e)),
        };
        let mut dirs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| SessionError::io(IoAction::List, &self.root, e))?;
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(entry.path());
            }
        }
        dirs.sort();
        Ok(dirs)
    }
}

/// Oldest modification first; the id (time-ordered) breaks ties.
fn sort_oldest_first(files: &mut [SessionFile]) {
    files.sort_by(|a, b| a.modified_ms.cmp(&b.modified_ms).then(a.id.cmp(&b.id)));
}

/// The artifacts folder of the session whose file is `session_file`: `<id>.artifacts`
/// beside it.
pub fn artifacts_beside(session_file: &Path) -> PathBuf {
    session_file.with_extension("artifacts")
}

/// The `<id>.jsonl` files of one folder; a missing folder holds none.
fn files_in(dir: &Path, out: &mut Vec<SessionFile>) -> Result<(), SessionError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(SessionError::io(IoAction::List, dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| SessionError::io(IoAction::List, dir, e))?;
        let path = entry.path();
        if path.extension().is_none_or(|e| e != EXTENSION) {
            continue;
        }
        let Some(id) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(SessionId::parse)
        else {
            continue;
        };
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        if !metadata.is_file() {
            continue;
        }
        let modified_ms = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        out.push(SessionFile {
            id,
            path,
            bytes: metadata.len(),
            modified_ms,
        });
    }
    Ok(())
}

/// Parses an age such as `30d`, `12h`, `90m` or `2w` (minutes, hours, days, weeks).
pub fn parse_age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let bad = || {
        format!(
            "invalid age {text:?}: give a whole number and a unit (m minutes, h hours, \
             d days, w weeks), e.g. 30d"
        )
    };
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| bad())?;
    let unit_secs: u64 = match unit {
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(bad()),
    };
    n.checked_mul(unit_secs)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("invalid age {text:?}: too long"))
}

/// An age as [`parse_age`] reads it, in the largest unit that divides it.
pub fn format_age(age: Duration) -> String {
    let secs = age.as_secs();
    for (unit, size) in [("w", 604_800), ("d", 86_400), ("h", 3_600)] {
        if secs >= size && secs.is_multiple_of(size) {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{}m", secs / 60)
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use crate::sessions::{temp_store, test_header, test_header_with_id};

    fn set_modified(path: &Path, ms: u64) {
        let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_modified(UNIX_EPOCH + Duration::from_millis(ms))
            .unwrap();
    }

    fn create(store: &SessionStore, id: &str, project: &str) -> PathBuf {
        let header = test_header_with_id(id, project, 1_000);
        store.create(&header).unwrap().path().to_path_buf()
    }

    #[test]
    fn files_are_filed_per_project_with_private_permissions() {
        let (tmp, store) = temp_store();
        let header = test_header("/work/main", 5);
        let path = store.create(&header).unwrap().path().to_path_buf();
        assert_eq!(
            path,
            tmp.path()
                .join("sessions")
                .join(project_dir_name(Path::new("/work/main")))
                .join(format!("{}.jsonl", header.id))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
            assert_eq!(mode(&tmp.path().join("sessions")), 0o700);
        }
        // Never over an existing file.
        let err = store.create(&header).unwrap_err();
        assert!(matches!(err, SessionError::Exists { .. }), "{err}");
    }

    #[test]
    fn find_takes_an_id_or_a_unique_prefix_in_any_project() {
        let (tmp, store) = temp_store();
        let a = create(&store, "20261123-173501-aaaaaa", "/gone/project-a");
        let b = create(&store, "20261123-173501-abbbbb", "/p/b");
        let c = create(&store, "20261124-090000-cccccc", "/p/b");
        assert_eq!(store.find("20261123-173501-aaaaaa").unwrap(), a);
        assert_eq!(store.find("20261123-173501-ab").unwrap(), b);
        assert_eq!(store.find(" 20261124 ").unwrap(), c);
        match store.find("20261123").unwrap_err() {
            FindError::Ambiguous {
                query,
                candidates,
                total,
            } => {
                assert_eq!(query, "20261123");
                assert_eq!(total, 2);
                assert_eq!(
                    candidates,
                    [
                        SessionId::parse("20261123-173501-aaaaaa").unwrap(),
                        SessionId::parse("20261123-173501-abbbbb").unwrap()
                    ]
                );
            }
            other => panic!("{other}"),
        }
        let err = store.find("2027").unwrap_err();
        assert!(matches!(err, FindError::NotFound { .. }));
        assert_eq!(
            err.to_string(),
            "no session matches \"2027\" (harness9 sessions list shows them)"
        );
        assert!(matches!(
            store.find("../x").unwrap_err(),
            FindError::InvalidId { .. }
        ));
        assert!(matches!(
            store.find("").unwrap_err(),
            FindError::InvalidId { .. }
        ));
        // An empty store finds nothing, without an error about the missing folder.
        let empty = SessionStore::new(&tmp.path().join("nothing"));
        assert!(matches!(
            empty.find("2026").unwrap_err(),
            FindError::NotFound { .. }
        ));
    }

    #[test]
    fn ambiguity_lists_at_most_ten_candidates() {
        let (_tmp, store) = temp_store();
        for i in 0..12 {
            create(&store, &format!("20261123-173501-{i:06x}"), "/p");
        }
        let err = store.find("2026").unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("\"2026\" matches 12 sessions; type more of the id:\n  "),
            "{text}"
        );
        assert_eq!(text.lines().count(), 12, "{text}");
        assert!(text.ends_with("… and 2 more"), "{text}");
    }

    #[test]
    fn latest_and_list_follow_the_modification_time() {
        let (_tmp, store) = temp_store();
        let old = create(&store, "20261123-100000-000001", "/p/one");
        let new = create(&store, "20261123-090000-000002", "/p/one");
        let other = create(&store, "20261123-110000-000003", "/p/two");
        set_modified(&old, 1_000_000);
        set_modified(&new, 2_000_000);
        set_modified(&other, 3_000_000);
        assert_eq!(
            store.latest(Path::new("/p/one")).unwrap(),
            Some(new.clone())
        );
        assert_eq!(store.latest(Path::new("/p/none")).unwrap(), None);

        let ids = |scope| -> Vec<String> {
            store
                .list(scope)
                .unwrap()
                .into_iter()
                .map(|s| s.id.to_string())
                .collect()
        };
        assert_eq!(
            ids(ListScope::Project("/p/one".into())),
            ["20261123-090000-000002", "20261123-100000-000001"]
        );
        assert_eq!(
            ids(ListScope::All),
            [
                "20261123-110000-000003",
                "20261123-090000-000002",
                "20261123-100000-000001"
            ]
        );
        // Files that are not sessions are left out of listings.
        std::fs::write(old.with_file_name("20261123-000000-ffffff.jsonl"), "junk\n").unwrap();
        std::fs::write(old.with_file_name("notes.txt"), "x").unwrap();
        assert_eq!(ids(ListScope::Project("/p/one".into())).len(), 2);
        assert!(ids(ListScope::Project("/p/none".into())).is_empty());
    }

    #[test]
    fn prune_removes_sessions_older_than_the_age_and_empty_folders() {
        let (_tmp, store) = temp_store();
        let day = 86_400_000;
        let now = 100 * day;
        let old = create(&store, "20261101-000000-000001", "/p/old");
        let fresh = create(&store, "20261120-000000-000002", "/p/fresh");
        set_modified(&old, now - 40 * day);
        set_modified(&fresh, now - 2 * day);
        // A session's artifacts go with it.
        let old_id = SessionId::parse("20261101-000000-000001").unwrap();
        let artifacts = store.artifacts_dir(Path::new("/p/old"), &old_id);
        assert_eq!(
            artifacts,
            old.with_file_name("20261101-000000-000001.artifacts")
        );
        std::fs::create_dir_all(artifacts.join("blobs")).unwrap();
        std::fs::write(artifacts.join("blobs/1"), "x").unwrap();
        let age = parse_age("30d").unwrap();
        assert_eq!(store.stale(age, now).unwrap().len(), 1);
        let report = store.prune(age, now).unwrap();
        assert_eq!(
            report.removed,
            [SessionId::parse("20261101-000000-000001").unwrap()]
        );
        assert!(report.bytes_freed > 0);
        assert!(!artifacts.exists());
        assert!(!old.exists() && !old.parent().unwrap().exists());
        assert!(fresh.exists());
        assert_eq!(store.prune(age, now).unwrap(), PruneReport::default());
        // Against the real clock, a session written just now is never stale.
        let now_ms = u64::try_from(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap();
        let other = tempfile::tempdir().unwrap();
        let store = SessionStore::new(other.path());
        let live = create(&store, "20261123-000000-000003", "/p/live");
        assert!(
            store
                .prune(parse_age("1m").unwrap(), now_ms)
                .unwrap()
                .removed
                .is_empty()
        );
        assert!(live.exists());
    }

    #[test]
    fn the_cap_removes_the_oldest_but_never_the_kept_one() {
        let (_tmp, store) = temp_store();
        let paths: Vec<PathBuf> = (1..=4)
            .map(|i| create(&store, &format!("20261123-00000{i}-00000{i}"), "/p"))
            .collect();
        for (i, p) in paths.iter().enumerate() {
            set_modified(p, 1_000_000 * (i as u64 + 1));
        }
        let size = std::fs::metadata(&paths[0]).unwrap().len();
        let total = size * 4;
        assert_eq!(
            store.enforce_cap(total, None).unwrap(),
            PruneReport::default()
        );
        // Room for two: the two oldest go, except the kept oldest one; then the next.
        let keep = SessionId::parse("20261123-000001-000001").unwrap();
        let report = store.enforce_cap(size * 2, Some(&keep)).unwrap();
        assert_eq!(
            report.removed,
            [
                SessionId::parse("20261123-000002-000002").unwrap(),
                SessionId::parse("20261123-000003-000003").unwrap()
            ]
        );
        assert_eq!(report.bytes_freed, size * 2);
        assert!(paths[0].exists() && paths[3].exists());
        // Even a cap of nothing keeps the kept one.
        let report = store.enforce_cap(0, Some(&keep)).unwrap();
        assert_eq!(report.removed.len(), 1);
        assert!(paths[0].exists());
    }

    #[test]
    fn ages_parse_in_minutes_hours_days_and_weeks() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("12h"), Ok(Duration::from_secs(12 * 3_600)));
        assert_eq!(parse_age("90m"), Ok(Duration::from_secs(90 * 60)));
        assert_eq!(parse_age(" 2w "), Ok(Duration::from_secs(14 * 86_400)));
        for bad in [
            "",
            "30",
            "d",
            "30x",
            "-3d",
            "3.5d",
            "30 d",
            "99999999999999999999w",
        ] {
            let err = parse_age(bad).unwrap_err();
            assert!(err.starts_with("invalid age"), "{bad}: {err}");
        }
        assert_eq!(format_age(parse_age("2w").unwrap()), "2w");
        assert_eq!(format_age(parse_age("30d").unwrap()), "30d");
        assert_eq!(format_age(parse_age("36h").unwrap()), "36h");
        assert_eq!(format_age(parse_age("90m").unwrap()), "90m");
    }
}
