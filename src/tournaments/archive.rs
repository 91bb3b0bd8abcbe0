//! A finished tournament's signed archive: every game's files (as a single
//! game's archive holds them), the tournament's own event log with its
//! hash chain, the tournament and its standings as the API shows them,
//! and for a rated tournament the ratings stream up to its last game with
//! the rating changes it led to. `crate::audit::tournament` checks them.

use carcassonne_archive::{ArchiveBuilder, Kind, SigningKey};
use carcassonne_competition::GameResult;
use carcassonne_store::GameId;

use super::view::{standings_view, tournament_view};
use super::{Held, stream_of};
use crate::api::status::ApiError;
use crate::games::{Games, store_error};
use crate::ratings::RATINGS_STREAM;
use crate::server::audit::{game_files, stored_view};

/// The paths of a tournament archive's own files.
pub const EVENTS: &str = "tournament/events.json";
pub const TOURNAMENT: &str = "tournament/tournament.json";
pub const STANDINGS: &str = "tournament/standings.json";
pub const RATING_EVENTS: &str = "ratings/events.json";
pub const RATING_CHANGES: &str = "ratings/changes.json";

fn json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, ApiError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|e| ApiError::Internal(format!("archive JSON: {e}")))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The archive of the finished tournament `held`, signed by `key`.
pub fn archive(games: &Games, held: &Held, key: &SigningKey) -> Result<Vec<u8>, ApiError> {
    let tournament = &held.tournament;
    let id = tournament.id();
    if !tournament.is_finished() {
        return Err(ApiError::TournamentState(format!(
            "tournaments/{id} is running: its archive (and its seed) come at its end"
        )));
    }
    let store = games.store();
    let mut builder = ArchiveBuilder::new(Kind::Tournament, id, store.now_millis());
    let failed =
        |e: carcassonne_archive::ArchiveError| ApiError::Internal(format!("the archive of {id}: {e}"));
    let stream = store.read_game(&stream_of(id)?, 1).map_err(store_error)?;
    let log: Vec<_> = stream.iter().map(stored_view).collect();
    builder.add(EVENTS, json(&log)?).map_err(failed)?;
    builder
        .add(TOURNAMENT, json(&tournament_view(held))?)
        .map_err(failed)?;
    builder
        .add(STANDINGS, json(&standings_view(held))?)
        .map_err(failed)?;
    let mut archived = std::collections::HashSet::new();
    for game in tournament.games() {
        let game_id = GameId::new(game.id.clone()).map_err(|e| ApiError::Corrupt(e.to_string()))?;
        // An aborted game never started may have no stream: nothing to hold.
        if store.game(&game_id).map_err(store_error)?.is_none() {
            continue;
        }
        for (path, bytes) in game_files(games, &game_id)? {
            builder.add(path, bytes).map_err(failed)?;
        }
        archived.insert(game.id.clone());
    }
    if tournament.spec().rated {
        let ratings = GameId::new(RATINGS_STREAM).map_err(|e| ApiError::Internal(e.to_string()))?;
        let events = match store.read_game(&ratings, 1) {
            Ok(events) => events,
            Err(carcassonne_store::StoreError::NotFound(_)) => Vec::new(),
            Err(error) => return Err(store_error(error)),
        };
        // Up to the tournament's last rated game: the ratings it led to.
        let last = events
            .iter()
            .rposition(|e| {
                carcassonne_competition::RatingEvent::decode(&e.payload).is_ok_and(
                    |carcassonne_competition::RatingEvent::Rated { game, .. }| archived.contains(&game),
                )
            })
            .map_or(0, |i| i + 1);
        let log: Vec<_> = events[..last].iter().map(stored_view).collect();
        builder.add(RATING_EVENTS, json(&log)?).map_err(failed)?;
        // Each participant's changes in the tournament's games, as
        // GetRatingHistory shows them: what an audit recomputes.
        let (ratings, rated) = crate::ratings::fold(&events[..last]).map_err(ApiError::Corrupt)?;
        // A game's rating is stored before its result drives the
        // tournament, but another game's end may drive it first: until
        // every ranked game is rated, the archive would not audit. (A game
        // with a house bot is never rated.)
        if let Some(game) = tournament.games().find(|g| {
            matches!(g.result, Some(GameResult::Ranked { .. }))
                && super::rated_game(tournament.spec(), &g.seats)
                && !rated.contains(&g.id)
        }) {
            return Err(ApiError::TournamentState(format!(
                "tournaments/{id}: the rating of game {} is still being stored; ask again in a moment",
                game.id
            )));
        }
        let changes = crate::ratings::changes_in(&ratings, &tournament.spec().participants, &archived);
        builder.add(RATING_CHANGES, json(&changes)?).map_err(failed)?;
    }
    builder.sign(key).map_err(failed)
}
