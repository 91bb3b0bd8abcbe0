//! The Carcassonne server: the one package that knows both the rules
//! engine and the event store, and the only one that knows protobuf.
//!
//! - [`api`]: requests parsed into engine types, state and events turned
//!   into messages, errors turned into statuses.
//! - [`games`]: loading games from the store (fold + bounded cache) and
//!   appending their events.
//! - [`server`]: the gRPC services and the server's life cycle.
//! - [`http`]: HTTP on the server's port: the web page, JSON, event
//!   streams and board pictures, through the same services.
//! - [`players`], [`ratings`], [`tournaments`], [`challenges`],
//!   [`recorder`]: registered players, their ratings, tournaments and
//!   challenges, each a stream in the store folded through the competition
//!   crate, and what a game's end changes in them.
//! - [`audit`]: the offline audit of signed archives (`carcassonne audit`).
//!
//! The `carcassonne` binary (`src/main.rs`, with the offline commands in
//! `src/cli.rs`) is a thin command line over this library.

pub mod api;
pub mod audit;
pub mod challenges;
pub mod games;
pub mod http;
pub mod players;
pub mod ratings;
pub mod recorder;
pub mod server;
pub mod tournaments;

/// The code generated from `proto/`.
pub mod proto {
    tonic::include_proto!("carcassonne.v1");
    // Canonical proto3 JSON (pbjson) of every message, for the HTTP API.
    include!(concat!(env!("OUT_DIR"), "/carcassonne.v1.serde.rs"));

    /// The descriptor set of `proto/`, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("carcassonne_descriptor");
}
