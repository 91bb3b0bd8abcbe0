//! A registered player's own stream (WatchPlayer): the games that start
//! with them in a seat, each decision that becomes theirs, the games that
//! end, the tournament rounds that seat them, and the challenges that
//! concern them, over one connection.
//!
//! It is the store's server-wide stream, filtered: first a snapshot of
//! every decision that is the player's now, then the stored events after
//! the client's position (if it resumes), then live events; falling
//! behind the live feed sends it back to the store, so nothing is ever
//! skipped.
//!
//! What an event sends depends only on the stored events up to it, never
//! on when the stream passes it: a decision is sent at each event after
//! which the player owes one, with the game as it stood right after that
//! event, even when the game has moved on since (the stream is behind, or
//! resumed). So a resumed stream sends exactly what an uninterrupted one
//! sent after its position, and every decision the player owed is sent at
//! least once; a client acts on each (game, version) once, and an Act on a
//! decision the game has moved past is answered `STALE_VERSION`.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use carcassonne_competition::{CHALLENGE_SCHEMA, PlayerName, SeatOffer, TOURNAMENT_SCHEMA, TournamentEvent};
use carcassonne_store::{GameId, StoredEvent};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use super::watch_service::keep_alive;
use crate::api::status::ApiError;
use crate::api::{version, view};
use crate::challenges::{CHALLENGE_STREAM_PREFIX, Challenges};
use crate::games::stored::Loaded;
use crate::games::{Games, store_error};
use crate::players::is_game_stream;
use crate::players::seats::Seats;
use crate::proto::{self, watch_player_response as message};
use crate::tournaments::TOURNAMENT_STREAM_PREFIX;

pub type PlayerStream = Pin<Box<dyn Stream<Item = Result<proto::WatchPlayerResponse, Status>> + Send>>;

/// Messages a slow client may have waiting before the stream stops
/// reading for it.
const CLIENT_BUFFER: usize = 64;

/// Starts a player's stream.
pub fn start(
    games: Arc<Games>,
    seats: Arc<Seats>,
    challenges: Arc<Challenges>,
    player: PlayerName,
    request: proto::WatchPlayerRequest,
    stopping: tokio::sync::watch::Receiver<bool>,
) -> Result<PlayerStream, ApiError> {
    let every = keep_alive(request.keep_alive_ms)?;
    let after = u64::try_from(request.after_position).map_err(|_| ApiError::InvalidArgument {
        field: "after_position".to_owned(),
        message: format!("a position is never negative, not {}", request.after_position),
    })?;
    // Subscribed before anything is read, so that nothing falls between.
    let live = games.store().subscribe_all();
    let start = games.store().last_position();
    let (tx, rx) = mpsc::channel(CLIENT_BUFFER);
    let pump = Pump {
        tx,
        games,
        seats,
        challenges,
        player,
        position: if after == 0 { start } else { after.min(start) },
        folded: Folded::default(),
    };
    tokio::spawn(pump.run(live, start, every, stopping));
    Ok(Box::pin(ReceiverStream::new(rx)))
}

struct Pump {
    tx: mpsc::Sender<Result<proto::WatchPlayerResponse, Status>>,
    games: Arc<Games>,
    seats: Arc<Seats>,
    challenges: Arc<Challenges>,
    player: PlayerName,
    /// The last position passed.
    position: u64,
    folded: Folded,
}

/// The client went away: stop.
struct Gone;

impl Pump {
    async fn send(&self, position: u64, snapshot: bool, m: message::Message) -> Result<(), Gone> {
        let response = proto::WatchPlayerResponse {
            position: position as i64,
            snapshot,
            message: Some(m),
        };
        self.tx.send(Ok(response)).await.map_err(|_| Gone)
    }

    async fn fail(&self, error: ApiError) {
        let _ = self.tx.send(Err(error.into())).await;
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Games, &Seats) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let (games, seats) = (self.games.clone(), self.seats.clone());
        tokio::task::spawn_blocking(move || work(&games, &seats))
            .await
            .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))?
    }

    async fn run(
        mut self,
        mut live: broadcast::Receiver<Arc<StoredEvent>>,
        start: u64,
        every: Duration,
        mut stopping: tokio::sync::watch::Receiver<bool>,
    ) {
        if self.snapshot(start).await.is_err() {
            return;
        }
        loop {
            // From the store up to its end...
            match self.catch_up().await {
                Ok(()) => {}
                Err(Some(error)) => return self.fail(error).await,
                Err(None) => return,
            }
            // ... then live, until the feed leaves us behind.
            loop {
                let next = tokio::select! {
                    next = live.recv() => next,
                    _ = stopping.changed() => return,
                    () = tokio::time::sleep(every) => {
                        let position = self.position;
                        if self.send(position, false, message::Message::KeepAlive(position as i64)).await.is_err() {
                            return;
                        }
                        continue;
                    }
                };
                match next {
                    Ok(event) if event.position <= self.position => {}
                    Ok(event) => match self.pass(&event).await {
                        Ok(()) => {}
                        Err(Some(error)) => return self.fail(error).await,
                        Err(None) => return,
                    },
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        }
    }

    /// Every decision that is the player's now, and every open challenge
    /// that waits for the player to accept their named seat.
    async fn snapshot(&self, start: u64) -> Result<(), Gone> {
        let now = self.games.store().now_millis();
        for held in self.challenges.list(Some(&self.player)) {
            let challenge = &held.challenge;
            let waits = challenge
                .spec()
                .seats
                .iter()
                .zip(challenge.taken())
                .any(|(offer, taken)| {
                    matches!(offer, SeatOffer::Player(name) if *name == self.player) && taken.is_none()
                });
            if !waits {
                continue;
            }
            match super::challenge_service::challenge_view(&held, now) {
                Ok(view) => self.send(start, true, message::Message::Challenge(view)).await?,
                Err(error) => {
                    self.fail(error).await;
                    return Err(Gone);
                }
            }
        }
        let player = self.player.to_string();
        let pending = self
            .blocking(move |games, seats| {
                // Games opened up to `start` are the snapshot's; those after
                // it come from the store's stream.
                seats.learn_through(start)?;
                let mut pending = Vec::new();
                for id in seats.open_games_of(&player) {
                    let loaded = games.current(&id)?;
                    if loaded.game.is_finished() {
                        seats.finished(&id);
                        continue;
                    }
                    if let Some(seat) = loaded.opened.seat_of_account(&player)
                        && loaded.game.decision_owner().map(|s| s.0) == Some(seat)
                    {
                        pending.push(decision(&loaded, seat));
                    }
                }
                Ok(pending)
            })
            .await;
        match pending {
            Ok(pending) => {
                for m in pending {
                    self.send(start, true, m).await?;
                }
                Ok(())
            }
            Err(error) => {
                self.fail(error).await;
                Err(Gone)
            }
        }
    }

    /// Reads the store from the last position passed to its end.
    async fn catch_up(&mut self) -> Result<(), Option<ApiError>> {
        loop {
            let (store, from) = (self.games.store().clone(), self.position + 1);
            let page = tokio::task::spawn_blocking(move || store.read_all(from, 1000))
                .await
                .map_err(|e| Some(ApiError::Internal(format!("store task failed: {e}"))))?
                .map_err(|e| Some(store_error(e)))?;
            if page.is_empty() {
                // Live from here: the games are at their last events.
                self.folded.clear();
                return Ok(());
            }
            for event in page {
                self.pass(&event).await?;
            }
        }
    }

    /// What one stored event means for the player; sends it.
    async fn pass(&mut self, event: &StoredEvent) -> Result<(), Option<ApiError>> {
        self.position = event.position;
        let messages = if is_game_stream(&event.game) {
            self.game_event(event).await.map_err(Some)?
        } else if event.game.as_str().starts_with(TOURNAMENT_STREAM_PREFIX)
            && event.schema == TOURNAMENT_SCHEMA
        {
            self.tournament_event(event)
        } else if event.game.as_str().starts_with(CHALLENGE_STREAM_PREFIX) && event.schema == CHALLENGE_SCHEMA
        {
            self.challenge_event(event).await.map_err(Some)?
        } else {
            Vec::new()
        };
        for m in messages {
            self.send(event.position, false, m).await.map_err(|Gone| None)?;
        }
        Ok(())
    }

    async fn game_event(&mut self, event: &StoredEvent) -> Result<Vec<message::Message>, ApiError> {
        let player = self.player.to_string();
        let event = event.clone();
        let mut folded = std::mem::take(&mut self.folded);
        let (messages, folded) = self
            .blocking(move |games, seats| {
                let messages = game_messages(games, seats, &mut folded, &player, &event)?;
                Ok((messages, folded))
            })
            .await?;
        self.folded = folded;
        Ok(messages)
    }

    /// A challenge's event: the challenge as it stood right after it, at
    /// that event's time, if it concerns the player.
    async fn challenge_event(&self, event: &StoredEvent) -> Result<Vec<message::Message>, ApiError> {
        let (player, event) = (self.player.clone(), event.clone());
        self.blocking(move |games, _| {
            let stored = games
                .store()
                .read_game_chunk(&event.game, 1, usize::try_from(event.seq).unwrap_or(usize::MAX))
                .map_err(store_error)?;
            let id = event.game.as_str().trim_start_matches(CHALLENGE_STREAM_PREFIX);
            let held = crate::challenges::fold(id, &stored)
                .map_err(|e| ApiError::Corrupt(format!("challenges/{id}: {e}")))?;
            let challenge = &held.challenge;
            if challenge.spec().challenger != player && !challenge.involves(&player) {
                return Ok(Vec::new());
            }
            let view = super::challenge_service::challenge_view(&held, event.time_millis)?;
            Ok(vec![message::Message::Challenge(view)])
        })
        .await
    }

    fn tournament_event(&self, event: &StoredEvent) -> Vec<message::Message> {
        let Ok(TournamentEvent::RoundPaired { round, tables, byes }) =
            TournamentEvent::decode(&event.payload)
        else {
            return Vec::new();
        };
        let tournament = event.game.as_str().trim_start_matches(TOURNAMENT_STREAM_PREFIX);
        let named = |name: &PlayerName| format!("players/{name}");
        let paired = |table: Vec<String>, games: Vec<String>, bye: bool| {
            message::Message::RoundPaired(proto::PlayerRoundPaired {
                tournament: format!("tournaments/{tournament}"),
                round,
                table,
                games,
                bye,
            })
        };
        let mut messages: Vec<_> = tables
            .iter()
            .filter(|t| t.players.contains(&self.player))
            .map(|t| {
                let games = t.games.iter().map(|g| format!("games/{g}")).collect();
                paired(t.players.iter().map(named).collect(), games, false)
            })
            .collect();
        if byes.contains(&self.player) {
            messages.push(paired(Vec::new(), Vec::new(), true));
        }
        messages
    }
}

/// What the stored event `event` of a game means for player `player`: the
/// same whenever a stream passes it (live, behind or resumed), as it
/// depends only on the game's events up to it.
fn game_messages(
    games: &Games,
    seats: &Seats,
    folded: &mut Folded,
    player: &str,
    event: &StoredEvent,
) -> Result<Vec<message::Message>, ApiError> {
    let Some(seat) = seats.of(&event.game)?.seat_of(player) else {
        return Ok(Vec::new());
    };
    let loaded = folded.after(games, event)?;
    let reveal = games.seed_reveal(&event.game, &loaded);
    let view = || {
        view::game_as(
            &loaded.info,
            loaded.version as i64,
            &loaded.game,
            reveal,
            proto::GameView::Full,
        )
    };
    let seat_number = u32::from(seat);
    Ok(if event.seq == 1 {
        vec![message::Message::GameStarted(proto::PlayerGameStarted {
            game: Some(view()),
            seat: seat_number,
        })]
    } else if loaded.game.is_finished() {
        folded.forget(&event.game);
        seats.finished(&event.game);
        vec![message::Message::GameEnded(proto::PlayerGameEnded {
            game: Some(view()),
            seat: seat_number,
        })]
    } else if loaded.game.decision_owner().map(|s| s.0) == Some(seat) {
        vec![decision(&loaded, seat)]
    } else {
        Vec::new()
    })
}

/// The player's games as of the last event of each that a stream passed:
/// the cache's own when it was at that event, else folded from the store.
/// A stream behind a game (catching up, resumed, or a moment behind the
/// live feed) advances its copy with the events it passes, rather than
/// folding the game again for every event. At most [`FOLDED_GAMES`] at
/// once; one left out is folded again when needed.
#[derive(Default)]
struct Folded {
    games: HashMap<GameId, Arc<Loaded>>,
}

/// The most games a stream keeps folded.
const FOLDED_GAMES: usize = 8;

impl Folded {
    /// The game of `event` right after it: at version 1 (seq 2, its
    /// creation) for its opening, which the engine's state begins with.
    fn after(&mut self, games: &Games, event: &StoredEvent) -> Result<Arc<Loaded>, ApiError> {
        let id = &event.game;
        let seq = event.seq.max(2);
        let corrupt = |e: String| ApiError::Corrupt(format!("games/{id}: {e}"));
        if let Some(cached) = games.cached(id).filter(|cached| cached.version == seq) {
            // Live: the game being played is at this event. Kept (shared
            // with the cache, not copied) for the next event, which the
            // game may be past by the time the stream reaches it.
            self.keep(id, cached.clone());
            return Ok(cached);
        }
        if let Some(known) = self.games.get_mut(id) {
            if known.version == seq {
                return Ok(known.clone());
            }
            if known.version + 1 == seq {
                Arc::make_mut(known).advance(event).map_err(corrupt)?;
                return Ok(known.clone());
            }
        }
        let loaded = if event.seq == 1 {
            let opening = games.store().read_game_chunk(id, 1, 2).map_err(store_error)?;
            let [first, second] = opening.as_slice() else {
                return Err(corrupt("no creation after its opening".to_owned()));
            };
            Loaded::start(first, second).map_err(corrupt)?
        } else {
            games.fold_uncached(id, Some(seq), |_, _, _| {})?
        };
        if loaded.version != seq {
            return Err(corrupt(format!(
                "event {seq} passed, but the game ends at {}",
                loaded.version
            )));
        }
        let loaded = Arc::new(loaded);
        self.keep(id, loaded.clone());
        Ok(loaded)
    }

    fn keep(&mut self, id: &GameId, loaded: Arc<Loaded>) {
        if self.games.len() >= FOLDED_GAMES
            && !self.games.contains_key(id)
            && let Some(any) = self.games.keys().next().cloned()
        {
            self.games.remove(&any);
        }
        self.games.insert(id.clone(), loaded);
    }

    fn forget(&mut self, id: &GameId) {
        self.games.remove(id);
    }

    fn clear(&mut self) {
        self.games.clear();
    }
}

/// The decision pending in `loaded`, which is seat `seat`'s.
fn decision(loaded: &Loaded, seat: u8) -> message::Message {
    message::Message::Decision(proto::PlayerDecision {
        game: format!("games/{}", loaded.info.id),
        seat: u32::from(seat),
        legal: Some(proto::GetLegalActionsResponse {
            version: version::of_seq(loaded.version),
            pending: Some(view::pending(&loaded.game)),
            actions: view::actions(&loaded.game),
            time_left_ms: view::times_left(&loaded.game),
            clock_time_ms: view::millis(loaded.game.time()),
        }),
    })
}
