//! A tournament: a fold of its [`TournamentEvent`]s, with decisions that
//! change nothing (`decide`) and queries.

mod decide;
mod events;
mod ids;
pub(crate) mod spec;
mod standings;

use std::collections::{BTreeSet, HashMap};
use std::fmt;

pub use events::{GameResult, Table, TournamentCommand, TournamentError, TournamentEvent};
pub use ids::{GAME_SEED_DOMAIN, game_id, game_seed, seed_commitment};
pub use spec::{
    DEFAULT_TABLE_POINTS, Format, MAX_GAMES_PER_MATCH, MAX_PARTICIPANTS, MAX_PLACE_POINTS,
    MAX_ROUND_ROBIN_TABLES, MAX_TOURNAMENT_NAME_LEN, MIN_PARTICIPANTS, Spec, SpecError,
};
pub use standings::Standing;

use crate::name::PlayerName;
use crate::pairing::{PAIRING_VERSION, Pairing, PairingInput, PairingPlan};

/// The state of a tournament. Its `Debug` never prints the seed.
#[derive(Clone)]
pub struct Tournament {
    id: String,
    spec: Spec,
    seed: [u8; 32],
    pairing_version: String,
    plan: PairingPlan,
    rounds: Vec<PairedRound>,
    /// Game id -> (round index, table index, game index).
    games: HashMap<String, (usize, usize, u8)>,
    results: HashMap<String, GameResult>,
    withdrawn: BTreeSet<PlayerName>,
    finished: bool,
}

/// A round as paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairedRound {
    pub round: u32,
    pub tables: Vec<Table>,
    pub byes: Vec<PlayerName>,
}

/// One game of a tournament, where it is played and how it ended. Its
/// `Debug` never prints the game's seed.
#[derive(Clone, PartialEq, Eq)]
pub struct ScheduledGame<'a> {
    pub round: u32,
    /// 1-based.
    pub table: u32,
    /// 0-based.
    pub index: u8,
    pub id: String,
    /// The seat order: the table's order rotated left by `index`.
    pub seats: Vec<PlayerName>,
    pub seed: [u8; 32],
    pub result: Option<&'a GameResult>,
}

impl Tournament {
    /// The tournament that `TournamentEvent::Created { spec, seed, .. }`
    /// starts. The spec is taken as given: check it first
    /// ([`Tournament::create`] does).
    pub fn created(id: &str, spec: Spec, seed: [u8; 32]) -> Tournament {
        Tournament::with_version(id, spec, seed, PAIRING_VERSION)
    }

    /// The tournament a stored `Created` event starts; `None` for any
    /// other event.
    pub fn from_event(id: &str, created: &TournamentEvent) -> Option<Tournament> {
        match created {
            TournamentEvent::Created { spec, seed, pairing } => {
                Some(Tournament::with_version(id, spec.clone(), *seed, pairing))
            }
            _ => None,
        }
    }

    /// The `Created` event of a new tournament, once its spec checks.
    pub fn create(spec: Spec, seed: [u8; 32]) -> Result<TournamentEvent, SpecError> {
        spec.check()?;
        Ok(TournamentEvent::Created {
            spec,
            seed,
            pairing: PAIRING_VERSION.to_string(),
        })
    }

    fn with_version(id: &str, spec: Spec, seed: [u8; 32], pairing_version: &str) -> Tournament {
        Tournament {
            id: id.to_string(),
            plan: PairingPlan::new(&spec, &seed),
            spec,
            seed,
            pairing_version: pairing_version.to_string(),
            rounds: Vec::new(),
            games: HashMap::new(),
            results: HashMap::new(),
            withdrawn: BTreeSet::new(),
            finished: false,
        }
    }

    /// Folds one event in. Never fails: an event `decide` would not have
    /// produced (a second `Created`, a round out of turn, a result for an
    /// unknown or decided game or of the wrong size, a stranger's
    /// withdrawal) changes nothing.
    pub fn apply(&mut self, event: &TournamentEvent) {
        match event {
            TournamentEvent::Created { .. } => {}
            TournamentEvent::RoundPaired { round, tables, byes } => {
                if *round != self.round() + 1 {
                    return;
                }
                let round_index = self.rounds.len();
                for (table_index, table) in tables.iter().enumerate() {
                    for (game_index, game) in table.games.iter().enumerate() {
                        let at = (round_index, table_index, game_index.min(255) as u8);
                        self.games.entry(game.clone()).or_insert(at);
                    }
                }
                self.rounds.push(PairedRound {
                    round: *round,
                    tables: tables.clone(),
                    byes: byes.clone(),
                });
            }
            TournamentEvent::GameEnded { game, result } => {
                let fits = match result {
                    GameResult::Ranked { ranks, scores } => self
                        .seats(game)
                        .is_some_and(|seats| ranks.len() == seats && scores.len() == seats),
                    GameResult::Aborted => self.games.contains_key(game),
                };
                if fits && !self.results.contains_key(game) {
                    self.results.insert(game.clone(), result.clone());
                }
            }
            TournamentEvent::Withdrawn { player } => {
                if self.spec.participants.contains(player) {
                    self.withdrawn.insert(player.clone());
                }
            }
            TournamentEvent::Finished => self.finished = true,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The sealed seed: reveal it only once the tournament has finished.
    pub fn seed(&self) -> &[u8; 32] {
        &self.seed
    }

    /// The SHA-256 of the seed in hex, published from the start.
    pub fn seed_commitment(&self) -> String {
        seed_commitment(&self.seed)
    }

    /// The pairing version the tournament was created with.
    pub fn pairing_version(&self) -> &str {
        &self.pairing_version
    }

    /// The participants in lot order.
    pub fn lot(&self) -> &[PlayerName] {
        self.plan.lot()
    }

    /// The current round: the last one paired, 0 before the first.
    pub fn round(&self) -> u32 {
        self.rounds.last().map_or(0, |round| round.round)
    }

    /// How many rounds the format plays: a Swiss its `rounds`, a round
    /// robin its schedule's length. Fewer are played if fewer than two
    /// players remain.
    pub fn rounds(&self) -> u32 {
        self.plan.rounds()
    }

    pub fn paired_rounds(&self) -> &[PairedRound] {
        &self.rounds
    }

    /// Round `round` (1-based) as paired.
    pub fn paired(&self, round: u32) -> Option<&PairedRound> {
        self.rounds.get((round as usize).checked_sub(1)?)
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn withdrawn(&self) -> &BTreeSet<PlayerName> {
        &self.withdrawn
    }

    /// Participants who have not withdrawn, in the spec's order.
    pub fn active(&self) -> impl Iterator<Item = &PlayerName> {
        self.spec
            .participants
            .iter()
            .filter(|p| !self.withdrawn.contains(*p))
    }

    /// Every paired game in round, table, index order.
    pub fn games(&self) -> impl Iterator<Item = ScheduledGame<'_>> {
        self.rounds.iter().enumerate().flat_map(move |(r, round)| {
            round.tables.iter().enumerate().flat_map(move |(t, table)| {
                (0..table.games.len()).map(move |g| self.scheduled(r, t, g.min(255) as u8))
            })
        })
    }

    pub fn game(&self, id: &str) -> Option<ScheduledGame<'_>> {
        let &(r, t, g) = self.games.get(id)?;
        Some(self.scheduled(r, t, g))
    }

    /// The paired games without a result yet.
    pub fn pending_games(&self) -> impl Iterator<Item = ScheduledGame<'_>> {
        self.games().filter(|game| game.result.is_none())
    }

    pub fn result(&self, game: &str) -> Option<&GameResult> {
        self.results.get(game)
    }

    /// The standings, best first (see the crate docs for the order).
    pub fn standings(&self) -> Vec<Standing> {
        standings::standings(self)
    }

    /// What pairing knows now: active players in standings order, who met
    /// whom and how often, who had byes.
    pub fn pairing_input(&self) -> PairingInput {
        let mut input = PairingInput {
            standings: self
                .standings()
                .into_iter()
                .filter(|standing| !standing.withdrawn)
                .map(|standing| standing.player)
                .collect(),
            ..PairingInput::default()
        };
        for round in &self.rounds {
            for player in &round.byes {
                *input.byes.entry(player.clone()).or_insert(0) += 1;
            }
            for table in &round.tables {
                for (i, a) in table.players.iter().enumerate() {
                    for b in &table.players[i + 1..] {
                        input.add_meeting(a, b);
                    }
                }
            }
        }
        input
    }

    /// The pairing the next round gets, from the state as it is: what an
    /// auditor compares with the next `RoundPaired`. `None` once finished,
    /// after the last round, or with fewer than two active players.
    pub fn pairing_for_next_round(&self) -> Option<Pairing> {
        let more = !self.finished && self.round() < self.rounds() && self.active().nth(1).is_some();
        more.then(|| self.plan.pair(&self.pairing_input(), self.round() + 1))
    }

    /// How many seats game `id` has.
    fn seats(&self, id: &str) -> Option<usize> {
        let &(r, t, _) = self.games.get(id)?;
        Some(self.rounds[r].tables[t].players.len())
    }

    fn scheduled(&self, r: usize, t: usize, g: u8) -> ScheduledGame<'_> {
        let round = &self.rounds[r];
        let table = &round.tables[t];
        let id = table.games[usize::from(g)].clone();
        let mut seats = table.players.clone();
        if !seats.is_empty() {
            let shift = usize::from(g) % seats.len();
            seats.rotate_left(shift);
        }
        ScheduledGame {
            round: round.round,
            table: t as u32 + 1,
            index: g,
            seed: game_seed(&self.seed, round.round, t as u32 + 1, g, self.spec.duplicate_bags),
            result: self.results.get(&id),
            id,
            seats,
        }
    }
}

impl fmt::Debug for Tournament {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tournament")
            .field("id", &self.id)
            .field("spec", &self.spec)
            .field("seed", &format_args!("sealed"))
            .field("pairing_version", &self.pairing_version)
            .field("rounds", &self.rounds)
            .field("results", &self.results.len())
            .field("withdrawn", &self.withdrawn)
            .field("finished", &self.finished)
            .finish()
    }
}

impl fmt::Debug for ScheduledGame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScheduledGame")
            .field("round", &self.round)
            .field("table", &self.table)
            .field("index", &self.index)
            .field("id", &self.id)
            .field("seats", &self.seats)
            .field("seed", &format_args!("sealed"))
            .field("result", &self.result)
            .finish()
    }
}
