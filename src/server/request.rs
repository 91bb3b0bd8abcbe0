//! What a request names, parsed into the store's types: the seat token in
//! its metadata, the game, the request id.

use carcassonne_store::{GameId, RequestId};
use tonic::Request;

use crate::api::parse;
use crate::api::status::ApiError;

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
    let id = GameId::new(id).map_err(|e| ApiError::InvalidArgument {
        field: "name".to_owned(),
        message: e.to_string(),
    })?;
    // The server's own streams (players, tournaments, ratings) are no games.
    if !crate::players::is_game_stream(&id) {
        return Err(ApiError::NotFound(id.to_string()));
    }
    Ok(id)
}

/// A request id, checked by the API's rule, then the store's.
pub fn request_id(id: &str) -> Result<RequestId, ApiError> {
    parse::request_id(id)?;
    RequestId::new(id).map_err(|e| ApiError::InvalidArgument {
        field: "request_id".to_owned(),
        message: e.to_string(),
    })
}

/// The request id of a call that creates `what` ("the tournament", "the
/// challenge") and names it after the id: long enough that two callers'
/// random ids never meet, so that a retry gets what the first call made.
pub fn naming_request_id(id: &str, what: &str) -> Result<RequestId, ApiError> {
    let request = request_id(id)?;
    let least = crate::games::auth::MIN_RETRIED_ID_LEN;
    if id.len() < least {
        return Err(ApiError::InvalidArgument {
            field: "request_id".to_owned(),
            message: format!("at least {least} characters: it names {what} (use a UUID)"),
        });
    }
    Ok(request)
}
