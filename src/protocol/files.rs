//! Where a tool call works in files and what it changed, as plain data for frontends
//! that show calls next to the files (an editor over ACP): [`FileLocation`] (a real
//! path and, when known, a line) and [`FileChange`] (a file's whole text before and
//! after an edit).
//!
//! Value types only: it must not know the tools that fill them or how a frontend shows
//! them. Headless output (stream-json) leaves them out.

use std::path::PathBuf;

/// A file a call reads or changes, and the line it starts at when that is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLocation {
    /// The real path (absolute, every link followed): the file the call acts on.
    pub path: PathBuf,
    /// The 1-based line, when the call names one (a read from an offset).
    pub line: Option<u32>,
}

/// A file's text before and after a call changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The real path of the changed file.
    pub path: PathBuf,
    /// Its text before (`None`: the call created it).
    pub old: Option<String>,
    /// Its text after.
    pub new: String,
}

impl FileChange {
    /// The largest text (old or new, in bytes) a change carries; a bigger edit is
    /// shown by its unified diff alone.
    pub const MAX_TEXT: usize = 1024 * 1024;

    /// The change, when both texts fit [`FileChange::MAX_TEXT`].
    pub fn within_cap(path: PathBuf, old: Option<&str>, new: &str) -> Option<Box<FileChange>> {
        let fits = |text: &str| text.len() <= Self::MAX_TEXT;
        (old.is_none_or(fits) && fits(new)).then(|| {
            Box::new(FileChange {
                path,
                old: old.map(str::to_string),
                new: new.to_string(),
            })
        })
    }

    /// The 1-based line of the first difference (the line after the last one when the
    /// new text only removes lines at the end).
    pub fn first_changed_line(&self) -> u32 {
        let old = self.old.as_deref().unwrap_or("");
        let same = old
            .split_inclusive('\n')
            .zip(self.new.split_inclusive('\n'))
            .take_while(|(a, b)| a == b)
            .count();
        u32::try_from(same + 1).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_changed_line_counts_from_one() {
        let change = |old: Option<&str>, new: &str| FileChange {
            path: "/x".into(),
            old: old.map(str::to_string),
            new: new.into(),
        };
        assert_eq!(
            change(Some("a\nb\nc\n"), "a\nB\nc\n").first_changed_line(),
            2
        );
        assert_eq!(change(None, "new\n").first_changed_line(), 1);
        assert_eq!(change(Some("a\nb\n"), "a\nb\nc\n").first_changed_line(), 3);
        assert_eq!(change(Some("a\n"), "b\n").first_changed_line(), 1);
    }

    #[test]
    fn a_change_over_the_cap_is_not_carried() {
        let big = "x".repeat(FileChange::MAX_TEXT + 1);
        assert!(FileChange::within_cap("/x".into(), Some(&big), "y").is_none());
        assert!(FileChange::within_cap("/x".into(), None, &big).is_none());
        assert!(FileChange::within_cap("/x".into(), Some("a"), "b").is_some());
    }
}
