//! Tool edit_file (being written).
