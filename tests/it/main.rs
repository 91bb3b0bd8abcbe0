//! Tests of the `carcassonne` binary, as a user runs it.

#![allow(clippy::unwrap_used)]

mod bench_verdict;
mod cli;
mod secrecy;
mod server;
mod viewer;
mod watch;
