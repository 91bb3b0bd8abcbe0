//! The competition crate's integration tests: one binary, one module per
//! boundary, what they share in `support`.

#![allow(clippy::unwrap_used)]

mod challenges;
mod encoding;
mod pairing;
mod ratings;
mod registry;
mod round_robin;
mod standings;
mod support;
mod tournaments;
