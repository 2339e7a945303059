//! The character-level reader behind [`super::parse`]: tokens (words with their quoting
//! removed, separators, redirection operators, parentheses), the simple commands they
//! make, and every hazard met on the way. It owns the bash syntax harness9 understands;
//! it must not know rules or what the commands are allowed to do (beyond asking
//! [`super::semantics`] about a finished command).

use super::{
    Direction, Hazard, KEYWORDS, Parsed, Redirect, SimpleCommand, is_assignment, parse, semantics,
};

/// The hazard of an argument that is not read as written.
fn non_literal(word: &str, shape: WordShape) -> Hazard {
    if shape.expands || shape.other_tilde {
        Hazard::Expansion {
            word: word.to_string(),
        }
    } else {
        Hazard::Pattern {
            word: word.to_string(),
        }
    }
}

/// Reads one line into a [`Parsed`].
pub(super) struct Reader<'a, 'p> {
    chars: Vec<char>,
    pos: usize,
    out: &'p mut Parsed,
    _line: &'a str,
}

/// What ended a word.
enum Token {
    Word(String, WordShape),
    /// `;`, `&`, `&&`, `||`, `|`, `|&`, newline.
    Separator(Sep),
    Redirect(RedirectOp),
    Open,
    Close,
    End,
}

/// What a word looked like before quote removal.
#[derive(Default, Clone, Copy)]
struct WordShape {
    /// It had an unquoted or double-quoted expansion: `$name`, `${…}`, `$(…)`,
    /// `` `…` ``, `$((…))`, `$[…]`, `$"…"`.
    expands: bool,
    /// It had an unquoted file name pattern (`*`, `?`, `[…]`) or a brace expansion
    /// (`{a,b}`, `{1..3}`).
    globs: bool,
    /// It starts with a tilde bash expands to something other than `$HOME` (`~user`,
    /// `~+`, `~-`).
    other_tilde: bool,
    /// Some part of it was quoted.
    quoted: bool,
    /// Some part before its first unquoted `=` was quoted (then it is no assignment).
    quoted_before_eq: bool,
    /// An unquoted `=` was met.
    seen_eq: bool,
    /// An unquoted `[` was met (a later unquoted `]` makes a pattern).
    open_bracket: bool,
    /// Unquoted `{` not yet closed, and whether a `,` or `..` was met inside.
    open_braces: u32,
    brace_separator: bool,
}

impl WordShape {
    fn mark_quoted(&mut self) {
        self.quoted = true;
        if !self.seen_eq {
            self.quoted_before_eq = true;
        }
    }

    /// True when bash reads the word as it is written, after quote removal (a leading
    /// `~` or `~/` only stands for `$HOME`, which harness9 expands the same way).
    fn literal(&self) -> bool {
        !(self.expands || self.globs || self.other_tilde)
    }
}

/// Keywords after which a command starts.
const COMMAND_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{",
];

/// Which separator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// A newline: blank lines are fine.
    Newline,
    /// `;` or `&`: ends a command, which must be there.
    Ends,
    /// `&&`, `||`, `|`, `|&`: a command must come before it and after it.
    Joins,
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
    pub(super) fn new(line: &'a str, out: &'p mut Parsed) -> Self {
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

    /// Reads simple commands until the end (or the closing `)` of a group). A line
    /// bash would refuse as a syntax error (a separator with no command before it, a
    /// line ending in `&&` or `|`, an empty group) is a hazard: bash would run less than
    /// was read, or nothing.
    pub(super) fn list(&mut self, closing: Option<char>) {
        let mut current = SimpleCommand::default();
        let mut shapes: Vec<WordShape> = Vec::new();
        // Something was read since the last `;`, `&`, `&&`, `||` or `|`.
        let mut seen_content = false;
        // The last separator joins to a command that must follow.
        let mut needs_command = false;
        let mut any_content = false;
        loop {
            let token = self.token();
            if matches!(token, Token::Word(..) | Token::Redirect(_) | Token::Open) {
                seen_content = true;
                any_content = true;
            }
            let ended = matches!(token, Token::End | Token::Close);
            if ended && ((needs_command && !seen_content) || (closing.is_some() && !any_content)) {
                self.hazard(Hazard::Unsupported {
                    what: "a command line that ends where bash expects a command".into(),
                });
            }
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
                Token::Separator(sep) => {
                    if sep != Sep::Newline && !seen_content {
                        self.hazard(Hazard::Unsupported {
                            what: "a separator with no command before it".into(),
                        });
                    }
                    self.finish(&mut current, &mut shapes);
                    match sep {
                        Sep::Newline if seen_content => needs_command = false,
                        Sep::Newline => {}
                        Sep::Ends => needs_command = false,
                        Sep::Joins => needs_command = true,
                    }
                    if sep != Sep::Newline || !needs_command {
                        seen_content = false;
                    }
                }
                Token::Open => {
                    if !current.words.is_empty() || !current.assignments.is_empty() {
                        // `name ( … )`: a function definition.
                        self.hazard(Hazard::ControlStructure {
                            what: "function definition".into(),
                        });
                    }
                    self.finish(&mut current, &mut shapes);
                    if self.peek() == Some('(') {
                        // `(( … ))`: arithmetic, not commands.
                        self.hazard(Hazard::ControlStructure { what: "((".into() });
                        self.pos += 1;
                        self.arithmetic();
                    } else {
                        // A subshell: its commands count like any others.
                        self.list(Some(')'));
                    }
                }
                Token::Redirect(op) => self.redirect(op, &mut current),
                Token::Word(word, shape)
                    if current.words.is_empty()
                        && current.assignments.is_empty()
                        && current.redirects.is_empty()
                        && !shape.quoted
                        && COMMAND_KEYWORDS.contains(&word.as_str()) =>
                {
                    // `then`, `do`, `{`, `!`, …: a command starts after it (`then x=1`
                    // assigns, as in bash). The keyword stands as a command of its own.
                    current.words.push(word);
                    shapes.push(shape);
                    self.finish(&mut current, &mut shapes);
                }
                Token::Word(word, shape) => {
                    if current.words.is_empty() && !shape.quoted_before_eq && is_assignment(&word) {
                        let (name, value) = word.split_once('=').unwrap_or((&word, ""));
                        if !shape.literal() {
                            self.hazard(Hazard::Expansion { word: word.clone() });
                        }
                        current
                            .assignments
                            .push((name.to_string(), value.to_string()));
                    } else {
                        // The command name is judged when the command ends.
                        if !current.words.is_empty() && !shape.literal() {
                            self.hazard(non_literal(&word, shape));
                        }
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
                // The text of `<<< word` goes through the same expansions as any word.
                if let Token::Word(word, shape) = self.token()
                    && !shape.literal()
                {
                    self.hazard(non_literal(&word, shape));
                }
            }
            RedirectOp::Duplicate => match self.token() {
                Token::Word(word, _) if word == "-" || word.chars().all(|c| c.is_ascii_digit()) => {
                }
                Token::Word(word, shape) => {
                    // `>&file` is bash for `>file 2>&1`.
                    if !shape.literal() {
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
                    if !shape.literal() {
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
            } else if !shape.literal() || name.is_empty() {
                self.hazard(Hazard::ComputedCommandName { word: name.clone() });
            }
        }
        for hazard in semantics::hazards_of(&command) {
            self.hazard(hazard);
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
                Token::Separator(if c == '\n' { Sep::Newline } else { Sep::Ends })
            }
            '|' => {
                self.pos += 1;
                if matches!(self.peek(), Some('|' | '&')) {
                    self.pos += 1;
                }
                Token::Separator(Sep::Joins)
            }
            '&' => {
                self.pos += 1;
                match self.peek() {
                    Some('&') => {
                        self.pos += 1;
                        Token::Separator(Sep::Joins)
                    }
                    Some('>') => {
                        self.pos += 1;
                        if self.peek() == Some('>') {
                            self.pos += 1;
                        }
                        Token::Redirect(RedirectOp::File(Direction::Write))
                    }
                    _ => Token::Separator(Sep::Ends),
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
                        // A backslash that ends the line is itself.
                        None => text.push('\\'),
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
                '~' if text.is_empty() && !shape.quoted => {
                    // `~` and `~/…` are `$HOME`; `~user`, `~+` and `~-` are something else.
                    if !matches!(
                        self.peek_at(1),
                        None | Some('/' | ' ' | '\t' | '\n' | ';' | '&' | '|' | ')' | '<' | '>')
                    ) {
                        shape.other_tilde = true;
                    }
                    text.push(c);
                    self.pos += 1;
                }
                '*' | '?' => {
                    shape.globs = true;
                    text.push(c);
                    self.pos += 1;
                }
                '[' => {
                    shape.open_bracket = true;
                    text.push(c);
                    self.pos += 1;
                }
                ']' => {
                    shape.globs |= shape.open_bracket;
                    text.push(c);
                    self.pos += 1;
                }
                '{' => {
                    shape.open_braces += 1;
                    text.push(c);
                    self.pos += 1;
                }
                '}' => {
                    if shape.open_braces > 0 {
                        shape.open_braces -= 1;
                        shape.globs |= shape.brace_separator;
                    }
                    text.push(c);
                    self.pos += 1;
                }
                ',' | '.' => {
                    let range = c == '.' && self.peek_at(1) == Some('.');
                    if shape.open_braces > 0 && (c == ',' || range) {
                        shape.brace_separator = true;
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
        let start = self.pos;
        self.pos += 1;
        if at == Some('`') {
            self.backquoted();
            shape.expands = true;
            text.extend(&self.chars[start..self.pos.min(self.chars.len())]);
        } else {
            self.dollar(text, shape, in_double);
        }
    }

    /// After a `$`.
    fn dollar(&mut self, text: &mut String, shape: &mut WordShape, in_double: bool) {
        match self.peek() {
            Some('(') => {
                let start = self.pos - 1;
                self.pos += 1;
                if self.peek() == Some('(') {
                    // `$(( … ))`: arithmetic, not commands.
                    self.hazard(Hazard::ControlStructure { what: "$((".into() });
                    self.pos += 1;
                    self.arithmetic();
                } else {
                    self.hazard(Hazard::CommandSubstitution);
                    self.nested_until_close();
                }
                shape.expands = true;
                // The word keeps the substitution as written: what it becomes is unknown.
                text.extend(&self.chars[start..self.pos.min(self.chars.len())]);
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
            Some('"') if !in_double => {
                // `$"…"`: translated through the locale's message catalogue.
                self.hazard(Hazard::Unsupported {
                    what: "`$\"…\"` quoting".into(),
                });
                shape.expands = true;
                text.push('$');
            }
            Some('[') => {
                // `$[…]`: the old spelling of arithmetic expansion.
                self.hazard(Hazard::ControlStructure { what: "$[".into() });
                shape.expands = true;
                text.push('$');
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

    /// After `((` or `$((`: reads to the matching `))`. Arithmetic holds no commands of
    /// its own, but a `$( … )` or `` ` … ` `` inside it runs: those are read like any.
    fn arithmetic(&mut self) {
        let mut depth = 2;
        while let Some(c) = self.peek() {
            match c {
                '$' if self.peek_at(1) == Some('(') && self.peek_at(2) != Some('(') => {
                    self.pos += 2;
                    self.hazard(Hazard::CommandSubstitution);
                    self.nested_until_close();
                }
                '`' => {
                    self.pos += 1;
                    self.backquoted();
                }
                '(' => {
                    depth += 1;
                    self.pos += 1;
                }
                ')' => {
                    depth -= 1;
                    self.pos += 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => self.pos += 1,
            }
        }
        self.hazard(Hazard::Unsupported {
            what: "an unterminated `((`".into(),
        });
    }

    /// After `$(`, `<(` or `>(`: the commands inside, read like any others.
    fn nested_until_close(&mut self) {
        self.list(Some(')'));
    }
}
