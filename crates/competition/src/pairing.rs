//! Pairing `pairing/1`: a pure, deterministic, versioned function from
//! what a tournament knows before a round to the round's tables. The
//! crate docs state its rules; an auditor recomputes every round of a
//! tournament with [`pair`] from the events before it.

pub(crate) mod round_robin;
mod search;
mod set;
mod swiss;

use std::collections::{BTreeMap, BTreeSet};

use crate::codec::sha256;
use crate::name::PlayerName;
use crate::tournament::spec::{Format, Spec};

pub use swiss::{LOOKAHEAD_LIMIT, SEARCH_LIMIT};

/// The version of the pairing algorithm: it never changes once released;
/// another algorithm gets another version.
pub const PAIRING_VERSION: &str = "pairing/1";

/// The domain string of the lot (see [`lot_order`]).
pub const LOT_DOMAIN: &str = "carcassonne/tournament-lot/1";

/// The tables of a round (each in the seat order of its game 0) and who
/// has a bye.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pairing {
    pub tables: Vec<Vec<PlayerName>>,
    pub byes: Vec<PlayerName>,
}

/// What the tournament knows before a round.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairingInput {
    /// The active (not withdrawn) players, in standings order (best first).
    pub standings: Vec<PlayerName>,
    /// How many tables each pair of players shared so far; keyed by the
    /// pair in name order (see [`PairingInput::add_meeting`]).
    pub meetings: BTreeMap<(PlayerName, PlayerName), u32>,
    /// How many byes each player had.
    pub byes: BTreeMap<PlayerName, u32>,
}

impl PairingInput {
    /// Counts one more table shared by `a` and `b`.
    pub fn add_meeting(&mut self, a: &PlayerName, b: &PlayerName) {
        if a != b {
            *self.meetings.entry(ordered(a, b)).or_insert(0) += 1;
        }
    }

    /// How many tables `a` and `b` shared.
    pub fn met(&self, a: &PlayerName, b: &PlayerName) -> u32 {
        self.meetings.get(&ordered(a, b)).copied().unwrap_or(0)
    }

    pub fn byes_of(&self, player: &PlayerName) -> u32 {
        self.byes.get(player).copied().unwrap_or(0)
    }
}

fn ordered(a: &PlayerName, b: &PlayerName) -> (PlayerName, PlayerName) {
    if a <= b {
        (a.clone(), b.clone())
    } else {
        (b.clone(), a.clone())
    }
}

/// The lot: the participants ordered by SHA-256 over the bytes of
/// [`LOT_DOMAIN`], the tournament seed and the name's UTF-8 bytes
/// (ascending, as bytes; equal hashes, which never happen, by name). It
/// orders the first Swiss round, lays out round robins, and breaks the
/// last tie of the standings.
pub fn lot_order(participants: &[PlayerName], seed: &[u8; 32]) -> Vec<PlayerName> {
    let mut keyed: Vec<([u8; 32], &PlayerName)> = participants
        .iter()
        .map(|name| {
            (
                sha256(&[LOT_DOMAIN.as_bytes(), seed, name.as_str().as_bytes()]),
                name,
            )
        })
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, name)| name.clone()).collect()
}

/// Pairs round `round` (1-based) of the tournament of `spec` and `seed`.
pub fn pair(spec: &Spec, input: &PairingInput, seed: &[u8; 32], round: u32) -> Pairing {
    PairingPlan::new(spec, seed).pair(input, round)
}

/// What pairing knows from the spec and the seed alone: the lot and, for
/// a round robin, the whole schedule. [`pair`] builds one per call; a
/// tournament keeps one.
#[derive(Debug, Clone)]
pub struct PairingPlan {
    format: Format,
    table_size: usize,
    lot: Vec<PlayerName>,
    schedule: round_robin::Schedule,
}

impl PairingPlan {
    pub fn new(spec: &Spec, seed: &[u8; 32]) -> PairingPlan {
        let table_size = spec.table_size();
        let lot = lot_order(&spec.participants, seed);
        let schedule = match spec.format {
            Format::RoundRobin => round_robin::schedule(lot.len(), table_size),
            Format::Swiss { .. } => Vec::new(),
        };
        PairingPlan {
            format: spec.format,
            table_size,
            lot,
            schedule,
        }
    }

    /// The participants in lot order.
    pub fn lot(&self) -> &[PlayerName] {
        &self.lot
    }

    /// How many rounds the format plays (fewer if players withdraw).
    pub fn rounds(&self) -> u32 {
        match self.format {
            Format::Swiss { rounds } => rounds,
            Format::RoundRobin => self.schedule.len() as u32,
        }
    }

    /// Pairs round `round` (1-based); no tables past the last round.
    pub fn pair(&self, input: &PairingInput, round: u32) -> Pairing {
        if round == 0 || round > self.rounds() {
            return Pairing::default();
        }
        match self.format {
            Format::Swiss { rounds } => swiss::pair_swiss(self.table_size, input, rounds - round),
            Format::RoundRobin => self.pair_round_robin(input, round),
        }
    }

    /// The scheduled round, less the withdrawn: with tables of 2 a player
    /// whose opponent withdrew has a bye; with larger tables the withdrawn
    /// leave their tables, and a table left with one player is dropped.
    fn pair_round_robin(&self, input: &PairingInput, round: u32) -> Pairing {
        let active: BTreeSet<&PlayerName> = input.standings.iter().collect();
        let mut pairing = Pairing::default();
        for table in &self.schedule[round as usize - 1] {
            let players: Vec<PlayerName> = table
                .iter()
                .map(|&i| &self.lot[i])
                .filter(|name| active.contains(name))
                .cloned()
                .collect();
            match players.len() {
                0 => {}
                1 if self.table_size == 2 => pairing.byes.extend(players),
                1 => {}
                _ => pairing.tables.push(players),
            }
        }
        pairing
    }
}
