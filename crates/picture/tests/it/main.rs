//! The renderer as its users call it: golden pictures of recorded games,
//! the tile pictures of `docs/tiles/`, PNG output, and determinism.
//!
//! Golden files are compared byte for byte with what the renderer draws
//! now. After changing a drawing on purpose, regenerate them with
//! `UPDATE_PICTURES=1 cargo test -p carcassonne-picture` and look at the
//! difference before committing it.

mod board;
mod docs;
mod golden;
mod png;
mod support;
