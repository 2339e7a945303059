//! Tool truncate (being written).
