//! Lines under the cap render exactly as before cutting existed, and lines over it are
//! held to the cap with linear work and without losing or repeating a byte.

use super::*;

/// Kinds of line, each repeated to the lengths in [`GOLDEN`].
const KINDS: &[&str] = &[
    "lorem ipsum dolor sit amet ",
    "see `code` and **bold** or *em* text ",
    "# heading words ",
    "- item with _emphasis_ and [a link](https://x.dev/p) ",
    "> quoted ~~gone~~ words & more ",
    "1. numbered <b>html</b> \\*escaped\\* ",
    "    indented code line ",
    "plain words then `tick ",
    "naïve café — ünïcödé words ",
];

/// (kind, length, style, FNV-1a hash of the output), recorded from the renderer
/// as it was before lines were cut at [`MAX_HELD`] (commit 7c0d54e).
const GOLDEN: &[(usize, usize, MarkdownStyle, u64)] = &[
    (0, 40, MarkdownStyle::Plain, 0xe2c030471153c819),
    (0, 40, MarkdownStyle::Ansi, 0x138e9d759a3aa7ed),
    (0, 700, MarkdownStyle::Plain, 0x4f5b0e4263528ac9),
    (0, 700, MarkdownStyle::Ansi, 0x19d352d61ee314bd),
    (0, 5000, MarkdownStyle::Plain, 0x7f1e34de6c7bcc89),
    (0, 5000, MarkdownStyle::Ansi, 0xc2918f5ab1c3707d),
    (0, 60000, MarkdownStyle::Plain, 0xb7a4fd803497b317),
    (0, 60000, MarkdownStyle::Ansi, 0xa3944210c29e8d3b),
    (1, 40, MarkdownStyle::Plain, 0xa03f457dea58579d),
    (1, 40, MarkdownStyle::Ansi, 0x2f7cb2a0ed3da749),
    (1, 700, MarkdownStyle::Plain, 0xc335a25d3e35a349),
    (1, 700, MarkdownStyle::Ansi, 0xd3aca22c9ac4bd7d),
    (1, 5000, MarkdownStyle::Plain, 0x9e3ddf2f7549e6cd),
    (1, 5000, MarkdownStyle::Ansi, 0xe8987b85a9c3d489),
    (1, 60000, MarkdownStyle::Plain, 0x77a4d8c7fd876c1d),
    (1, 60000, MarkdownStyle::Ansi, 0xb0676b68dd085ec9),
    (2, 40, MarkdownStyle::Plain, 0x4508b7cf0bdd0f1d),
    (2, 40, MarkdownStyle::Ansi, 0x0b3a9892eaa6de93),
    (2, 700, MarkdownStyle::Plain, 0x907b0e8b4dd941bf),
    (2, 700, MarkdownStyle::Ansi, 0xe4de100b2bb05f4d),
    (2, 5000, MarkdownStyle::Plain, 0xfbce3a4d4718ee4d),
    (2, 5000, MarkdownStyle::Ansi, 0x230e600f0b312fd3),
    (2, 60000, MarkdownStyle::Plain, 0x681a9d11585121bf),
    (2, 60000, MarkdownStyle::Ansi, 0x91b93b88d61e7d1d),
    (3, 40, MarkdownStyle::Plain, 0x21b5e5bbeecbed7f),
    (3, 40, MarkdownStyle::Ansi, 0x6d87721519a2bc47),
    (3, 700, MarkdownStyle::Plain, 0x28a1ef6aa5c5aedd),
    (3, 700, MarkdownStyle::Ansi, 0x42c165f3991b7a4b),
    (3, 5000, MarkdownStyle::Plain, 0x9811ae51c351755f),
    (3, 5000, MarkdownStyle::Ansi, 0xe521f52fe17e7d4f),
    (3, 60000, MarkdownStyle::Plain, 0x1afd212d2260b4ff),
    (3, 60000, MarkdownStyle::Ansi, 0xd8b103d6f995e5d7),
    (4, 40, MarkdownStyle::Plain, 0x4422672d37fc9ffb),
    (4, 40, MarkdownStyle::Ansi, 0xfff1e0701f3b5ae3),
    (4, 700, MarkdownStyle::Plain, 0x9f76b5be0b568fb6),
    (4, 700, MarkdownStyle::Ansi, 0x177470ead6668ae0),
    (4, 5000, MarkdownStyle::Plain, 0xb4c66e15573ab09b),
    (4, 5000, MarkdownStyle::Ansi, 0x401848eaafa30143),
    (4, 60000, MarkdownStyle::Plain, 0x37221f6d5347d8dd),
    (4, 60000, MarkdownStyle::Ansi, 0x279aeb5df397d149),
    (5, 40, MarkdownStyle::Plain, 0xa0fd44d01ddf3615),
    (5, 40, MarkdownStyle::Ansi, 0xe9bcd008b8a62ac9),
    (5, 700, MarkdownStyle::Plain, 0x1a77e9d4ceecdfdd),
    (5, 700, MarkdownStyle::Ansi, 0xcb8e1c0a35f80d89),
    (5, 5000, MarkdownStyle::Plain, 0xc1277ac36cbbc3a1),
    (5, 5000, MarkdownStyle::Ansi, 0x46b04bbb93771b89),
    (5, 60000, MarkdownStyle::Plain, 0xea65b7184c2ad921),
    (5, 60000, MarkdownStyle::Ansi, 0xec0b0c87d3d88569),
    (6, 40, MarkdownStyle::Plain, 0x984b9055c5235019),
    (6, 40, MarkdownStyle::Ansi, 0x4e901a52d8a52a05),
    (6, 700, MarkdownStyle::Plain, 0xade33612fb1c492d),
    (6, 700, MarkdownStyle::Ansi, 0x56699c38104729f1),
    (6, 5000, MarkdownStyle::Plain, 0x78c0a337b82cc839),
    (6, 5000, MarkdownStyle::Ansi, 0x9b864ff7784286e5),
    (6, 60000, MarkdownStyle::Plain, 0x22a6b55ceef67535),
    (6, 60000, MarkdownStyle::Ansi, 0xab0ee37789ec8559),
    (7, 40, MarkdownStyle::Plain, 0xeee14fa96969b8bf),
    (7, 40, MarkdownStyle::Ansi, 0xa83def6b64ad098b),
    (7, 700, MarkdownStyle::Plain, 0x38ef4eb2986054d4),
    (7, 700, MarkdownStyle::Ansi, 0x7bc3599d4ce9ea10),
    (7, 5000, MarkdownStyle::Plain, 0x681739b970905d57),
    (7, 5000, MarkdownStyle::Ansi, 0x91a99c13b9d9cd5b),
    (7, 60000, MarkdownStyle::Plain, 0xec95cd1c460ff952),
    (7, 60000, MarkdownStyle::Ansi, 0x0e1279a652d8cf82),
    (8, 40, MarkdownStyle::Plain, 0xe559d6d703af432d),
    (8, 40, MarkdownStyle::Ansi, 0x935ed06e376f64a9),
    (8, 700, MarkdownStyle::Plain, 0x9c094da08771464d),
    (8, 700, MarkdownStyle::Ansi, 0x94481397dc6c77c9),
    (8, 5000, MarkdownStyle::Plain, 0x7901ebfb074f890d),
    (8, 5000, MarkdownStyle::Ansi, 0xce4fef0de3c73235),
    (8, 60000, MarkdownStyle::Plain, 0x42ddb9a383599ccd),
    (8, 60000, MarkdownStyle::Ansi, 0x519644a78e01c175),
];

fn repeat_to(kind: &str, len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        s.push_str(kind);
    }
    s
}

/// Feeds `text` in deltas of about `piece` bytes (on char boundaries).
fn render(style: MarkdownStyle, text: &str, piece: usize) -> (String, MarkdownStream) {
    let mut md = MarkdownStream::new(style);
    let mut out = String::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = start.saturating_add(piece).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push_str(&md.push(&text[start..end]));
        assert!(md.held() <= MAX_HELD, "held {} bytes", md.held());
        start = end;
    }
    out.push_str(&md.finish());
    (out, md)
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn lines_under_the_cap_render_as_before_whatever_the_deltas() {
    assert_eq!(GOLDEN.len(), KINDS.len() * 8);
    for &(kind, len, style, hash) in GOLDEN {
        let line = repeat_to(KINDS[kind], len);
        assert!(line.len() < MAX_HELD);
        let text = format!("{line}\nafter\n```\n{line}\r\n```\n{line}");
        for piece in [usize::MAX, 4096, 61] {
            let (out, _) = render(style, &text, piece);
            assert_eq!(
                fnv(&out),
                hash,
                "kind {kind}, {len} bytes, {style:?}, deltas of {piece}"
            );
        }
    }
}

#[test]
fn a_long_prose_line_streams_with_bounded_memory_and_linear_work() {
    let line = repeat_to("lorem ipsum dolor sit amet ", 2 << 20);
    for piece in [16, 1000, usize::MAX] {
        let (out, md) = render(MarkdownStyle::Plain, &line, piece);
        assert_eq!(out, format!("{}\n", line.trim_end()), "deltas of {piece}");
        // Each byte is searched once when it arrives, once more when a cut carries
        // it over, and rendered once at its cut.
        assert!(md.work <= 4 * line.len(), "{} bytes of work", md.work);
    }
}

#[test]
fn each_delta_is_searched_once_until_the_line_ends() {
    let mut md = MarkdownStream::new(MarkdownStyle::Plain);
    md.push("word");
    for _ in 0..1000 {
        let before = md.work;
        assert_eq!(md.push(" word"), " word");
        // The delta is looked at twice (line ends, markup), not the line so far.
        assert!(
            md.work - before <= 2 * " word".len(),
            "{}",
            md.work - before
        );
    }
    assert!(md.held() < MAX_HELD);
}

#[test]
fn a_long_marked_up_line_renders_as_if_whole_when_cuts_fall_between_words() {
    let unit = "lorem *ipsum* dolor `sit` **amet** ";
    let line = format!("see `code` and {}", repeat_to(unit, 1 << 20));
    let plain_unit = "lorem ipsum dolor sit amet ";
    let expected = format!(
        "see code and {}\n",
        repeat_to(unit, 1 << 20)
            .replace(unit, plain_unit)
            .trim_end()
    );
    for piece in [16, 5000, usize::MAX] {
        let (out, md) = render(MarkdownStyle::Plain, &line, piece);
        assert_eq!(out, expected, "deltas of {piece}");
        assert!(md.work <= 4 * line.len(), "{} bytes of work", md.work);
    }
    let (ansi, _) = render(MarkdownStyle::Ansi, &line, 777);
    assert!(ansi.starts_with("see \x1b[36mcode\x1b[0m and lorem \x1b[3mipsum\x1b[0m"));
    assert!(
        ansi.ends_with("\x1b[1mamet\x1b[0m\n"),
        "{}",
        &ansi[ansi.len() - 40..]
    );
}

#[test]
fn cuts_never_drop_or_repeat_a_byte() {
    // Markup spread over cuts, words longer than the cap, whitespace runs.
    let mut line = String::from("start **bold ");
    line.push_str(&"x".repeat(MAX_HELD + 10));
    line.push_str("** then _a ");
    line.push_str(&" ".repeat(MAX_CARRY + 100));
    line.push_str(&repeat_to("é*z ", 3 * MAX_HELD));
    line.push_str("end");
    for piece in [13, 4096, usize::MAX] {
        let (out, _) = render(MarkdownStyle::Plain, &line, piece);
        let strip = |s: &str| s.replace(['*', '_'], "");
        assert_eq!(
            strip(&out),
            format!("{}\n", strip(&line)),
            "deltas of {piece}"
        );
    }
}

#[test]
fn long_code_lines_stay_verbatim_and_do_not_close_the_fence() {
    let code = repeat_to("let x = a * b_c; ", 3 * MAX_HELD);
    let text = format!(
        "```\n{code}\r\n```{}\nstill code\n```\n*done*\n",
        " ".repeat(MAX_HELD)
    );
    let (plain, _) = render(MarkdownStyle::Plain, &text, 999);
    assert_eq!(
        plain,
        format!(
            "    {code}\n    ```{}\n    still code\ndone\n",
            " ".repeat(MAX_HELD)
        )
    );
    let (ansi, _) = render(MarkdownStyle::Ansi, &text, 999);
    assert!(ansi.contains(&format!("\n{code}\n```")));
    // An indented code line and a would-be fence opener print as they are.
    for line in [format!("    {code}"), format!("```{code}")] {
        let (out, _) = render(MarkdownStyle::Plain, &format!("{line}\n*a*\n"), 500);
        assert_eq!(out, format!("{line}\na\n"));
    }
}

#[test]
fn a_cut_crlf_line_end_is_not_printed() {
    let line = "y".repeat(MAX_HELD + 5);
    let text = format!("```\n{line}\r\n```\n");
    let mut md = MarkdownStream::new(MarkdownStyle::Ansi);
    let mut out = md.push(&format!("```\n{line}\r"));
    assert!(md.mid_line());
    out.push_str(&md.push("\n```\n"));
    assert_eq!(
        out,
        format!("\x1b[2m```\x1b[0m\n{line}\n\x1b[2m```\x1b[0m\n")
    );
    assert_eq!(render(MarkdownStyle::Ansi, &text, 3).0, out);
}
