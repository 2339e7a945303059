//! The agent's side of saved sessions: starting a new saved session, resuming one (its
//! conversation, model and loaded skills), and the store operations frontends reach
//! through [`Op`]s (listing, exporting).
//!
//! The store itself is behind [`SessionArchive`], implemented over `crate::sessions` where
//! the session is assembled; this module must not know about files or how a frontend
//! shows a session.
//!
//! [`Op`]: crate::protocol::Op

use std::path::{Path, PathBuf};

use crate::agent::conversation::{Conversation, RecordSink, Replayed, Replayer};
use crate::agent::turn::{SessionState, TurnContext};
use crate::protocol::{Event, ExportFormat, ResumedSession, SessionListing};
use crate::sessions::record::now_ms;
use crate::sessions::{Record, SessionId};
use crate::tools::skill::{BundledTools, load_bundled_tools};

/// What the agent needs from the session files.
pub trait SessionArchive: Send + Sync {
    /// A new session for `model`: its id and where its records go (the file is created
    /// with the first record).
    fn create(&self, model: &str) -> (SessionId, Box<dyn RecordSink>);
    /// The session `query` names (an id or a unique prefix), or why none.
    fn find(&self, query: &str) -> Result<SessionId, String>;
    /// Reads session `id`, giving each record to `on_record`, and opens it for
    /// appending; returns the sink and warnings (a torn last record...).
    fn open(
        &self,
        id: &SessionId,
        on_record: &mut dyn FnMut(Record),
    ) -> Result<(Box<dyn RecordSink>, Vec<String>), String>;
    /// This project's sessions, newest first.
    fn list(&self) -> Result<Vec<SessionListing>, String>;
    /// Writes session `id` to `dest` in `format`.
    fn export(&self, id: &SessionId, format: ExportFormat, dest: &Path) -> Result<(), String>;
    /// Session `id`'s artifacts.
    fn artifacts(&self, id: &SessionId) -> crate::artifacts::ArtifactStore;

    /// Where session `id`'s images are kept: `images/` in its artifacts folder, so
    /// they go wherever the session goes and are removed with it.
    fn images(&self, id: &SessionId) -> crate::images::ImageStore {
        crate::images::ImageStore::Folder(self.artifacts(id).dir().join(crate::images::FOLDER))
    }
    /// Session `id`'s file, once it is written (`/status`).
    fn file(&self, id: &SessionId) -> Option<std::path::PathBuf> {
        let _ = id;
        None
    }
}

use crate::config::ModelSource;

/// How the session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStart {
    /// A new conversation.
    New,
    /// Go on with this saved session.
    Resume(SessionId),
}

/// The conversation a run starts with: a new one (saved when there is a store), or a
/// resumed one. Returns the session's id when saved, and the events that tell the
/// frontend about a resume (sent after [`Event::SessionConfigured`]).
pub fn start(state: &mut SessionState, ctx: &TurnContext) -> (Option<SessionId>, Vec<Event>) {
    let setup = &ctx.setup;
    let Some(store) = setup.sessions.clone() else {
        return (None, Vec::new());
    };
    let mut events = Vec::new();
    if let SessionStart::Resume(id) = &setup.start {
        match resume(state, ctx, store.as_ref(), id) {
            Ok(resumed) => return (Some(id.clone()), resumed),
            Err(e) => events.push(Event::Warning {
                message: format!("could not resume session {id}: {e}; this is a new session"),
            }),
        }
    }
    let (id, sink) = store.create(&super::endpoint::shown_model(setup, state));
    state.cache_key = id.to_string();
    state.conversation = Conversation::new(setup.system_prompt.clone(), Some(sink));
    state.artifacts = Some(store.artifacts(&id));
    state.images = store.images(&id);
    (Some(id), events)
}

/// Replaces the conversation of `state` by saved session `id`; returns the events that
/// tell the frontend (warnings, then [`Event::SessionResumed`]).
pub fn resume(
    state: &mut SessionState,
    ctx: &TurnContext,
    store: &dyn SessionArchive,
    id: &SessionId,
) -> Result<Vec<Event>, String> {
    let setup = &ctx.setup;
    let tools = &setup.tools;
    let kinds = |name: &str| tools.output_kind(name);
    let mut replayer = Replayer::new(
        setup.system_prompt.clone(),
        setup.context_window.get(),
        &kinds,
    );
    let (sink, warnings) = store.open(id, &mut |record| replayer.apply(record))?;
    let Replayed {
        mut conversation,
        model,
        effort,
        loaded_skills,
        saved_prompt,
        history,
        turns,
        plan,
    } = replayer.finish(Some(sink));
    let mut events: Vec<Event> = warnings
        .into_iter()
        .map(|message| Event::Warning { message })
        .collect();
    let mut notes = Vec::new();
    if saved_prompt.as_deref() != Some(setup.system_prompt.as_str()) {
        conversation.record(Record::SystemPrompt {
            prompt: setup.system_prompt.clone(),
        });
        notes.push(
            "the system prompt was rebuilt from today's AGENTS.md and skills, and it differs \
             from the one this session was saved with"
                .to_string(),
        );
    }
    conversation.record(Record::Resumed {
        at_ms: now_ms(),
        cwd: setup.workdir.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    });
    if let (Some(model), ModelSource::Settings) = (model, setup.model_source)
        && model != super::endpoint::shown_model(setup, state)
    {
        // The provider and model the session last used; a provider no longer configured
        // leaves the one in use.
        if let Err(problem) = super::endpoint::adopt(setup, state, &model) {
            notes.push(format!("the session used {model}: {problem}"));
        }
    }
    let mut effort_changed = None;
    if let (Some(effort), ModelSource::Settings) = (effort, setup.effort_source)
        && state.effort != Some(effort)
    {
        state.effort = Some(effort);
        effort_changed = Some(Event::EffortChanged { effort });
    }
    // The skills loaded when it was saved are loaded again, with their tools.
    setup.loaded_skills.clear();
    for name in &loaded_skills {
        if let Some(server) = crate::mcp::tools::server_of_owner(name) {
            if setup.mcp.has(server) {
                super::mcp_servers::load_in_background(setup, server);
            } else {
                notes.push(format!(
                    "MCP server `{server}` was loaded in this session but is not configured now"
                ));
            }
            continue;
        }
        match setup.catalog.current().get(name) {
            Some(skill) => {
                setup.loaded_skills.mark(name);
                if let BundledTools::Failed(problem) = load_bundled_tools(skill, tools.loaded()) {
                    notes.push(format!(
                        "skill `{name}`: its tools were not loaded: {problem}"
                    ));
                }
            }
            None => notes.push(format!(
                "skill `{name}` was loaded in this session but is no longer installed"
            )),
        }
    }
    conversation.sync_skills(&setup.loaded_skills.names());
    state.conversation = conversation;
    state.cache_key = id.to_string();
    state.artifacts = Some(store.artifacts(id));
    state.images = store.images(id);
    events.push(Event::SessionResumed(Box::new(ResumedSession {
        id: id.to_string(),
        model: super::endpoint::shown_model(setup, state),
        turns,
        loaded_skills: setup.loaded_skills.names(),
        history,
        notes,
    })));
    events.extend(effort_changed);
    events.extend(plan.map(|plan| Event::Plan { plan }));
    Ok(events)
}

/// `/resume ID` while running: finds the session and resumes it; returns its id.
pub fn resume_by_query(
    state: &mut SessionState,
    ctx: &TurnContext,
    query: &str,
) -> Option<SessionId> {
    let Some(store) = ctx.setup.sessions.clone() else {
        ctx.emit(Event::Warning {
            message: "sessions are not saved in this run (--no-session or sessions = false), \
                      so none can be resumed"
                .into(),
        });
        return None;
    };
    let result = store.find(query).and_then(|id| {
        let events = resume(state, ctx, store.as_ref(), &id)?;
        Ok((id, events))
    });
    match result {
        Ok((id, events)) => {
            for event in events {
                ctx.emit(event);
            }
            Some(id)
        }
        Err(e) => {
            ctx.emit(Event::Warning {
                message: format!("could not resume: {e}"),
            });
            None
        }
    }
}

/// `/resume` without an id: this project's sessions but the one in use (`current`),
/// for a picker or a list.
pub fn list(ctx: &TurnContext, current: Option<&SessionId>) {
    let result = match &ctx.setup.sessions {
        Some(store) => store.list(),
        None => Err("sessions are not saved in this run (--no-session or sessions = false)".into()),
    };
    match result {
        Ok(mut sessions) => {
            // The session in use is not one to go on with.
            if let Some(current) = current {
                sessions.retain(|s| s.id != current.as_str());
            }
            ctx.emit(Event::SessionList { sessions })
        }
        Err(e) => ctx.emit(Event::Warning {
            message: format!("cannot list sessions: {e}"),
        }),
    }
}

/// `/export [md|json] [FILE]`: writes the current session; the file goes in the
/// project directory unless a path is given.
pub fn export(
    ctx: &TurnContext,
    id: Option<&SessionId>,
    format: ExportFormat,
    path: Option<PathBuf>,
) {
    let (Some(store), Some(id)) = (&ctx.setup.sessions, id) else {
        ctx.emit(Event::Warning {
            message: "this session is not saved (--no-session or sessions = false), so there \
                      is nothing to export"
                .into(),
        });
        return;
    };
    let dest = path.unwrap_or_else(|| {
        ctx.setup
            .workdir
            .join(format!("harness9-session-{id}.{}", format.extension()))
    });
    let dest = if dest.is_relative() {
        ctx.setup.workdir.join(dest)
    } else {
        dest
    };
    match store.export(id, format, &dest) {
        Ok(()) => ctx.emit(Event::Exported { path: dest }),
        Err(e) => ctx.emit(Event::Warning {
            message: format!("could not export the session to {}: {e}", dest.display()),
        }),
    }
}
