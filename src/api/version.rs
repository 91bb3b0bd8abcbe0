//! The one conversion between a game's stored sequence numbers and the
//! versions the API shows.
//!
//! A game's stored log starts with the server's own opening event (seq 1:
//! the seats' token hashes), which no client ever sees; the engine's
//! creation is seq 2. Clients count the events they can see: version =
//! seq - 1, so the creation is version 1 and every draw and decision adds
//! one. Everything inside the server speaks seqs; every version that
//! crosses the API boundary goes through [`of_seq`] or [`to_seq`].

use super::status::ApiError;

/// The API version of the game after its stored event `seq`.
pub fn of_seq(seq: u64) -> i64 {
    i64::try_from(seq.saturating_sub(1)).unwrap_or(i64::MAX)
}

/// [`of_seq`] for a seq already held as an `i64`.
pub fn of_seq_i64(seq: i64) -> i64 {
    seq.saturating_sub(1).max(0)
}

/// The stored seq of the API version a request names in `field`. Version 0
/// (before the creation) is the opening's seq, 1.
pub fn to_seq(field: &str, version: i64) -> Result<u64, ApiError> {
    u64::try_from(version)
        .ok()
        .and_then(|v| v.checked_add(1))
        .ok_or_else(|| ApiError::InvalidArgument {
            field: field.to_owned(),
            message: format!("a version is not negative, not {version}"),
        })
}

/// Where a stream starts, from an optional `from_version` or
/// `from_position`: unset is "now", a number is "after that one". The one
/// rule of WatchGame, ReplayGame and WatchServer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Now,
    /// After this stored seq (or global position).
    After(u64),
}

/// The start of a game stream (WatchGame, ReplayGame): `from_version`,
/// whose earliest value is 1, the creation.
pub fn game_start(field: &str, from_version: Option<i64>) -> Result<Start, ApiError> {
    match from_version {
        None => Ok(Start::Now),
        Some(v) if v < 1 => Err(ApiError::InvalidArgument {
            field: field.to_owned(),
            message: format!("at least 1, the creation, not {v} (unset: from now)"),
        }),
        Some(v) => Ok(Start::After(to_seq(field, v)?)),
    }
}

/// The start of the server stream: `from_position`, 0 for the store's
/// beginning.
pub fn position_start(from_position: Option<i64>) -> Result<Start, ApiError> {
    match from_position {
        None => Ok(Start::Now),
        Some(p) => u64::try_from(p)
            .map(Start::After)
            .map_err(|_| ApiError::InvalidArgument {
                field: "from_position".to_owned(),
                message: format!("0 or more, not {p} (unset: from now)"),
            }),
    }
}
