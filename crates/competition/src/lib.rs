//! Registered players, tournaments and ratings of Carcassonne, as pure
//! folds of events: no IO, no clock, no global randomness.

mod codec;
mod name;
mod pairing;
mod players;
mod points;
mod ratings;
mod tournament;

#[cfg(test)]
mod tests;

pub use codec::{DecodeError, RATINGS_SCHEMA, REGISTRY_SCHEMA, TOURNAMENT_SCHEMA, from_hex, to_hex};
pub use name::{MAX_NAME_LEN, NameError, PlayerName};
pub use pairing::{
    LOOKAHEAD_LIMIT, LOT_DOMAIN, PAIRING_VERSION, Pairing, PairingInput, PairingPlan, SEARCH_LIMIT,
    lot_order, pair,
};
pub use players::{PlayerRecord, Registry, RegistryError, RegistryEvent};
pub use points::{Points, table_points};
pub use ratings::{Pool, Rating, RatingChange, RatingEvent, Ratings};
pub use tournament::*;
