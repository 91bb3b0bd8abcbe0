//! Compiles `proto/` with protox (no system protoc needed) into the gRPC
//! code of the server and its clients, and writes the descriptor set that
//! server reflection serves.

use std::path::PathBuf;

const PROTOS: [&str; 4] = [
    "proto/carcassonne/v1/types.proto",
    "proto/carcassonne/v1/game.proto",
    "proto/carcassonne/v1/game_service.proto",
    "proto/carcassonne/v1/watch_service.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("carcassonne_descriptor.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
