//! Helpers shared by the TUI's unit tests: a catalog with one skill on disk, a
//! session description, a finished turn, the text of rendered lines and of a drawn
//! test terminal, so widget tests need no agent and no real terminal.

use std::path::PathBuf;

use ratatui::backend::TestBackend;
use ratatui::text::Line;
use ratatui::{Frame, Terminal};

use crate::agent::SessionInfo;
use crate::protocol::ApprovalMode;
use crate::protocol::{Event, SlashCommands, TurnOutcome, Usage};
use crate::skills::{Catalog, DiscoveryOptions};

/// A temporary project with a `go-refactor` skill, and its catalog.
pub fn catalog_with_skill() -> (tempfile::TempDir, Catalog) {
    let dir = crate::test_support::temp_tree(&[(
        "skills/go-refactor/SKILL.md",
        "---\nname: go-refactor\ndescription: Refactor Go code the team's way\nargument-hint: \"[goal] [file]\"\n---\nRefactor: $ARGUMENTS\n",
    )]);
    let catalog = Catalog::discover(&DiscoveryOptions {
        flag_dirs: Vec::new(),
        workdir: dir.path().to_path_buf(),
        project_root: std::path::PathBuf::new(),
        harness9_home: dir.path().join("home"),
        user_home: None,
        remote_dirs: Vec::new(),
        plugins: Vec::new(),
    });
    (dir, catalog)
}

/// The slash commands of `catalog`'s skills, with no MCP servers.
pub fn commands(catalog: &Catalog) -> SlashCommands {
    SlashCommands {
        skills: crate::skills::listing::slash_skills(catalog),
        ..SlashCommands::default()
    }
}

/// A session description for tests.
pub fn session_info(catalog: Catalog) -> SessionInfo {
    SessionInfo {
        model: "test-model".into(),
        workdir: PathBuf::from("/work/demo"),
        home: PathBuf::from("/nonexistent/harness9-home"),
        approval_mode: ApprovalMode::Suggest,
        commands: commands(&catalog),
        context_window: Some(100_000),
        startup_warnings: Vec::new(),
        images: crate::images::ImageIntake::Accept { max_bytes: 1 << 20 },
    }
}

/// What `/skills` lists for `catalog` (nothing loaded, the default budget), as the
/// agent would answer [`crate::protocol::Op::ListSkills`].
pub fn skill_list(catalog: &Catalog) -> Event {
    Event::SkillList(crate::skills::listing::listing(catalog, 8_000, &[]))
}

/// The event that ends a turn which completed normally after one request.
pub fn complete() -> Event {
    Event::TurnComplete {
        outcome: TurnOutcome::Completed,
        final_text: Default::default(),
        usage: Usage::default(),
        requests: 1,
    }
}

/// The text of each line, without styles.
pub fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// What `render` draws on a test terminal of `width` x `height`, as text.
pub fn drawn(width: u16, height: u16, render: impl FnOnce(&mut Frame)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(render).unwrap();
    terminal.backend().to_string()
}

/// A buffer's rows as text, trailing spaces trimmed.
pub fn buffer_rows(buf: &ratatui::buffer::Buffer) -> Vec<String> {
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}
