//! The registry of registered players: a fold of [`RegistryEvent`]s.
//!
//! A player is known by a name and the SHA-256 of a key the server gave
//! them; this crate never sees a key. Organisers may run tournaments (the
//! server decides what that allows).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::codec::{from_hex, json_codec, to_hex};
use crate::name::PlayerName;

/// What happened to the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegistryEvent {
    /// A new player, with the SHA-256 (64 hex digits) of their key.
    Registered { name: PlayerName, key_sha256: String },
    /// The player became an organiser.
    Promoted { name: PlayerName },
    /// The player is no longer an organiser.
    Demoted { name: PlayerName },
    /// The player's key was replaced by the one of this SHA-256.
    KeyReplaced { name: PlayerName, key_sha256: String },
}

json_codec!(RegistryEvent);

/// Why a registry command is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("the name {requested} is taken (by {taken}; names differing only in case count as one)")]
    NameTaken {
        requested: PlayerName,
        taken: PlayerName,
    },
    #[error("no player is named {0}")]
    UnknownPlayer(PlayerName),
    #[error("a key's SHA-256 must be 64 hex digits")]
    InvalidKeyHash,
    #[error("this key is already in use")]
    KeyInUse,
    #[error("{0} is already an organiser")]
    AlreadyOrganiser(PlayerName),
    #[error("{0} is not an organiser")]
    NotOrganiser(PlayerName),
}

/// What the registry tells about a player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerRecord {
    pub name: PlayerName,
    pub organiser: bool,
}

/// The registered players.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    players: BTreeMap<PlayerName, Entry>,
    /// Folded name -> name: the case-insensitive uniqueness check.
    by_folded: HashMap<String, PlayerName>,
    by_key: HashMap<[u8; 32], PlayerName>,
}

#[derive(Debug, Clone)]
struct Entry {
    record: PlayerRecord,
    key: Option<[u8; 32]>,
}

impl Registry {
    /// Folds one event in. Never fails: an event that `decide` would not
    /// have produced (a taken name, an unknown player, a malformed or
    /// taken key hash) changes nothing.
    pub fn apply(&mut self, event: &RegistryEvent) {
        match event {
            RegistryEvent::Registered { name, key_sha256 } => {
                let (Some(key), false) = (from_hex(key_sha256), self.taken(name).is_some()) else {
                    return;
                };
                if self.by_key.contains_key(&key) {
                    return;
                }
                self.by_folded.insert(name.folded(), name.clone());
                self.by_key.insert(key, name.clone());
                let record = PlayerRecord {
                    name: name.clone(),
                    organiser: false,
                };
                self.players.insert(
                    name.clone(),
                    Entry {
                        record,
                        key: Some(key),
                    },
                );
            }
            RegistryEvent::Promoted { name } | RegistryEvent::Demoted { name } => {
                if let Some(entry) = self.players.get_mut(name) {
                    entry.record.organiser = matches!(event, RegistryEvent::Promoted { .. });
                }
            }
            RegistryEvent::KeyReplaced { name, key_sha256 } => {
                let Some(key) = from_hex(key_sha256) else { return };
                if self.by_key.contains_key(&key) {
                    return;
                }
                let Some(entry) = self.players.get_mut(name) else {
                    return;
                };
                if let Some(old) = entry.key.replace(key) {
                    self.by_key.remove(&old);
                }
                self.by_key.insert(key, name.clone());
            }
        }
    }

    /// Registers `name` with the SHA-256 of its key (64 hex digits, either
    /// case; the event holds it in lower case).
    pub fn register(&self, name: &PlayerName, key_sha256: &str) -> Result<RegistryEvent, RegistryError> {
        if let Some(taken) = self.taken(name) {
            return Err(RegistryError::NameTaken {
                requested: name.clone(),
                taken: taken.clone(),
            });
        }
        let key = self.free_key(key_sha256)?;
        Ok(RegistryEvent::Registered {
            name: name.clone(),
            key_sha256: to_hex(&key),
        })
    }

    /// Makes `name` an organiser.
    pub fn promote(&self, name: &PlayerName) -> Result<RegistryEvent, RegistryError> {
        match self.existing(name)?.organiser {
            true => Err(RegistryError::AlreadyOrganiser(name.clone())),
            false => Ok(RegistryEvent::Promoted { name: name.clone() }),
        }
    }

    /// Makes `name` an ordinary player again.
    pub fn demote(&self, name: &PlayerName) -> Result<RegistryEvent, RegistryError> {
        match self.existing(name)?.organiser {
            true => Ok(RegistryEvent::Demoted { name: name.clone() }),
            false => Err(RegistryError::NotOrganiser(name.clone())),
        }
    }

    /// Replaces `name`'s key by the one of this SHA-256; the old key no
    /// longer finds the player.
    pub fn replace_key(&self, name: &PlayerName, key_sha256: &str) -> Result<RegistryEvent, RegistryError> {
        self.existing(name)?;
        let key = self.free_key(key_sha256)?;
        Ok(RegistryEvent::KeyReplaced {
            name: name.clone(),
            key_sha256: to_hex(&key),
        })
    }

    pub fn player(&self, name: &PlayerName) -> Option<&PlayerRecord> {
        self.players.get(name).map(|entry| &entry.record)
    }

    /// The SHA-256 of `name`'s key.
    pub fn key_hash(&self, name: &PlayerName) -> Option<[u8; 32]> {
        self.players.get(name).and_then(|entry| entry.key)
    }

    /// The player whose key has this SHA-256.
    pub fn by_key_hash(&self, key_sha256: &[u8; 32]) -> Option<&PlayerName> {
        self.by_key.get(key_sha256)
    }

    /// [`Registry::by_key_hash`] with the hash as 64 hex digits.
    pub fn by_key_hash_hex(&self, key_sha256: &str) -> Option<&PlayerName> {
        self.by_key_hash(&from_hex(key_sha256)?)
    }

    /// Every player, in name order (byte order: upper case first).
    pub fn players(&self) -> impl Iterator<Item = &PlayerRecord> {
        self.players.values().map(|entry| &entry.record)
    }

    pub fn len(&self) -> usize {
        self.players.len()
    }

    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// The registered name equal to `name` but for case, if any.
    fn taken(&self, name: &PlayerName) -> Option<&PlayerName> {
        self.by_folded.get(&name.folded())
    }

    fn existing(&self, name: &PlayerName) -> Result<&PlayerRecord, RegistryError> {
        self.player(name)
            .ok_or_else(|| RegistryError::UnknownPlayer(name.clone()))
    }

    fn free_key(&self, key_sha256: &str) -> Result<[u8; 32], RegistryError> {
        let key = from_hex(key_sha256).ok_or(RegistryError::InvalidKeyHash)?;
        match self.by_key.contains_key(&key) {
            true => Err(RegistryError::KeyInUse),
            false => Ok(key),
        }
    }
}
