//! Tool list (being written).
