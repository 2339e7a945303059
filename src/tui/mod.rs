//! The terminal frontend (being written).

#![allow(dead_code)]

mod app;
mod approval;
mod cells;
mod composer;
mod highlight;
mod markdown;
mod popup;
mod screen;
mod status;
mod stream;
#[cfg(test)]
mod test_support;
mod transcript;
mod views;
mod wrap;
