//! A game as its players see it: everything but the order of the bag and
//! the seed it comes from. What is left in the bag is public (anyone can
//! count the tiles drawn); in which order it comes is not.
//!
//! A program that decides from a [`PublicGame`] cannot use hidden
//! information, by its type. To look ahead it deals the bag itself:
//! [`PublicGame::deal`] makes a playable [`Game`] with an order of the
//! remaining tiles that the caller shuffles, as the rules would draw them
//! (the River's tiles first, its lake last of them, then the land).

use crate::game::{Game, SealedOrder, kind};
use crate::model::{Actor, Command, Event, PlayError, Setup, SetupError};
use crate::tiles::TileKind;

/// A game without its bag's order or its seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicGame(Game);

impl Game {
    /// This game as its players see it.
    pub fn public(&self) -> PublicGame {
        let mut game = self.clone();
        game.order = SealedOrder::default();
        game.setup.seed = None;
        PublicGame(game)
    }
}

impl Game {
    /// Each seat's score if the game ended now: the scores so far and what
    /// the final scoring would add (B-FS1, the farms). Public: a measure
    /// of a position for bots and spectators.
    pub fn scores_if_ended_now(&self) -> Vec<u32> {
        if self.is_finished() {
            return self.scores().to_vec();
        }
        let mut ended = self.clone();
        ended.final_scoring(&mut ());
        ended.scores[..ended.players()].to_vec()
    }
}

impl PublicGame {
    /// A game created from `setup` at `at` (ms since the Unix epoch, when
    /// its clocks start), as its players see it: the seed, if `setup` has
    /// one, is dropped. What a client that is told only the public events
    /// of a game starts from; [`PublicGame::follow`] folds them in.
    pub fn created(mut setup: Setup, at: u64) -> Result<PublicGame, SetupError> {
        setup.seed = None;
        Game::check_setup(&setup)?;
        Ok(PublicGame(Game::new_at(setup, at)))
    }

    /// Folds in the game's next event, stored at `at`, after checking it
    /// as the server decided it: a draw of a tile that is in the bag (the
    /// order is not known, so any such tile), a decision of the seat whose
    /// it is, a timeout that is due. A public event (every event but the
    /// creation) is all it needs: a client rebuilds the game its player
    /// sees, which the server's own `Game::public` equals. An event the
    /// game cannot take is refused and changes nothing.
    pub fn follow(&mut self, event: &Event, at: u64) -> Result<(), PlayError> {
        let game = &self.0;
        let (actor, command) = match *event {
            Event::Created(_) => {
                return Err(PlayError::WrongDecision {
                    pending: game.pending().name(),
                    command: "create",
                });
            }
            Event::Drawn(tile) => (Actor::Dealer, Command::Draw(tile)),
            Event::TilePlaced { pos, rotation } => {
                (pending_actor(game)?, Command::PlaceTile { pos, rotation })
            }
            Event::FollowerPlaced(place) => (pending_actor(game)?, Command::PlaceFollower(place)),
            Event::FollowerMoved(target) => (pending_actor(game)?, Command::MoveFromCarcassonne(target)),
            Event::Passed => (pending_actor(game)?, Command::Pass),
            Event::DeployedToCarcassonne { quarter, count } => (
                pending_actor(game)?,
                Command::DeployToCarcassonne { quarter, count },
            ),
            Event::TimedOut(_) => (Actor::Dealer, Command::TimeOut),
            Event::Resigned(seat) => (Actor::Seat(seat), Command::Resign),
            Event::Aborted(seat) => (Actor::Seat(seat), Command::Abort),
            Event::Resumed { down_since_ms } => (Actor::Dealer, Command::Resume { down_since_ms }),
        };
        let decided = game.decide_at(at, actor, &command)?;
        if decided.first() != Some(event) {
            return Err(PlayError::WrongDecision {
                pending: game.pending().name(),
                command: command.name(),
            });
        }
        self.0.apply_at(event, at, &mut ());
        Ok(())
    }

    /// The game, which draws nothing by itself: no order, no seed.
    pub fn game(&self) -> &Game {
        &self.0
    }

    /// The tiles still in the bag, by kind, in kind order.
    pub fn remaining(&self) -> Vec<(TileKind, u16)> {
        TileKind::all()
            .filter_map(|k| {
                let count = self.0.in_bag(k);
                (count > 0).then_some((k, count))
            })
            .collect()
    }

    /// A playable game: this one, with the remaining tiles in an order
    /// `shuffle` makes of them, in the phases the rules draw them in (the
    /// River's tiles, shuffled, then its lake, then the land, shuffled;
    /// `shuffle` is called on each phase that has tiles.
    pub fn deal(&self, mut shuffle: impl FnMut(&mut [TileKind])) -> Game {
        let lake = kind("RL");
        let mut river = Vec::new();
        let mut lakes = Vec::new();
        let mut land = Vec::new();
        for (k, count) in self.remaining() {
            let phase = if k == lake {
                &mut lakes
            } else if k.def().is_river() {
                &mut river
            } else {
                &mut land
            };
            phase.extend(std::iter::repeat_n(k, usize::from(count)));
        }
        for phase in [&mut river, &mut land] {
            if !phase.is_empty() {
                shuffle(phase);
            }
        }
        let mut game = self.0.clone();
        // Draws read the order from the index of the next one: what was
        // drawn already is never read again.
        let filler = river.first().or(land.first()).or(lakes.first()).copied();
        let mut order: Vec<TileKind> = filler
            .map(|t| vec![t; usize::from(game.draws)])
            .unwrap_or_default();
        order.extend(river);
        order.extend(lakes);
        order.extend(land);
        game.order = SealedOrder(order);
        game
    }
}

/// Who a decision of the pending kind is by: the seat it waits for.
fn pending_actor(game: &Game) -> Result<Actor, PlayError> {
    game.pending().actor().ok_or(PlayError::Finished)
}
