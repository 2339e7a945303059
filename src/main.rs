//! The `harness9` binary: arguments → config → frontend → exit code. This is the one
//! place where errors become exit codes (documented in docs/HEADLESS.md) and where
//! `anyhow` is used.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use harness9::agent::Approver;
use harness9::agent::saved::SessionStart;
use harness9::cli::{
    ArtifactsAction, Cli, Command, McpAction, PermissionsAction, ResumeRequest,
    SessionExportFormat, SessionsAction, SkillsAction,
};
use harness9::config::{Config, ConfigError, EndpointNeed, OllamaProbe, SessionSaving};
use harness9::print::{self, Activity, HeadlessRenderer, OutputFormat, TextDelivery};
use harness9::protocol::{ErrorKind, InputOrigin, Invocation, Op};
use harness9::sandbox::{Decision, SessionSandbox};
use harness9::sink::{self, ReaderState, Sink};
use harness9::startup::{self, Home};
use harness9::{input, repl, session, tui};

/// Exit codes (docs/HEADLESS.md).
mod code {
    pub const OK: u8 = 0;
    pub const INTERNAL: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const PROVIDER_REFUSED: u8 = 3;
    pub const PROVIDER_UNAVAILABLE: u8 = 4;
    pub const LIMIT: u8 = 5;
    pub const INTERRUPTED: u8 = 130;
}

/// The exit code for a turn that ended with `kind`.
fn exit_code_for(kind: Option<ErrorKind>) -> u8 {
    match kind {
        None => code::OK,
        Some(ErrorKind::Auth | ErrorKind::ModelNotFound | ErrorKind::BadRequest)
        | Some(ErrorKind::ContextTooLong | ErrorKind::Quota | ErrorKind::Protocol)
        | Some(ErrorKind::ContentFilter) => code::PROVIDER_REFUSED,
        Some(
            ErrorKind::RateLimit | ErrorKind::Server | ErrorKind::Network | ErrorKind::Timeout,
        ) => code::PROVIDER_UNAVAILABLE,
        Some(ErrorKind::MaxTurns | ErrorKind::OutputLimit) => code::LIMIT,
        Some(ErrorKind::Interrupted) => code::INTERRUPTED,
        Some(ErrorKind::Usage) => code::USAGE,
        Some(ErrorKind::Skill | ErrorKind::Internal) => code::INTERNAL,
    }
}

/// How this run talks to the user, decided from the flags and the terminals before
/// anything else (so that even a bad config is reported in the chosen output format).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A subcommand: `harness9 skills …`, `harness9 sessions …`.
    Skills,
    /// `-p`: one prompt.
    Print,
    /// The full-screen UI.
    Tui,
    /// The line REPL (a pipe, or a terminal without the TUI).
    Repl(repl::ReplInput),
}

impl Mode {
    fn of(cli: &Cli, terminals: Terminals) -> Mode {
        if cli.command.is_some() {
            Mode::Skills
        } else if cli.print.is_some() {
            Mode::Print
        } else if terminals.stdin && terminals.stdout && !cli.no_tui && !terminals.dumb {
            Mode::Tui
        } else if terminals.stdin {
            Mode::Repl(repl::ReplInput::Terminal)
        } else {
            Mode::Repl(repl::ReplInput::Piped)
        }
    }
}

/// Which standard streams are terminals.
#[derive(Debug, Clone, Copy)]
struct Terminals {
    stdin: bool,
    stdout: bool,
    /// `TERM=dumb`.
    dumb: bool,
}

fn main() -> ExitCode {
    // Started as the sandbox launcher: confine this process and become the command
    // (before anything else exists: no runtime, no threads, no config).
    if let Some(code) = harness9::sandbox::launcher::run_if_requested() {
        return ExitCode::from(code);
    }
    let cli = Cli::parse();
    let terminals = Terminals {
        stdin: std::io::stdin().is_terminal(),
        stdout: std::io::stdout().is_terminal(),
        dumb: std::env::var("TERM").is_ok_and(|t| t == "dumb"),
    };
    let mode = Mode::of(&cli, terminals);
    match run(&cli, mode, terminals) {
        Ok(code) => ExitCode::from(code),
        Err(e) => ExitCode::from(fail(&cli, mode, &e)),
    }
}

/// Reports an error that ended the run before or outside a turn and returns the exit
/// code. Config problems, and a provider that cannot even be set up (a bad base URL or
/// header), are the user's to fix: the usage exit code. In print and pipe modes with a
/// JSON format the failure is also the `result` scripts read.
fn fail(cli: &Cli, mode: Mode, e: &anyhow::Error) -> u8 {
    let kind = if e.downcast_ref::<ConfigError>().is_some()
        || e.downcast_ref::<ResumeError>().is_some()
        || e.downcast_ref::<harness9::llm::LlmError>().is_some()
        || e.downcast_ref::<harness9::sandbox::SandboxRefusal>()
            .is_some()
    {
        ErrorKind::Usage
    } else {
        ErrorKind::Internal
    };
    let message = error_text(e);
    sink::stderr_line(&format!("harness9: {message}"));
    if matches!(mode, Mode::Print | Mode::Repl(repl::ReplInput::Piped))
        && cli.output_format != OutputFormat::Text
    {
        let mut renderer = HeadlessRenderer::new(
            cli.output_format,
            TextDelivery::FinalOnly,
            Activity::Hidden,
            std::io::stdout().lock(),
            std::io::sink(),
        );
        let _ = renderer.fail_before_turn(kind, &message);
    }
    exit_code_for(Some(kind))
}

/// An error and its causes on one line, each cause once: a message that already quotes
/// its cause (`cannot read X: Not a directory`) is not followed by it again.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn run(cli: &Cli, mode: Mode, terminals: Terminals) -> anyhow::Result<u8> {
    let overrides = cli.overrides();
    // Subcommands never call the model: no endpoint is needed or looked for.
    if let Some(command) = &cli.command {
        let config = Config::resolve(
            &overrides,
            &env_lookup,
            EndpointNeed::None,
            OllamaProbe::Disabled,
        )?;
        let sealed = startup::seal_secrets(&config);
        let home = startup::init_logging(&config);
        if let Err(e) = sealed {
            tracing::warn!("{e}");
        }
        return match command {
            Command::Skills { action } => skills_command(&config, &home, action),
            Command::Sessions { action } => Ok(sessions_command(&config, &home, action)),
            Command::Artifacts { action } => Ok(artifacts_command(&config, action)),
            Command::Permissions { action } => permissions_command(&config, action),
            Command::Mcp { action } => mcp_command(&config, &home, action),
        };
    }
    let mut config = Config::resolve(
        &overrides,
        &env_lookup,
        EndpointNeed::Required,
        OllamaProbe::Enabled,
    )?;
    if cli.no_session {
        config.session_saving = SessionSaving::Disabled;
    }
    // Every command started for the model or a skill from now on leaves out the key,
    // header values and secret-looking variables, and none can read them in this
    // process's environment block or memory.
    if let Err(e) = startup::seal_secrets(&config) {
        config.warnings.push(e.to_string());
    }
    // And each runs in the sandbox, when there is one.
    match harness9::sandbox::decide(&config.sandbox, config.approval_mode, &config.workdir)? {
        Decision::Confined(policy) => {
            let launcher = std::env::current_exe()
                .context("cannot find harness9's own binary to start sandboxed commands")?;
            harness9::sandbox::configure(SessionSandbox {
                policy: std::sync::Arc::new(policy),
                launcher,
            });
        }
        Decision::Unconfined { warning } => config.warnings.extend(warning),
    }
    let home = startup::init_logging(&config);
    let (start, start_view) = match session_start(cli, &config)? {
        Start::Session(start) => (start, tui::StartView::Conversation),
        Start::Pick if mode == Mode::Tui => (SessionStart::New, tui::StartView::ResumePicker),
        Start::Pick => {
            // Outside the TUI there is nothing to pick with: list them.
            let list = SessionsAction::List {
                all: false,
                json: false,
            };
            return Ok(sessions_command(&config, &home, &list));
        }
    };

    let activity = if cli.verbose {
        Activity::Shown
    } else {
        Activity::Hidden
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The remote skills root (SKILLS_ROOT as a URL), downloaded or refreshed before the
    // session is prepared; its problems are start-up warnings, never fatal.
    let remote = runtime.block_on(session::sync_remote_skills(&config));

    match mode {
        Mode::Skills => Ok(code::USAGE),
        Mode::Print => {
            let prepared = with_home_warning(
                session::prepare_with_remote(&config, Approver::Nobody, remote, start)?,
                &home,
            );
            let ended = print_mode(cli, terminals, &runtime, prepared, activity)?;
            Ok(ended.code(runtime))
        }
        Mode::Tui => {
            if cli.output_format != OutputFormat::Text {
                sink::stderr_line(
                    "harness9: --output-format applies to print and pipe modes; ignored in the TUI",
                );
            }
            let prepared = with_home_warning(
                session::prepare_with_remote(&config, Approver::Frontend, remote, start)?,
                &home,
            );
            let options = tui::TuiOptions {
                screen: if cli.alt_screen {
                    tui::ScreenMode::AltScreen
                } else {
                    tui::ScreenMode::Inline
                },
                start: start_view,
            };
            let result = runtime.block_on(async {
                let (handle, info) = prepared.spawn();
                tui::run(handle, info, options).await
            });
            let usage = match result {
                Ok(usage) => usage,
                // The terminal is already restored; exit as a signalled process would.
                Err(tui::TuiError::Signal { signal }) => {
                    return Ok(Ended::BySignal(signal).code(runtime));
                }
                Err(e) => return Err(e.into()),
            };
            let est = if usage.estimated { " (estimated)" } else { "" };
            let mut out = Sink::new(std::io::stdout());
            let _ = writeln!(
                out,
                "tokens: {} in, {} out{est}",
                usage.input_tokens, usage.output_tokens
            );
            Ok(code::OK)
        }
        Mode::Repl(input) => {
            let approver = match input {
                repl::ReplInput::Terminal => Approver::Frontend,
                repl::ReplInput::Piped => Approver::Nobody,
            };
            let prepared = with_home_warning(
                session::prepare_with_remote(&config, approver, remote, start)?,
                &home,
            );
            let options = repl::ReplOptions {
                format: cli.output_format,
                activity,
                input,
            };
            let summary = runtime.block_on(async {
                let (handle, info) = prepared.spawn();
                repl::run(handle, info, options).await
            })?;
            if let Some(signal) = summary.signal {
                return Ok(Ended::BySignal(signal).code(runtime));
            }
            // A reader that stopped reading (`| head`) asked for no more: not a failure.
            Ok(match summary.reader {
                ReaderState::Gone => code::OK,
                ReaderState::Reading => exit_code_for(summary.failure),
            })
        }
    }
}

/// How a session run ended, for its exit code.
enum Ended {
    /// With this exit code.
    Code(u8),
    /// By a signal: every command was stopped already; the exit code is 128 + its
    /// number.
    BySignal(harness9::signals::EndingSignal),
}

impl Ended {
    /// The exit code. A signal is reported on stderr, and the runtime is left to shut
    /// down in the background: a task stuck in a blocking read must not keep a
    /// terminated harness9 alive.
    fn code(self, runtime: tokio::runtime::Runtime) -> u8 {
        match self {
            Ended::Code(code) => code,
            Ended::BySignal(signal) => {
                sink::stderr_line(&format!("harness9: terminated by {signal}"));
                runtime.shutdown_background();
                signal.exit_code()
            }
        }
    }
}

/// A saved session that cannot be gone on with (`-c`, `--resume ID`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ResumeError(String);

/// How the run's conversation starts.
enum Start {
    /// New, or a saved session found.
    Session(SessionStart),
    /// `--resume` without an id: pick one.
    Pick,
}

/// Resolves `-c` and `--resume` to a saved session before anything starts, so that a
/// session that cannot be found is a clear usage error, never a silent new session.
fn session_start(cli: &Cli, config: &Config) -> anyhow::Result<Start> {
    let request = cli.resume_request();
    if request == ResumeRequest::New {
        return Ok(Start::Session(SessionStart::New));
    }
    let Some(sessions) = session::live_sessions(config) else {
        return Err(ResumeError(
            "sessions are not saved in this run (--no-session, sessions = false or \
             HARNESS9_SESSIONS=0), so none can be resumed"
                .into(),
        )
        .into());
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
        return Err(ResumeError(reason).into());
    }
    Ok(Start::Session(SessionStart::Resume(id)))
}

/// Where the prompt of `-p` comes from.
enum PromptSource {
    /// The argument itself; piped stdin, if any, is appended as context.
    Argument(String),
    /// `-p -`, or an empty `-p` with stdin piped: stdin is the whole prompt.
    Stdin,
}

impl PromptSource {
    fn of(argument: &str, stdin_is_terminal: bool) -> PromptSource {
        if !stdin_is_terminal && (argument == "-" || argument.trim().is_empty()) {
            PromptSource::Stdin
        } else {
            PromptSource::Argument(argument.to_string())
        }
    }
}

/// Print mode: one prompt (or skill invocation), its answer, its exit code.
fn print_mode(
    cli: &Cli,
    terminals: Terminals,
    runtime: &tokio::runtime::Runtime,
    prepared: session::Prepared,
    activity: Activity,
) -> anyhow::Result<Ended> {
    let mut renderer = HeadlessRenderer::new(
        cli.output_format,
        TextDelivery::FinalOnly,
        activity,
        std::io::stdout().lock(),
        std::io::stderr(),
    );
    renderer.set_model(&prepared.info.model);
    for warning in &prepared.info.startup_warnings {
        renderer.warning(warning)?;
    }
    let argument = cli.print.clone().unwrap_or_default();
    let source = PromptSource::of(&argument, terminals.stdin);
    let mut piped = String::new();
    if !terminals.stdin {
        std::io::stdin()
            .read_to_string(&mut piped)
            .context("cannot read stdin")?;
    }
    let (prompt, context) = match &source {
        PromptSource::Argument(_) if argument == "-" => {
            renderer.fail_before_turn(
                ErrorKind::Usage,
                "-p - reads the prompt from stdin, but stdin is a terminal: pipe the prompt in \
                 or give it as the argument",
            )?;
            return Ok(Ended::Code(code::USAGE));
        }
        PromptSource::Argument(prompt) => (prompt.clone(), piped),
        PromptSource::Stdin => (std::mem::take(&mut piped), String::new()),
    };
    let mut op = match input::route(
        &prompt,
        &prepared.info.catalog.current(),
        &prepared.info.mcp,
    ) {
        input::Routed::Empty => {
            let message = match source {
                PromptSource::Stdin => "the prompt is empty: -p was empty and so was stdin",
                PromptSource::Argument(_) => "the prompt given with -p is empty",
            };
            renderer.fail_before_turn(ErrorKind::Usage, message)?;
            return Ok(Ended::Code(code::USAGE));
        }
        input::Routed::Builtin(_) => {
            renderer.fail_before_turn(
                ErrorKind::Usage,
                "built-in commands such as /help work in the TUI and the REPL, not with -p",
            )?;
            return Ok(Ended::Code(code::USAGE));
        }
        input::Routed::Error(message) => {
            renderer.fail_before_turn(ErrorKind::Usage, &message)?;
            return Ok(Ended::Code(code::USAGE));
        }
        // The argument was typed; a prompt read from stdin (`-p -`) is data.
        routed => routed
            .to_op(match source {
                PromptSource::Argument(_) => InputOrigin::Typed,
                PromptSource::Stdin => InputOrigin::Piped,
            })
            .context("a prompt or skill always becomes an operation")?,
    };
    if !context.trim().is_empty() && matches!(op, Op::Invoke(Invocation::McpPrompt { .. })) {
        renderer.fail_before_turn(
            ErrorKind::Usage,
            "an MCP prompt's text comes from its server, so piped input cannot be added to it; \
             give the input as the prompt's argument",
        )?;
        return Ok(Ended::Code(code::USAGE));
    }
    if !context.trim().is_empty() {
        let context = format!("\n\n<stdin>\n{}\n</stdin>", context.trim_end());
        match &mut op {
            // Sent after the prompt as it is: piped text is never mention-expanded.
            Op::UserInput { piped, .. } => *piped = Some(context),
            Op::Invoke(Invocation::Skill { args, .. }) => args.push_str(&context),
            _ => {}
        }
    }
    let end = runtime.block_on(async {
        let (handle, _info) = prepared.spawn();
        print::run_once(handle, op, &mut renderer).await
    })?;
    let report = match end {
        print::OnceEnd::Turn(report) => report,
        print::OnceEnd::Signalled(signal) => return Ok(Ended::BySignal(signal)),
    };
    // A reader that stopped reading (`| head`) asked for no more: not a failure.
    Ok(Ended::Code(match renderer.reader() {
        ReaderState::Gone => code::OK,
        ReaderState::Reading => exit_code_for(report.error_kind()),
    }))
}

fn skills_command(config: &Config, home: &Home, action: &SkillsAction) -> anyhow::Result<u8> {
    let remote = if config.remote_skills_root.is_some() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?
            .block_on(session::sync_remote_skills(config))
    } else {
        Default::default()
    };
    for warning in home
        .warning()
        .into_iter()
        .chain(config.warnings.iter().map(String::as_str))
        .chain(remote.warnings.iter().map(String::as_str))
    {
        sink::stderr_line(&format!("harness9: warning: {warning}"));
    }
    let options = session::discovery_options_with_remote(config, &remote);
    // A reader that stops early (`| head -1`) ends the listing quietly.
    let mut out = Sink::new(std::io::stdout().lock());
    let code = match action {
        SkillsAction::List { json } => {
            let catalog = harness9::skills::Catalog::discover(&options);
            let format = if *json {
                harness9::skills::cli::ListFormat::Json
            } else {
                harness9::skills::cli::ListFormat::Table
            };
            harness9::skills::cli::list(&catalog, session::index_budget(config), format, &mut out)?
        }
        SkillsAction::Show { name } => {
            let catalog = harness9::skills::Catalog::discover(&options);
            harness9::skills::cli::show(&catalog, name, &mut out)?
        }
        SkillsAction::Validate { paths } => {
            let paths = if paths.is_empty() {
                options.existing_roots()
            } else {
                paths.clone()
            };
            harness9::skills::cli::validate(&paths, &mut out)?
        }
    };
    Ok(u8::try_from(code).unwrap_or(code::INTERNAL))
}

/// `harness9 permissions list|trust`.
fn permissions_command(config: &Config, action: &PermissionsAction) -> anyhow::Result<u8> {
    let setup = &config.permissions;
    let project_file = setup.places.project_file();
    let text = match action {
        PermissionsAction::List => harness9::permissions::describe_list(
            &setup.book.list(),
            &setup.untrusted,
            &project_file,
        ),
        PermissionsAction::Trust => {
            let approved = harness9::permissions::files::trust_project(&setup.places)?;
            if approved.is_empty() {
                format!(
                    "{} has no allow rules to approve.\n",
                    project_file.display()
                )
            } else {
                format!(
                    "Approved {} allow rule(s) of {} for this machine:\n{}",
                    approved.len(),
                    project_file.display(),
                    approved
                        .iter()
                        .map(|r| format!("  allow  {r}\n"))
                        .collect::<String>()
                )
            }
        }
    };
    // Rules and paths come from files anyone may have written: no raw control bytes.
    let mut out = Sink::new(std::io::stdout().lock());
    out.write_all(harness9::safe_text::neutralize(&text).as_bytes())?;
    out.flush()?;
    Ok(0)
}

/// `harness9 mcp list|tools|add|remove|trust`. `list` and `tools` start servers as a
/// session would: secrets kept out of their environment, `sandbox = true` servers in
/// the sandbox (or reported, when it is asked for and cannot be had).
fn mcp_command(config: &Config, home: &Home, action: &McpAction) -> anyhow::Result<u8> {
    use harness9::mcp::cli;
    if let Some(warning) = home.warning() {
        sink::stderr_line(&format!("harness9: warning: {warning}"));
    }
    let files = cli::Files {
        user_config: config.home.join("config.toml"),
        project: config.workdir.clone(),
    };
    let format = |json: bool| {
        if json {
            cli::Format::Json
        } else {
            cli::Format::Text
        }
    };
    // A reader that stops early (`| head -1`) ends the output quietly.
    let mut out = Sink::new(std::io::stdout().lock());
    let mut err = Sink::new(std::io::stderr());
    let result = match action {
        McpAction::List { json } => {
            let (runtime, servers, options) = mcp_servers_started(config)?;
            runtime.block_on(cli::list(
                &servers,
                &options,
                format(*json),
                &mut out,
                &mut err,
            ))
        }
        McpAction::Tools { name, json } => {
            let (runtime, servers, options) = mcp_servers_started(config)?;
            runtime.block_on(cli::tools(
                &servers,
                &options,
                name,
                format(*json),
                &mut out,
            ))
        }
        McpAction::Add(args) => cli::add(&config.mcp, &files, &args.request(), &mut out),
        McpAction::Remove { name, scope } => {
            cli::remove(&config.mcp, &files, name, scope.map(Into::into), &mut out)
        }
        McpAction::Trust => cli::trust(&config.mcp, &mut out, &mut err),
    };
    match result {
        Ok(code) => Ok(u8::try_from(code).unwrap_or(code::INTERNAL)),
        Err(e) => {
            sink::stderr_line(&format!("harness9: {e}"));
            Ok(exit_code_for(Some(e.kind())))
        }
    }
}

/// The runtime and the servers for `mcp list|tools`, with this run's secrets rule and
/// sandbox set up as a session's are.
fn mcp_servers_started(
    config: &Config,
) -> anyhow::Result<(
    tokio::runtime::Runtime,
    harness9::mcp::McpServers,
    harness9::mcp::cli::StartOptions,
)> {
    harness9::exec::secrets::configure(config.secret_policy.clone());
    let mut options = harness9::mcp::cli::StartOptions::default();
    match harness9::sandbox::decide(&config.sandbox, config.approval_mode, &config.workdir) {
        Ok(Decision::Confined(policy)) => {
            let launcher = std::env::current_exe()
                .context("cannot find harness9's own binary to start sandboxed servers")?;
            harness9::sandbox::configure(SessionSandbox {
                policy: std::sync::Arc::new(policy),
                launcher,
            });
        }
        Ok(Decision::Unconfined { .. }) => {}
        Err(refusal) => options.sandbox_refusal = Some(refusal.to_string()),
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    Ok((runtime, session::mcp_servers(config), options))
}

/// `harness9 sessions …`: the saved sessions of this project (or all), read from
/// `$HARNESS9_HOME/sessions`. An id that names no single session is a usage error.
fn sessions_command(config: &Config, home: &Home, action: &SessionsAction) -> u8 {
    use harness9::sessions::{self, SessionStore, cli};
    if let Some(warning) = home.warning() {
        sink::stderr_line(&format!("harness9: warning: {warning}"));
    }
    let store = SessionStore::new(&config.home);
    // A reader that stops early (`| head -1`) ends the output quietly.
    let mut out = Sink::new(std::io::stdout().lock());
    let mut err = Sink::new(std::io::stderr());
    let result = match action {
        SessionsAction::List { all, json } => {
            let scope = if *all {
                sessions::ListScope::All
            } else {
                sessions::ListScope::Project(sessions::project_of(&config.workdir))
            };
            let format = if *json {
                cli::ListFormat::Json
            } else {
                cli::ListFormat::Table
            };
            cli::list(&store, scope, format, &mut out)
        }
        SessionsAction::Show { id } => cli::show(&store, id, &mut out, &mut err),
        SessionsAction::Export { id, format, output } => {
            let format = match format {
                SessionExportFormat::Md => harness9::protocol::ExportFormat::Markdown,
                SessionExportFormat::Json => harness9::protocol::ExportFormat::Json,
            };
            let destination = match output {
                Some(file) => cli::Destination::File(file.clone()),
                None => cli::Destination::Stdout,
            };
            cli::export(&store, id, format, &destination, &mut out, &mut err)
        }
        SessionsAction::Prune {
            older_than,
            dry_run,
        } => {
            let mode = if *dry_run {
                cli::PruneMode::DryRun
            } else {
                cli::PruneMode::Remove
            };
            cli::prune(
                &store,
                *older_than,
                mode,
                sessions::record::now_ms(),
                &mut out,
            )
        }
    };
    match result {
        Ok(()) => code::OK,
        Err(e) => {
            sink::stderr_line(&format!("harness9: {e}"));
            exit_code_for(Some(e.kind()))
        }
    }
}

/// `harness9 artifacts …`: a saved session's artifacts.
fn artifacts_command(config: &Config, action: &ArtifactsAction) -> u8 {
    use harness9::artifacts::cli;
    let sessions = harness9::sessions::SessionStore::new(&config.home);
    let mut out = Sink::new(std::io::stdout().lock());
    let result = match action {
        ArtifactsAction::List { session, json } => {
            cli::store_for(&sessions, &config.workdir, session.as_deref())
                .and_then(|(id, store)| cli::list(&id, &store, *json, &mut out))
        }
        ArtifactsAction::Get {
            name,
            session,
            output,
        } => cli::store_for(&sessions, &config.workdir, session.as_deref())
            .and_then(|(_, store)| cli::get(&store, name, output.as_deref(), &mut out)),
    };
    match result {
        Ok(()) => code::OK,
        Err(e) => {
            sink::stderr_line(&format!("harness9: {e}"));
            exit_code_for(Some(e.kind()))
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_message_already_quotes_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(20);
        let quoted = ConfigError::Read {
            path: "/h/config.toml".into(),
            source: io,
        };
        let text = error_text(&anyhow::Error::new(quoted));
        assert_eq!(text.matches("Not a directory").count(), 1, "{text}");
        let chained = anyhow::anyhow!("disk full").context("cannot save");
        assert_eq!(error_text(&chained), "cannot save: disk full");
    }

    #[test]
    fn the_prompt_comes_from_stdin_only_when_asked_and_piped() {
        assert!(matches!(PromptSource::of("-", false), PromptSource::Stdin));
        assert!(matches!(PromptSource::of("  ", false), PromptSource::Stdin));
        assert!(matches!(
            PromptSource::of("-", true),
            PromptSource::Argument(_)
        ));
        assert!(matches!(
            PromptSource::of("", true),
            PromptSource::Argument(_)
        ));
        assert!(matches!(
            PromptSource::of("fix it", false),
            PromptSource::Argument(_)
        ));
    }
}
