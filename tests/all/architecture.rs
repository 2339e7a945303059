//! Architecture rules that code review alone would let slip: the house's floors (every
//! top-level module of `src/` on a layer, and an import may only run down), no circle
//! between top-level modules, the core never importing terminal crates, and every module
//! opening with a `//!` paragraph.
//!
//! The layering is read from the code itself: every `src/**/*.rs` file is parsed with
//! `syn`, test code (`#[cfg(test)]` items and test files) is left out, and every path
//! that names `crate::MODULE` (in `use` lines, types, expressions and macro arguments) or
//! reaches a top-level module through `super::` is an arrow from the file's top-level
//! module to that one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The floors of the house, from the ground up. A module may import modules of lower
/// floors only; a module of `src/` that is on no floor fails the test (put it on one).
const FLOORS: &[(&str, &[&str])] = &[
    (
        "leaves: know nothing of harness9",
        &[
            "safe_text",
            "truncate",
            "text_table",
            "paths",
            "plain_file",
            "nofollow",
            "private_files",
            "redact",
            "project_root",
            "project_walk",
            "prompt",
            "http",
            "subcommand",
            "capped_line",
        ],
    ),
    (
        "the contract, and output sinks",
        &["protocol", "sink", "images"],
    ),
    ("rules, pictures, prices", &["permissions", "undo", "cost"]),
    ("the sandbox", &["sandbox"]),
    ("processes", &["exec"]),
    ("the model client and the skill domain", &["llm", "skills"]),
    ("agent definitions", &["agents"]),
    ("saved sessions and signals", &["sessions", "signals"]),
    ("artifacts", &["artifacts"]),
    ("tools and hooks", &["tools", "hooks"]),
    (
        "MCP servers, mentions and instruction files",
        &["mcp", "mentions", "instructions"],
    ),
    ("plugins", &["plugins"]),
    ("configuration and the input router", &["config", "input"]),
    ("the agent", &["agent"]),
    ("session assembly", &["session"]),
    ("frontends", &["print", "tui", "repl", "acp"]),
    ("the command line", &["cli"]),
    ("start-up", &["startup"]),
    ("the subcommands", &["commands"]),
    ("a session run", &["launch"]),
];

/// Imports allowed within one floor, named one by one: every other arrow between two
/// modules of the same floor fails (the REPL prints through print mode's renderer).
const SAME_FLOOR: &[(&str, &str)] = &[("sink", "safe_text"), ("repl", "print")];

const TERMINAL_CRATES: &[&str] = &["ratatui", "crossterm", "rustyline"];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Whether a file holds only test code (a `tests.rs`, `*_tests.rs`, `tests_*.rs`, a
/// `test_support.rs`, or anything in a `tests/` folder: each is declared under
/// `#[cfg(test)]`).
fn test_file(rel: &Path) -> bool {
    let name = rel.file_name().unwrap().to_string_lossy();
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name.starts_with("tests_")
        || name == "test_support.rs"
        || rel.components().any(|c| c.as_os_str() == "tests")
}

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`, `main.rs` and
/// the binaries, which are not modules of the library).
fn top_module(rel: &Path) -> Option<String> {
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (!matches!(name.as_str(), "lib" | "main" | "bin")).then_some(name)
}

/// How deep a file's module sits below its top-level module (`src/x.rs` and
/// `src/x/mod.rs` are 0, `src/x/y.rs` is 1), for `super::`.
fn depth(rel: &Path) -> usize {
    let parts = rel.components().count();
    let is_mod = rel.file_name().is_some_and(|n| n == "mod.rs");
    parts - 1 - usize::from(is_mod)
}

/// Collects the top-level modules a file names.
struct Arrows<'a> {
    depth: usize,
    modules: &'a BTreeSet<String>,
    found: BTreeSet<String>,
}

impl Arrows<'_> {
    fn segments(&mut self, segments: &[String]) {
        match segments.first().map(String::as_str) {
            Some("crate") => {
                if let Some(m) = segments.get(1).filter(|m| self.modules.contains(*m)) {
                    self.found.insert(m.clone());
                }
            }
            Some("super") => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                // From the top-level module's own file, `super` is the crate root.
                if ups > self.depth
                    && let Some(m) = segments.get(ups).filter(|m| self.modules.contains(*m))
                {
                    self.found.insert(m.clone());
                }
            }
            _ => {}
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.segments(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.segments(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.segments(&prefix.clone()),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().split_whitespace().next() == Some("test"))
    })
}

impl<'ast> Visit<'ast> for Arrows<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.segments(&segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Macro arguments are tokens: `crate :: name` and `super :: … :: name` in them.
        let tokens: Vec<String> = mac.tokens.clone().into_iter().flat_map(flatten).collect();
        for (i, t) in tokens.iter().enumerate() {
            if t == "crate" || (t == "super" && (i == 0 || tokens[i - 1] != ":")) {
                let mut segments = vec![t.clone()];
                let mut j = i + 1;
                while tokens.get(j).is_some_and(|c| c == ":")
                    && tokens.get(j + 1).is_some_and(|c| c == ":")
                {
                    let Some(next) = tokens.get(j + 2) else { break };
                    segments.push(next.clone());
                    j += 3;
                }
                self.segments(&segments);
            }
        }
        syn::visit::visit_macro(self, mac);
    }
}

fn flatten(tree: proc_macro2::TokenTree) -> Vec<String> {
    match tree {
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().flat_map(flatten).collect(),
        proc_macro2::TokenTree::Ident(i) => vec![i.to_string()],
        proc_macro2::TokenTree::Punct(p) => vec![p.as_char().to_string()],
        proc_macro2::TokenTree::Literal(_) => Vec::new(),
    }
}

/// Every arrow between top-level modules of `src/`, with the files that make it.
fn arrows() -> BTreeMap<(String, String), BTreeSet<String>> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap())
        .filter(|rel| !test_file(rel))
        .filter_map(top_module)
        .collect();
    let mut out: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap();
        let Some(from) = top_module(rel) else {
            continue;
        };
        if test_file(rel) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let parsed = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
        let mut visitor = Arrows {
            depth: depth(rel),
            modules: &modules,
            found: BTreeSet::new(),
        };
        visitor.visit_file(&parsed);
        for to in visitor.found {
            if to != from {
                out.entry((from.clone(), to))
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    out
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, ms)| ms.contains(&module))
}

/// The arrows that break the floors: from a module to one of a higher floor, or to one
/// of its own floor that `SAME_FLOOR` does not name; and modules on no floor.
fn broken(arrows: &BTreeMap<(String, String), BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    let mut on_no_floor = BTreeSet::new();
    for ((from, to), files) in arrows {
        let (Some(a), Some(b)) = (floor_of(from), floor_of(to)) else {
            for m in [from, to] {
                if floor_of(m).is_none() {
                    on_no_floor.insert(m.clone());
                }
            }
            continue;
        };
        let allowed = b < a || (a == b && SAME_FLOOR.contains(&(from.as_str(), to.as_str())));
        if !allowed {
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            out.push(format!(
                "{from} ({}) -> {to} ({}): {}",
                FLOORS[a].0,
                FLOORS[b].0,
                files.join(", ")
            ));
        }
    }
    for m in on_no_floor {
        out.push(format!("src/{m} is on no floor: add it to FLOORS"));
    }
    out
}

#[test]
fn imports_only_run_down_the_floors() {
    let arrows = arrows();
    assert!(
        arrows.len() > 100,
        "expected the house's arrows, found {}",
        arrows.len()
    );
    let broken = broken(&arrows);
    assert!(
        broken.is_empty(),
        "imports that run up or across a floor:\n{}",
        broken.join("\n")
    );
    // Every module of src/ is on a floor, and every floor's module exists.
    let root = src();
    for (_, modules) in FLOORS {
        for m in *modules {
            assert!(
                root.join(format!("{m}.rs")).exists() || root.join(m).is_dir(),
                "FLOORS names src/{m}, which does not exist"
            );
        }
    }
}

#[test]
fn the_floors_check_sees_an_upward_import() {
    // The check itself, on a made-up arrow: protocol (the floor) naming the agent.
    let mut arrows = BTreeMap::new();
    arrows.insert(
        ("protocol".to_string(), "agent".to_string()),
        BTreeSet::from(["protocol.rs".to_string()]),
    );
    arrows.insert(
        ("agent".to_string(), "protocol".to_string()),
        BTreeSet::from(["agent/turn.rs".to_string()]),
    );
    arrows.insert(
        ("tui".to_string(), "repl".to_string()),
        BTreeSet::from(["tui/mod.rs".to_string()]),
    );
    let broken = broken(&arrows);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(
        broken[0].starts_with("protocol (the contract"),
        "{broken:?}"
    );
    assert!(
        broken[1].starts_with("tui (frontends) -> repl"),
        "{broken:?}"
    );
}

#[test]
fn the_protocol_imports_only_leaves() {
    let leaves = FLOORS[0].1;
    let offenders: Vec<String> = arrows()
        .into_iter()
        .filter(|((from, to), _)| from == "protocol" && !leaves.contains(&to.as_str()))
        .map(|((_, to), files)| format!("protocol -> {to}: {files:?}"))
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}

#[test]
fn the_core_never_imports_terminal_crates() {
    // The core: every module on a floor below the frontends.
    let frontends = FLOORS
        .iter()
        .position(|(_, ms)| ms.contains(&"tui"))
        .unwrap();
    let root = src();
    let mut files = Vec::new();
    for (_, modules) in &FLOORS[..frontends] {
        for m in *modules {
            rust_files(&root.join(format!("{m}.rs")), &mut files);
            rust_files(&root.join(m), &mut files);
        }
    }
    assert!(
        files.len() > 100,
        "expected the core's files, found {}",
        files.len()
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
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
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
