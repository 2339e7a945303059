//! The `harness9` binary: arguments → config → frontend → exit code. This is the one
//! place where errors become exit codes (documented in docs/HEADLESS.md) and where
//! `anyhow` is used.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use harness9::agent::Approver;
use harness9::cli::{Cli, Command, SkillsAction};
use harness9::config::{Config, ConfigError, EndpointNeed, OllamaProbe};
use harness9::print::{self, Activity, HeadlessRenderer, OutputFormat, TextDelivery};
use harness9::protocol::{ErrorKind, Op};
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
        | Some(ErrorKind::ContextTooLong | ErrorKind::Quota | ErrorKind::Protocol) => {
            code::PROVIDER_REFUSED
        }
        Some(
            ErrorKind::RateLimit | ErrorKind::Server | ErrorKind::Network | ErrorKind::Timeout,
        ) => code::PROVIDER_UNAVAILABLE,
        Some(ErrorKind::MaxTurns) => code::LIMIT,
        Some(ErrorKind::Interrupted) => code::INTERRUPTED,
        Some(ErrorKind::Skill | ErrorKind::Internal) => code::INTERNAL,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // Config problems, and a provider that cannot even be set up (a bad base URL
            // or header), are the user's to fix: the usage/config exit code.
            let is_config = e.downcast_ref::<ConfigError>().is_some()
                || e.downcast_ref::<harness9::llm::LlmError>().is_some();
            let code = if is_config {
                code::USAGE
            } else {
                code::INTERNAL
            };
            eprintln!("harness9: {e:#}");
            ExitCode::from(code)
        }
    }
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    let overrides = cli.overrides();
    if let Some(Command::Skills { action }) = &cli.command {
        let config = Config::resolve(
            &overrides,
            &env_lookup,
            EndpointNeed::None,
            OllamaProbe::Disabled,
        )?;
        return skills_command(&config, action);
    }
    let config = Config::resolve(
        &overrides,
        &env_lookup,
        EndpointNeed::Required,
        OllamaProbe::Enabled,
    )?;
    init_logging(&config);

    let stdin_tty = std::io::stdin().is_terminal();
    let stdout_tty = std::io::stdout().is_terminal();
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
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

    if let Some(prompt) = cli.print.clone() {
        let prepared = session::prepare_with_remote(&config, Approver::Nobody, remote)?;
        let mut renderer = HeadlessRenderer::new(
            cli.output_format,
            TextDelivery::FinalOnly,
            activity,
            std::io::stdout().lock(),
            std::io::stderr(),
        );
        for warning in &prepared.info.startup_warnings {
            renderer.warning(warning)?;
        }
        let mut op = match input::route(&prompt, &prepared.info.catalog) {
            input::Routed::Empty => {
                renderer.error("the prompt given with -p is empty")?;
                return Ok(code::USAGE);
            }
            input::Routed::Builtin(_) => {
                renderer.error(
                    "built-in commands such as /help work in the TUI and the REPL, not with -p",
                )?;
                return Ok(code::USAGE);
            }
            input::Routed::Error(message) => {
                renderer.error(&message)?;
                return Ok(code::USAGE);
            }
            routed => routed
                .to_op()
                .context("a prompt or skill always becomes an operation")?,
        };
        if !stdin_tty {
            let mut piped = String::new();
            std::io::stdin()
                .read_to_string(&mut piped)
                .context("cannot read stdin")?;
            if !piped.trim().is_empty() {
                let context = format!("\n\n<stdin>\n{}\n</stdin>", piped.trim_end());
                match &mut op {
                    Op::UserInput { text } => text.push_str(&context),
                    Op::InvokeSkill { args, .. } => args.push_str(&context),
                    _ => {}
                }
            }
        }
        let report = runtime.block_on(async {
            let (handle, _info) = prepared.spawn();
            print::run_once(handle, op, &mut renderer).await
        })?;
        return Ok(exit_code_for(report.error_kind()));
    }

    if stdin_tty && stdout_tty && !cli.no_tui && !dumb {
        if cli.output_format != OutputFormat::Text {
            eprintln!(
                "harness9: --output-format applies to print and pipe modes; ignored in the TUI"
            );
        }
        let prepared = session::prepare_with_remote(&config, Approver::Frontend, remote)?;
        let options = tui::TuiOptions {
            screen: if cli.alt_screen {
                tui::ScreenMode::AltScreen
            } else {
                tui::ScreenMode::Inline
            },
        };
        let result = runtime.block_on(async {
            let (handle, info) = prepared.spawn();
            tui::run(handle, info, options).await
        });
        let usage = match result {
            Ok(usage) => usage,
            // The terminal is already restored; exit as a signalled process would.
            Err(tui::TuiError::Signal { signal }) => {
                eprintln!("harness9: terminated by {signal}");
                return Ok(match signal {
                    "SIGHUP" => 129,
                    "SIGINT" => code::INTERRUPTED,
                    _ => 143,
                });
            }
            Err(e) => return Err(e.into()),
        };
        let est = if usage.estimated { " (estimated)" } else { "" };
        println!(
            "tokens: {} in, {} out{est}",
            usage.input_tokens, usage.output_tokens
        );
        return Ok(code::OK);
    }

    let approver = if stdin_tty {
        Approver::Frontend
    } else {
        Approver::Nobody
    };
    let prepared = session::prepare_with_remote(&config, approver, remote)?;
    let options = repl::ReplOptions {
        format: cli.output_format,
        activity,
        input: if stdin_tty {
            repl::ReplInput::Terminal
        } else {
            repl::ReplInput::Piped
        },
    };
    let summary = runtime.block_on(async {
        let (handle, info) = prepared.spawn();
        repl::run(handle, info, options).await
    })?;
    Ok(exit_code_for(summary.failure))
}

fn skills_command(config: &Config, action: &SkillsAction) -> anyhow::Result<u8> {
    let remote = if config.remote_skills_root.is_some() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?
            .block_on(session::sync_remote_skills(config))
    } else {
        Default::default()
    };
    for warning in &remote.warnings {
        eprintln!("harness9: warning: {warning}");
    }
    let options = session::discovery_options_with_remote(config, &remote);
    let mut out = std::io::stdout().lock();
    let code = match action {
        SkillsAction::List { json } => {
            let catalog = harness9::skills::Catalog::discover(&options);
            harness9::skills::cli::list(&catalog, session::index_budget(config), *json, &mut out)?
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

/// Logs go to `$HARNESS9_HOME/logs/harness9.log`, never to the screen. The level comes
/// from HARNESS9_LOG (error, warn, info, debug, trace; default warn).
fn init_logging(config: &Config) {
    let level = std::env::var("HARNESS9_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::WARN);
    let dir = config.home.join("logs");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("harness9.log"))
    else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}
