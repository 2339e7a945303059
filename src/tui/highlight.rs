//! A small, dependency-free syntax highlighter for fenced code in answers: comments,
//! strings, numbers and keywords of common languages, one line at a time. It costs
//! nothing at start-up (no grammar files to load) and is good enough for reading code in
//! a terminal; unknown languages come out plain.
//!
//! It knows nothing about Markdown or cells: it turns one line of code into spans.

use ratatui::style::{Color, Style};
use ratatui::text::Span;

/// What a language looks like to the highlighter. (The longer keyword lists are packed by
/// hand: `rustfmt` would put one word on each line.)
struct Lang {
    /// Its keywords (and a few common built-ins).
    keywords: &'static [&'static str],
    /// What starts a comment that runs to the end of the line.
    line_comment: &'static [&'static str],
    /// What a single quote opens.
    single_quote: SingleQuote,
}

/// What `'` opens in a language.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SingleQuote {
    /// A string, as `"` does (Python, JavaScript, shells, data files).
    String,
    /// A character or a lifetime: not highlighted (Rust, Go, C and its kin).
    CharOrLifetime,
}

const RUST: Lang = Lang {
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while", "Some", "None", "Ok", "Err",
    ],
    line_comment: &["//"],
    single_quote: SingleQuote::CharOrLifetime,
};

const PYTHON: Lang = Lang {
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "False", "finally", "for", "from", "global", "if", "import",
        "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True",
        "try", "while", "with", "yield", "self",
    ],
    line_comment: &["#"],
    single_quote: SingleQuote::String,
};

#[rustfmt::skip]
const JS: Lang = Lang {
    keywords: &[
        "async", "await", "break", "case", "catch", "class", "const", "continue", "default",
        "delete", "do", "else", "export", "extends", "false", "finally", "for", "from",
        "function", "if", "import", "in", "instanceof", "interface", "let", "new", "null",
        "return", "static", "super", "switch", "this", "throw", "true", "try", "type", "typeof",
        "undefined", "var", "void", "while", "yield",
    ],
    line_comment: &["//"],
    single_quote: SingleQuote::String,
};

#[rustfmt::skip]
const GO: Lang = Lang {
    keywords: &[
        "break", "case", "chan", "const", "continue", "default", "defer", "else", "false",
        "fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "nil",
        "package", "range", "return", "select", "struct", "switch", "true", "type", "var",
    ],
    line_comment: &["//"],
    single_quote: SingleQuote::CharOrLifetime,
};

#[rustfmt::skip]
const C: Lang = Lang {
    keywords: &[
        "auto", "bool", "break", "case", "char", "class", "const", "continue", "default",
        "delete", "do", "double", "else", "enum", "extern", "false", "float", "for", "if",
        "int", "long", "namespace", "new", "nullptr", "private", "public", "return", "short",
        "signed", "sizeof", "static", "struct", "switch", "template", "this", "true", "typedef",
        "union", "unsigned", "using", "virtual", "void", "while", "#include", "#define",
        "abstract", "extends", "final", "implements", "import", "package", "throws",
    ],
    line_comment: &["//"],
    single_quote: SingleQuote::CharOrLifetime,
};

const SHELL: Lang = Lang {
    keywords: &[
        "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "case", "esac",
        "function", "return", "export", "local", "echo", "cd", "set", "exit",
    ],
    line_comment: &["#"],
    single_quote: SingleQuote::String,
};

const DATA: Lang = Lang {
    keywords: &["true", "false", "null"],
    line_comment: &["#"],
    single_quote: SingleQuote::String,
};

fn lang_for(name: &str) -> Option<&'static Lang> {
    let name = name.trim().to_ascii_lowercase();
    let lang = match name.as_str() {
        "rust" | "rs" => &RUST,
        "python" | "py" => &PYTHON,
        "js" | "javascript" | "ts" | "typescript" | "jsx" | "tsx" | "mjs" => &JS,
        "go" | "golang" => &GO,
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "kotlin" | "cs" | "csharp" => &C,
        "sh" | "bash" | "zsh" | "shell" | "console" => &SHELL,
        "toml" | "yaml" | "yml" | "json" | "ini" => &DATA,
        _ => return None,
    };
    Some(lang)
}

fn keyword_style() -> Style {
    Style::new().fg(Color::Magenta)
}
fn string_style() -> Style {
    Style::new().fg(Color::Green)
}
fn comment_style() -> Style {
    Style::new().fg(Color::DarkGray)
}
fn number_style() -> Style {
    Style::new().fg(Color::Yellow)
}

/// The style of code text that has no colour of its own.
pub fn plain_code_style() -> Style {
    Style::new().fg(Color::Cyan)
}

/// Splits one line of code in language `lang` (the fence's info string) into styled
/// spans. Unknown languages give one plain span.
pub fn highlight_line(lang: &str, line: &str) -> Vec<Span<'static>> {
    let Some(lang) = lang_for(lang.split([' ', ',']).next().unwrap_or("")) else {
        return vec![Span::styled(line.to_string(), plain_code_style())];
    };
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut plain = String::new();
    let flush = |plain: &mut String, spans: &mut Vec<Span<'static>>| {
        if !plain.is_empty() {
            spans.push(Span::raw(std::mem::take(plain)));
        }
    };
    let bytes: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while i < bytes.len() {
        let (at, c) = bytes[i];
        let rest = &line[at..];
        if lang.line_comment.iter().any(|m| rest.starts_with(m)) {
            flush(&mut plain, &mut spans);
            spans.push(Span::styled(rest.to_string(), comment_style()));
            return spans;
        }
        if c == '"' || c == '`' || (c == '\'' && lang.single_quote == SingleQuote::String) {
            flush(&mut plain, &mut spans);
            let mut j = i + 1;
            while j < bytes.len() {
                if bytes[j].1 == '\\' {
                    j += 2;
                    continue;
                }
                if bytes[j].1 == c {
                    j += 1;
                    break;
                }
                j += 1;
            }
            let end = bytes.get(j).map_or(line.len(), |b| b.0);
            spans.push(Span::styled(line[at..end].to_string(), string_style()));
            i = j;
            continue;
        }
        let word_char = |c: char| c.is_alphanumeric() || c == '_' || c == '#';
        if word_char(c) {
            let mut j = i;
            while j < bytes.len() && word_char(bytes[j].1) {
                j += 1;
            }
            let end = bytes.get(j).map_or(line.len(), |b| b.0);
            let word = &line[at..end];
            if word.starts_with(|c: char| c.is_ascii_digit()) {
                flush(&mut plain, &mut spans);
                spans.push(Span::styled(word.to_string(), number_style()));
            } else if lang.keywords.contains(&word) {
                flush(&mut plain, &mut spans);
                spans.push(Span::styled(word.to_string(), keyword_style()));
            } else {
                plain.push_str(word);
            }
            i = j;
            continue;
        }
        plain.push(c);
        i += 1;
    }
    flush(&mut plain, &mut spans);
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styled(spans: &[Span<'_>]) -> Vec<(String, Style)> {
        spans
            .iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect()
    }

    #[test]
    fn rust_keywords_strings_and_comments() {
        let spans = highlight_line("rust", r#"let s = "a\"b"; // note"#);
        assert_eq!(
            styled(&spans),
            vec![
                ("let".into(), keyword_style()),
                (" s = ".into(), Style::new()),
                (r#""a\"b""#.into(), string_style()),
                ("; ".into(), Style::new()),
                ("// note".into(), comment_style()),
            ]
        );
    }

    #[test]
    fn numbers_and_identifiers_containing_keywords() {
        let spans = highlight_line("go", "format := 42");
        assert_eq!(
            styled(&spans),
            vec![
                ("format := ".into(), Style::new()),
                ("42".into(), number_style()),
            ]
        );
    }

    #[test]
    fn a_hash_is_a_comment_where_the_language_says_so() {
        let c = highlight_line("c", "#include <stdio.h>");
        assert_eq!(styled(&c[..1]), vec![("#include".into(), keyword_style())]);
        for lang in ["python", "sh"] {
            let spans = highlight_line(lang, "#include x");
            assert_eq!(styled(&spans), vec![("#include x".into(), comment_style())]);
        }
    }

    #[test]
    fn keywords_are_found_wherever_they_stand_in_a_list() {
        let spans = highlight_line("rust", "as impl in Err");
        let keywords: Vec<String> = styled(&spans)
            .into_iter()
            .filter(|(_, style)| *style == keyword_style())
            .map(|(word, _)| word)
            .collect();
        assert_eq!(keywords, ["as", "impl", "in", "Err"]);
    }

    #[test]
    fn unknown_language_is_plain() {
        let spans = highlight_line("brainfuck", "++[>+<-]");
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].style, plain_code_style());
    }

    #[test]
    fn unterminated_string_runs_to_end_of_line() {
        let spans = highlight_line("python", "x = 'abc");
        assert_eq!(
            spans.last().map(|s| s.content.to_string()),
            Some("'abc".into())
        );
    }
}
