//! Bots: programs that play a seat from what its player sees.
//!
//! A bot decides from a [`PublicGame`], the game without its bag's order
//! or seed, so it cannot use hidden information: the type has none. Its
//! randomness is its own seeded stream ([`Stream`]), so that a bot of a
//! given level and seed decides the same in the same position.
//!
//! Levels:
//! - [`Level::Random`]: any legal choice, uniformly;
//! - [`Level::Greedy`]: the choice that leaves the seat best placed if the
//!   game ended right after it ([`Game::scores_if_ended_now`]: the scores
//!   so far, unfinished features and farms as the final scoring counts
//!   them): its own projected score less the best other seat's. Ties go
//!   to the bot's stream;
//! - [`Level::Search`]: information-set Monte Carlo tree search
//!   ([`search`]), each iteration on a fresh deal of what is left in the
//!   bag, for a budget of iterations (or, through [`Bot::search`], of
//!   whatever the caller counts, such as its own clock).

mod search;
#[cfg(test)]
mod tests;

pub use search::Searched;

use carcassonne_engine::{Actor, Command, Game, PublicGame, Seat, Seed, Stream};

/// How a bot plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Random,
    Greedy,
    /// The tree search, `iterations` a decision.
    Search {
        iterations: u32,
    },
}

/// The search's iterations a decision when its name gives none.
pub const DEFAULT_ITERATIONS: u32 = 2_000;
/// The most iterations a name may ask for.
pub const MAX_ITERATIONS: u32 = 10_000_000;

impl Level {
    /// The default search.
    pub const SEARCH: Level = Level::Search {
        iterations: DEFAULT_ITERATIONS,
    };

    /// Its name, as the command line and the API spell it: `random`,
    /// `greedy`, `search` (the default budget) or `search:N` (N iterations).
    pub fn name(self) -> String {
        match self {
            Level::Random => "random".to_owned(),
            Level::Greedy => "greedy".to_owned(),
            Level::SEARCH => "search".to_owned(),
            Level::Search { iterations } => format!("search:{iterations}"),
        }
    }

    pub fn from_name(name: &str) -> Option<Level> {
        match name {
            "random" => Some(Level::Random),
            "greedy" => Some(Level::Greedy),
            "search" => Some(Level::SEARCH),
            _ => {
                let iterations: u32 = name.strip_prefix("search:")?.parse().ok()?;
                (1..=MAX_ITERATIONS)
                    .contains(&iterations)
                    .then_some(Level::Search { iterations })
            }
        }
    }
}

/// A bot of one level with its own random stream.
pub struct Bot {
    level: Level,
    stream: Stream,
}

impl Bot {
    pub fn new(level: Level, seed: Seed) -> Bot {
        Bot {
            level,
            stream: Stream::new(&seed),
        }
    }

    pub fn level(&self) -> Level {
        self.level
    }

    /// The seat's choice for the decision pending in `game`, if it is a
    /// seat's (a draw is the dealer's) and there is a choice to make.
    pub fn decide(&mut self, game: &PublicGame) -> Option<(Seat, Command)> {
        self.decide_within(game, |_| false)
    }

    /// [`Bot::decide`] within the caller's budget too: the search stops
    /// at its level's iterations or as soon as `stop(iterations so far)`
    /// says so (after at least one), and plays its best choice so far.
    /// What a server gives its clock to; the other levels take no time
    /// worth stopping.
    pub fn decide_within(
        &mut self,
        game: &PublicGame,
        mut stop: impl FnMut(u32) -> bool,
    ) -> Option<(Seat, Command)> {
        // A draw is the dealer's, though it names the seat it is for.
        let Some(Actor::Seat(seat)) = game.game().pending().actor() else {
            return None;
        };
        let choices = game.game().legal_commands();
        if choices.is_empty() {
            return None;
        }
        let choice = match self.level {
            Level::Random => choices[self.below(choices.len())],
            Level::Greedy => self.greedy(game, seat, &choices),
            // One choice needs no search.
            Level::Search { .. } if choices.len() == 1 => choices[0],
            Level::Search { iterations } => self
                .search(game, seat, |done| done >= iterations || stop(done))
                .map_or(choices[0], |searched| searched.best),
        };
        Some((seat, choice))
    }

    fn below(&mut self, n: usize) -> usize {
        self.stream.below(u32::try_from(n).unwrap_or(u32::MAX)) as usize
    }

    fn greedy(&mut self, game: &PublicGame, seat: Seat, choices: &[Command]) -> Command {
        // Any order of the bag will do: the value of a choice is read
        // before the next tile matters.
        let playable = game.deal(|_| {});
        let mut best: Vec<Command> = Vec::new();
        let mut best_value = i64::MIN;
        for &choice in choices {
            let mut after = playable.clone();
            if after.execute(Actor::Seat(seat), &choice, &mut ()).is_err() {
                continue;
            }
            let value = margin(&after, seat);
            if value > best_value {
                best_value = value;
                best.clear();
            }
            if value == best_value {
                best.push(choice);
            }
        }
        match best.len() {
            0 => choices[0],
            n => best[self.below(n)],
        }
    }
}

/// `seat`'s projected score less the best other seat's.
fn margin(game: &Game, seat: Seat) -> i64 {
    let scores = game.scores_if_ended_now();
    let own = scores.get(seat.index()).copied().unwrap_or(0);
    let best_other = scores
        .iter()
        .enumerate()
        .filter(|&(other, _)| other != seat.index())
        .map(|(_, &score)| score)
        .max()
        .unwrap_or(0);
    i64::from(own) - i64::from(best_other)
}
