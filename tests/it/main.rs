//! Tests of the `carcassonne` binary, as a user runs it.

#![allow(clippy::unwrap_used)]

mod cli;
mod edge;
mod fuzz;
mod secrecy;
mod server;
mod viewer;
mod watch;
