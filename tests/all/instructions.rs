//! The AGENTS.md chain and the skills of the chain through the real binary, started in
//! a subfolder of a repository as people do in a monorepo: the first request's system
//! prompt carries the global file, the root's rule and the subfolder's rule in that
//! order, each with its path; the root's skill is in the index and runs as `/name`; an
//! override wins in its folder and CLAUDE.md stands in for a missing AGENTS.md; the cap
//! shortens the farthest file and says so in the prompt and on stderr; a link out of the
//! project is refused and named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use crate::support::*;

impl Repo {
    /// `harness9 -p PROMPT` in `repo/sub`: its output and the first request's system
    /// prompt.
    fn first_system_prompt(&self, prompt: &str) -> (Output, String, Vec<RecordedRequest>) {
        let server = MockServer::start(vec![answer("ok")]);
        let mut cmd = server.harness9(self.dirs.home(), &self.root().join("sub"));
        let out = run_fed(cmd.args(["-p", prompt]), b"");
        let requests = server.chat_requests();
        let system = requests
            .first()
            .map(|r| r.messages()[0]["content"].as_str().unwrap().to_string())
            .unwrap_or_default();
        (out, system, requests)
    }
}

#[test]
fn from_a_subfolder_the_root_rule_the_sub_rule_and_the_root_skill_are_in_the_first_request() {
    let repo = Repo::new();
    let root = repo.root();
    repo.dirs
        .home_file("AGENTS.md", "GLOBAL-RULE: answer briefly\n");
    write(&root.join("AGENTS.md"), "ROOT-RULE: run make check\n");
    write(
        &root.join("sub/AGENTS.md"),
        "SUB-RULE: this service uses tabs\n",
    );
    project_skill(
        &root,
        "rooted",
        "A skill kept at the repository root",
        "ROOTED-BODY $ARGUMENTS\n",
    );
    let (out, system, _) = repo.first_system_prompt("hi");
    assert_exit(&out, 0);
    let at = |s: &str| {
        system
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing from {system}"))
    };
    assert!(at("GLOBAL-RULE") < at("ROOT-RULE"));
    assert!(at("ROOT-RULE") < at("SUB-RULE"));
    for file in [root.join("AGENTS.md"), root.join("sub/AGENTS.md")] {
        assert_has(
            &system,
            &[&format!("<instructions path=\"{}\">", file.display())],
        );
    }
    assert_has(
        &system,
        &[
            &format!("Project directory: {}\n", root.join("sub").display()),
            &format!("Project root (the repository): {}\n", root.display()),
            "rooted: A skill kept at the repository root",
        ],
    );
    // The root's skill is usable from the subfolder.
    let (out, _, requests) = repo.first_system_prompt("/rooted now");
    assert_exit(&out, 0);
    assert_has(&requests[0].last_user_text(), &["ROOTED-BODY now"]);
}

#[test]
fn an_override_wins_in_its_folder_and_claude_md_stands_in_for_agents_md() {
    let repo = Repo::new();
    let root = repo.root();
    write(&root.join("AGENTS.md"), "ROOT-AGENTS\n");
    write(&root.join("AGENTS.override.md"), "ROOT-OVERRIDE\n");
    write(&root.join("sub/CLAUDE.md"), "SUB-CLAUDE\n");
    let (_, system, _) = repo.first_system_prompt("hi");
    assert_has(&system, &["ROOT-OVERRIDE", "SUB-CLAUDE"]);
    assert!(!system.contains("ROOT-AGENTS"), "{system}");
}

#[test]
fn the_cap_shortens_the_farthest_file_first_and_says_so() {
    let repo = Repo::new();
    let root = repo.root();
    repo.dirs
        .home_file("config.toml", "instructions_max_bytes = 120\n");
    write(
        &root.join("AGENTS.md"),
        &format!("ROOT-HEAD {}\n", "r".repeat(200)),
    );
    write(
        &root.join("sub/AGENTS.md"),
        &format!("SUB-WHOLE {}\n", "s".repeat(80)),
    );
    let (out, system, _) = repo.first_system_prompt("hi");
    assert_exit(&out, 0);
    assert_has(
        &system,
        &[
            "ROOT-HEAD",
            "SUB-WHOLE",
            "[shortened to fit the 120-byte cap on instruction files: 29 of 211 bytes shown",
        ],
    );
    let stderr = stderr_text(&out);
    assert_has(
        &stderr,
        &[
            "instructions_max_bytes",
            &format!("{} (29 of 211 bytes)", root.join("AGENTS.md").display()),
        ],
    );
}

#[test]
fn a_link_out_of_the_project_is_not_read_and_is_named() {
    let repo = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("notes.md"), "OUTSIDE-SECRET\n");
    std::os::unix::fs::symlink(
        outside.path().join("notes.md"),
        repo.root().join("AGENTS.md"),
    )
    .unwrap();
    let (out, system, _) = repo.first_system_prompt("hi");
    assert_exit(&out, 0);
    assert!(!system.contains("OUTSIDE-SECRET"), "{system}");
    assert_has(
        &stderr_text(&out),
        &["was not read", "leads out of the project"],
    );
}
