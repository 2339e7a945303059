//! A careful reader of bash command lines, for approvals: it splits a line into its
//! simple commands (the words of each, after quote removal, its leading variable
//! assignments and its redirections) and names every construct whose effect cannot be
//! read off the text: command and process substitution, here-documents, control
//! structures, a command name that comes from a variable or a glob, wrappers that run
//! another command (`eval`, `sudo`, `xargs`, `bash -c`, `find -exec`, …) and
//! assignments that make a program run other code (`LD_PRELOAD=…`). The other way round,
//! `quote_unless_plain` writes a word so that such a reader reads it back unchanged.
//!
//! It is deliberately conservative: anything it does not understand is a [`Hazard`],
//! and a line with a hazard is never approved by a rule, only by a person. It does not
//! expand anything, never runs anything, and must not know rules, tools or the project.

/// What a command line is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Every simple command, in order, including those inside substitutions and
    /// groups (so a deny rule sees them too).
    pub commands: Vec<SimpleCommand>,
    /// Everything that keeps a rule from deciding about the line.
    pub hazards: Vec<Hazard>,
}

impl Parsed {
    /// True when nothing in the line hides what it runs.
    pub fn is_plain(&self) -> bool {
        self.hazards.is_empty()
    }
}

/// One simple command: `NAME=value cmd arg… >file`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` assignments (name, value after quote removal).
    pub assignments: Vec<(String, String)>,
    /// The command name and its arguments, after quote removal.
    pub words: Vec<String>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
}

impl SimpleCommand {
    /// The command name, if there is one.
    pub fn name(&self) -> Option<&str> {
        self.words.first().map(String::as_str)
    }
}

/// A redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// Which way the data flows.
    pub direction: Direction,
    /// The file named (after quote removal).
    pub target: String,
}

/// Which way a redirection moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `<file`: reads the file.
    Read,
    /// `>file`, `>>file`, `&>file`, `<>file`: writes (creates) the file.
    Write,
}

/// A construct whose effect a rule cannot judge from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hazard {
    /// `$(…)` or `` `…` ``: the output of a command becomes part of the line.
    CommandSubstitution,
    /// `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// `<<EOF`: a here-document.
    HereDocument,
    /// `if`, `for`, `while`, `case`, function definitions, `[[ ]]`, `(( ))`, `$(( ))`.
    ControlStructure {
        /// The keyword or construct met.
        what: String,
    },
    /// The command name is not a literal word (`$cmd`, `*.sh`, `{a,b}`).
    ComputedCommandName {
        /// The word as written.
        word: String,
    },
    /// A command that runs another command or code given to it (`eval`, `sudo`,
    /// `xargs`, `bash -c`, `find -exec`, `git -c`, `rg --pre`, …).
    RunsOtherCode {
        /// The command and the part that makes it so.
        what: String,
    },
    /// An assignment that makes programs load or run other code (`LD_PRELOAD`, `PATH`,
    /// `BASH_ENV`, …).
    DangerousAssignment {
        /// The variable.
        name: String,
    },
    /// `</dev/tcp/HOST/PORT` and the like: bash opens a network connection.
    NetworkRedirection {
        /// The target as written.
        target: String,
    },
    /// Quoting or syntax this reader does not handle (an unterminated quote, `$'…'`,
    /// a file-descriptor variable redirect, …).
    Unsupported {
        /// What it was.
        what: String,
    },
}

impl Hazard {
    /// A few words for a person: why the line can only be approved once.
    pub fn describe(&self) -> String {
        match self {
            Hazard::CommandSubstitution => "it uses command substitution `$(…)`".into(),
            Hazard::ProcessSubstitution => "it uses process substitution `<(…)`".into(),
            Hazard::HereDocument => "it has a here-document".into(),
            Hazard::ControlStructure { what } => format!("it has shell control flow (`{what}`)"),
            Hazard::ComputedCommandName { word } => {
                format!("its command name `{word}` is computed when it runs")
            }
            Hazard::RunsOtherCode { what } => format!("`{what}` runs other code"),
            Hazard::DangerousAssignment { name } => {
                format!("it sets {name}, which can make programs run other code")
            }
            Hazard::NetworkRedirection { target } => {
                format!("its redirection to {target} opens a network connection")
            }
            Hazard::Unsupported { what } => format!("harness9 cannot read {what} safely"),
        }
    }
}

/// Reads a command line.
pub fn parse(line: &str) -> Parsed {
    let mut parsed = Parsed::default();
    Reader::new(line, &mut parsed).list(None);
    dedup(&mut parsed.hazards);
    parsed
}

fn dedup(hazards: &mut Vec<Hazard>) {
    let mut seen: Vec<Hazard> = Vec::with_capacity(hazards.len());
    hazards.retain(|h| {
        if seen.contains(h) {
            false
        } else {
            seen.push(h.clone());
            true
        }
    });
}

/// Words that start a control structure or are reserved where a command name goes.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "coproc", "[[", "]]", "{", "}", "!", "in",
];

/// Programs that run another command or code handed to them on their command line.
const WRAPPERS: &[&str] = &[
    "eval",
    "exec",
    "source",
    ".",
    "sudo",
    "doas",
    "su",
    "xargs",
    "env",
    "command",
    "builtin",
    "nohup",
    "setsid",
    "nice",
    "ionice",
    "timeout",
    "time",
    "stdbuf",
    "watch",
    "parallel",
    "chroot",
    "unshare",
    "nsenter",
    "runuser",
    "trap",
    "alias",
    "flock",
    "script",
    "strace",
    "ltrace",
    "gdb",
    "busybox",
    "fakeroot",
    "firejail",
    "systemd-run",
    "ssh",
];

/// Shells: with `-c` they run the string they are given.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash",
];

/// Variables that make programs load or run other code.
fn dangerous_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "IFS",
        "PROMPT_COMMAND",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "GIT_PAGER",
        "LESSOPEN",
        "LESSCLOSE",
        "RUSTC_WRAPPER",
        "RIPGREP_CONFIG_PATH",
        "RUSTC",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "JAVA_TOOL_OPTIONS",
        "HOME",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_")
        || name.starts_with("BASH_FUNC_")
}

struct Reader<'a, 'p> {
    chars: Vec<char>,
    pos: usize,
    out: &'p mut Parsed,
    _line: &'a str,
}

/// What ended a word.
enum Token {
    Word(String, WordShape),
    /// `;`, `&`, `&&`, `||`, `|`, `|&`, newline.
    Separator,
    Redirect(RedirectOp),
    Open,
    Close,
    End,
}

/// What a word looked like before quote removal.
#[derive(Default, Clone, Copy)]
struct WordShape {
    /// It had an unquoted or double-quoted `$name` / `${…}`.
    expands: bool,
    /// It had an unquoted glob or brace character.
    globs: bool,
    /// Some part of it was quoted.
    quoted: bool,
    /// Some part before its first unquoted `=` was quoted (then it is no assignment).
    quoted_before_eq: bool,
    /// An unquoted `=` was met.
    seen_eq: bool,
}

impl WordShape {
    fn mark_quoted(&mut self) {
        self.quoted = true;
        if !self.seen_eq {
            self.quoted_before_eq = true;
        }
    }
}

enum RedirectOp {
    /// Reads or writes the file named by the next word.
    File(Direction),
    /// `>&N`, `<&N`, `>&-`: duplicates a descriptor (the next word is a number or `-`).
    Duplicate,
    /// `<<<word`: the next word is text, not a file.
    HereString,
    /// `<<` or `<<-`.
    HereDocument,
}

impl<'a, 'p> Reader<'a, 'p> {
    fn new(line: &'a str, out: &'p mut Parsed) -> Self {
        Reader {
            chars: line.chars().collect(),
            pos: 0,
            out,
            _line: line,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn hazard(&mut self, hazard: Hazard) {
        self.out.hazards.push(hazard);
    }

    /// Reads simple commands until the end (or the closing `)` of a group).
    fn list(&mut self, closing: Option<char>) {
        let mut current = SimpleCommand::default();
        let mut shapes: Vec<WordShape> = Vec::new();
        loop {
            let token = self.token();
            match token {
                Token::End => {
                    if closing.is_some() {
                        self.hazard(Hazard::Unsupported {
                            what: "an unclosed `(`".into(),
                        });
                    }
                    self.finish(&mut current, &mut shapes);
                    return;
                }
                Token::Close => {
                    self.finish(&mut current, &mut shapes);
                    if closing.is_none() {
                        self.hazard(Hazard::Unsupported {
                            what: "an unmatched `)`".into(),
                        });
                        continue;
                    }
                    return;
                }
                Token::Separator => self.finish(&mut current, &mut shapes),
                Token::Open => {
                    if !current.words.is_empty() || !current.assignments.is_empty() {
                        // `name ( … )`: a function definition.
                        self.hazard(Hazard::ControlStructure {
                            what: "function definition".into(),
                        });
                    }
                    if self.peek() == Some('(') {
                        self.hazard(Hazard::ControlStructure { what: "((".into() });
                    }
                    self.finish(&mut current, &mut shapes);
                    // A subshell: its commands count like any others.
                    self.list(Some(')'));
                }
                Token::Redirect(op) => self.redirect(op, &mut current),
                Token::Word(word, shape) => {
                    if current.words.is_empty() && !shape.quoted_before_eq && is_assignment(&word) {
                        let (name, value) = word.split_once('=').unwrap_or((&word, ""));
                        if dangerous_variable(name) {
                            self.hazard(Hazard::DangerousAssignment { name: name.into() });
                        }
                        current
                            .assignments
                            .push((name.to_string(), value.to_string()));
                    } else {
                        current.words.push(word);
                        shapes.push(shape);
                    }
                }
            }
        }
    }

    fn redirect(&mut self, op: RedirectOp, current: &mut SimpleCommand) {
        match op {
            RedirectOp::HereDocument => {
                self.hazard(Hazard::HereDocument);
                // The delimiter word.
                let _ = self.token();
            }
            RedirectOp::HereString => {
                let _ = self.token();
            }
            RedirectOp::Duplicate => match self.token() {
                Token::Word(word, _) if word == "-" || word.chars().all(|c| c.is_ascii_digit()) => {
                }
                Token::Word(word, shape) => {
                    // `>&file` is bash for `>file 2>&1`.
                    if shape.expands || shape.globs {
                        self.hazard(Hazard::Unsupported {
                            what: "a redirection to a computed file name".into(),
                        });
                    }
                    current.redirects.push(Redirect {
                        direction: Direction::Write,
                        target: word,
                    });
                }
                _ => self.hazard(Hazard::Unsupported {
                    what: "a redirection without a target".into(),
                }),
            },
            RedirectOp::File(direction) => match self.token() {
                Token::Word(word, shape) => {
                    if shape.expands || shape.globs {
                        self.hazard(Hazard::Unsupported {
                            what: "a redirection to a computed file name".into(),
                        });
                    }
                    if word.starts_with("/dev/tcp/") || word.starts_with("/dev/udp/") {
                        self.hazard(Hazard::RunsOtherCode {
                            what: format!(
                                "a redirection to {word} (bash opens a network connection)"
                            ),
                        });
                    }
                    current.redirects.push(Redirect {
                        direction,
                        target: word,
                    });
                }
                _ => self.hazard(Hazard::Unsupported {
                    what: "a redirection without a target".into(),
                }),
            },
        }
    }

    /// Ends the simple command being read: judges its name and keeps it.
    fn finish(&mut self, current: &mut SimpleCommand, shapes: &mut Vec<WordShape>) {
        let command = std::mem::take(current);
        let shapes = std::mem::take(shapes);
        if command.words.is_empty()
            && command.assignments.is_empty()
            && command.redirects.is_empty()
        {
            return;
        }
        if let (Some(name), Some(shape)) = (command.words.first(), shapes.first()) {
            if !shape.quoted && KEYWORDS.contains(&name.as_str()) {
                self.hazard(Hazard::ControlStructure { what: name.clone() });
            } else if shape.expands || shape.globs || name.is_empty() {
                self.hazard(Hazard::ComputedCommandName { word: name.clone() });
            }
            if let Some(what) = runs_other_code(&command.words) {
                self.hazard(Hazard::RunsOtherCode { what });
            }
        }
        self.out.commands.push(command);
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' {
                self.pos += 1;
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    fn token(&mut self) -> Token {
        self.skip_blanks();
        let Some(c) = self.peek() else {
            return Token::End;
        };
        match c {
            '#' => {
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.pos += 1;
                }
                self.token()
            }
            '\n' | ';' => {
                self.pos += 1;
                if c == ';' && self.peek() == Some(';') {
                    self.pos += 1;
                    self.hazard(Hazard::ControlStructure { what: ";;".into() });
                }
                Token::Separator
            }
            '|' => {
                self.pos += 1;
                if matches!(self.peek(), Some('|' | '&')) {
                    self.pos += 1;
                }
                Token::Separator
            }
            '&' => {
                self.pos += 1;
                match self.peek() {
                    Some('&') => {
                        self.pos += 1;
                        Token::Separator
                    }
                    Some('>') => {
                        self.pos += 1;
                        if self.peek() == Some('>') {
                            self.pos += 1;
                        }
                        Token::Redirect(RedirectOp::File(Direction::Write))
                    }
                    _ => Token::Separator,
                }
            }
            '(' => {
                self.pos += 1;
                Token::Open
            }
            ')' => {
                self.pos += 1;
                Token::Close
            }
            '<' | '>' => self.redirect_op(),
            '0'..='9' if self.digits_then_redirect() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                self.redirect_op()
            }
            '{' if self.brace_fd_redirect() => {
                self.hazard(Hazard::Unsupported {
                    what: "a `{fd}>` redirection".into(),
                });
                while self.peek().is_some_and(|c| c != '}') {
                    self.pos += 1;
                }
                self.pos += 1;
                self.redirect_op()
            }
            _ => {
                let (word, shape) = self.word();
                Token::Word(word, shape)
            }
        }
    }

    /// At `N>` or `N<` (a descriptor number then a redirection).
    fn digits_then_redirect(&self) -> bool {
        let mut i = self.pos;
        while self.chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        matches!(self.chars.get(i), Some('<' | '>'))
    }

    /// At `{name}>`.
    fn brace_fd_redirect(&self) -> bool {
        let mut i = self.pos + 1;
        while self
            .chars
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            i += 1;
        }
        i > self.pos + 1
            && self.chars.get(i) == Some(&'}')
            && matches!(self.chars.get(i + 1), Some('<' | '>'))
    }

    /// Reads a redirection operator starting at `<` or `>`.
    fn redirect_op(&mut self) -> Token {
        let first = self.peek();
        self.pos += 1;
        match (first, self.peek()) {
            (Some('<'), Some('(')) | (Some('>'), Some('(')) => {
                self.pos += 1;
                self.hazard(Hazard::ProcessSubstitution);
                self.nested_until_close();
                Token::Word(String::new(), WordShape::default())
            }
            (Some('<'), Some('<')) => {
                self.pos += 1;
                match self.peek() {
                    Some('<') => {
                        self.pos += 1;
                        Token::Redirect(RedirectOp::HereString)
                    }
                    Some('-') => {
                        self.pos += 1;
                        Token::Redirect(RedirectOp::HereDocument)
                    }
                    _ => Token::Redirect(RedirectOp::HereDocument),
                }
            }
            (Some('<'), Some('&')) | (Some('>'), Some('&')) => {
                self.pos += 1;
                Token::Redirect(RedirectOp::Duplicate)
            }
            (Some('<'), Some('>')) => {
                self.pos += 1;
                Token::Redirect(RedirectOp::File(Direction::Write))
            }
            (Some('<'), _) => Token::Redirect(RedirectOp::File(Direction::Read)),
            (_, Some('>' | '|')) => {
                self.pos += 1;
                Token::Redirect(RedirectOp::File(Direction::Write))
            }
            _ => Token::Redirect(RedirectOp::File(Direction::Write)),
        }
    }

    /// Reads one word, removing quotes; stops at blanks and operators.
    fn word(&mut self) -> (String, WordShape) {
        let mut text = String::new();
        let mut shape = WordShape::default();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            text.push(next);
                            shape.mark_quoted();
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    shape.mark_quoted();
                    self.pos += 1;
                    self.single_quoted(&mut text);
                }
                '"' => {
                    shape.mark_quoted();
                    self.pos += 1;
                    self.double_quoted(&mut text, &mut shape);
                }
                '`' | '$' => self.expansion(&mut text, &mut shape, false),
                '*' | '?' | '[' | '{' | '}' | '~' if c != '~' || text.is_empty() => {
                    if c != '~' {
                        shape.globs = true;
                    }
                    text.push(c);
                    self.pos += 1;
                }
                _ => {
                    if c == '=' {
                        shape.seen_eq = true;
                    }
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        (text, shape)
    }

    /// The next character inside a span that `close` ends, not yet consumed: `None` once
    /// the closing character is consumed, or at the end of the line, where the span is an
    /// unterminated `what` (a hazard).
    fn inside(&mut self, close: char, what: &str) -> Option<char> {
        match self.peek() {
            None => {
                self.hazard(Hazard::Unsupported {
                    what: format!("an unterminated {what}"),
                });
                None
            }
            Some(c) if c == close => {
                self.pos += 1;
                None
            }
            Some(c) => Some(c),
        }
    }

    fn single_quoted(&mut self, text: &mut String) {
        while let Some(c) = self.inside('\'', "quote") {
            text.push(c);
            self.pos += 1;
        }
    }

    fn double_quoted(&mut self, text: &mut String, shape: &mut WordShape) {
        while let Some(c) = self.inside('"', "quote") {
            match c {
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c @ ('$' | '`' | '"' | '\\')) => {
                            text.push(c);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => text.push('\\'),
                    }
                }
                '`' | '$' => self.expansion(text, shape, true),
                c => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// At a `` ` `` or a `$` (unquoted, or inside double quotes when `in_double`): reads
    /// the command substitution or parameter it starts.
    fn expansion(&mut self, text: &mut String, shape: &mut WordShape, in_double: bool) {
        let at = self.peek();
        self.pos += 1;
        if at == Some('`') {
            self.backquoted();
            shape.expands = true;
        } else {
            self.dollar(text, shape, in_double);
        }
    }

    /// After a `$`.
    fn dollar(&mut self, text: &mut String, shape: &mut WordShape, in_double: bool) {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                if self.peek() == Some('(') {
                    self.hazard(Hazard::ControlStructure { what: "$((".into() });
                }
                self.hazard(Hazard::CommandSubstitution);
                self.nested_until_close();
                shape.expands = true;
            }
            Some('{') => {
                self.pos += 1;
                let mut depth = 1;
                let mut inner = String::new();
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    inner.push(c);
                }
                if depth != 0 {
                    self.hazard(Hazard::Unsupported {
                        what: "an unterminated `${`".into(),
                    });
                }
                if inner.contains("$(") || inner.contains('`') {
                    self.hazard(Hazard::CommandSubstitution);
                }
                shape.expands = true;
                text.push_str("${");
                text.push_str(&inner);
                text.push('}');
            }
            Some('\'') if !in_double => {
                self.hazard(Hazard::Unsupported {
                    what: "`$'…'` quoting".into(),
                });
                self.pos += 1;
                self.single_quoted(text);
                shape.quoted = true;
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                text.push('$');
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        text.push(self.chars[self.pos]);
                        self.pos += 1;
                    }
                } else {
                    text.push(c);
                    self.pos += 1;
                }
                shape.expands = true;
            }
            _ => text.push('$'),
        }
    }

    /// After `` ` ``: reads to the closing backquote and reads what is inside as a line.
    fn backquoted(&mut self) {
        self.hazard(Hazard::CommandSubstitution);
        let mut inner = String::new();
        while let Some(c) = self.inside('`', "backquote") {
            if c == '\\' {
                self.pos += 1;
                if let Some(c) = self.peek() {
                    inner.push(c);
                    self.pos += 1;
                }
            } else {
                inner.push(c);
                self.pos += 1;
            }
        }
        let nested = parse(&inner);
        self.out.commands.extend(nested.commands);
        self.out.hazards.extend(nested.hazards);
    }

    /// After `$(`, `<(` or `>(`: the commands inside, read like any others.
    fn nested_until_close(&mut self) {
        self.list(Some(')'));
    }
}

/// `NAME=value` with a valid variable name.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `word` as `sh` reads it back: as it is when every character is `plain` (and it is not
/// empty), else in single quotes, each `'` written `'\''`.
pub fn quote_unless_plain(word: &str, plain: impl Fn(char) -> bool) -> String {
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `find` actions that run a program, delete or write a file (what makes `find` more than
/// a read).
pub(super) const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Why a simple command runs code other than itself, if it does.
fn runs_other_code(words: &[String]) -> Option<String> {
    let name = words.first()?.as_str();
    // `/usr/bin/sudo` is sudo; `dir/.` is a path, not the `.` builtin.
    let base = match name.rsplit('/').next() {
        Some(".") | None => name,
        Some(base) => base,
    };
    let args = &words[1..];
    // `env` alone, or with only options and assignments, prints the environment.
    // (Not `-S`/`--split-string`, whose argument is a command line.)
    let printing_flag =
        |a: &str| matches!(a, "-0" | "--null" | "-i" | "--ignore-environment" | "-");
    if base == "env" && args.iter().all(|a| printing_flag(a) || is_assignment(a)) {
        return None;
    }
    // `command -v NAME` and `command -V NAME` only look a name up.
    if base == "command" && matches!(args.first().map(String::as_str), Some("-v" | "-V")) {
        return None;
    }
    if WRAPPERS.contains(&base) {
        return Some(base.to_string());
    }
    if SHELLS.contains(&base) && args.iter().any(|a| is_short_flag_with(a, 'c')) {
        return Some(format!("{base} -c"));
    }
    match base {
        "find" => args
            .iter()
            .find(|a| FIND_ACTIONS.contains(&a.as_str()))
            .map(|a| format!("find {a}")),
        "fd" | "fdfind" => args
            .iter()
            .find(|a| matches!(a.as_str(), "-x" | "-X" | "--exec" | "--exec-batch"))
            .map(|a| format!("{base} {a}")),
        "rg" => args
            .iter()
            .find(|a| a.starts_with("--pre"))
            .map(|a| format!("rg {a}")),
        "git" => {
            // Options before the subcommand can point git at other programs or config.
            for a in args {
                if !a.starts_with('-') {
                    break;
                }
                if a == "-c"
                    || a.starts_with("--config-env")
                    || a.starts_with("--exec-path")
                    || a == "-C"
                    || a.starts_with("--git-dir")
                    || a.starts_with("--work-tree")
                {
                    return Some(format!("git {a}"));
                }
            }
            None
        }
        _ => None,
    }
}

/// `-c`, or a cluster of short flags containing `c` (`-ec`, `-xc`).
fn is_short_flag_with(arg: &str, flag: char) -> bool {
    arg.len() >= 2
        && arg.starts_with('-')
        && !arg.starts_with("--")
        && arg[1..].chars().all(|c| c.is_ascii_alphabetic())
        && arg[1..].contains(flag)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line).commands.into_iter().map(|c| c.words).collect()
    }

    fn w(list: &[&[&str]]) -> Vec<Vec<String>> {
        list.iter()
            .map(|c| c.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn splits_lists_and_pipelines_into_simple_commands() {
        assert_eq!(
            words("cargo fmt && cargo test -q; git status | head -n 5 || echo no & ls"),
            w(&[
                &["cargo", "fmt"],
                &["cargo", "test", "-q"],
                &["git", "status"],
                &["head", "-n", "5"],
                &["echo", "no"],
                &["ls"],
            ])
        );
        assert_eq!(words("a\nb |& c"), w(&[&["a"], &["b"], &["c"]]));
        assert!(parse("cargo fmt && cargo test").is_plain());
    }

    #[test]
    fn removes_quotes_and_keeps_quoted_operators_as_text() {
        let p = parse(r#"echo 'a; b' "c && d" e\;f "x\"y" 'it'"'"'s'"#);
        assert!(p.is_plain(), "{:?}", p.hazards);
        assert_eq!(
            p.commands[0].words,
            vec!["echo", "a; b", "c && d", "e;f", "x\"y", "it's"]
        );
    }

    #[test]
    fn the_reported_bypasses_are_hazards_or_separate_commands() {
        // "always allow echo" must not cover the second command.
        assert_eq!(
            words("echo innocent; touch /tmp/x"),
            w(&[&["echo", "innocent"], &["touch", "/tmp/x"]])
        );
        let p = parse("echo $(touch /tmp/y)");
        assert!(p.hazards.contains(&Hazard::CommandSubstitution));
        // The command inside is still seen (for deny rules).
        assert!(p.commands.iter().any(|c| c.words == ["touch", "/tmp/y"]));
        let p = parse("echo `rm -rf x`");
        assert!(p.hazards.contains(&Hazard::CommandSubstitution));
        assert!(p.commands.iter().any(|c| c.words == ["rm", "-rf", "x"]));
        let p = parse(r#"echo "$(id)""#);
        assert!(p.hazards.contains(&Hazard::CommandSubstitution));
        assert!(
            parse("echo ${x:-$(id)}")
                .hazards
                .contains(&Hazard::CommandSubstitution)
        );
    }

    #[test]
    fn constructs_that_hide_what_runs_are_hazards() {
        for line in [
            "cat <(curl x)",
            "tee >(sh)",
            "cat <<EOF\nhi\nEOF",
            "if true; then rm x; fi",
            "for f in *; do rm $f; done",
            "f() { rm x; }",
            "$CMD arg",
            "./*.sh",
            "eval 'rm -rf /'",
            "sudo ls",
            "xargs rm",
            "bash -c 'rm x'",
            "sh -ec 'rm x'",
            "find . -name x -exec rm {} +",
            "find . -delete",
            "git -c core.pager=sh log",
            "rg --pre ./evil x",
            "LD_PRELOAD=/tmp/x.so ls",
            "PATH=/tmp/evil:$PATH ls",
            "echo $'\\x41'",
            "echo 'unterminated",
            "echo $((1+2))",
            "[[ -f x ]] && ls",
            "env FOO=1 ls",
            "env -S'touch /tmp/x'",
            "cat < /dev/tcp/example.com/80",
            "RIPGREP_CONFIG_PATH=./x rg foo",
            "env --split-string='touch x'",
            "command ls",
            "source ./x.sh",
            ". ./x.sh",
            "exec 3>/tmp/x",
            "ls {fd}>x",
            "(( x++ ))",
        ] {
            assert!(!parse(line).is_plain(), "{line} should be a hazard");
        }
    }

    #[test]
    fn redirections_are_kept_with_their_targets() {
        let p = parse("echo hi > out.txt 2>&1; cat < in.txt >> log 2> /dev/null; x &> all");
        assert!(p.is_plain(), "{:?}", p.hazards);
        let r: Vec<(Direction, &str)> = p
            .commands
            .iter()
            .flat_map(|c| c.redirects.iter().map(|r| (r.direction, r.target.as_str())))
            .collect();
        assert_eq!(
            r,
            vec![
                (Direction::Write, "out.txt"),
                (Direction::Read, "in.txt"),
                (Direction::Write, "log"),
                (Direction::Write, "/dev/null"),
                (Direction::Write, "all"),
            ]
        );
        assert_eq!(p.commands[1].words, vec!["cat"]);
        // `>$file` is not a literal target.
        assert!(!parse("echo x > $F").is_plain());
    }

    #[test]
    fn assignments_before_the_command_are_kept_apart() {
        let p = parse("RUST_LOG=debug FOO='a b' cargo test");
        assert!(p.is_plain());
        assert_eq!(p.commands[0].words, vec!["cargo", "test"]);
        assert_eq!(
            p.commands[0].assignments,
            vec![
                ("RUST_LOG".to_string(), "debug".to_string()),
                ("FOO".to_string(), "a b".to_string())
            ]
        );
        // After the name, `a=b` is an argument.
        assert_eq!(words("make CC=gcc"), w(&[&["make", "CC=gcc"]]));
    }

    #[test]
    fn subshells_count_their_commands() {
        let p = parse("(cd sub && rm -rf build)");
        assert!(p.is_plain(), "{:?}", p.hazards);
        assert_eq!(p.commands[1].words, vec!["rm", "-rf", "build"]);
        assert!(!parse("(ls").is_plain());
        assert!(!parse("ls)").is_plain());
    }

    #[test]
    fn comments_and_continuations() {
        assert_eq!(words("ls # ; rm -rf /"), w(&[&["ls"]]));
        assert_eq!(words("cargo \\\n test"), w(&[&["cargo", "test"]]));
        assert_eq!(words("echo a#b"), w(&[&["echo", "a#b"]]));
    }

    #[test]
    fn a_quoted_keyword_or_glob_in_an_argument_is_fine() {
        assert!(parse("env").is_plain());
        assert!(parse("env -0").is_plain());
        assert!(parse("command -v cargo").is_plain());
        assert!(parse("rg 'if' src/*.rs").is_plain());
        assert!(parse("echo '$(not run)'").is_plain());
        assert!(parse("ls ~/x").is_plain());
    }

    proptest::proptest! {
        #[test]
        fn never_panics(line in "[ -~\\n\\t]{0,80}") {
            let _ = parse(&line);
        }

        // Words without `/`: `q/su` names a program called su, which is a wrapper.
        #[test]
        fn words_of_plain_lines_never_hold_operators(
            parts in proptest::collection::vec("q[a-z0-9_.-]{0,7}", 1..6)
        ) {
            let line = parts.join(" ; ");
            let p = parse(&line);
            proptest::prop_assert!(p.is_plain());
            proptest::prop_assert_eq!(p.commands.len(), parts.len());
        }
    }
}
