//! Architecture rules that code review alone would let slip: the core never imports
//! terminal crates, and every module opens with a `//!` paragraph.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

const CORE: &[&str] = &[
    "src/agent",
    "src/exec",
    "src/llm",
    "src/tools",
    "src/skills",
    "src/prompt.rs",
    "src/config",
    "src/protocol.rs",
    "src/input.rs",
    "src/session.rs",
    "src/truncate.rs",
];
const TERMINAL_CRATES: &[&str] = &["ratatui", "crossterm", "rustyline"];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

#[test]
fn the_core_never_imports_terminal_crates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for part in CORE {
        rust_files(&root.join(part), &mut files);
    }
    assert!(
        files.len() > 10,
        "expected the core's files, found {files:?}"
    );
    let mut offenders = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for krate in TERMINAL_CRATES {
            if text.contains(&format!("{krate}::")) || text.contains(&format!("use {krate}")) {
                offenders.push(format!("{} uses {krate}", file.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "terminal crates in the core:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn every_module_opens_with_a_doc_paragraph() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap()
                .trim_start()
                .starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a //! paragraph:\n{}",
        missing.join("\n")
    );
}
