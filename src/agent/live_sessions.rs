//! The saved sessions as a running session uses them ([`super::saved::SessionArchive`],
//! over the files of `crate::sessions`): a new
//! session's file is created with its first record (a session in which nothing was said
//! leaves no file), the total size cap is applied then, and resumes, listings and exports
//! go through the same files the `sessions` subcommand reads.
//!
//! It must not know what the agent does with the records or how anything is shown.

use std::path::{Path, PathBuf};

use super::conversation::RecordSink;
use super::saved;
use crate::llm::Message;
use crate::protocol::{ExportFormat, SessionListing};
use crate::sessions::cli::{self, Destination};
use crate::sessions::record::{SCHEMA_VERSION, endpoint_host, now_ms};
use crate::sessions::{
    Header, ListScope, Record, SessionId, SessionStore, SessionWriter, project_of, read_for_resume,
    read_header,
};

/// A project's sessions under a harness9 home, for the agent.
#[derive(Debug, Clone)]
pub struct LiveSessions {
    store: SessionStore,
    cwd: PathBuf,
    project: PathBuf,
    endpoint_host: String,
    max_bytes: u64,
}

impl LiveSessions {
    /// Sessions under `home` for a run in `cwd` against `base_url`, keeping the total
    /// under `max_bytes`.
    pub fn new(home: &Path, cwd: &Path, base_url: &str, max_bytes: u64) -> Self {
        LiveSessions {
            store: SessionStore::new(home),
            cwd: cwd.to_path_buf(),
            project: project_of(cwd),
            endpoint_host: endpoint_host(base_url),
            max_bytes,
        }
    }

    /// The latest session of this project, if any.
    pub fn latest(&self) -> Result<Option<SessionId>, String> {
        let path = self
            .store
            .latest(&self.project)
            .map_err(|e| e.to_string())?;
        Ok(path.as_deref().and_then(id_of))
    }

    /// The session `query` names (an id or a unique prefix, in any project).
    pub fn find_id(&self, query: &str) -> Result<SessionId, String> {
        let path = self.store.find(query).map_err(|e| e.to_string())?;
        id_of(&path).ok_or_else(|| format!("{} is not a session file", path.display()))
    }

    /// Why session `id` cannot be gone on with here: another harness9 is writing it.
    pub fn in_use(&self, id: &SessionId) -> Option<String> {
        let path = self.store.find(id.as_str()).ok()?;
        let pid = crate::sessions::lock::writer_of(&path)?;
        Some(crate::sessions::SessionError::InUse { path, pid }.to_string())
    }

    /// The project sessions are filed under.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The store underneath.
    pub fn store(&self) -> &SessionStore {
        &self.store
    }
}

/// The id in a session file's name.
fn id_of(path: &Path) -> Option<SessionId> {
    SessionId::parse(path.file_stem()?.to_str()?)
}

impl saved::SessionArchive for LiveSessions {
    fn create(&self, model: &str) -> (SessionId, Box<dyn RecordSink>) {
        let id = SessionId::generate();
        let header = Header {
            schema: SCHEMA_VERSION,
            id: id.clone(),
            created_ms: now_ms(),
            cwd: self.cwd.clone(),
            project: self.project.clone(),
            model: model.to_string(),
            endpoint_host: self.endpoint_host.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        let sink = NewFile {
            store: self.store.clone(),
            header,
            writer: None,
            max_bytes: self.max_bytes,
        };
        (id, Box::new(sink))
    }

    fn find(&self, query: &str) -> Result<SessionId, String> {
        self.find_id(query)
    }

    fn file(&self, id: &SessionId) -> Option<PathBuf> {
        self.store.find(id.as_str()).ok()
    }

    fn artifacts(&self, id: &SessionId) -> crate::artifacts::ArtifactStore {
        crate::artifacts::ArtifactStore::new(self.store.artifacts_dir(&self.project, id))
    }

    fn open(
        &self,
        id: &SessionId,
        on_record: &mut dyn FnMut(Record),
    ) -> Result<(Box<dyn RecordSink>, Vec<String>), String> {
        let path = self.store.find(id.as_str()).map_err(|e| e.to_string())?;
        let header = read_header(&path).map_err(|e| e.to_string())?;
        on_record(Record::Header(header));
        let report = read_for_resume(&path, on_record).map_err(|e| e.to_string())?;
        let writer = self.store.open_append(&path).map_err(|e| e.to_string())?;
        Ok((Box::new(writer), report.warnings))
    }

    fn list(&self) -> Result<Vec<SessionListing>, String> {
        let summaries = self
            .store
            .list(ListScope::Project(self.project.clone()))
            .map_err(|e| e.to_string())?;
        Ok(summaries
            .into_iter()
            .map(|s| SessionListing {
                id: s.id.to_string(),
                modified_ms: s.modified_ms,
                turns: s.turns,
                model: s.model,
                first_prompt: s.first_prompt,
            })
            .collect())
    }

    fn export(&self, id: &SessionId, format: ExportFormat, dest: &Path) -> Result<(), String> {
        let mut quiet = std::io::sink();
        cli::export(
            &self.store,
            id.as_str(),
            format,
            &Destination::File(dest.to_path_buf()),
            &mut std::io::sink(),
            &mut quiet,
        )
        .map_err(|e| e.to_string())
    }
}

impl RecordSink for SessionWriter {
    fn append(&mut self, record: &Record) -> Result<(), String> {
        SessionWriter::append(self, record).map_err(|e| e.to_string())
    }

    fn append_message(&mut self, turn: u64, message: &Message) -> Result<(), String> {
        SessionWriter::append_message(self, turn, message).map_err(|e| e.to_string())
    }

    fn path(&self) -> Option<std::path::PathBuf> {
        Some(SessionWriter::path(self).to_path_buf())
    }
}

/// A new session's file, created with the first record; the store's size cap is
/// applied then (never to this session).
struct NewFile {
    store: SessionStore,
    header: Header,
    writer: Option<SessionWriter>,
    max_bytes: u64,
}

impl NewFile {
    /// The file's writer, created (with the header) the first time.
    fn writer(&mut self) -> Result<&SessionWriter, String> {
        if self.writer.is_none() {
            let writer = self.store.create(&self.header).map_err(|e| e.to_string())?;
            // Listing every session to apply the cap must not delay the request this
            // first record comes before: it runs on a thread of its own.
            let (store, max_bytes, keep) =
                (self.store.clone(), self.max_bytes, self.header.id.clone());
            std::thread::spawn(move || {
                if let Err(e) = store.enforce_cap(max_bytes, Some(&keep)) {
                    tracing::warn!("cannot keep the sessions under their size cap: {e}");
                }
            });
            self.writer = Some(writer);
        }
        self.writer
            .as_ref()
            .ok_or_else(|| "the session file could not be created".to_string())
    }
}

impl RecordSink for NewFile {
    fn append(&mut self, record: &Record) -> Result<(), String> {
        self.writer()?.append(record).map_err(|e| e.to_string())
    }

    fn append_message(&mut self, turn: u64, message: &Message) -> Result<(), String> {
        self.writer()?
            .append_message(turn, message)
            .map_err(|e| e.to_string())
    }

    fn path(&self) -> Option<std::path::PathBuf> {
        Some(match &self.writer {
            Some(writer) => writer.path().to_path_buf(),
            None => self.store.file_for(&self.header),
        })
    }
}
