//! The boundary between gRPC and the engine: requests parsed into engine
//! types (`parse`), state and events turned into messages (`view`), errors
//! turned into statuses (`status`), and the one conversion between stored
//! sequence numbers and API versions (`version`); `follow` turns a game's
//! public messages back into the engine's public game, for clients. The only place that knows
//! both protobuf and the engine.

pub mod follow;
pub mod parse;
pub mod status;
pub mod version;
pub mod view;

#[cfg(test)]
mod tests;
