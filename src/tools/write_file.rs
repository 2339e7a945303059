//! Tool write_file (being written).
