//! Who is asking: a player (a seat's token in the metadata) sees a game as
//! it is; a spectator sees a running game `spectator_delay` events behind.

use std::sync::Arc;

use carcassonne_engine::Seat;
use carcassonne_store::{Actor, GameId, RequestId, StoredEvent};
use tonic::Request;

use crate::api::parse;
use crate::api::status::ApiError;
use crate::games::stored::Loaded;
use crate::games::{Games, auth};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    Player(u8),
    Spectator,
}

impl Viewer {
    /// The viewer a token makes; a token that is no seat's is refused.
    pub fn of(token: Option<&str>, loaded: &Loaded) -> Result<Viewer, ApiError> {
        match token {
            None => Ok(Viewer::Spectator),
            Some(token) => auth::seat_of(token, &loaded.opened.token_hashes)
                .map(Viewer::Player)
                .ok_or(ApiError::BadToken),
        }
    }

    /// The last version this viewer may see of a game at version `head`.
    pub fn visible(self, head: u64, finished: bool, delay: u32) -> u64 {
        match self {
            Viewer::Player(_) => head,
            Viewer::Spectator if finished => head,
            // Never before the creation.
            Viewer::Spectator => head.saturating_sub(u64::from(delay)).max(2),
        }
    }
}

/// The one visibility decision of every read path (GetGame, ListGames,
/// GetLegalActions, WatchGame, WatchServer, ReplayGame, GetGameAtVersion,
/// ExportGame): the last version of the game `now` that `viewer` may see.
pub fn visible_version(viewer: Viewer, now: &Loaded) -> u64 {
    viewer.visible(now.version, now.game.is_finished(), now.info.spectator_delay)
}

/// The game `now` as `viewer` may see it: itself, or for a spectator of a
/// delayed game the game at its visible version, folded from the store
/// (without touching the cache).
pub fn visible_game(
    games: &Games,
    id: &GameId,
    viewer: Viewer,
    now: Arc<Loaded>,
) -> Result<Arc<Loaded>, ApiError> {
    let visible = visible_version(viewer, &now);
    if visible == now.version {
        return Ok(now);
    }
    Ok(Arc::new(games.fold_uncached(id, Some(visible), |_, _, _| {})?))
}

/// The seat token of a request (`authorization: Bearer <token>`).
pub fn token<T>(request: &Request<T>) -> Result<String, ApiError> {
    optional_token(request)?.ok_or(ApiError::MissingToken)
}

/// The seat token of a request, if it has one.
pub fn optional_token<T>(request: &Request<T>) -> Result<Option<String>, ApiError> {
    let Some(value) = request.metadata().get("authorization") else {
        return Ok(None);
    };
    let text = value.to_str().map_err(|_| ApiError::BadToken)?;
    let token = text.strip_prefix("Bearer ").unwrap_or(text).trim();
    Ok((!token.is_empty()).then(|| token.to_owned()))
}

/// `games/{id}` to a store id.
pub fn game_id(name: &str) -> Result<GameId, ApiError> {
    let id = parse::game_name(name)?;
    GameId::new(id).map_err(|e| ApiError::InvalidArgument {
        field: "name".to_owned(),
        message: e.to_string(),
    })
}

pub fn request_id(id: &str) -> Result<RequestId, ApiError> {
    parse::request_id(id)?;
    RequestId::new(id).map_err(|e| ApiError::InvalidArgument {
        field: "request_id".to_owned(),
        message: e.to_string(),
    })
}

/// The seat that acted in a stored event (none for the server).
pub fn seat_of(event: &StoredEvent) -> Option<Seat> {
    match event.actor {
        Actor::Seat(s) => Some(Seat(s)),
        Actor::Server => None,
    }
}
