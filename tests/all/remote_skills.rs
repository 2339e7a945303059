//! Remote skill roots end to end: archives served from 127.0.0.1 are downloaded, cached,
//! revalidated with ETag / Last-Modified, refreshed when they change, used from the cache
//! when the server is down or stalls (start-up waits ~2 s for it, not the download
//! timeout), and refused when malicious (path traversal, links, oversize) or not archives
//! at all.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use harness9::skills::remote::{
    RemoteError, RemoteLimits, SyncOutcome, SyncedRoot, sync_for_session, sync_remote_root,
};
use harness9::skills::{Catalog, DiscoveryOptions, RootKind};

use crate::support::{assert_has, skill_md};

// ---------------------------------------------------------------------------------------
// A tiny file server that honours conditional requests and records them
// ---------------------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Route {
    body: Vec<u8>,
    etag: Option<String>,
    last_modified: Option<String>,
    /// Overrides 200 (conditional requests still get 304 first).
    status: Option<u16>,
    /// Send no Content-Length: the body ends when the connection closes.
    no_length: bool,
    /// Read the request, then never answer (until the client hangs up).
    hang: bool,
}

#[derive(Debug, Clone)]
struct Seen {
    path: String,
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
    status: u16,
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Route>,
    seen: Vec<Seen>,
}

struct FileServer {
    addr: std::net::SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FileServer {
    fn start() -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                std::thread::spawn(move || serve(conn, &st));
            }
        });
        FileServer {
            addr,
            state,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn put(&self, path: &str, route: Route) {
        self.state
            .lock()
            .unwrap()
            .routes
            .insert(path.to_string(), route);
    }

    fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// Closes the listening socket: later connections are refused.
    fn shut_down(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.shut_down();
    }
}

fn serve(conn: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let if_none_match = headers.get("if-none-match").cloned();
    let if_modified_since = headers.get("if-modified-since").cloned();
    let route = state.lock().unwrap().routes.get(&path).cloned();
    if route.as_ref().is_some_and(|r| r.hang) {
        state.lock().unwrap().seen.push(Seen {
            path,
            if_none_match,
            if_modified_since,
            status: 0,
        });
        // Blocks until the client gives up or its runtime goes away.
        let _ = reader.read_to_end(&mut Vec::new());
        return;
    }
    let (status, route) = match route {
        None => (404, Route::default()),
        Some(r) => {
            let fresh = match (&if_none_match, &r.etag) {
                (Some(sent), Some(etag)) => sent == etag,
                (None, _) => if_modified_since.is_some() && if_modified_since == r.last_modified,
                _ => false,
            };
            (if fresh { 304 } else { r.status.unwrap_or(200) }, r)
        }
    };
    state.lock().unwrap().seen.push(Seen {
        path,
        if_none_match,
        if_modified_since,
        status,
    });
    let mut head = format!("HTTP/1.1 {status} X\r\nConnection: close\r\n");
    if let Some(e) = &route.etag {
        head.push_str(&format!("ETag: {e}\r\n"));
    }
    if let Some(m) = &route.last_modified {
        head.push_str(&format!("Last-Modified: {m}\r\n"));
    }
    let body: &[u8] = if status == 304 { &[] } else { &route.body };
    if !route.no_length || status == 304 {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let mut conn = conn;
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body);
    let _ = conn.flush();
    let _ = conn.shutdown(std::net::Shutdown::Write);
    // Drain what the client may still send so the close is clean.
    let _ = reader.read_to_end(&mut Vec::new());
}

// ---------------------------------------------------------------------------------------
// Archives
// ---------------------------------------------------------------------------------------

fn skill_bytes(name: &str) -> Vec<u8> {
    skill_md(
        name,
        &format!("The {name} skill, from afar."),
        "",
        &format!("Do {name}.\n"),
    )
    .into_bytes()
}

/// (path inside the archive, contents, executable)
type Entry = (String, Vec<u8>, bool);

fn skills(names: &[&str]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = names
        .iter()
        .map(|n| (format!("pack/{n}/SKILL.md"), skill_bytes(n), false))
        .collect();
    entries.push((
        format!("pack/{}/scripts/run.sh", names[0]),
        b"#!/bin/sh\necho hi\n".to_vec(),
        true,
    ));
    entries
}

fn zip_of(entries: &[Entry]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, data, exec) in entries {
        let opts = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(if *exec { 0o755 } else { 0o644 });
        w.start_file(path.as_str(), opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A tar whose names are written raw into the header (so `..` and absolute names get
/// through, as a malicious archive would have them).
fn tar_of(entries: &[Entry]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data, exec) in entries {
        let mut h = tar::Header::new_gnu();
        raw_name(&mut h, path);
        h.set_size(data.len() as u64);
        h.set_mode(if *exec { 0o755 } else { 0o644 });
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        b.append(&h, data.as_slice()).unwrap();
    }
    b.into_inner().unwrap()
}

fn raw_name(h: &mut tar::Header, path: &str) {
    let name = &mut h.as_gnu_mut().unwrap().name;
    name.fill(0);
    name[..path.len()].copy_from_slice(path.as_bytes());
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn served(body: Vec<u8>, etag: &str) -> Route {
    Route {
        body,
        etag: Some(etag.to_string()),
        ..Route::default()
    }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// A server serving `/skills.zip` (the skill alpha, ETag `"v1"`), fresh folders, the
/// archive's URL, and its first sync into them.
async fn alpha_zip_synced_once() -> (FileServer, SkillsHome, String, SyncedRoot) {
    let server = FileServer::start();
    server.put("/skills.zip", served(zip_of(&skills(&["alpha"])), "\"v1\""));
    let dirs = SkillsHome::new();
    let url = server.url("/skills.zip");
    let first = dirs.sync(&url, &RemoteLimits::default()).await.unwrap();
    (server, dirs, url, first)
}

/// A harness9 home (its remote skills cache) and a project, in one temporary folder.
struct SkillsHome {
    tmp: tempfile::TempDir,
}

impl SkillsHome {
    fn new() -> SkillsHome {
        SkillsHome {
            tmp: tempfile::tempdir().unwrap(),
        }
    }
    fn cache(&self) -> PathBuf {
        self.tmp.path().join("home/cache/skills")
    }
    /// Syncs the remote root at `url` into the cache under `limits`.
    async fn sync(&self, url: &str, limits: &RemoteLimits) -> Result<SyncedRoot, RemoteError> {
        sync_remote_root(url, &self.cache(), limits).await
    }
    fn discover(&self, remote: &Path) -> Catalog {
        let work = self.tmp.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        Catalog::discover(&DiscoveryOptions {
            workdir: work,
            project_root: std::path::PathBuf::new(),
            harness9_home: self.tmp.path().join("home"),
            remote_dirs: vec![remote.to_path_buf()],
            plugins: Vec::new(),
            ..DiscoveryOptions::default()
        })
    }
}

/// Waits until `done` holds, failing the test after `limit`.
fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn names(catalog: &Catalog) -> Vec<String> {
    catalog.skills().iter().map(|s| s.name.clone()).collect()
}

fn all_paths(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_zip_of_two_skills_is_downloaded_extracted_and_discovered_as_remote() {
    let server = FileServer::start();
    server.put(
        "/skills.zip",
        served(zip_of(&skills(&["alpha", "beta"])), "\"z1\""),
    );
    let dirs = SkillsHome::new();
    let url = server.url("/skills.zip");
    let synced = dirs.sync(&url, &RemoteLimits::default()).await.unwrap();
    assert_eq!(synced.outcome, SyncOutcome::Downloaded);
    assert!(synced.warnings.is_empty(), "{:?}", synced.warnings);
    assert!(synced.dir.starts_with(dirs.cache()), "{:?}", synced.dir);

    let catalog = dirs.discover(&synced.dir);
    assert_eq!(
        names(&catalog),
        ["alpha", "beta"],
        "{:?}",
        catalog.warnings()
    );
    for s in catalog.skills() {
        assert_eq!(s.root.kind, RootKind::Remote);
        assert_eq!(s.root.kind.as_str(), "remote");
        assert_eq!(s.load_body().unwrap(), format!("Do {}.", s.name));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = synced.dir.join("pack/alpha/scripts/run.sh");
        let mode = std::fs::metadata(&script).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "the executable bit is kept: {mode:o}");
        let md = synced.dir.join("pack/alpha/SKILL.md");
        let mode = std::fs::metadata(&md).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0, "plain files are not executable: {mode:o}");
    }
}

#[tokio::test]
async fn a_tar_gz_a_tgz_and_a_plain_tar_are_extracted_too() {
    let server = FileServer::start();
    let tar = tar_of(&skills(&["gamma", "delta"]));
    server.put("/s.tar.gz", served(gz(&tar), "\"g\""));
    server.put("/s.tgz", served(gz(&tar), "\"t\""));
    server.put("/s.tar", served(tar.clone(), "\"p\""));
    // The format comes from the bytes, not the name.
    server.put("/download?id=7", served(gz(&tar), "\"q\""));
    let dirs = SkillsHome::new();
    let mut seen_dirs = Vec::new();
    for path in ["/s.tar.gz", "/s.tgz", "/s.tar", "/download?id=7"] {
        let synced = dirs
            .sync(&server.url(path), &RemoteLimits::default())
            .await
            .unwrap();
        assert_eq!(synced.outcome, SyncOutcome::Downloaded, "{path}");
        let catalog = dirs.discover(&synced.dir);
        assert_eq!(names(&catalog), ["delta", "gamma"], "{path}");
        assert!(
            catalog
                .skills()
                .iter()
                .all(|s| s.root.kind == RootKind::Remote)
        );
        seen_dirs.push(synced.dir);
    }
    seen_dirs.sort();
    seen_dirs.dedup();
    assert_eq!(seen_dirs.len(), 4, "one cache folder per URL");
}

#[tokio::test]
async fn the_second_sync_revalidates_with_if_none_match_and_keeps_the_cache() {
    let (server, dirs, url, first) = alpha_zip_synced_once().await;
    let limits = RemoteLimits::default();
    let second = dirs.sync(&url, &limits).await.unwrap();
    assert_eq!(second.outcome, SyncOutcome::NotModified);
    assert_eq!(second.dir, first.dir, "same folder, no re-extraction");
    assert!(second.warnings.is_empty());
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|s| s.path == "/skills.zip"), "{seen:?}");
    assert_eq!(
        seen[0].if_none_match, None,
        "nothing cached on the first run"
    );
    assert_eq!(seen[0].status, 200);
    assert_eq!(seen[1].if_none_match.as_deref(), Some("\"v1\""));
    assert_eq!(seen[1].status, 304);
    assert_eq!(names(&dirs.discover(&second.dir)), ["alpha"]);
}

#[tokio::test]
async fn last_modified_is_sent_back_as_if_modified_since() {
    let server = FileServer::start();
    let stamp = "Wed, 21 Oct 2015 07:28:00 GMT";
    server.put(
        "/s.tar",
        Route {
            body: tar_of(&skills(&["alpha"])),
            last_modified: Some(stamp.to_string()),
            ..Route::default()
        },
    );
    let dirs = SkillsHome::new();
    let url = server.url("/s.tar");
    let limits = RemoteLimits::default();
    let first = dirs.sync(&url, &limits).await.unwrap();
    let second = dirs.sync(&url, &limits).await.unwrap();
    assert_eq!(second.outcome, SyncOutcome::NotModified);
    assert_eq!(second.dir, first.dir);
    let seen = server.seen();
    assert_eq!(seen[1].if_modified_since.as_deref(), Some(stamp));
    assert_eq!(seen[1].if_none_match, None);
}

#[tokio::test]
async fn a_changed_archive_is_downloaded_again_and_its_new_skill_appears() {
    let (server, dirs, url, first) = alpha_zip_synced_once().await;
    let limits = RemoteLimits::default();
    assert_eq!(names(&dirs.discover(&first.dir)), ["alpha"]);

    server.put(
        "/skills.zip",
        served(zip_of(&skills(&["alpha", "omega"])), "\"v2\""),
    );
    let second = dirs.sync(&url, &limits).await.unwrap();
    assert_eq!(second.outcome, SyncOutcome::Downloaded);
    assert_ne!(second.dir, first.dir, "a fresh folder swapped in");
    assert_eq!(names(&dirs.discover(&second.dir)), ["alpha", "omega"]);
    let seen = server.seen();
    assert_eq!(seen[1].if_none_match.as_deref(), Some("\"v1\""));
    assert_eq!(seen[1].status, 200);

    let third = dirs.sync(&url, &limits).await.unwrap();
    assert_eq!(third.outcome, SyncOutcome::NotModified);
    assert_eq!(third.dir, second.dir);
    assert_eq!(server.seen()[2].if_none_match.as_deref(), Some("\"v2\""));
}

#[tokio::test]
async fn with_the_server_down_the_cache_is_used_with_a_warning() {
    let (mut server, dirs, url, first) = alpha_zip_synced_once().await;
    let limits = RemoteLimits::default();
    server.shut_down();

    let offline = dirs.sync(&url, &limits).await.unwrap();
    assert_eq!(offline.outcome, SyncOutcome::OfflineCache);
    assert_eq!(offline.dir, first.dir);
    assert_eq!(offline.warnings.len(), 1);
    let w = &offline.warnings[0];
    assert_has(w, &[&url, "cached"]);
    assert_eq!(names(&dirs.discover(&offline.dir)), ["alpha"]);

    // The session-level helper gives the same folder and warning.
    let roots = sync_for_session(Some(&url), &dirs.cache(), &limits).await;
    assert_eq!(roots.dirs, [first.dir]);
    assert_eq!(roots.warnings.len(), 1);
}

#[tokio::test]
async fn a_stalled_server_holds_start_up_about_two_seconds_when_a_copy_is_cached() {
    let server = FileServer::start();
    let archive = zip_of(&skills(&["alpha"]));
    server.put("/skills.zip", served(archive.clone(), "\"v1\""));
    let dirs = SkillsHome::new();
    let url = server.url("/skills.zip");
    let limits = RemoteLimits::default();
    assert!(limits.timeout >= Duration::from_secs(60), "{limits:?}");
    let first = dirs.sync(&url, &limits).await.unwrap();

    // The server now accepts the request and never answers.
    server.put(
        "/skills.zip",
        Route {
            hang: true,
            ..served(archive, "\"v2\"")
        },
    );
    let start = Instant::now();
    let synced = dirs.sync(&url, &limits).await.unwrap();
    let waited = start.elapsed();
    assert!(waited < Duration::from_secs(10), "start-up held {waited:?}");
    assert!(waited >= limits.cached_wait, "it did wait {waited:?}");
    assert_eq!(synced.outcome, SyncOutcome::SlowServer);
    assert_eq!(synced.dir, first.dir, "the cached copy");
    assert_eq!(names(&dirs.discover(&synced.dir)), ["alpha"]);
    assert_eq!(synced.warnings.len(), 1, "{:?}", synced.warnings);
    let w = &synced.warnings[0];
    for part in [
        url.as_str(),
        "no answer within 2 s",
        "using the copy cached ",
        " UTC (just now)",
        "in the background",
    ] {
        assert!(w.contains(part), "{w:?} should say {part:?}");
    }
    // The conditional request was sent and is the one left hanging.
    wait_for("the stalled request", Duration::from_secs(10), || {
        server.seen().len() == 2
    });
    let seen = server.seen();
    assert_eq!(seen[1].if_none_match.as_deref(), Some("\"v1\""));
    assert_eq!(seen[1].status, 0, "never answered");

    // A session start behaves the same.
    let start = Instant::now();
    let roots = sync_for_session(Some(&url), &dirs.cache(), &limits).await;
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(roots.dirs, [first.dir]);
    assert!(
        roots.warnings[0].contains("no answer within 2 s"),
        "{roots:?}"
    );
}

#[tokio::test]
async fn a_stalled_server_without_a_cache_is_given_up_after_the_answer_timeout() {
    let server = FileServer::start();
    server.put(
        "/skills.zip",
        Route {
            hang: true,
            ..Route::default()
        },
    );
    let dirs = SkillsHome::new();
    let url = server.url("/skills.zip");
    let defaults = RemoteLimits::default();
    assert!(
        defaults.cached_wait < defaults.answer_timeout
            && defaults.answer_timeout < defaults.timeout,
        "without a cache the wait is longer, and bounded: {defaults:?}"
    );
    let limits = RemoteLimits {
        answer_timeout: Duration::from_secs(3),
        ..defaults
    };
    let start = Instant::now();
    let err = dirs.sync(&url, &limits).await.unwrap_err();
    let waited = start.elapsed();
    assert!(waited >= Duration::from_secs(3), "{waited:?}");
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    assert!(matches!(err, RemoteError::NoAnswer { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("remote skills root {url}: the server sent no answer within 3 s")
    );
    let roots = sync_for_session(Some(&url), &dirs.cache(), &limits).await;
    assert!(roots.dirs.is_empty());
    assert_eq!(
        roots.warnings,
        [format!(
            "remote skills root {url}: the server sent no answer within 3 s; its skills are \
             not loaded"
        )]
    );
}

#[tokio::test]
async fn with_the_server_down_and_no_cache_it_is_a_clear_error_and_a_session_warning() {
    let mut server = FileServer::start();
    let url = server.url("/skills.zip");
    server.shut_down();
    let dirs = SkillsHome::new();
    let limits = RemoteLimits::default();
    let err = dirs.sync(&url, &limits).await.unwrap_err();
    assert!(matches!(err, RemoteError::Unreachable { .. }), "{err:?}");
    let text = err.to_string();
    assert_has(&text, &[&url, "cannot download"]);

    let roots = sync_for_session(Some(&url), &dirs.cache(), &limits).await;
    assert!(roots.dirs.is_empty());
    assert_eq!(roots.warnings.len(), 1);
    assert!(
        roots.warnings[0].contains("not loaded"),
        "{:?}",
        roots.warnings
    );
    assert_eq!(
        sync_for_session(None, &dirs.cache(), &limits).await,
        Default::default(),
        "no remote root: nothing to do"
    );
}

#[tokio::test]
async fn http_errors_are_named_and_a_failed_refresh_keeps_the_good_cache() {
    let server = FileServer::start();
    let dirs = SkillsHome::new();
    let limits = RemoteLimits::default();
    let missing = server.url("/missing.zip");
    let err = dirs.sync(&missing, &limits).await.unwrap_err();
    assert!(
        matches!(err, RemoteError::Status { status: 404, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains(&missing), "{err}");

    let url = server.url("/skills.zip");
    server.put("/skills.zip", served(zip_of(&skills(&["alpha"])), "\"v1\""));
    let good = dirs.sync(&url, &limits).await.unwrap();
    // The server now sends something broken: the refresh fails, the cache stays.
    server.put(
        "/skills.zip",
        served(b"<html>oops</html>".to_vec(), "\"v2\""),
    );
    let after = dirs.sync(&url, &limits).await.unwrap();
    assert_eq!(after.outcome, SyncOutcome::OfflineCache);
    assert_eq!(after.dir, good.dir);
    assert!(
        after.warnings[0].contains("not a .zip"),
        "{:?}",
        after.warnings
    );
    assert_eq!(names(&dirs.discover(&after.dir)), ["alpha"]);
    // And the next revalidation still sends the good copy's ETag.
    server.put("/skills.zip", served(Vec::new(), "\"v1\""));
    let again = dirs.sync(&url, &limits).await.unwrap();
    assert_eq!(again.outcome, SyncOutcome::NotModified);
    assert_eq!(again.dir, good.dir);
}

#[tokio::test]
async fn path_traversal_absolute_and_link_entries_are_skipped_and_nothing_lands_outside() {
    let server = FileServer::start();
    let dirs = SkillsHome::new();
    let outside = dirs.tmp.path().join("outside");
    let abs = format!("{}/abs/SKILL.md", outside.display());

    let mut entries = skills(&["alpha"]);
    entries.push(("../evil/SKILL.md".into(), skill_bytes("evil"), false));
    entries.push((
        "pack/../../../evil2/SKILL.md".into(),
        skill_bytes("evil2"),
        false,
    ));
    entries.push((abs.clone(), skill_bytes("abs"), false));
    let mut tar = tar::Builder::new(Vec::new());
    for (path, data, _) in &entries {
        let mut h = tar::Header::new_gnu();
        raw_name(&mut h, path);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tar.append(&h, data.as_slice()).unwrap();
    }
    for (kind, name) in [
        (tar::EntryType::Symlink, "pack/alpha/link"),
        (tar::EntryType::Link, "pack/alpha/hard"),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        raw_name(&mut h, name);
        h.as_gnu_mut().unwrap().linkname[..4].copy_from_slice(b"/etc");
        h.set_size(0);
        h.set_cksum();
        tar.append(&h, std::io::empty()).unwrap();
    }
    server.put(
        "/bad.tar.gz",
        served(gz(&tar.into_inner().unwrap()), "\"b\""),
    );

    let mut zip_entries = skills(&["beta"]);
    zip_entries.push(("../evil3/SKILL.md".into(), skill_bytes("evil3"), false));
    zip_entries.push((abs.clone(), skill_bytes("abs"), false));
    let zip = {
        use zip::write::SimpleFileOptions;
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (path, data, _) in &zip_entries {
            w.start_file(path.as_str(), SimpleFileOptions::default())
                .unwrap();
            w.write_all(data).unwrap();
        }
        w.add_symlink("pack/beta/link", "/etc", SimpleFileOptions::default())
            .unwrap();
        w.finish().unwrap().into_inner()
    };
    server.put("/bad.zip", served(zip, "\"z\""));

    for (path, expected, refused) in [
        (
            "/bad.tar.gz",
            "alpha",
            vec![
                "../evil/SKILL.md",
                "evil2",
                abs.as_str(),
                "pack/alpha/link",
                "pack/alpha/hard",
            ],
        ),
        (
            "/bad.zip",
            "beta",
            vec!["../evil3/SKILL.md", abs.as_str(), "pack/beta/link"],
        ),
    ] {
        let url = server.url(path);
        let synced = dirs.sync(&url, &RemoteLimits::default()).await.unwrap();
        assert_eq!(synced.outcome, SyncOutcome::Downloaded);
        assert_eq!(names(&dirs.discover(&synced.dir)), [expected], "{path}");
        assert_eq!(
            synced.warnings.len(),
            refused.len(),
            "{:?}",
            synced.warnings
        );
        for (w, name) in synced.warnings.iter().zip(&refused) {
            assert!(w.contains(&url), "{w}");
            assert!(w.contains(name), "{w} should name {name}");
            assert!(w.contains("skipped archive entry"), "{w}");
        }
        assert!(
            synced.warnings[0].contains("outside the cache folder"),
            "{:?}",
            synced.warnings
        );
    }
    // Nothing was written outside the extracted trees, and no link exists anywhere.
    assert!(!outside.exists());
    for p in all_paths(dirs.tmp.path()) {
        let text = p.strip_prefix(dirs.tmp.path()).unwrap().to_string_lossy();
        assert!(!text.contains("evil") && !text.contains("abs"), "{text}");
        assert!(!p.is_symlink(), "{text}");
    }
}

#[tokio::test]
async fn oversize_archives_are_refused_with_the_url_and_the_limit_named() {
    let server = FileServer::start();
    let dirs = SkillsHome::new();
    // 2 MB of zeros: a small download that unpacks large.
    let mut entries = skills(&["alpha"]);
    entries.push(("pack/alpha/big.txt".into(), vec![0u8; 2_000_000], false));
    let zip = zip_of(&entries);
    assert!(zip.len() < 100_000, "{}", zip.len());
    server.put("/big.zip", served(zip.clone(), "\"1\""));
    server.put(
        "/big-unsized.zip",
        Route {
            no_length: true,
            ..served(zip.clone(), "\"2\"")
        },
    );

    let small_download = RemoteLimits {
        max_download_bytes: 1000,
        ..RemoteLimits::default()
    };
    for path in ["/big.zip", "/big-unsized.zip"] {
        let url = server.url(path);
        let err = dirs.sync(&url, &small_download).await.unwrap_err();
        assert!(
            matches!(err, RemoteError::DownloadTooLarge { limit: 1000, .. }),
            "{path}: {err:?}"
        );
        let text = err.to_string();
        assert_has(&text, &[&url, "1000 bytes"]);
    }

    let url = server.url("/big.zip");
    let small_unpacked = RemoteLimits {
        max_extracted_bytes: 1_000_000,
        ..RemoteLimits::default()
    };
    let err = dirs.sync(&url, &small_unpacked).await.unwrap_err();
    assert!(
        matches!(
            err,
            RemoteError::ExtractedTooLarge {
                limit: 1_000_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains(&url) && err.to_string().contains("1000000 bytes"));

    let few_entries = RemoteLimits {
        max_entries: 2,
        ..RemoteLimits::default()
    };
    for path in ["/big.zip", "/s.tar"] {
        if path == "/s.tar" {
            server.put(path, served(tar_of(&entries), "\"t\""));
        }
        let url = server.url(path);
        let err = dirs.sync(&url, &few_entries).await.unwrap_err();
        assert!(
            matches!(err, RemoteError::TooManyEntries { limit: 2, .. }),
            "{path}: {err:?}"
        );
        assert!(err.to_string().contains("limit of 2 entries"), "{err}");
    }
    // A refused archive leaves nothing behind but empty cache folders.
    let files: Vec<PathBuf> = all_paths(&dirs.cache())
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    assert!(files.is_empty(), "{files:?}");
}

#[tokio::test]
async fn a_body_that_is_not_an_archive_is_a_clear_error() {
    let server = FileServer::start();
    server.put(
        "/skills.zip",
        served(b"<!DOCTYPE html><title>Login</title>".to_vec(), "\"h\""),
    );
    let dirs = SkillsHome::new();
    let url = server.url("/skills.zip");
    let err = dirs.sync(&url, &RemoteLimits::default()).await.unwrap_err();
    assert!(matches!(err, RemoteError::NotAnArchive { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&url)
            && text.contains("not a .zip, .tar.gz/.tgz or .tar archive")
            && text.contains("<!DOCTYPE html>"),
        "{text}"
    );

    // A gzip that holds no tar is refused, not unpacked as an empty archive.
    server.put("/x.tgz", served(gz(b"hello, not a tar at all"), "\"x\""));
    let url = server.url("/x.tgz");
    let err = dirs.sync(&url, &RemoteLimits::default()).await.unwrap_err();
    assert!(matches!(err, RemoteError::NotAnArchive { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("a gzip file that does not hold a tar archive (it starts with \"hello"),
        "{err}"
    );

    let err = dirs
        .sync("ftp://example.com/s.zip", &RemoteLimits::default())
        .await
        .unwrap_err();
    assert!(matches!(err, RemoteError::NotHttp { .. }), "{err:?}");
}
