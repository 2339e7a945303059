//! Files on disk for tests: [`write`] (any file, parent folders made), [`skill_md`] (the
//! text of a `SKILL.md`), [`skill`] (a skill folder in a skills root), [`project_skill`]
//! (one in a project's `skills` folder) and [`corpus_dir`]
//! (the shared corpus of real skills). Only paths and text: nothing here knows harness9's
//! types.

use std::path::{Path, PathBuf};

/// Writes `text` to `path`, creating the parent folders first.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a path with a parent")).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A `SKILL.md`: `name` and `description` first in the frontmatter, then `extra` (whole
/// lines, each ending in `\n`, or nothing), then `body` after the closing `---` line.
pub fn skill_md(name: &str, description: &str, extra: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\n{body}")
}

/// Writes `{root}/{name}/SKILL.md` (see [`skill_md`]) and returns the skill's folder.
pub fn skill(root: &Path, name: &str, description: &str, extra: &str, body: &str) -> PathBuf {
    let dir = root.join(name);
    write(
        &dir.join("SKILL.md"),
        &skill_md(name, description, extra, body),
    );
    dir
}

/// Writes the skill `name` (no extra frontmatter) into `project`'s own `skills` folder
/// and returns the skill's folder.
pub fn project_skill(project: &Path, name: &str, description: &str, body: &str) -> PathBuf {
    skill(&project.join("skills"), name, description, "", body)
}

/// The corpus of real skills: `$HARNESS9_SKILLS_CORPUS`, else `../shared/corpus/skills`
/// beside the repository. A fresh clone has neither, so the tests that need it are
/// `#[ignore]`d and `.ci/run` runs them with `--ignored`; there a missing corpus fails.
pub fn corpus_dir() -> PathBuf {
    let dir = std::env::var_os("HARNESS9_SKILLS_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/skills"));
    assert!(
        dir.join("expected.jsonl").is_file(),
        "the skills corpus is missing: expected {} (with expected.jsonl) next to the \
         repository; see its README for what it holds",
        dir.display()
    );
    dir
}

/// Spawns `cmd` with all three standard streams piped and feeds it `stdin` from a
/// thread (so a child that writes before it reads cannot block the test), then closes
/// its standard input.
pub fn spawn_fed(cmd: &mut std::process::Command, stdin: &[u8]) -> std::process::Child {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    child
}

/// Runs `cmd` with `stdin` fed to it (see [`spawn_fed`]) and waits for it to exit, at
/// most a minute (then it is killed and the test fails).
pub fn run_fed(cmd: &mut std::process::Command, stdin: &[u8]) -> std::process::Output {
    wait_with_deadline(spawn_fed(cmd, stdin), std::time::Duration::from_secs(60))
}

/// Waits for `child` to exit and collects its output, at most `deadline` (then it is
/// killed and the test fails).
pub fn wait_with_deadline(
    child: std::process::Child,
    deadline: std::time::Duration,
) -> std::process::Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(deadline) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("the child did not exit within {deadline:?}");
        }
    }
}

/// Reads the first line of `child`'s standard output, then closes it as `| head -1`
/// does, and waits for the child to exit, at most `deadline` (then it is killed and the
/// test fails). Returns the line and what the child wrote otherwise.
pub fn first_line_then_close(
    mut child: std::process::Child,
    deadline: std::time::Duration,
) -> (String, std::process::Output) {
    use std::io::BufRead;
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    drop(stdout);
    (first, wait_with_deadline(child, deadline))
}

/// A repository (its `.git` a folder) with a subfolder `sub`, and a home: the project
/// root's tests start harness9 in `sub`, as people do in a monorepo.
pub struct Repo {
    pub dirs: super::Dirs,
}

impl Repo {
    pub fn new() -> Repo {
        let dirs = super::Dirs::new();
        std::fs::create_dir_all(dirs.project().join(".git")).unwrap();
        std::fs::create_dir_all(dirs.project().join("sub")).unwrap();
        Repo { dirs }
    }

    /// The repository's root, as the kernel names it.
    pub fn root(&self) -> std::path::PathBuf {
        self.dirs.project().canonicalize().unwrap()
    }

    /// The subfolder `sub`.
    pub fn sub(&self) -> std::path::PathBuf {
        self.root().join("sub")
    }
}
