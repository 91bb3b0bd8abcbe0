//! Who is asking, and so how much of a game they may see: a player (a
//! seat's token in the metadata) sees a game as it is; a spectator sees a
//! running game `spectator_delay` events behind, and nothing of a sealed
//! game (a duplicate-bag tournament game whose round runs) but that it
//! exists: the server-wide stream's notices and the tournament's view. (The terminal program
//! that shows games is `crate::viewer`; this is the server's check.)

use std::sync::Arc;

use carcassonne_store::GameId;

use crate::api::status::ApiError;
use crate::api::version;
use crate::games::stored::Loaded;
use crate::games::{Games, auth};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Player(u8),
    Spectator,
}

impl Audience {
    /// The audience a token makes for game `id` (as `loaded`): a token
    /// that is no seat's is refused, and so is a spectator of a sealed
    /// game (`Games::sealed`). Every read of a game asks here first.
    pub fn of(
        games: &Games,
        id: &GameId,
        token: Option<&str>,
        loaded: &Loaded,
    ) -> Result<Audience, ApiError> {
        match token {
            None if games.sealed(id, loaded) => Err(ApiError::Sealed(id.to_string())),
            None => Ok(Audience::Spectator),
            Some(token) => auth::seat_of(token, &loaded.opened.token_hashes)
                .map(Audience::Player)
                .ok_or(ApiError::BadToken),
        }
    }

    /// The last stored seq this audience may see of a game at seq `head`.
    pub fn visible(self, head: u64, finished: bool, delay: u32) -> u64 {
        match self {
            Audience::Player(_) => head,
            Audience::Spectator if finished => head,
            // Never before the creation.
            Audience::Spectator => head.saturating_sub(u64::from(delay)).max(2),
        }
    }
}

/// The one visibility decision of every read path (GetGame, ListGames,
/// GetLegalActions, WatchGame, WatchServer, ReplayGame, GetGameAtVersion,
/// ExportGame): the last seq of the game `now` that `audience` may see.
pub fn visible_version(audience: Audience, now: &Loaded) -> u64 {
    audience.visible(now.version, now.game.is_finished(), now.info.spectator_delay)
}

/// The game `now` as `audience` may see it: itself, or for a spectator of
/// a delayed game the game at its visible seq, folded from the store
/// (without touching the cache).
pub fn visible_game(
    games: &Games,
    id: &GameId,
    audience: Audience,
    now: Arc<Loaded>,
) -> Result<Arc<Loaded>, ApiError> {
    let visible = visible_version(audience, &now);
    if visible == now.version {
        return Ok(now);
    }
    Ok(Arc::new(games.fold_uncached(id, Some(visible), |_, _, _| {})?))
}

/// A version of a game that a caller asked for and may see: the one
/// loading path of GetGameAtVersion and of the board pictures.
pub struct AtVersion {
    /// The game now, fresh from the store.
    pub now: Arc<Loaded>,
    /// The stored seq asked for (or, when none was, the last visible one).
    pub seq: u64,
    /// Whether a spectator may see it too (the game is not sealed, and the
    /// version is not past the spectator delay), so that what it shows
    /// does not depend on a token.
    pub public: bool,
}

/// Refuses `seq` (named `field` in the request) unless it is between the
/// creation and `visible`, the last version the caller may see.
pub fn within_visible(field: &str, seq: u64, visible: u64) -> Result<(), ApiError> {
    if (2..=visible).contains(&seq) {
        return Ok(());
    }
    Err(ApiError::InvalidArgument {
        field: field.to_owned(),
        message: format!(
            "between 1 and {}, the version you may see, not {}",
            version::of_seq(visible),
            version::of_seq(seq)
        ),
    })
}

/// The game `id` at stored seq `seq` (`None`: the last one the caller may
/// see), if the caller with `token` may see it; nothing is folded yet.
pub fn at_version(
    games: &Games,
    id: &GameId,
    token: Option<&str>,
    seq: Option<u64>,
) -> Result<AtVersion, ApiError> {
    // Fresh from the store (`current`): a watcher may have seen an event
    // the cache does not hold yet.
    let now = games.current(id)?;
    let visible = visible_version(Audience::of(games, id, token, &now)?, &now);
    let seq = seq.unwrap_or(visible);
    within_visible("version", seq, visible)?;
    // A sealed game is no spectator's, whatever the version.
    let public = !games.sealed(id, &now) && seq <= visible_version(Audience::Spectator, &now);
    Ok(AtVersion { now, seq, public })
}

impl AtVersion {
    /// The game at that version, folded from the store unless it is now.
    pub fn load(&self, games: &Games, id: &GameId) -> Result<Arc<Loaded>, ApiError> {
        if self.seq == self.now.version {
            return Ok(self.now.clone());
        }
        Ok(Arc::new(games.fold_uncached(id, Some(self.seq), |_, _, _| {})?))
    }
}
