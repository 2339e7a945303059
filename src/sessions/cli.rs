//! Output of the `harness9 sessions list|show|export|prune` subcommands. Each function
//! writes what the user asked for to `out` and warnings to `err`, and fails with a
//! [`CliError`] whose [`CliError::kind`] `main` turns into the exit code (and whose
//! message it writes to stderr). Argument parsing belongs to the CLI module, which
//! calls these.
//!
//! Saved sessions hold untrusted text (answers, tool output, prompts): what goes to `out`
//! and `err` passes through [`SafeWriter`] (control characters shown as `^[`, JSON with
//! DEL and C1 escaped), so reading a session cannot steer the terminal. An export
//! written to a file (`-o`) is exact.
//!
//! It must not know the agent or any frontend; it sees the store and the exports only.

use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::safe_text::{self, SafeWriter};
use crate::subcommand::Kind;

use super::error::{FindError, IoAction, SessionError};
use super::export::{self, Detail};
use super::reader::{ReadReport, read_header, summary};
use super::record::display_utc;
use super::store::{ListScope, SessionFile, SessionStore, format_age};

/// How `sessions list` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    /// A table for people.
    Table,
    /// A JSON array of summaries (`--json`).
    Json,
}

/// What `sessions export` writes (the same choice as `/export`).
use crate::protocol::ExportFormat;

/// Where `sessions export` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output (`out`).
    Stdout,
    /// A file, replaced atomically (`-o FILE`).
    File(PathBuf),
}

/// Whether `sessions prune` removes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneMode {
    /// Remove the old sessions.
    Remove,
    /// Only say what would be removed (`--dry-run`).
    DryRun,
}

/// Why a `sessions` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The id typed names no single session.
    #[error(transparent)]
    Find(#[from] FindError),
    /// A session file could not be read (or the store searched).
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl CliError {
    /// The kind of failure, for the exit code: an id that matches no session is not
    /// found, one that matches several or cannot be an id a usage error, the rest
    /// internal.
    pub fn kind(&self) -> Kind {
        match self {
            CliError::Find(FindError::Store(_)) => Kind::Internal,
            CliError::Find(FindError::NotFound { .. }) => Kind::NotFound,
            CliError::Find(FindError::Ambiguous { .. } | FindError::InvalidId { .. }) => {
                Kind::Usage
            }
            CliError::Session(_) | CliError::Output(_) => Kind::Internal,
        }
    }
}

/// `sessions list [--all] [--json]`: the sessions of `scope`, newest first.
pub fn list(
    store: &SessionStore,
    scope: ListScope,
    format: ListFormat,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let summaries = store.list(scope.clone())?;
    // Every write below is a whole line, so the writer never holds anything back.
    let mut safe = SafeWriter::text(out);
    let out = &mut safe;
    if format == ListFormat::Json {
        let text = serde_json::to_string_pretty(&summaries).map_err(io::Error::other)?;
        writeln!(out, "{}", safe_text::escape_json(&text))?;
        return Ok(());
    }
    if summaries.is_empty() {
        match &scope {
            ListScope::Project(project) => writeln!(
                out,
                "no saved sessions for {} (harness9 sessions list --all shows every project)",
                project.display()
            )?,
            ListScope::All => writeln!(
                out,
                "no saved sessions (they are kept in {})",
                store.root().display()
            )?,
        }
        return Ok(());
    }
    let with_project = matches!(scope, ListScope::All);
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["ID", "WHEN", "TURNS", "MODEL"];
    if with_project {
        header.push("PROJECT");
    }
    header.push("FIRST PROMPT");
    rows.push(header.into_iter().map(String::from).collect());
    for s in &summaries {
        let mut row = vec![
            s.id.to_string(),
            display_utc(s.modified_ms),
            s.turns.to_string(),
            s.model.clone(),
        ];
        if with_project {
            row.push(s.project.display().to_string());
        }
        row.push(s.first_prompt.clone().unwrap_or_else(|| "-".to_string()));
        rows.push(row);
    }
    let columns = rows[0].len();
    let mut widths = vec![0usize; columns - 1];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &rows {
        let mut line = String::new();
        for (cell, w) in row.iter().zip(&widths) {
            line.push_str(&format!("{cell:<w$}  "));
        }
        line.push_str(&row[columns - 1]);
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// `sessions show ID`: the header, then a short transcript (prompts, one line per tool
/// call, answers).
pub fn show(
    store: &SessionStore,
    query: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let path = store.find(query)?;
    let header = read_header(&path)?;
    let s = summary(&path)?;
    let mut out = BufWriter::new(SafeWriter::text(out));
    writeln!(out, "id: {}", header.id)?;
    writeln!(out, "file: {}", path.display())?;
    writeln!(out, "created: {} UTC", display_utc(header.created_ms))?;
    writeln!(out, "last used: {} UTC", display_utc(s.modified_ms))?;
    writeln!(out, "project: {}", header.project.display())?;
    writeln!(out, "cwd: {}", header.cwd.display())?;
    if s.model == header.model {
        writeln!(out, "model: {}", header.model)?;
    } else {
        writeln!(out, "model: {} (at first: {})", s.model, header.model)?;
    }
    writeln!(out, "endpoint: {}", header.endpoint_host)?;
    writeln!(out, "harness9: {}", header.version)?;
    writeln!(out, "turns: {}", s.turns)?;
    writeln!(out, "size: {}", human_bytes(s.bytes))?;
    writeln!(out)?;
    let report = export::markdown(&path, Detail::Brief, &mut out)?;
    out.flush()?;
    warn(err, &report);
    Ok(())
}

/// `sessions export ID --format md|json [-o FILE]`.
pub fn export(
    store: &SessionStore,
    query: &str,
    format: ExportFormat,
    destination: &Destination,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let path = store.find(query)?;
    let write = |w: &mut dyn Write| match format {
        ExportFormat::Markdown => export::export_markdown(&path, w),
        ExportFormat::Json => export::export_json(&path, w),
    };
    let report = match destination {
        Destination::Stdout => {
            let safe = match format {
                ExportFormat::Markdown => SafeWriter::text(out),
                ExportFormat::Json => SafeWriter::json(out),
            };
            let mut buffered = BufWriter::new(safe);
            let report = write(&mut buffered)?;
            buffered.flush()?;
            report
        }
        Destination::File(file) => {
            let report = write_atomically(file, write)?;
            let line = format!(
                "harness9: exported {} to {}",
                report.header.id,
                file.display()
            );
            let _ = writeln!(err, "{}", safe_text::neutralize(&line));
            report
        }
    };
    warn(err, &report);
    Ok(())
}

/// `sessions prune --older-than AGE [--dry-run]`.
pub fn prune(
    store: &SessionStore,
    older_than: Duration,
    mode: PruneMode,
    now_ms: u64,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let age = format_age(older_than);
    let stale = store.stale(older_than, now_ms)?;
    // Every write below is a whole line, so the writer never holds anything back.
    let mut safe = SafeWriter::text(out);
    let out = &mut safe;
    if stale.is_empty() {
        writeln!(out, "no sessions unused for more than {age}")?;
        return Ok(());
    }
    match mode {
        PruneMode::DryRun => {
            for file in &stale {
                writeln!(out, "would remove {}", describe(file))?;
            }
            let bytes = stale.iter().map(|f| f.bytes).sum();
            writeln!(
                out,
                "{} session(s) unused for more than {age} would be removed ({}); \
                 run without --dry-run to remove them",
                stale.len(),
                human_bytes(bytes)
            )?;
        }
        PruneMode::Remove => {
            for file in &stale {
                writeln!(out, "removing {}", describe(file))?;
            }
            let report = store.prune(older_than, now_ms)?;
            writeln!(
                out,
                "removed {} session(s) unused for more than {age}, freeing {}",
                report.removed.len(),
                human_bytes(report.bytes_freed)
            )?;
        }
    }
    Ok(())
}

fn describe(file: &SessionFile) -> String {
    format!(
        "{} (last used {} UTC, {})",
        file.id,
        display_utc(file.modified_ms),
        human_bytes(file.bytes)
    )
}

/// The report's warnings on `err`, each prefixed like the binary's own; a failing
/// `err` is ignored (there is nobody to tell).
fn warn(err: &mut dyn Write, report: &ReadReport) {
    for w in &report.warnings {
        let line = format!("harness9: warning: {w}");
        let _ = writeln!(err, "{}", safe_text::neutralize(&line));
    }
}

/// Writes `file` through `write` into a temporary file beside it, then renames it into
/// place: a reader never sees half an export, and a failure leaves the old file alone.
fn write_atomically(
    file: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<ReadReport, SessionError>,
) -> Result<ReadReport, CliError> {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = file
        .file_name()
        .map_or_else(|| "export".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let created = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| SessionError::io(IoAction::Create, &tmp, e))?;
    let result = (|| -> Result<ReadReport, SessionError> {
        let mut buffered = BufWriter::new(&created);
        let report = write(&mut buffered).map_err(|e| match e {
            SessionError::Output { source } => SessionError::io(IoAction::Write, &tmp, source),
            other => other,
        })?;
        buffered
            .flush()
            .and_then(|()| created.sync_all())
            .map_err(|e| SessionError::io(IoAction::Write, &tmp, e))?;
        std::fs::rename(&tmp, file).map_err(|e| SessionError::io(IoAction::Rename, file, e))?;
        Ok(report)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(CliError::Session)
}

/// A size for people: bytes, KiB, MiB or GiB with one decimal.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    format!("{value:.1} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::{Record, test_header_with_id};

    fn run(
        f: impl FnOnce(&mut dyn Write, &mut dyn Write) -> Result<(), CliError>,
    ) -> (String, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        f(&mut out, &mut err).unwrap();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    fn store_with_one(tmp: &Path) -> SessionStore {
        let store = SessionStore::new(tmp);
        let w = store
            .create(&test_header_with_id(
                "20261123-173501-a3f9c2",
                "/work/demo",
                1_795_455_301_000,
            ))
            .unwrap();
        w.append(&Record::Message {
            turn: 1,
            message: crate::llm::Message::User {
                images: Vec::new(),
                content: "hello | there".into(),
            },
        })
        .unwrap();
        store
    }

    #[test]
    fn list_shows_a_table_or_says_there_is_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let store = store_with_one(tmp.path());
        let (out, _) = run(|o, _| {
            list(
                &store,
                ListScope::Project("/work/demo".into()),
                ListFormat::Table,
                o,
            )
        });
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("ID  "), "{out}");
        assert!(lines[0].ends_with("MODEL       FIRST PROMPT"), "{out}");
        assert!(lines[1].starts_with("20261123-173501-a3f9c2  "), "{out}");
        assert!(
            lines[1].ends_with("0      test-model  hello | there"),
            "{out}"
        );
        let (out, _) = run(|o, _| list(&store, ListScope::All, ListFormat::Table, o));
        assert!(
            out.contains("PROJECT") && out.contains("/work/demo"),
            "{out}"
        );
        let (out, _) = run(|o, _| {
            list(
                &store,
                ListScope::Project("/else".into()),
                ListFormat::Table,
                o,
            )
        });
        assert_eq!(
            out,
            "no saved sessions for /else (harness9 sessions list --all shows every project)\n"
        );
        let (out, _) = run(|o, _| list(&store, ListScope::All, ListFormat::Json, o));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v[0]["id"], "20261123-173501-a3f9c2");
        assert_eq!(v[0]["first_prompt"], "hello | there");
    }

    #[test]
    fn export_to_a_file_replaces_it_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let store = store_with_one(tmp.path());
        let file = tmp.path().join("out.md");
        std::fs::write(&file, "old").unwrap();
        let (out, err) = run(|o, e| {
            export(
                &store,
                "20261123",
                ExportFormat::Markdown,
                &Destination::File(file.clone()),
                o,
                e,
            )
        });
        assert!(out.is_empty());
        assert!(err.contains("exported 20261123-173501-a3f9c2 to"), "{err}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("# Session 20261123-173501-a3f9c2\n"),
            "{text}"
        );
        assert!(text.contains("| /work/demo |"), "{text}");
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        // A folder that does not exist: an error, nothing written.
        let mut sink = Vec::new();
        let e = export(
            &store,
            "2026",
            ExportFormat::Json,
            &Destination::File(tmp.path().join("no/such/dir/x.json")),
            &mut sink,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), Kind::Internal);
        assert!(e.to_string().contains("cannot create"), "{e}");
    }

    #[test]
    fn unknown_ids_are_not_found_and_malformed_ones_usage_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let store = store_with_one(tmp.path());
        let e = show(&store, "abc", &mut Vec::new(), &mut Vec::new()).unwrap_err();
        assert_eq!(e.kind(), Kind::NotFound);
        assert_eq!(
            e.to_string(),
            "no session matches \"abc\" (harness9 sessions list shows them)"
        );
        let e = show(&store, "../x", &mut Vec::new(), &mut Vec::new()).unwrap_err();
        assert_eq!(e.kind(), Kind::Usage);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(2048), "2.0 KiB");
        assert_eq!(human_bytes(5 * 1024 * 1024 + 1), "5.0 MiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
