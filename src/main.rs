//! The `harness9` binary: arguments → mode → run → exit code. A subcommand runs in
//! [`harness9::commands`], a session in [`harness9::launch`]; this is the one place
//! where their errors become exit codes (documented in docs/HEADLESS.md) and are written
//! to stderr.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

use harness9::cli::{Cli, Command};
use harness9::launch::{self, Ended, Frontend, LaunchError};
use harness9::print::{Activity, HeadlessRenderer, OutputFormat, StdinKind, TextDelivery};
use harness9::protocol::ErrorKind;
use harness9::repl::{InputFormat, ReplInput};
use harness9::sink;
use harness9::subcommand::Kind;

/// Exit codes (docs/HEADLESS.md).
mod code {
    pub const OK: u8 = 0;
    pub const INTERNAL: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const PROVIDER_REFUSED: u8 = 3;
    pub const PROVIDER_UNAVAILABLE: u8 = 4;
    pub const LIMIT: u8 = 5;
    pub const TIME_LIMIT: u8 = 6;
    pub const COST_LIMIT: u8 = 7;
    pub const OUTPUT_SCHEMA: u8 = 8;
    pub const INTERRUPTED: u8 = 130;
}

/// The exit code for a session that ended with `kind`.
fn exit_code_for(kind: Option<ErrorKind>) -> u8 {
    match kind {
        None => code::OK,
        Some(ErrorKind::Auth | ErrorKind::ModelNotFound | ErrorKind::BadRequest)
        | Some(ErrorKind::ImagesRefused)
        | Some(ErrorKind::ContextTooLong | ErrorKind::Quota | ErrorKind::Protocol)
        | Some(ErrorKind::ContentFilter) => code::PROVIDER_REFUSED,
        Some(
            ErrorKind::RateLimit | ErrorKind::Server | ErrorKind::Network | ErrorKind::Timeout,
        ) => code::PROVIDER_UNAVAILABLE,
        Some(ErrorKind::MaxTurns | ErrorKind::OutputLimit) => code::LIMIT,
        Some(ErrorKind::TimeLimit) => code::TIME_LIMIT,
        Some(ErrorKind::CostLimit) => code::COST_LIMIT,
        Some(ErrorKind::OutputSchema) => code::OUTPUT_SCHEMA,
        Some(ErrorKind::Interrupted) => code::INTERRUPTED,
        Some(ErrorKind::Usage | ErrorKind::HookBlocked) => code::USAGE,
        Some(ErrorKind::Skill | ErrorKind::Internal) => code::INTERNAL,
    }
}

/// The exit code of a subcommand that failed with `kind`: the same for every
/// subcommand.
fn subcommand_code(kind: Kind) -> u8 {
    match kind {
        Kind::Usage | Kind::NotFound => code::USAGE,
        Kind::Failed | Kind::Internal => code::INTERNAL,
    }
}

/// How this run talks to the user, decided from the flags and the terminals before
/// anything else (so that even a bad config is reported in the chosen output format).
#[derive(Debug, Clone, Copy)]
enum Mode<'a> {
    /// A subcommand: `harness9 skills …`, `harness9 sessions …`.
    Subcommand(&'a Command),
    /// A session in a frontend.
    Session(Frontend),
}

impl Mode<'_> {
    fn of(cli: &Cli, terminals: Terminals) -> Mode<'_> {
        if let Some(Command::Acp) = &cli.command {
            return Mode::Session(Frontend::Acp);
        }
        if let Some(command) = &cli.command {
            return Mode::Subcommand(command);
        }
        // A program drives the session, with `-p` or without, whatever the terminals.
        if cli.input_format == InputFormat::StreamJson {
            return Mode::Session(Frontend::Repl(ReplInput::StreamJson));
        }
        let stdin = if terminals.stdin {
            StdinKind::Terminal
        } else {
            StdinKind::Piped
        };
        Mode::Session(if cli.print.is_some() {
            Frontend::Print(stdin)
        } else if terminals.stdin && terminals.stdout && !cli.no_tui && !terminals.dumb {
            Frontend::Tui
        } else if terminals.stdin {
            Frontend::Repl(ReplInput::Terminal)
        } else {
            Frontend::Repl(ReplInput::Piped)
        })
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
    harness9::startup::keep_large_blocks_mapped();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // A peer's flag (or an unquoted prompt) is answered in one line; a
            // subcommand's help lists only its own flags; anything else as clap words it.
            let args: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            if let Some(hint) = harness9::cli::hints::for_error(&e, &args) {
                sink::stderr_line(&format!("harness9: {hint}"));
                return ExitCode::from(code::USAGE);
            }
            if let Some(help) = harness9::cli::subcommand_help(&e, &args) {
                // Styled as clap styles its own: on a terminal that takes colours.
                let styled = std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
                let text = if styled {
                    help.ansi().to_string()
                } else {
                    help.to_string()
                };
                let mut out = sink::Sink::new(std::io::stdout());
                let _ = std::io::Write::write_all(&mut out, text.as_bytes());
                return ExitCode::from(code::OK);
            }
            e.exit()
        }
    };
    let terminals = Terminals {
        stdin: std::io::stdin().is_terminal(),
        stdout: std::io::stdout().is_terminal(),
        dumb: std::env::var("TERM").is_ok_and(|t| t == "dumb"),
    };
    ExitCode::from(match Mode::of(&cli, terminals) {
        Mode::Subcommand(command) => {
            subcommand_ended(harness9::commands::run(&cli.overrides(), command))
        }
        Mode::Session(frontend) => match launch::run(&cli, frontend) {
            Ok(Ended::Finished { failure }) => exit_code_for(failure),
            Ok(Ended::Signalled(signal)) => signal.exit_code(),
            Ok(Ended::Listed(result)) => subcommand_ended(result),
            Err(e) => fail(&cli, frontend, &e),
        },
    })
}

/// A subcommand's exit code; its error, if it failed, on stderr.
fn subcommand_ended(result: Result<(), harness9::commands::CommandError>) -> u8 {
    match result {
        Ok(()) => code::OK,
        Err(e) => {
            sink::stderr_line(&format!("harness9: {}", error_text(&e)));
            subcommand_code(e.kind())
        }
    }
}

/// Reports an error that ended a session before or outside a turn and returns the exit
/// code. In print and pipe modes with a JSON format the failure is also the `result`
/// scripts read.
fn fail(cli: &Cli, frontend: Frontend, e: &LaunchError) -> u8 {
    let kind = e.kind();
    let message = error_text(e);
    sink::stderr_line(&format!("harness9: {message}"));
    if matches!(
        frontend,
        Frontend::Print(_) | Frontend::Repl(ReplInput::Piped | ReplInput::StreamJson)
    ) && cli.output_format != OutputFormat::Text
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
fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut next = Some(e);
    while let Some(cause) = next {
        next = cause.source();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_message_already_quotes_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(20);
        let quoted = harness9::config::ConfigError::Read {
            path: "/h/config.toml".into(),
            source: io,
        };
        let text = error_text(&quoted);
        assert_eq!(text.matches("Not a directory").count(), 1, "{text}");
        let chained = LaunchError::Runtime(std::io::Error::other("disk full"));
        assert_eq!(
            error_text(&chained),
            "cannot start the async runtime: disk full"
        );
    }

    #[test]
    fn every_subcommand_failure_kind_has_one_exit_code() {
        assert_eq!(subcommand_code(Kind::Usage), 2);
        assert_eq!(subcommand_code(Kind::NotFound), 2);
        assert_eq!(subcommand_code(Kind::Failed), 1);
        assert_eq!(subcommand_code(Kind::Internal), 1);
    }
}
