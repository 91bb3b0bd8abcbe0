//! The engine's integration tests: one binary, one module per boundary.

mod props;
mod records;
mod rules;
