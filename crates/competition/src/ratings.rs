//! Ratings: a fold of rated results, in two pools. The maths is
//! skillratings': Glicko-2 for duels, Weng-Lin for tables of 3 to 5.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};
use skillratings::MultiTeamOutcome;
use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use crate::codec::json_codec;
use crate::name::PlayerName;

/// A rated game's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatingEvent {
    /// `players` in seat order with their `ranks` (1 the best, ties equal).
    Rated {
        game: String,
        players: Vec<PlayerName>,
        ranks: Vec<u8>,
    },
}

json_codec!(RatingEvent);

/// The two rating pools: a player has a rating in each they played in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pool {
    /// 2-player games: Glicko-2, each game a rating period of its own.
    Duel,
    /// 3 to 5 players: Weng-Lin, each player a team of one.
    Multiplayer,
}

impl Pool {
    /// The pool of a game of `players` seats.
    pub fn of(players: usize) -> Option<Pool> {
        match players {
            2 => Some(Pool::Duel),
            3..=5 => Some(Pool::Multiplayer),
            _ => None,
        }
    }
}

/// A player's rating in a pool.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Glicko-2 rating (1500 to start), or Weng-Lin mu (25).
    pub value: f64,
    /// Glicko-2 deviation (350), or Weng-Lin sigma (25/3).
    pub deviation: f64,
    /// Rated games in the pool.
    pub games: u32,
}

/// One game's effect on a player's rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatingChange {
    pub game: String,
    pub pool: Pool,
    pub before: Rating,
    pub after: Rating,
}

/// Every player's ratings and their history.
#[derive(Debug, Clone, Default)]
pub struct Ratings {
    duel: BTreeMap<PlayerName, (Glicko2Rating, u32)>,
    multiplayer: BTreeMap<PlayerName, (WengLinRating, u32)>,
    history: BTreeMap<PlayerName, Vec<RatingChange>>,
    rated: HashSet<String>,
}

impl Ratings {
    /// Folds one rated game in. Never fails: a game whose players and ranks
    /// differ in number, with a player listed twice, a rank 0, fewer than
    /// 2 or more than 5 players, or an id already rated changes nothing.
    pub fn apply(&mut self, event: &RatingEvent) {
        let RatingEvent::Rated { game, players, ranks } = event;
        let distinct: BTreeSet<&PlayerName> = players.iter().collect();
        let Some(pool) = Pool::of(players.len()) else {
            return;
        };
        if ranks.len() != players.len() || distinct.len() != players.len() || ranks.contains(&0) {
            return;
        }
        if !self.rated.insert(game.clone()) {
            return;
        }
        let before: Vec<Rating> = players.iter().map(|p| self.current(pool, p)).collect();
        match pool {
            Pool::Duel => self.rate_duel(players, ranks),
            Pool::Multiplayer => self.rate_multiplayer(players, ranks),
        }
        for (player, before) in players.iter().zip(before) {
            let after = self.current(pool, player);
            let change = RatingChange {
                game: game.clone(),
                pool,
                before,
                after,
            };
            self.history.entry(player.clone()).or_default().push(change);
        }
    }

    fn rate_duel(&mut self, players: &[PlayerName], ranks: &[u8]) {
        let outcome = match ranks[0].cmp(&ranks[1]) {
            std::cmp::Ordering::Less => Outcomes::WIN,
            std::cmp::Ordering::Greater => Outcomes::LOSS,
            std::cmp::Ordering::Equal => Outcomes::DRAW,
        };
        let (a, b) = (self.duel_rating(&players[0]), self.duel_rating(&players[1]));
        let (a, b) = glicko2(&a, &b, &outcome, &Glicko2Config::new());
        for (player, rating) in players.iter().zip([a, b]) {
            let entry = self.duel.entry(player.clone()).or_insert((rating, 0));
            *entry = (rating, entry.1 + 1);
        }
    }

    fn rate_multiplayer(&mut self, players: &[PlayerName], ranks: &[u8]) {
        let teams: Vec<[WengLinRating; 1]> = players.iter().map(|p| [self.multiplayer_rating(p)]).collect();
        let teams_and_ranks: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .zip(ranks)
            .map(|(team, &rank)| (&team[..], MultiTeamOutcome::new(usize::from(rank))))
            .collect();
        let rated = weng_lin_multi_team(&teams_and_ranks, &WengLinConfig::new());
        for (player, team) in players.iter().zip(rated) {
            let Some(&rating) = team.first() else { continue };
            let entry = self.multiplayer.entry(player.clone()).or_insert((rating, 0));
            *entry = (rating, entry.1 + 1);
        }
    }

    fn duel_rating(&self, player: &PlayerName) -> Glicko2Rating {
        self.duel
            .get(player)
            .map_or_else(Glicko2Rating::new, |&(rating, _)| rating)
    }

    fn multiplayer_rating(&self, player: &PlayerName) -> WengLinRating {
        self.multiplayer
            .get(player)
            .map_or_else(WengLinRating::new, |&(rating, _)| rating)
    }

    /// The rating in `pool`, the library's starting one if unrated there.
    fn current(&self, pool: Pool, player: &PlayerName) -> Rating {
        self.rating(pool, player).unwrap_or_else(|| match pool {
            Pool::Duel => duel_view(Glicko2Rating::new(), 0),
            Pool::Multiplayer => multiplayer_view(WengLinRating::new(), 0),
        })
    }

    /// `player`'s rating in `pool`; `None` before their first game there.
    pub fn rating(&self, pool: Pool, player: &PlayerName) -> Option<Rating> {
        match pool {
            Pool::Duel => self
                .duel
                .get(player)
                .map(|&(rating, games)| duel_view(rating, games)),
            Pool::Multiplayer => self
                .multiplayer
                .get(player)
                .map(|&(rating, games)| multiplayer_view(rating, games)),
        }
    }

    /// Everyone rated in `pool`, highest value first, then by name.
    pub fn leaderboard(&self, pool: Pool) -> Vec<(PlayerName, Rating)> {
        let mut board: Vec<(PlayerName, Rating)> = match pool {
            Pool::Duel => self
                .duel
                .iter()
                .map(|(p, &(r, g))| (p.clone(), duel_view(r, g)))
                .collect(),
            Pool::Multiplayer => self
                .multiplayer
                .iter()
                .map(|(p, &(r, g))| (p.clone(), multiplayer_view(r, g)))
                .collect(),
        };
        board.sort_by(|(a, x), (b, y)| y.value.total_cmp(&x.value).then_with(|| a.cmp(b)));
        board
    }

    /// Every change of `player`'s ratings, in the order folded.
    pub fn history(&self, player: &PlayerName) -> Vec<RatingChange> {
        self.history.get(player).cloned().unwrap_or_default()
    }
}

fn duel_view(rating: Glicko2Rating, games: u32) -> Rating {
    Rating {
        value: rating.rating,
        deviation: rating.deviation,
        games,
    }
}

fn multiplayer_view(rating: WengLinRating, games: u32) -> Rating {
    Rating {
        value: rating.rating,
        deviation: rating.uncertainty,
        games,
    }
}
