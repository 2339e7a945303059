//! Hooks through the real binary: a PreToolUse guard from config.toml blocks a bash
//! command (exit 2, its reason fed back to the model), a guard whose script is missing
//! denies while a plain hook's failure lets the call run, a hook's `updatedInput` is
//! judged again by the rules (a rewrite to a secret read is still denied), and the
//! project's hooks (`.claude/settings.json`) do not run before trust exists; every run
//! is reported (`-v`, stream-json's `hook` lines); a hook's allow and ask and a
//! PermissionRequest hook's answer go through the approval policy (deny rules, secret
//! files and destructive commands keep their say); PostToolUse context reaches the
//! model after the result.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::*;

/// Writes an executable bash script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// config.toml with one PreToolUse hook on `Bash` running `command`.
fn pre_tool_config(command: &Path, on_error: &str) -> String {
    format!(
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \
         \"command\"\ncommand = \"{}\"\non_error = \"{on_error}\"\ntimeout = 30\n",
        command.display()
    )
}

/// config.toml with one `event` hook under `matcher` running `command` (a plain hook).
fn hook_config(event: &str, matcher: &str, command: &Path) -> String {
    format!(
        "[[hooks.{event}]]\nmatcher = \"{matcher}\"\n[[hooks.{event}.hooks]]\ntype = \
         \"command\"\ncommand = \"{}\"\ntimeout = 30\n",
        command.display()
    )
}

/// A hook script that reads its input and prints `json`.
fn answering(dir: &Path, name: &str, json: &serde_json::Value) -> PathBuf {
    script(dir, name, &format!("cat > /dev/null\necho '{json}'"))
}

/// A folder for hook scripts outside the harness9 home (which the session's sandbox
/// hides from the commands it confines, hooks included).
fn scripts_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn one_bash_call(dirs: &Dirs, command: &str) -> (Output, String) {
    MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        command,
        &["--approval-mode", "full-auto"],
        &[],
    )
}

#[test]
fn a_pre_tool_use_guard_blocks_a_bash_command_and_the_model_hears_why() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    // Reads the event's JSON on stdin, as a Claude Code guard does.
    let guard = script(
        scripts.path(),
        "no-touch.sh",
        "input=$(cat)\ncase \"$input\" in\n  *'\"tool_name\":\"Bash\"'*'touch'*) echo 'touch is \
         not allowed in this project' >&2; exit 2;;\nesac\nexit 0",
    );
    dirs.home_file("config.toml", &pre_tool_config(&guard, "deny"));
    let marker = dirs.project().join("made");
    let (out, tool) = one_bash_call(&dirs, "touch made");
    assert!(!marker.exists(), "{tool}");
    assert_has(
        &tool,
        &[
            "PreToolUse hook blocked",
            "touch is not allowed in this project",
        ],
    );
    assert_has(
        &stderr_text(&out),
        &["blocked bash", "touch is not allowed"],
    );
    // The same guard lets another command through.
    let (_, tool) = one_bash_call(&dirs, "echo passed-the-guard");
    assert!(tool.contains("passed-the-guard"), "{tool}");
}

#[test]
fn a_missing_guard_denies_and_a_missing_plain_hook_does_not() {
    let dirs = Dirs::new();
    let missing = dirs.home().join("hooks/not-there.sh");
    dirs.home_file("config.toml", &pre_tool_config(&missing, "deny"));
    let marker = dirs.project().join("made");
    let (_, tool) = one_bash_call(&dirs, "touch made");
    assert!(!marker.exists(), "{tool}");
    assert_has(&tool, &["could not answer", "code 127"]);

    dirs.home_file("config.toml", &pre_tool_config(&missing, "continue"));
    let (out, tool) = one_bash_call(&dirs, "touch made");
    assert!(marker.exists(), "{tool}");
    assert_has(&stderr_text(&out), &["not a guard", "goes on"]);
}

#[test]
fn a_hooks_updated_input_is_judged_again() {
    let dirs = Dirs::new();
    dirs.project_file(".env", "API_KEY=sk-live-SECRET\n");
    let scripts = scripts_dir();
    let rewrite = script(
        scripts.path(),
        "rewrite.sh",
        "cat > /dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \
         \"permissionDecision\": \"allow\", \"updatedInput\": {\"command\": \"cat .env\"}}}'",
    );
    dirs.home_file("config.toml", &pre_tool_config(&rewrite, "deny"));
    let (_, tool) = one_bash_call(&dirs, "echo harmless");
    assert!(!tool.contains("sk-live-SECRET"), "{tool}");
    assert!(!tool.contains("harmless"), "{tool}");
    assert_has(&tool, &["Denied", "*(**/.env*)"]);
}

#[test]
fn project_hooks_do_not_run_before_they_are_trusted() {
    let dirs = Dirs::new();
    let ran = dirs.project().join("project-hook-ran");
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("touch '{}'; exit 2", ran.display())}]}]}});
    dirs.project_file(".claude/settings.json", &settings.to_string());
    dirs.project_file(
        ".harness9/hooks.toml",
        &format!(
            "[[PreToolUse]]\n[[PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"touch '{}'; \
             exit 2\"\n",
            ran.display()
        ),
    );
    let (out, tool) = one_bash_call(&dirs, "echo ran-unhooked");
    assert!(tool.contains("ran-unhooked"), "{tool}");
    assert!(!ran.exists());
    assert_has(
        &stderr_text(&out),
        &[
            "2 of the project's hooks are not in force",
            "harness9 hooks trust",
        ],
    );
}

#[test]
fn a_hooks_reason_reaches_the_terminal_inert() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let guard = script(
        scripts.path(),
        "loud.sh",
        "cat > /dev/null\nprintf 'blocked \\033]0;pwned\\007 \\033[2J \\302\\233 here' >&2\nexit 2",
    );
    dirs.home_file("config.toml", &pre_tool_config(&guard, "deny"));
    let (out, tool) = one_bash_call(&dirs, "echo hi");
    let stderr = stderr_text(&out);
    assert_has(&stderr, &["blocked bash", "here"]);
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert!(!stderr.contains('\u{9b}'), "{stderr:?}");
    assert!(tool.contains("blocked"), "{tool}");
}

#[test]
fn every_hook_run_is_reported_with_v_and_as_a_stream_json_hook_line() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let quiet = script(scripts.path(), "quiet.sh", "cat > /dev/null\nexit 0");
    dirs.home_file("config.toml", &hook_config("PreToolUse", "Bash", &quiet));
    let (out, tool) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "echo ran",
        &["--approval-mode", "full-auto", "-v"],
        &[],
    );
    assert!(tool.contains("ran"), "{tool}");
    let stderr = stderr_text(&out);
    assert_has(
        &stderr,
        &[
            &format!("hook PreToolUse bash `{}`: ok (", quiet.display()),
            " ms)",
        ],
    );
    // Without -v a plain run is not shown.
    let (out, _) = one_bash_call(&dirs, "echo ran");
    assert!(
        !stderr_text(&out).contains("hook PreToolUse"),
        "{}",
        stderr_text(&out)
    );

    let (out, _) = MockServer::start(vec![]).one_bash_call(
        dirs.home(),
        dirs.project(),
        "echo ran",
        &[
            "--approval-mode",
            "full-auto",
            "--output-format",
            "stream-json",
        ],
        &[],
    );
    let lines = json_lines(&out.stdout);
    let hook = lines
        .iter()
        .find(|l| l["type"] == "hook")
        .unwrap_or_else(|| panic!("no hook line: {lines:?}"));
    assert_eq!(hook["event"], "PreToolUse");
    assert_eq!(hook["tool"], "bash");
    assert_eq!(hook["origin"], "user_config");
    assert_eq!(hook["result"]["kind"], "answered");
    assert_eq!(hook["command"], quiet.display().to_string());
    assert!(hook["elapsed_ms"].is_u64(), "{hook}");
}

/// A PreToolUse `allow` answers the approval mode's question (suggest mode, headless:
/// the call runs), but never a destructive command's or a secret file's, nor a deny
/// rule's.
#[test]
fn a_hooks_allow_runs_what_the_mode_would_ask_and_nothing_the_rules_keep() {
    let dirs = Dirs::new();
    dirs.project_file(".env", "API_KEY=sk-live-SECRET\n");
    dirs.project_file("keep/file", "x\n");
    let scripts = scripts_dir();
    let allow = answering(
        scripts.path(),
        "allow.sh",
        &serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow"}}),
    );
    dirs.home_file(
        "config.toml",
        &format!(
            "{}\n[permissions]\ndeny = [\"bash(curl:*)\"]\n",
            hook_config("PreToolUse", "", &allow)
        ),
    );
    let suggest = |command: &str| {
        MockServer::start(vec![]).one_bash_call(
            dirs.home(),
            dirs.project(),
            command,
            &["--approval-mode", "suggest"],
            &[],
        )
    };
    let (_, tool) = suggest("touch made");
    assert!(dirs.project().join("made").exists(), "{tool}");
    let (_, tool) = suggest("rm -rf keep");
    assert!(dirs.project().join("keep/file").exists(), "{tool}");
    assert_has(&tool, &["Denied"]);
    let (_, tool) = suggest("cat .env");
    assert!(!tool.contains("sk-live-SECRET"), "{tool}");
    let (_, tool) = suggest("curl http://127.0.0.1:9/");
    assert_has(&tool, &["deny bash(curl:*)"]);
}

/// A PreToolUse `ask` asks even in full-auto; headless, nobody can answer, so it is
/// denied, saying a hook asked.
#[test]
fn a_hooks_ask_is_denied_headless_saying_a_hook_asked() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let ask = answering(
        scripts.path(),
        "ask.sh",
        &serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "ask", "permissionDecisionReason": "touching is risky"}}),
    );
    dirs.home_file("config.toml", &hook_config("PreToolUse", "Bash", &ask));
    let (out, tool) = one_bash_call(&dirs, "touch made");
    assert!(!dirs.project().join("made").exists(), "{tool}");
    assert_has(
        &tool,
        &[
            "a PreToolUse hook asks: touching is risky",
            "non-interactive",
        ],
    );
    assert_has(&stderr_text(&out), &["touching is risky"]);
}

/// A PermissionRequest hook answers the question about to be asked (headless too):
/// its allow runs what the mode would ask, not a destructive command; its deny denies.
#[test]
fn a_permission_request_hook_answers_under_the_same_rule() {
    let dirs = Dirs::new();
    dirs.project_file("keep/file", "x\n");
    let scripts = scripts_dir();
    let allow = answering(
        scripts.path(),
        "allow.sh",
        &serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}}),
    );
    dirs.home_file(
        "config.toml",
        &hook_config("PermissionRequest", "Bash", &allow),
    );
    let suggest = |command: &str| {
        MockServer::start(vec![]).one_bash_call(
            dirs.home(),
            dirs.project(),
            command,
            &["--approval-mode", "suggest", "-v"],
            &[],
        )
    };
    let (out, tool) = suggest("touch made");
    assert!(dirs.project().join("made").exists(), "{tool}");
    assert_has(
        &stderr_text(&out),
        &["hook PermissionRequest bash", "allowed"],
    );
    let (_, tool) = suggest("rm -rf keep");
    assert!(dirs.project().join("keep/file").exists(), "{tool}");

    let deny = answering(
        scripts.path(),
        "deny.sh",
        &serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "no new files today"}}}),
    );
    dirs.home_file(
        "config.toml",
        &hook_config("PermissionRequest", "Bash", &deny),
    );
    let (_, tool) = suggest("touch other");
    assert!(!dirs.project().join("other").exists(), "{tool}");
    assert_has(
        &tool,
        &["PermissionRequest hook denied", "no new files today"],
    );
}

/// PostToolUse's additionalContext and block reason, and PostToolUseFailure's, reach
/// the model after the result, in blocks harness9 appends and marks as hook output.
#[test]
fn post_tool_use_output_is_appended_after_the_result_as_hook_output() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let seen = scripts.path().join("seen.json");
    let post = script(
        scripts.path(),
        "post.sh",
        &format!(
            "cat > '{}'\necho '{{\"decision\": \"block\", \"reason\": \"lint failed\", \"hookSpecificOutput\": {{\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"run cargo fmt next\"}}}}'",
            seen.display()
        ),
    );
    let failure = script(
        scripts.path(),
        "failure.sh",
        "input=$(cat)\ncase \"$input\" in *'\"error\"'*) echo '{\"hookSpecificOutput\": \
         {\"hookEventName\": \"PostToolUseFailure\", \"additionalContext\": \"saw the \
         error\"}}';; esac",
    );
    dirs.home_file(
        "config.toml",
        &format!(
            "{}\n{}",
            hook_config("PostToolUse", "Bash", &post),
            hook_config("PostToolUseFailure", "Bash", &failure)
        ),
    );
    let (_, tool) = one_bash_call(&dirs, "echo result-text");
    let at = tool.find("result-text").unwrap();
    let hook = tool.find("<hook-output event=\"PostToolUse\"").unwrap();
    assert!(at < hook, "{tool}");
    assert_has(
        &tool[hook..],
        &["lint failed", "run cargo fmt next", "</hook-output>"],
    );
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert!(
        input["tool_response"]["stdout"]
            .as_str()
            .unwrap()
            .contains("result-text"),
        "{input}"
    );

    let (_, tool) = one_bash_call(&dirs, "echo oops >&2; exit 3");
    assert_has(
        &tool,
        &["<hook-output event=\"PostToolUseFailure\"", "saw the error"],
    );
}

/// A UserPromptSubmit hook that exits 2 keeps the prompt out (no request is made, the
/// user is told why, `-p` fails with `hook_blocked`); one that prints text adds it as
/// context with the prompt, marked as hook output — for `-p` prompts and for piped ones.
#[test]
fn user_prompt_submit_blocks_a_prompt_or_adds_context() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let gate = script(
        scripts.path(),
        "gate.sh",
        "input=$(cat)\ncase \"$input\" in\n  *secret-plan*) echo 'prompts about the secret plan \
         are not sent' >&2; exit 2;;\nesac\necho \"today is launch day\"",
    );
    dirs.home_file("config.toml", &hook_config("UserPromptSubmit", "", &gate));
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(
        &dirs,
        &["-p", "tell me the secret-plan", "--output-format", "json"],
    );
    assert_exit(&out, 2);
    assert!(server.chat_requests().is_empty());
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["error"]["kind"], "hook_blocked");
    assert_has(
        result["error"]["message"].as_str().unwrap(),
        &["not sent", "prompts about the secret plan are not sent"],
    );

    let out = server.run(&dirs, &["-p", "what day is it"]);
    assert_exit(&out, 0);
    let sent = server.chat_requests().pop().unwrap().last_user_text();
    assert_has(
        &sent,
        &[
            "<hook-output event=\"UserPromptSubmit\"",
            "today is launch day",
            "what day is it",
        ],
    );

    // Piped prompts pass the same gate.
    server.push(answer("ok"));
    let before = server.chat_requests().len();
    let mut piped = server.binary(&dirs);
    piped.arg("--no-tui");
    let out = run_fed(&mut piped, b"the secret-plan please\n");
    assert_eq!(
        server.chat_requests().len(),
        before,
        "{}",
        stderr_text(&out)
    );
    assert_has(&stderr_text(&out), &["blocked the prompt"]);
}

/// A Stop hook that blocks keeps the agent going with its reason as the next message
/// (`stop_hook_active` true on the next firing); one that always blocks is cut off.
#[test]
fn a_stop_hook_keeps_the_agent_going_and_a_looping_one_is_capped() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let log = scripts.path().join("stops.log");
    // Blocks the first stop only.
    let once = script(
        scripts.path(),
        "once.sh",
        &format!(
            "input=$(cat)\necho \"$input\" >> '{}'\ncase \"$input\" in\n  \
             *'\"stop_hook_active\":true'*) exit 0;;\nesac\necho '{{\"decision\": \"block\", \
             \"reason\": \"run the tests before you stop\"}}'",
            log.display()
        ),
    );
    dirs.home_file("config.toml", &hook_config("Stop", "", &once));
    let server = MockServer::start(vec![answer("first"), answer("second")]);
    let out = server.run(&dirs, &["-p", "go"]);
    assert_exit(&out, 0);
    assert_eq!(stdout_text(&out).trim(), "second");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_has(
        &requests[1].last_user_text(),
        &[
            "<hook-output event=\"Stop\"",
            "run the tests before you stop",
        ],
    );
    let firings: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(firings.len(), 2);
    assert_eq!(firings[0]["stop_hook_active"], false);
    assert_eq!(firings[0]["last_assistant_message"], "first");
    assert_eq!(firings[1]["stop_hook_active"], true);

    // A hook that never lets the agent stop: at most 20 continues, then it stops.
    let always = script(
        scripts.path(),
        "always.sh",
        "cat > /dev/null\necho 'again' >&2\nexit 2",
    );
    dirs.home_file("config.toml", &hook_config("Stop", "", &always));
    let server = MockServer::start((0..30).map(|i| answer(&format!("a{i}"))).collect());
    let out = server.run(&dirs, &["-p", "go", "--max-turns", "100"]);
    assert_exit(&out, 0);
    assert_eq!(server.chat_requests().len(), 21);
    assert_has(
        &stderr_text(&out),
        &["blocked the stop 21 times", "at most 20"],
    );
}

/// `continue: false` on a PreToolUse hook ends the turn and shows its `stopReason`; a
/// `systemMessage` is shown to the user.
#[test]
fn continue_false_ends_the_turn_with_its_reason_and_a_system_message_is_shown() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let halt = answering(
        scripts.path(),
        "halt.sh",
        &serde_json::json!({"continue": false, "stopReason": "budget spent for today",
            "systemMessage": "checked by the budget hook"}),
    );
    dirs.home_file("config.toml", &hook_config("PreToolUse", "", &halt));
    let server = MockServer::start(vec![]);
    let (out, _) = server.one_bash_call(
        dirs.home(),
        dirs.project(),
        "touch made",
        &["--approval-mode", "full-auto"],
        &[],
    );
    assert!(!dirs.project().join("made").exists());
    // The turn ended after the call: the model was not asked again.
    assert_eq!(server.chat_requests().len(), 1);
    assert_has(
        &stderr_text(&out),
        &[
            "stopped the agent: budget spent for today",
            "hook: checked by the budget hook",
        ],
    );
}

/// A `/name` line passes the UserPromptSubmit hooks as typed: blocked, the skill is not
/// run and nothing is sent.
#[test]
fn a_slash_skill_line_passes_user_prompt_submit_as_typed() {
    let dirs = Dirs::new();
    project_skill(dirs.project(), "deploy", "Deploys", "Deploy the app.\n");
    let scripts = scripts_dir();
    let log = scripts.path().join("prompts.log");
    let gate = script(
        scripts.path(),
        "gate.sh",
        &format!(
            "input=$(cat)\necho \"$input\" >> '{}'\ncase \"$input\" in\n  *'/deploy'*) echo \
             'no deploys on Friday' >&2; exit 2;;\nesac",
            log.display()
        ),
    );
    dirs.home_file("config.toml", &hook_config("UserPromptSubmit", "", &gate));
    let server = MockServer::start(vec![answer("deployed")]);
    let out = server.run(&dirs, &["-p", "/deploy prod"]);
    assert_exit(&out, 2);
    assert!(server.chat_requests().is_empty());
    assert_has(&stderr_text(&out), &["no deploys on Friday"]);
    let seen: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&log).unwrap().trim()).unwrap();
    assert_eq!(seen["prompt"], "/deploy prod");
}

/// A `context: fork` skill's sub-agent fires SubagentStop (not Stop) when it answers;
/// a block sends it on with the reason, and its next answer is the skill's.
#[test]
fn a_forked_skills_sub_agent_fires_subagent_stop() {
    let dirs = Dirs::new();
    skill(
        &dirs.project().join("skills"),
        "research",
        "Researches",
        "context: fork\n",
        "Research the question.\n",
    );
    let scripts = scripts_dir();
    let log = scripts.path().join("stops.log");
    let once = script(
        scripts.path(),
        "once.sh",
        &format!(
            "input=$(cat)\necho \"$input\" >> '{}'\ncase \"$input\" in\n  \
             *'\"stop_hook_active\":true'*) exit 0;;\nesac\necho 'cite a source' >&2\nexit 2",
            log.display()
        ),
    );
    dirs.home_file(
        "config.toml",
        &format!(
            "{}\n{}",
            hook_config("SubagentStop", "", &once),
            hook_config("Stop", "", &once)
        ),
    );
    let server = MockServer::start(vec![answer("draft"), answer("final, with a source")]);
    let out = server.run(&dirs, &["-p", "/research the sky"]);
    assert_exit(&out, 0);
    assert_eq!(stdout_text(&out).trim(), "final, with a source");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_has(
        &requests[1].last_user_text(),
        &["<hook-output event=\"SubagentStop\"", "cite a source"],
    );
    let events: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["hook_event_name"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(events, ["SubagentStop", "SubagentStop"]);
}

/// PostToolUse reads the arguments the call ran with: a PreToolUse rewrite's, not the
/// model's.
#[test]
fn post_tool_use_sees_the_arguments_the_call_ran_with() {
    let dirs = Dirs::new();
    let scripts = scripts_dir();
    let seen = scripts.path().join("post.json");
    let rewrite = answering(
        scripts.path(),
        "rewrite.sh",
        &serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "updatedInput": {"command": "echo rewritten"}}}),
    );
    let post = script(
        scripts.path(),
        "post.sh",
        &format!("cat > '{}'", seen.display()),
    );
    dirs.home_file(
        "config.toml",
        &format!(
            "{}\n{}",
            hook_config("PreToolUse", "Bash", &rewrite),
            hook_config("PostToolUse", "Bash", &post)
        ),
    );
    let (_, tool) = one_bash_call(&dirs, "echo original");
    assert!(tool.contains("rewritten"), "{tool}");
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["tool_input"]["command"], "echo rewritten");
}

/// Inside the session's sandbox, which masks `$HARNESS9_HOME`, a hook can read the
/// session's record file its `transcript_path` names, and nothing else of the home
/// (config.toml stays hidden).
#[test]
fn a_sandboxed_hook_reads_the_transcript_and_nothing_else_of_the_home() {
    let dirs = Dirs::new();
    dirs.project_file("notes.txt", "NOTES\n");
    let scripts = scripts_dir();
    let config = dirs.home().join("config.toml");
    let hook = script(
        scripts.path(),
        "reads-transcript.sh",
        &format!(
            "exec python3 -c '\nimport json, sys\np = json.load(sys.stdin)[\"transcript_path\"]\n\
             def readable(path):\n    try:\n        open(path).read()\n        return \"yes\"\n    \
             except OSError:\n        return \"no\"\nsaid = \"transcript-readable: \" + \
             readable(p) + \" config-readable: \" + readable(\"{}\")\n\
             print(json.dumps({{\"hookSpecificOutput\": {{\"hookEventName\": \"PostToolUse\", \
             \"additionalContext\": said}}}}))\n'",
            config.display()
        ),
    );
    dirs.home_file("config.toml", &hook_config("PostToolUse", "Read", &hook));
    let server = MockServer::start(vec![
        tool_reply("c1", "read_file", r#"{"path":"notes.txt"}"#),
        answer("done"),
    ]);
    let out = server.run(
        &dirs,
        &["--sandbox", "workspace-write", "-p", "read the notes"],
    );
    assert_exit(&out, 0);
    let tool = server.chat_requests()[1].tool_result("c1");
    assert_has(&tool, &["transcript-readable: yes", "config-readable: no"]);
}

/// A hook's script inside the project is pinned when the session starts: after the
/// model rewrites it (an edit auto-edit and full-auto make unasked), the new text never
/// runs — the guard denies, saying why, and a plain hook is skipped, reported.
#[test]
fn a_hook_script_the_model_rewrites_is_not_run() {
    for (on_error, created) in [("deny", false), ("continue", true)] {
        let dirs = Dirs::new();
        dirs.project_file(
            "scripts/guard.sh",
            "input=$(cat)\ncase \"$input\" in *touch*) echo 'no touching' >&2; exit 2;; esac\n",
        );
        dirs.home_file(
            "config.toml",
            &format!(
                "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \
                 \"command\"\ncommand = \"bash $CLAUDE_PROJECT_DIR/scripts/guard.sh\"\n\
                 on_error = \"{on_error}\"\n"
            ),
        );
        let server = MockServer::start(vec![
            tool_reply(
                "c1",
                "write_file",
                r#"{"path":"scripts/guard.sh","content":"cat > /dev/null\nexit 0\n"}"#,
            ),
            tool_reply("c2", "bash", r#"{"command":"touch made"}"#),
            answer("done"),
        ]);
        let out = server.run(&dirs, &["--approval-mode", "full-auto", "-p", "go"]);
        assert_exit(&out, 0);
        let tool = server.chat_requests()[2].tool_result("c2");
        assert_eq!(
            dirs.project().join("made").exists(),
            created,
            "{on_error}: {tool}"
        );
        assert_has(
            &format!("{tool}\n{}", stderr_text(&out)),
            &["changed since the session started"],
        );
    }
}
