//! Skill discovery + index cost for 100, 1,000 and 10,000 generated skills, without the
//! discovery cache, with a cold cache (none on disk: every file read, the cache written)
//! and with a warm one (one `stat` per `SKILL.md`).
//!
//! Each skill is `skills/cat-NN/skill-NNNNN/SKILL.md` with a short frontmatter and a
//! body of about 4 KB. For each size it times `Catalog::discover` (or
//! `discover_uncached`) + `Catalog::index` (median of several runs, warm page cache) and
//! reports the bytes read from `SKILL.md` files: the frontmatter only, and none at all
//! with a warm cache. Files changed less than 2 s before a run are never cached, so the
//! bench waits that long after generating. Run: `cargo bench --bench skills_discovery`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use harness9::skills::frontmatter::{parse, read_head};
use harness9::skills::{Catalog, DEFAULT_INDEX_BUDGET, DiscoveryOptions};

const RUNS: usize = 7;
const BODY_BYTES: usize = 4 * 1024;
/// Longer than the cache's racy window (2 s).
const SETTLE: Duration = Duration::from_millis(2_100);

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

/// Where the time goes for the largest size: reading heads alone, parsing alone, a
/// `stat` of every file alone, index.
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
    let stats = paths
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok())
        .count();
    let stat_time = start.elapsed();
    let start = Instant::now();
    let index = catalog.index(DEFAULT_INDEX_BUDGET);
    let index_time = start.elapsed();
    eprintln!(
        "phases for {} skills: open+read heads {:.2} ms, parse {:.2} ms ({parsed} ok), \
         stat {:.2} ms ({stats} ok), index {:.2} ms ({} chars)",
        paths.len(),
        read.as_secs_f64() * 1e3,
        parse_time.as_secs_f64() * 1e3,
        stat_time.as_secs_f64() * 1e3,
        index_time.as_secs_f64() * 1e3,
        index.used_chars
    );
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median time of `RUNS` discoveries + index, `before` run untimed before each; the
/// last catalog.
fn time(discover: &dyn Fn() -> Catalog, before: &dyn Fn()) -> (Duration, Catalog) {
    let mut times = Vec::with_capacity(RUNS);
    let mut last = Catalog::empty();
    for _ in 0..RUNS {
        before();
        let start = Instant::now();
        let catalog = discover();
        let _index = catalog.index(DEFAULT_INDEX_BUDGET);
        times.push(start.elapsed());
        last = catalog;
    }
    (median(times), last)
}

fn main() -> std::io::Result<()> {
    println!(
        "{:>7}  {:>13}  {:>9}  {:>9}  {:>12}  {:>10}  {:>10}  {:>10}  {:>11}  {:>10}",
        "skills",
        "uncached ms",
        "cold ms",
        "warm ms",
        "warm µs/sk",
        "read cold",
        "read warm",
        "warm hits",
        "cache bytes",
        "file bytes"
    );
    for count in [100usize, 1_000, 10_000] {
        let tmp = tempfile::tempdir()?;
        let work = tmp.path().join("work");
        let file_bytes = generate(&work.join("skills"), count)?;
        std::thread::sleep(SETTLE);
        let home = tmp.path().join("h9");
        let cache_file = home.join("cache/skills-index");
        let options = DiscoveryOptions {
            flag_dirs: Vec::new(),
            workdir: work.clone(),
            project_root: std::path::PathBuf::new(),
            harness9_home: home.clone(),
            user_home: None,
            remote_dirs: Vec::new(),
            plugins: Vec::new(),
        };
        let (uncached, plain) = time(&|| Catalog::discover_uncached(&options), &|| {});
        let (cold, cold_catalog) = time(&|| Catalog::discover(&options), &|| {
            let _ = std::fs::remove_file(&cache_file);
        });
        let (warm, catalog) = time(&|| Catalog::discover(&options), &|| {});
        if count == 10_000 {
            phases(&catalog)?;
        }
        assert_eq!(catalog.skills().len(), count, "every skill is found");
        assert_eq!(
            catalog.skills(),
            plain.skills(),
            "the cache changes nothing"
        );
        let (c, w) = (cold_catalog.stats(), catalog.stats());
        assert_eq!(w.cache_hits, count, "a warm run reads no SKILL.md");
        println!(
            "{:>7}  {:>13.2}  {:>9.2}  {:>9.2}  {:>12.2}  {:>10}  {:>10}  {:>10}  {:>11}  {:>10}",
            count,
            ms(uncached),
            ms(cold),
            ms(warm),
            warm.as_secs_f64() * 1e6 / count as f64,
            c.bytes_read,
            w.bytes_read,
            w.cache_hits,
            std::fs::metadata(&cache_file)?.len(),
            file_bytes,
        );
    }
    Ok(())
}
