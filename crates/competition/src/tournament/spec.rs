//! What a tournament is: its [`Spec`], checked field by field.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::name::PlayerName;

pub const MAX_TOURNAMENT_NAME_LEN: usize = 100;
pub const MIN_PARTICIPANTS: usize = 2;
pub const MAX_PARTICIPANTS: usize = 256;
pub const MAX_GAMES_PER_MATCH: u8 = 10;
/// The largest table points of a place: keeps every sum of sixtieths of a
/// tournament well inside `u32`.
pub const MAX_PLACE_POINTS: u32 = 1000;
/// The most tables a round robin with tables of 3 or more may schedule
/// (every k-subset of the participants plays once, so they grow fast;
/// with tables of 2 there are at most 256 * 255 / 2).
pub const MAX_ROUND_ROBIN_TABLES: u64 = 5000;

/// How rounds are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Everyone meets everyone: with tables of 2 every pair once, with
    /// larger tables every table of participants once.
    RoundRobin,
    /// A fixed number of rounds, each paired by the standings so far.
    Swiss { rounds: u32 },
}

/// A tournament's settings, fixed at its creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// 1 to 100 characters.
    pub name: String,
    /// The organiser who created it, who alone may withdraw players.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organiser: Option<PlayerName>,
    /// 2 to 256 distinct participants: registered players, and the house
    /// bots of `house_bots`.
    pub participants: Vec<PlayerName>,
    /// The participants that are built-in bots the server plays (house
    /// bots), each by its name ([`PlayerName::house_bot`]) with its level
    /// (opaque here: the server checks it). Their seats are bots' seats; a
    /// game with one rates nobody. Empty (and then absent from the JSON)
    /// in a tournament of registered players only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub house_bots: BTreeMap<PlayerName, String>,
    pub format: Format,
    /// Players per table, 2 to 5; a table may have one player fewer.
    pub table_size: u8,
    /// Whole points by place (best first): `table_size` of them, never
    /// increasing, each at most 1000.
    pub table_points: Vec<u32>,
    /// Games each table plays per round, 1 to 10; game g seats the table
    /// rotated left by g.
    pub games_per_match: u8,
    /// Every table of a round plays its game g with the same seed.
    pub duplicate_bags: bool,
    pub rated: bool,
    /// The rule options and time control of every game: opaque here (the
    /// server checks them).
    pub games: serde_json::Value,
}

/// Why a [`Spec`] is refused; each error names its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("name: must have 1 to {MAX_TOURNAMENT_NAME_LEN} characters, has {0}")]
    Name(usize),
    #[error("participants: must be {MIN_PARTICIPANTS} to {MAX_PARTICIPANTS} players, are {0}")]
    ParticipantCount(usize),
    #[error("participants: {0} is listed twice")]
    DuplicateParticipant(PlayerName),
    #[error("house_bots: {0} is a house bot's name, and no house bot of the tournament")]
    NotAHouseBot(PlayerName),
    #[error("house_bots: {0} is not a house bot's name, or not a participant")]
    HouseBotName(PlayerName),
    #[error("format.rounds: a Swiss of {participants} players has 1 to {max} rounds, not {rounds}")]
    SwissRounds {
        rounds: u32,
        participants: usize,
        max: u32,
    },
    #[error("format: a round robin with tables of {table_size} needs at least {table_size} participants")]
    RoundRobinTooFewParticipants { table_size: u8 },
    #[error("format: a round robin of {tables} tables is too long (at most {MAX_ROUND_ROBIN_TABLES})")]
    RoundRobinTooLong { tables: u64 },
    #[error("table_size: must be 2 to 5, is {0}")]
    TableSize(u8),
    #[error("table_points: must give points for each of the {expected} places, gives {got}")]
    TablePointsLength { expected: usize, got: usize },
    #[error("table_points: must not increase from one place to the next")]
    TablePointsIncrease,
    #[error("table_points: at most {MAX_PLACE_POINTS} points a place")]
    TablePointsTooLarge,
    #[error("games_per_match: must be 1 to {MAX_GAMES_PER_MATCH}, is {0}")]
    GamesPerMatch(u8),
}

impl SpecError {
    /// The field of [`Spec`] the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            SpecError::Name(_) => "name",
            SpecError::ParticipantCount(_) | SpecError::DuplicateParticipant(_) => "participants",
            SpecError::NotAHouseBot(_) | SpecError::HouseBotName(_) => "house_bots",
            SpecError::SwissRounds { .. } => "format.rounds",
            SpecError::RoundRobinTooFewParticipants { .. } | SpecError::RoundRobinTooLong { .. } => "format",
            SpecError::TableSize(_) => "table_size",
            SpecError::TablePointsLength { .. }
            | SpecError::TablePointsIncrease
            | SpecError::TablePointsTooLarge => "table_points",
            SpecError::GamesPerMatch(_) => "games_per_match",
        }
    }
}

/// The table points of tables of 3 to 5 players when an organiser gives
/// none, cut to the table size.
pub const DEFAULT_TABLE_POINTS: [u32; 5] = [5, 3, 2, 1, 0];

impl Spec {
    /// The table points used when an organiser gives none (as
    /// CreateTournament promises): `[1, 0]` for duels, and
    /// [`DEFAULT_TABLE_POINTS`] cut to the table size otherwise, so
    /// `[5, 3, 2]` for tables of 3 and `[5, 3, 2, 1]` for tables of 4.
    pub fn default_table_points(table_size: u8) -> Vec<u32> {
        match table_size {
            0..=2 => vec![1, 0],
            k => DEFAULT_TABLE_POINTS
                .iter()
                .copied()
                .take(usize::from(k))
                .collect(),
        }
    }

    /// Checks every field; the first error found, in field order.
    pub fn check(&self) -> Result<(), SpecError> {
        let name_len = self.name.chars().count();
        if !(1..=MAX_TOURNAMENT_NAME_LEN).contains(&name_len) {
            return Err(SpecError::Name(name_len));
        }
        let n = self.participants.len();
        if !(MIN_PARTICIPANTS..=MAX_PARTICIPANTS).contains(&n) {
            return Err(SpecError::ParticipantCount(n));
        }
        let mut seen = BTreeSet::new();
        if let Some(twice) = self.participants.iter().find(|p| !seen.insert(*p)) {
            return Err(SpecError::DuplicateParticipant(twice.clone()));
        }
        if let Some(stray) = self
            .participants
            .iter()
            .find(|p| p.is_house_bot() && !self.house_bots.contains_key(*p))
        {
            return Err(SpecError::NotAHouseBot(stray.clone()));
        }
        if let Some(stray) = self
            .house_bots
            .keys()
            .find(|bot| !bot.is_house_bot() || !seen.contains(bot))
        {
            return Err(SpecError::HouseBotName(stray.clone()));
        }
        if !(2..=5).contains(&self.table_size) {
            return Err(SpecError::TableSize(self.table_size));
        }
        match self.format {
            Format::Swiss { rounds } => {
                let max = (n as u32 - 1).max(1);
                if !(1..=max).contains(&rounds) {
                    return Err(SpecError::SwissRounds {
                        rounds,
                        participants: n,
                        max,
                    });
                }
            }
            Format::RoundRobin => {
                if n < usize::from(self.table_size) {
                    return Err(SpecError::RoundRobinTooFewParticipants {
                        table_size: self.table_size,
                    });
                }
                let tables = binomial(n as u64, u64::from(self.table_size));
                if self.table_size > 2 && tables > MAX_ROUND_ROBIN_TABLES {
                    return Err(SpecError::RoundRobinTooLong { tables });
                }
            }
        }
        let expected = usize::from(self.table_size);
        if self.table_points.len() != expected {
            return Err(SpecError::TablePointsLength {
                expected,
                got: self.table_points.len(),
            });
        }
        if self.table_points.windows(2).any(|pair| pair[1] > pair[0]) {
            return Err(SpecError::TablePointsIncrease);
        }
        if self.table_points.iter().any(|&points| points > MAX_PLACE_POINTS) {
            return Err(SpecError::TablePointsTooLarge);
        }
        if !(1..=MAX_GAMES_PER_MATCH).contains(&self.games_per_match) {
            return Err(SpecError::GamesPerMatch(self.games_per_match));
        }
        Ok(())
    }

    /// Whether `player` is one of the tournament's house bots.
    pub fn is_house_bot(&self, player: &PlayerName) -> bool {
        self.house_bots.contains_key(player)
    }

    /// The table size as pairing uses it: clamped into 2..=5, so that an
    /// unchecked spec can never make pairing divide by zero.
    pub(crate) fn table_size(&self) -> usize {
        usize::from(self.table_size.clamp(2, 5))
    }

    /// The games each table plays, as the tournament pairs them: at least
    /// one, even for an unchecked spec.
    pub fn games_per_match(&self) -> u8 {
        self.games_per_match.max(1)
    }
}

/// n choose k, saturating (n <= 256, k <= 5 never saturates).
fn binomial(n: u64, k: u64) -> u64 {
    (0..k).fold(1u64, |acc, i| acc.saturating_mul(n.saturating_sub(i)) / (i + 1))
}
