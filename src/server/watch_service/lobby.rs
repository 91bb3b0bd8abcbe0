//! What WatchServer tells, classified once for the whole server.
//!
//! The server stream says when a game is created, when it starts (its
//! first player action, once spectators may see it) and when it finishes.
//! One task per server, running while anyone follows the stream, reads
//! each stored event once as the store publishes it, folds each running
//! game event by event in one bounded map ([`Dashboard`]) and broadcasts
//! the changes, a few dozen bytes each, to every server stream. A stream
//! is then a receiver in that broadcast, a position and a timer
//! (`server_watch.rs`): a thousand lobby pages cost one fold per event,
//! not a thousand, and no memory of their own but a few messages.
//!
//! A stream that starts at an earlier position classifies the store's
//! events up to now itself, a page at a time, with [`Lobby::classify_stored`]:
//! the same rule ([`change_at`]) on what is known of each game ([`Facts`]:
//! its spectator delay, its first player action and whether it ended
//! there), which the shared task notes as it goes and a catch-up completes
//! from the store, in one bounded map that every stream shares.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use carcassonne_store::{EventReceiver, GameId, StoredEvent};
use lru::LruCache;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;

use crate::api::status::ApiError;
use crate::api::version;
use crate::games::stored::{Loaded, OPENED_SCHEMA, Opened, seat_of};
use crate::games::{Games, store_error};
use crate::players::is_game_stream;
use crate::proto::{self, GameChange};

/// What the shared task broadcasts: a game's change, or why it stopped.
/// Two pointers wide, so that the broadcast's ring stays small.
pub type Broadcast = Result<Arc<proto::ServerEvent>, Arc<ApiError>>;

/// Changes the broadcast holds for a stream that reads slowly; a stream
/// further behind is told it fell behind. A game makes three.
const CHANGES_HELD: usize = 1024;

/// Running games the shared task keeps folded (a few KB each, more as a
/// board grows; once for the server); past it, the least recently changed
/// one is folded again from the store when it changes next.
const FOLLOWED_GAMES: usize = 4096;

/// Games whose [`Facts`] are kept (about 150 bytes each, once for the
/// server).
const KNOWN_GAMES: usize = 8192;

/// Events a catch-up reads and classifies at a time.
pub const CATCH_UP_PAGE: usize = 256;

/// Events read at a time while looking for a game's first player action
/// (usually its fourth event).
const SCAN_CHUNK: usize = 16;

/// The change that event `seq` of a game makes, with the version it names:
/// the opening creates the game (at version 1: the opening and the
/// creation are one append); its last event finishes it; the event that
/// lets spectators see its first player action (`delay` events later)
/// starts it, with that action's version. A game that ends before then is
/// announced only as finished: both changes would share this event's
/// position, and a client resuming after it would miss the second.
fn change_at(seq: u64, first_action: Option<u64>, delay: u32, finishing: bool) -> Option<(GameChange, u64)> {
    if seq == 1 {
        return Some((GameChange::Created, 2));
    }
    if finishing {
        return Some((GameChange::Finished, seq));
    }
    match first_action {
        Some(first) if seq == first + u64::from(delay) => Some((GameChange::Started, first)),
        _ => None,
    }
}

fn server_event(event: &StoredEvent, (change, version): (GameChange, u64)) -> proto::ServerEvent {
    proto::ServerEvent {
        position: event.position as i64,
        name: format!("games/{}", event.game),
        change: change as i32,
        version: version::of_seq(version),
    }
}

/// What the server stream needs to know of a game, as far as it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Facts {
    delay: u32,
    /// The seq of the game's first player action, if it is among its first
    /// `scanned` events.
    first_action: Option<u64>,
    scanned: u64,
    /// The game's last seq, once it is over; until then, it is known to be
    /// running at seq `running`.
    finished: Option<u64>,
    running: u64,
}

impl Facts {
    /// Both, as far as either knows.
    fn merge(self, other: Facts) -> Facts {
        Facts {
            delay: self.delay,
            first_action: self.first_action.or(other.first_action),
            scanned: self.scanned.max(other.scanned),
            finished: self.finished.or(other.finished),
            running: self.running.max(other.running),
        }
    }

    /// The first player action if it is at `seq` or before; `None` if not
    /// known that far.
    fn first_action_through(&self, seq: u64) -> Option<Option<u64>> {
        match self.first_action {
            Some(first) => Some(Some(first).filter(|&first| first <= seq)),
            None if self.scanned >= seq => Some(None),
            None => None,
        }
    }

    /// Whether event `seq` ends the game; `None` if not known.
    fn finishes_at(&self, seq: u64) -> Option<bool> {
        match self.finished {
            Some(last) => Some(last == seq),
            None if self.running >= seq => Some(false),
            None => None,
        }
    }
}

/// The server stream's changes, for every stream of one server.
pub struct Lobby {
    games: Arc<Games>,
    stopping: watch::Receiver<bool>,
    /// The shared task's broadcast while it runs (the task holds the one
    /// sender: when it ends, for whatever reason, the broadcast closes).
    /// Receivers are only made under this lock, and the task stops under
    /// it once none is left, so a stream never joins a task that stops.
    running: Mutex<Option<broadcast::WeakSender<Broadcast>>>,
    /// What is known of the games met lately, by the shared task and by
    /// catch-ups.
    known: Mutex<LruCache<GameId, Facts>>,
    /// Events the shared task classified, and games read from the store
    /// for a catch-up's facts: what tests of the streams' cost count.
    classified: AtomicU64,
    scans: AtomicU64,
}

impl Lobby {
    /// The changes of the games of `games`; the shared task ends when
    /// `stopping` turns true.
    pub fn new(games: Arc<Games>, stopping: watch::Receiver<bool>) -> Arc<Lobby> {
        Arc::new(Lobby {
            games,
            stopping,
            running: Mutex::new(None),
            known: Mutex::new(LruCache::new(
                NonZeroUsize::new(KNOWN_GAMES).unwrap_or(NonZeroUsize::MIN),
            )),
            classified: AtomicU64::new(0),
            scans: AtomicU64::new(0),
        })
    }

    pub fn games(&self) -> &Arc<Games> {
        &self.games
    }

    fn running(&self) -> MutexGuard<'_, Option<broadcast::WeakSender<Broadcast>>> {
        // A plain sender: a panic elsewhere cannot leave it half-updated.
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The running task's sender, if it runs.
    fn sender(running: &Option<broadcast::WeakSender<Broadcast>>) -> Option<broadcast::Sender<Broadcast>> {
        running.as_ref().and_then(broadcast::WeakSender::upgrade)
    }

    fn known(&self) -> MutexGuard<'_, LruCache<GameId, Facts>> {
        // Plain values, each written whole.
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A receiver of the changes of every event the store publishes from
    /// now on (the changes of events published before may come too: a
    /// stream skips what it has). Starts the shared task if none runs;
    /// must be called within the runtime. Once the server stops, the
    /// receiver is closed.
    pub fn subscribe(self: &Arc<Lobby>) -> broadcast::Receiver<Broadcast> {
        let mut running = self.running();
        if let Some(sender) = Lobby::sender(&running) {
            return sender.subscribe();
        }
        let (sender, receiver) = broadcast::channel(CHANGES_HELD);
        if *self.stopping.borrow() {
            return receiver;
        }
        // Subscribe to the store before taking its position: every event
        // after it comes through the subscription.
        let store = self.games.store();
        let events = store.subscribe_all();
        let position = store.last_position();
        *running = Some(sender.downgrade());
        tokio::spawn(tracing::Instrument::instrument(
            self.clone().run(sender, events, position),
            tracing::debug_span!("server_stream_changes"),
        ));
        receiver
    }

    /// How many streams follow the shared task now.
    #[cfg(test)]
    pub fn followers(&self) -> usize {
        Lobby::sender(&self.running()).map_or(0, |sender| sender.receiver_count())
    }

    /// Events the shared task classified so far.
    #[cfg(test)]
    pub fn classified(&self) -> u64 {
        self.classified.load(Ordering::Relaxed)
    }

    /// Games read from the store for a catch-up's facts so far.
    #[cfg(test)]
    pub fn scans(&self) -> u64 {
        self.scans.load(Ordering::Relaxed)
    }

    /// Stops the shared task if no stream follows it; says whether it did.
    fn stop_if_unfollowed(&self, sender: &broadcast::Sender<Broadcast>) -> bool {
        let mut running = self.running();
        if sender.receiver_count() > 0 {
            return false;
        }
        Lobby::forget(&mut running, sender);
        true
    }

    /// Forgets the task of `sender`, if it is the one running.
    fn forget(running: &mut Option<broadcast::WeakSender<Broadcast>>, sender: &broadcast::Sender<Broadcast>) {
        if Lobby::sender(running).is_some_and(|s| s.same_channel(sender)) {
            *running = None;
        }
    }

    /// The shared task: classifies every event after `position` once, as
    /// the store publishes it, until no stream follows or the server
    /// stops. Ending it closes the broadcast (the last sender goes), which
    /// ends the streams that follow.
    async fn run(
        self: Arc<Lobby>,
        sender: broadcast::Sender<Broadcast>,
        mut events: EventReceiver,
        mut position: u64,
    ) {
        let mut dashboard = Dashboard::new(self.games.clone());
        let mut stopping = self.stopping.clone();
        loop {
            let next = tokio::select! {
                biased;
                _ = stopping.changed() => break,
                () = sender.closed() => {
                    if self.stop_if_unfollowed(&sender) {
                        return;
                    }
                    continue;
                }
                next = events.recv() => next,
            };
            match next {
                Ok(event) if event.position <= position => {}
                Ok(event) => {
                    position = event.position;
                    self.classify_live(&mut dashboard, &event, &sender).await;
                }
                // Fell behind the store: it has what was missed.
                Err(RecvError::Lagged(_)) => match self.catch_up(&mut dashboard, position, &sender).await {
                    Ok(caught_up) => position = caught_up,
                    Err(error) => {
                        tracing::error!(%error, "the server stream's changes stop");
                        let _ = sender.send(Err(Arc::new(error)));
                        break;
                    }
                },
                Err(RecvError::Closed) => break,
            }
        }
        Lobby::forget(&mut self.running(), &sender);
    }

    /// Classifies the stored events after `position` up to the store's
    /// last one; returns the last position classified.
    async fn catch_up(
        &self,
        dashboard: &mut Dashboard,
        mut position: u64,
        sender: &broadcast::Sender<Broadcast>,
    ) -> Result<u64, ApiError> {
        loop {
            let store = self.games.store().clone();
            let from = position + 1;
            let page = tokio::task::spawn_blocking(move || store.read_all(from, CATCH_UP_PAGE))
                .await
                .map_err(|e| ApiError::Internal(e.to_string()))?
                .map_err(store_error)?;
            if page.is_empty() {
                return Ok(position);
            }
            for event in page {
                position = event.position;
                self.classify_live(dashboard, &event, sender).await;
            }
        }
    }

    /// Classifies an event in the shared task, notes what it learnt of its
    /// game, and broadcasts its change.
    async fn classify_live(
        &self,
        dashboard: &mut Dashboard,
        event: &StoredEvent,
        sender: &broadcast::Sender<Broadcast>,
    ) {
        self.classified.fetch_add(1, Ordering::Relaxed);
        let Some((change, facts)) = dashboard.classify(event).await else {
            return;
        };
        if let Some(facts) = facts {
            self.learn(&event.game, facts);
        }
        if let Some(change) = change {
            // An error only means that nobody listens right now.
            let _ = sender.send(Ok(Arc::new(server_event(event, change))));
        }
    }

    fn learn(&self, id: &GameId, facts: Facts) {
        let mut known = self.known();
        let merged = match known.peek(id) {
            Some(held) => held.merge(facts),
            None => facts,
        };
        known.put(id.clone(), merged);
    }

    /// The changes of stored events, in order, as the shared task gave or
    /// would give them: a catch-up's page. Blocking: it may read the store.
    pub fn classify_stored(&self, events: &[StoredEvent]) -> Vec<proto::ServerEvent> {
        events
            .iter()
            .filter(|event| is_game_stream(&event.game))
            .filter_map(|event| {
                let change = if event.seq == 1 {
                    change_at(1, None, 0, false)
                } else {
                    // A game that cannot be read (damage, reported to its
                    // own readers) changes nothing here.
                    let (first_action, delay, finishing) = self.facts_at(&event.game, event.seq).ok()?;
                    change_at(event.seq, first_action, delay, finishing)
                };
                Some(server_event(event, change?))
            })
            .collect()
    }

    /// For event `seq` of game `id`: its first player action if made by
    /// then, its spectator delay, and whether the event ends the game.
    /// From the facts known, completed from the store.
    fn facts_at(&self, id: &GameId, seq: u64) -> Result<(Option<u64>, u32, bool), ApiError> {
        let mut facts = match self.known().get(id).copied() {
            Some(facts) => facts,
            None => self.opening(id)?,
        };
        // Started is said `delay` events after the first action: it is
        // enough to know whether it came by then.
        let through = seq.saturating_sub(u64::from(facts.delay));
        let first_action = match facts.first_action_through(through) {
            Some(first_action) => first_action,
            None => {
                facts = facts.merge(self.scan(id, facts.scanned, through)?);
                facts.first_action_through(through).flatten()
            }
        };
        let finishing = match facts.finishes_at(seq) {
            Some(finishing) => finishing,
            None => {
                facts = facts.merge(self.ending(id, seq)?);
                facts.finishes_at(seq) == Some(true)
            }
        };
        self.learn(id, facts);
        Ok((first_action, facts.delay, finishing))
    }

    /// A game's delay, and its first player action among its first events.
    fn opening(&self, id: &GameId) -> Result<Facts, ApiError> {
        let chunk = self.read_chunk(id, 1)?;
        let opened = match chunk.first() {
            Some(first) if first.seq == 1 && first.schema == OPENED_SCHEMA => {
                Opened::decode(&first.payload).map_err(|e| ApiError::Corrupt(format!("event 1: {e}")))?
            }
            _ => return Err(ApiError::Corrupt(format!("{id} has no opening"))),
        };
        Ok(Facts {
            delay: opened.spectator_delay,
            first_action: chunk.iter().find(|e| seat_of(e).is_some()).map(|e| e.seq),
            scanned: chunk.last().map_or(0, |e| e.seq),
            finished: None,
            running: 0,
        })
    }

    /// Reads a game's events after `scanned` for its first player action,
    /// up to seq `through` or until found.
    fn scan(&self, id: &GameId, mut scanned: u64, through: u64) -> Result<Facts, ApiError> {
        let mut first_action = None;
        while first_action.is_none() && scanned < through {
            let chunk = self.read_chunk(id, scanned + 1)?;
            let Some(last) = chunk.last() else { break };
            scanned = last.seq;
            first_action = chunk.iter().find(|e| seat_of(e).is_some()).map(|e| e.seq);
        }
        Ok(Facts {
            delay: 0,
            first_action,
            scanned,
            finished: None,
            running: 0,
        })
    }

    fn read_chunk(&self, id: &GameId, from: u64) -> Result<Vec<StoredEvent>, ApiError> {
        self.scans.fetch_add(1, Ordering::Relaxed);
        self.games
            .store()
            .read_game_chunk(id, from, SCAN_CHUNK)
            .map_err(store_error)
    }

    /// Whether the game ended with event `seq`, as facts. A game's end is
    /// its last event: a game that went on after `seq` did not end there,
    /// and only a game whose last event `seq` is now is read to know.
    fn ending(&self, id: &GameId, seq: u64) -> Result<Facts, ApiError> {
        let last = self
            .games
            .store()
            .game(id)
            .map_err(store_error)?
            .map_or(0, |summary| summary.last_seq);
        let facts = |finished: Option<u64>, running: u64| Facts {
            delay: 0,
            first_action: None,
            scanned: 0,
            finished,
            running,
        };
        if last > seq {
            return Ok(facts(None, last - 1));
        }
        // From the games' cache if it holds that version, which it leaves
        // as it is.
        let now = self.games.current(id)?;
        Ok(if now.version > seq {
            facts(None, now.version - 1)
        } else if now.game.is_finished() {
            facts(Some(now.version), 0)
        } else {
            facts(None, now.version)
        })
    }
}

/// The running games the shared task has met: each game's state, folded
/// one event at a time as the task passes it (a game is read from the
/// store only when met mid-way), in a bounded map of its own, never in the
/// games' cache, which it leaves to the games being played.
struct Dashboard {
    games: Arc<Games>,
    followed: LruCache<GameId, Followed>,
    /// The last opening seen: a game's opening and creation are one append,
    /// so the creation that follows starts the game from it.
    opening: Option<StoredEvent>,
}

struct Followed {
    loaded: Loaded,
    /// The seq of the game's first player action, once made.
    first_action: Option<u64>,
}

impl Dashboard {
    fn new(games: Arc<Games>) -> Dashboard {
        Dashboard {
            games,
            followed: LruCache::new(NonZeroUsize::new(FOLLOWED_GAMES).unwrap_or(NonZeroUsize::MIN)),
            opening: None,
        }
    }

    /// What an event changes, and what it tells of its game; `None` for an
    /// event of no game, or of a game that cannot be followed (damage,
    /// reported to the game's own readers).
    async fn classify(&mut self, event: &StoredEvent) -> Option<(Option<(GameChange, u64)>, Option<Facts>)> {
        if !is_game_stream(&event.game) {
            return None;
        }
        if event.seq == 1 {
            self.opening = Some(event.clone());
            let facts = Opened::decode(&event.payload).ok().map(|opened| Facts {
                delay: opened.spectator_delay,
                first_action: None,
                scanned: 1,
                finished: None,
                running: 1,
            });
            return Some((change_at(1, None, 0, false), facts));
        }
        let followed = self.follow(event).await?;
        let finished = followed.loaded.game.is_finished();
        let delay = followed.loaded.info.spectator_delay;
        let facts = Facts {
            delay,
            first_action: followed.first_action,
            scanned: event.seq,
            finished: finished.then_some(event.seq),
            running: if finished { 0 } else { event.seq },
        };
        let change = change_at(event.seq, followed.first_action, delay, finished);
        if finished {
            self.followed.pop(&event.game);
        }
        Some((change, Some(facts)))
    }

    /// The game with `event` folded in.
    async fn follow(&mut self, event: &StoredEvent) -> Option<&mut Followed> {
        let id = &event.game;
        match self.followed.get(id).map(|f| f.loaded.version) {
            // Folded already: nothing new.
            Some(version) if version >= event.seq => return None,
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
                    Some(opening) if event.seq == 2 && opening.game == *id => Followed {
                        loaded: Loaded::start(&opening, event).ok()?,
                        first_action: None,
                    },
                    _ => self.read(id, event.seq).await?,
                };
                self.followed.put(id.clone(), followed);
            }
        }
        self.followed.get_mut(id)
    }

    /// A game met mid-way, folded from the store up to seq `seq`.
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
            Some(Followed { loaded, first_action })
        })
        .await
        .ok()
        .flatten()
    }
}
