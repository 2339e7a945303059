//! What `/undo`'s pictures of the project cost on a large tree: 100,000 files of about
//! 1 KB in 1,000 folders (plus an ignored `target/` of 10,000 more that must cost
//! nothing). Times, median of several runs with a warm page cache:
//! the session's first picture (every file read, hashed and copied into the store), a
//! later picture with nothing changed (one `stat` per file), the end of a turn that
//! changed 100 files, and `/undo` of that turn. Run: `cargo bench --bench undo`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use harness9::protocol::UndoOutcome;
use harness9::undo::Snapshots;

const FILES: usize = 100_000;
const PER_DIR: usize = 100;
const RUNS: usize = 5;

fn generate(root: &Path) -> u64 {
    let line = "let value = compute(input); // some ordinary source text\n";
    let body = line.repeat(1024 / line.len());
    let mut bytes = 0;
    for i in 0..FILES {
        let dir = root.join(format!("src/m{:04}", i / PER_DIR));
        if i % PER_DIR == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let text = format!("// file {i}\n{body}");
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("f{i:06}.rs")), text).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    for i in 0..FILES / 10 {
        let dir = root.join(format!("target/d{:03}", i / PER_DIR));
        if i % PER_DIR == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("o{i:06}")), "object").unwrap();
    }
    bytes
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let bytes = generate(&project);
    println!(
        "tree: {FILES} files, {} MB (+{} ignored)",
        bytes / 1_000_000,
        FILES / 10
    );
    let (mut first, mut again, mut end, mut undo) = (vec![], vec![], vec![], vec![]);
    for run in 0..RUNS {
        let home = tmp.path().join(format!("home{run}"));
        let s = Snapshots::new(&project, &home.join("snapshots"));
        let t = Instant::now();
        s.before_change().unwrap();
        first.push(t.elapsed());
        assert_eq!(s.end_turn(1).unwrap(), 0);
        let t = Instant::now();
        s.before_change().unwrap();
        again.push(t.elapsed());
        for i in 0..100 {
            let path = project.join(format!("src/m{:04}/f{:06}.rs", i, i * PER_DIR));
            std::fs::write(path, format!("changed in run {run}\n")).unwrap();
        }
        let t = Instant::now();
        assert_eq!(s.end_turn(1).unwrap(), 100);
        end.push(t.elapsed());
        let t = Instant::now();
        assert!(matches!(s.undo().unwrap(), UndoOutcome::Restored { .. }));
        undo.push(t.elapsed());
    }
    println!(
        "first picture (read, hash, copy all):  {}",
        ms(median(first))
    );
    println!(
        "picture with nothing changed (stat):   {}",
        ms(median(again))
    );
    println!("end of a turn that changed 100 files:  {}", ms(median(end)));
    println!(
        "/undo of that turn:                    {}",
        ms(median(undo))
    );
}
