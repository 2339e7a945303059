//! Symlinks in the project against the file tools and mentions, through the real
//! binary: a scripted model calls `write_file`, `edit_file`, `read_file` or `grep` on a
//! path that leads (through a link to the file, a link to its folder, a chain of links,
//! a `..` spelling, or a dangling link) to `.git/config`, a git hook,
//! `.harness9/permissions.toml`, `.env` or a file outside the project. Every call is
//! judged by the file it reaches, so each asks (and, with nobody to answer, is denied):
//! the target is unchanged, not created, and its content never reaches the server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

use crate::support::*;

/// What a link leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    GitConfig,
    Hook,
    Rules,
    DotEnv,
    Outside,
}

const TARGETS: [Target; 5] = [
    Target::GitConfig,
    Target::Hook,
    Target::Rules,
    Target::DotEnv,
    Target::Outside,
];

impl Target {
    /// Where it lies: in the project, or in the folder outside it.
    fn path(self, world: &World) -> PathBuf {
        match self {
            Target::GitConfig => world.project().join(".git/config"),
            Target::Hook => world.project().join(".git/hooks/pre-commit"),
            Target::Rules => world.project().join(".harness9/permissions.toml"),
            Target::DotEnv => world.project().join(".env"),
            Target::Outside => world.outside().join("target.txt"),
        }
    }

    fn marker(self) -> String {
        format!("MARKER-{self:?}-5d1")
    }

    /// Its content: valid for what reads it (git, harness9's rule file), with a marker.
    fn content(self) -> String {
        let marker = self.marker();
        match self {
            Target::GitConfig => format!("[core]\n\tbare = false\n# {marker}\n"),
            Target::Hook => format!("#!/bin/sh\n# {marker}\nexit 0\n"),
            Target::Rules => format!("# {marker}\ndeny = []\n"),
            Target::DotEnv => format!("KEY={marker}\n"),
            Target::Outside => format!("{marker}\n"),
        }
    }
}

/// How the written path reaches the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `docs/settings.ini -> target`.
    Link,
    /// `docs -> the target's folder`, and `docs/NAME`.
    LinkedFolder,
    /// `a -> b -> docs/settings.ini -> target`.
    Chain,
    /// `sub/../docs/settings.ini` with the link of [`Form::Link`].
    DotDot,
}

const FORMS: [Form; 4] = [Form::Link, Form::LinkedFolder, Form::Chain, Form::DotDot];

/// A home, a project and a folder outside ([`Outside`]).
type World = Outside;

/// A world whose project holds every target, and whose folder outside holds the
/// outside one.
fn world_with_targets() -> World {
    let world = World::new();
    for target in TARGETS {
        write(&target.path(&world), &target.content());
    }
    std::fs::create_dir_all(world.project().join("sub")).unwrap();
    world
}

impl World {
    /// Makes the links of `form` to `target`; returns the path to write in the call.
    fn reach(&self, target: Target, form: Form) -> String {
        let project = self.project();
        let real = target.path(self);
        let link = project.join("docs/settings.ini");
        match form {
            Form::LinkedFolder => {
                symlink(real.parent().unwrap(), project.join("docs")).unwrap();
                format!("docs/{}", real.file_name().unwrap().to_str().unwrap())
            }
            Form::Link | Form::Chain | Form::DotDot => {
                std::fs::create_dir_all(project.join("docs")).unwrap();
                symlink(relative_to(&real, &project.join("docs")), &link).unwrap();
                match form {
                    Form::Chain => {
                        symlink("docs/settings.ini", project.join("b")).unwrap();
                        symlink("b", project.join("a")).unwrap();
                        "a".to_string()
                    }
                    Form::DotDot => "sub/../docs/settings.ini".to_string(),
                    _ => "docs/settings.ini".to_string(),
                }
            }
        }
    }

    /// `harness9 -p go` (plus `args`) while the model makes one call of `tool` with
    /// `arguments`; the output and the call's result as the model got it.
    fn one_call(&self, tool: &str, arguments: serde_json::Value, args: &[&str]) -> Run {
        let server = MockServer::start(vec![]);
        let (out, result) = server.one_call(
            (self.dirs.home(), self.dirs.project()),
            (tool, &arguments.to_string()),
            args,
            &[],
        );
        let sent = server.everything_sent();
        Run { out, result, sent }
    }
}

struct Run {
    out: Output,
    result: String,
    sent: String,
}

/// `path` written relative to `from` when it lies under `from`'s parent (links inside
/// the project are relative, as a committed link is), absolute otherwise.
fn relative_to(path: &Path, from: &Path) -> PathBuf {
    match path.strip_prefix(from.parent().unwrap()) {
        Ok(rest) => Path::new("..").join(rest),
        Err(_) => path.to_path_buf(),
    }
}

/// Asserts a call was denied because it needed a person and the target is untouched.
#[track_caller]
fn assert_denied_and_untouched(run: &Run, world: &World, target: Target, what: &str) {
    assert!(
        run.result.starts_with("Denied"),
        "{what}: the model got: {}\nstderr: {}",
        run.result,
        String::from_utf8_lossy(&run.out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(target.path(world)).unwrap(),
        target.content(),
        "{what}: the target changed"
    );
}

/// For every target and every way of reaching it, in a fresh world: `tool` in
/// auto-edit with `arguments(path, target)`, where `path` leads to the target; asserts
/// the call was denied and the target untouched, then hands the run to `check`.
fn each_link_in_auto_edit(
    tool: &str,
    arguments: impl Fn(&str, Target) -> serde_json::Value,
    check: impl Fn(&Run, &World, Target, &str),
) {
    for target in TARGETS {
        for form in FORMS {
            let world = world_with_targets();
            let path = world.reach(target, form);
            let what = format!("{tool} {path} -> {target:?} ({form:?})");
            let arguments = arguments(&path, target);
            let run = world.one_call(tool, arguments, &["--approval-mode", "auto-edit"]);
            assert_denied_and_untouched(&run, &world, target, &what);
            check(&run, &world, target, &what);
        }
    }
}

#[test]
fn write_file_through_a_link_is_judged_by_the_file_it_reaches() {
    each_link_in_auto_edit(
        "write_file",
        |path, _| json!({"path": path, "content": "[core]\n\tfsmonitor = touch PWNED\n"}),
        |run, world, target, what| {
            let stderr = String::from_utf8_lossy(&run.out.stderr);
            assert!(
                stderr.contains(&format!("-> {}", target.path(world).display())),
                "{what}: the denial names where the path leads: {stderr}"
            );
        },
    );
}

/// A dangling link counts as its target: `write_file` would create the protected file.
#[test]
fn write_file_through_a_dangling_link_is_judged_by_the_file_it_would_create() {
    for (target, protected) in [
        (".git/hooks/post-checkout", true),
        (".harness9/new.toml", true),
        (".env.local", true),
        ("OUTSIDE/new.txt", true),
        ("plain/new.txt", false),
    ] {
        let world = world_with_targets();
        let real = match target.strip_prefix("OUTSIDE/") {
            Some(name) => world.outside().join(name),
            None => world.project().join(target),
        };
        std::fs::create_dir_all(world.project().join("docs")).unwrap();
        symlink(
            relative_to(&real, &world.project().join("docs")),
            world.project().join("docs/new.ini"),
        )
        .unwrap();
        let run = world.one_call(
            "write_file",
            json!({"path": "docs/new.ini", "content": "#!/bin/sh\ntouch PWNED\n"}),
            &["--approval-mode", "auto-edit"],
        );
        if protected {
            assert!(run.result.starts_with("Denied"), "{target}: {}", run.result);
            assert!(!real.exists(), "{target} was created");
        } else {
            // An ordinary file in the project: auto-edit writes it, the link stays.
            assert!(
                run.result.starts_with("Created"),
                "{target}: {}",
                run.result
            );
            assert!(real.exists());
            let link = world.project().join("docs/new.ini");
            assert!(link.symlink_metadata().unwrap().is_symlink());
        }
    }
}

#[test]
fn edit_file_through_a_link_is_judged_by_the_file_it_reaches() {
    each_link_in_auto_edit(
        "edit_file",
        |path, target| json!({"path": path, "old_string": target.marker(), "new_string": "PWNED"}),
        |_, _, _, _| {},
    );
}

/// Reads through links: a secret file asks in every mode, a file outside asks in
/// `suggest`; denied unattended, their content never sent.
#[test]
fn read_file_and_grep_through_a_link_are_judged_by_the_file_they_reach() {
    for target in [Target::DotEnv, Target::Outside] {
        for form in FORMS {
            for (tool, arguments) in [
                ("read_file", json!({"path": "PATH"})),
                ("grep", json!({"pattern": "MARKER", "path": "PATH"})),
            ] {
                let world = world_with_targets();
                let path = world.reach(target, form);
                let mut arguments = arguments.clone();
                arguments["path"] = json!(path);
                let what = format!("{tool} {path} -> {target:?} ({form:?})");
                let run = world.one_call(tool, arguments, &[]);
                assert_denied_and_untouched(&run, &world, target, &what);
                assert!(!run.sent.contains(&target.marker()), "{what}: sent");
            }
        }
    }
}

/// grep over the whole project never reads a file through a link (links are not
/// followed), nor a secret file by its real name, whatever the link is called.
#[test]
fn grep_over_the_project_reads_no_link_and_no_secret_file() {
    let world = world_with_targets();
    let project = world.project();
    symlink(".env", project.join("settings.txt")).unwrap();
    symlink(Target::Outside.path(&world), project.join("outside.txt")).unwrap();
    symlink(world.outside(), project.join("vendor")).unwrap();
    write(&project.join("src/lib.rs"), "// MARKER-in-source\n");
    let run = world.one_call("grep", json!({"pattern": "MARKER"}), &[]);
    assert!(
        run.result.contains("src/lib.rs:1:// MARKER-in-source"),
        "{}",
        run.result
    );
    for target in [Target::DotEnv, Target::Outside] {
        assert!(
            !run.sent.contains(&target.marker()),
            "{target:?} was read: {}",
            run.result
        );
    }
    assert!(
        run.result
            .contains("skipped 1 file(s) that may hold secrets: .env"),
        "{}",
        run.result
    );
}

/// Mentions are judged the same way: through any link form, a secret or outside file
/// is refused with nobody to ask, and nothing is sent.
#[test]
fn mentions_through_a_link_are_judged_by_the_file_they_reach() {
    for target in [Target::DotEnv, Target::Outside] {
        for form in FORMS {
            let world = world_with_targets();
            let path = world.reach(target, form);
            let server = MockServer::start(vec![]);
            let mut cmd = server.binary(&world.dirs);
            cmd.args(["-p", &format!("look at @{path}")]);
            let out = run_fed(&mut cmd, b"");
            let what = format!("@{path} -> {target:?} ({form:?})");
            assert_exit(&out, 2);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("not attached"), "{what}: {stderr}");
            assert!(server.chat_requests().is_empty(), "{what}");
        }
    }
}

/// What a headless client sees: the request names the real file (`path`) and the
/// written one (`via`).
#[test]
fn stream_json_names_the_real_file_and_the_written_path() {
    let world = world_with_targets();
    let path = world.reach(Target::GitConfig, Form::Link);
    let denied = auto_denied_write(&world, &path);
    let request = &denied["request"];
    assert_eq!(request["kind"], "edit");
    assert_eq!(
        request["path"],
        json!(Target::GitConfig.path(&world).display().to_string())
    );
    assert_eq!(
        request["via"],
        json!(
            world
                .project()
                .join("docs/settings.ini")
                .display()
                .to_string()
        )
    );
    // A plain path carries no `via`.
    let world = world_with_targets();
    let denied = auto_denied_write(&world, ".git/config");
    assert!(denied["request"].get("via").is_none(), "{denied}");
}

/// The `auto_denied` stream-json event of a `write_file` of `path` in `auto-edit`.
fn auto_denied_write(world: &World, path: &str) -> serde_json::Value {
    let run = world.one_call(
        "write_file",
        json!({"path": path, "content": "x"}),
        &[
            "--approval-mode",
            "auto-edit",
            "--output-format",
            "stream-json",
        ],
    );
    String::from_utf8_lossy(&run.out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "auto_denied")
        .expect("an auto_denied event")
}
