//! The `harness9` binary.
fn main() {}
