//! The live feed of a watched game: while a game has watchers, one task
//! reads its events from the store, folds each once, builds the message
//! watchers are shown once, and broadcasts it to all of them. A thousand
//! watchers cost one fold and one message per event, not a thousand.
//!
//! The feed never waits for a watcher: tokio's broadcast keeps the last
//! `capacity` steps, and a watcher that falls further behind lags (and is
//! told so by its stream). A watcher joins before it reads the history it
//! catches up from, so nothing falls between the two, and skips the steps
//! it already has. The feed ends when its last watcher leaves, when the
//! game ends, or when the server stops: a game nobody watches costs nothing.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use carcassonne_store::{EventReceiver, EventStore, GameId, StoredEvent};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;
use tokio_stream::Stream as _;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

use crate::api::status::ApiError;
use crate::api::view;
use crate::games::store_error;
use crate::games::stored::{Loaded, seat_of};
use crate::proto;

/// An event folded in, with what every watcher is shown of it.
#[derive(Debug)]
pub struct Update {
    pub seq: u64,
    /// Whether the game is over after this event.
    pub finished: bool,
    pub message: proto::WatchedEvent,
}

/// What a feed broadcasts: the next event, or why the feed stopped. Two
/// pointers wide, so that the broadcast's ring stays small.
pub type Step = Result<Arc<Update>, Arc<ApiError>>;

/// Folds the next stored event into `loaded` and builds what watchers are
/// shown of it. Only `api::view` builds the message: it is the same for
/// players and spectators (spectators see it later, not otherwise).
pub fn update(loaded: &mut Loaded, stored: &StoredEvent) -> Result<Update, ApiError> {
    let (event, effects) = loaded.advance(stored).map_err(ApiError::Corrupt)?;
    let game = &loaded.game;
    let seat = view::event_seat(&event, seat_of(stored), game);
    Ok(Update {
        seq: stored.seq,
        finished: game.is_finished(),
        message: proto::WatchedEvent {
            event: Some(view::event(
                stored.seq as i64,
                stored.time_millis as i64,
                seat,
                &event,
                &effects,
                &loaded.info.seed_sha256,
            )),
            pending: Some(view::pending(game)),
            scores: game.scores().to_vec(),
            time_left_ms: view::times_left(game),
            ending: game.ending().map(view::ending),
        },
    })
}

/// The feeds of the games being watched.
pub struct Feeds {
    store: Arc<dyn EventStore>,
    capacity: usize,
    stopping: watch::Receiver<bool>,
    /// The channel of each game with a running feed. Receivers are only
    /// made and dropped under this lock, so a channel seen here with
    /// watchers keeps them until the lock is released, and one whose
    /// watchers all left never gets another.
    live: Mutex<HashMap<GameId, broadcast::Sender<Step>>>,
    /// How many feed tasks run, so that one can wait for them to end.
    running: watch::Sender<usize>,
}

impl Feeds {
    /// Feeds whose broadcasts hold `capacity` steps for a slow watcher, and
    /// that end when `stopping` turns true.
    pub fn new(store: Arc<dyn EventStore>, capacity: usize, stopping: watch::Receiver<bool>) -> Arc<Feeds> {
        Arc::new(Feeds {
            store,
            capacity: capacity.max(1),
            stopping,
            live: Mutex::new(HashMap::new()),
            running: watch::Sender::new(0),
        })
    }

    fn live(&self) -> MutexGuard<'_, HashMap<GameId, broadcast::Sender<Step>>> {
        // The map holds plain senders: a panic elsewhere cannot leave it
        // half-updated, so a poisoned lock is safe to use.
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Joins the feed of game `id`, starting one from `loaded` (the game at
    /// some version, possibly behind the store) if none runs. Must be
    /// called within the runtime: it may spawn the feed's task.
    pub fn join(self: &Arc<Feeds>, id: &GameId, loaded: &Loaded) -> Subscription {
        let mut live = self.live();
        if let Some(sender) = live.get(id)
            && sender.receiver_count() > 0
        {
            return self.subscription(id, sender.subscribe());
        }
        // Subscribe to the store first: what `loaded` lacks is then either
        // in the subscription or read from the store when a gap shows.
        let events = self.store.subscribe_game(id);
        let (sender, receiver) = broadcast::channel(self.capacity);
        live.insert(id.clone(), sender.clone());
        self.running.send_modify(|n| *n += 1);
        let running = Running {
            feeds: self.clone(),
            id: id.clone(),
            sender,
        };
        let span = tracing::debug_span!("game_feed", game = %id);
        tokio::spawn(tracing::Instrument::instrument(
            run(running, loaded.clone(), events),
            span,
        ));
        self.subscription(id, receiver)
    }

    fn subscription(self: &Arc<Feeds>, id: &GameId, receiver: broadcast::Receiver<Step>) -> Subscription {
        Subscription {
            receiver: Some(BroadcastStream::new(receiver)),
            feeds: self.clone(),
            id: id.clone(),
        }
    }

    /// Games whose feed runs and has watchers.
    #[cfg(test)]
    pub fn watched(&self) -> usize {
        self.live().len()
    }

    /// The number of feed tasks running, as it changes.
    #[cfg(test)]
    pub fn running(&self) -> watch::Receiver<usize> {
        self.running.subscribe()
    }
}

/// What a watcher receives from its feed.
#[derive(Debug)]
pub enum Received {
    Step(Step),
    /// This watcher fell further behind than the feed holds.
    Lagged,
    /// The feed ended.
    Closed,
}

/// A watcher's place in a game's feed; leaving is dropping it.
pub struct Subscription {
    /// A stream, so that one receiving future serves every step. Always
    /// `Some` until dropped.
    receiver: Option<BroadcastStream<Step>>,
    feeds: Arc<Feeds>,
    id: GameId,
}

impl Subscription {
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Received> {
        let Some(receiver) = &mut self.receiver else {
            return Poll::Ready(Received::Closed);
        };
        Pin::new(receiver).poll_next(cx).map(|next| match next {
            Some(Ok(step)) => Received::Step(step),
            Some(Err(BroadcastStreamRecvError::Lagged(_))) => Received::Lagged,
            None => Received::Closed,
        })
    }

    #[cfg(test)]
    pub async fn recv(&mut self) -> Received {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut live = self.feeds.live();
        drop(self.receiver.take());
        // The last watcher left: the feed's task ends (its broadcast is
        // closed), and the next watcher starts another.
        if live.get(&self.id).is_some_and(|s| s.receiver_count() == 0) {
            live.remove(&self.id);
        }
    }
}

/// A running feed task; when it ends, its game's entry goes (if still its
/// own), which closes its broadcast for the watchers left.
struct Running {
    feeds: Arc<Feeds>,
    id: GameId,
    sender: broadcast::Sender<Step>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut live = self.feeds.live();
        if live.get(&self.id).is_some_and(|s| s.same_channel(&self.sender)) {
            live.remove(&self.id);
        }
        drop(live);
        self.feeds.running.send_modify(|n| *n -= 1);
    }
}

/// Broadcasts a game's events from the one after `loaded` on, each once and
/// in order, until the game ends, the last watcher leaves or the server
/// stops.
async fn run(running: Running, mut loaded: Loaded, mut events: EventReceiver) {
    let mut stopping = running.feeds.stopping.clone();
    let sender = &running.sender;
    while !loaded.game.is_finished() {
        let next = tokio::select! {
            biased;
            _ = stopping.changed() => return,
            () = sender.closed() => return,
            next = events.recv() => next,
        };
        let fresh = match next {
            Ok(event) if event.seq <= loaded.version => continue,
            Ok(event) if event.seq == loaded.version + 1 => vec![event],
            // A gap: `loaded` was behind the store when the feed started,
            // or this task lagged. The store has what is missing.
            Ok(_) | Err(RecvError::Lagged(_)) => match read(&running, loaded.version + 1).await {
                Ok(fresh) => fresh,
                Err(error) => return fail(sender, error),
            },
            Err(RecvError::Closed) => return,
        };
        for event in fresh {
            match update(&mut loaded, &event) {
                Ok(update) => {
                    // An error only means that nobody listens right now.
                    let _ = sender.send(Ok(Arc::new(update)));
                }
                Err(error) => return fail(sender, error),
            }
        }
    }
}

/// Reads a game's events from `from` on.
async fn read(running: &Running, from: u64) -> Result<Vec<Arc<StoredEvent>>, ApiError> {
    let (store, id) = (running.feeds.store.clone(), running.id.clone());
    let read = tokio::task::spawn_blocking(move || store.read_game(&id, from))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(read.map_err(store_error)?.into_iter().map(Arc::new).collect())
}

/// Tells the watchers why the feed stops.
fn fail(sender: &broadcast::Sender<Step>, error: ApiError) {
    tracing::error!(?error, "the game's live feed stops");
    let _ = sender.send(Err(Arc::new(error)));
}

#[cfg(test)]
mod tests {
    use carcassonne_engine::{Rules, Seed, Setup};
    use carcassonne_store::{Durability, MemoryStore, RequestId, SledStore, StoreConfig};

    use super::*;
    use crate::games::{Games, NewGame};

    struct Table {
        games: Arc<Games>,
        feeds: Arc<Feeds>,
        id: GameId,
        tokens: Vec<String>,
        /// Keeps `stopping` open.
        _stop: watch::Sender<bool>,
    }

    fn table(store: Arc<dyn EventStore>) -> Table {
        let games = Arc::new(Games::new(store.clone(), 16));
        let (stop, stopping) = watch::channel(false);
        let id = GameId::new("fed").unwrap();
        let setup = Setup {
            rules: Rules::default(),
            players: vec!["A".to_owned(), "B".to_owned()],
            tiles: None,
            seed: Some(Seed::from_u64(7)),
            time_control: None,
        };
        let new = NewGame::guests(setup, 0);
        let created = games.create(&id, &RequestId::new("c").unwrap(), new).unwrap();
        Table {
            feeds: Feeds::new(store, 1024, stopping),
            games,
            id,
            tokens: created.tokens.into_iter().flatten().collect(),
            _stop: stop,
        }
    }

    impl Table {
        /// Takes `actions` actions (the first legal one each time) or
        /// fewer if the game ends; returns the version after them.
        async fn play(&self, actions: usize) -> u64 {
            for _ in 0..actions {
                let loaded = self.games.load(&self.id).unwrap();
                let Some(seat) = loaded.game.pending().player() else {
                    break;
                };
                let command = loaded.game.legal_commands()[0];
                let request = RequestId::new(format!("r{}", loaded.version)).unwrap();
                let token = &self.tokens[usize::from(seat.0)];
                let acting = self
                    .games
                    .act(&self.id, token, loaded.version, &request, &command)
                    .unwrap();
                let crate::games::Acting::InFlight(written) = acting else {
                    panic!("a new request id is not a retry");
                };
                self.games.settle(written).await.unwrap();
            }
            self.games.load(&self.id).unwrap().version
        }

        fn join(&self) -> Subscription {
            self.feeds.join(&self.id, &self.games.load(&self.id).unwrap())
        }
    }

    /// The versions a subscription receives up to and including `last`.
    async fn receive(live: &mut Subscription, last: u64) -> Vec<u64> {
        let mut seen = Vec::new();
        while seen.last() != Some(&last) {
            match live.recv().await {
                Received::Step(Ok(update)) => seen.push(update.seq),
                other => panic!("{other:?} after {seen:?}"),
            }
        }
        seen
    }

    #[tokio::test]
    async fn every_watcher_gets_each_event_once_and_the_feed_ends_when_the_last_leaves() {
        let table = table(Arc::new(MemoryStore::default()));
        let start = table.play(0).await;
        let (mut a, mut b) = (table.join(), table.join());
        assert_eq!(table.feeds.watched(), 1, "one feed for the game");
        let head = table.play(5).await;
        let expected: Vec<u64> = (start + 1..=head).collect();
        assert_eq!(receive(&mut a, head).await, expected);
        assert_eq!(receive(&mut b, head).await, expected);
        drop(a);
        assert_eq!(table.feeds.watched(), 1, "b still watches");
        let later = table.play(3).await;
        assert_eq!(
            receive(&mut b, later).await,
            (head + 1..=later).collect::<Vec<_>>()
        );
        drop(b);
        assert_eq!(table.feeds.watched(), 0, "gone with its last watcher");
        let mut running = table.feeds.running();
        running.wait_for(|n| *n == 0).await.unwrap();
        // The next watcher starts another feed.
        let mut c = table.join();
        assert_eq!(table.feeds.watched(), 1);
        let last = table.play(2).await;
        assert_eq!(
            receive(&mut c, last).await,
            (later + 1..=last).collect::<Vec<_>>()
        );
    }

    /// On one thread, the feed's task runs only when the test awaits.
    #[tokio::test(flavor = "current_thread")]
    async fn a_feed_started_behind_the_store_or_lagging_reads_what_it_missed() {
        let dir = tempfile::tempdir().unwrap();
        // The store's broadcast holds 2 events: the feed lags behind it
        // when more come before it runs.
        let config = StoreConfig {
            durability: Durability::None,
            subscription_capacity: 2,
            ..StoreConfig::default()
        };
        let table = table(Arc::new(SledStore::open(dir.path(), config).unwrap()));
        // Started from the creation while the store is further.
        let behind = table.games.history(&table.id, Some(2)).unwrap().0;
        let head = table.play(4).await;
        let mut live = table.feeds.join(&table.id, &behind);
        let last = table.play(1).await;
        assert!(last > head);
        assert_eq!(receive(&mut live, last).await, (3..=last).collect::<Vec<_>>());
        // Lagging: many events before it runs again.
        let later = table.play(8).await;
        assert!(later - last > 2);
        assert_eq!(
            receive(&mut live, later).await,
            (last + 1..=later).collect::<Vec<_>>()
        );
    }

    #[tokio::test]
    async fn a_feed_ends_with_its_game_and_its_watchers_see_the_end() {
        let table = table(Arc::new(MemoryStore::default()));
        let mut live = table.join();
        let last = table.play(usize::MAX).await;
        let mut seen = Vec::new();
        let end = loop {
            match live.recv().await {
                Received::Step(Ok(update)) => {
                    seen.push(update.seq);
                    assert_eq!(update.finished, update.seq == last);
                }
                end => break end,
            }
        };
        assert_eq!(seen.last(), Some(&last));
        assert!(
            matches!(end, Received::Closed),
            "the feed ended after the last event, not {end:?}"
        );
        assert_eq!(table.feeds.watched(), 0);
        table.feeds.running().wait_for(|n| *n == 0).await.unwrap();
    }
}
