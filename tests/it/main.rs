//! Tests of the `carcassonne` binary, as a user runs it.

#![allow(clippy::unwrap_used)]

mod admin_key;
mod archive;
mod bench_verdict;
mod bot_cli;
mod bot_load;
mod bot_seats;
mod bots;
mod challenges;
mod cli;
mod clocks;
mod connections;
mod edge;
mod fuzz;
mod headers;
mod house_bots;
mod http;
#[path = "../../crates/store/tests/it/pg.rs"]
mod pg;
mod pictures;
mod players;
mod postgres;
mod reads;
mod sealed;
mod secrecy;
mod server;
mod storage;
mod support;
mod timed_records;
mod tournament_archive;
mod tournaments;
mod viewer;
mod watch;
