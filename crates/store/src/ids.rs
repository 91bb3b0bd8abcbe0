//! Validated identifiers: a game id and a client's request id.
//!
//! Both are printable ASCII without spaces (`!`..=`~`). That keeps them
//! safe in logs and lets the sled keys separate an id from what follows it
//! with a 0 byte, which no id contains.

use std::fmt;

use crate::error::StoreError;

/// The longest game id, in bytes.
pub const MAX_GAME_ID_LEN: usize = 64;
/// The longest request id, in bytes.
pub const MAX_REQUEST_ID_LEN: usize = 128;

fn is_printable(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_graphic())
}

/// A game's id, chosen by the caller (a UUID-ish string): 1 to
/// [`MAX_GAME_ID_LEN`] printable ASCII characters, no spaces.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GameId(String);

impl GameId {
    /// Checks and wraps a game id.
    pub fn new(id: impl Into<String>) -> Result<Self, StoreError> {
        let id = id.into();
        if id.is_empty() {
            return Err(StoreError::InvalidGameId("empty".into()));
        }
        if id.len() > MAX_GAME_ID_LEN {
            return Err(StoreError::InvalidGameId(format!(
                "{} bytes, at most {MAX_GAME_ID_LEN}",
                id.len()
            )));
        }
        if !is_printable(&id) {
            return Err(StoreError::InvalidGameId(format!(
                "{:?}: only printable ASCII without spaces",
                id.escape_debug().to_string()
            )));
        }
        Ok(GameId(id))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GameId({:?})", self.0)
    }
}

impl std::str::FromStr for GameId {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, StoreError> {
        GameId::new(s)
    }
}

/// The id a client gives a request so that a retry is recognised: 0 to
/// [`MAX_REQUEST_ID_LEN`] printable ASCII characters. The empty id means
/// "no id": such appends are never deduplicated.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(String);

impl RequestId {
    /// Checks and wraps a request id.
    pub fn new(id: impl Into<String>) -> Result<Self, StoreError> {
        let id = id.into();
        if id.len() > MAX_REQUEST_ID_LEN {
            return Err(StoreError::InvalidRequestId(format!(
                "{} bytes, at most {MAX_REQUEST_ID_LEN}",
                id.len()
            )));
        }
        if !is_printable(&id) {
            return Err(StoreError::InvalidRequestId(format!(
                "{:?}: only printable ASCII without spaces",
                id.escape_debug().to_string()
            )));
        }
        Ok(RequestId(id))
    }

    /// The empty request id: the append is not deduplicated.
    pub fn none() -> Self {
        RequestId(String::new())
    }

    /// True for the empty id.
    pub fn is_none(&self) -> bool {
        self.0.is_empty()
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestId({:?})", self.0)
    }
}
