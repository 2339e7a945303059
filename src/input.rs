//! The one input router shared by the TUI, the REPL and pipe mode: turns a line of user
//! input into a built-in command, a skill invocation or a plain prompt.
