//! MCP servers, loaded like skills. A configured server ([`config`]) is one line in the
//! system prompt ([`index`]); the model loads it with `use_skill("mcp:NAME")`, which
//! starts it when needed ([`manager`], through the official SDK: [`connection`]) and adds
//! its tools to the tool list ([`tools`]), named `mcp__NAME__TOOL` ([`names`]) with
//! schemas providers accept ([`schema`]); `unload_skill` takes them away. Results become
//! text ([`content`]). What a server said of itself is remembered between runs
//! ([`cache`]) so nothing has to start for the prompt or the slash-command popup.
//! Prompts become slash commands ([`prompts`]); `harness9 mcp …` is [`cli`], which
//! edits config files through [`edit`].
//!
//! A server is remote, untrusted text: its prompts never go through the skill pipeline's
//! inline commands or templates, and what frontends show of it is neutralized there.
//! The module must not know the agent loop or terminals.

pub mod cache;
pub mod cli;
pub mod config;
pub mod connection;
pub mod content;
pub mod edit;
pub mod index;
pub mod listing;
pub mod manager;
pub mod names;
pub mod prompts;
pub mod schema;
#[cfg(test)]
pub(crate) mod tests;
pub mod tools;

pub use config::{McpServerConfig, McpSetup};
pub use connection::{ConnectContext, McpError, Request};
pub use manager::{McpServers, ServerState, ServerStatus};
