//! `carcassonne.v1.WatchService`: a game's events as a stream (live and
//! resumable), the server's game changes, step-by-step replay, the state at
//! any version, and records for audits.
//!
//! A game's watchers share its live feed (`feed.rs`), each with a stream
//! of its own (`game_watch.rs`). The server stream and replays run in a
//! task each and write into a bounded channel to their client. Nothing
//! waits for a slow reader: it lags in a broadcast, is told it fell behind,
//! and ends; neither the game nor other watchers ever wait for it.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use carcassonne_store::{EventStore, StoredEvent};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::feed::Feeds;
use super::game_watch;
use super::viewer::{self, Viewer};
use crate::api::status::ApiError;
use crate::api::version::{self, Start};
use crate::api::view;
use crate::games::stored::Loaded;
use crate::games::{Games, store_error};
use crate::proto::{self, watch_server_response as ws};

type Responses<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Messages a stream may hold for a client that reads slowly.
const CLIENT_BUFFER: usize = 64;

pub struct WatchService {
    games: Arc<Games>,
    feeds: Arc<Feeds>,
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
    ) -> WatchService {
        let feeds = Feeds::new(games.store().clone(), feed_capacity, stopping.clone());
        WatchService {
            games,
            feeds,
            stopping,
        }
    }

    fn store(&self) -> Arc<dyn EventStore> {
        self.games.store().clone()
    }
}

fn keep_alive(millis: u32) -> Result<Duration, ApiError> {
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

    async fn watch_game(
        &self,
        request: Request<proto::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let token = viewer::optional_token(&request)?;
        let r = request.into_inner();
        let id = viewer::game_id(&r.name)?;
        let from = watch_from(r.from_version)?;
        let every = keep_alive(r.keep_alive_ms)?;
        let (games, feeds) = (self.games.clone(), self.feeds.clone());
        let (live, catch_up, viewer) = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
            let loaded = games.load(&id)?;
            let viewer = Viewer::of(token.as_deref(), &loaded)?;
            // Join the feed before reading, so that nothing falls between
            // the two.
            let live = feeds.join(&id, &loaded);
            let stored = games.store().read_game(&id, 1).map_err(store_error)?;
            Ok((live, game_watch::catch_up(&stored, from, viewer)?, viewer))
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
        let stream = game_watch::stream(catch_up, viewer, live, every, self.stopping.clone());
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
        let token = viewer::optional_token(&request)?;
        let r = request.into_inner();
        let id = viewer::game_id(&r.name)?;
        let (from, to) = replay_range(r.from_version, r.to_version)?;
        if r.interval_ms > 60_000 {
            return Err(ApiError::InvalidArgument {
                field: "interval_ms".to_owned(),
                message: "at most 60000".to_owned(),
            }
            .into());
        }
        let games = self.games.clone();
        let (steps, info) = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
            // Fresh from the store: a watcher may have seen an event the
            // cache does not hold yet.
            let (now, _) = games.history(&id, None)?;
            let viewer = Viewer::of(token.as_deref(), &now)?;
            let visible = viewer.visible(now.version, now.game.is_finished(), now.info.spectator_delay);
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
            let stored = games.store().read_game(&id, 1).map_err(store_error)?;
            let [first, second, rest @ ..] = &stored[..] else {
                return Err(ApiError::Corrupt("fewer than two events".to_owned()));
            };
            let mut loaded = Loaded::start(first, second).map_err(ApiError::Corrupt)?;
            let mut steps = Vec::new();
            for event in rest.iter().take_while(|e| e.seq <= to) {
                let (engine_event, effects) = loaded.advance(event).map_err(ApiError::Corrupt)?;
                if event.seq > from {
                    steps.push(proto::ReplayGameResponse {
                        event: Some(view::event(
                            event.seq as i64,
                            event.time_millis as i64,
                            view::event_seat(&engine_event, viewer::seat_of(event), &loaded.game),
                            &engine_event,
                            &effects,
                            &loaded.info.seed_sha256,
                        )),
                        game: Some(view::game(&loaded.info, loaded.version as i64, &loaded.game)),
                    });
                }
            }
            Ok((steps, loaded.info))
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))??;
        let (tx, rx) = mpsc::channel(CLIENT_BUFFER);
        let interval = Duration::from_millis(u64::from(r.interval_ms));
        let mut stopping = self.stopping.clone();
        tokio::spawn(tracing::Instrument::instrument(
            async move {
                for (i, step) in steps.into_iter().enumerate() {
                    if i > 0 && !interval.is_zero() {
                        tokio::select! {
                            () = tokio::time::sleep(interval) => {}
                            _ = stopping.changed() => return,
                        }
                    }
                    // Backpressure: as fast as the client reads.
                    if tx.send(Ok(step)).await.is_err() {
                        return;
                    }
                }
            },
            tracing::info_span!("replay_game", game = %info.id),
        ));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn get_game_at_version(
        &self,
        request: Request<proto::GetGameAtVersionRequest>,
    ) -> Result<Response<proto::GetGameAtVersionResponse>, Status> {
        let token = viewer::optional_token(&request)?;
        let r = request.into_inner();
        let id = viewer::game_id(&r.name)?;
        let version = version::to_seq("version", r.version)?;
        let games = self.games.clone();
        let game = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
            // Fresh from the store: a watcher may have seen an event the
            // cache does not hold yet.
            let (now, _) = games.history(&id, None)?;
            let viewer = Viewer::of(token.as_deref(), &now)?;
            let visible = viewer.visible(now.version, now.game.is_finished(), now.info.spectator_delay);
            if !(2..=visible).contains(&version) {
                return Err(ApiError::InvalidArgument {
                    field: "version".to_owned(),
                    message: format!(
                        "between 1 and {}, the version you may see, not {}",
                        version::of_seq(visible),
                        version::of_seq(version)
                    ),
                });
            }
            let (loaded, _) = games.history(&id, Some(version))?;
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
        let token = viewer::optional_token(&request)?;
        let id = viewer::game_id(&request.get_ref().name)?;
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
        let answer = tokio::task::spawn_blocking(move || super::audit::verify(&r))
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(Response::new(answer))
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
            if let Some(change) = classify(&games, &event).await
                && tx.send(Ok(message(ws::Message::Event(change)))).await.is_err()
            {
                return;
            }
        }
    }
    loop {
        let next = tokio::select! {
            next = live.recv() => next,
            _ = stopping.changed() => return,
            () = tokio::time::sleep(every) => {
                if tx.send(Ok(message(ws::Message::KeepAlive(position as i64)))).await.is_err() {
                    return;
                }
                continue;
            }
        };
        match next {
            Ok(event) if event.position <= position => {}
            Ok(event) => {
                position = event.position;
                if let Some(change) = classify(&games, &event).await
                    && tx.send(Ok(message(ws::Message::Event(change)))).await.is_err()
                {
                    return;
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {
                let _ = tx
                    .send(Ok(message(ws::Message::FellBehind(position as i64))))
                    .await;
                return;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// What an event means for the server's dashboard, if anything: a game's
/// opening creates it; its first player action (always its 4th event:
/// opening, creation, first draw, action) starts it; its last event, when
/// the game is over, finishes it.
async fn classify(games: &Arc<Games>, event: &StoredEvent) -> Option<proto::ServerEvent> {
    use proto::GameChange as C;
    let change = match event.seq {
        1 => Some(C::Created),
        4 if viewer::seat_of(event).is_some() => Some(C::Started),
        _ => None,
    };
    let finished = {
        let (games, id) = (games.clone(), event.game.clone());
        let seq = event.seq;
        tokio::task::spawn_blocking(move || {
            // The store publishes an event before the action that appended
            // it updates the cache: read the game fresh if the cache is
            // behind this event.
            let ended = |game: &carcassonne_engine::Game, version: u64| game.is_finished() && version == seq;
            match games.load(&id) {
                Ok(cached) if cached.version >= seq => ended(&cached.game, cached.version),
                Ok(_) => games
                    .history(&id, None)
                    .is_ok_and(|(fresh, _)| ended(&fresh.game, fresh.version)),
                Err(_) => false,
            }
        })
        .await
        .unwrap_or(false)
    };
    let change = if finished { Some(C::Finished) } else { change }?;
    Some(proto::ServerEvent {
        position: event.position as i64,
        name: format!("games/{}", event.game),
        change: change as i32,
        // The opening and the creation are one append: a game is created
        // at version 1.
        version: version::of_seq(event.seq.max(2)),
    })
}
