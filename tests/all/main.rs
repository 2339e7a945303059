//! Every integration test, in one binary: each module below was a test binary of its own,
//! and each of those linked the whole crate; one binary links it once. The modules share
//! the helpers in `tests/support` (the scripted server, the session builder, the file and
//! skill fixtures) and must not touch process-wide state (environment, current
//! directory, signal handlers): they run side by side in this one process. Run one
//! module with `cargo test --test all agent::`; the corpus tests, `#[ignore]`d, with
//! `cargo test --test all -- --ignored skills_corpus:: skills_cache::` (as `.ci/run`
//! does).

#[path = "../support/mod.rs"]
mod support;

mod acp;
mod acp_editor;
mod acp_sdk;
mod acp_session;
mod agent;
mod agents_cli;
mod agents_fixtures;
mod agents_run;
mod architecture;
mod artifacts;
mod child_env;
mod ci_action;
mod ci_contracts;
mod cli_errors;
mod commands;
mod context;
mod context_command;
mod effort;
mod failed_turn;
mod file_links;
mod file_modes;
mod habits;
mod hooks;
mod hooks_matrix;
mod hooks_plugins;
mod hooks_session;
mod hooks_trust;
mod images;
mod images_frontends;
mod init;
mod instructions;
mod key_hidden;
mod learned;
mod link_order;
mod listings;
mod llm_client;
mod locks;
mod long_lines;
mod mcp;
mod mcp_cli;
mod mentions;
mod nested_instructions;
mod permissions;
mod plan_mode;
mod plugins;
mod print_e2e;
mod project_root;
mod prompt_cache;
mod providers;
mod reasoning;
mod redaction;
mod remote_skills;
mod repl_e2e;
mod responses_wire;
mod sandbox;
mod sessions_cli;
mod sessions_resume;
mod shell_attacks;
mod signals;
mod skill_tools;
mod skills_act;
mod skills_cache;
mod skills_cli;
mod skills_corpus;
mod special_files;
mod stream_json_input;
mod terminal_safety;
mod tui_e2e;
mod undo;
mod update_plan;
mod user_shell;
mod web_fetch;
mod web_search;
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "../../src/tools/web_test_server.rs"]
mod web_server;
mod window;
