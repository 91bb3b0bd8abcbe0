//! What the tests share: a seeded generator, names and specs, and a
//! driver that runs a tournament through `decide` and `apply`.

use carcassonne_competition::*;

/// A small seeded generator (xorshift64*), so that failures replay.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn seed(&mut self) -> [u8; 32] {
        std::array::from_fn(|_| self.next() as u8)
    }
}

pub fn name(s: &str) -> PlayerName {
    PlayerName::new(s).unwrap()
}

pub fn names(n: usize) -> Vec<PlayerName> {
    (0..n).map(|i| name(&format!("p{i:03}"))).collect()
}

pub fn spec(n: usize, format: Format, table_size: u8) -> Spec {
    Spec {
        name: "Test cup".into(),
        organiser: None,
        participants: names(n),
        house_bots: Default::default(),
        format,
        table_size,
        table_points: Spec::default_table_points(table_size),
        games_per_match: 1,
        duplicate_bags: false,
        rated: false,
        games: serde_json::json!({"rules": "base"}),
    }
}

pub fn swiss(n: usize, rounds: u32, table_size: u8) -> Spec {
    spec(n, Format::Swiss { rounds }, table_size)
}

/// Ranks as the engine gives them: 1 + the number of better scores.
pub fn ranks_of(scores: &[u32]) -> Vec<u8> {
    scores
        .iter()
        .map(|s| 1 + scores.iter().filter(|t| *t > s).count() as u8)
        .collect()
}

/// A random played result for `seats` seats, with ties now and then.
pub fn random_result(seats: usize, rng: &mut Rng) -> GameResult {
    let scores: Vec<u32> = (0..seats).map(|_| rng.below(12) as u32 * 5).collect();
    GameResult::Ranked {
        ranks: ranks_of(&scores),
        scores,
    }
}

/// A tournament run through its decisions, with every event kept.
pub struct Run {
    pub id: String,
    pub tournament: Tournament,
    pub events: Vec<TournamentEvent>,
}

impl Run {
    pub fn new(id: &str, spec: Spec, seed: [u8; 32]) -> Run {
        let created = Tournament::create(spec.clone(), seed).unwrap();
        let tournament = Tournament::from_event(id, &created).unwrap();
        Run {
            id: id.into(),
            tournament,
            events: vec![created],
        }
    }

    /// Decides `command`, applies and keeps its events, and returns them.
    pub fn execute(&mut self, command: TournamentCommand) -> Vec<TournamentEvent> {
        let events = self.tournament.decide(&command).unwrap();
        for event in &events {
            self.tournament.apply(event);
        }
        self.events.extend(events.iter().cloned());
        events
    }

    pub fn advance(&mut self) -> Vec<TournamentEvent> {
        self.execute(TournamentCommand::Advance)
    }

    pub fn record(&mut self, game: &str, result: GameResult) {
        self.execute(TournamentCommand::RecordResult {
            game: game.into(),
            result,
        });
    }

    /// Random results for every pending game.
    pub fn play_pending(&mut self, rng: &mut Rng) {
        let pending: Vec<(String, usize)> = self
            .tournament
            .pending_games()
            .map(|game| (game.id, game.seats.len()))
            .collect();
        for (game, seats) in pending {
            self.record(&game, random_result(seats, rng));
        }
    }

    /// Advances and plays random results until the tournament finishes;
    /// the number of rounds played.
    pub fn play_to_end(&mut self, rng: &mut Rng) -> u32 {
        for _ in 0..10_000 {
            if self.tournament.is_finished() {
                return self.tournament.round();
            }
            self.advance();
            self.play_pending(rng);
        }
        panic!("the tournament never finished");
    }

    /// Every table of every round, by round.
    pub fn tables(&self) -> Vec<Vec<Vec<PlayerName>>> {
        let rounds = self.tournament.paired_rounds();
        rounds
            .iter()
            .map(|round| round.tables.iter().map(|table| table.players.clone()).collect())
            .collect()
    }

    /// A fresh fold of the kept events.
    pub fn refold(&self) -> Tournament {
        fold(&self.id, &self.events)
    }
}

pub fn fold(id: &str, events: &[TournamentEvent]) -> Tournament {
    let mut tournament = Tournament::from_event(id, &events[0]).unwrap();
    for event in &events[1..] {
        tournament.apply(event);
    }
    tournament
}

/// Checks that the standings are sorted by points, Buchholz, firsts, game
/// score, with ranks 1, 2, 3, ...
pub fn check_standings_sorted(standings: &[Standing]) {
    for (i, standing) in standings.iter().enumerate() {
        assert_eq!(standing.rank as usize, i + 1);
    }
    for pair in standings.windows(2) {
        let key = |s: &Standing| (s.points, s.buchholz, s.firsts, s.game_score);
        assert!(
            key(&pair[0]) >= key(&pair[1]),
            "{:?} before {:?}",
            pair[0],
            pair[1]
        );
    }
}
