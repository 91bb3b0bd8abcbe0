//! Player names: the one identifier of a registered player.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest name, in characters.
pub const MAX_NAME_LEN: usize = 32;

/// A registered player's name: 1 to 32 characters of `[A-Za-z0-9_-]`; or a
/// house bot's (a built-in bot taking part in a tournament): `{kind} bot
/// {n}`, such as "greedy bot 1", whose spaces no registered name can hold.
///
/// Comparison is case-sensitive; the registry refuses a name that differs
/// from a registered one only by case, so names never need folding
/// elsewhere. Serialised as a plain string; deserialising validates
/// (either form). [`PlayerName::new`] and `FromStr` take a registered
/// player's name only; [`PlayerName::house_bot`] makes a house bot's.
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
    #[error(
        "a house bot's name is \"{{kind}} bot {{n}}\": a kind of 1 to {MAX_HOUSE_BOT_KIND_LEN} lower-case letters, n from 1 to {MAX_HOUSE_BOT_NUMBER}"
    )]
    HouseBot,
}

/// The longest kind in a house bot's name ([`PlayerName::house_bot`]).
pub const MAX_HOUSE_BOT_KIND_LEN: usize = 16;
/// The largest number in a house bot's name.
pub const MAX_HOUSE_BOT_NUMBER: u32 = 999;

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

    /// A house bot's name, `{kind} bot {n}` ("greedy bot 1"): `kind` 1 to
    /// 16 lower-case ASCII letters, `n` 1 to 999. It holds spaces, so no
    /// registered player can have it.
    pub fn house_bot(kind: &str, n: u32) -> Result<PlayerName, NameError> {
        let kind_ok = (1..=MAX_HOUSE_BOT_KIND_LEN).contains(&kind.len())
            && kind.bytes().all(|b| b.is_ascii_lowercase());
        if !kind_ok || !(1..=MAX_HOUSE_BOT_NUMBER).contains(&n) {
            return Err(NameError::HouseBot);
        }
        Ok(PlayerName(format!("{kind} bot {n}")))
    }

    /// A name of either form: a registered player's or a house bot's.
    pub fn any(name: impl Into<String>) -> Result<PlayerName, NameError> {
        let name = name.into();
        if !name.contains(' ') {
            return PlayerName::new(name);
        }
        let mut words = name.split(' ');
        let parsed = match (words.next(), words.next(), words.next(), words.next()) {
            (Some(kind), Some("bot"), Some(n), None) if !n.starts_with(['0', '+']) => {
                n.parse().ok().map(|n| PlayerName::house_bot(kind, n))
            }
            _ => None,
        };
        parsed.unwrap_or(Err(NameError::HouseBot))
    }

    /// Whether this is a house bot's name ([`PlayerName::house_bot`]).
    pub fn is_house_bot(&self) -> bool {
        self.0.contains(' ')
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
        PlayerName::any(name).map_err(serde::de::Error::custom)
    }
}
