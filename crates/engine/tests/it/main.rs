//! The engine's integration tests: one binary, one module per boundary.

#![allow(clippy::unwrap_used)]

mod docs;
mod props;
mod records;
mod rules;
