//! harness9: a terminal coding agent for any OpenAI-compatible endpoint, with Agent Skills.
//!
//! The core (`agent`, `llm`, `tools`, `exec`, `skills`, `prompt`, `config`, `protocol`,
//! `input`, `session`, `truncate`) never touches the terminal; the frontends (`tui`, `repl`, `print`, `acp`) send
//! [`protocol::Op`]s and render [`protocol::Event`]s. `main.rs` turns arguments into a
//! mode, runs a subcommand ([`commands`]) or a session in a frontend ([`launch`]), and
//! alone maps their errors to exit codes. Whatever the frontends outside
//! the TUI write passes through [`safe_text`], so untrusted text cannot steer a terminal.

pub mod acp;
pub mod agent;
pub mod agents;
pub mod artifacts;
pub mod capped_line;
pub mod cli;
pub mod commands;
pub mod config;
pub mod cost;
pub mod exec;
pub mod hooks;
pub mod http;
pub mod images;
pub mod input;
pub mod instructions;
pub mod launch;
pub mod llm;
pub mod mcp;
pub mod mentions;
pub mod nofollow;
pub mod paths;
pub mod permissions;
pub mod plain_file;
pub mod plugins;
pub mod print;
pub mod private_files;
pub mod project_root;
pub mod project_walk;
pub mod prompt;
pub mod protocol;
pub mod redact;
pub mod repl;
pub mod safe_text;
pub mod sandbox;
pub mod session;
pub mod sessions;
pub mod signals;
pub mod sink;
#[cfg(test)]
pub(crate) mod test_support;

pub mod skills;
pub mod startup;
pub mod subcommand;
pub mod text_table;
pub mod tools;
pub mod truncate;
pub mod tui;
pub mod undo;
