//! The API's messages back into engine types, for a client that rebuilds
//! a game from what its player is shown (`carcassonne bot`): the setup of
//! a game from its state at version 1, and each public event. Folded with
//! [`PublicGame::follow`], they give the very game the server's
//! `Game::public` is, without the seed or the order, which are never
//! shown.

use carcassonne_engine::{BASE_COUNTS, Command, Event, PublicGame, Seat, Setup, TileKind};

use super::parse;
use super::status::ApiError;
use crate::proto;

fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::InvalidArgument {
        field: field.to_owned(),
        message: message.into(),
    }
}

/// The game as created, from its state at version 1 (its creation, before
/// the first draw): the rules, the players, the bag (the land tiles of it
/// as a bag of one's own, which draws the same) and the time control. No
/// seed: it is never shown while the game runs.
pub fn created(game: &proto::Game) -> Result<PublicGame, ApiError> {
    if game.version != 1 {
        return Err(invalid(
            "game.version",
            format!("not the creation: {}", game.version),
        ));
    }
    let mut land = Vec::new();
    for count in &game.bag {
        let kind = TileKind::from_name(&count.kind)
            .ok_or_else(|| invalid("game.bag", format!("unknown tile {}", count.kind)))?;
        if !kind.def().is_river() {
            let n = u16::try_from(count.count).map_err(|_| invalid("game.bag", "too many tiles"))?;
            land.push((kind, n));
        }
    }
    // The full set is no bag of one's own (the setup then reads as the
    // server's).
    land.retain(|&(_, n)| n > 0);
    land.sort();
    let tiles = (land != full_set()).then_some(land);
    let setup = Setup {
        rules: parse::rules(game.rules.as_ref())?,
        players: game.players.iter().map(|p| p.name.clone()).collect(),
        tiles,
        seed: None,
        time_control: parse::time_control(game.time_control.as_ref())?,
    };
    let at = u64::try_from(game.clock_time_ms).map_err(|_| invalid("game.clock_time_ms", "negative"))?;
    PublicGame::created(setup, at).map_err(|e| invalid(e.field(), e.to_string()))
}

/// The land tiles of the full set in the bag (the start tile is laid), by
/// kind.
fn full_set() -> Vec<(TileKind, u16)> {
    let mut tiles: Vec<(TileKind, u16)> = BASE_COUNTS
        .iter()
        .filter_map(|&(name, count)| {
            let count = u16::from(count) - u16::from(name == "D");
            Some((TileKind::from_name(name)?, count)).filter(|_| count > 0)
        })
        .collect();
    tiles.sort();
    tiles
}

/// A public event to the engine's.
pub fn event(event: &proto::GameEvent) -> Result<Event, ApiError> {
    use proto::action::Action as A;
    use proto::game_event::Event as E;
    let body = event.event.as_ref().ok_or_else(|| invalid("event", "missing"))?;
    let command = |action: A| parse::action(Some(&proto::Action { action: Some(action) }));
    let seat = || {
        event
            .seat
            .and_then(|s| u8::try_from(s).ok())
            .map(Seat)
            .ok_or_else(|| invalid("event.seat", "missing"))
    };
    Ok(match body {
        E::Created(_) => return Err(invalid("event", "the creation is no event to follow")),
        E::TileDrawn(drawn) => Event::Drawn(
            TileKind::from_name(&drawn.kind)
                .ok_or_else(|| invalid("event.tile_drawn.kind", format!("unknown tile {}", drawn.kind)))?,
        ),
        E::TilePlaced(placed) => match command(A::PlaceTile(*placed))? {
            Command::PlaceTile { pos, rotation } => Event::TilePlaced { pos, rotation },
            _ => return Err(invalid("event.tile_placed", "not a placement")),
        },
        E::FollowerPlaced(placed) => match command(A::PlaceFollower(*placed))? {
            Command::PlaceFollower(place) => Event::FollowerPlaced(place),
            _ => return Err(invalid("event.follower_placed", "not a follower")),
        },
        E::FollowerMoved(moved) => match command(A::MoveFromCarcassonne(*moved))? {
            Command::MoveFromCarcassonne(target) => Event::FollowerMoved(target),
            _ => return Err(invalid("event.follower_moved", "not a move")),
        },
        E::Passed(_) => Event::Passed,
        E::DeployedToCarcassonne(deployed) => match command(A::DeployToCarcassonne(*deployed))? {
            Command::DeployToCarcassonne { quarter, count } => {
                Event::DeployedToCarcassonne { quarter, count }
            }
            _ => return Err(invalid("event.deployed_to_carcassonne", "not a deploy")),
        },
        E::TimedOut(out) => Event::TimedOut(Seat(
            u8::try_from(out.seat).map_err(|_| invalid("event.timed_out.seat", "out of range"))?,
        )),
        E::Resigned(_) => Event::Resigned(seat()?),
        E::Aborted(_) => Event::Aborted(seat()?),
        E::Resumed(resumed) => Event::Resumed {
            down_since_ms: u64::try_from(resumed.down_since_ms)
                .map_err(|_| invalid("event.resumed.down_since_ms", "negative"))?,
        },
    })
}

/// Folds `event` into `game`, at its time: refused (and nothing changed)
/// when the game cannot take it.
pub fn follow(game: &mut PublicGame, event: &proto::GameEvent) -> Result<(), ApiError> {
    let at = u64::try_from(event.time_ms).map_err(|_| invalid("event.time_ms", "negative"))?;
    game.follow(&self::event(event)?, at)
        .map_err(|e| invalid("event", format!("version {} does not follow: {e}", event.version)))
}
