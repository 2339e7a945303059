//! The built-in slash commands every frontend offers (`/help`, `/skills`, `/clear`, …):
//! their names and one-line descriptions. The input router reads a typed line against
//! them, and a skill named like one is flagged, so both take the list from here.

/// Built-in commands: name (without `/`) and a one-line description.
pub const BUILTINS: &[(&str, &str)] = &[
    ("help", "Show commands and skills"),
    ("skills", "List the skills; /skills reload looks again"),
    ("skill", "Run a skill: /skill NAME [args]"),
    ("clear", "Start a new conversation"),
    (
        "init",
        "Propose an AGENTS.md for this project; you approve it as a diff: /init [guidance]",
    ),
    (
        "compact",
        "Summarize the conversation to free context: /compact [focus]",
    ),
    (
        "resume",
        "Go on with a saved session: /resume [ID] (no ID: choose from a list)",
    ),
    (
        "export",
        "Write this session to a file: /export [md|json] [FILE]",
    ),
    (
        "model",
        "List each provider's models, or switch: /model [PROVIDER/]MODEL",
    ),
    (
        "effort",
        "Show the reasoning effort, or set it: /effort low|medium|high|off",
    ),
    (
        "permissions",
        "List the permission rules, or remove one: /permissions [remove N]",
    ),
    (
        "approvals",
        "Show the approval mode, or switch: /approvals suggest|auto-edit|full-auto|plan",
    ),
    (
        "plan",
        "Plan mode (read-only; the plan is approved with exit_plan): /plan [task]",
    ),
    ("diff", "Show what this session changed in the project"),
    (
        "undo",
        "Put back the files the last turn changed (commands' changes too)",
    ),
    ("mcp", "List the MCP servers, their state and prompts"),
    (
        "plugins",
        "List the plugins, whether each is trusted and what it contributes",
    ),
    (
        "hooks",
        "List the hooks by event: in force or not, guard or not, and their files",
    ),
    ("usage", "Show token usage for this session"),
    (
        "status",
        "Show the model, provider, context window, approvals, sandbox, session and tokens",
    ),
    (
        "context",
        "Show the instruction files, skill roots, MCP index and what a request costs",
    ),
    ("exit", "Quit"),
    ("quit", "Quit"),
];

/// True when `name` is a built-in command.
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.iter().any(|(n, _)| *n == name)
}
