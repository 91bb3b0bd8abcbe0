//! The rules of Carcassonne — the base game, the River and The Count of
//! Carcassonne — as a pure,
//! deterministic engine: no IO, no clock, no global randomness.
//!
//! A game is a sequence of decisions. [`Game::pending`] says which one the
//! game waits for and whose it is; [`Game::decide`] checks a [`Command`]
//! and returns the [`Event`]s it produces, or a [`PlayError`] naming the
//! rule of `docs/rules.md` it breaks; [`Game::apply`] folds an event in and
//! cannot fail. The same events always fold to the same state.
//!
//! The engine reads no clock. A game with a time control (T-1) derives its
//! clocks from times given as data: [`Game::decide_at`] decides a command
//! at a time, [`Game::apply_at`] folds an event stored at a time, and the
//! deadline, the timeouts and the ranking follow from those times alone.
//!
//! ```
//! use carcassonne_engine::*;
//!
//! let setup = Setup {
//!     rules: Rules::default(),
//!     players: vec!["Ada".into(), "Brun".into()],
//!     tiles: None,
//!     seed: Some(Seed::from_u64(7)),
//!     time_control: None,
//! };
//! let mut game = Game::new(setup);
//! let mut events = Vec::new();
//! game.run_automatic(&mut events, &mut ()); // the first draw
//! let player = game.pending().player().unwrap();
//! let placement = game.legal_placements()[0];
//! let command = Command::PlaceTile { pos: placement.pos, rotation: placement.rotation };
//! game.execute(Actor::Seat(player), &command, &mut ()).unwrap();
//! assert_eq!(game.pending(), Pending::PlaceFollower { player });
//! ```

mod board;
mod clock;
pub mod codec;
mod count;
mod decide;
mod ending;
mod features;
mod game;
mod geometry;
mod legal;
mod model;
mod public;
pub mod record;
pub mod render;
mod rules;
mod scoring;
mod shuffle;
mod tiles;

#[cfg(test)]
mod tests;

pub use board::PlacedTile;
pub use clock::{MAX_DURATION_MS, MainTime, OnTimeout, TimeControl};
pub use game::{Game, Observer};
pub use geometry::{Dir, Half, Place, Pos, Rotation};
pub use model::*;
pub use public::PublicGame;
pub use rules::{Expansion, Farmers, RuleId, Rules, SmallCity, id};
pub use shuffle::{Seed, Stream};
pub use tiles::{
    BASE_COUNTS, CITY_LAYOUT, EdgeKind, FeatureKind, KINDS, RIVER_COUNTS, SegmentDef, TileDef, TileKind,
    catalogue,
};
