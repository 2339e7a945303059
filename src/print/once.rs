//! Print mode (`-p PROMPT`): the prompt read (the argument, with piped stdin as context,
//! or stdin itself with `-p -`), routed like typed input, refused when it cannot be one
//! turn (empty, a built-in command, piped text for an MCP prompt), then run to its end
//! with the answer rendered in the chosen format. It returns how the run ended; exit
//! codes are `main`'s. It must not know how the agent works inside.

use std::io::{self, Read, Write};

use super::{Activity, AnswerRender, HeadlessRenderer, OutputFormat, TextDelivery, TurnReport};
use crate::agent::AgentHandle;
use crate::input;
use crate::protocol::{
    ErrorKind, Event, ImageInput, InputOrigin, Invocation, Op, TurnOutcome, Usage,
};
use crate::session::Prepared;
use crate::signals::{EndingSignal, EndingSignals};
use crate::sink::ReaderState;

/// Whether stdin is a terminal (nothing piped) or carries text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinKind {
    /// A terminal: there is nothing to read.
    Terminal,
    /// A pipe or a file: read to its end before the turn.
    Piped,
}

/// How print mode runs.
#[derive(Debug)]
pub struct PrintOptions {
    /// The argument of `-p`.
    pub prompt: String,
    /// `--image` files, sent with the prompt.
    pub images: Vec<std::path::PathBuf>,
    /// Output format.
    pub format: OutputFormat,
    /// Whether tool activity is shown on stderr in text output.
    pub activity: Activity,
    /// What stdin is.
    pub stdin: StdinKind,
    /// How the answer is shown in the text format.
    pub answer: AnswerRender,
    /// Whether reasoning is shown on stderr in the text format.
    pub thoughts: super::ThoughtDisplay,
}

/// How print mode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintEnd {
    /// The run is over: `failure` is the kind of a turn that did not complete, or
    /// [`ErrorKind::Usage`] for a prompt refused before any turn; none when the turn
    /// completed or stdout's reader went away (`| head` asked for no more).
    Finished {
        /// What failed, if anything.
        failure: Option<ErrorKind>,
    },
    /// A signal ended the run: every command was stopped first.
    Signalled(EndingSignal),
}

/// Why print mode could not run.
#[derive(Debug, thiserror::Error)]
pub enum PrintError {
    /// Piped stdin could not be read.
    #[error("cannot read stdin")]
    Stdin(#[source] io::Error),
    /// Signals could not be listened for, or the output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Input routed as a prompt or a skill did not become an operation (a bug).
    #[error("a prompt or skill always becomes an operation")]
    NoOperation,
}

/// Where the prompt of `-p` comes from.
enum PromptSource {
    /// The argument itself; piped stdin, if any, is appended as context.
    Argument(String),
    /// `-p -`, or an empty `-p` with stdin piped: stdin is the whole prompt.
    Stdin,
}

impl PromptSource {
    fn of(argument: &str, stdin: StdinKind) -> PromptSource {
        if stdin == StdinKind::Piped && (argument == "-" || argument.trim().is_empty()) {
            PromptSource::Stdin
        } else {
            PromptSource::Argument(argument.to_string())
        }
    }
}

/// Runs print mode on a prepared session: one prompt (or skill invocation), its answer,
/// how it ended. The agent is started only once the prompt is known to be one turn.
pub fn run(
    runtime: &tokio::runtime::Runtime,
    prepared: Prepared,
    options: PrintOptions,
) -> Result<PrintEnd, PrintError> {
    let mut renderer = HeadlessRenderer::new(
        options.format,
        TextDelivery::FinalOnly,
        options.activity,
        io::stdout().lock(),
        io::stderr(),
    )
    .with_answer_render(options.answer)
    .with_thoughts(options.thoughts)
    .with_structured_output(match prepared.setup.output_schema {
        Some(_) => super::StructuredOutput::Parsed,
        None => super::StructuredOutput::Absent,
    });
    renderer.set_model(&prepared.info.model);
    for warning in &prepared.info.startup_warnings {
        renderer.warning(warning)?;
    }
    let argument = options.prompt;
    let source = PromptSource::of(&argument, options.stdin);
    let mut piped = String::new();
    if options.stdin == StdinKind::Piped {
        io::stdin()
            .read_to_string(&mut piped)
            .map_err(PrintError::Stdin)?;
    }
    let refused = Ok(PrintEnd::Finished {
        failure: Some(ErrorKind::Usage),
    });
    let (prompt, context) = match &source {
        PromptSource::Argument(_) if argument == "-" => {
            renderer.fail_before_turn(
                ErrorKind::Usage,
                "-p - reads the prompt from stdin, but stdin is a terminal: pipe the prompt in \
                 or give it as the argument",
            )?;
            return refused;
        }
        PromptSource::Argument(prompt) => (prompt.clone(), piped),
        PromptSource::Stdin => (std::mem::take(&mut piped), String::new()),
    };
    // The argument was typed; a prompt read from stdin (`-p -`) is data.
    let origin = match source {
        PromptSource::Argument(_) => InputOrigin::Typed,
        PromptSource::Stdin => InputOrigin::Piped,
    };
    let mut op = match input::route(&prompt, &prepared.info.commands) {
        input::Routed::Empty => {
            let message = match source {
                PromptSource::Stdin => "the prompt is empty: -p was empty and so was stdin",
                PromptSource::Argument(_) => "the prompt given with -p is empty",
            };
            renderer.fail_before_turn(ErrorKind::Usage, message)?;
            return refused;
        }
        input::Routed::Builtin(_) => {
            renderer.fail_before_turn(
                ErrorKind::Usage,
                "built-in commands such as /help work in the TUI and the REPL, not with -p",
            )?;
            return refused;
        }
        input::Routed::Error(message) => {
            renderer.fail_before_turn(ErrorKind::Usage, &message)?;
            return refused;
        }
        input::Routed::Shell(_) => {
            renderer.fail_before_turn(
                ErrorKind::Usage,
                "`!command` (shell mode) works in the TUI and the REPL, where its output goes \
                 to the model with the next message; with -p, run the command yourself or ask \
                 the model to",
            )?;
            return refused;
        }
        routed => routed.to_op(origin).ok_or(PrintError::NoOperation)?,
    };
    if !context.trim().is_empty() && matches!(op, Op::Invoke(Invocation::McpPrompt { .. })) {
        renderer.fail_before_turn(
            ErrorKind::Usage,
            "an MCP prompt's text comes from its server, so piped input cannot be added to it; \
             give the input as the prompt's argument",
        )?;
        return refused;
    }
    if !context.trim().is_empty() {
        let context = format!("\n\n<stdin>\n{}\n</stdin>", context.trim_end());
        match &mut op {
            // Sent after the prompt as it is: piped text is never mention-expanded.
            Op::UserInput { piped, .. } => *piped = Some(context),
            Op::Invoke(Invocation::Skill { args, .. } | Invocation::Init { args }) => {
                args.push_str(&context)
            }
            _ => {}
        }
    }
    if !options.images.is_empty() {
        if !matches!(op, Op::UserInput { .. }) {
            renderer.fail_before_turn(
                ErrorKind::Usage,
                "--image goes with a prompt; a slash command takes no images",
            )?;
            return refused;
        }
        let images = options.images.iter().cloned();
        op = op.with_images(images.map(|path| ImageInput::File { path }).collect());
    }
    let end = runtime.block_on(async {
        let (handle, _info) = prepared.spawn();
        run_once(handle, op, &mut renderer).await
    })?;
    let report = match end {
        OnceEnd::Turn(report) => report,
        OnceEnd::Signalled(signal) => return Ok(PrintEnd::Signalled(signal)),
    };
    // A reader that stopped reading (`| head`) asked for no more: not a failure.
    let failure = match renderer.reader() {
        ReaderState::Gone => None,
        ReaderState::Reading => report.error_kind(),
    };
    Ok(PrintEnd::Finished { failure })
}

/// How [`run_once`] ended.
#[derive(Debug)]
enum OnceEnd {
    /// The turn ended (well or not) and the agent shut down.
    Turn(TurnReport),
    /// A signal ended the run: every command was stopped first.
    Signalled(EndingSignal),
}

/// Runs one prompt or skill invocation (`op`) to completion and shuts the agent down.
/// Ctrl-C interrupts the turn, and so does stdout's reader going away (nobody would see
/// the rest); the agent is always shut down before this returns. SIGTERM, SIGHUP or a
/// second Ctrl-C end the run: the agent is told to stop, every command and server it
/// started is stopped, and the signal is returned after a moment's wait for the agent.
async fn run_once<O: Write, E: Write>(
    mut handle: AgentHandle,
    op: Op,
    renderer: &mut HeadlessRenderer<O, E>,
) -> io::Result<OnceEnd> {
    let mut ending = EndingSignals::listen()?;
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let _ = handle.ops.send(op);
    let mut report = None;
    let mut interrupted = false;
    let mut stopping = false;
    loop {
        let event = tokio::select! {
            event = handle.events.recv() => event,
            _ = sigint.recv() => {
                if interrupted {
                    return Ok(OnceEnd::Signalled(
                        end_by_signal(&mut handle, EndingSignal::Interrupt).await,
                    ));
                }
                interrupted = true;
                let _ = handle.ops.send(Op::Interrupt);
                continue;
            }
            signal = ending.recv() => {
                return Ok(OnceEnd::Signalled(end_by_signal(&mut handle, signal).await));
            }
        };
        let Some(event) = event else { break };
        if let Some(r) = renderer.render(&event)? {
            report = Some(r);
            let _ = handle.ops.send(Op::Shutdown);
        }
        if renderer.reader() == ReaderState::Gone && !stopping {
            // Shutdown stops the running turn and its commands first.
            stopping = true;
            let _ = handle.ops.send(Op::Shutdown);
        }
        if matches!(event, Event::ShutdownComplete { .. }) {
            break;
        }
    }
    Ok(OnceEnd::Turn(report.unwrap_or(TurnReport {
        outcome: TurnOutcome::Failed {
            kind: ErrorKind::Internal,
            message: "the agent stopped before the turn ended".into(),
        },
        usage: Usage::default(),
    })))
}

/// Tells the agent to stop, stops every command and server, and waits half a second at
/// most for the agent to say it has shut down.
async fn end_by_signal(handle: &mut AgentHandle, signal: EndingSignal) -> EndingSignal {
    let _ = handle.ops.send(Op::Shutdown);
    crate::signals::stop_everything().await;
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), async {
        while let Some(event) = handle.events.recv().await {
            if matches!(event, Event::ShutdownComplete { .. }) {
                break;
            }
        }
    })
    .await;
    signal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_comes_from_stdin_only_when_asked_and_piped() {
        let of = PromptSource::of;
        assert!(matches!(of("-", StdinKind::Piped), PromptSource::Stdin));
        assert!(matches!(of("  ", StdinKind::Piped), PromptSource::Stdin));
        assert!(matches!(
            of("-", StdinKind::Terminal),
            PromptSource::Argument(_)
        ));
        assert!(matches!(
            of("", StdinKind::Terminal),
            PromptSource::Argument(_)
        ));
        assert!(matches!(
            of("fix it", StdinKind::Piped),
            PromptSource::Argument(_)
        ));
    }
}
