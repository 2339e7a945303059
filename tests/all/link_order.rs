//! The linker script fragment build.rs gives optimized Linux builds
//! (`link/startup-order.ld`) only says where code goes: one output section of input
//! sections named by patterns, inserted before `.text`. A fragment that discarded a
//! section, defined or provided a symbol, or placed data would change what the binary
//! does; this test refuses anything but the generated shape.

use std::path::Path;

/// The characters a mangled Rust symbol and a `*` wildcard are made of.
fn plain_pattern(p: &str) -> bool {
    !p.is_empty()
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '*'))
}

#[test]
fn the_startup_order_fragment_only_places_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/startup-order.ld");
    let text = std::fs::read_to_string(&path).expect("link/startup-order.ld is readable");
    let body = text
        .strip_prefix("/*")
        .and_then(|rest| rest.split_once("*/"))
        .map(|(comment, body)| {
            assert!(!comment.contains("/*"), "one comment only, at the top");
            body
        })
        .expect("the fragment starts with its comment");
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    let head = ["SECTIONS", "{", "  .text.hot_startup :", "  {"];
    let tail = ["  }", "}", "INSERT BEFORE .text;"];
    assert!(
        lines.len() > head.len() + tail.len() + 100,
        "{} lines",
        lines.len()
    );
    assert_eq!(lines[..head.len()], head);
    assert_eq!(lines[lines.len() - tail.len()..], tail);
    for line in &lines[head.len()..lines.len() - tail.len()] {
        let inner = line
            .strip_prefix("    *(")
            .and_then(|l| l.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not an input section line: {line}"));
        let (plain, cold) = inner
            .split_once(' ')
            .unwrap_or_else(|| panic!("two section names: {line}"));
        let name = plain
            .strip_prefix(".text.")
            .unwrap_or_else(|| panic!("a code section: {line}"));
        assert_eq!(cold, format!(".text.unlikely.{name}"), "{line}");
        assert!(plain_pattern(name), "{line}");
    }
}
