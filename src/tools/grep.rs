//! Tool grep (being written).
