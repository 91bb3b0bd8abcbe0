//! The storage trait every backend implements, and the bounds and page
//! tokens they share.

use crate::error::{Result, StoreError};
use crate::event::{Appended, GamePage, GameSummary, NewEvent, StoredEvent, VerifyReport};
use crate::hub::EventReceiver;
use crate::ids::{GameId, RequestId};
use crate::written::Written;

/// The page size used when a listing asks for 0.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// The largest page of a listing; larger requests get this many.
pub const MAX_PAGE_SIZE: usize = 1000;
/// The most events one global read returns; larger limits get this many.
pub const MAX_READ_LIMIT: usize = 10_000;

/// An append-only store of per-game event streams.
///
/// Synchronous, except for the wait for durability: [`EventStore::write`]
/// returns once an append is written, with a [`Written`] that an async
/// task awaits without holding a thread while the disk syncs. Reads may
/// touch the disk: the gRPC server runs them on `spawn_blocking`.
/// Object-safe, so the server holds an `Arc<dyn EventStore>` and a
/// distributed backend can replace the embedded one.
///
/// Only durable events are ever visible: reads, listings and subscriptions
/// show an event once its append has been acknowledged (or is about to be),
/// never one a crash could still take back.
pub trait EventStore: Send + Sync {
    /// Appends `events` to `game`, all or none, stamped with `time_millis`
    /// (milliseconds since the Unix epoch), if the game's last sequence
    /// number is still `expected_seq` (0 for a new game); otherwise fails
    /// with [`StoreError::Conflict`] and writes nothing. Returns once the
    /// events are written; they are acknowledged once [`Written`] says they
    /// are durable. If `request_id` is not empty and an earlier append to
    /// this game carried it, returns that append (acknowledged once it is
    /// durable) and writes nothing, whatever `expected_seq`, the time and
    /// `events` say.
    ///
    /// The time is the caller's: a server that decides by time (a
    /// deadline) stores the very time it decided at. The store checks
    /// nothing about it.
    fn write_at(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        time_millis: u64,
        events: &[NewEvent],
    ) -> Result<Written>;

    /// The time of the store's clock ([`crate::StoreConfig::clock`]), in
    /// milliseconds since the Unix epoch: what [`EventStore::write`]
    /// stamps.
    fn now_millis(&self) -> u64;

    /// [`EventStore::write_at`] the store's clock's time.
    fn write(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        events: &[NewEvent],
    ) -> Result<Written> {
        self.write_at(game, expected_seq, request_id, self.now_millis(), events)
    }

    /// [`EventStore::write`], then blocks until the events are durable.
    fn append(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        events: &[NewEvent],
    ) -> Result<Appended> {
        self.write(game, expected_seq, request_id, events)?.wait()
    }

    /// The earlier append to `game` that carried `request_id`, acknowledged
    /// once it is durable; `None` if no append did (or the id is empty).
    /// Lets a server answer a retried request before checking anything
    /// else about it.
    fn find_request(&self, game: &GameId, request_id: &RequestId) -> Result<Option<Written>>;

    /// The game's events from sequence number `from_seq` on (0 or 1: all),
    /// checked. [`StoreError::NotFound`] if the game has no events.
    fn read_game(&self, game: &GameId, from_seq: u64) -> Result<Vec<StoredEvent>>;

    /// At most `limit` of the game's events from `from_seq` on: what
    /// [`read_game`](Self::read_game) gives, cut short without reading the
    /// rest, for a reader that goes a chunk at a time (a replay).
    fn read_game_chunk(&self, game: &GameId, from_seq: u64, limit: usize) -> Result<Vec<StoredEvent>>;

    /// Up to `limit` events (at most [`MAX_READ_LIMIT`]) of all games, from
    /// global position `from_position` on, in position order.
    fn read_all(&self, from_position: u64, limit: usize) -> Result<Vec<StoredEvent>>;

    /// The game's last sequence number and creation time, if it exists.
    fn game(&self, game: &GameId) -> Result<Option<GameSummary>>;

    /// Games in id order, `page_size` at a time (0: [`DEFAULT_PAGE_SIZE`],
    /// at most [`MAX_PAGE_SIZE`]). `page_token` is `None` for the first page
    /// and the previous page's `next_page_token` after that.
    fn list_games(&self, page_token: Option<&str>, page_size: usize) -> Result<GamePage>;

    /// The global position of the last durable event (0 when empty).
    fn last_position(&self) -> u64;

    /// New events of one game, as they become durable. To follow a game
    /// without a gap: subscribe, then read from the version you have, then
    /// skip received events whose `seq` you already read.
    fn subscribe_game(&self, game: &GameId) -> EventReceiver;

    /// New events of every game, in global position order.
    fn subscribe_all(&self) -> EventReceiver;

    /// Checks every envelope of a game and the links between them.
    fn verify_game(&self, game: &GameId) -> Result<VerifyReport>;

    /// Checks every game and the global index. Damage is listed in the
    /// report (the first bad event of each game); an `Err` means the check
    /// itself could not run.
    fn verify_all(&self) -> Result<VerifyReport>;

    /// Why the store cannot take appends now, if it cannot: a full disk, a
    /// failed write that stopped it. Reads may still work. For health
    /// checks; an append says the same in its error.
    fn storage_problem(&self) -> Option<String> {
        None
    }
}

pub(crate) fn clamp_page_size(page_size: usize) -> usize {
    match page_size {
        0 => DEFAULT_PAGE_SIZE,
        size => size.min(MAX_PAGE_SIZE),
    }
}

const PAGE_TOKEN_PREFIX: &str = "g1.";

/// The token that continues a listing after `game` (which need not be
/// stored): how a caller lists from some id on. Opaque otherwise; a
/// version prefix lets the encoding change later.
pub fn page_token_after(game: &GameId) -> String {
    let mut token = String::from(PAGE_TOKEN_PREFIX);
    for byte in game.as_str().bytes() {
        token.push_str(&format!("{byte:02x}"));
    }
    token
}

/// Every stream whose id starts with `prefix`, in id order, each as the
/// rest of its id after the prefix and its summary: how the server finds
/// the streams of one kind (`@tournament/…`, `@challenge/…`) without
/// reading the games listed before or after them.
pub fn streams_with_prefix(store: &dyn EventStore, prefix: &str) -> Result<Vec<(String, GameSummary)>> {
    let start = GameId::new(prefix)?;
    let mut token = Some(page_token_after(&start));
    let mut streams = Vec::new();
    while let Some(after) = token.take() {
        let page = store.list_games(Some(&after), 0)?;
        for summary in page.games {
            let Some(rest) = summary.game.as_str().strip_prefix(prefix) else {
                return Ok(streams);
            };
            streams.push((rest.to_owned(), summary));
        }
        token = page.next_page_token;
    }
    Ok(streams)
}

/// The game a page token continues after.
pub(crate) fn parse_page_token(token: &str) -> Result<GameId> {
    let bad = || StoreError::InvalidArgument(format!("malformed page token {token:?}"));
    let hex = token.strip_prefix(PAGE_TOKEN_PREFIX).ok_or_else(bad)?;
    if hex.len() % 2 != 0 || !hex.is_ascii() {
        return Err(bad());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).map_err(|_| bad()))
        .collect::<Result<Vec<u8>>>()?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    GameId::new(text).map_err(|_| bad())
}
