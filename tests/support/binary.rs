//! Running the real binary in tests: its output read back as JSON lines and its exit
//! code checked with its stderr shown. Only processes and text: nothing here knows
//! harness9's types.

use serde_json::Value;

/// Asserts that the binary exited with `code`, showing its stderr when it did not.
pub fn assert_exit(out: &std::process::Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every line of `stdout` parsed as JSON; a line that is not fails the test.
pub fn json_lines(stdout: impl AsRef<[u8]>) -> Vec<Value> {
    String::from_utf8_lossy(stdout.as_ref())
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect()
}
