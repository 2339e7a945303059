//! The terminal frontend (being written): cells, Markdown and code rendering so far.

#![allow(dead_code)]

mod cells;
mod highlight;
mod markdown;
mod wrap;
