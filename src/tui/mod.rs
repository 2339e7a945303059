//! The terminal frontend (being written): cells, Markdown and code rendering, composer,
//! status line, approval overlay and the inline screen so far.

#![allow(dead_code)]

mod approval;
mod cells;
mod composer;
mod highlight;
mod markdown;
mod screen;
mod status;
mod wrap;
