//! Tool glob (being written).
