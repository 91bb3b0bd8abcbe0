//! Player names: the one identifier of a registered player.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest name, in characters.
pub const MAX_NAME_LEN: usize = 32;

/// A registered player's name: 1 to 32 characters of `[A-Za-z0-9_-]`.
///
/// Comparison is case-sensitive; the registry refuses a name that differs
/// from a registered one only by case, so names never need folding
/// elsewhere. Serialised as a plain string; deserialising validates.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlayerName(String);

/// Why a string is not a [`PlayerName`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("a player name cannot be empty")]
    Empty,
    #[error("a player name has at most {MAX_NAME_LEN} characters, this one has {0}")]
    TooLong(usize),
    #[error("a player name may hold only letters, digits, '_' and '-', not {0:?}")]
    InvalidChar(char),
}

impl PlayerName {
    pub fn new(name: impl Into<String>) -> Result<PlayerName, NameError> {
        let name = name.into();
        if let Some(bad) = name
            .chars()
            .find(|&c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        {
            return Err(NameError::InvalidChar(bad));
        }
        // Every accepted character is ASCII: bytes are characters.
        match name.len() {
            0 => Err(NameError::Empty),
            len if len > MAX_NAME_LEN => Err(NameError::TooLong(len)),
            _ => Ok(PlayerName(name)),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name folded to lower case: two names with the same folded form
    /// cannot both be registered.
    pub fn folded(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

impl fmt::Display for PlayerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for PlayerName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for PlayerName {
    type Err = NameError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PlayerName::new(s)
    }
}

impl Serialize for PlayerName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PlayerName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        PlayerName::new(name).map_err(serde::de::Error::custom)
    }
}
