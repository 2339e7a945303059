//! The installed plugins: each a folder `$HARNESS9_HOME/plugins/<name>/` (a copy, or a
//! clone's files without `.git`) and one record in `$HARNESS9_HOME/plugins/installed.json`
//! (its source, the content hash when added, and the hash the user trusted, if any).
//! The record is changed under the folder lock of `private_files::update`, so two
//! processes adding at once lose nothing. A plugin stands trusted only while its files
//! hash to what was trusted: any change makes it untrusted again.
//!
//! It knows the home's layout and trust; it must not know what a session does with a
//! plugin.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fetch::{self, FetchError};
use super::folder::{self, PluginFolder};
use super::manifest::{self, Marketplace, Source};
use super::{PluginError, Problem};
use crate::private_files::{self, Links, Privacy, UpdateIoError, UpdateMode};
use crate::subcommand::Kind;

/// The content hash of an installed folder (see [`fetch::content_hash`]).
pub fn content_hash(root: &Path) -> Result<String, StoreError> {
    fetch::content_hash(root).map_err(StoreError::Fetch)
}

/// Why a plugin command failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Copying, cloning or hashing failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The records could not be read or written.
    #[error(transparent)]
    Records(#[from] UpdateIoError),
    /// The records file does not parse.
    #[error("{path}: does not parse ({reason})", path = path.display())]
    BadRecords {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The source is not a plugin or a marketplace.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// A marketplace was given without a plugin name.
    #[error(
        "{path} is the marketplace `{market}`; name the plugin to add: {names}",
        path = path.display()
    )]
    NameNeeded {
        /// The marketplace file.
        path: PathBuf,
        /// Its name.
        market: String,
        /// The plugins it lists.
        names: String,
    },
    /// The marketplace lists no plugin of that name.
    #[error("the marketplace `{market}` lists no plugin `{name}` (it lists: {names})")]
    NotListed {
        /// The marketplace's name.
        market: String,
        /// The name asked for.
        name: String,
        /// The plugins it lists.
        names: String,
    },
    /// A plugin folder was given with a name that is not its own.
    #[error("the plugin at {path} is `{found}`, not `{asked}`", path = path.display())]
    OtherName {
        /// The folder.
        path: PathBuf,
        /// Its name.
        found: String,
        /// The name given.
        asked: String,
    },
    /// A plugin of that name is already added.
    #[error("a plugin named `{name}` is already added; `harness9 plugin remove {name}` first")]
    Exists {
        /// The name.
        name: String,
    },
    /// No plugin of that name is added.
    #[error("no plugin named `{name}` is added (see `harness9 plugin list`)")]
    NotFound {
        /// The name.
        name: String,
    },
    /// The source path does not exist or cannot be resolved.
    #[error("{path}: {reason}", path = path.display())]
    Source {
        /// The path as given.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl StoreError {
    /// The kind of failure, for the exit code.
    pub fn kind(&self) -> Kind {
        match self {
            StoreError::NotFound { .. } => Kind::NotFound,
            StoreError::Plugin(_)
            | StoreError::NameNeeded { .. }
            | StoreError::NotListed { .. }
            | StoreError::OtherName { .. }
            | StoreError::Exists { .. }
            | StoreError::Source { .. } => Kind::Usage,
            StoreError::Fetch(_) | StoreError::Records(_) | StoreError::BadRecords { .. } => {
                Kind::Failed
            }
        }
    }
}

/// One installed plugin's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Its name (and folder).
    pub name: String,
    /// Where it was added from, as given (and the marketplace entry's source).
    pub source: String,
    /// The content hash when it was added.
    pub added_hash: String,
    /// The content hash the user trusted, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_hash: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Records {
    #[serde(default)]
    plugins: Vec<Record>,
}

/// Whether a plugin may load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Trusted as its files are now.
    Trusted,
    /// Never trusted.
    NotTrusted,
    /// Trusted once, changed since: not loaded until trusted again.
    ChangedSinceTrust,
}

impl Standing {
    /// A few words for listings.
    pub fn words(self) -> &'static str {
        match self {
            Standing::Trusted => "trusted",
            Standing::NotTrusted => "not trusted",
            Standing::ChangedSinceTrust => "changed since trusted (not loaded)",
        }
    }
}

/// An installed plugin as it is now.
#[derive(Debug)]
pub struct Installed {
    /// Its record.
    pub record: Record,
    /// Its folder.
    pub root: PathBuf,
    /// Its files' hash now (or why it could not be taken: then it is not trusted).
    pub hash: Result<String, String>,
    /// Whether it may load.
    pub standing: Standing,
    /// Its contents as read (or why they could not be).
    pub folder: Result<PluginFolder, PluginError>,
}

/// What `add` did.
#[derive(Debug)]
pub struct Added {
    /// The plugin as installed.
    pub installed: Installed,
    /// Entries left out of the copy (links, special files).
    pub skipped: Vec<PluginError>,
}

/// What `trust` did.
#[derive(Debug)]
pub enum TrustOutcome {
    /// Trusted now (its hash recorded).
    Trusted {
        /// The plugin as trusted.
        installed: Installed,
    },
    /// It was already trusted as it is.
    Already {
        /// The plugin.
        installed: Installed,
    },
}

/// The plugins below one harness9 home.
#[derive(Debug, Clone)]
pub struct PluginStore {
    dir: PathBuf,
}

const RECORDS: &str = "installed.json";
const MODE: UpdateMode = UpdateMode {
    links: Links::Refuse,
    privacy: Privacy::Private,
};

impl PluginStore {
    /// The store of `home` (`$HARNESS9_HOME`).
    pub fn new(home: &Path) -> Self {
        PluginStore {
            dir: home.join("plugins"),
        }
    }

    fn records_path(&self) -> PathBuf {
        self.dir.join(RECORDS)
    }

    fn read_records(&self) -> Result<Records, StoreError> {
        let path = self.records_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => parse_records(&path, Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Records::default()),
            Err(e) => Err(StoreError::Source {
                path,
                reason: e.to_string(),
            }),
        }
    }

    fn change<T>(
        &self,
        f: impl FnOnce(&mut Records) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let path = self.records_path();
        private_files::update(&path, MODE, |old| {
            let mut records = parse_records(&path, old)?;
            let value = f(&mut records)?;
            let text =
                serde_json::to_string_pretty(&records).map_err(|e| StoreError::BadRecords {
                    path: path.clone(),
                    reason: e.to_string(),
                })?;
            Ok((Some(text + "\n"), value))
        })
    }

    /// Every installed plugin, in name order, each hashed and read now. No records
    /// file: none (nothing else is read).
    pub fn installed(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Vec<Installed>, StoreError> {
        let mut records = self.read_records()?.plugins;
        records.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(records
            .into_iter()
            .map(|record| self.look(record, env))
            .collect())
    }

    fn look(&self, record: Record, env: &dyn Fn(&str) -> Option<String>) -> Installed {
        let root = self.dir.join(&record.name);
        let hash = fetch::content_hash(&root).map_err(|e| e.to_string());
        let standing = match (&record.trusted_hash, &hash) {
            (None, _) => Standing::NotTrusted,
            (Some(t), Ok(h)) if t == h => Standing::Trusted,
            (Some(_), _) => Standing::ChangedSinceTrust,
        };
        let folder = folder::inspect(&root, env);
        Installed {
            record,
            root,
            hash,
            standing,
            folder,
        }
    }

    /// One installed plugin.
    pub fn get(
        &self,
        name: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Installed, StoreError> {
        let record = self
            .read_records()?
            .plugins
            .into_iter()
            .find(|r| r.name == name)
            .ok_or_else(|| StoreError::NotFound { name: name.into() })?;
        Ok(self.look(record, env))
    }

    /// Adds the plugin at `source` (a plugin folder, a marketplace folder or its
    /// `marketplace.json`, or a git URL of either); `name` picks a marketplace's
    /// plugin (or must be a folder's own name). It is not trusted.
    pub fn add(
        &self,
        source: &str,
        name: Option<&str>,
        cwd: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Added, StoreError> {
        private_files::create_private_dir(&self.dir).map_err(|e| StoreError::Source {
            path: self.dir.clone(),
            reason: e.to_string(),
        })?;
        let staging = Staging::new(&self.dir)?;
        let (folder, described) = if manifest::is_git_url(source) {
            let clone = staging.path().join("clone");
            fetch::git_clone(source, &clone)?;
            (clone, source.to_string())
        } else {
            let path = cwd.join(source);
            let real = std::fs::canonicalize(&path).map_err(|e| StoreError::Source {
                path: path.clone(),
                reason: e.to_string(),
            })?;
            (real.clone(), real.display().to_string())
        };
        let (plugin_dir, described) = self.pick(&folder, name, described, &staging)?;
        let files = staging.path().join("files");
        let skipped = fetch::copy_tree(&plugin_dir, &files)?;
        let found = folder::inspect(&files, env)?;
        let plugin_name = found.manifest.name.clone();
        if let Some(asked) = name
            && asked != plugin_name
        {
            return Err(StoreError::OtherName {
                path: plugin_dir,
                found: plugin_name,
                asked: asked.into(),
            });
        }
        let hash = fetch::content_hash(&files)?;
        let target = self.dir.join(&plugin_name);
        self.change(|records| {
            if records.plugins.iter().any(|r| r.name == plugin_name) || target.exists() {
                return Err(StoreError::Exists {
                    name: plugin_name.clone(),
                });
            }
            std::fs::rename(&files, &target).map_err(|e| StoreError::Source {
                path: target.clone(),
                reason: e.to_string(),
            })?;
            records.plugins.push(Record {
                name: plugin_name.clone(),
                source: described.clone(),
                added_hash: hash.clone(),
                trusted_hash: None,
            });
            Ok(())
        })?;
        let installed = self.get(&plugin_name, env)?;
        Ok(Added { installed, skipped })
    }

    /// The plugin folder `folder` stands for: itself when it has a `plugin.json`, else
    /// the entry `name` of its marketplace (a relative source resolved inside the
    /// marketplace, never through a link out of it; a git source cloned).
    fn pick(
        &self,
        folder: &Path,
        name: Option<&str>,
        described: String,
        staging: &Staging,
    ) -> Result<(PathBuf, String), StoreError> {
        let (market_root, market_file) = if folder.is_file() {
            let root = folder
                .parent()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            (root, folder.to_path_buf())
        } else {
            let plugin_json = folder.join(".claude-plugin").join("plugin.json");
            let market_json = folder.join(".claude-plugin").join("marketplace.json");
            if folder::read_json(&plugin_json).ok().flatten().is_some()
                || folder::read_json(&market_json).ok().flatten().is_none()
            {
                return Ok((folder.to_path_buf(), described));
            }
            (folder.to_path_buf(), market_json)
        };
        let at = |problem| PluginError {
            path: market_file.clone(),
            problem,
        };
        let text = folder::read_json(&market_file)
            .map_err(at)?
            .ok_or_else(|| {
                at(Problem::Missing {
                    path: market_file.display().to_string(),
                })
            })?;
        let market: Marketplace = manifest::parse_marketplace(&text).map_err(at)?;
        let names = market
            .plugins
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let Some(name) = name else {
            return Err(StoreError::NameNeeded {
                path: market_file.clone(),
                market: market.name,
                names,
            });
        };
        let Some(entry) = market.plugins.iter().find(|p| p.name == name) else {
            return Err(StoreError::NotListed {
                market: market.name,
                name: name.into(),
                names,
            });
        };
        let described = format!("{described} ({}: {name})", market.name);
        match &entry.source {
            Source::Relative { path } => {
                let found = folder::inside(&market_root, path).map_err(at)?;
                match found {
                    Some((dir, crate::nofollow::FileKind::Directory)) => Ok((dir, described)),
                    _ => Err(at(Problem::Missing { path: path.clone() }).into()),
                }
            }
            Source::Git { url } => {
                let clone = staging.path().join("entry");
                fetch::git_clone(url, &clone)?;
                Ok((clone, format!("{described} <- {url}")))
            }
        }
    }

    /// Removes a plugin: its folder and its record.
    pub fn remove(&self, name: &str) -> Result<(), StoreError> {
        manifest::check_name(name).map_err(|problem| PluginError {
            path: self.dir.join(name),
            problem,
        })?;
        let root = self.dir.join(name);
        self.change(|records| {
            let before = records.plugins.len();
            records.plugins.retain(|r| r.name != name);
            if before == records.plugins.len() {
                return Err(StoreError::NotFound { name: name.into() });
            }
            Ok(())
        })?;
        match std::fs::remove_dir_all(&root) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::Source {
                path: root,
                reason: e.to_string(),
            }),
        }
    }

    /// Trusts the plugin `name` as its files are now: the hash `seen` (what the caller
    /// showed the user) is recorded only if the files still hash to it.
    pub fn trust(
        &self,
        name: &str,
        seen: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<TrustOutcome, StoreError> {
        let root = self.dir.join(name);
        let already = self.change(|records| {
            let record = records
                .plugins
                .iter_mut()
                .find(|r| r.name == name)
                .ok_or_else(|| StoreError::NotFound { name: name.into() })?;
            let now = fetch::content_hash(&root)?;
            if now != seen {
                return Err(StoreError::Source {
                    path: root.clone(),
                    reason: "its files changed while it was being shown; nothing was trusted, \
                             run `harness9 plugin trust` again"
                        .into(),
                });
            }
            let already = record.trusted_hash.as_deref() == Some(seen);
            record.trusted_hash = Some(now);
            Ok(already)
        })?;
        let installed = self.get(name, env)?;
        Ok(if already {
            TrustOutcome::Already { installed }
        } else {
            TrustOutcome::Trusted { installed }
        })
    }
}

/// A private folder for one `add` below the store, removed with what is left in it.
#[derive(Debug)]
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(store: &Path) -> Result<Staging, StoreError> {
        use std::os::unix::fs::DirBuilderExt;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = store.join(format!(".adding-{}-{stamp}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| StoreError::Source {
                path: dir.clone(),
                reason: e.to_string(),
            })?;
        Ok(Staging { dir })
    }

    fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn parse_records(path: &Path, text: Option<String>) -> Result<Records, StoreError> {
    match text {
        None => Ok(Records::default()),
        Some(text) => serde_json::from_str(&text).map_err(|e| StoreError::BadRecords {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}
