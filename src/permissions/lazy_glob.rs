//! A rule's path glob, compiled into a matcher only when a path could match it. Every
//! path a glob matches contains the glob's runs of plain characters (`.env` in
//! `**/.env*`; `proc` and `environ` in `/proc/*/environ`), so a path that lacks one is
//! refused by a substring test, without compiling anything. Compiling one glob builds its
//! regular expression's automata (tens of microseconds and tens of kilobytes each), and
//! the first judged read checks some sixty built-in secret-file patterns: with the test,
//! a call on `src/main.rs` compiles none of them, a call on `.env` one.
//!
//! It owns when a glob is compiled and the refusal without compiling; what a glob means
//! is globset's (`*` never crosses `/`), and which path a rule checks is `rule.rs`'s.

use std::path::Path;
use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobMatcher};

use super::rule::Case;

/// A parsed glob, its required runs, and its matchers once needed.
#[derive(Debug, Clone)]
pub(super) struct LazyGlob {
    glob: Glob,
    /// Runs of plain characters every path the glob matches contains, as written.
    required: Box<[Box<[u8]>]>,
    exact: OnceLock<GlobMatcher>,
    folded: OnceLock<GlobMatcher>,
}

impl LazyGlob {
    /// `glob`, built with `literal_separator(true)`, compiled when first needed.
    pub(super) fn new(glob: Glob) -> LazyGlob {
        let required = required_runs(glob.glob());
        LazyGlob {
            glob,
            required,
            exact: OnceLock::new(),
            folded: OnceLock::new(),
        }
    }

    /// Whether `path` matches, comparing letters as `case` says (ASCII letters only,
    /// as globset folds them).
    pub(super) fn is_match(&self, path: &Path, case: Case) -> bool {
        self.may_match(path, case) && self.matcher(case).is_match(path)
    }

    /// False when `path` lacks one of the runs every match contains.
    fn may_match(&self, path: &Path, case: Case) -> bool {
        // globset matches a path's bytes as they are on Unix; elsewhere it rewrites
        // separators first, so nothing is refused without the matcher there.
        if !cfg!(unix) {
            return true;
        }
        let bytes = path.as_os_str().as_encoded_bytes();
        self.required.iter().all(|run| contains(bytes, run, case))
    }

    fn matcher(&self, case: Case) -> &GlobMatcher {
        match case {
            Case::Exact => self.exact.get_or_init(|| self.glob.compile_matcher()),
            Case::Folded => self.folded.get_or_init(|| {
                GlobBuilder::new(self.glob.glob())
                    .literal_separator(true)
                    .case_insensitive(true)
                    .build()
                    // It built exactly so when the rule was read; the exact matcher is the
                    // fallback if it somehow did not.
                    .map_or_else(|_| self.glob.compile_matcher(), |g| g.compile_matcher())
            }),
        }
    }

    /// How many matchers have been compiled (0, 1 or 2), for tests.
    #[cfg(test)]
    pub(super) fn compiled(&self) -> usize {
        usize::from(self.exact.get().is_some()) + usize::from(self.folded.get().is_some())
    }
}

/// Whether `run` occurs in `hay`, ASCII letters folded when `case` says so (globset's
/// case-insensitive globs fold ASCII letters only: `(?-u)(?i)`).
fn contains(hay: &[u8], run: &[u8], case: Case) -> bool {
    match case {
        Case::Exact => hay.windows(run.len()).any(|w| w == run),
        Case::Folded => hay.windows(run.len()).any(|w| w.eq_ignore_ascii_case(run)),
    }
}

/// The runs of plain characters of a glob that every path it matches contains: the
/// text between wildcards (`*`, `?`), separators (`/`, which `**/` may leave out) and
/// escapes, up to the first class or alternation (`[`, `{`), whose insides may not be
/// required. Conservative by construction: a character is kept only where the glob
/// matches it as itself, so leaving a run out only costs a compile.
fn required_runs(pattern: &str) -> Box<[Box<[u8]>]> {
    let mut runs: Vec<Box<[u8]>> = Vec::new();
    let mut run: Vec<u8> = Vec::new();
    let mut flush = |run: &mut Vec<u8>| {
        if !run.is_empty() {
            let done: Box<[u8]> = std::mem::take(run).into();
            if !runs.contains(&done) {
                runs.push(done);
            }
        }
    };
    let mut bytes = pattern.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'[' | b'{' => break,
            // An escaped character is a literal, but leaving it out is always safe.
            b'\\' => {
                flush(&mut run);
                bytes.next();
            }
            b'*' | b'?' | b'/' | b']' | b'}' | b',' => flush(&mut run),
            _ => run.push(b),
        }
    }
    flush(&mut run);
    runs.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn glob(pattern: &str) -> LazyGlob {
        LazyGlob::new(
            GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .unwrap(),
        )
    }

    fn runs(pattern: &str) -> Vec<String> {
        required_runs(pattern)
            .iter()
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect()
    }

    /// What globset itself says, compiled the usual way.
    fn reference(pattern: &str, path: &Path, case: Case) -> bool {
        GlobBuilder::new(pattern)
            .literal_separator(true)
            .case_insensitive(case == Case::Folded)
            .build()
            .unwrap()
            .compile_matcher()
            .is_match(path)
    }

    #[test]
    fn runs_are_the_plain_text_between_wildcards_up_to_a_class_or_alternation() {
        assert_eq!(runs("**/.env*"), [".env"]);
        assert_eq!(runs("**/*.pem"), [".pem"]);
        assert_eq!(runs("/proc/*/task/*/environ"), ["proc", "task", "environ"]);
        assert_eq!(runs("**/.ssh/**"), [".ssh"]);
        assert_eq!(
            runs("**/*service-account*.json"),
            ["service-account", ".json"]
        );
        assert_eq!(runs("src/a[bc]d/x"), ["src", "a"]);
        assert_eq!(runs("x{a,b}y"), ["x"]);
        assert_eq!(runs(r"a\*b?c"), ["a", "b", "c"]);
        assert_eq!(runs("**"), Vec::<String>::new());
        assert_eq!(runs("a/a/a"), ["a"]);
    }

    #[test]
    fn every_secret_pattern_agrees_with_globset_on_paths_that_match_and_that_do_not() {
        let paths = [
            "/p/.env",
            "/p/.ENV.local",
            "/p/a/B/.Env",
            "/p/src/env.rs",
            "/home/u/.ssh/id_rsa",
            "/home/u/.SSH/config",
            "/home/u/.sshx/a",
            "/proc/1/environ",
            "/PROC/1/ENVIRON",
            "/proc/self/task/7/mem",
            "/etc/shadow-",
            "/p/k.PEM",
            "/p/my-service-account-x.json",
            "/p/src/main.rs",
            ".env",
            "x/.aws/credentials",
            "/p/.config/gcloud/a/b",
            "/p/.kube/config",
            "/p/terraform.tfstate.backup",
            ".",
        ];
        for pattern in crate::permissions::SECRET_FILES.iter().chain(&[
            "/root/.harness9/**",
            "src/**",
            "**/.git/**",
            ".harness9/**",
        ]) {
            let lazy = glob(pattern);
            for path in paths {
                for case in [Case::Exact, Case::Folded] {
                    assert_eq!(
                        lazy.is_match(Path::new(path), case),
                        reference(pattern, Path::new(path), case),
                        "{pattern} on {path}, {case:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_path_without_the_required_text_compiles_nothing() {
        let env = glob("**/.env*");
        assert!(!env.is_match(Path::new("/p/src/main.rs"), Case::Folded));
        assert!(!env.is_match(Path::new("src/main.rs"), Case::Exact));
        assert_eq!(env.compiled(), 0);
        assert!(env.is_match(Path::new("/p/.ENV"), Case::Folded));
        assert_eq!(env.compiled(), 1);
        // Text that is there but does not match still compiles (and is refused).
        assert!(!env.is_match(Path::new("/p/x.env/a"), Case::Exact));
        assert_eq!(env.compiled(), 2);
    }

    /// Globs and paths over a small alphabet, so that wildcards, classes, alternations,
    /// escapes, separators and letters of both cases meet often.
    fn pattern_strategy() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("a".to_string()),
                Just("B".to_string()),
                Just("b".to_string()),
                Just(".".to_string()),
                Just("/".to_string()),
                Just("*".to_string()),
                Just("**/".to_string()),
                Just("/**".to_string()),
                Just("?".to_string()),
                Just("[ab]".to_string()),
                Just("[!a]".to_string()),
                Just("[A-b]".to_string()),
                Just("{a,Bb}".to_string()),
                Just(r"\*".to_string()),
                Just(r"\a".to_string()),
                Just("é".to_string()),
            ],
            1..8,
        )
        .prop_map(|parts| parts.concat())
    }

    fn path_strategy() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("a"),
                Just("A"),
                Just("b"),
                Just("B"),
                Just("."),
                Just("/"),
                Just("*"),
                Just("É"),
                Just("é"),
            ],
            0..10,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_refusal_without_compiling_never_changes_an_answer(
            pattern in pattern_strategy(),
            path in path_strategy(),
        ) {
            let Ok(built) = GlobBuilder::new(&pattern).literal_separator(true).build() else {
                return Ok(());
            };
            let lazy = LazyGlob::new(built);
            for case in [Case::Exact, Case::Folded] {
                prop_assert_eq!(
                    lazy.is_match(Path::new(&path), case),
                    reference(&pattern, Path::new(&path), case),
                    "{} on {:?}, {:?}", pattern, path, case
                );
            }
        }
    }
}
