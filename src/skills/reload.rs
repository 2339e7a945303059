//! Skills that reload: the session's catalog behind one swappable handle
//! ([`SharedCatalog`]: everyone holding it sees a reload at their next look), and the
//! check that finds new, changed and removed skills by discovering again (through the
//! discovery cache: one `stat` per known skill plus the roots' listings) and comparing
//! names, folders, descriptions and `SKILL.md` modification times.
//!
//! What changed is said to the model as a note with its next message, never by
//! editing the system prompt (which stays byte-identical for the whole session), and to
//! the frontends as an event. It knows the catalog and discovery; it must not know the
//! agent loop, tools or terminals.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::SystemTime;

use super::{Catalog, DiscoveryOptions};
use crate::protocol::SkillChanges;

/// How old the start's catalog must be before a turn looks again.
pub const FRESH: std::time::Duration = std::time::Duration::from_secs(2);

/// The session's skills catalog, swapped as a whole when skills reload.
#[derive(Debug, Clone)]
pub struct SharedCatalog(Arc<RwLock<Arc<Catalog>>>);

impl SharedCatalog {
    /// A handle over `catalog`.
    pub fn new(catalog: Catalog) -> SharedCatalog {
        SharedCatalog(Arc::new(RwLock::new(Arc::new(catalog))))
    }

    /// The catalog now (cheap: a reference count).
    pub fn current(&self) -> Arc<Catalog> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts `catalog` in place of the current one.
    pub fn replace(&self, catalog: Catalog) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(catalog);
    }
}

impl From<Catalog> for SharedCatalog {
    fn from(catalog: Catalog) -> SharedCatalog {
        SharedCatalog::new(catalog)
    }
}

impl From<Arc<Catalog>> for SharedCatalog {
    fn from(catalog: Arc<Catalog>) -> SharedCatalog {
        SharedCatalog(Arc::new(RwLock::new(catalog)))
    }
}

/// The skill as compared between looks.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    dir: std::path::PathBuf,
    description: String,
    modified: Option<SystemTime>,
}

fn seen(catalog: &Catalog) -> BTreeMap<String, Seen> {
    catalog
        .skills()
        .iter()
        .map(|s| {
            let modified = std::fs::metadata(&s.path).and_then(|m| m.modified()).ok();
            (
                s.name.clone(),
                Seen {
                    dir: s.dir.clone(),
                    description: s.description.clone(),
                    modified,
                },
            )
        })
        .collect()
}

/// The session's skills and how to look for them again.
#[derive(Debug)]
pub struct SkillsWatch {
    catalog: SharedCatalog,
    options: DiscoveryOptions,
    /// What the last look saw (taken at the first check, against the session's start).
    last: Mutex<Option<BTreeMap<String, Seen>>>,
    started: SystemTime,
    /// What the model has not been told yet.
    note: Mutex<Option<SkillChanges>>,
    /// Warnings already shown (the start's, then each check's).
    warned: Mutex<Option<std::collections::BTreeSet<String>>>,
}

impl SkillsWatch {
    /// Watches `catalog`, found with `options` when the session started.
    pub fn new(catalog: SharedCatalog, options: DiscoveryOptions) -> SkillsWatch {
        SkillsWatch {
            catalog,
            options,
            last: Mutex::new(None),
            started: SystemTime::now(),
            note: Mutex::new(None),
            warned: Mutex::new(None),
        }
    }

    /// Whether a look before a turn is worth it: not while the catalog is fresher than
    /// [`FRESH`] (a `-p` run's only turn starts at once; its skills were just found).
    pub fn due(&self) -> bool {
        let looked = self
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        looked || self.started.elapsed().map_or(true, |age| age >= FRESH)
    }

    /// The catalog handle.
    pub fn catalog(&self) -> &SharedCatalog {
        &self.catalog
    }

    /// Discovers again and, when something changed, swaps the catalog in and keeps a
    /// note for the model; returns what changed and the warnings not shown before
    /// (a broken SKILL.md that appeared, with its path and reason). Blocking (file
    /// system): run it off the async threads.
    pub fn check(&self) -> (SkillChanges, Vec<String>) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let before = match last.take() {
            Some(before) => before,
            None => {
                // First look: what the session started with, as it was at the start.
                let mut before = seen(&self.catalog.current());
                for entry in before.values_mut() {
                    if entry.modified.is_some_and(|m| m > self.started) {
                        entry.modified = None;
                    }
                }
                before
            }
        };
        let found = Catalog::discover(&self.options);
        let now = seen(&found);
        let mut changes = SkillChanges::default();
        for (name, entry) in &now {
            match before.get(name) {
                None => changes
                    .added
                    .push((name.clone(), entry.description.clone())),
                Some(old) if old != entry => changes
                    .changed
                    .push((name.clone(), entry.description.clone())),
                Some(_) => {}
            }
        }
        changes.removed = before
            .keys()
            .filter(|name| !now.contains_key(*name))
            .cloned()
            .collect();
        *last = Some(now);
        let warnings = {
            let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
            let shown = warned.get_or_insert_with(|| {
                self.catalog
                    .current()
                    .warnings()
                    .iter()
                    .map(ToString::to_string)
                    .collect()
            });
            found
                .warnings()
                .iter()
                .map(ToString::to_string)
                .filter(|w| shown.insert(w.clone()))
                .collect()
        };
        if !changes.is_empty() {
            self.catalog.replace(found);
            let mut note = self.note.lock().unwrap_or_else(PoisonError::into_inner);
            *note = Some(match note.take() {
                Some(earlier) => merge(earlier, &changes),
                None => changes.clone(),
            });
        }
        (changes, warnings)
    }

    /// The note for the model's next message, once.
    pub fn take_note(&self) -> Option<String> {
        self.note
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .map(|c| c.note())
    }
}

/// Two rounds of changes the model has not heard of yet, as one.
fn merge(mut earlier: SkillChanges, later: &SkillChanges) -> SkillChanges {
    let drop_name = |list: &mut Vec<(String, String)>, name: &str| list.retain(|(n, _)| n != name);
    for (name, description) in &later.added {
        earlier.removed.retain(|n| n != name);
        drop_name(&mut earlier.changed, name);
        drop_name(&mut earlier.added, name);
        earlier.added.push((name.clone(), description.clone()));
    }
    for (name, description) in &later.changed {
        let was_added = earlier.added.iter().any(|(n, _)| n == name);
        drop_name(&mut earlier.changed, name);
        drop_name(&mut earlier.added, name);
        let list = if was_added {
            &mut earlier.added
        } else {
            &mut earlier.changed
        };
        list.push((name.clone(), description.clone()));
    }
    for name in &later.removed {
        let was_added = earlier.added.iter().any(|(n, _)| n == name);
        drop_name(&mut earlier.added, name);
        drop_name(&mut earlier.changed, name);
        if !was_added && !earlier.removed.contains(name) {
            earlier.removed.push(name.clone());
        }
    }
    earlier
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::write;

    fn skill_md(name: &str, description: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}\n")
    }

    /// Writes `root/NAME/SKILL.md` (see [`skill_md`]).
    fn put(root: &std::path::Path, name: &str, description: &str) {
        write(
            &root.join(name).join("SKILL.md"),
            &skill_md(name, description),
        );
    }

    fn watch(root: &std::path::Path) -> SkillsWatch {
        let empty = std::env::temp_dir().join("harness9-reload-test-nothing-here");
        let options = DiscoveryOptions {
            flag_dirs: vec![root.to_path_buf()],
            workdir: empty.clone(),
            project_root: std::path::PathBuf::new(),
            harness9_home: empty,
            user_home: None,
            remote_dirs: Vec::new(),
            plugins: Vec::new(),
        };
        let catalog = SharedCatalog::new(Catalog::discover(&options));
        SkillsWatch::new(catalog, options)
    }

    #[test]
    fn added_changed_and_removed_skills_are_noticed_once_each() {
        let root = tempfile::tempdir().unwrap();
        put(root.path(), "alpha", "First");
        put(root.path(), "beta", "Second");
        let w = watch(root.path());
        assert!(
            !w.due(),
            "a catalog just found is not looked at before a turn"
        );
        let (changes, _) = w.check();
        assert!(w.due(), "after a first look, every turn looks");
        assert!(changes.is_empty(), "{changes:?}");
        assert_eq!(w.take_note(), None);

        put(root.path(), "gamma", "Third one");
        put(root.path(), "alpha", "First, better");
        std::fs::remove_dir_all(root.path().join("beta")).unwrap();
        let (changes, _) = w.check();
        assert_eq!(
            changes.added,
            [("gamma".to_string(), "Third one".to_string())]
        );
        assert_eq!(
            changes.changed,
            [("alpha".to_string(), "First, better".to_string())]
        );
        assert_eq!(changes.removed, ["beta"]);
        let names: Vec<String> = w
            .catalog()
            .current()
            .skills()
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(names, ["alpha", "gamma"]);
        let note = w.take_note().unwrap();
        assert!(
            note.contains("+ gamma: Third one; ~ alpha: First, better; − beta"),
            "{note}"
        );
        assert_eq!(w.take_note(), None, "told once");
        assert!(w.check().0.is_empty(), "nothing new since");
    }

    /// What a look costs with 1,000 skills, with the discovery cache warm
    /// (`cargo test --release --lib skills::reload -- --ignored --nocapture`).
    #[test]
    #[ignore = "benchmark"]
    fn a_look_at_1000_skills() {
        let root = tempfile::tempdir().unwrap();
        for i in 0..1000 {
            put(
                root.path(),
                &format!("s{i:04}"),
                "A generated skill for timing",
            );
        }
        let home = tempfile::tempdir().unwrap();
        let options = DiscoveryOptions {
            flag_dirs: vec![root.path().to_path_buf()],
            workdir: home.path().join("project"),
            project_root: std::path::PathBuf::new(),
            harness9_home: home.path().to_path_buf(),
            user_home: None,
            remote_dirs: Vec::new(),
            plugins: Vec::new(),
        };
        let w = SkillsWatch::new(SharedCatalog::new(Catalog::discover(&options)), options);
        let mut times: Vec<std::time::Duration> = (0..21)
            .map(|_| {
                let start = std::time::Instant::now();
                assert!(w.check().0.is_empty());
                start.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "look at 1,000 skills: median {:.2} ms, max {:.2} ms",
            times[10].as_secs_f64() * 1e3,
            times[20].as_secs_f64() * 1e3
        );
    }

    #[test]
    fn a_body_edit_counts_and_notes_not_yet_told_are_merged() {
        let root = tempfile::tempdir().unwrap();
        put(root.path(), "alpha", "First");
        let w = watch(root.path());
        w.check();
        // Same frontmatter, new body, later modification time.
        let md = root.path().join("alpha/SKILL.md");
        std::fs::write(&md, skill_md("alpha", "First") + "more\n").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&md)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(w.check().0.changed.len(), 1);
        put(root.path(), "temp", "Short-lived");
        w.check();
        std::fs::remove_dir_all(root.path().join("temp")).unwrap();
        w.check();
        // Added then removed before the model heard: neither is said.
        let note = w.take_note().unwrap();
        assert!(
            note.contains("~ alpha: First") && !note.contains("temp"),
            "{note}"
        );
    }
}
