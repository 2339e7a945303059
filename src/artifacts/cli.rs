//! `harness9 artifacts list|get`: a saved session's artifacts from the command line —
//! this project's latest session unless `--session ID` names one (an id or a unique
//! prefix, in any project). `list` prints one line per saved version (or JSON); `get`
//! writes one version's content to stdout or to a file. Text shown is made inert
//! first; content written with `get` is the bytes as saved.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{ArtifactError, ArtifactStore, parse_ref};
use crate::safe_text::SafeWriter;
use crate::sessions::cli::human_bytes;
use crate::sessions::record::display_utc;
use crate::sessions::{FindError, SessionError, SessionStore, project_of};
use crate::subcommand::Kind;

/// Why an `artifacts` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactsCliError {
    /// The id typed names no single session.
    #[error(transparent)]
    Find(#[from] FindError),
    /// The project has no saved session.
    #[error("no saved session in {}; give one with --session ID", project.display())]
    NoSession {
        /// The project.
        project: PathBuf,
    },
    /// The sessions could not be searched.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The artifact is not there, or its folder could not be read.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// Writing failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl ArtifactsCliError {
    /// The kind of failure, for the exit code: a session or an artifact that is not
    /// there is not found, what cannot be an id or a name a usage error, the rest
    /// internal.
    pub fn kind(&self) -> Kind {
        match self {
            ArtifactsCliError::Find(FindError::Store(_)) => Kind::Internal,
            ArtifactsCliError::Find(FindError::NotFound { .. })
            | ArtifactsCliError::NoSession { .. }
            | ArtifactsCliError::Artifact(ArtifactError::Missing { .. }) => Kind::NotFound,
            ArtifactsCliError::Find(FindError::Ambiguous { .. } | FindError::InvalidId { .. })
            | ArtifactsCliError::Artifact(ArtifactError::BadName { .. }) => Kind::Usage,
            ArtifactsCliError::Session(_)
            | ArtifactsCliError::Artifact(_)
            | ArtifactsCliError::Output(_) => Kind::Internal,
        }
    }
}

/// The artifacts of session `query`, or of `workdir`'s project's latest session.
pub fn store_for(
    sessions: &SessionStore,
    workdir: &Path,
    query: Option<&str>,
) -> Result<(String, ArtifactStore), ArtifactsCliError> {
    let file = match query {
        Some(query) => sessions.find(query)?,
        None => {
            let project = project_of(workdir);
            sessions
                .latest(&project)?
                .ok_or(ArtifactsCliError::NoSession { project })?
        }
    };
    let id = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((
        id,
        ArtifactStore::new(crate::sessions::store::artifacts_beside(&file)),
    ))
}

/// `artifacts list`: every saved version, oldest first.
pub fn list(
    id: &str,
    store: &ArtifactStore,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), ArtifactsCliError> {
    let all = store.list()?;
    if json {
        let text = serde_json::to_string(&all).map_err(io::Error::other)?;
        writeln!(out, "{text}")?;
        return Ok(());
    }
    let mut out = SafeWriter::text(out);
    if all.is_empty() {
        writeln!(out, "Session {id} has no artifacts.")?;
        return Ok(());
    }
    writeln!(out, "Artifacts of session {id}:")?;
    for a in &all {
        writeln!(
            out,
            "  {}@{}  {}  {}  {} UTC",
            a.name,
            a.version,
            a.mime,
            human_bytes(a.size),
            display_utc(a.saved_ms)
        )?;
    }
    Ok(())
}

/// `artifacts get NAME[@VERSION] [-o FILE]`: the content, as saved.
pub fn get(
    store: &ArtifactStore,
    reference: &str,
    output: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), ArtifactsCliError> {
    let (name, version) = parse_ref(reference);
    let (_, path) = store.find(name, version)?;
    let bytes = std::fs::read(&path).map_err(|source| ArtifactError::Io {
        dir: store.dir().to_path_buf(),
        source,
    })?;
    match output {
        Some(file) => std::fs::write(file, bytes)?,
        None => {
            out.write_all(&bytes)?;
            out.flush()?;
        }
    }
    Ok(())
}
