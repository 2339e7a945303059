//! The skills index appended to the system prompt: one line per model-invocable skill,
//! in name order, within a character budget. Over budget, descriptions are shortened in
//! proportion to their length; names are dropped (from the end) only when the names
//! alone do not fit. The output depends only on the catalog and the budget, so the
//! prompt is byte-identical across turns and runs. It knows nothing of the prompt
//! builder or the model.

use std::borrow::Cow;

use super::{Catalog, Skill};

/// The first two lines of the index section.
pub const INDEX_HEADER: &str = "## Available Skills\nUse the `use_skill` tool to load the full \
                                content of any skill when needed.";

/// The index budget in characters when the model's context window is unknown.
pub const DEFAULT_INDEX_BUDGET: usize = 8_000;

/// The index section for the system prompt, and what fitting it in the budget cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillIndex {
    /// The whole section starting `## Available Skills` (no trailing newline); `None`
    /// when no skill is model-invocable (then leave out both the section and use_skill).
    pub text: Option<String>,
    /// Names of skills whose description was shortened (or left out) to fit.
    pub shortened: Vec<String>,
    /// Names left out entirely because even the names alone did not fit.
    pub dropped: Vec<String>,
    /// Characters used by `text` (Unicode scalar values).
    pub used_chars: usize,
    /// The budget it was fitted to.
    pub budget_chars: usize,
}

impl SkillIndex {
    /// One line for the user when fitting the budget cost anything, else `None`.
    pub fn warning(&self) -> Option<String> {
        if self.shortened.is_empty() && self.dropped.is_empty() {
            return None;
        }
        let mut msg = format!(
            "skills index is over its budget of {} characters: ",
            self.budget_chars
        );
        if !self.shortened.is_empty() {
            msg.push_str(&format!(
                "{} description(s) shortened ({})",
                self.shortened.len(),
                preview(&self.shortened)
            ));
        }
        if !self.dropped.is_empty() {
            if !self.shortened.is_empty() {
                msg.push_str("; ");
            }
            msg.push_str(&format!(
                "{} skill(s) left out ({})",
                self.dropped.len(),
                preview(&self.dropped)
            ));
        }
        msg.push_str(
            "; raise `skills_index_budget` in config.toml, or remove skills you do not use",
        );
        Some(msg)
    }
}

fn preview(names: &[String]) -> String {
    let mut s = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 5 {
        s.push_str(", …");
    }
    s
}

/// The index budget: `configured` when set, else 1% of the context window at about four
/// characters per token, else [`DEFAULT_INDEX_BUDGET`].
pub fn index_budget(context_window_tokens: Option<u64>, configured: Option<usize>) -> usize {
    if let Some(c) = configured {
        return c;
    }
    match context_window_tokens {
        Some(t) if t > 0 => usize::try_from(t.saturating_mul(4) / 100).unwrap_or(usize::MAX),
        _ => DEFAULT_INDEX_BUDGET,
    }
}

pub struct Entry<'a> {
    name: &'a str,
    description: Cow<'a, str>,
    name_chars: usize,
    desc_chars: usize,
}

impl Catalog {
    /// Builds the index within `budget_chars` characters.
    pub fn index(&self, budget_chars: usize) -> SkillIndex {
        let entries: Vec<Entry<'_>> = self
            .skills()
            .iter()
            .filter(|s| s.model_invocable())
            .map(entry)
            .collect();
        build(&entries, budget_chars)
    }
}

fn entry(skill: &Skill) -> Entry<'_> {
    let d = skill.description.as_str();
    let one_line = !d.contains(['\n', '\r', '\t']) && !d.contains("  ") && d.trim() == d;
    let description = if one_line {
        Cow::Borrowed(d)
    } else {
        Cow::Owned(skill.one_line_description())
    };
    Entry {
        name: &skill.name,
        name_chars: skill.name.chars().count(),
        desc_chars: description.chars().count(),
        description,
    }
}

fn build(entries: &[Entry<'_>], budget: usize) -> SkillIndex {
    fit(INDEX_HEADER, entries, budget)
}

/// One line of an index section: a name and its description on one line.
pub type IndexEntry<'a> = Entry<'a>;

impl<'a> Entry<'a> {
    /// An entry for `name`, its description made one line (whitespace runs collapsed).
    pub fn new(name: &'a str, description: &'a str) -> Self {
        let d = description;
        let one_line = !d.contains(['\n', '\r', '\t']) && !d.contains("  ") && d.trim() == d;
        let description = if one_line {
            Cow::Borrowed(d)
        } else {
            Cow::Owned(d.split_whitespace().collect::<Vec<_>>().join(" "))
        };
        Entry {
            name,
            name_chars: name.chars().count(),
            desc_chars: description.chars().count(),
            description,
        }
    }
}

/// An index section under `header` (its first lines) for `entries`, in the order
/// given, fitted to `budget` characters as the skills index is: descriptions shortened
/// in proportion to their length, names dropped from the end only when the names
/// alone do not fit. Another index (the agents') shares the rule.
pub fn fit(header: &str, entries: &[Entry<'_>], budget: usize) -> SkillIndex {
    let mut index = SkillIndex {
        text: None,
        shortened: Vec::new(),
        dropped: Vec::new(),
        used_chars: 0,
        budget_chars: budget,
    };
    if entries.is_empty() {
        return index;
    }
    let header_text = header;
    let header = header_text.chars().count();
    // "\n- " + name, and ": " + description when there is one.
    let names_only: usize = header + entries.iter().map(|e| 3 + e.name_chars).sum::<usize>();
    let with_colons = names_only + 2 * entries.len();
    let full = with_colons + entries.iter().map(|e| e.desc_chars).sum::<usize>();

    let mut lines: Vec<String> = Vec::with_capacity(entries.len());
    if full <= budget {
        lines.extend(
            entries
                .iter()
                .map(|e| format!("- {}: {}", e.name, e.description)),
        );
    } else if with_colons < budget {
        let available = (budget - with_colons) as u128;
        let total = entries
            .iter()
            .map(|e| e.desc_chars as u128)
            .sum::<u128>()
            .max(1);
        for e in entries {
            let target = usize::try_from(e.desc_chars as u128 * available / total).unwrap_or(0);
            if target >= e.desc_chars {
                lines.push(format!("- {}: {}", e.name, e.description));
                continue;
            }
            index.shortened.push(e.name.to_string());
            if target < 2 {
                lines.push(format!("- {}", e.name));
            } else {
                lines.push(format!("- {}: {}", e.name, shorten(&e.description, target)));
            }
        }
    } else {
        let mut used = header;
        for e in entries {
            if used + 3 + e.name_chars <= budget {
                used += 3 + e.name_chars;
                lines.push(format!("- {}", e.name));
                index.shortened.push(e.name.to_string());
            } else {
                index.dropped.push(e.name.to_string());
            }
        }
        if names_only > budget && lines.is_empty() {
            return index;
        }
    }
    let mut text = String::with_capacity(budget.min(full) + 16);
    text.push_str(header_text);
    for line in &lines {
        text.push('\n');
        text.push_str(line);
    }
    index.used_chars = text.chars().count();
    index.text = Some(text);
    index
}

/// The first `max - 1` characters (trailing spaces removed) and an ellipsis.
fn shorten(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    let kept = out.trim_end().len();
    out.truncate(kept);
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_contains;

    fn entries(items: &[(&'static str, &str)]) -> Vec<Entry<'static>> {
        items
            .iter()
            .map(|(n, d)| Entry {
                name: n,
                description: Cow::Owned(d.to_string()),
                name_chars: n.chars().count(),
                desc_chars: d.chars().count(),
            })
            .collect()
    }

    #[test]
    fn exact_form_within_budget() {
        let e = entries(&[
            (
                "go-refactor",
                "Use when refactoring Go code — team conventions and patterns",
            ),
            ("testing-guide", "Use when writing or reviewing tests"),
        ]);
        let idx = build(&e, 8_000);
        assert_eq!(
            idx.text.as_deref(),
            Some(
                "## Available Skills\nUse the `use_skill` tool to load the full content of any \
                 skill when needed.\n- go-refactor: Use when refactoring Go code — team \
                 conventions and patterns\n- testing-guide: Use when writing or reviewing tests"
            )
        );
        assert!(idx.shortened.is_empty());
        assert_eq!(idx.used_chars, idx.text.as_ref().unwrap().chars().count());
    }

    #[test]
    fn empty_catalog_has_no_section() {
        assert_eq!(build(&[], 8_000).text, None);
    }

    #[test]
    fn over_budget_shortens_proportionally_and_keeps_every_name() {
        let long = "a".repeat(400);
        let short = "b".repeat(100);
        let e = entries(&[("alpha", &long), ("beta", &short)]);
        let budget = INDEX_HEADER.chars().count() + 3 + 5 + 2 + 3 + 4 + 2 + 250;
        let idx = build(&e, budget);
        let text = idx.text.clone().unwrap();
        assert!(idx.used_chars <= budget, "{} > {budget}", idx.used_chars);
        assert_eq!(idx.shortened, vec!["alpha", "beta"]);
        let lines: Vec<&str> = text.lines().skip(2).collect();
        let a = lines[0].trim_start_matches("- alpha: ").chars().count();
        let b = lines[1].trim_start_matches("- beta: ").chars().count();
        assert_eq!((a, b), (200, 50), "descriptions keep their 4:1 ratio");
        assert!(lines[0].ends_with('…'));
        let w = idx.warning().unwrap();
        assert_contains(&w, "2 description(s) shortened (alpha, beta)");
        assert_eq!(build(&e, 8_000).warning(), None);
    }

    #[test]
    fn names_alone_when_descriptions_cannot_fit() {
        let e = entries(&[("alpha", "x y z"), ("beta", "more words")]);
        let budget = INDEX_HEADER.chars().count() + 3 + 5 + 3 + 4;
        let idx = build(&e, budget);
        assert_eq!(
            idx.text.unwrap().lines().skip(2).collect::<Vec<_>>(),
            vec!["- alpha", "- beta"]
        );
        assert!(idx.dropped.is_empty());
        assert_eq!(idx.used_chars, budget);
    }

    #[test]
    fn names_dropped_only_when_names_do_not_fit() {
        let e = entries(&[("alpha", "x"), ("beta", "y")]);
        let budget = INDEX_HEADER.chars().count() + 3 + 5;
        let idx = build(&e, budget);
        assert_eq!(idx.dropped, vec!["beta"]);
        assert_eq!(
            idx.text.unwrap().lines().skip(2).collect::<Vec<_>>(),
            vec!["- alpha"]
        );
        assert_eq!(build(&e, 10).text, None);
    }

    #[test]
    fn deterministic() {
        let d = "word ".repeat(50);
        let e = entries(&[("a", &d), ("b", &d), ("c", "short")]);
        assert_eq!(build(&e, 200), build(&e, 200));
    }

    #[test]
    fn budget_from_window() {
        assert_eq!(index_budget(None, None), 8_000);
        assert_eq!(index_budget(Some(200_000), None), 8_000);
        assert_eq!(index_budget(Some(128_000), None), 5_120);
        assert_eq!(index_budget(Some(128_000), Some(300)), 300);
        assert_eq!(index_budget(Some(0), None), 8_000);
    }
}
