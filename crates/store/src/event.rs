//! What the store keeps: events in their envelope, and what an append or
//! a listing returns.

use std::fmt;

use crate::ids::{GameId, RequestId};

/// Who caused an event: a player's seat, or the server itself (a draw, a
/// timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// The server, acting for no player.
    Server,
    /// The player in this seat (0-based).
    Seat(u8),
}

/// An event to append: the envelope fields the caller chooses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    /// Who caused it.
    pub actor: Actor,
    /// The version of the payload's encoding (the engine codec's schema).
    pub schema: u16,
    /// The encoded event; the store never looks inside.
    pub payload: Vec<u8>,
}

/// A SHA-256 digest of the hash chain.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// What the first event of every game chains from.
    pub const ZERO: Hash = Hash([0; 32]);
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({self})")
    }
}

/// An event as stored: the caller's fields plus what the store assigned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    /// The game's stream.
    pub game: GameId,
    /// 1, 2, 3, … within the game, without gaps. A game's version is the
    /// sequence number of its last event.
    pub seq: u64,
    /// 1, 2, 3, … across the whole store, in commit order.
    pub position: u64,
    /// When it was appended, in milliseconds since the Unix epoch (from the
    /// store's [`Clock`](crate::Clock)).
    pub time_millis: u64,
    /// Who caused it.
    pub actor: Actor,
    /// The request that appended it (empty if none was given).
    pub request_id: RequestId,
    /// The payload's encoding version.
    pub schema: u16,
    /// The encoded event.
    pub payload: Vec<u8>,
    /// The hash of the game's previous event ([`Hash::ZERO`] for the first).
    pub prev_hash: Hash,
    /// SHA-256 over the envelope up to this field: the format version, the
    /// previous hash and the whole envelope.
    pub hash: Hash,
}

/// What an append wrote (or, for a retried request id, had written): the
/// events' sequence numbers and global positions, each a closed range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The first new event's sequence number.
    pub first_seq: u64,
    /// The last new event's sequence number: the game's new version.
    pub last_seq: u64,
    /// The first new event's global position.
    pub first_position: u64,
    /// The last new event's global position.
    pub last_position: u64,
    /// When the events were appended (one time for the whole append), in
    /// milliseconds since the Unix epoch.
    pub time_millis: u64,
}

/// One game in a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSummary {
    /// The game.
    pub game: GameId,
    /// Its last sequence number (its version).
    pub last_seq: u64,
    /// The time of its first event, in Unix milliseconds.
    pub created_millis: u64,
}

/// A page of games, in game id order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GamePage {
    /// The games of this page.
    pub games: Vec<GameSummary>,
    /// Pass this to get the next page; `None` on the last page.
    pub next_page_token: Option<String>,
    /// Games of this page's range that could not be summarised because a
    /// envelope is damaged: listed here rather than hidden or failing the
    /// whole page.
    pub damaged: Vec<crate::Corruption>,
}

/// What `verify` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Games checked.
    pub games: u64,
    /// Events whose envelope, hash and chain link were checked.
    pub events: u64,
    /// The first bad event of each damaged game, in game order.
    pub problems: Vec<crate::Corruption>,
    /// Damaged entries of the global index (position, what is wrong).
    pub index_problems: Vec<(u64, String)>,
}

impl VerifyReport {
    /// True when nothing was damaged.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.index_problems.is_empty()
    }
}
