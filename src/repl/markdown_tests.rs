//! The REPL's Markdown stream: plain and ANSI rendering, streaming in pieces, hostile
//! text neutralized before styling.

use super::*;

fn plain(text: &str) -> String {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    let mut out = md.push(text);
    out.push_str(&md.finish());
    out
}

fn ansi(text: &str) -> String {
    let mut md = MarkdownStream::new(MarkdownStyle::Ansi);
    let mut out = md.push(text);
    out.push_str(&md.finish());
    out
}

/// Feeds `text` in pieces of `n` bytes (on char boundaries).
fn plain_in_pieces(text: &str, n: usize) -> String {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    let mut out = String::new();
    let mut piece = String::new();
    for c in text.chars() {
        piece.push(c);
        if piece.len() >= n {
            out.push_str(&md.push(&piece));
            piece.clear();
        }
    }
    out.push_str(&md.push(&piece));
    out.push_str(&md.finish());
    out
}

/// Raw controls that must never come out of the renderer (its own styling aside).
fn foreign_controls(out: &str) -> Vec<char> {
    // Take away the styling this module writes itself, then look for any control.
    let mut rest = out.to_string();
    for code in ["0", BOLD, DIM, ITALIC, UNDERLINE, STRIKE, CYAN] {
        rest = rest.replace(&format!("\x1b[{code}m"), "");
    }
    rest.chars()
        .filter(|&c| crate::safe_text::is_forbidden(c) && c != '\r')
        .collect()
}

#[test]
fn escapes_in_the_answer_are_shown_not_obeyed_and_the_styling_survives() {
    let hostile = "**bold** \x1b]0;PWNED\x07 and `c\x1b[?1049h` \u{9b}31m\n";
    let out = plain(hostile);
    assert_eq!(out, "bold ^[]0;PWNED^G and c^[[?1049h <U+009B>31m\n");
    let out = ansi(hostile);
    assert!(foreign_controls(&out).is_empty(), "{out:?}");
    assert!(
        out.starts_with("\x1b[1mbold\x1b[0m ^[]0;PWNED^G"),
        "{out:?}"
    );
    // Cut inside the escapes, one byte at a time.
    let out = plain_in_pieces("go \x1b]0;PWNED\x07 x\r\n```\n\x1b[?25l\n```\n", 1);
    assert_eq!(out, "go ^[]0;PWNED^G x\n    ^[[?25l\n");
}

#[test]
fn character_references_cannot_make_escapes() {
    for style in [MarkdownStyle::Plain, MarkdownStyle::Ansi] {
        let mut md = MarkdownStream::new(style);
        let mut out = md.push("a &#27;]0;PWNED&#7; [x](&#x1b;[?1049h) &#155;31m *&#x1b;*\n");
        out.push_str(&md.finish());
        assert!(foreign_controls(&out).is_empty(), "{style:?}: {out:?}");
        assert!(out.contains("^[]0;PWNED^G"), "{out:?}");
        assert!(out.contains("<U+009B>31m"), "{out:?}");
    }
}

#[test]
fn a_lone_carriage_return_at_the_end_is_shown() {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    let mut out = md.push("visible\r");
    out.push_str(&md.finish());
    assert_eq!(out, "visible^M\n");
}

const SAMPLE: &str = "# Plan\n\nRun **all** the *tests* with `cargo test`, see [docs](https://x.dev/a).\n\n- first\n- second\n\n1. one\n2. two\n\n> quoted _text_\n\n```rust\nfn main() {}\n```\nDone.";

#[test]
fn plain_removes_markers_and_indents_code() {
    assert_eq!(
        plain(SAMPLE),
        "Plan\n\nRun all the tests with cargo test, see docs (https://x.dev/a).\n\n- first\n- second\n\n1. one\n2. two\n\n> quoted text\n\n    fn main() {}\nDone.\n"
    );
}

#[test]
fn plain_output_is_the_same_whatever_the_delta_sizes() {
    let whole = plain(SAMPLE);
    for n in [1, 2, 3, 5, 8, 13] {
        assert_eq!(plain_in_pieces(SAMPLE, n), whole, "pieces of {n}");
    }
}

#[test]
fn plain_has_no_escape_sequences() {
    assert!(!plain(SAMPLE).contains('\x1b'));
}

#[test]
fn ansi_styles_lightly() {
    let out = ansi("# Title\nsome **bold** and `code`\n```\nx\n```\n");
    assert_eq!(
        out,
        "\x1b[1mTitle\x1b[0m\nsome \x1b[1mbold\x1b[0m and \x1b[36mcode\x1b[0m\n\x1b[2m```\x1b[0m\nx\n\x1b[2m```\x1b[0m\n"
    );
}

#[test]
fn prose_streams_word_by_word_before_the_line_ends() {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    assert_eq!(md.push("Hello wor"), "Hello wor");
    assert!(md.mid_line());
    assert_eq!(md.push("ld and "), "ld and");
    assert_eq!(md.push("more"), " more");
    assert_eq!(md.push(" `x` end\n"), " x end\n");
    assert!(!md.mid_line());
}

#[test]
fn markup_stops_streaming_until_the_line_is_complete() {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    assert_eq!(md.push("a **b"), "a");
    assert_eq!(md.push(" c** d"), "");
    assert_eq!(md.push("\n"), " b c d\n");
}

#[test]
fn block_lines_wait_for_their_end() {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    assert_eq!(md.push("- item one two"), "");
    assert_eq!(md.push("\n"), "- item one two\n");
}

#[test]
fn finish_ends_a_partial_line_and_closes_fences() {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    assert_eq!(md.push("```\nlet x"), "");
    assert_eq!(md.finish(), "    let x\n");
    assert_eq!(md.push("*a*\n"), "a\n");
    assert_eq!(md.finish(), "");
}

#[test]
fn nested_lists_keep_their_indentation() {
    assert_eq!(plain("- a\n  - b\n"), "- a\n  - b\n");
    assert_eq!(ansi("- a\n"), "• a\n");
}

#[test]
fn autolinks_are_not_repeated() {
    assert_eq!(plain("see <https://a.b/c>\n"), "see https://a.b/c\n");
}
