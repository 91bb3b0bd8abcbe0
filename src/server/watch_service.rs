//! `carcassonne.v1.WatchService`: a game's events as a stream (live and
//! resumable), the server's game changes, step-by-step replay, the state at
//! any version, and records for audits.
//!
//! A game's watchers share its live feed (`feed.rs`), each with a stream
//! of its own (`game_watch.rs`). The server stream and replays run in a
//! task each and write into a bounded channel to their client; a replay
//! builds each step only once its client read the one before, and the
//! server stream folds each game once, event by event, in a map of its own
//! rather than the games' cache. Every read path shows a spectator the
//! same version (`audience::visible_version`). Nothing
//! waits for a slow reader: it lags in a broadcast, is told it fell behind,
//! and ends; neither the game nor other watchers ever wait for it.

use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use carcassonne_store::{EventStore, GameId, StoredEvent};
use lru::LruCache;
use tokio::sync::{broadcast, mpsc};
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
use crate::proto::{self, watch_server_response as ws};

type Responses<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Messages a stream may hold for a client that reads slowly.
const CLIENT_BUFFER: usize = 64;

pub struct WatchService {
    games: Arc<Games>,
    feeds: Arc<Feeds>,
    /// The server's key, which signs archives.
    key: Arc<carcassonne_archive::SigningKey>,
    /// Finished games' archives, built once.
    archives: Arc<super::archive_cache::ArchiveCache>,
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
        WatchService {
            games,
            feeds,
            key,
            archives: super::archive_cache::ArchiveCache::new(
                GAME_ARCHIVES_KEPT_BYTES,
                ARCHIVE_CHUNK,
                GAME_ARCHIVES_BYTES_PER_SECOND,
            ),
            stopping,
        }
    }

    fn store(&self) -> Arc<dyn EventStore> {
        self.games.store().clone()
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
            // Join the feed before reading, so that nothing falls between
            // the two.
            let live = feeds.join(&id, &loaded);
            let stored = games.store().read_game(&id, 1).map_err(store_error)?;
            Ok((live, game_watch::catch_up(&stored, from, audience)?, audience))
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
        let store = self.store();
        let live = store.subscribe_all();
        let from = match start {
            Start::Now => store.last_position(),
            Start::After(position) => position,
        };
        let (tx, rx) = mpsc::channel(CLIENT_BUFFER);
        let games = self.games.clone();
        tokio::spawn(pump_server(tx, live, games, from, every, self.stopping.clone()));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
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
            Ok(Plan { id, from, to })
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
            let loaded =
                audience::at_version(&games, &id, token.as_deref(), Some(version))?.load(&games, &id)?;
            Ok(view::game(&loaded.info, loaded.version as i64, &loaded.game))
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
        let export = tokio::task::spawn_blocking(move || super::audit::export(&games, &id, token.as_deref()))
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
        let answer = tokio::task::spawn_blocking(move || super::audit::verify(&r))
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
                game: Some(view::game(&loaded.info, loaded.version as i64, &loaded.game)),
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

/// Sends the server's game changes from `from` on: first from the store,
/// then live.
async fn pump_server(
    tx: mpsc::Sender<Result<proto::WatchServerResponse, Status>>,
    mut live: broadcast::Receiver<Arc<StoredEvent>>,
    games: Arc<Games>,
    mut position: u64,
    every: Duration,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    let message = |m: ws::Message| proto::WatchServerResponse { message: Some(m) };
    let mut dashboard = Dashboard::new(games.clone());
    // Where a client resumes after a keep-alive or falling behind: after
    // the last change sent (or where it started), never the store's last
    // position, which would tell a spectator when the hidden moves of a
    // delayed game happen. Resuming there folds those events again.
    let mut resume = position;
    // Catch up from the store, a page at a time.
    loop {
        let (store, from) = (games.store().clone(), position + 1);
        let page = match tokio::task::spawn_blocking(move || store.read_all(from, 1000)).await {
            Ok(Ok(page)) => page,
            Ok(Err(error)) => {
                let _ = tx.send(Err(store_error(error).into())).await;
                return;
            }
            Err(error) => {
                let _ = tx.send(Err(ApiError::Internal(error.to_string()).into())).await;
                return;
            }
        };
        if page.is_empty() {
            break;
        }
        for event in page {
            position = event.position;
            for change in dashboard.classify(&event).await {
                if tx.send(Ok(message(ws::Message::Event(change)))).await.is_err() {
                    return;
                }
                resume = position;
            }
        }
    }
    loop {
        let next = tokio::select! {
            next = live.recv() => next,
            _ = stopping.changed() => return,
            () = tokio::time::sleep(every) => {
                if tx.send(Ok(message(ws::Message::KeepAlive(resume as i64)))).await.is_err() {
                    return;
                }
                continue;
            }
        };
        match next {
            Ok(event) if event.position <= position => {}
            Ok(event) => {
                position = event.position;
                for change in dashboard.classify(&event).await {
                    if tx.send(Ok(message(ws::Message::Event(change)))).await.is_err() {
                        return;
                    }
                    resume = position;
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {
                let _ = tx.send(Ok(message(ws::Message::FellBehind(resume as i64)))).await;
                return;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// Games a server stream follows at once; past it, the least recently
/// changed one is folded again from the store when it changes next.
const DASHBOARD_GAMES: usize = 256;

/// What a server stream knows of the running games it has seen: each
/// game's state, folded one event at a time as the stream passes it (a
/// game is read from the store only when the stream meets it mid-way), in
/// a bounded map of the stream's own, never in the games' cache.
struct Dashboard {
    games: Arc<Games>,
    followed: LruCache<GameId, Followed>,
    /// The last opening seen: a game's opening and creation are one append,
    /// so the creation that follows starts the game from it.
    opening: Option<StoredEvent>,
}

struct Followed {
    loaded: Loaded,
    /// The version of the game's first player action, once made.
    first_action: Option<u64>,
    /// Whether the stream has said that the game started.
    started_sent: bool,
}

impl Dashboard {
    fn new(games: Arc<Games>) -> Dashboard {
        let capacity = NonZeroUsize::new(DASHBOARD_GAMES).unwrap_or(NonZeroUsize::MIN);
        Dashboard {
            games,
            followed: LruCache::new(capacity),
            opening: None,
        }
    }

    /// What an event means for the server's dashboard, as spectators may
    /// see it: a game's opening creates it; its first player action starts
    /// it, shown once spectators see that version (`spectator_delay`
    /// events later, or when the game ends); its last event finishes it.
    async fn classify(&mut self, event: &StoredEvent) -> Vec<proto::ServerEvent> {
        use proto::GameChange as C;
        let change = |change: C, version: u64| proto::ServerEvent {
            position: event.position as i64,
            name: format!("games/{}", event.game),
            change: change as i32,
            // The opening and the creation are one append: a game is created
            // at version 1.
            version: version::of_seq(version.max(2)),
        };
        if !crate::players::is_game_stream(&event.game) {
            return Vec::new();
        }
        if event.seq == 1 {
            self.opening = Some(event.clone());
            return vec![change(C::Created, event.seq)];
        }
        let Some(followed) = self.follow(event).await else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        let finished = followed.loaded.game.is_finished();
        let delay = u64::from(followed.loaded.info.spectator_delay);
        // A game that ends before its start may be seen is announced only
        // as finished: both changes would share this event's position, and
        // a client resuming after it would miss the second.
        if let Some(first) = followed.first_action
            && !followed.started_sent
            && !finished
            && event.seq >= first + delay
        {
            followed.started_sent = true;
            changes.push(change(C::Started, first));
        }
        if finished {
            changes.push(change(C::Finished, event.seq));
            self.followed.pop(&event.game);
        }
        changes
    }

    /// The game with `event` folded in; `None` if it cannot be followed
    /// (damage, reported to the game's own readers).
    async fn follow(&mut self, event: &StoredEvent) -> Option<&mut Followed> {
        let id = &event.game;
        let known = self.followed.get(id).map(|f| f.loaded.version);
        match known {
            Some(version) if version >= event.seq => {}
            Some(version) if version + 1 == event.seq => {
                let followed = self.followed.get_mut(id)?;
                if followed.loaded.advance(event).is_err() {
                    self.followed.pop(id);
                    return None;
                }
                if followed.first_action.is_none() && seat_of(event).is_some() {
                    followed.first_action = Some(event.seq);
                }
            }
            _ => {
                let followed = match self.opening.take() {
                    Some(opening) if event.seq == 2 && opening.game == *id => {
                        let loaded = Loaded::start(&opening, event).ok()?;
                        Followed {
                            loaded,
                            first_action: None,
                            // Nothing to say yet.
                            started_sent: false,
                        }
                    }
                    _ => self.read(id, event.seq).await?,
                };
                self.followed.put(id.clone(), followed);
            }
        }
        self.followed.get_mut(id)
    }

    /// A game met mid-way, folded from the store up to version `seq`.
    async fn read(&self, id: &GameId, seq: u64) -> Option<Followed> {
        let (games, id) = (self.games.clone(), id.clone());
        tokio::task::spawn_blocking(move || {
            let mut first_action = None;
            let loaded = games
                .fold_uncached(&id, Some(seq), |stored, _, _| {
                    if first_action.is_none() && seat_of(stored).is_some() {
                        first_action = Some(stored.seq);
                    }
                })
                .ok()?;
            let delay = u64::from(loaded.info.spectator_delay);
            // Said already if the stream passed it, which it did unless
            // this very event makes it visible.
            let started_sent = first_action.is_some_and(|first| seq > first + delay);
            Some(Followed {
                loaded,
                first_action,
                started_sent,
            })
        })
        .await
        .ok()
        .flatten()
    }
}

#[cfg(test)]
mod tests {
    use carcassonne_engine::{Rules, Seed, Setup};
    use carcassonne_store::{MemoryStore, RequestId};

    use super::*;
    use crate::games::{Acting, NewGame};

    /// A game created in `games` and played `actions` actions (or to its
    /// end), the first legal action each time; returns the version.
    async fn played(games: &Games, id: &GameId, seed: u64, actions: usize) -> u64 {
        played_with_delay(games, id, seed, actions, 0).await
    }

    /// [`played`], with spectators `spectator_delay` events behind.
    async fn played_with_delay(
        games: &Games,
        id: &GameId,
        seed: u64,
        actions: usize,
        spectator_delay: u32,
    ) -> u64 {
        let setup = Setup {
            rules: Rules::default(),
            players: vec!["A".to_owned(), "B".to_owned()],
            tiles: None,
            seed: Some(Seed::from_u64(seed)),
            time_control: None,
        };
        let new = NewGame::guests(setup, spectator_delay);
        let request = RequestId::new(format!("create-{id}")).unwrap();
        let tokens: Vec<String> = games
            .create(id, &request, new)
            .unwrap()
            .tokens
            .into_iter()
            .flatten()
            .collect();
        for _ in 0..actions {
            let loaded = games.load(id).unwrap();
            let Some(seat) = loaded.game.pending().player() else {
                break;
            };
            let command = loaded.game.legal_commands()[0];
            let request = RequestId::new(format!("r{}", loaded.version)).unwrap();
            let token = &tokens[usize::from(seat.0)];
            let Acting::InFlight(written) = games.act(id, token, loaded.version, &request, &command).unwrap()
            else {
                panic!("a new request id is not a retry");
            };
            games.settle(written).await.unwrap();
        }
        games.load(id).unwrap().version
    }

    /// Reads a server stream until its first keep-alive.
    async fn changes(
        games: &Arc<Games>,
        from: u64,
        stopping: tokio::sync::watch::Receiver<bool>,
    ) -> Vec<proto::ServerEvent> {
        let (tx, mut rx) = mpsc::channel(CLIENT_BUFFER);
        let live = games.store().subscribe_all();
        tokio::spawn(pump_server(
            tx,
            live,
            games.clone(),
            from,
            Duration::from_millis(200),
            stopping,
        ));
        let mut seen = Vec::new();
        while let Some(message) = rx.recv().await {
            match message.unwrap().message.unwrap() {
                ws::Message::Event(change) => seen.push(change),
                ws::Message::KeepAlive(_) => break,
                ws::Message::FellBehind(at) => panic!("fell behind at {at}"),
            }
        }
        seen
    }

    #[tokio::test]
    async fn keep_alives_never_tell_a_spectator_when_a_delayed_game_moves() {
        let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
        let games = Arc::new(Games::new(store.clone(), 16));
        let (_stop, stopping) = tokio::sync::watch::channel(false);
        let (tx, mut rx) = mpsc::channel(CLIENT_BUFFER);
        let every = Duration::from_millis(100);
        tokio::spawn(pump_server(
            tx,
            store.subscribe_all(),
            games.clone(),
            0,
            every,
            stopping,
        ));
        // Six moves, all of them hidden from spectators by the delay.
        let id = GameId::new("delayed").unwrap();
        played_with_delay(&games, &id, 5, 6, 50).await;
        let last = store.last_position();
        let mut created_at = None;
        let mut keep_alives = 0;
        while keep_alives < 2 {
            match rx.recv().await.unwrap().unwrap().message.unwrap() {
                ws::Message::Event(change) => {
                    assert_eq!(change.change, proto::GameChange::Created as i32, "{change:?}");
                    created_at = Some(change.position);
                }
                // A keep-alive before the creation says where the stream began.
                ws::Message::KeepAlive(at) if created_at.is_none() => assert_eq!(at, 0),
                ws::Message::KeepAlive(at) => {
                    assert_eq!(Some(at), created_at, "not the store's last position {last}");
                    keep_alives += 1;
                }
                ws::Message::FellBehind(at) => panic!("fell behind at {at}"),
            }
        }
        assert!(
            created_at.is_some_and(|at| (at as u64) < last),
            "moves were stored after it"
        );
    }

    #[tokio::test]
    async fn the_server_stream_folds_each_game_once_and_leaves_the_cache_to_the_games_played() {
        let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
        // Room for one game: the one being played.
        let games = Arc::new(Games::new(store.clone(), 1));
        let (_stop, stopping) = tokio::sync::watch::channel(false);
        let count = 12;
        for n in 0..count {
            let id = GameId::new(format!("other-{n}")).unwrap();
            // Half of them to the end.
            played(&games, &id, n, if n % 2 == 0 { usize::MAX } else { 9 }).await;
        }
        let playing = GameId::new("playing").unwrap();
        played(&games, &playing, 99, 5).await;
        let cached = games.cached(&playing).expect("the game played is cached");
        let folds = games.folds();
        // From the beginning: every game is met at its opening and folded
        // one event at a time, never read again.
        let seen = changes(&games, 0, stopping.clone()).await;
        let finished = seen
            .iter()
            .filter(|c| c.change == proto::GameChange::Finished as i32)
            .count();
        assert_eq!(finished, count as usize / 2);
        assert_eq!(games.folds(), folds, "no game read again from position 0");
        // From the middle of the store: each game met mid-way is read once.
        let middle = store.last_position() / 2;
        changes(&games, middle, stopping.clone()).await;
        assert!(
            games.folds() - folds <= count + 1,
            "{} folds for {} games",
            games.folds() - folds,
            count + 1
        );
        // A listing reads every game, and keeps none.
        let (listed, _) = games.list(None, 100, None).unwrap();
        assert_eq!(listed.len(), count as usize + 1);
        let still = games.cached(&playing).expect("still cached");
        assert!(Arc::ptr_eq(&still, &cached), "nothing pushed the game played out");
    }

    #[tokio::test]
    async fn a_replay_builds_its_steps_as_they_are_read() {
        let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
        let games = Arc::new(Games::new(store, 16));
        let id = GameId::new("replayed").unwrap();
        let last = played(&games, &id, 3, usize::MAX).await;
        assert!(last > 100, "a whole game: {last} events");
        let (_stop, stopping) = tokio::sync::watch::channel(false);
        let built = Arc::new(AtomicUsize::new(0));
        let plan = Plan {
            id: id.clone(),
            from: 2,
            to: last,
        };
        let mut steps = Replay::spawn(games.clone(), plan, Duration::ZERO, stopping, built.clone());
        // Unread: one step waits in the channel, nothing more is built.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(built.load(Ordering::Relaxed), 1, "built before the first read");
        let mut versions = Vec::new();
        while let Some(step) = steps.recv().await {
            versions.push(step.unwrap().event.unwrap().version);
            // At most one step ahead of the reader.
            assert!(built.load(Ordering::Relaxed) <= versions.len() + 1);
        }
        // Stored seqs 3..=last, shown as API versions.
        assert_eq!(
            versions,
            (version::of_seq(3)..=version::of_seq(last)).collect::<Vec<_>>()
        );
        // A replay that is dropped unread ends its task and frees it all.
        let (_stop, stopping) = tokio::sync::watch::channel(false);
        let built = Arc::new(AtomicUsize::new(0));
        let plan = Plan {
            id,
            from: 2,
            to: last,
        };
        let dropped = Replay::spawn(games.clone(), plan, Duration::ZERO, stopping, built.clone());
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(dropped);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(Arc::strong_count(&built), 1, "the replay's task ended");
        assert_eq!(built.load(Ordering::Relaxed), 1);
    }
}
