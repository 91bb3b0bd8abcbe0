//! Tournaments: each is the stream `@tournament/{id}` in the event store,
//! and its state a fold of it through the competition crate (pairings,
//! standings). This module runs them: it creates a tournament with its
//! first round, creates each round's games (the players in their seats,
//! with the round's seeds), records each game's result when it ends,
//! pairs the next round when a round is complete, and finishes.
//!
//! Everything here is idempotent, so that running it again after a crash
//! (at start, `drive_all`) finishes what was cut: results and rounds are
//! appended with request ids that name them, games are created under ids
//! derived from the tournament, the round, the table and the game.

pub mod archive;
pub mod view;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use carcassonne_competition::{
    GameResult, PlayerName, TOURNAMENT_SCHEMA, Tournament, TournamentCommand, TournamentError,
    TournamentEvent,
};
use carcassonne_engine::{Seat, Seed, Setup};
use carcassonne_store::{
    Actor, EventStore, GameId, GameSummary, NewEvent, RequestId, StoreError, StoredEvent,
};
use tokio::sync::broadcast;

use crate::api::status::ApiError;
use crate::games::{Games, NewGame, create_stream, store_error};
use crate::players::Players;
use crate::proto;
use crate::server::archive_cache::ArchiveCache;

/// The prefix of every tournament's stream id.
pub const TOURNAMENT_STREAM_PREFIX: &str = "@tournament/";

/// A tournament's stream.
pub fn stream_of(id: &str) -> Result<GameId, ApiError> {
    GameId::new(format!("{TOURNAMENT_STREAM_PREFIX}{id}"))
        .map_err(|_| ApiError::TournamentNotFound(id.to_owned()))
}

/// A tournament as this server holds it: its state and its stream's version.
#[derive(Clone)]
pub struct Held {
    pub tournament: Tournament,
    pub version: u64,
}

/// The settings of a tournament's games, as its spec keeps them (opaque to
/// the competition crate): the rule options and the time control, in the
/// canonical JSON of their API messages.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct GameSettings {
    pub rules: proto::RuleOptions,
    pub time_control: proto::TimeControl,
}

pub struct Tournaments {
    store: Arc<dyn EventStore>,
    games: Arc<Games>,
    players: Arc<Players>,
    held: Mutex<BTreeMap<String, Arc<Mutex<Held>>>>,
    /// The id of every tournament that changed, for its watchers.
    changes: broadcast::Sender<String>,
    /// Finished tournaments' archives, built once.
    archives: Arc<ArchiveCache>,
}

/// The bytes of finished tournaments' archives kept in memory: a few of
/// the largest (a 120-game tournament's is about 10 MB).
pub const ARCHIVES_KEPT_BYTES: usize = 64 << 20;
/// The most bytes of an archive in one message of ExportTournamentArchive.
pub const ARCHIVE_CHUNK: usize = 1 << 20;
/// The bandwidth all downloads of tournaments' archives share: a 10 MB
/// archive in a third of a second alone.
pub const ARCHIVES_BYTES_PER_SECOND: usize = 32 << 20;

/// Decodes a tournament's stored events into its state.
pub fn fold(id: &str, stored: &[StoredEvent]) -> Result<Held, String> {
    let mut events = stored.iter().map(|e| {
        if e.schema != TOURNAMENT_SCHEMA {
            return Err(format!("event {}: schema {}", e.seq, e.schema));
        }
        TournamentEvent::decode(&e.payload).map_err(|error| format!("event {}: {error}", e.seq))
    });
    let created = events.next().transpose()?;
    let Some(TournamentEvent::Created { pairing, .. }) = &created else {
        return Err("event 1 is not the creation".to_owned());
    };
    // Pairings are recomputed by the version the tournament was made with:
    // this build knows one.
    if pairing != carcassonne_competition::PAIRING_VERSION {
        return Err(format!("pairs by {pairing}, which this server does not know"));
    }
    let mut tournament = Tournament::from_event(id, created.as_ref().ok_or("no creation")?)
        .ok_or("event 1 is not the creation")?;
    for event in events {
        tournament.apply(&event?);
    }
    Ok(Held {
        tournament,
        version: stored.last().map_or(0, |e| e.seq),
    })
}

/// Tournament events as the store appends them.
fn to_batch(events: &[TournamentEvent]) -> Vec<NewEvent> {
    events
        .iter()
        .map(|e| NewEvent {
            actor: Actor::Server,
            schema: TOURNAMENT_SCHEMA,
            payload: e.encode(),
        })
        .collect()
}

/// A duplicate-bag game is sealed until its round is over: every game of
/// the round has its result (the tournament has paired the next round, or
/// finished). Before that, a table that is ahead would show another table
/// its coming tiles.
impl crate::games::Seals for Tournaments {
    fn lifted(&self, tournament: &str, game: &GameId) -> bool {
        let Ok(entry) = self.entry(tournament) else {
            return false;
        };
        let held = entry.lock().unwrap_or_else(PoisonError::into_inner);
        let tournament = &held.tournament;
        tournament
            .game(game.as_str())
            .is_some_and(|scheduled| tournament.is_finished() || scheduled.round < tournament.round())
    }
}

/// Lets the resignations that `drive` made settle on their own: each ends
/// a game, whose end drives the tournament again.
pub fn settle_in_background(games: &Arc<Games>, resignations: Vec<Box<crate::games::ActInFlight>>) {
    for resigning in resignations {
        let games = games.clone();
        tokio::spawn(async move {
            if let Err(error) = games.settle(resigning).await {
                tracing::warn!(%error, "a withdrawn player's resignation");
            }
        });
    }
}

/// Whether a tournament game seating `seats` is rated: the tournament is,
/// and no seat is a house bot's (ratings are registered players' only).
pub fn rated_game(spec: &carcassonne_competition::Spec, seats: &[PlayerName]) -> bool {
    spec.rated && !seats.iter().any(|seat| spec.is_house_bot(seat))
}

/// Every tournament's id and stream, listed from their prefix on: stream
/// ids sort by bytes, so the tournaments' are together, and the other
/// games, however many, are not read.
fn tournament_streams(store: &dyn EventStore) -> Result<Vec<(String, GameSummary)>, ApiError> {
    carcassonne_store::streams_with_prefix(store, TOURNAMENT_STREAM_PREFIX).map_err(store_error)
}

/// The request id of a step the server takes in a tournament's stream,
/// `~{kind}/{subject}`: the step is stored once however often it is
/// retried. The subject (a participant's name, a game id) is
/// form-urlencoded, so that the id is valid whatever it names: a house
/// bot's name holds spaces, which no request id may ("greedy bot 1" is
/// `greedy+bot+1`). Letters, digits, '-' and '_' stay as they are, so a
/// registered player's name and a tournament's game id read as before,
/// and no two subjects meet (no registered name holds a '+').
fn step_request(kind: &str, subject: &str) -> Result<RequestId, ApiError> {
    let subject: String = form_urlencoded::byte_serialize(subject.as_bytes()).collect();
    RequestId::new(format!("{}{kind}/{subject}", crate::games::SERVER_REQUEST_PREFIX))
        .map_err(|e| ApiError::Internal(format!("a tournament's request id: {e}")))
}

fn tournament_error(error: TournamentError) -> ApiError {
    ApiError::TournamentState(error.to_string())
}

impl Tournaments {
    /// Every tournament in the store, folded.
    pub fn open(
        store: Arc<dyn EventStore>,
        games: Arc<Games>,
        players: Arc<Players>,
    ) -> Result<Tournaments, ApiError> {
        let mut held = BTreeMap::new();
        for (id, summary) in tournament_streams(store.as_ref())? {
            let stored = store.read_game(&summary.game, 1).map_err(store_error)?;
            let folded =
                fold(&id, &stored).map_err(|e| ApiError::Corrupt(format!("tournaments/{id}: {e}")))?;
            held.insert(id, Arc::new(Mutex::new(folded)));
        }
        Ok(Tournaments {
            store,
            games,
            players,
            held: Mutex::new(held),
            changes: broadcast::channel(1024).0,
            archives: ArchiveCache::new(ARCHIVES_KEPT_BYTES, ARCHIVE_CHUNK, ARCHIVES_BYTES_PER_SECOND),
        })
    }

    /// Folds tournament `id` again if its stream has event `seq` and this
    /// node's fold stops before it (or does not know it): another node on
    /// a shared store wrote it.
    pub fn refresh(&self, id: &str, seq: u64) -> Result<(), ApiError> {
        let entry = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned();
        match entry {
            Some(entry) => {
                let mut held = entry.lock().unwrap_or_else(PoisonError::into_inner);
                if seq <= held.version {
                    return Ok(());
                }
                let stored = self.store.read_game(&stream_of(id)?, 1).map_err(store_error)?;
                *held = fold(id, &stored).map_err(|e| ApiError::Corrupt(format!("tournaments/{id}: {e}")))?;
            }
            None => {
                let stored = self.store.read_game(&stream_of(id)?, 1).map_err(store_error)?;
                let folded =
                    fold(id, &stored).map_err(|e| ApiError::Corrupt(format!("tournaments/{id}: {e}")))?;
                self.held
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(id.to_owned())
                    .or_insert_with(|| Arc::new(Mutex::new(folded)));
            }
        }
        let _ = self.changes.send(id.to_owned());
        Ok(())
    }

    /// [`Tournaments::refresh`] for every tournament stream of the store:
    /// after this node fell behind the store's stream. Returns each
    /// tournament that could not be folded, with why: one does not keep
    /// the others from being refreshed.
    pub fn refresh_all(&self) -> Result<Vec<(String, ApiError)>, ApiError> {
        let mut failed = Vec::new();
        for (id, summary) in tournament_streams(self.store.as_ref())? {
            if let Err(error) = self.refresh(&id, summary.last_seq) {
                failed.push((id, error));
            }
        }
        Ok(failed)
    }

    pub fn games(&self) -> &Arc<Games> {
        &self.games
    }

    /// The signed archive of the finished tournament `id`, built once
    /// (`archive::archive`) and kept.
    pub async fn archive(
        self: &Arc<Self>,
        id: &str,
        key: Arc<carcassonne_archive::SigningKey>,
    ) -> Result<bytes::Bytes, ApiError> {
        // Unknown or running: no build, and nothing kept.
        let held = self.get(id)?;
        if !held.tournament.is_finished() {
            return Err(ApiError::TournamentState(format!(
                "tournaments/{id} is running: its archive (and its seed) come at its end"
            )));
        }
        let this = self.clone();
        let subject = id.to_owned();
        self.archives
            .get_or_build(id, move || {
                let held = this.get(&subject)?;
                archive::archive(&this.games, &held, &key)
            })
            .await
    }

    /// The cache of finished tournaments' archives, whose downloads share
    /// its bandwidth.
    pub fn archives(&self) -> &Arc<ArchiveCache> {
        &self.archives
    }

    /// Tells of every tournament that changes, by id.
    pub fn changes(&self) -> broadcast::Receiver<String> {
        self.changes.subscribe()
    }

    fn entry(&self, id: &str) -> Result<Arc<Mutex<Held>>, ApiError> {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(id)
            .cloned()
            .ok_or_else(|| ApiError::TournamentNotFound(id.to_owned()))
    }

    /// A tournament now.
    pub fn get(&self, id: &str) -> Result<Held, ApiError> {
        let entry = self.entry(id)?;
        let held = entry.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(held.clone())
    }

    /// Every tournament's id, in order.
    pub fn ids(&self) -> Vec<String> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    /// Appends decided events to a tournament's stream and folds them in,
    /// under the tournament's lock the caller holds.
    fn append(
        &self,
        id: &str,
        held: &mut Held,
        request: &RequestId,
        events: Vec<TournamentEvent>,
    ) -> Result<(), ApiError> {
        if events.is_empty() {
            return Ok(());
        }
        let batch = to_batch(&events);
        let stream = stream_of(id)?;
        let appended = match self.store.append(&stream, held.version, request, &batch) {
            Ok(appended) if appended.first_seq == held.version + 1 => Some(appended),
            // Another server node stored this very step (the request id
            // names it) or moved the tournament on first: the store's
            // stream is the truth, folded again.
            Ok(_) | Err(StoreError::Conflict { .. }) => None,
            Err(error) => return Err(store_error(error)),
        };
        match appended {
            Some(appended) => {
                for event in &events {
                    held.tournament.apply(event);
                }
                held.version = appended.last_seq;
            }
            None => {
                let stored = self.store.read_game(&stream, 1).map_err(store_error)?;
                *held = fold(id, &stored).map_err(|e| ApiError::Corrupt(format!("tournaments/{id}: {e}")))?;
            }
        }
        let _ = self.changes.send(id.to_owned());
        Ok(())
    }

    /// Creates a tournament and its first round; blocking.
    pub fn create(
        &self,
        id: &str,
        request_id: &RequestId,
        spec: carcassonne_competition::Spec,
    ) -> Result<Held, ApiError> {
        spec.check().map_err(|e| ApiError::InvalidArgument {
            field: e.field().to_owned(),
            message: e.to_string(),
        })?;
        for name in spec.participants.iter().filter(|p| !spec.is_house_bot(p)) {
            self.players.get(name)?;
        }
        let seed = crate::games::auth::random_seed()
            .map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
        let created = TournamentEvent::Created {
            spec: spec.clone(),
            seed,
            pairing: carcassonne_competition::PAIRING_VERSION.to_owned(),
        };
        let first_round = Tournament::created(id, spec, seed)
            .decide(&TournamentCommand::Advance)
            .map_err(tournament_error)?;
        let mut events = vec![created];
        events.extend(first_round.iter().cloned());
        let batch = to_batch(&events);
        let stream = stream_of(id)?;
        create_stream(
            self.store.as_ref(),
            &stream,
            request_id,
            &batch,
            &format!("tournaments/{id}"),
        )?;
        // The stored creation is the truth (a retry may have stored another
        // seed): fold what is stored.
        let stored = self.store.read_game(&stream, 1).map_err(store_error)?;
        let held = fold(id, &stored).map_err(ApiError::Corrupt)?;
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), Arc::new(Mutex::new(held.clone())));
        tracing::info!(tournament = %id, "tournament created");
        let _ = self.changes.send(id.to_owned());
        Ok(held)
    }

    /// Withdraws a participant: only the tournament's organiser may.
    pub fn withdraw(&self, id: &str, caller: &PlayerName, player: &PlayerName) -> Result<Held, ApiError> {
        let entry = self.entry(id)?;
        {
            let mut held = entry.lock().unwrap_or_else(PoisonError::into_inner);
            if held.tournament.spec().organiser.as_ref() != Some(caller) {
                return Err(ApiError::NotOrganiser);
            }
            let events = held
                .tournament
                .decide(&TournamentCommand::Withdraw {
                    player: player.clone(),
                })
                .map_err(tournament_error)?;
            let request = step_request("withdrawn", player.as_str())?;
            self.append(id, &mut held, &request, events)?;
            tracing::info!(tournament = %id, player = %player, "player withdrawn");
        }
        self.get(id)
    }

    /// Brings a tournament up to date with its games, blocking: records
    /// the results of the games that ended, pairs the next round when the
    /// current one is complete (or finishes), creates the games of the
    /// round, and resigns the seats of withdrawn players. Returns the
    /// resignations to settle (they end games, which drive it again).
    pub fn drive(&self, id: &str) -> Result<Vec<Box<crate::games::ActInFlight>>, ApiError> {
        let entry = self.entry(id)?;
        let mut held = entry.lock().unwrap_or_else(PoisonError::into_inner);
        let mut resignations = Vec::new();
        loop {
            if held.tournament.is_finished() {
                return Ok(resignations);
            }
            // Results of the games that ended.
            let pending: Vec<_> = held
                .tournament
                .pending_games()
                .map(|g| (g.id.clone(), g.seats.clone()))
                .collect();
            for (game, seats) in &pending {
                let game_id = GameId::new(game.clone()).map_err(|e| ApiError::Corrupt(e.to_string()))?;
                // Fresh from the store: the cache learns of an append only
                // after the store has published it.
                let loaded = match self.games.current(&game_id) {
                    Ok(loaded) => loaded,
                    // Not created yet (a crash between the round and its
                    // games): created below.
                    Err(ApiError::NotFound(_)) => continue,
                    Err(other) => return Err(other),
                };
                if !loaded.game.is_finished() {
                    for (seat, name) in seats.iter().enumerate() {
                        if held.tournament.withdrawn().contains(name)
                            && let Some(resigning) = self.games.resign_for(&game_id, Seat(seat as u8))?
                        {
                            resignations.push(resigning);
                        }
                    }
                    continue;
                }
                let result = match loaded.game.ranking() {
                    Some(ranks) => GameResult::Ranked {
                        ranks,
                        scores: loaded.game.scores().to_vec(),
                    },
                    None => GameResult::Aborted,
                };
                let events = held
                    .tournament
                    .decide(&TournamentCommand::RecordResult {
                        game: game.clone(),
                        result,
                    })
                    .map_err(tournament_error)?;
                self.append(id, &mut held, &step_request("result", game)?, events)?;
            }
            // The next round, or the end.
            let round = held.tournament.round();
            let events = held
                .tournament
                .decide(&TournamentCommand::Advance)
                .map_err(tournament_error)?;
            if events.is_empty() {
                self.open_round(id, &held)?;
                return Ok(resignations);
            }
            let request = step_request("advance", &(round + 1).to_string())?;
            self.append(id, &mut held, &request, events)?;
            if held.tournament.is_finished() {
                tracing::info!(tournament = %id, "tournament finished");
            } else {
                tracing::info!(tournament = %id, round = held.tournament.round(), "round paired");
            }
        }
    }

    /// Creates the games of the current round that do not exist yet.
    fn open_round(&self, id: &str, held: &Held) -> Result<(), ApiError> {
        let tournament = &held.tournament;
        let settings: GameSettings = serde_json::from_value(tournament.spec().games.clone())
            .map_err(|e| ApiError::Corrupt(format!("tournaments/{id}: its games' settings: {e}")))?;
        let rules = crate::api::parse::rules(Some(&settings.rules))?;
        let time_control = crate::api::parse::time_control(Some(&settings.time_control))?;
        let round = tournament.round();
        let request = RequestId::new("~tournament").map_err(|e| ApiError::Internal(e.to_string()))?;
        for game in tournament.pending_games().filter(|g| g.round == round) {
            let game_id = GameId::new(game.id.clone()).map_err(|e| ApiError::Corrupt(e.to_string()))?;
            if self.store.game(&game_id).map_err(store_error)?.is_some() {
                continue;
            }
            let spec = tournament.spec();
            // A house bot's seat is a bot's, played by the server; any other
            // is its registered player's.
            let bots = game
                .seats
                .iter()
                .map(|name| match spec.house_bots.get(name) {
                    Some(level) => carcassonne_bots::Level::from_name(level)
                        .map(Some)
                        .ok_or_else(|| {
                            ApiError::Corrupt(format!("tournaments/{id}: {name}'s level {level:?}"))
                        }),
                    None => Ok(None),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let accounts = game
                .seats
                .iter()
                .map(|name| match spec.is_house_bot(name) {
                    true => Ok(None),
                    false => self.players.account(name).map(Some),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let has_bot = bots.iter().any(Option::is_some);
            let new = NewGame {
                setup: Setup {
                    rules,
                    players: game.seats.iter().map(ToString::to_string).collect(),
                    tiles: None,
                    seed: Some(Seed(game.seed)),
                    time_control,
                },
                spectator_delay: 0,
                accounts,
                // Only registered players are rated: a game with a house bot
                // rates nobody.
                rated: rated_game(spec, &game.seats),
                tournament: Some(id.to_owned()),
                sealed: spec.duplicate_bags,
                bots: if has_bot { bots } else { Vec::new() },
                bot_pace_ms: 0,
            };
            match self.games.create(&game_id, &request, new) {
                Ok(_) | Err(ApiError::AlreadyExists(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// Drives every running tournament: at start, and after a missed
    /// notice.
    pub fn drive_all(&self) -> Result<Vec<Box<crate::games::ActInFlight>>, ApiError> {
        let mut resignations = Vec::new();
        for id in self.ids() {
            resignations.extend(self.drive(&id)?);
        }
        Ok(resignations)
    }
}
