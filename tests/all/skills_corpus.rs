//! Compatibility with real-world skills: discovers the 247 `SKILL.md` files of
//! `../shared/corpus/skills` (copied unchanged from public repositories) and checks each
//! name and description against what PyYAML reads (`expected.jsonl`) and each body's
//! length against `body_chars`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use harness9::skills::{Catalog, DiscoveryOptions, Skill, template};

use crate::support::corpus_dir;

struct Expected {
    path: String,
    name: String,
    description: String,
    body_chars: usize,
}

fn expected(dir: &Path) -> Vec<Expected> {
    let text = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Expected {
                path: v["path"].as_str().unwrap().to_string(),
                name: v["name"].as_str().unwrap().to_string(),
                description: v["description"].as_str().unwrap().to_string(),
                body_chars: usize::try_from(v["body_chars"].as_u64().unwrap()).unwrap(),
            }
        })
        .collect()
}

/// The corpus folder and what discovery finds there.
fn corpus_catalog() -> (std::path::PathBuf, Catalog) {
    let dir = corpus_dir();
    let catalog = discover(&dir);
    (dir, catalog)
}

fn discover(dir: &Path) -> Catalog {
    let empty = tempfile::tempdir().unwrap();
    Catalog::discover(&DiscoveryOptions {
        flag_dirs: vec![dir.to_path_buf()],
        workdir: empty.path().to_path_buf(),
        project_root: std::path::PathBuf::new(),
        harness9_home: empty.path().join("home"),
        user_home: None,
        remote_dirs: Vec::new(),
        plugins: Vec::new(),
    })
}

fn by_path(catalog: &Catalog) -> HashMap<PathBuf, &Skill> {
    catalog
        .skills()
        .iter()
        .chain(catalog.shadowed())
        .map(|s| (s.path.clone(), s))
        .collect()
}

#[test]
#[ignore = "needs the skills corpus (../shared/corpus/skills or $HARNESS9_SKILLS_CORPUS); .ci/run runs it with --ignored"]
fn every_corpus_skill_is_discovered_with_its_name_and_description() {
    let dir = corpus_dir();
    let expected = expected(&dir);
    assert_eq!(expected.len(), 247);
    let catalog = discover(&dir);
    assert!(
        catalog.invalid().is_empty(),
        "invalid: {:?}",
        catalog.invalid()
    );
    let found = by_path(&catalog);
    assert_eq!(found.len(), 247, "skills + shadowed");
    let mut mismatches = Vec::new();
    for e in &expected {
        let Some(skill) = found.get(&dir.join(&e.path)) else {
            mismatches.push(format!("{}: not discovered", e.path));
            continue;
        };
        if skill.name != e.name {
            mismatches.push(format!("{}: name {:?} != {:?}", e.path, skill.name, e.name));
        }
        if skill.description != e.description {
            mismatches.push(format!(
                "{}: description\n  got      {:?}\n  expected {:?}",
                e.path, skill.description, e.description
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    // Every problem is a shadowing (the corpus repeats four names), nothing else.
    for w in catalog.warnings() {
        assert!(
            w.to_string().contains("is shadowed by"),
            "unexpected warning: {w}"
        );
    }
    assert_eq!(catalog.shadowed().len(), catalog.warnings().len());
}

#[test]
#[ignore = "needs the skills corpus (../shared/corpus/skills or $HARNESS9_SKILLS_CORPUS); .ci/run runs it with --ignored"]
fn every_corpus_body_has_the_expected_length() {
    let (dir, catalog) = corpus_catalog();
    let found = by_path(&catalog);
    let mut wrong = Vec::new();
    for e in expected(&dir) {
        let skill = found[&dir.join(&e.path)];
        let body = skill.load_body().unwrap();
        let n = body.chars().count();
        if n != e.body_chars {
            wrong.push(format!(
                "{}: {} chars, expected {}",
                e.path, n, e.body_chars
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
#[ignore = "needs the skills corpus (../shared/corpus/skills or $HARNESS9_SKILLS_CORPUS); .ci/run runs it with --ignored"]
fn discovery_reads_only_frontmatter() {
    let (dir, catalog) = corpus_catalog();
    let stats = catalog.stats();
    assert_eq!(stats.files_read, 247);
    let frontmatter_bytes: u64 = expected(&dir)
        .iter()
        .map(|e| {
            let text = std::fs::read_to_string(dir.join(&e.path)).unwrap();
            let body_start = text[3..].find("\n---").map_or(text.len(), |i| i + 8);
            body_start as u64
        })
        .sum();
    let total_bytes: u64 = expected(&dir)
        .iter()
        .map(|e| std::fs::metadata(dir.join(&e.path)).unwrap().len())
        .sum();
    // Reads come in chunks, so a little of each body may be read, never most of it.
    assert!(
        stats.bytes_read < frontmatter_bytes + 247 * 1024 && stats.bytes_read < total_bytes / 4,
        "read {} bytes; frontmatter {frontmatter_bytes}, files {total_bytes}",
        stats.bytes_read
    );
}

#[test]
#[ignore = "needs the skills corpus (../shared/corpus/skills or $HARNESS9_SKILLS_CORPUS); .ci/run runs it with --ignored"]
fn corpus_index_fits_and_is_deterministic() {
    let (dir, catalog) = corpus_catalog();
    let a = catalog.index(8_000);
    let b = discover(&dir).index(8_000);
    assert_eq!(a, b);
    assert!(a.used_chars <= 8_000);
    assert!(a.dropped.is_empty(), "names alone fit in 8,000 characters");
    let text = a.text.unwrap();
    assert!(text.starts_with("## Available Skills\n"));
    for s in catalog.skills().iter().filter(|s| s.model_invocable()) {
        assert!(
            text.contains(&format!("\n- {}", s.name)),
            "{} missing",
            s.name
        );
    }
}

#[test]
#[ignore = "needs the skills corpus (../shared/corpus/skills or $HARNESS9_SKILLS_CORPUS); .ci/run runs it with --ignored"]
fn corpus_bodies_with_dollar_signs_survive_expansion_without_arguments() {
    let (_, catalog) = corpus_catalog();
    let mut checked = 0;
    for skill in catalog.skills() {
        let body = skill.load_body().unwrap();
        let has_placeholder = ["$ARGUMENTS", "${", "{baseDir}", "\\$"]
            .iter()
            .any(|p| body.contains(p));
        if body.contains('$') && !has_placeholder {
            assert_eq!(
                template::expand(&body, "", &skill.dir),
                body,
                "{}",
                skill.path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} bodies with `$` checked");
}
