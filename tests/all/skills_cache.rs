//! The discovery cache (`$HARNESS9_HOME/cache/skills-index`) never changes what
//! discovery finds: over the shipped corpus and over generated trees, after every kind
//! of change, the cached catalog (skills, order, shadowing, warnings, invalid files,
//! index) equals an uncached discovery's, and a warm run reads no `SKILL.md` byte.
//!
//! Files changed within 2 s of a run are never cached, so these tests wait until the
//! trees they build are that old before they expect cache hits (a wait on the files'
//! own timestamps, not a guess).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use harness9::skills::{Catalog, DiscoveryOptions, WarningKind};

use crate::support::{corpus_dir, skill_md, write};

/// Longer than the cache's racy window (2 s).
const SETTLED_AFTER: Duration = Duration::from_millis(2_100);

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i128
}

/// The latest mtime or ctime of anything below `dir` (links not followed), in ns.
fn newest_change(dir: &Path) -> i128 {
    let meta = std::fs::symlink_metadata(dir).unwrap();
    let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
    let mut newest = ns(meta.mtime(), meta.mtime_nsec()).max(ns(meta.ctime(), meta.ctime_nsec()));
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir).unwrap() {
            newest = newest.max(newest_change(&entry.unwrap().path()));
        }
    }
    newest
}

/// Waits until nothing below `dirs` changed in the last [`SETTLED_AFTER`].
fn settle(dirs: &[&Path]) {
    let newest = dirs.iter().map(|d| newest_change(d)).max().unwrap();
    let ready = newest + SETTLED_AFTER.as_nanos() as i128;
    let wait = ready - now_ns();
    if wait > 0 {
        std::thread::sleep(Duration::from_nanos(wait as u64));
    }
    assert!(now_ns() >= ready);
}

fn options(flags: &[PathBuf], home: &Path, work: &Path) -> DiscoveryOptions {
    DiscoveryOptions {
        flag_dirs: flags.to_vec(),
        workdir: work.to_path_buf(),
        project_root: std::path::PathBuf::new(),
        harness9_home: home.to_path_buf(),
        user_home: None,
        remote_dirs: Vec::new(),
        plugins: Vec::new(),
    }
}

/// Discovers with the cache and without it; asserts the catalogs are the same and the
/// stats add up. Returns the cached catalog.
fn cached_equals_uncached(options: &DiscoveryOptions, what: &str) -> Catalog {
    let cached = Catalog::discover(options);
    let plain = Catalog::discover_uncached(options);
    assert_eq!(cached.skills(), plain.skills(), "{what}: skills");
    assert_eq!(cached.shadowed(), plain.shadowed(), "{what}: shadowed");
    assert_eq!(cached.invalid(), plain.invalid(), "{what}: invalid");
    assert_eq!(cached.warnings(), plain.warnings(), "{what}: warnings");
    assert_eq!(
        cached.index(8_000).text,
        plain.index(8_000).text,
        "{what}: index"
    );
    let (c, p) = (cached.stats(), plain.stats());
    assert_eq!(c.roots_searched, p.roots_searched, "{what}: roots");
    assert_eq!(c.dirs_visited, p.dirs_visited, "{what}: directories");
    assert_eq!(c.files_read + c.cache_hits, p.files_read, "{what}: {c:?}");
    assert_eq!((p.cache_hits, p.dirs_cached), (0, 0), "{what}: {p:?}");
    if c.cache_hits == 0 {
        assert_eq!(c.bytes_read, p.bytes_read, "{what}: bytes read");
    }
    assert!(c.bytes_read <= p.bytes_read, "{what}: {c:?} {p:?}");
    cached
}

#[test]
#[ignore = "needs the skills corpus (../shared/corpus/skills or $HARNESS9_SKILLS_CORPUS); .ci/run runs it with --ignored"]
fn the_corpus_discovered_through_the_cache_is_the_same_and_a_warm_run_reads_nothing() {
    let dir = corpus_dir();
    settle(&[&dir]);
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(&[dir], &tmp.path().join("home"), tmp.path());
    let cold = cached_equals_uncached(&opts, "cold");
    assert_eq!(cold.stats().files_read, 247);
    assert_eq!(cold.stats().cache_hits, 0);
    let cache_file = tmp.path().join("home/cache/skills-index");
    let written = std::fs::read(&cache_file).unwrap();
    let warm = cached_equals_uncached(&opts, "warm");
    let s = warm.stats();
    assert_eq!(
        (s.files_read, s.bytes_read, s.cache_hits),
        (0, 0, 247),
        "{s:?}"
    );
    assert_eq!(s.dirs_cached, s.dirs_visited, "{s:?}");
    // Nothing changed: the file is not written again.
    assert_eq!(std::fs::read(&cache_file).unwrap(), written);
    // Warnings (the corpus shadows four names) are reported on every run.
    assert!(!warm.warnings().is_empty());
    assert_eq!(warm.warnings(), cold.warnings());
}

fn skill_text(name: &str, description: &str) -> String {
    skill_md(name, description, "", &format!("\nBody of {name}.\n"))
}

/// Two flag roots: `a` (categories, a linked skill, a YAML fallback, two invalid files —
/// no description, a name with spaces —, a folder without skills) and `b` (a skill shadowed by `a`'s).
fn build_tree(base: &Path) {
    let a = base.join("a");
    for cat in ["cat1", "cat2"] {
        for i in 0..5 {
            let name = format!("{cat}-s{i}");
            write(
                &a.join(cat).join(&name).join("SKILL.md"),
                &skill_text(&name, &format!("Use for {name} work")),
            );
        }
    }
    let colon = "---\nname: colon\ndescription: Use when: deploying\n---\nbody\n";
    let skills = [
        (
            "a/.curated/deep/x/hidden",
            skill_text("hidden", "A hidden one"),
        ),
        ("a/colon", colon.to_string()),
        (
            "a/broken",
            "---\nname: broken\n---\nno description\n".to_string(),
        ),
        (
            "a/spaced",
            skill_text("Spaced Out", "A name that can never be invoked"),
        ),
        (
            "elsewhere/linked",
            skill_text("linked", "Reached through a link"),
        ),
        ("b/cat1-s0", skill_text("cat1-s0", "The shadowed copy")),
        ("b/only-b", skill_text("only-b", "Only in b")),
        (
            "spare",
            skill_text("spare", "Spare text that is longer than the other"),
        ),
    ];
    for (dir, text) in skills {
        write(&base.join(dir).join("SKILL.md"), &text);
    }
    std::fs::create_dir_all(a.join("notes/drafts")).unwrap();
    symlink(base.join("elsewhere/linked"), a.join("linked")).unwrap();
}

/// A temporary folder with [`build_tree`]'s tree in `tree`, settled.
fn settled_tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("tree");
    build_tree(&base);
    settle(&[&base]);
    (tmp, base)
}

#[test]
fn every_kind_of_change_gives_the_same_catalog_as_an_uncached_discovery() {
    let (tmp, base) = settled_tree();
    let (a, b) = (base.join("a"), base.join("b"));
    let opts = options(
        &[a.clone(), b.clone()],
        &tmp.path().join("home"),
        tmp.path(),
    );

    let cold = cached_equals_uncached(&opts, "cold");
    let sites = cold.stats().files_read;
    assert_eq!(sites, 17, "{:?}", cold.stats());
    assert_eq!(cold.skills().len(), 14);
    assert_eq!(cold.shadowed().len(), 1);
    assert_eq!(cold.invalid().len(), 2);
    let warm = cached_equals_uncached(&opts, "warm");
    let s = warm.stats();
    assert_eq!(
        (s.cache_hits, s.files_read, s.bytes_read),
        (sites, 0, 0),
        "{s:?}"
    );
    // Taken from the cache, the name is still judged: invalid, with the reason.
    let spaced = warm
        .invalid()
        .iter()
        .find(|b| b.path.ends_with("spaced/SKILL.md"))
        .unwrap();
    assert_eq!(spaced.name.as_deref(), Some("Spaced Out"));
    assert!(
        matches!(spaced.reason, WarningKind::InvalidName { .. }),
        "{spaced:?}"
    );
    assert!(warm.user_invocable_names().all(|n| n != "Spaced Out"));
    assert_eq!(s.dirs_cached, s.dirs_visited, "{s:?}");

    // Edit a SKILL.md keeping its size (same-length description).
    let edited = a.join("cat1/cat1-s1/SKILL.md");
    let before = std::fs::read_to_string(&edited).unwrap();
    let after = before.replace("Use for", "Fit for");
    assert_eq!(before.len(), after.len());
    std::fs::write(&edited, &after).unwrap();
    let c = cached_equals_uncached(&opts, "edit, same size");
    assert_eq!(
        c.get("cat1-s1").unwrap().description,
        "Fit for cat1-s1 work"
    );
    assert_eq!(c.stats().files_read, 1, "{:?}", c.stats());

    // Touch: only the mtime changes.
    let touched = a.join("cat2/cat2-s2/SKILL.md");
    let file = std::fs::File::options().write(true).open(&touched).unwrap();
    file.set_modified(SystemTime::now()).unwrap();
    drop(file);
    cached_equals_uncached(&opts, "touch");

    // Add a skill.
    write(
        &a.join("cat2/added/SKILL.md"),
        &skill_text("added", "Added later"),
    );
    let c = cached_equals_uncached(&opts, "add");
    assert!(c.get("added").is_some());

    // Remove one.
    std::fs::remove_dir_all(a.join("cat1/cat1-s3")).unwrap();
    let c = cached_equals_uncached(&opts, "remove");
    assert!(c.get("cat1-s3").is_none());

    // Rename a directory (a skill's, then a category's).
    std::fs::rename(a.join("cat2/cat2-s4"), a.join("cat2/renamed")).unwrap();
    let c = cached_equals_uncached(&opts, "rename a skill directory");
    assert!(c.get("cat2-s4").unwrap().path.ends_with("renamed/SKILL.md"));
    std::fs::rename(a.join("cat1"), a.join("zcat1")).unwrap();
    let c = cached_equals_uncached(&opts, "rename a category");
    assert!(c.get("cat1-s0").unwrap().path.starts_with(a.join("zcat1")));

    // Replace a file with a symlink (to a settled file with other content).
    let replaced = a.join("cat2/cat2-s0/SKILL.md");
    std::fs::remove_file(&replaced).unwrap();
    symlink(base.join("spare/SKILL.md"), &replaced).unwrap();
    let c = cached_equals_uncached(&opts, "file replaced by a symlink");
    assert_eq!(c.get("spare").unwrap().path, replaced);
    assert!(c.get("cat2-s0").is_none());

    // Replace a skill directory with a symlink to another skill.
    std::fs::remove_dir_all(a.join("cat2/cat2-s1")).unwrap();
    symlink(base.join("b/only-b"), a.join("cat2/cat2-s1")).unwrap();
    let c = cached_equals_uncached(&opts, "directory replaced by a symlink");
    assert!(c.get("cat2-s1").is_none());

    // A frontmatter becomes invalid; another becomes a YAML fallback.
    write(
        &a.join(".curated/deep/x/hidden/SKILL.md"),
        "---\nname: hidden\n",
    );
    write(
        &b.join("only-b/SKILL.md"),
        "---\nname: only-b\ndescription: Use when: b\n---\n",
    );
    let c = cached_equals_uncached(&opts, "invalid frontmatter");
    assert!(c.get("hidden").is_none());
    assert_eq!(c.invalid().len(), 3, "{:?}", c.invalid());

    // Once everything has settled, a run reads nothing again and still warns.
    settle(&[&base]);
    cached_equals_uncached(&opts, "settled");
    let c = cached_equals_uncached(&opts, "settled, warm");
    let s = c.stats();
    assert_eq!((s.files_read, s.bytes_read), (0, 0), "{s:?}");
    assert!(s.cache_hits > 10, "{s:?}");
    assert!(!c.warnings().is_empty());
}

#[test]
fn a_damaged_or_foreign_cache_file_is_ignored() {
    let (tmp, base) = settled_tree();
    let home = tmp.path().join("home");
    let opts = options(&[base.join("a")], &home, tmp.path());
    cached_equals_uncached(&opts, "cold");
    let file = home.join("cache/skills-index");
    let good = std::fs::read(&file).unwrap();
    for (what, bytes) in [
        ("truncated", good[..good.len() / 2].to_vec()),
        ("a flipped byte", {
            let mut b = good.clone();
            let i = b.len() - 10;
            b[i] ^= 0x55;
            b
        }),
        ("another version", {
            let mut b = good.clone();
            b[12] ^= 1; // the format version, first in the build stamp
            b
        }),
        ("garbage", b"not a cache".to_vec()),
        ("empty", Vec::new()),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        let c = cached_equals_uncached(&opts, what);
        assert_eq!(c.stats().cache_hits, 0, "{what}");
        // Rewritten, and good again.
        let c = cached_equals_uncached(&opts, what);
        assert!(c.stats().cache_hits > 0, "{what}");
    }
}

#[test]
fn an_unwritable_cache_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("tree");
    build_tree(&base);
    // `cache` is a file: the cache can be neither read nor written.
    let home = tmp.path().join("home");
    write(&home.join("cache"), "not a directory");
    let opts = options(&[base.join("a")], &home, tmp.path());
    for run in 0..2 {
        let c = cached_equals_uncached(&opts, "unwritable");
        assert_eq!(c.stats().cache_hits, 0, "run {run}");
    }
    // An empty HARNESS9_HOME means no cache at all.
    let opts = options(&[base.join("a")], Path::new(""), tmp.path());
    cached_equals_uncached(&opts, "no home");
}

#[test]
fn projects_with_different_roots_keep_their_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let (p1, p2) = (tmp.path().join("p1"), tmp.path().join("p2"));
    for (p, n) in [(&p1, "one"), (&p2, "two")] {
        write(&p.join("skills/s/SKILL.md"), &skill_text(n, "d"));
    }
    settle(&[&p1, &p2]);
    let home = tmp.path().join("home");
    let o1 = options(&[], &home, &p1);
    let o2 = options(&[], &home, &p2);
    cached_equals_uncached(&o1, "p1 cold");
    cached_equals_uncached(&o2, "p2 cold");
    assert_eq!(cached_equals_uncached(&o1, "p1 warm").stats().cache_hits, 1);
    assert_eq!(cached_equals_uncached(&o2, "p2 warm").stats().cache_hits, 1);
}

#[test]
fn concurrent_discoveries_share_the_cache_safely() {
    let (tmp, base) = settled_tree();
    let home = tmp.path().join("home");
    let opts = options(&[base.join("a"), base.join("b")], &home, tmp.path());
    let expected = Catalog::discover_uncached(&opts);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5 {
                    let c = Catalog::discover(&opts);
                    assert_eq!(c.skills(), expected.skills());
                    assert_eq!(c.warnings(), expected.warnings());
                }
            });
        }
    });
    let c = cached_equals_uncached(&opts, "after concurrent runs");
    assert_eq!(c.stats().files_read, 0, "{:?}", c.stats());
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(home.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["skills-index"]);
}
