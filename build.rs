//! Compiles `proto/` with protox (no system protoc needed) into the gRPC
//! code of the server and its clients, and writes the descriptor set that
//! server reflection serves, and the serde impls (canonical proto3 JSON,
//! pbjson) of every message for the HTTP API.

use std::path::PathBuf;

const PROTOS: [&str; 7] = [
    "proto/carcassonne/v1/types.proto",
    "proto/carcassonne/v1/game.proto",
    "proto/carcassonne/v1/game_service.proto",
    "proto/carcassonne/v1/watch_service.proto",
    "proto/carcassonne/v1/player_service.proto",
    "proto/carcassonne/v1/tournament_service.proto",
    "proto/carcassonne/v1/challenge_service.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    // The web page is embedded in the binary (`src/http/page.rs`).
    println!("cargo:rerun-if-changed=src/http/page");
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("carcassonne_descriptor.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    // The canonical proto3 JSON of every message, for the HTTP API: the
    // same messages as gRPC, so the web page reads what gRPC clients read.
    pbjson_build::Builder::new()
        .register_descriptors(&prost::Message::encode_to_vec(&descriptors))?
        .emit_fields()
        .build(&[".carcassonne.v1"])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
