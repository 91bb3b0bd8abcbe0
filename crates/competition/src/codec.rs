//! The stored encoding of every event type: JSON (serde_json), under a
//! schema number of its own. A released encoding never changes; a new one
//! gets a new schema number.

use sha2::{Digest, Sha256};

/// The schema number the server stores [`crate::RegistryEvent`]s under.
pub const REGISTRY_SCHEMA: u16 = 200;
/// The schema number the server stores [`crate::TournamentEvent`]s under.
pub const TOURNAMENT_SCHEMA: u16 = 201;
/// The schema number the server stores [`crate::RatingEvent`]s under.
pub const RATINGS_SCHEMA: u16 = 202;
/// The schema number the server stores [`crate::ChallengeEvent`]s under.
pub const CHALLENGE_SCHEMA: u16 = 203;

/// Why stored bytes are not an event.
#[derive(Debug, thiserror::Error)]
#[error("not a valid event: {0}")]
pub struct DecodeError(#[from] serde_json::Error);

/// `encode` and `decode` for an event type, the same JSON for all.
macro_rules! json_codec {
    ($event:ty) => {
        impl $event {
            /// The event's stored bytes (JSON).
            pub fn encode(&self) -> Vec<u8> {
                // Serialising these types cannot fail: every map key is a
                // string and every value serialisable.
                serde_json::to_vec(self).unwrap_or_default()
            }

            /// The event stored as `bytes`, validated (names included).
            pub fn decode(bytes: &[u8]) -> Result<Self, $crate::codec::DecodeError> {
                Ok(serde_json::from_slice(bytes)?)
            }
        }
    };
}
pub(crate) use json_codec;

/// The SHA-256 of `bytes`.
pub(crate) fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// Lower-case hex of 32 bytes.
pub fn to_hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// 32 bytes from 64 hex digits (either case); `None` for anything else.
pub fn from_hex(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let high = (pair[0] as char).to_digit(16)?;
        let low = (pair[1] as char).to_digit(16)?;
        *byte = (high * 16 + low) as u8;
    }
    Some(out)
}

/// Serde of `[u8; 32]` as a 64-digit hex string.
pub(crate) mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8; 32], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::to_hex(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<[u8; 32], D::Error> {
        let hex = String::deserialize(deserializer)?;
        super::from_hex(&hex).ok_or_else(|| serde::de::Error::custom("expected 64 hex digits"))
    }
}
