//! A session run, from the parsed flags to the frontend's end: the configuration
//! resolved with an endpoint, the secrets sealed, the sandbox set up, logging opened,
//! `-c`/`--resume` resolved to a saved session, the runtime started, the remote skills
//! root synced, and the session prepared and handed to the chosen [`Frontend`] (print
//! mode, the TUI or the REPL).
//!
//! It returns how the run [`Ended`], or a typed [`LaunchError`] with the kind scripts
//! see; exit codes and how an error is reported are `main`'s. It must not know how the
//! agent or the frontends work inside.

use std::io::Write;
use std::sync::{Arc, Mutex};

mod acp_sessions;

use crate::acp::{self, AcpEnd, AcpError};
use crate::agent::output_schema::{OutputSchema, OutputSchemaError};
use crate::agent::saved::SessionStart;
use crate::agent::{AgentHandle, Approver};
use crate::cli::{Cli, ResumeRequest, SessionsAction};
use crate::commands::{self, CommandError};
use crate::config::{Config, ConfigError, EndpointNeed, OllamaProbe, SessionSaving};
use crate::llm::LlmError;
use crate::print::{self, Activity, OutputFormat, PrintEnd, PrintError, PrintOptions, StdinKind};
use crate::protocol::{ErrorKind, Event};
use crate::repl::{self, ReplError, ReplInput};
use crate::sandbox::{Decision, SandboxRefusal, SessionSandbox};
use crate::signals::EndingSignal;
use crate::sink::{self, ReaderState, Sink};
use crate::startup::{self, Home};
use crate::{session, tui};

/// Which frontend runs the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frontend {
    /// `-p`: one prompt.
    Print(StdinKind),
    /// The full-screen UI.
    Tui,
    /// The line REPL (a pipe, or a terminal without the TUI).
    Repl(ReplInput),
    /// `harness9 acp`: an Agent Client Protocol agent on stdio, for editors.
    Acp,
}

/// How a session run ended.
#[derive(Debug)]
pub enum Ended {
    /// The session is over: `failure` is the kind of the first turn that did not
    /// complete (or of a prompt refused before any turn), none when every turn
    /// completed or stdout's reader went away.
    Finished {
        /// What failed, if anything.
        failure: Option<ErrorKind>,
    },
    /// A signal ended it: every command was stopped, the terminal restored, stderr told
    /// (`harness9: terminated by SIGTERM`), and the runtime left to shut down in the
    /// background (a task stuck in a blocking read must not keep a terminated harness9
    /// alive).
    Signalled(EndingSignal),
    /// `--resume` without an id outside the TUI, where there is nothing to pick with:
    /// this project's sessions were listed instead, as `harness9 sessions list` does.
    Listed(Result<(), CommandError>),
}

/// A saved session that cannot be gone on with (`-c`, `--resume ID`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ResumeError(String);

/// Why a session could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The configuration is invalid or incomplete (no endpoint, a bad file).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `-c` or `--resume ID` names no session that can be gone on with.
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The provider cannot even be set up (a bad base URL or header).
    #[error(transparent)]
    Provider(#[from] LlmError),
    /// The sandbox was asked for and cannot be had.
    #[error(transparent)]
    Sandbox(#[from] SandboxRefusal),
    /// `--output-schema` names no usable schema.
    #[error(transparent)]
    OutputSchema(#[from] OutputSchemaError),
    /// harness9's own binary (the sandbox launcher) cannot be found.
    #[error("cannot find harness9's own binary to start sandboxed commands")]
    OwnBinary(#[source] std::io::Error),
    /// `--input-format stream-json` without `--output-format stream-json`.
    #[error(
        "--input-format stream-json needs --output-format stream-json: the driver answers \
         approvals by the call_id of the approval_request events it reads"
    )]
    InputNeedsStreamOutput,
    /// The async runtime could not be started.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// Print mode failed.
    #[error(transparent)]
    Print(#[from] PrintError),
    /// `harness9 acp` failed.
    #[error(transparent)]
    Acp(#[from] AcpError),
    /// The TUI failed.
    #[error(transparent)]
    Tui(#[from] tui::TuiError),
    /// The REPL failed.
    #[error(transparent)]
    Repl(#[from] ReplError),
}

impl LaunchError {
    /// The kind scripts see: what the user must fix (the config, the session asked
    /// for, the provider's settings, the sandbox) is a usage error, the rest internal.
    pub fn kind(&self) -> ErrorKind {
        match self {
            LaunchError::Config(_)
            | LaunchError::Resume(_)
            | LaunchError::Provider(_)
            | LaunchError::Sandbox(_)
            | LaunchError::InputNeedsStreamOutput
            | LaunchError::OutputSchema(_) => ErrorKind::Usage,
            LaunchError::OwnBinary(_)
            | LaunchError::Runtime(_)
            | LaunchError::Print(_)
            | LaunchError::Acp(_)
            | LaunchError::Tui(_)
            | LaunchError::Repl(_) => ErrorKind::Internal,
        }
    }
}

/// Runs a session in `frontend` as the flags ask.
pub fn run(cli: &Cli, frontend: Frontend) -> Result<Ended, LaunchError> {
    if frontend == Frontend::Repl(ReplInput::StreamJson)
        && cli.output_format != OutputFormat::StreamJson
    {
        return Err(LaunchError::InputNeedsStreamOutput);
    }
    if frontend == Frontend::Acp {
        return run_acp(cli);
    }
    let config = configure(cli)?;
    // Read and compiled before anything starts: a bad schema is a usage error.
    let output_schema = match &cli.output_schema {
        Some(path) => Some(Arc::new(OutputSchema::load(path)?)),
        None => None,
    };
    let home = startup::init_logging(&config);
    let (start, start_view) = match session_start(cli, &config)? {
        Start::Session(start) => (start, tui::StartView::Conversation),
        Start::Pick if frontend == Frontend::Tui => {
            (SessionStart::New, tui::StartView::ResumePicker)
        }
        Start::Pick => return Ok(list_instead(&config, &home)),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(LaunchError::Runtime)?;
    // The remote skills root (SKILLS_ROOT as a URL), downloaded or refreshed before the
    // session is prepared; its problems are start-up warnings, never fatal.
    let remote = runtime.block_on(session::sync_remote_skills(&config));
    let approver = match frontend {
        Frontend::Print(_) | Frontend::Repl(ReplInput::Piped) => Approver::Nobody,
        // A stream-json driver answers approvals: they wait for it.
        Frontend::Tui
        | Frontend::Repl(ReplInput::Terminal | ReplInput::StreamJson)
        | Frontend::Acp => Approver::Frontend,
    };
    if frontend == Frontend::Tui && cli.output_format != OutputFormat::Text {
        sink::stderr_line(
            "harness9: --output-format applies to print and pipe modes; ignored in the TUI",
        );
    }
    let mut prepared = with_home_warning(
        session::prepare_with_remote(&config, approver, remote, start)?,
        &home,
    );
    prepared.setup.output_schema = output_schema;
    // A sandbox launcher waiting before the first command needs one (after the first
    // request has gone).
    runtime.spawn(crate::exec::warm_up());
    let ended = match frontend {
        Frontend::Print(stdin) => run_print(cli, &config, &runtime, prepared, stdin)?,
        Frontend::Tui => run_tui(cli, &config, &runtime, prepared, start_view)?,
        Frontend::Repl(input) => run_repl(cli, &config, &runtime, prepared, input)?,
        // Answered before anything is configured (above).
        Frontend::Acp => Ended::Finished { failure: None },
    };
    if let Ended::Signalled(signal) = &ended {
        // Said before the runtime is let go, as the run's last words.
        sink::stderr_line(&format!("harness9: terminated by {signal}"));
        runtime.shutdown_background();
    }
    Ok(ended)
}

/// `harness9 acp`: the runtime only; each session is configured and prepared when the
/// editor opens it, for its directory ([`acp_sessions`]).
fn run_acp(cli: &Cli) -> Result<Ended, LaunchError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(LaunchError::Runtime)?;
    let ended = match acp::run(&runtime, acp_sessions::AcpSessions::new(cli))? {
        AcpEnd::Closed => Ended::Finished { failure: None },
        AcpEnd::Signalled(signal) => Ended::Signalled(signal),
    };
    if let Ended::Signalled(signal) = &ended {
        sink::stderr_line(&format!("harness9: terminated by {signal}"));
        runtime.shutdown_background();
    }
    Ok(ended)
}

/// The configuration with an endpoint, the secrets sealed and the sandbox set up.
fn configure(cli: &Cli) -> Result<Config, LaunchError> {
    configure_with(cli, &cli.overrides())
}

/// [`configure`] with these overrides (the flags', perhaps with another directory).
fn configure_with(cli: &Cli, overrides: &crate::config::Overrides) -> Result<Config, LaunchError> {
    let mut config = Config::resolve(
        overrides,
        &|name| std::env::var(name).ok(),
        EndpointNeed::Required,
        OllamaProbe::Enabled,
    )?;
    if cli.no_session {
        config.session_saving = SessionSaving::Disabled;
    }
    refuse_an_uncountable_budget(&config)?;
    // Every command started for the model or a skill from now on leaves out the key,
    // header values and secret-looking variables, and none can read them in this
    // process's environment block or memory.
    if let Err(e) = startup::seal_secrets(&config) {
        config.warnings.push(e.to_string());
    }
    // And each runs in the sandbox, when there is one.
    match crate::sandbox::decide(
        &config.sandbox,
        config.approval_mode,
        &config.workdir,
        &config.project_root,
    )? {
        Decision::Confined(policy) => {
            let launcher = std::env::current_exe().map_err(LaunchError::OwnBinary)?;
            crate::sandbox::configure(SessionSandbox {
                policy: std::sync::Arc::new(policy),
                launcher,
            });
        }
        Decision::Unconfined { warning } => config.warnings.extend(warning),
    }
    // Plan mode confines its commands read-only even without a session sandbox.
    crate::sandbox::prepare_read_only(&config.sandbox, &config.workdir, &config.project_root);
    Ok(config)
}

/// `--max-cost` with a starting model that has no price: its spend could not be
/// counted, so the run is refused before anything is sent (a model without a price met
/// later, a resumed session's, stops the run at its first request: `agent::limits`).
fn refuse_an_uncountable_budget(config: &Config) -> Result<(), ConfigError> {
    if config.run.max_cost.is_none() {
        return Ok(());
    }
    let prices = config
        .providers
        .endpoint(&config.provider_id)
        .map_or(&config.prices, |e| &e.prices);
    if prices.for_model(&config.model).is_some() {
        return Ok(());
    }
    Err(ConfigError::Invalid {
        what: "--max-cost".into(),
        message: format!(
            "model `{}` has no price, so what the run spends cannot be counted; give it \
             one in config.toml's [prices] (docs/CONFIG.md)",
            config.model
        ),
    })
}

/// `-r` without an id outside the TUI: there is nothing to pick with, so the sessions
/// are listed.
fn list_instead(config: &Config, home: &Home) -> Ended {
    if let Some(warning) = home.warning() {
        sink::stderr_line(&format!("harness9: warning: {warning}"));
    }
    let list = SessionsAction::List {
        all: false,
        json: false,
    };
    Ended::Listed(commands::sessions(config, &list))
}

/// How much tool activity goes to stderr: all of it with `-v`; one line per call in the
/// line REPL on a terminal (`--no-tui`, where nothing else shows what runs); else none.
fn activity(cli: &Cli, frontend: Frontend) -> Activity {
    match frontend {
        _ if cli.verbose => Activity::Shown,
        Frontend::Repl(ReplInput::Terminal) => Activity::Calls,
        Frontend::Print(_)
        | Frontend::Tui
        | Frontend::Repl(ReplInput::Piped | ReplInput::StreamJson)
        | Frontend::Acp => Activity::Hidden,
    }
}

/// Whether `-p` and the REPL show reasoning (`--show-reasoning`, `show_reasoning`), and
/// dimmed only on a terminal without `NO_COLOR`.
fn thoughts(cli: &Cli, config: &Config) -> print::ThoughtDisplay {
    use std::io::IsTerminal;
    print::ThoughtDisplay::choose(
        cli.show_reasoning || config.show_reasoning == crate::config::ShowReasoning::Shown,
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
    )
}

/// Print mode to its end.
fn run_print(
    cli: &Cli,
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    prepared: session::Prepared,
    stdin: StdinKind,
) -> Result<Ended, LaunchError> {
    let options = PrintOptions {
        prompt: cli.print.clone().unwrap_or_default(),
        images: cli.images.clone(),
        format: cli.output_format,
        activity: activity(cli, Frontend::Print(stdin)),
        stdin,
        thoughts: thoughts(cli, config),
        // An answer held to a schema is JSON: printed as it is, never as Markdown.
        answer: if cli.raw || cli.output_schema.is_some() {
            print::AnswerRender::Raw
        } else {
            // The REPL's Markdown renderer, so `-p` shows what pipe mode shows: its
            // plain style (print mode's stdout passes everything through the
            // neutralizing writer, where styling escapes would show as `^[`).
            print::AnswerRender::Rendered(Box::new(move |markdown: &str| {
                let mut stream = repl::MarkdownStream::new(repl::MarkdownStyle::Plain);
                let mut shown = stream.push(markdown);
                shown.push_str(&stream.finish());
                shown
            }))
        },
    };
    Ok(match print::run(runtime, prepared, options)? {
        PrintEnd::Finished { failure } => Ended::Finished { failure },
        PrintEnd::Signalled(signal) => Ended::Signalled(signal),
    })
}

/// The TUI to its end, then the session's token count and how to go on with it on
/// stdout.
fn run_tui(
    cli: &Cli,
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    prepared: session::Prepared,
    start: tui::StartView,
) -> Result<Ended, LaunchError> {
    let options = tui::TuiOptions {
        screen: if cli.alt_screen {
            tui::ScreenMode::AltScreen
        } else {
            tui::ScreenMode::Inline
        },
        start,
        first_prompt: cli.prompt.clone(),
    };
    let watch = SessionWatch::default();
    let result = runtime.block_on(async {
        let (handle, info) = prepared.spawn();
        tui::run(watch.watching(handle), info, options).await
    });
    match result {
        Ok(usage) => {
            let est = if usage.estimated { " (estimated)" } else { "" };
            let mut out = Sink::new(std::io::stdout());
            let _ = writeln!(
                out,
                "tokens: {} in, {} out{est}",
                usage.input_tokens, usage.output_tokens
            );
            if let Some(hint) = watch.resume_hint(config) {
                let _ = writeln!(out, "{hint}");
            }
            Ok(Ended::Finished { failure: None })
        }
        // The terminal is already restored; exit as a signalled process would.
        Err(tui::TuiError::Signal { signal }) => Ok(Ended::Signalled(signal)),
        Err(e) => Err(e.into()),
    }
}

/// The REPL to its end; in text output, how to go on with the session on stderr.
fn run_repl(
    cli: &Cli,
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    prepared: session::Prepared,
    input: ReplInput,
) -> Result<Ended, LaunchError> {
    let options = repl::ReplOptions {
        format: cli.output_format,
        activity: activity(cli, Frontend::Repl(input)),
        input,
        thoughts: thoughts(cli, config),
        answer: if cli.raw {
            repl::AnswerText::Raw
        } else {
            repl::AnswerText::Rendered
        },
        // With stream-json input, `-p PROMPT` is the first message (`-p -` or an empty
        // `-p` leaves every message to stdin).
        first_prompt: cli.prompt.clone().or_else(|| {
            cli.print
                .clone()
                .filter(|p| p != "-" && !p.trim().is_empty())
        }),
    };
    let watch = SessionWatch::default();
    let summary = runtime.block_on(async {
        let (handle, info) = prepared.spawn();
        repl::run(watch.watching(handle), info, options).await
    })?;
    if summary.signal.is_none()
        && summary.reader == ReaderState::Reading
        && cli.output_format == OutputFormat::Text
        && let Some(hint) = watch.resume_hint(config)
    {
        sink::stderr_line(&hint);
    }
    Ok(match (summary.signal, summary.reader) {
        (Some(signal), _) => Ended::Signalled(signal),
        // A reader that stopped reading (`| head`) asked for no more: not a failure.
        (None, ReaderState::Gone) => Ended::Finished { failure: None },
        (None, ReaderState::Reading) => Ended::Finished {
            failure: summary.failure,
        },
    })
}

/// The saved session a frontend is in, as the agent last said
/// ([`Event::SessionConfigured`], then [`Event::SessionResumed`] after `/resume`), read
/// off the events on their way to the frontend.
#[derive(Debug, Clone, Default)]
struct SessionWatch(Arc<Mutex<Option<String>>>);

impl SessionWatch {
    /// `handle` with its events passed on through this watch, in order; the frontend's
    /// stream closes when the agent's does.
    fn watching(&self, handle: AgentHandle) -> AgentHandle {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let seen = self.0.clone();
        let mut events = handle.events;
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let id = match &event {
                    Event::SessionConfigured { session_id, .. } => Some(session_id.clone()),
                    Event::SessionResumed(resumed) => Some(Some(resumed.id.clone())),
                    _ => None,
                };
                if let Some(id) = id
                    && let Ok(mut seen) = seen.lock()
                {
                    *seen = id;
                }
                if tx.send(event).is_err() {
                    return;
                }
            }
        });
        AgentHandle {
            ops: handle.ops,
            events: rx,
        }
    }

    /// The command that goes on with the session, when it was saved (its file is
    /// created with the first thing said): `harness9 --resume ID`, with `-C DIR` when
    /// the project is not the current folder.
    fn resume_hint(&self, config: &Config) -> Option<String> {
        let id = self.0.lock().ok()?.clone()?;
        let sessions = session::live_sessions(config)?;
        sessions.store().find(&id).ok()?;
        let here = std::env::current_dir().ok();
        let project = if here.as_deref() == Some(config.workdir.as_path()) {
            String::new()
        } else {
            format!(
                " -C {}",
                crate::cli::hints::shell_word(&config.workdir.display().to_string())
            )
        };
        Some(format!(
            "To continue this session, run harness9{project} --resume {id}"
        ))
    }
}

/// How the run's conversation starts.
enum Start {
    /// New, or a saved session found.
    Session(SessionStart),
    /// `--resume` without an id: pick one.
    Pick,
}

/// Resolves `-c` and `--resume` to a saved session before anything starts, so that a
/// session that cannot be found is a clear usage error, never a silent new session.
fn session_start(cli: &Cli, config: &Config) -> Result<Start, ResumeError> {
    let request = cli.resume_request();
    if request == ResumeRequest::New {
        return Ok(Start::Session(SessionStart::New));
    }
    let Some(sessions) = session::live_sessions(config) else {
        return Err(ResumeError(
            "sessions are not saved in this run (--no-session, sessions = false or \
             HARNESS9_SESSIONS=0), so none can be resumed"
                .into(),
        ));
    };
    let id = match request {
        ResumeRequest::New => return Ok(Start::Session(SessionStart::New)),
        ResumeRequest::Pick => return Ok(Start::Pick),
        ResumeRequest::Latest => sessions.latest().map_err(ResumeError)?.ok_or_else(|| {
            ResumeError(format!(
                "no saved session for {} to continue (harness9 sessions list --all shows \
                 every project's)",
                sessions.project().display()
            ))
        })?,
        ResumeRequest::Id(query) => sessions.find_id(&query).map_err(ResumeError)?,
    };
    // Another harness9 writing it: refused here, clearly. (Two starting at the same
    // instant are still kept apart by the writer's lock; the later one then starts a
    // new session with a warning.)
    if let Some(reason) = sessions.in_use(&id) {
        return Err(ResumeError(reason));
    }
    Ok(Start::Session(SessionStart::Resume(id)))
}

/// Puts the home's warning first among a prepared session's start-up warnings.
fn with_home_warning(mut prepared: session::Prepared, home: &Home) -> session::Prepared {
    if let Some(warning) = home.warning() {
        prepared
            .info
            .startup_warnings
            .insert(0, warning.to_string());
    }
    prepared
}
