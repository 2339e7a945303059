//! Build script: in optimized Linux builds of the `harness9` binary, the code a short run
//! executes is placed together at the start of the binary's code, by the linker script
//! fragment `link/startup-order.ld` (written by `scripts/startup_order.py`). The kernel
//! maps code in blocks of 64 KB or more around every page a run touches, so the same
//! code scattered over the whole binary kept several megabytes more resident: `-p hi`
//! peaked at 12.7 MB with the `dist` profile, 8.0 MB with the code placed together
//! (docs/BENCHMARKS.md). Only where functions lie changes, never what they do.
//!
//! Debug builds (tests) are linked as before; `HARNESS9_STARTUP_ORDER=0` turns the
//! placement off, for a linker that cannot read the fragment (it needs `INSERT`, which
//! GNU ld and lld understand).

use std::path::Path;

fn main() {
    let Ok(manifest_dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let script = Path::new(&manifest_dir).join("link/startup-order.ld");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", script.display());
    println!("cargo:rerun-if-env-changed=HARNESS9_STARTUP_ORDER");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let optimized = std::env::var("OPT_LEVEL").is_ok_and(|level| level != "0");
    let wanted = !std::env::var("HARNESS9_STARTUP_ORDER").is_ok_and(|v| v == "0");
    if linux && optimized && wanted && script.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=harness9=-Wl,-T,{}",
            script.display()
        );
    }
}
