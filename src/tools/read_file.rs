//! Tool read_file (being written).
