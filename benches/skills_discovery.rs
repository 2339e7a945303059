//! Skill discovery + index cost for 100, 1,000 and 10,000 generated skills.
//!
//! Each skill is `skills/cat-NN/skill-NNNNN/SKILL.md` with a short frontmatter and a
//! body of about 4 KB. For each size it times `Catalog::discover` + `Catalog::index`
//! (median of several runs, warm page cache) and reports the bytes read from `SKILL.md`
//! files, which should be the frontmatter only. Run: `cargo bench --bench skills_discovery`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use harness9::skills::frontmatter::{parse, read_head};
use harness9::skills::{Catalog, DEFAULT_INDEX_BUDGET, DiscoveryOptions};

const RUNS: usize = 7;
const BODY_BYTES: usize = 4 * 1024;

fn generate(root: &Path, count: usize) -> std::io::Result<u64> {
    let paragraph = "Run the checks before and after the change, keep each step small, \
                     and look at the diff before you finish. Costs $5.00; awk '{print $1}'.\n";
    let body: String = paragraph.repeat(BODY_BYTES / paragraph.len() + 1);
    let mut total = 0u64;
    for i in 0..count {
        let dir = root
            .join(format!("cat-{:02}", i / 100))
            .join(format!("skill-{i:05}"));
        std::fs::create_dir_all(&dir)?;
        let text = format!(
            "---\nname: skill-{i:05}\ndescription: Use when working on area {i} of the \
             generated project, following its conventions\nallowed-tools: Read Grep\n---\n\n\
             # Skill {i}\n\n{body}"
        );
        total += text.len() as u64;
        std::fs::write(dir.join("SKILL.md"), text)?;
    }
    Ok(total)
}

/// Where the time goes for the largest size: reading heads alone, parsing alone, index.
fn phases(catalog: &Catalog) -> std::io::Result<()> {
    let paths: Vec<_> = catalog.skills().iter().map(|s| s.path.clone()).collect();
    let start = Instant::now();
    let mut heads = Vec::with_capacity(paths.len());
    let mut bytes = 0u64;
    for p in &paths {
        let mut f = std::fs::File::open(p)?;
        if let Ok(h) = read_head(&mut f, &mut bytes) {
            heads.push(h.yaml);
        }
    }
    let read = start.elapsed();
    let start = Instant::now();
    let parsed = heads.iter().filter(|y| parse(y).0.name.is_some()).count();
    let parse_time = start.elapsed();
    let start = Instant::now();
    let index = catalog.index(DEFAULT_INDEX_BUDGET);
    let index_time = start.elapsed();
    eprintln!(
        "phases for {} skills: open+read heads {:.2} ms, parse {:.2} ms ({parsed} ok), index {:.2} ms ({} chars)",
        paths.len(),
        read.as_secs_f64() * 1e3,
        parse_time.as_secs_f64() * 1e3,
        index_time.as_secs_f64() * 1e3,
        index.used_chars
    );
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> std::io::Result<()> {
    println!(
        "{:>7}  {:>11}  {:>12}  {:>12}  {:>14}  {:>10}  {:>11}",
        "skills",
        "median ms",
        "µs / skill",
        "bytes read",
        "bytes / skill",
        "file bytes",
        "index chars"
    );
    for count in [100usize, 1_000, 10_000] {
        let tmp = tempfile::tempdir()?;
        let work = tmp.path().join("work");
        let file_bytes = generate(&work.join("skills"), count)?;
        let options = DiscoveryOptions {
            flag_dirs: Vec::new(),
            workdir: work.clone(),
            harness9_home: tmp.path().join("h9"),
            user_home: None,
            remote_dirs: Vec::new(),
        };
        let mut times = Vec::with_capacity(RUNS);
        let mut last = None;
        for _ in 0..RUNS {
            let start = Instant::now();
            let catalog = Catalog::discover(&options);
            let index = catalog.index(DEFAULT_INDEX_BUDGET);
            times.push(start.elapsed());
            last = Some((catalog, index));
        }
        let Some((catalog, index)) = last else {
            continue;
        };
        if count == 10_000 {
            phases(&catalog)?;
        }
        assert_eq!(
            catalog.skills().len(),
            count,
            "every generated skill is found"
        );
        let stats = catalog.stats();
        let t = median(times);
        println!(
            "{:>7}  {:>11.2}  {:>12.2}  {:>12}  {:>14}  {:>10}  {:>11}",
            count,
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() * 1e6 / count as f64,
            stats.bytes_read,
            stats.bytes_read / count as u64,
            file_bytes,
            index.used_chars
        );
    }
    Ok(())
}
