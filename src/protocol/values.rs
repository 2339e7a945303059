//! Plain values that events carry and that their owners compute: a request's [`Cost`]
//! (priced by `cost`), what changed when the skills were looked at again
//! ([`SkillChanges`], found by `skills::reload`) and what `/undo` did ([`UndoOutcome`],
//! done by `undo`), each with the words every frontend shows for it. They live here so
//! the contract imports nothing above it.

use serde::{Deserialize, Serialize};

/// An amount in US dollars, held in millionths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cost(u64);

impl Cost {
    /// From micro-dollars.
    pub fn from_micros(micros: u64) -> Self {
        Cost(micros)
    }

    /// In micro-dollars.
    pub fn micros(self) -> u64 {
        self.0
    }

    /// In dollars.
    pub fn dollars(self) -> f64 {
        self.0 as f64 / 1_000_000.0
    }

    /// The sum.
    pub fn plus(self, other: Cost) -> Cost {
        Cost(self.0.saturating_add(other.0))
    }
}

impl std::fmt::Display for Cost {
    /// `$0.0123` below a dollar, `$12.34` above.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 < 1_000_000 {
            write!(f, "${:.4}", self.dollars())
        } else {
            write!(f, "${:.2}", self.dollars())
        }
    }
}

impl Serialize for Cost {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.dollars())
    }
}

impl<'de> Deserialize<'de> for Cost {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let dollars = f64::deserialize(d)?;
        Ok(Cost((dollars.max(0.0) * 1_000_000.0).round() as u64))
    }
}

/// What changed between two looks at the skills.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SkillChanges {
    /// New skills: name and description.
    pub added: Vec<(String, String)>,
    /// Skills whose folder, description or `SKILL.md` changed: name and description.
    pub changed: Vec<(String, String)>,
    /// Skills that are gone.
    pub removed: Vec<String>,
}

impl SkillChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }

    /// The note the model gets: `skills changed: + name: description; ~ name: …; − name`.
    pub fn note(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let short = |d: &str| {
            let one_line = d.split_whitespace().collect::<Vec<_>>().join(" ");
            if one_line.chars().count() > 160 {
                let cut: String = one_line.chars().take(159).collect();
                format!("{cut}…")
            } else {
                one_line
            }
        };
        for (name, description) in &self.added {
            parts.push(format!("+ {name}: {}", short(description)));
        }
        for (name, description) in &self.changed {
            parts.push(format!("~ {name}: {}", short(description)));
        }
        for name in &self.removed {
            parts.push(format!("− {name}"));
        }
        format!(
            "[skills changed since the list in the system prompt: {}. Load a changed skill again \
             with use_skill to see its new instructions.]",
            parts.join("; ")
        )
    }
}

/// What a frontend says after skills were looked at again; `None` when a look before a
/// turn found nothing.
pub fn describe_reload(
    changes: &SkillChanges,
    skills: usize,
    trigger: super::ReloadTrigger,
) -> Option<String> {
    let count = match skills {
        1 => "1 skill".to_string(),
        n => format!("{n} skills"),
    };
    if changes.is_empty() {
        return (trigger == super::ReloadTrigger::Asked)
            .then(|| format!("Skills are up to date ({count})."));
    }
    let mut parts: Vec<String> = Vec::new();
    parts.extend(changes.added.iter().map(|(n, _)| format!("+ {n}")));
    parts.extend(changes.changed.iter().map(|(n, _)| format!("~ {n}")));
    parts.extend(changes.removed.iter().map(|n| format!("− {n}")));
    Some(format!(
        "Skills changed: {} (now {count}); the model hears of it with the next message.",
        parts.join(", ")
    ))
}

/// What `/undo` did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UndoOutcome {
    /// The last turn's changes were put back.
    Restored {
        /// Files put back as they were (changed or deleted by the turn).
        restored: Vec<String>,
        /// Files the turn created, removed.
        removed: Vec<String>,
        /// Folders the turn created, removed once empty.
        removed_folders: Vec<String>,
    },
    /// No turn of this session changed a file, or every one that did was undone.
    NothingToUndo {
        /// Turns undone earlier in this session.
        undone_before: usize,
    },
    /// Nothing was touched, because of these files.
    Refused {
        /// Files changed after the turn ended.
        changed_since: Vec<String>,
        /// Files the turn changed that were too large to keep.
        too_large: Vec<String>,
        /// Files and folders to put back with a symbolic link standing on the way now
        /// (or where a folder the turn created was): it could lead out of the project,
        /// so nothing is put back through it.
        links_on_the_way: Vec<String>,
    },
}

impl UndoOutcome {
    /// Files larger than this are pictured without their content, so a change to one
    /// cannot be undone (`undo::manifest` keeps to it).
    pub const MAX_KEPT_FILE_BYTES: u64 = 16 * 1024 * 1024;

    /// What every frontend says about it.
    pub fn describe(&self) -> String {
        let list = |paths: &[String]| {
            let mut shown: Vec<&str> = paths.iter().take(20).map(String::as_str).collect();
            if paths.len() > 20 {
                shown.push("…");
            }
            shown.join(", ")
        };
        match self {
            UndoOutcome::Restored {
                restored,
                removed,
                removed_folders,
            } => {
                let mut parts = Vec::new();
                if !restored.is_empty() {
                    parts.push(format!("put back {} file(s): {}", restored.len(), list(restored)));
                }
                if !removed.is_empty() {
                    parts.push(format!("removed {} file(s) it created: {}", removed.len(), list(removed)));
                }
                if !removed_folders.is_empty() {
                    parts.push(format!(
                        "removed {} empty folder(s) it created: {}",
                        removed_folders.len(),
                        list(removed_folders)
                    ));
                }
                format!("Undid the last turn's changes: {}.", parts.join("; "))
            }
            UndoOutcome::NothingToUndo { undone_before: 0 } => {
                "Nothing to undo: no turn of this session changed a file (ignored files are not tracked).".to_string()
            }
            UndoOutcome::NothingToUndo { undone_before } => format!(
                "Nothing left to undo: the {} that changed files {} undone already (ignored files are not tracked).",
                if *undone_before == 1 { "turn".to_string() } else { format!("{undone_before} turns") },
                if *undone_before == 1 { "was" } else { "were" }
            ),
            UndoOutcome::Refused {
                changed_since,
                too_large,
                links_on_the_way,
            } => {
                let mut why = Vec::new();
                if !changed_since.is_empty() {
                    why.push(format!(
                        "files changed since the turn ended, so undoing would lose those changes: {}",
                        list(changed_since)
                    ));
                }
                if !too_large.is_empty() {
                    why.push(format!(
                        "files too large to have been kept (over {} MB): {}",
                        UndoOutcome::MAX_KEPT_FILE_BYTES / (1024 * 1024),
                        list(too_large)
                    ));
                }
                if !links_on_the_way.is_empty() {
                    why.push(format!(
                        "a symbolic link stands on the way now to {} (it could lead out of the project); nothing was put back through it",
                        list(links_on_the_way)
                    ));
                }
                format!("Nothing was undone; {}.", why.join("; "))
            }
        }
    }
}

/// A user message the conversation can be rewound to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RewindPoint {
    /// Its turn.
    pub turn: u64,
    /// What the user typed.
    pub text: String,
    /// The files that turn and the later ones changed (rewinding puts them back).
    pub files: Vec<String>,
}

/// What every frontend says after a rewind: the conversation, then the files (every
/// turn's put back together, then what could not be).
pub fn describe_rewind(files: &[UndoOutcome]) -> String {
    let mut said = "Rewound the conversation to before that message; it is back in the \
                    composer to edit and send."
        .to_string();
    let (mut restored, mut removed, mut removed_folders) = (Vec::new(), Vec::new(), Vec::new());
    let mut refused = None;
    for outcome in files {
        match outcome {
            UndoOutcome::Restored {
                restored: r,
                removed: m,
                removed_folders: f,
            } => {
                restored.extend(r.iter().cloned());
                removed.extend(m.iter().cloned());
                removed_folders.extend(f.iter().cloned());
            }
            UndoOutcome::Refused { .. } => refused = Some(outcome),
            UndoOutcome::NothingToUndo { .. } => {}
        }
    }
    if restored.is_empty() && removed.is_empty() && removed_folders.is_empty() {
        if refused.is_none() {
            said.push_str(" No file had changed since.");
        }
    } else {
        for list in [&mut restored, &mut removed, &mut removed_folders] {
            list.sort();
            list.dedup();
        }
        let merged = UndoOutcome::Restored {
            restored,
            removed,
            removed_folders,
        }
        .describe();
        said.push(' ');
        said.push_str(&merged.replacen(
            "Undid the last turn's changes",
            "Files changed since were put back",
            1,
        ));
    }
    if let Some(refused) = refused {
        said.push_str(" Files of an earlier turn were left as they are: ");
        said.push_str(&refused.describe());
    }
    said
}
