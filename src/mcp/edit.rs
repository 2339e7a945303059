//! Edits of the `[mcp_servers.NAME]` tables of a TOML config file (the user's
//! config.toml, a project's `.harness9/config.toml`) with `toml_edit`, so that the
//! comments and layout a person wrote survive: a table replaced keeps its place and the
//! comment above it, a new one goes after the other servers, and the file is replaced
//! through a temporary file and a rename, keeping its permissions (config.toml may hold
//! keys). A file that does not exist yet is empty, and is created with its folders.
//! Saving is a locked read-change-write ([`crate::private_files::update`]): the edits
//! are applied again to the file as it is then, so concurrent edits are never lost.
//!
//! It owns the TOML layout of a server's table; it must not know whether a definition
//! is valid (that is [`super::config`]'s), trust, or how servers start.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use super::config::ServerFile;
use crate::private_files::{Links, Privacy, UpdateIoError, UpdateMode};

/// Why a config file could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// It could not be read, is not TOML, or has a shape harness9 does not edit.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// It could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

/// A TOML config file, read for editing.
#[derive(Debug)]
pub struct ConfigFile {
    path: PathBuf,
    doc: DocumentMut,
    /// The edits made, applied again to the file as it is when saving.
    changes: Vec<Change>,
}

/// One edit of [`ConfigFile`].
#[derive(Debug, Clone)]
enum Change {
    Set(String, Box<ServerFile>),
    Remove(String),
}

impl ConfigFile {
    /// Reads `path` (empty when there is no file).
    pub fn open(path: &Path) -> Result<ConfigFile, EditError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(file_error(path, e.to_string())),
        };
        let doc = text
            .parse()
            .map_err(|e: toml_edit::TomlError| file_error(path, e.to_string()))?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            doc,
            changes: Vec::new(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it has `mcp_servers.NAME` (valid or not).
    pub fn defines(&self, name: &str) -> bool {
        self.doc
            .get("mcp_servers")
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(name))
    }

    /// Sets `[mcp_servers.NAME]` to `server`: in place (with the comment above it) when
    /// it was there, else after the other servers.
    pub fn set(&mut self, name: &str, server: &ServerFile) -> Result<(), EditError> {
        set_in(&mut self.doc, &self.path, name, server)?;
        self.changes
            .push(Change::Set(name.to_string(), Box::new(server.clone())));
        Ok(())
    }

    /// Removes `[mcp_servers.NAME]`; whether it was there.
    pub fn remove(&mut self, name: &str) -> Result<bool, EditError> {
        if !self.defines(name) {
            return Ok(false);
        }
        self.changes.push(Change::Remove(name.to_string()));
        Ok(servers(&mut self.doc, &self.path)?.remove(name).is_some())
    }

    /// Writes the edits to the file: under an exclusive lock on its folder the file is
    /// read again, the edits are applied to what it holds now (so a change another
    /// process made since [`ConfigFile::open`] is kept, and two `harness9 mcp add` at
    /// once both land), and it is replaced through a temporary file and a rename,
    /// creating its folders (0700) and keeping its permissions (0600 when new:
    /// config.toml may hold keys). `links` says what a symbolic link at the path means.
    pub fn save(&self, links: Links) -> Result<(), EditError> {
        let mode = UpdateMode {
            links,
            privacy: Privacy::Private,
        };
        crate::private_files::update(&self.path, mode, |old| {
            let mut doc: DocumentMut = old
                .unwrap_or_default()
                .parse()
                .map_err(|e: toml_edit::TomlError| file_error(&self.path, e.to_string()))?;
            for change in &self.changes {
                match change {
                    Change::Set(name, server) => set_in(&mut doc, &self.path, name, server)?,
                    Change::Remove(name) => {
                        servers(&mut doc, &self.path)?.remove(name);
                    }
                }
            }
            Ok((Some(doc.to_string()), ()))
        })
    }
}

impl From<UpdateIoError> for EditError {
    fn from(e: UpdateIoError) -> Self {
        EditError::Write {
            path: e.path,
            source: e.source,
        }
    }
}

/// Sets `[mcp_servers.NAME]` in `doc` (see [`ConfigFile::set`]).
fn set_in(
    doc: &mut DocumentMut,
    path: &Path,
    name: &str,
    server: &ServerFile,
) -> Result<(), EditError> {
    let servers = servers(doc, path)?;
    let mut table = server_table(server);
    if let Some(old) = servers.get(name).and_then(Item::as_table) {
        table.set_position(old.position());
        *table.decor_mut() = old.decor().clone();
    }
    servers.insert(name, Item::Table(table));
    Ok(())
}

/// The `[mcp_servers]` table of `doc`, created (implicit: no header of its own) when
/// missing.
fn servers<'d>(doc: &'d mut DocumentMut, path: &Path) -> Result<&'d mut Table, EditError> {
    doc.as_table_mut()
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| {
            file_error(
                path,
                "`mcp_servers` is not written as `[mcp_servers.NAME]` tables; edit it by hand"
                    .into(),
            )
        })
}

fn file_error(path: &Path, message: String) -> EditError {
    EditError::File {
        path: path.to_path_buf(),
        message,
    }
}

/// `[mcp_servers.NAME]` with `server`'s keys as [`ConfigFile::set`] writes them.
pub fn table_text(name: &str, server: &ServerFile) -> String {
    let mut doc = DocumentMut::new();
    let mut servers = Table::new();
    servers.set_implicit(true);
    servers.insert(name, Item::Table(server_table(server)));
    doc.insert("mcp_servers", Item::Table(servers));
    doc.to_string()
}

/// Whether the `.mcp.json` at `path` names a server `name` (valid or not).
pub fn json_defines(path: &Path, name: &str) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|v| v.get("mcpServers").and_then(|m| m.get(name)).is_some())
}

/// A server's table: the keys set, in the order docs/CONFIG.md lists them; maps as
/// inline tables.
fn server_table(file: &ServerFile) -> Table {
    let strings = |items: &[String]| {
        let mut array: Array = items.iter().map(String::as_str).collect();
        array.fmt();
        value(array)
    };
    let map = |items: &BTreeMap<String, String>| {
        let mut table = InlineTable::new();
        for (k, v) in items {
            table.insert(k, v.as_str().into());
        }
        table.fmt();
        value(table)
    };
    let mut t = Table::new();
    if let Some(command) = &file.command {
        t.insert("command", value(command.as_str()));
    }
    if !file.args.is_empty() {
        t.insert("args", strings(&file.args));
    }
    if !file.env.is_empty() {
        t.insert("env", map(&file.env));
    }
    if !file.env_vars.is_empty() {
        t.insert("env_vars", strings(&file.env_vars));
    }
    if let Some(cwd) = &file.cwd {
        t.insert("cwd", value(cwd.to_string_lossy().as_ref()));
    }
    if let Some(url) = &file.url {
        t.insert("url", value(url.as_str()));
    }
    if !file.headers.is_empty() {
        t.insert("headers", map(&file.headers));
    }
    if let Some(var) = &file.bearer_token_env {
        t.insert("bearer_token_env", value(var.as_str()));
    }
    if let Some(enabled) = file.enabled {
        t.insert("enabled", value(enabled));
    }
    let secs = [
        ("startup_timeout_secs", file.startup_timeout_secs),
        ("tool_timeout_secs", file.tool_timeout_secs),
    ];
    for (key, secs) in secs {
        if let Some(secs) = secs.and_then(|s| i64::try_from(s).ok()) {
            t.insert(key, value(secs));
        }
    }
    if let Some(preload) = file.preload {
        t.insert("preload", value(preload));
    }
    if let Some(description) = &file.description {
        t.insert("description", value(description.as_str()));
    }
    if let Some(sandbox) = file.sandbox {
        t.insert("sandbox", value(sandbox));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(command: &str) -> ServerFile {
        ServerFile {
            command: Some(command.into()),
            ..ServerFile::default()
        }
    }

    #[test]
    fn tables_are_added_replaced_and_removed_keeping_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/config.toml");
        let mut file = ConfigFile::open(&path).unwrap();
        assert!(!file.defines("x"));
        file.set("x", &server("one")).unwrap();
        file.save(Links::Follow).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[mcp_servers.x]\ncommand = \"one\"\n"
        );

        let written = "# mine\nmodel = \"m\"\n\n# the x server\n[mcp_servers.x]\n\
                       command = \"one\" # old\n\n[sandbox]\nmode = \"off\"\n";
        std::fs::write(&path, written).unwrap();
        let mut file = ConfigFile::open(&path).unwrap();
        file.set("x", &server("two")).unwrap();
        file.set("y", &server("three")).unwrap();
        file.save(Links::Follow).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(
                "# mine\nmodel = \"m\"\n\n# the x server\n[mcp_servers.x]\ncommand = \"two\"\n"
            ),
            "{text}"
        );
        let (y, sandbox) = (text.find("[mcp_servers.y]"), text.find("[sandbox]"));
        assert!(y < sandbox, "{text}");

        let mut file = ConfigFile::open(&path).unwrap();
        assert!(file.remove("x").unwrap());
        assert!(!file.remove("x").unwrap());
        file.save(Links::Follow).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("mcp_servers.x") && text.contains("[mcp_servers.y]"));
        assert!(text.starts_with("# mine\nmodel = \"m\"\n") && text.contains("[sandbox]"));
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_stays_private_and_a_broken_one_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "api_key = \"k\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut file = ConfigFile::open(&path).unwrap();
        file.set("x", &server("one")).unwrap();
        file.save(Links::Follow).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);

        std::fs::write(&path, "mcp_servers = 3\n").unwrap();
        let mut file = ConfigFile::open(&path).unwrap();
        assert!(matches!(
            file.set("x", &server("one")),
            Err(EditError::File { .. })
        ));
        std::fs::write(&path, "[oops\n").unwrap();
        assert!(ConfigFile::open(&path).is_err());
    }
}
