//! A command line over the 128 KiB one argument may hold (`MAX_ARG_STRLEN`) runs: the
//! real binary gets a 300 KiB `bash` command from the model and runs it, in the
//! sandbox (through the launcher, as `bash FILE`) and outside it, and the private file
//! that carried it is gone afterwards.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::support::*;

#[test]
fn a_command_line_over_128_kib_runs_sandboxed_and_not() {
    for sandbox in ["workspace-write", "off"] {
        let dirs = Dirs::new();
        let command = format!(
            ": {}\necho long-line-ran > out.txt; echo \"file=$0\"",
            "x".repeat(300 * 1024)
        );
        let (out, tool) = MockServer::start(vec![]).one_bash_call(
            dirs.home(),
            dirs.project(),
            &command,
            &["--approval-mode", "full-auto", "--sandbox", sandbox],
            &[],
        );
        assert_exit(&out, 0);
        assert_eq!(
            std::fs::read_to_string(dirs.project().join("out.txt")).unwrap(),
            "long-line-ran\n",
            "{sandbox}: {tool}"
        );
        let file = tool
            .lines()
            .find_map(|l| l.strip_prefix("file="))
            .unwrap_or_else(|| panic!("{sandbox}: {tool}"));
        assert!(!Path::new(file).exists(), "{file} left behind");
    }
}
