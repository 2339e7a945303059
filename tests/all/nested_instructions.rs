//! Instruction files below the working folder, through the real binary against the
//! scripted server: a first read in `pkg/x` attaches `pkg/AGENTS.md` and then
//! `pkg/x/AGENTS.md` to that result, once over several calls (reads, a listing, a
//! search); a resumed session does not attach them again; after a compaction summarized
//! them away, the next touch attaches them again; the system prompt and the tools are
//! byte-identical over 20 turns that keep meeting nested files; a nested file that is a
//! link (here, out of the project) is not read and the user is told once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Output;

use crate::support::*;

/// A project with a root rule (in the chain) and two nested ones, `pkg/` and `pkg/x/`.
struct Nested {
    dirs: Dirs,
}

impl Nested {
    fn new() -> Nested {
        let dirs = Dirs::new();
        dirs.project_file("AGENTS.md", "ROOT-RULE: run make check\n");
        dirs.project_file("pkg/AGENTS.md", "PKG-RULE: this package uses tabs\n");
        dirs.project_file("pkg/x/AGENTS.md", "X-RULE: never unwrap\n");
        dirs.project_file(
            "pkg/x/a.rs",
            &format!("fn a() {{}}\n{}", "// a\n".repeat(600)),
        );
        dirs.project_file("pkg/x/b.rs", "fn b() {}\n");
        dirs.project_file("other/c.rs", "fn c() {}\n");
        Nested { dirs }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dirs.project().canonicalize().unwrap().join(rel)
    }

    /// The block the model gets for `rel` (`rule` its whole text).
    fn block(&self, rel: &str, rule: &str) -> String {
        format!(
            "<instructions path=\"{}\">\n{rule}\n</instructions>",
            self.path(rel).display()
        )
    }

    /// `harness9 ARGS` with `stdin`, at most a minute.
    fn run(&self, server: &MockServer, args: &[&str], stdin: &str) -> Output {
        run_fed(server.binary(&self.dirs).args(args), stdin.as_bytes())
    }
}

fn read(id: &str, path: &str) -> Reply {
    tool_reply(
        id,
        "read_file",
        &serde_json::json!({ "path": path }).to_string(),
    )
}

/// How many times `needle` is in what `request` sends.
fn count(request: &RecordedRequest, needle: &str) -> usize {
    request.raw_body.matches(needle).count()
}

const PKG: &str = "PKG-RULE: this package uses tabs";
const X: &str = "X-RULE: never unwrap";

#[test]
fn a_first_read_in_pkg_x_attaches_pkg_then_x_once_and_a_resumed_session_does_not_repeat_them() {
    let project = Nested::new();
    let server = MockServer::start(vec![
        read("c1", "pkg/x/a.rs"),
        read("c2", "pkg/x/b.rs"),
        tool_reply("c3", "list", r#"{"path": "pkg"}"#),
        tool_reply("c4", "grep", r#"{"pattern": "fn", "path": "pkg/x"}"#),
        read("c5", "other/c.rs"),
        answer("done"),
    ]);
    let out = project.run(&server, &["-p", "look at pkg/x"], "");
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 6);
    // The first read carries both, the outer folder first, after the file's text.
    let first = requests[1].tool_result("c1");
    let (pkg, x) = (
        project.block("pkg/AGENTS.md", PKG),
        project.block("pkg/x/AGENTS.md", X),
    );
    assert!(first.starts_with("     1\tfn a() {}"), "{first}");
    assert!(
        first.ends_with(&format!("\n\n{pkg}\n\n{x}")),
        "the result ends with the two blocks: {first}"
    );
    for id in ["c2", "c3", "c4", "c5"] {
        let result = requests[5].tool_result(id);
        assert!(!result.contains("<instructions"), "{id}: {result}");
    }
    // Once in all that is sent, never in the system prompt.
    let last = &requests[5];
    assert_eq!((count(last, PKG), count(last, X)), (1, 1));
    let system = last.message_text(0);
    assert_has(&system, &["ROOT-RULE"]);
    assert!(!system.contains("PKG-RULE"), "{system}");

    // Resumed: the conversation holds them, so a new read in pkg/x attaches nothing.
    server.push(read("c6", "pkg/x/a.rs"));
    server.push(answer("again"));
    let out = project.run(&server, &["-c", "-p", "read it again"], "");
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    assert!(
        !last.tool_result("c6").contains("<instructions"),
        "{}",
        last.tool_result("c6")
    );
    assert_eq!((count(last, PKG), count(last, X)), (1, 1));
    assert_eq!(last.message_text(0), system);
}

#[test]
fn after_a_compaction_summarized_them_away_the_next_touch_attaches_them_again() {
    let project = Nested::new();
    let server = MockServer::start(vec![
        read("c1", "pkg/x/a.rs"),
        answer("one"),
        // The summary /compact asks for.
        answer("SUMMARY: read pkg/x/a.rs"),
    ]);
    let out = project.run(&server, &[], "read a\n/compact\n");
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3, "{}", stderr_text(&out));
    assert_eq!(count(&requests[1], PKG), 1);

    // Resumed after the compaction: what held them is gone, so they come again, once.
    server.push(read("c2", "pkg/x/b.rs"));
    server.push(read("c3", "pkg/x/a.rs"));
    server.push(answer("two"));
    let out = project.run(&server, &["-c", "-p", "read b"], "");
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    assert_has(&last.raw_body, &["SUMMARY: read pkg/x/a.rs"]);
    let again = last.tool_result("c2");
    assert!(
        again.ends_with(&format!(
            "\n\n{}\n\n{}",
            project.block("pkg/AGENTS.md", PKG),
            project.block("pkg/x/AGENTS.md", X)
        )),
        "{again}"
    );
    assert!(!last.tool_result("c3").contains("<instructions"));
    assert_eq!((count(last, PKG), count(last, X)), (1, 1));
}

#[test]
fn the_system_prompt_and_tools_are_byte_identical_over_20_turns_with_nested_files() {
    let project = Nested::new();
    for i in 0..5 {
        project
            .dirs
            .project_file(&format!("mod{i}/AGENTS.md"), &format!("MOD{i}-RULE\n"));
        project
            .dirs
            .project_file(&format!("mod{i}/deep/f.rs"), "fn f() {}\n");
    }
    let mut replies = Vec::new();
    let mut lines = String::new();
    for turn in 0..20 {
        replies.push(read(
            &format!("c{turn}"),
            &format!("mod{}/deep/f.rs", turn % 5),
        ));
        replies.push(answer(&format!("answer {turn}")));
        lines.push_str(&format!("turn {turn}\n"));
    }
    let server = MockServer::start(replies);
    let out = project.run(&server, &[], &lines);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 40, "{}", stderr_text(&out));
    let system = |r: &RecordedRequest| serde_json::to_string(&r.messages()[0]).unwrap();
    let tools = |r: &RecordedRequest| serde_json::to_string(&r.body["tools"]).unwrap();
    for request in &requests[1..] {
        assert_eq!(system(request), system(&requests[0]));
        assert_eq!(tools(request), tools(&requests[0]));
    }
    // Each module's rule came once, with the first read there; never in the prompt.
    let last = requests.last().unwrap();
    for i in 0..5 {
        let rule = format!("MOD{i}-RULE");
        assert_eq!(count(last, &rule), 1, "{rule}");
        assert!(!system(&requests[0]).contains(&rule));
        assert_has(&requests[2 * i + 1].tool_result(&format!("c{i}")), &[&rule]);
    }
}

#[test]
fn a_nested_file_linked_out_of_the_project_is_not_read_and_the_user_is_told() {
    let project = Nested::new();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("rules.md"), "OUTSIDE-SECRET\n");
    std::fs::remove_file(project.path("pkg/AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("rules.md"),
        project.path("pkg/AGENTS.md"),
    )
    .unwrap();
    let server = MockServer::start(vec![
        read("c1", "pkg/x/a.rs"),
        read("c2", "pkg/x/b.rs"),
        answer("done"),
    ]);
    let out = project.run(&server, &["-p", "go"], "");
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    assert_eq!(count(last, "OUTSIDE-SECRET"), 0);
    // The folder below it still attaches its own.
    assert_eq!(count(last, X), 1);
    let stderr = stderr_text(&out);
    assert_has(
        &stderr,
        &[
            &format!("{} was not read", project.path("pkg/AGENTS.md").display()),
            "a symbolic link",
        ],
    );
    assert_eq!(stderr.matches("a symbolic link").count(), 1, "{stderr}");
}
