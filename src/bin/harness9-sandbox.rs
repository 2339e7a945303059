//! The sandbox launcher on its own: the same entry point harness9 has
//! (`__harness9-sandbox-exec`, see `harness9::sandbox::launcher`), in a binary that
//! links only what confining a command needs, so starting it costs a fraction of
//! starting harness9. harness9 uses it when it sits beside harness9's own binary, and
//! re-executes itself otherwise. It must not know anything but the launcher.

use std::process::ExitCode;

fn main() -> ExitCode {
    match harness9::sandbox::launcher::run_if_requested() {
        Some(code) => ExitCode::from(code),
        None => {
            eprintln!(
                "harness9-sandbox: harness9 starts this to confine the commands it runs; \
                 it is not meant to be run by hand"
            );
            ExitCode::from(harness9::sandbox::launcher::CANNOT_RUN)
        }
    }
}
