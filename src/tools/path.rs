//! Tool path (being written).
