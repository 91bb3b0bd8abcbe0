//! The store's integration tests, one binary.
//!
//! `CARCASSONNE_SLOW_TESTS=1` runs the long versions (more model seeds,
//! more crash rounds).

#![allow(clippy::unwrap_used)]

mod concurrency;
mod corruption;
mod crash;
mod fixtures;
mod model;
#[cfg(feature = "postgres")]
mod pg;
#[cfg(feature = "postgres")]
mod postgres;
mod reads;
mod storage;
mod subscriptions;
mod support;
mod wal;
