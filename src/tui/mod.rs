//! The full-screen-less inline TUI (being written).
