//! Tool bash (being written).
