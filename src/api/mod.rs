//! The boundary between gRPC and the engine: requests parsed into engine
//! types (`parse`), state and events turned into messages (`view`), and
//! errors turned into statuses (`status`). The only place that knows both
//! protobuf and the engine.

pub mod parse;
pub mod status;
pub mod view;
