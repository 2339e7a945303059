//! The catalog: every skill discovered at start-up, split into winners (one per name, by
//! root precedence), shadowed skills and invalid files, with the warnings to show. It
//! owns precedence and the read of each `SKILL.md`'s frontmatter (never its body).

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;

use super::discovery::{Site, Walker};
use super::frontmatter::{self, ParseNote};
use super::warning::{SkillWarning, WarningKind};
use super::{DiscoveryOptions, Skill, SkillRoot, SkillStatus};

/// A `SKILL.md` that could not be loaded as a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSkill {
    /// The file.
    pub path: PathBuf,
    /// The root it was found under.
    pub root: SkillRoot,
    /// Why it was skipped (also in the warnings).
    pub reason: WarningKind,
}

/// What discovery cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    /// Roots that exist and were searched.
    pub roots_searched: usize,
    /// Directories listed.
    pub dirs_visited: usize,
    /// `SKILL.md` files opened.
    pub files_read: usize,
    /// Bytes read from `SKILL.md` files (frontmatter only).
    pub bytes_read: u64,
}

/// The skills of a session.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    skills: Vec<Skill>,
    shadowed: Vec<Skill>,
    invalid: Vec<InvalidSkill>,
    warnings: Vec<SkillWarning>,
    stats: DiscoveryStats,
}

impl Catalog {
    /// Searches every root in precedence order. Never fails: problems become warnings.
    pub fn discover(options: &DiscoveryOptions) -> Catalog {
        let roots = options.roots();
        let mut found: Vec<Skill> = Vec::new();
        let mut invalid: Vec<InvalidSkill> = Vec::new();
        let mut notes: Vec<SkillWarning> = Vec::new();
        let mut stats = DiscoveryStats::default();
        let mut bytes_read = 0u64;
        let mut files_read = 0usize;
        let mut visit = |site: Site| {
            files_read += 1;
            let Some(root) = roots.get(site.root_index) else {
                return;
            };
            match load(site, root, &mut bytes_read, &mut notes) {
                Ok(skill) => found.push(skill),
                Err(bad) => invalid.push(bad),
            }
        };
        let mut walker = Walker::new(&mut visit);
        for (i, root) in roots.iter().enumerate() {
            stats.roots_searched += usize::from(root.path.is_dir());
            walker.walk_root(&root.path, i);
        }
        let mut warnings = std::mem::take(&mut walker.warnings);
        stats.dirs_visited = walker.dirs_visited;
        drop(walker);
        stats.bytes_read = bytes_read;
        stats.files_read = files_read;
        warnings.append(&mut notes);
        Catalog::assemble(found, invalid, warnings, stats)
    }

    fn assemble(
        found: Vec<Skill>,
        invalid: Vec<InvalidSkill>,
        mut warnings: Vec<SkillWarning>,
        stats: DiscoveryStats,
    ) -> Catalog {
        let mut winners: Vec<Skill> = Vec::new();
        let mut shadowed: Vec<Skill> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for mut skill in found {
            match by_name.get(&skill.name) {
                Some(&i) => {
                    let winner = winners[i].path.clone();
                    warnings.push(SkillWarning {
                        path: skill.path.clone(),
                        kind: WarningKind::Shadowed {
                            name: skill.name.clone(),
                            winner: winner.clone(),
                        },
                    });
                    skill.status = SkillStatus::Shadowed { by: winner };
                    shadowed.push(skill);
                }
                None => {
                    by_name.insert(skill.name.clone(), winners.len());
                    winners.push(skill);
                }
            }
        }
        winners.sort_by(|a, b| a.name.cmp(&b.name));
        for skill in &winners {
            if crate::input::is_builtin(&skill.name) {
                warnings.push(SkillWarning {
                    path: skill.path.clone(),
                    kind: WarningKind::BuiltinCollision {
                        name: skill.name.clone(),
                    },
                });
            }
        }
        Catalog {
            skills: winners,
            shadowed,
            invalid,
            warnings,
            stats,
        }
    }

    /// A catalog with no skills.
    pub fn empty() -> Catalog {
        Catalog::default()
    }

    /// The winning skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The winning skill with this name.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.skills[i])
    }

    /// Skills that lost to a higher-precedence skill of the same name, in discovery order.
    pub fn shadowed(&self) -> &[Skill] {
        &self.shadowed
    }

    /// `SKILL.md` files that could not be loaded, in discovery order.
    pub fn invalid(&self) -> &[InvalidSkill] {
        &self.invalid
    }

    /// Every problem found, roots first, then files, then precedence and collisions.
    pub fn warnings(&self) -> &[SkillWarning] {
        &self.warnings
    }

    /// True when there is no winning skill.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// What discovery read.
    pub fn stats(&self) -> DiscoveryStats {
        self.stats
    }

    /// Names of the winners that may be slash-invoked (`user-invocable` not false).
    pub fn user_invocable_names(&self) -> impl Iterator<Item = &str> {
        self.skills
            .iter()
            .filter(|s| s.user_invocable())
            .map(|s| s.name.as_str())
    }

    /// Names of the winners the model may load (`disable-model-invocation` not true).
    pub fn model_invocable_names(&self) -> impl Iterator<Item = &str> {
        self.skills
            .iter()
            .filter(|s| s.model_invocable())
            .map(|s| s.name.as_str())
    }
}

/// Reads a site's frontmatter into a skill (or says why it cannot be one).
fn load(
    site: Site,
    root: &SkillRoot,
    bytes_read: &mut u64,
    notes: &mut Vec<SkillWarning>,
) -> Result<Skill, InvalidSkill> {
    let Site {
        dir,
        path,
        mut file,
        ..
    } = site;
    let invalid = |reason: WarningKind, notes: &mut Vec<SkillWarning>| {
        notes.push(SkillWarning {
            path: path.clone(),
            kind: reason.clone(),
        });
        InvalidSkill {
            path: path.clone(),
            root: root.clone(),
            reason,
        }
    };
    let head = match frontmatter::read_head(&mut file as &mut dyn Read, bytes_read) {
        Ok(h) => h,
        Err(frontmatter::HeadError::Io(e)) => {
            return Err(invalid(
                WarningKind::Unreadable {
                    error: e.to_string(),
                },
                notes,
            ));
        }
        Err(e) => {
            return Err(invalid(
                WarningKind::BadFrontmatter {
                    reason: e.to_string(),
                },
                notes,
            ));
        }
    };
    let (fm, parse_notes) = frontmatter::parse(&head.yaml);
    let mut own: Vec<SkillWarning> = parse_notes
        .into_iter()
        .map(|n| SkillWarning {
            path: path.clone(),
            kind: match n {
                ParseNote::Fallback { error, field } => WarningKind::YamlFallback { error, field },
                ParseNote::BadField { field, expected } => {
                    WarningKind::BadField { field, expected }
                }
            },
        })
        .collect();
    let name = fm.name.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let description = fm.description.as_deref().filter(|s| !s.trim().is_empty());
    let (name, description) = match (name, description) {
        (Some(n), Some(d)) => (n.to_string(), d.to_string()),
        (None, _) => {
            notes.append(&mut own);
            return Err(invalid(WarningKind::MissingField { field: "name" }, notes));
        }
        (_, None) => {
            notes.append(&mut own);
            return Err(invalid(
                WarningKind::MissingField {
                    field: "description",
                },
                notes,
            ));
        }
    };
    let status = if own.is_empty() {
        SkillStatus::Ok
    } else {
        SkillStatus::Warning
    };
    notes.append(&mut own);
    Ok(Skill {
        name,
        description,
        dir,
        path,
        root: root.clone(),
        frontmatter: fm,
        status,
    })
}
