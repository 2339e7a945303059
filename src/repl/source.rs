//! Where the REPL's input lines come from: a pipe read line by line on its own thread,
//! or a terminal edited with rustyline (history, Tab completion, inline approval
//! questions) on its own thread, reading only when the REPL asks for a line.
//!
//! Both join lines ending in `\` with the next one and hand over complete inputs as
//! [`Reply`]s on a channel, so the async loop keeps rendering events while a read
//! blocks. Tab completes from the slash commands the REPL hands over with each line it
//! asks for. This module knows the input router's completions and nothing of the agent.

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;

use rustyline::completion::{Completer, Pair};
use rustyline::config::{Behavior, CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use tokio::sync::mpsc;

use crate::input;
use crate::protocol::SlashCommands;

/// The prompt for a new input.
const PROMPT: &str = "> ";
/// The prompt after a line ending in `\`.
const CONTINUATION_PROMPT: &str = "… ";
/// The question asked for an approval.
const APPROVAL_PROMPT: &str = "allow? [y]es once / [n]o / [a]lways this session / [p]roject: ";
/// How many history entries are kept.
const HISTORY_SIZE: usize = 1000;

/// What an input source hands over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// One complete input (continued lines joined with `\n`).
    Line(String),
    /// The input ended (EOF, Ctrl-D).
    Eof,
    /// Reading failed; the input is over.
    Failed(String),
    /// The answer to an approval question.
    Answer(Answer),
    /// A stream-json input line understood (`--input-format stream-json`).
    Driver {
        /// Its number on stdin, from 1.
        line: u64,
        /// What it says.
        input: super::stream_input::DriverLine,
    },
    /// A stream-json input line that could not be used.
    BadInput {
        /// Its number on stdin, from 1.
        line: u64,
        /// Why.
        problem: super::stream_input::InputProblem,
    },
}

/// An answer to an approval question typed on the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `y`: run this call.
    Yes,
    /// `n`: do not run it.
    No,
    /// `a`: run it and add the offered rules for this session.
    Always,
    /// `p`: run it and add the offered rules to the project's rule file.
    Project,
    /// Ctrl-C at the question: deny and stop the turn.
    Cancel,
    /// Ctrl-D at the question: deny, and the input is over.
    Eof,
}

/// Joins lines that end in `\` with the next one.
#[derive(Debug, Default)]
pub struct Continuation {
    buf: String,
    open: bool,
}

impl Continuation {
    /// Takes one physical line (without its newline); returns the complete input when
    /// the line does not continue.
    pub fn feed(&mut self, line: &str) -> Option<String> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(head) = line.strip_suffix('\\') {
            self.buf.push_str(head);
            self.buf.push('\n');
            self.open = true;
            return None;
        }
        self.buf.push_str(line);
        self.open = false;
        Some(std::mem::take(&mut self.buf))
    }

    /// True while a continued input waits for its next line.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// At the end of input: what a last continued line left, if anything.
    pub fn take_rest(&mut self) -> Option<String> {
        self.open = false;
        let rest = std::mem::take(&mut self.buf);
        let rest = rest.strip_suffix('\n').unwrap_or(&rest).to_string();
        (!rest.trim().is_empty()).then_some(rest)
    }

    /// Drops a half-typed continued input (Ctrl-C).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.open = false;
    }
}

/// Reads `reader` line by line on a thread of its own until EOF, sending each complete
/// input, then [`Reply::Eof`] (or [`Reply::Failed`]). Lines that are not UTF-8 are read
/// lossily.
pub fn spawn_line_reader<R: BufRead + Send + 'static>(
    mut reader: R,
) -> mpsc::UnboundedReceiver<Reply> {
    let (tx, rx) = mpsc::unbounded_channel();
    // A plain thread, not `spawn_blocking`: a read blocked on a pipe must never hold
    // up the runtime's shutdown.
    std::thread::spawn(move || {
        let mut joiner = Continuation::default();
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            match reader.read_until(b'\n', &mut bytes) {
                Ok(0) => {
                    if let Some(rest) = joiner.take_rest() {
                        let _ = tx.send(Reply::Line(rest));
                    }
                    let _ = tx.send(Reply::Eof);
                    return;
                }
                Ok(_) => {
                    let text = String::from_utf8_lossy(&bytes);
                    let line = text.strip_suffix('\n').unwrap_or(&text);
                    if let Some(input) = joiner.feed(line)
                        && tx.send(Reply::Line(input)).is_err()
                    {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Reply::Failed(format!("cannot read stdin: {e}")));
                    return;
                }
            }
        }
    });
    rx
}

/// What the REPL asks the terminal thread for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Request {
    /// Read one input (with continuations), added to the history, completing from these
    /// slash commands.
    Line(SlashCommands),
    /// Ask an approval question.
    Approval,
}

/// The REPL's end of the terminal thread.
#[derive(Debug)]
pub struct TerminalInput {
    requests: std_mpsc::Sender<Request>,
}

impl TerminalInput {
    /// Starts the line editor on its own thread, with the history in
    /// `home/history`. Returns the handle and where replies arrive.
    pub fn start(
        home: PathBuf,
    ) -> Result<(TerminalInput, mpsc::UnboundedReceiver<Reply>), ReadlineError> {
        let config = Config::builder()
            .behavior(Behavior::PreferTerm)
            .completion_type(CompletionType::List)
            .completion_show_all_if_ambiguous(true)
            .auto_add_history(false)
            .history_ignore_dups(true)?
            .max_history_size(HISTORY_SIZE)?
            .build();
        let mut editor: Editor<CommandHelper, FileHistory> = Editor::with_config(config)?;
        editor.set_helper(Some(CommandHelper::default()));
        let history = home.join("history");
        let history_warning = match editor.load_history(&history) {
            Ok(()) => None,
            Err(ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(format!(
                "cannot read the history {}: {e}",
                history.display()
            )),
        };
        let (requests, request_rx) = std_mpsc::channel();
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(w) = history_warning {
            tracing::warn!("{w}");
        }
        std::thread::spawn(move || serve(editor, &history, &request_rx, &tx));
        Ok((TerminalInput { requests }, rx))
    }

    /// Asks for the next input, completing from `commands`; the reply arrives on the
    /// channel.
    pub fn request_line(&self, commands: SlashCommands) {
        let _ = self.requests.send(Request::Line(commands));
    }

    /// Asks the approval question; the reply arrives on the channel.
    pub fn request_approval(&self) {
        let _ = self.requests.send(Request::Approval);
    }
}

/// The terminal thread: answers requests until the REPL drops its handle.
fn serve(
    mut editor: Editor<CommandHelper, FileHistory>,
    history: &std::path::Path,
    requests: &std_mpsc::Receiver<Request>,
    tx: &mpsc::UnboundedSender<Reply>,
) {
    let mut history_ready = history
        .parent()
        .is_some_and(|dir| crate::private_files::create_private_dir(dir).is_ok());
    while let Ok(request) = requests.recv() {
        let reply = match request {
            Request::Line(commands) => {
                if let Some(helper) = editor.helper_mut() {
                    helper.commands = commands;
                }
                read_input(&mut editor)
            }
            Request::Approval => Reply::Answer(read_answer(&mut editor)),
        };
        if let Reply::Line(line) = &reply
            && history_ready
        {
            let _ = editor.add_history_entry(line.as_str());
            if let Err(e) = editor.append_history(history) {
                tracing::warn!("cannot write the history {}: {e}", history.display());
                history_ready = false;
            }
        }
        if tx.send(reply).is_err() {
            return;
        }
    }
}

fn read_input(editor: &mut Editor<CommandHelper, FileHistory>) -> Reply {
    let mut joiner = Continuation::default();
    loop {
        let prompt = if joiner.is_open() {
            CONTINUATION_PROMPT
        } else {
            PROMPT
        };
        match editor.readline(prompt) {
            Ok(line) => {
                if let Some(input) = joiner.feed(&line) {
                    return Reply::Line(input);
                }
            }
            // Ctrl-C while typing: forget the line and start again.
            Err(ReadlineError::Interrupted) => joiner.clear(),
            Err(ReadlineError::Eof) => {
                return match joiner.take_rest() {
                    Some(rest) => Reply::Line(rest),
                    None => Reply::Eof,
                };
            }
            Err(e) => return Reply::Failed(format!("cannot read the terminal: {e}")),
        }
    }
}

fn read_answer(editor: &mut Editor<CommandHelper, FileHistory>) -> Answer {
    loop {
        match editor.readline(APPROVAL_PROMPT) {
            Ok(line) => {
                if let Some(answer) = parse_answer(&line) {
                    return answer;
                }
            }
            Err(ReadlineError::Interrupted) => return Answer::Cancel,
            Err(_) => return Answer::Eof,
        }
    }
}

/// `y`/`yes`, `n`/`no`, `a`/`always`, `p`/`project` (any case); anything else asks
/// again.
pub fn parse_answer(line: &str) -> Option<Answer> {
    match line.trim().to_lowercase().as_str() {
        "y" | "yes" => Some(Answer::Yes),
        "n" | "no" => Some(Answer::No),
        "a" | "always" => Some(Answer::Always),
        "p" | "project" => Some(Answer::Project),
        _ => None,
    }
}

/// Tab completion of built-in commands and skill names, with descriptions.
#[derive(Default)]
struct CommandHelper {
    /// The slash commands as of the line being read.
    commands: SlashCommands,
}

impl CommandHelper {
    /// Completions for the line up to the cursor: `(start, candidates)`.
    fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<Pair>) {
        let head = &line[..pos.min(line.len())];
        let start = head.len() - head.trim_start().len();
        let typed = &head[start..];
        if !typed.starts_with('/') {
            return (start, Vec::new());
        }
        let found = input::completions(typed, &self.commands);
        let width = found
            .iter()
            .map(|(name, _)| name.chars().count())
            .max()
            .unwrap_or(0);
        let pairs = found
            .into_iter()
            .map(|(name, description)| Pair {
                display: format!("/{name:<width$}  {}", shorten(&description, 70)),
                replacement: format!("/{name} "),
            })
            .collect();
        (start, pairs)
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

impl Completer for CommandHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        Ok(self.candidates(line, pos))
    }
}

impl Hinter for CommandHelper {
    type Hint = String;
}

impl Highlighter for CommandHelper {}

impl Validator for CommandHelper {}

impl Helper for CommandHelper {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    #[test]
    fn continuation_joins_lines_ending_in_a_backslash() {
        let mut j = Continuation::default();
        assert_eq!(j.feed("first \\"), None);
        assert!(j.is_open());
        assert_eq!(j.feed("second\\"), None);
        assert_eq!(j.feed("third\r").as_deref(), Some("first \nsecond\nthird"));
        assert!(!j.is_open());
        assert_eq!(j.feed("plain").as_deref(), Some("plain"));
    }

    #[test]
    fn continuation_left_open_at_eof_is_still_sent() {
        let mut j = Continuation::default();
        assert_eq!(j.feed("a\\"), None);
        assert_eq!(j.take_rest().as_deref(), Some("a"));
        assert_eq!(j.take_rest(), None);
    }

    #[tokio::test]
    async fn line_reader_sends_inputs_then_eof() {
        let data: &[u8] = b"one\ntwo \\\ncontinued\n\n\xffbad\nlast";
        let mut rx = spawn_line_reader(std::io::BufReader::new(data));
        let mut got = Vec::new();
        while let Some(reply) = rx.recv().await {
            got.push(reply);
        }
        assert_eq!(
            got,
            vec![
                Reply::Line("one".into()),
                Reply::Line("two \ncontinued".into()),
                Reply::Line(String::new()),
                Reply::Line("\u{fffd}bad".into()),
                Reply::Line("last".into()),
                Reply::Eof,
            ]
        );
    }

    #[test]
    fn answers() {
        assert_eq!(parse_answer(" Y "), Some(Answer::Yes));
        assert_eq!(parse_answer("no"), Some(Answer::No));
        assert_eq!(parse_answer("always"), Some(Answer::Always));
        assert_eq!(parse_answer("maybe"), None);
    }

    #[test]
    fn completes_builtins_with_descriptions() {
        let helper = CommandHelper::default();
        let (start, pairs) = helper.candidates("/he", 3);
        assert_eq!(start, 0);
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].replacement, "/help ");
        assert_contains(&pairs[0].display, "Show commands");
        assert!(helper.candidates("hello", 5).1.is_empty());
    }
}
