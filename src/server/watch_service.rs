//! `carcassonne.v1.WatchService`: a game's events as a stream (live and
//! resumable), the server's game changes, step-by-step replay, the state at
//! any version, and records for audits.
//!
//! A game's watchers share its live feed (`feed.rs`), each with a stream
//! of its own (`game_watch.rs`). The server streams share one task that
//! classifies each stored event once for all of them (`lobby.rs`), each
//! with a stream of its own (`server_watch.rs`); neither kind has a task
//! per stream. A replay runs in a task and writes into a bounded channel
//! to its client, building each step only once its client read the one
//! before. Every read path shows a spectator the same version
//! (`audience::visible_version`). Nothing waits for a slow reader: it lags
//! in a broadcast, is told it fell behind, and ends; neither the game nor
//! other watchers ever wait for it.

mod lobby;
mod server_watch;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use carcassonne_store::{GameId, StoredEvent};
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::audience::{self, Audience};
use super::feed::Feeds;
use super::game_watch;
use super::request;
use crate::api::status::ApiError;
use crate::api::version::{self, Start};
use crate::api::view;
use crate::games::stored::{Loaded, seat_of};
use crate::games::{Games, store_error};
use crate::proto;

type Responses<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

pub struct WatchService {
    games: Arc<Games>,
    feeds: Arc<Feeds>,
    /// What the server streams tell, classified once for all of them.
    lobby: Arc<lobby::Lobby>,
    /// The server's key, which signs archives.
    key: Arc<carcassonne_archive::SigningKey>,
    /// Finished games' archives, built once.
    archives: Arc<super::archive_cache::ArchiveCache>,
    /// Exports and verifications run one at a time on the whole server:
    /// each is CPU work proportional to a whole game (a verification's,
    /// on whatever a caller sends, up to the request size limit), so a
    /// flood of them takes one core at most, never the games' time.
    audits: Arc<tokio::sync::Semaphore>,
    /// Turns true when the server shuts down: every stream then ends, so
    /// that the graceful shutdown does not wait for watchers forever.
    stopping: tokio::sync::watch::Receiver<bool>,
}

impl WatchService {
    /// `feed_capacity`: how many events a game's watcher may fall behind
    /// before it is told so.
    pub fn new(
        games: Arc<Games>,
        stopping: tokio::sync::watch::Receiver<bool>,
        feed_capacity: usize,
        key: Arc<carcassonne_archive::SigningKey>,
    ) -> WatchService {
        let feeds = Feeds::new(games.store().clone(), feed_capacity, stopping.clone());
        let lobby = lobby::Lobby::new(games.clone(), stopping.clone());
        WatchService {
            games,
            feeds,
            lobby,
            key,
            archives: super::archive_cache::ArchiveCache::new(
                GAME_ARCHIVES_KEPT_BYTES,
                ARCHIVE_CHUNK,
                GAME_ARCHIVES_BYTES_PER_SECOND,
            ),
            audits: Arc::new(tokio::sync::Semaphore::new(1)),
            stopping,
        }
    }
}

#[cfg(test)]
impl WatchService {
    /// How many server streams follow the shared classification now.
    pub(crate) fn server_stream_followers(&self) -> usize {
        self.lobby.followers()
    }

    /// Events the shared classification classified so far.
    pub(crate) fn server_stream_events_classified(&self) -> u64 {
        self.lobby.classified()
    }
}

pub(super) fn keep_alive(millis: u32) -> Result<Duration, ApiError> {
    match millis {
        0 => Ok(Duration::from_millis(15_000)),
        1_000..=300_000 => Ok(Duration::from_millis(u64::from(millis))),
        n => Err(ApiError::InvalidArgument {
            field: "keep_alive_ms".to_owned(),
            message: format!("1000 to 300000, not {n}"),
        }),
    }
}

/// WatchGame's `from_version` as `game_watch::catch_up` takes it: a stored
/// seq, 0 for "now".
fn watch_from(from_version: Option<i64>) -> Result<u64, ApiError> {
    Ok(match version::game_start("from_version", from_version)? {
        Start::Now => 0,
        Start::After(seq) => seq,
    })
}

/// ReplayGame's versions as stored seqs: after `from`, up to `to` (`None`:
/// as far as the caller may see).
fn replay_range(from_version: Option<i64>, to_version: Option<i64>) -> Result<(u64, Option<u64>), ApiError> {
    let from = match version::game_start("from_version", from_version)? {
        Start::After(seq) => seq,
        Start::Now => {
            return Err(ApiError::InvalidArgument {
                field: "from_version".to_owned(),
                message: "required: 1 replays from the creation on".to_owned(),
            });
        }
    };
    let to = to_version.map(|v| version::to_seq("to_version", v)).transpose()?;
    Ok((from, to))
}

#[tonic::async_trait]
impl proto::watch_service_server::WatchService for WatchService {
    type WatchGameStream = Responses<proto::WatchGameResponse>;
    type WatchServerStream = Responses<proto::WatchServerResponse>;
    type ReplayGameStream = Responses<proto::ReplayGameResponse>;
    type ExportGameArchiveStream = Responses<proto::ExportGameArchiveResponse>;

    async fn watch_game(
        &self,
        request: Request<proto::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let token = request::optional_token(&request)?;
        let r = request.into_inner();
        let id = request::game_id(&r.name)?;
        let from = watch_from(r.from_version)?;
        let every = keep_alive(r.keep_alive_ms)?;
        let (games, feeds) = (self.games.clone(), self.feeds.clone());
        let (live, catch_up, audience) = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
            let loaded = games.load(&id)?;
            let audience = Audience::of(&games, &id, token.as_deref(), &loaded)?;
            let reveal = games.seed_reveal(&id, &loaded);
            // Join the feed before reading, so that nothing falls between
            // the two.
            let live = feeds.join(&id, &loaded);
            let stored = games.store().read_game(&id, 1).map_err(store_error)?;
            Ok((
                live,
                game_watch::catch_up(&stored, from, audience, reveal)?,
                audience,
            ))
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
        let stream = game_watch::stream(catch_up, audience, live, every, self.stopping.clone());
        Ok(Response::new(stream))
    }

    async fn watch_server(
        &self,
        request: Request<proto::WatchServerRequest>,
    ) -> Result<Response<Self::WatchServerStream>, Status> {
        let r = request.into_inner();
        let every = keep_alive(r.keep_alive_ms)?;
        let start = version::position_start(r.from_position)?;
        let stream = server_watch::stream(self.lobby.clone(), start, every, self.stopping.clone());
        Ok(Response::new(stream))
    }

    async fn replay_game(
        &self,
        request: Request<proto::ReplayGameRequest>,
    ) -> Result<Response<Self::ReplayGameStream>, Status> {
        let token = request::optional_token(&request)?;
        let r = request.into_inner();
        let id = request::game_id(&r.name)?;
        let (from, to) = replay_range(r.from_version, r.to_version)?;
        if r.interval_ms > 60_000 {
            return Err(ApiError::InvalidArgument {
                field: "interval_ms".to_owned(),
                message: "at most 60000".to_owned(),
            }
            .into());
        }
        let games = self.games.clone();
        let plan = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
            let now = games.current(&id)?;
            let visible = audience::visible_version(Audience::of(&games, &id, token.as_deref(), &now)?, &now);
            let to = to.unwrap_or(visible);
            if to > visible || from > to {
                return Err(ApiError::InvalidArgument {
                    field: "to_version".to_owned(),
                    message: format!(
                        "from_version <= to_version <= {}, the version you may see",
                        version::of_seq(visible)
                    ),
                });
            }
            let reveal = games.seed_reveal(&id, &now);
            Ok(Plan { id, from, to, reveal })
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
        let interval = Duration::from_millis(u64::from(r.interval_ms));
        let replay = Replay::spawn(
            self.games.clone(),
            plan,
            interval,
            self.stopping.clone(),
            Arc::default(),
        );
        Ok(Response::new(Box::pin(ReceiverStream::new(replay))))
    }

    async fn get_game_at_version(
        &self,
        request: Request<proto::GetGameAtVersionRequest>,
    ) -> Result<Response<proto::GetGameAtVersionResponse>, Status> {
        let token = request::optional_token(&request)?;
        let r = request.into_inner();
        let id = request::game_id(&r.name)?;
        let version = version::to_seq("version", r.version)?;
        let games = self.games.clone();
        let game = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
            let at = audience::at_version(&games, &id, token.as_deref(), Some(version))?;
            let reveal = games.seed_reveal(&id, &at.now);
            let loaded = at.load(&games, &id)?;
            Ok(view::game(
                &loaded.info,
                loaded.version as i64,
                &loaded.game,
                reveal,
            ))
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
        Ok(Response::new(proto::GetGameAtVersionResponse {
            game: Some(game),
        }))
    }

    async fn export_game(
        &self,
        request: Request<proto::ExportGameRequest>,
    ) -> Result<Response<proto::ExportGameResponse>, Status> {
        let token = request::optional_token(&request)?;
        let id = request::game_id(&request.get_ref().name)?;
        let games = self.games.clone();
        let turn = self.audit_turn().await?;
        let export = tokio::task::spawn_blocking(move || {
            let export = super::audit::export(&games, &id, token.as_deref());
            drop(turn);
            export
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
        Ok(Response::new(export))
    }

    async fn verify_game(
        &self,
        request: Request<proto::VerifyGameRequest>,
    ) -> Result<Response<proto::VerifyGameResponse>, Status> {
        let r = request.into_inner();
        // The commitment is the caller's to bring: this server's would be
        // computed from the very seed it exports, a check that cannot fail.
        let turn = self.audit_turn().await?;
        let answer = tokio::task::spawn_blocking(move || {
            let answer = super::audit::verify(&r);
            drop(turn);
            answer
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(Response::new(answer))
    }

    async fn export_game_archive(
        &self,
        request: Request<proto::ExportGameArchiveRequest>,
    ) -> Result<Response<Self::ExportGameArchiveStream>, Status> {
        let id = request::game_id(&request.get_ref().name)?;
        let (games, key) = (self.games.clone(), self.key.clone());
        let subject = id.to_string();
        let archive = self
            .archives
            .get_or_build(&subject, move || super::audit::game_archive(&games, &id, &key))
            .await?;
        let chunks = self
            .archives
            .download(archive, |chunk| proto::ExportGameArchiveResponse { chunk });
        Ok(Response::new(Box::pin(chunks)))
    }

    async fn get_server_key(
        &self,
        _request: Request<proto::GetServerKeyRequest>,
    ) -> Result<Response<proto::GetServerKeyResponse>, Status> {
        Ok(Response::new(proto::GetServerKeyResponse {
            public_key: self.key.public_key_hex(),
        }))
    }
}

/// The most bytes of an archive in one message of ExportGameArchive: far
/// below gRPC's message limits, whatever the archive's size.
pub const ARCHIVE_CHUNK: usize = 1 << 20;

impl WatchService {
    /// The turn of an export or a verification, once every one before it
    /// is done. A caller that goes away while waiting leaves its place.
    async fn audit_turn(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        (self.audits.clone())
            .acquire_owned()
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))
    }
}

/// The bytes of finished games' archives kept in memory (a game's is
/// tens to hundreds of KB).
const GAME_ARCHIVES_KEPT_BYTES: usize = 16 << 20;
/// The bandwidth all downloads of games' archives share.
const GAME_ARCHIVES_BYTES_PER_SECOND: usize = 32 << 20;

/// What a replay shows: the steps after version `from` up to `to`.
struct Plan {
    id: GameId,
    from: u64,
    to: u64,
    /// Whether the last step shows the seed, decided when the replay began.
    reveal: crate::games::SeedReveal,
}

/// Events a replay reads from the store at a time.
const REPLAY_CHUNK: usize = 8;

/// A replay, built step by step as its client reads: its task folds one
/// event at a time, reads the store a chunk at a time, and builds a step
/// only once the client's channel has room for it, so an unread replay
/// holds a game at its start and a few events, never every step.
struct Replay {
    games: Arc<Games>,
    plan: Plan,
    /// Steps built so far, for the tests of what an unread replay costs.
    built: Arc<AtomicUsize>,
}

impl Replay {
    /// Starts the replay's task; its steps come out of the receiver, one
    /// per `interval` (none: as fast as they are read).
    fn spawn(
        games: Arc<Games>,
        plan: Plan,
        interval: Duration,
        stopping: tokio::sync::watch::Receiver<bool>,
        built: Arc<AtomicUsize>,
    ) -> mpsc::Receiver<Result<proto::ReplayGameResponse, Status>> {
        // One step waits in the channel; the next is built when it is read.
        let (tx, rx) = mpsc::channel(1);
        let span = tracing::info_span!("replay_game", game = %plan.id);
        let replay = Replay { games, plan, built };
        tokio::spawn(tracing::Instrument::instrument(
            replay.run(tx, interval, stopping),
            span,
        ));
        rx
    }

    async fn run(
        self,
        tx: mpsc::Sender<Result<proto::ReplayGameResponse, Status>>,
        interval: Duration,
        mut stopping: tokio::sync::watch::Receiver<bool>,
    ) {
        let mut loaded: Option<Loaded> = None;
        let mut chunk = std::collections::VecDeque::new();
        let mut sent = 0usize;
        loop {
            let next_seq = loaded.as_ref().map_or(1, |l| l.version + 1);
            if next_seq > self.plan.to {
                return;
            }
            if chunk.is_empty() {
                // Up to `from` the replay only folds: that part in one read.
                let before_from =
                    usize::try_from((self.plan.from + 1).saturating_sub(next_seq)).unwrap_or(usize::MAX);
                match self.read(next_seq, before_from.max(REPLAY_CHUNK)).await {
                    Ok(events) if events.is_empty() => {
                        let error = ApiError::Corrupt(format!(
                            "the game ends before version {}",
                            version::of_seq(next_seq)
                        ));
                        let _ = tx.send(Err(error.into())).await;
                        return;
                    }
                    Ok(events) => chunk.extend(events),
                    Err(error) => {
                        let _ = tx.send(Err(error.into())).await;
                        return;
                    }
                }
            }
            let step = match &mut loaded {
                None => {
                    // The opening and the creation start the game.
                    let (Some(first), Some(second)) = (chunk.pop_front(), chunk.pop_front()) else {
                        let error = ApiError::Corrupt("fewer than two events".to_owned());
                        let _ = tx.send(Err(error.into())).await;
                        return;
                    };
                    match Loaded::start(&first, &second) {
                        Ok(started) => loaded = Some(started),
                        Err(error) => {
                            let _ = tx.send(Err(ApiError::Corrupt(error).into())).await;
                            return;
                        }
                    }
                    continue;
                }
                Some(loaded) => {
                    let Some(event) = chunk.pop_front() else { continue };
                    let (engine_event, effects) = match loaded.advance(&event) {
                        Ok(advanced) => advanced,
                        Err(error) => {
                            let _ = tx.send(Err(ApiError::Corrupt(error).into())).await;
                            return;
                        }
                    };
                    if event.seq <= self.plan.from {
                        continue;
                    }
                    (event, engine_event, effects)
                }
            };
            if sent > 0 && !interval.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(interval) => {}
                    _ = stopping.changed() => return,
                }
            }
            // Backpressure: built only once the client has read the last.
            let permit = tokio::select! {
                permit = tx.reserve() => match permit {
                    Ok(permit) => permit,
                    Err(_) => return,
                },
                _ = stopping.changed() => return,
            };
            let Some(loaded) = &loaded else { return };
            let (event, engine_event, effects) = step;
            self.built.fetch_add(1, Ordering::Relaxed);
            permit.send(Ok(proto::ReplayGameResponse {
                event: Some(view::event(
                    event.seq as i64,
                    event.time_millis as i64,
                    view::event_seat(&engine_event, seat_of(&event), &loaded.game),
                    &engine_event,
                    &effects,
                    &loaded.info.seed_sha256,
                )),
                game: Some(view::game(
                    &loaded.info,
                    loaded.version as i64,
                    &loaded.game,
                    self.plan.reveal,
                )),
            }));
            sent += 1;
        }
    }

    /// The next `limit` events of the game, from `from` on.
    async fn read(&self, from: u64, limit: usize) -> Result<Vec<StoredEvent>, ApiError> {
        let (store, id) = (self.games.store().clone(), self.plan.id.clone());
        let to = self.plan.to;
        tokio::task::spawn_blocking(move || {
            let mut events = store.read_game_chunk(&id, from, limit).map_err(store_error)?;
            events.retain(|e| e.seq <= to);
            Ok(events)
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
    }
}

#[cfg(test)]
mod tests;
