//! The one vocabulary of a subcommand's failure (`harness9 skills|sessions|artifacts|
//! permissions|mcp …`): every subcommand's error says which [`Kind`] of failure it is,
//! and `main` alone turns the kind into an exit code and writes the error to stderr
//! (the table is in docs/HEADLESS.md). Standard output carries only results.
//!
//! It is a leaf: it must not know any subcommand, clap, exit codes or how an error is
//! shown.

/// What kind of failure ended a subcommand. Every subcommand's error type maps each of
/// its cases to one of these, so the same failure means the same to a script whichever
/// subcommand it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// What was typed cannot be used: a malformed argument, an id that matches several
    /// things, a name that may not be written.
    Usage,
    /// What was typed names nothing there is: no such skill, session, artifact, server
    /// or path.
    NotFound,
    /// The command ran and its answer is "no": a check found problems, a listing is
    /// incomplete, a change was made but not all of it took. What was found is on
    /// stdout.
    Failed,
    /// Something broke that the user did not ask for: a file or the output could not
    /// be read or written, a server failed.
    Internal,
}
