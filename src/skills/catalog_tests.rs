//! The catalog's tests: discovery from roots and the project chain, precedence and
//! shadows, invalid skills reported with their reason, the cache giving the same answers.

use crate::test_support::assert_contains;
use std::path::Path;

use super::*;
use crate::skills::RootKind;

use crate::test_support::{write, write_tree};

fn skill(dir: &Path, name: &str, description: &str) {
    write(
        &dir.join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: {description}\n---\n\nBody of {name}.\n"),
    );
}

/// One skill per `(folder below root, name)`, each described as "d".
fn skills_below(root: &Path, folders_and_names: &[(&str, &str)]) {
    for (folder, name) in folders_and_names {
        skill(&root.join(folder), name, "d");
    }
}

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["work", "h9", "home"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        Env { tmp }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    fn options(&self, flags: &[&str]) -> DiscoveryOptions {
        DiscoveryOptions {
            flag_dirs: flags.iter().map(|f| self.p(f)).collect(),
            workdir: self.p("work"),
            project_root: std::path::PathBuf::new(),
            harness9_home: self.p("h9"),
            user_home: Some(self.p("home")),
            remote_dirs: Vec::new(),
            plugins: Vec::new(),
        }
    }
    fn discover(&self, flags: &[&str]) -> Catalog {
        Catalog::discover(&self.options(flags))
    }
}

/// The catalog's warnings that `keep` keeps.
fn warnings_where(c: &Catalog, keep: impl Fn(&SkillWarning) -> bool) -> Vec<&SkillWarning> {
    c.warnings().iter().filter(|w| keep(w)).collect()
}

/// The one warning that `keep` keeps; panics, listing them all, unless there is
/// exactly one.
#[track_caller]
fn only_warning(c: &Catalog, keep: impl Fn(&SkillWarning) -> bool) -> &SkillWarning {
    let kept = warnings_where(c, keep);
    assert_eq!(kept.len(), 1, "{:?}", c.warnings());
    kept[0]
}

fn names(skills: &[Skill]) -> Vec<&str> {
    skills.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn no_roots_means_an_empty_catalog_silently() {
    let env = Env::new();
    let c = env.discover(&["missing"]);
    assert!(c.is_empty());
    assert!(c.warnings().is_empty());
    assert_eq!(c.index(8_000).text, None);
}

#[test]
fn every_folder_from_the_project_root_down_gives_skills_nearer_ones_winning() {
    let env = Env::new();
    // The project is `work`; the session runs in `work/a/b`.
    let options = DiscoveryOptions {
        workdir: env.p("work/a/b"),
        project_root: env.p("work"),
        ..env.options(&[])
    };
    skill(&env.p("work/skills/rooted"), "rooted", "at the root");
    skill(&env.p("work/a/.claude/skills/mid"), "mid", "in a");
    skill(&env.p("work/skills/dup"), "dup", "root's");
    skill(&env.p("work/a/.agents/skills/dup"), "dup", "a's");
    skill(&env.p("work/a/b/skills/dup"), "dup", "b's");
    skill(&env.p("h9/skills/dup"), "dup", "the user's");
    // A sibling of the chain is not in it.
    skill(&env.p("work/c/skills/aside"), "aside", "elsewhere");
    let c = Catalog::discover(&options);
    assert_eq!(c.get("rooted").unwrap().root.kind, RootKind::Project);
    assert!(c.get("mid").is_some());
    assert!(c.get("aside").is_none());
    assert_eq!(c.get("dup").unwrap().description, "b's");
    let shadowed: Vec<&str> = c
        .shadowed()
        .iter()
        .map(|s| s.description.as_str())
        .collect();
    assert_eq!(shadowed, ["a's", "root's", "the user's"]);
    let shadow_warnings = warnings_where(&c, |w| matches!(w.kind, WarningKind::Shadowed { .. }));
    assert_eq!(shadow_warnings.len(), 3);
}

#[test]
fn precedence_follows_the_root_order_and_shadowed_skills_are_kept() {
    let env = Env::new();
    let roots = [
        "flag1",
        "flag2",
        "work/skills",
        "work/.agents/skills",
        "work/.claude/skills",
        "h9/skills",
        "home/.agents/skills",
        "home/.claude/skills",
    ];
    for (i, r) in roots.iter().enumerate() {
        skill(&env.p(r).join("dup"), "dup", &format!("from {i}"));
        skill(&env.p(r).join(format!("only{i}")), &format!("only{i}"), "x");
    }
    let c = env.discover(&["flag1", "flag2"]);
    let dup = c.get("dup").unwrap();
    assert_eq!(dup.description, "from 0");
    assert_eq!(dup.root.kind, RootKind::Flag);
    assert_eq!(c.skills().len(), 9);
    let shadowed: Vec<&str> = c
        .shadowed()
        .iter()
        .map(|s| s.description.as_str())
        .collect();
    assert_eq!(
        shadowed,
        [
            "from 1", "from 2", "from 3", "from 4", "from 5", "from 6", "from 7"
        ]
    );
    for s in c.shadowed() {
        assert_eq!(
            s.status,
            SkillStatus::Shadowed {
                by: dup.path.clone()
            }
        );
    }
    let shadow_warnings = warnings_where(&c, |w| matches!(w.kind, WarningKind::Shadowed { .. }));
    assert_eq!(shadow_warnings.len(), 7);
    assert_eq!(c.get("only2").unwrap().root.kind, RootKind::Project);
    assert_eq!(c.get("only7").unwrap().root.kind, RootKind::User);
    // Without the flags, the project wins.
    assert_eq!(env.discover(&[]).get("dup").unwrap().description, "from 2");
}

#[test]
fn a_warm_discovery_builds_no_frontmatter_until_one_is_read_and_reads_it_exactly() {
    let env = Env::new();
    for name in ["alpha", "beta", "gamma"] {
        write(
            &env.p("work/skills").join(name).join("SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: d {name}\nallowed-tools: [Read, Grep]\n\
                 argument-hint: \"[file]\"\nmetadata: {{k: [1, 2.5]}}\nx-extra: y\n---\nBody\n"
            ),
        );
    }
    // Files changed in the last 2 s are never cached.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let cold = env.discover(&[]);
    assert!(cold.skills().iter().all(|s| s.frontmatter.is_built()));
    let warm = env.discover(&[]);
    assert_eq!(warm.stats().cache_hits, 3, "{:?}", warm.stats());
    assert!(warm.skills().iter().all(|s| !s.frontmatter.is_built()));
    // What every listing needs is there without building it.
    let slash = crate::skills::listing::slash_skills(&warm);
    assert_eq!(slash[0].argument_hint.as_deref(), Some("[file]"));
    assert!(warm.skills().iter().all(|s| !s.frontmatter.is_built()));
    let beta = warm.get("beta").unwrap();
    assert_eq!(beta.frontmatter.allowed_tools, ["Read", "Grep"]);
    assert!(beta.frontmatter.is_built());
    assert!(!warm.get("gamma").unwrap().frontmatter.is_built());
    let plain = Catalog::discover_uncached(&env.options(&[]));
    assert_eq!(warm.skills(), plain.skills());
    assert_eq!(warm.skills(), cold.skills());
}

#[test]
fn winners_are_sorted_by_name() {
    let env = Env::new();
    for n in ["zeta", "alpha", "mid"] {
        skill(&env.p("work/skills").join(n), n, "d");
    }
    assert_eq!(names(env.discover(&[]).skills()), ["alpha", "mid", "zeta"]);
}

#[test]
fn searches_deep_and_hidden_folders_and_skips_vcs_and_build_dirs() {
    let env = Env::new();
    let r = env.p("work/skills");
    skills_below(
        &r,
        &[
            ("plugins/x/skills/deep", "deep"),
            ("a/b/c/d/e/f/six", "six"),
            (".curated/hidden", "hidden"),
            (".git/in-git", "in-git"),
            ("node_modules/pkg", "in-nm"),
            ("x/target/built", "in-target"),
            ("1/2/3/4/5/6/7/8/9/too-deep", "too-deep"),
            // A skill's own folders are not searched for more skills.
            ("outer", "outer"),
            ("outer/references/inner", "inner"),
        ],
    );
    let c = env.discover(&[]);
    assert_eq!(names(c.skills()), ["deep", "hidden", "outer", "six"]);
    let depth = only_warning(&c, |w| matches!(w.kind, WarningKind::DepthLimit { .. }));
    assert!(depth.path.ends_with("1/2/3/4/5/6/7/8"));
    // `x` only holds `target`, which is skipped: reported as holding no skill.
    let empty = only_warning(&c, |w| w.kind == WarningKind::NoSkillMd);
    assert!(empty.path.ends_with("skills/x"));
}

#[test]
fn a_directory_without_skill_md_is_reported_once_at_its_top() {
    let env = Env::new();
    let r = env.p("work/skills");
    skill(&r.join("good"), "good", "d");
    std::fs::create_dir_all(r.join("notes/drafts/old")).unwrap();
    write(&r.join("notes/readme.md"), "not a skill");
    let c = env.discover(&[]);
    assert_eq!(names(c.skills()), ["good"]);
    assert_eq!(c.warnings().len(), 1);
    let w = &c.warnings()[0];
    assert_eq!(w.path, r.join("notes"));
    assert!(w.to_string().contains("no SKILL.md"), "{w}");
}

#[cfg(unix)]
#[test]
fn symlinks_are_followed_once_without_loops() {
    use std::os::unix::fs::symlink;
    let env = Env::new();
    let r = env.p("work/skills");
    skill(&r.join("real"), "real", "d");
    skill(&env.p("elsewhere/linked"), "linked", "d");
    symlink(env.p("elsewhere/linked"), r.join("linked")).unwrap();
    symlink(env.p("elsewhere/linked"), r.join("linked-again")).unwrap();
    symlink(&r, r.join("loop")).unwrap();
    std::fs::create_dir_all(r.join("cat")).unwrap();
    skill(&r.join("cat/inside"), "inside", "d");
    symlink(r.join("cat"), r.join("cat/self")).unwrap();
    symlink(r.join("real"), r.join("cat/real-again")).unwrap();
    symlink(env.p("nowhere"), r.join("broken")).unwrap();
    // The same directory as a second root.
    std::fs::create_dir_all(env.p("work/.agents")).unwrap();
    symlink(&r, env.p("work/.agents/skills")).unwrap();
    let c = env.discover(&[]);
    assert_eq!(names(c.skills()), ["inside", "linked", "real"]);
    assert!(c.shadowed().is_empty(), "{:?}", c.shadowed());
    only_warning(&c, |w| w.path.ends_with("broken"));
}

#[test]
fn missing_fields_are_reported_with_file_and_field() {
    let env = Env::new();
    let r = env.p("work/skills");
    write_tree(
        &r,
        &[
            ("no-name/SKILL.md", "---\ndescription: d\n---\nbody\n"),
            (
                "no-desc/SKILL.md",
                "---\nname: no-desc\ndescription: \"  \"\n---\nbody\n",
            ),
            ("no-fm/SKILL.md", "# Just markdown\n"),
            ("unclosed/SKILL.md", "---\nname: x\ndescription: y\n"),
        ],
    );
    let c = env.discover(&[]);
    assert!(c.is_empty());
    assert_eq!(c.invalid().len(), 4);
    let text: Vec<String> = c.warnings().iter().map(|w| w.to_string()).collect();
    let find = |dir: &str| {
        text.iter()
            .find(|t| t.contains(&format!("{dir}/SKILL.md")))
            .cloned()
            .unwrap()
    };
    assert!(find("no-name").contains("no `name`"), "{text:?}");
    assert!(find("no-desc").contains("no `description`"), "{text:?}");
    assert!(
        find("no-fm").contains("does not start with a `---`"),
        "{text:?}"
    );
    assert!(find("unclosed").contains("no closing `---`"), "{text:?}");
}

#[test]
fn yaml_fallback_loads_with_a_warning_saying_how_to_quote() {
    let env = Env::new();
    let r = env.p("work/skills");
    write(
        &r.join("deploy/SKILL.md"),
        "---\r\nname: deploy\r\ndescription: Use when: shipping to prod\r\n---\r\nbody\r\n",
    );
    let c = env.discover(&[]);
    let s = c.get("deploy").unwrap();
    assert_eq!(s.description, "Use when: shipping to prod");
    assert_eq!(s.status, SkillStatus::Warning);
    let w = c.warnings()[0].to_string();
    assert_contains(&w, "deploy/SKILL.md");
    assert_contains(&w, "description: \"Use when: ...\"");
}

#[test]
fn discovery_reads_the_frontmatter_not_the_body() {
    let env = Env::new();
    let r = env.p("work/skills");
    let body = "All work and no play. ".repeat(1_000_000);
    write(
        &r.join("big/SKILL.md"),
        &format!("---\nname: big\ndescription: d\n---\n{body}"),
    );
    let c = env.discover(&[]);
    assert_eq!(c.stats().files_read, 1);
    assert!(
        c.stats().bytes_read <= 1024,
        "read {} bytes",
        c.stats().bytes_read
    );
    assert_eq!(
        c.get("big").unwrap().load_body().unwrap().len(),
        body.trim().len()
    );
}

#[test]
fn a_flag_root_may_be_a_skill_itself_and_relative_to_workdir() {
    let env = Env::new();
    skill(&env.p("work/tools/one"), "one", "d");
    let mut opts = env.options(&[]);
    opts.flag_dirs = vec![PathBuf::from("tools/one")];
    let c = Catalog::discover(&opts);
    assert_eq!(names(c.skills()), ["one"]);
    assert_eq!(c.skills()[0].root.kind, RootKind::Flag);
}

#[test]
fn builtin_names_warn_and_stay_available() {
    let env = Env::new();
    skill(&env.p("work/skills/help"), "help", "d");
    let c = env.discover(&[]);
    let help = c.get("help").unwrap();
    assert_eq!(help.status, SkillStatus::Warning);
    let w = c.warnings()[0].to_string();
    assert_contains(&w, "/skill help");
}

#[test]
fn names_that_cannot_be_invoked_are_invalid_and_never_indexed() {
    let env = Env::new();
    let r = env.p("work/skills");
    skills_below(
        &r,
        &[
            ("spaces", "Bad Name With Spaces"),
            ("dotdot", "../x"),
            ("newline", "\"new\\nline\""),
            ("good", "good"),
            // Outside the specification but invocable: loaded.
            ("Upper.Case", "Upper.Case"),
        ],
    );
    let c = env.discover(&[]);
    assert_eq!(names(c.skills()), ["Upper.Case", "good"]);
    let invocable: Vec<&str> = c.user_invocable_names().collect();
    assert_eq!(invocable, ["Upper.Case", "good"]);
    let index = c.index(8_000).text.unwrap();
    assert!(!index.contains("Bad") && !index.contains("x:"), "{index}");
    assert_eq!(index.lines().filter(|l| l.starts_with("- ")).count(), 2);
    let invalid: Vec<(Option<&str>, &Path)> = c
        .invalid()
        .iter()
        .map(|b| (b.name.as_deref(), b.path.as_path()))
        .collect();
    assert_eq!(
        invalid,
        [
            (Some("../x"), r.join("dotdot/SKILL.md").as_path()),
            (Some("new\nline"), r.join("newline/SKILL.md").as_path()),
            (
                Some("Bad Name With Spaces"),
                r.join("spaces/SKILL.md").as_path()
            ),
        ]
    );
    for bad in c.invalid() {
        assert!(
            matches!(bad.reason, WarningKind::InvalidName { .. }),
            "{bad:?}"
        );
        only_warning(&c, |w| w.path == bad.path && w.kind == bad.reason);
    }
    assert_eq!(c.invalid_named("../x").len(), 1);
    // Failing a name, the directory's name finds it.
    assert_eq!(
        c.invalid_named("spaces")[0].name.as_deref(),
        Some("Bad Name With Spaces")
    );
    assert!(c.invalid_named("good").is_empty());
}

#[test]
fn an_invalid_skill_never_shadows_a_valid_one() {
    let env = Env::new();
    skill(&env.p("flag/x"), "x y", "Invalid, higher precedence");
    skill(&env.p("work/skills/x"), "x", "Valid");
    let c = env.discover(&["flag"]);
    assert_eq!(c.get("x").unwrap().description, "Valid");
    assert!(c.shadowed().is_empty());
    assert_eq!(c.invalid().len(), 1);
}
