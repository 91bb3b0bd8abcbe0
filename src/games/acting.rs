//! Acting on a game: an action decided on the cached state at the
//! server's time, written with the version it was decided on and that very
//! time, and answered once durable; the server's own commands (a timeout,
//! a resumption) take the same way. Once an action is written, its
//! settling (the wait for the disk, the new state put in the cache, its
//! deadline told to the timekeeper) runs to its end, as a task of its own
//! if the caller has given up ([`Settling`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use carcassonne_engine::{Actor, Command, Effect, Event, Game, PlayError, Seat};
use carcassonne_store::{GameId, RequestId, StoreError, StoredEvent, Written};

use super::cache::Cache;
use super::stored::{Loaded, engine_event, new_event};
use super::{Games, Listeners, Outcome, auth, store_error};

/// How often a server-made action is decided again when another action
/// reached the disk first (5 ms apart): a group commit takes far less.
const STALE_RETRIES: u32 = 200;
use crate::api::status::ApiError;
use crate::api::version;

/// What an action returns: the events it produced and the game after them.
#[derive(Debug)]
pub struct Acted {
    pub outcomes: Vec<Outcome>,
    pub loaded: Arc<Loaded>,
}

/// An action decided and written, not yet durable (see [`Games::act`]).
pub enum Acting {
    /// A request id this game met before: once its first append is durable,
    /// answer with [`Games::answer`], which also tells an identical retry
    /// from another request with the same id.
    Retried { first: Written, asked: Asked },
    /// A new action: answer it with [`Games::settle`].
    InFlight(Box<ActInFlight>),
    /// The action came at or after its seat's deadline: refused with
    /// `error` once `timeout`, stored instead, is durable (T-5).
    Late {
        timeout: Box<ActInFlight>,
        error: ApiError,
    },
}

/// What the timekeeper's call at a deadline did ([`Games::time_out`]).
pub enum TimeoutOutcome {
    /// The timeout is written; settle it.
    Stored(Box<ActInFlight>),
    /// The server's clock has not reached the deadline yet (the timer woke
    /// early): wait until then.
    NotDue(u64),
    /// The game moved on (or its clock stopped): the new version brings
    /// its own deadline.
    Moved,
}

/// Events decided at a time, ready to write.
struct Decided<'a> {
    request_id: &'a RequestId,
    /// When they were decided, and are stored.
    at: u64,
    /// The seat that acted; `None` for the server's own commands.
    seat: Option<Seat>,
    events: Vec<Event>,
}

/// Who decided a write and when, for its settling.
struct Origin {
    at: u64,
    seat: Option<Seat>,
    /// A seat's request, to answer a retry of it; `None` for the server's.
    asked: Option<Asked>,
}

/// A request id of the server's own, for a command decided on version
/// `seq`: `~timeout/57`. Clients may not begin theirs with `~`
/// (`api::parse::request_id`), so the two never meet.
fn server_request(kind: &str, seq: u64) -> Result<RequestId, ApiError> {
    RequestId::new(format!("{SERVER_REQUEST_PREFIX}{kind}/{seq}"))
        .map_err(|e| ApiError::Internal(format!("a server request id: {e}")))
}

/// The first character of the server's own request ids.
pub const SERVER_REQUEST_PREFIX: char = '~';

/// The kind of the server's request ids for withdrawals' resignations.
const WITHDRAWAL: &str = "withdrawn";

/// The request id of the resignation the server makes for `seat` when its
/// player withdraws from a tournament: `~withdrawn/1`.
fn withdrawal_request(seat: Seat) -> Result<RequestId, ApiError> {
    server_request(WITHDRAWAL, u64::from(seat.0))
}

/// The seat whose resignation the server made for a tournament withdrawal,
/// if `request_id` is such a resignation's (`~withdrawn/1`): what the
/// audit of a tournament ties to the log's withdrawals.
pub fn withdrawal_seat(request_id: &str) -> Option<Seat> {
    let seat = request_id
        .strip_prefix(SERVER_REQUEST_PREFIX)?
        .strip_prefix(WITHDRAWAL)?
        .strip_prefix('/')?;
    // Only as `withdrawal_request` writes it: no sign, no leading zero.
    let number: u8 = seat.parse().ok()?;
    (number.to_string() == seat).then_some(Seat(number))
}

/// The runtime a settling finishes on if its caller goes away.
fn runtime() -> Result<tokio::runtime::Handle, ApiError> {
    tokio::runtime::Handle::try_current()
        .map_err(|e| ApiError::Internal(format!("acting outside a tokio runtime: {e}")))
}

/// What a seat asked for, to tell an identical retry from another request
/// that reuses its request id.
#[derive(Debug, Clone)]
pub struct Asked {
    pub request_id: RequestId,
    pub seat: Seat,
    /// The version the seat acted on.
    pub expected_version: u64,
    pub command: Command,
}

/// A new action on its way to the disk. Dropping it changes nothing: what
/// is left of its settling (the wait for the disk, the cache update) then
/// runs to its end as a task of its own.
pub struct ActInFlight {
    settling: Settling,
}

impl std::fmt::Debug for ActInFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ActInFlight")
    }
}

impl ActInFlight {
    /// The server's command that another writer stored first: settles once
    /// that append is durable.
    fn stored_elsewhere(first: Written, runtime: tokio::runtime::Handle) -> ActInFlight {
        let future = async move {
            first.acknowledged().await.map_err(store_error)?;
            Ok(Settled::Duplicate)
        };
        ActInFlight {
            settling: Settling {
                future: Some(Box::pin(future)),
                runtime,
            },
        }
    }
}

type SettleFuture = Pin<Box<dyn Future<Output = Result<Settled, ApiError>> + Send>>;

/// [`settle`], polled by its caller while there is one (no task, no
/// handoff between threads on the way of every action), and spawned to
/// finish on its own when the caller goes away first, so that the cached
/// state follows the store whatever happens to the caller.
struct Settling {
    future: Option<SettleFuture>,
    runtime: tokio::runtime::Handle,
}

impl Future for Settling {
    type Output = Result<Settled, ApiError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(future) = self.future.as_mut() else {
            return Poll::Ready(Err(ApiError::Internal("an action settled twice".to_owned())));
        };
        let done = future.as_mut().poll(cx);
        if done.is_ready() {
            self.future = None;
        }
        done
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        if let Some(future) = self.future.take() {
            // The caller gave up: finish without it.
            drop(self.runtime.spawn(future));
        }
    }
}

/// What [`Games::settle`] found.
#[derive(Debug)]
pub enum Settled {
    /// The action is durable: its answer.
    Acted(Acted),
    /// Another call with the same request id stored its append first:
    /// answer with [`Games::answer`] for these versions.
    Retried { first: u64, last: u64, asked: Asked },
    /// A command of the server's own (a timeout, a resumption) that was
    /// stored once already: nothing to answer.
    Duplicate,
}

impl Games {
    /// One action of the seat holding `token`: decided on the cached game
    /// and written to the store. A new action is answered by
    /// [`Games::settle`] once durable, a retried request by
    /// [`Games::answer`] once the first one is.
    pub fn act(
        &self,
        id: &GameId,
        token: &str,
        expected_version: u64,
        request_id: &RequestId,
        command: &Command,
    ) -> Result<Acting, ApiError> {
        let loaded = self.load(id)?;
        self.act_on(loaded, id, token, expected_version, request_id, command)
    }

    /// The game if it is in the cache: acting on it reads nothing from the
    /// disk.
    pub fn cached(&self, id: &GameId) -> Option<Arc<Loaded>> {
        self.cache.get(id)
    }

    /// [`Games::act`] on the game as loaded. The action is decided at the
    /// server's time (never earlier than the game's last event) and stored
    /// with that very time, so that what was decided about its deadline
    /// is what an audit of the stored events finds (T-4). An action that
    /// comes at or after its seat's deadline is refused, and the timeout
    /// is stored instead ([`Acting::Late`]).
    pub fn act_on(
        &self,
        loaded: Arc<Loaded>,
        id: &GameId,
        token: &str,
        expected_version: u64,
        request_id: &RequestId,
        command: &Command,
    ) -> Result<Acting, ApiError> {
        let seat = Seat(auth::seat_of(token, &loaded.opened.token_hashes).ok_or(ApiError::BadToken)?);
        self.act_as(loaded, id, seat, expected_version, request_id, command)
    }

    /// [`Games::act_on`] for `seat`, whoever asks: the server for a bot's
    /// seat ([`super::bot_seats`]), once a token has named the seat for a
    /// client. The same checks, the same events, the same answers.
    pub fn act_as(
        &self,
        loaded: Arc<Loaded>,
        id: &GameId,
        seat: Seat,
        expected_version: u64,
        request_id: &RequestId,
        command: &Command,
    ) -> Result<Acting, ApiError> {
        let asked = Asked {
            request_id: request_id.clone(),
            seat,
            expected_version,
            command: *command,
        };
        // A settling whose caller goes away finishes as a task, which needs
        // a runtime: checked before anything is written.
        let runtime = runtime()?;
        let _deciding = self.deciding(id);
        if let Some(first) = self.store.find_request(id, request_id).map_err(store_error)? {
            return Ok(Acting::Retried { first, asked });
        }
        // The creation's request id is a request of the game too (stored
        // as its hash, so the store did not find it).
        if loaded.created_by(request_id) {
            return Err(ApiError::RequestIdReused(request_id.as_str().to_owned()));
        }
        // A client may act on a version it was sent before the cache has it.
        let loaded = if expected_version > loaded.version {
            self.load(id)?
        } else {
            loaded
        };
        if expected_version != loaded.version {
            return Err(self.stale(id, seat, expected_version, loaded.version));
        }
        let at = self.now(&loaded.game);
        match loaded.game.decide_at(at, Actor::Seat(seat), command) {
            Ok(events) => {
                let written = Decided {
                    request_id,
                    at,
                    seat: Some(seat),
                    events,
                };
                let settling = self.write_decided(&loaded, id, written, Some(asked), runtime)?;
                Ok(Acting::InFlight(Box::new(settling)))
            }
            // T-5: past the deadline, the timeout is stored instead.
            Err(late @ PlayError::OutOfTime { .. }) => {
                let error = ApiError::from_play(late);
                let timeout = self.store_timeout(&loaded, id, at, runtime)?;
                Ok(Acting::Late { timeout, error })
            }
            Err(error) => Err(ApiError::from_play(error)),
        }
    }

    /// The time a command on `game` is decided and stored at: the server's
    /// clock, but never before the game's last event (T-2: time never goes
    /// back, even when the system clock does).
    fn now(&self, game: &Game) -> u64 {
        self.store.now_millis().max(game.time())
    }

    /// Why an action on a stale version fails: the seat's own timeout
    /// since that version (OUT_OF_TIME), or else the stale version.
    fn stale(&self, id: &GameId, seat: Seat, expected: u64, actual: u64) -> ApiError {
        let stale = ApiError::StaleVersion {
            expected: version::of_seq(expected),
            actual: version::of_seq(actual),
        };
        if expected > actual {
            return stale;
        }
        let Ok(since) = self.store.read_game(id, expected + 1) else {
            return stale;
        };
        let Some(timeout) = since
            .iter()
            .find(|e| engine_event(e).is_ok_and(|event| event == Event::TimedOut(seat)))
        else {
            return stale;
        };
        // The deadline it missed: the one pending just before its timeout.
        match self.fold_uncached(id, Some(timeout.seq - 1), |_, _, _| {}) {
            Ok(before) => ApiError::OutOfTime {
                seat: u32::from(seat.0),
                deadline_ms: before.game.deadline().unwrap_or(timeout.time_millis),
            },
            Err(_) => stale,
        }
    }

    /// Writes the timeout of the decision pending in `loaded` at `at`
    /// (T-5), under the deciding lock the caller holds. Its request id is
    /// the version it times out, so that two attempts (the timekeeper's and
    /// a late action's, or two servers') store it once.
    fn store_timeout(
        &self,
        loaded: &Loaded,
        id: &GameId,
        at: u64,
        runtime: tokio::runtime::Handle,
    ) -> Result<Box<ActInFlight>, ApiError> {
        let request_id = server_request("timeout", loaded.version)?;
        if let Some(first) = self.store.find_request(id, &request_id).map_err(store_error)? {
            return Ok(Box::new(ActInFlight::stored_elsewhere(first, runtime)));
        }
        let events = loaded
            .game
            .decide_at(at, carcassonne_engine::Actor::Dealer, &Command::TimeOut)
            .map_err(|e| ApiError::Internal(format!("a due timeout was refused: {e}")))?;
        let decided = Decided {
            request_id: &request_id,
            at,
            seat: None,
            events,
        };
        Ok(Box::new(self.write_decided(loaded, id, decided, None, runtime)?))
    }

    /// The timekeeper's call at a deadline it was told of: times out the
    /// decision pending at `seq`, if the game is still there and the
    /// deadline has come by the server's clock.
    pub fn time_out(&self, id: &GameId, seq: u64) -> Result<TimeoutOutcome, ApiError> {
        let loaded = self.load(id)?;
        if loaded.version != seq {
            // The version that moved it on arms its own deadline as it is
            // settled or followed; armed here too, as arming twice is
            // harmless and this load may have cached that version first.
            self.arm(id, &loaded);
            return Ok(TimeoutOutcome::Moved);
        }
        let runtime = runtime()?;
        let _deciding = self.deciding(id);
        let Some(deadline) = loaded.game.deadline() else {
            return Ok(TimeoutOutcome::Moved);
        };
        let at = self.now(&loaded.game);
        if at < deadline {
            return Ok(TimeoutOutcome::NotDue(deadline));
        }
        Ok(TimeoutOutcome::Stored(
            self.store_timeout(&loaded, id, at, runtime)?,
        ))
    }

    /// T-10: stores that the server was down from `down_since` (when it
    /// was last known alive) on a running game with a time control, so
    /// that its clocks resume with the time they had. `None` for a game
    /// without a running clock.
    pub fn resume(&self, id: &GameId, down_since: u64) -> Result<Option<Box<ActInFlight>>, ApiError> {
        let loaded = self.load(id)?;
        if loaded.game.is_finished() || loaded.game.setup().time_control.is_none() {
            return Ok(None);
        }
        let runtime = runtime()?;
        let _deciding = self.deciding(id);
        let at = self.now(&loaded.game);
        let command = Command::Resume {
            down_since_ms: down_since.clamp(loaded.game.time(), at),
        };
        let events = loaded
            .game
            .decide_at(at, carcassonne_engine::Actor::Dealer, &command)
            .map_err(|e| ApiError::Internal(format!("a resumption was refused: {e}")))?;
        let request_id = server_request("resume", loaded.version)?;
        let decided = Decided {
            request_id: &request_id,
            at,
            seat: None,
            events,
        };
        Ok(Some(Box::new(
            self.write_decided(&loaded, id, decided, None, runtime)?,
        )))
    }

    /// Resigns `seat` on its player's behalf (T-8): what withdrawing from
    /// a tournament does to the player's running games. `None` when there
    /// is nothing to do (the game is over, or the seat is out already).
    /// Its request id names the seat, so that it is stored once.
    pub fn resign_for(&self, id: &GameId, seat: Seat) -> Result<Option<Box<ActInFlight>>, ApiError> {
        // Another seat's action may be on its way to the disk: it changes
        // the version this one is decided on, so decide again once it is.
        let mut attempts = 0;
        loop {
            match self.try_resign_for(id, seat) {
                Err(ApiError::StaleVersion { .. }) if attempts < STALE_RETRIES => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                outcome => return outcome,
            }
        }
    }

    fn try_resign_for(&self, id: &GameId, seat: Seat) -> Result<Option<Box<ActInFlight>>, ApiError> {
        let runtime = runtime()?;
        let _deciding = self.deciding(id);
        let loaded = self.load(id)?;
        if loaded.game.is_finished() || loaded.game.out_reason(seat).is_some() {
            return Ok(None);
        }
        let request_id = withdrawal_request(seat)?;
        if self
            .store
            .find_request(id, &request_id)
            .map_err(store_error)?
            .is_some()
        {
            return Ok(None);
        }
        let at = self.now(&loaded.game);
        let events = match loaded.game.decide_at(at, Actor::Seat(seat), &Command::Resign) {
            Ok(events) => events,
            // Past the deadline the timeout comes first; it ends the seat too.
            Err(PlayError::OutOfTime { .. }) => {
                return Ok(Some(self.store_timeout(&loaded, id, at, runtime)?));
            }
            Err(error) => return Err(ApiError::Internal(format!("a withdrawal was refused: {error}"))),
        };
        let decided = Decided {
            request_id: &request_id,
            at,
            seat: Some(seat),
            events,
        };
        Ok(Some(Box::new(
            self.write_decided(&loaded, id, decided, None, runtime)?,
        )))
    }

    /// Applies decided events (and the draws that follow them) to a copy of
    /// the game, and writes them with the version they were decided on and
    /// the time they were decided at. The settling that is returned makes
    /// the new state the cached one once the store acknowledges it.
    fn write_decided(
        &self,
        loaded: &Loaded,
        id: &GameId,
        decided: Decided<'_>,
        asked: Option<Asked>,
        runtime: tokio::runtime::Handle,
    ) -> Result<ActInFlight, ApiError> {
        let Decided {
            request_id,
            at,
            seat,
            mut events,
        } = decided;
        let mut game = loaded.game.clone();
        // Apply, with the draws that follow, keeping each event's effects.
        let mut effects: Vec<Vec<Effect>> = Vec::new();
        for event in &events {
            let mut fx = Vec::new();
            game.apply_at(event, at, &mut fx);
            effects.push(fx);
        }
        while let Some(event) = game.automatic() {
            let mut fx = Vec::new();
            game.apply_at(&event, at, &mut fx);
            effects.push(fx);
            events.push(event);
        }
        let batch: Vec<_> = events
            .iter()
            .map(|e| new_event(seat.and_then(|s| actor_of(e, s)), e))
            .collect();
        let written = self
            .store
            .write_at(id, loaded.version, request_id, at, &batch)
            .map_err(|e| match e {
                StoreError::Conflict { actual, .. } => ApiError::StaleVersion {
                    expected: version::of_seq(loaded.version),
                    actual: version::of_seq(actual),
                },
                other => store_error(other),
            })?;
        // Not `..(*loaded).clone()`: that would clone the game once more.
        let next = Loaded {
            info: loaded.info.clone(),
            opened: loaded.opened.clone(),
            game,
            version: loaded.version,
            creation_request: loaded.creation_request.clone(),
        };
        let settling = Settling {
            future: Some(Box::pin(settle(
                self.cache.clone(),
                self.listeners(),
                id.clone(),
                written,
                Origin { at, seat, asked },
                events.into_iter().zip(effects).collect(),
                next,
            ))),
            runtime,
        };
        Ok(ActInFlight { settling })
    }

    /// Waits until a written action is durable and answers it; the cache
    /// holds the new state by then. Holds no thread while the disk syncs.
    pub async fn settle(&self, act: Box<ActInFlight>) -> Result<Settled, ApiError> {
        act.settling.await
    }

    /// Rebuilds the answer of an earlier action (the append of versions
    /// `first..=last`) from the store, for an identical retry of its
    /// request; any other request that carries its request id is refused.
    pub fn answer(&self, id: &GameId, first: u64, last: u64, asked: &Asked) -> Result<Acted, ApiError> {
        let stored = self.store.read_game(id, 1).map_err(store_error)?;
        let [opening, creation, rest @ ..] = stored.as_slice() else {
            return Err(ApiError::Corrupt(format!("games/{id} has fewer than two events")));
        };
        let mut loaded = Loaded::start(opening, creation).map_err(ApiError::Corrupt)?;
        let mut identical = false;
        let mut outcomes = Vec::new();
        for event in rest.iter().take_while(|e| e.seq <= last) {
            if event.seq == first {
                identical = asks_for(&loaded, event, asked).map_err(ApiError::Corrupt)?;
                if !identical {
                    break;
                }
            }
            let (engine_event, effects) = loaded.advance(event).map_err(ApiError::Corrupt)?;
            if event.seq >= first {
                outcomes.push(Outcome::of(event, engine_event, effects));
            }
        }
        // Also the creation's request id: its append starts with the
        // server's opening (version 1), never a seat's action.
        if !identical {
            return Err(ApiError::RequestIdReused(asked.request_id.as_str().to_owned()));
        }
        // The first call's task may not have cached its state yet, and a
        // caller that acts next on this answer's version must find it: when
        // it is the game's last durable version, it is what `load` would
        // cache (the cache keeps a newer one if it has it).
        let loaded = Arc::new(loaded);
        if stored.last().map(|e| e.seq) == Some(last) {
            self.cache.put(id, loaded.clone());
        }
        Ok(Acted { outcomes, loaded })
    }
}

/// Whether `asked`, decided on `before`, is the request that stored
/// `stored` (the first event of its append): the same seat, at the same
/// version, deciding the same event (an action may name a follower's place
/// in several ways that the engine stores as one).
fn asks_for(before: &Loaded, stored: &StoredEvent, asked: &Asked) -> Result<bool, String> {
    if stored.actor != carcassonne_store::Actor::Seat(asked.seat.0)
        || before.version != asked.expected_version
    {
        return Ok(false);
    }
    let event = engine_event(stored)?;
    Ok(before
        .game
        .decide(Actor::Seat(asked.seat), &asked.command)
        .is_ok_and(|events| events.first() == Some(&event)))
}

/// Waits until a written action is durable, then makes its state the cached
/// one, tells the timekeeper its deadline, and builds its answer. Polled by
/// the caller, or to its end as a task of its own once the caller is gone
/// ([`Settling`]), so that the cache follows the store whatever happens to
/// the caller.
async fn settle(
    cache: Arc<Cache>,
    listeners: Listeners,
    id: GameId,
    written: Written,
    origin: Origin,
    events: Vec<(Event, Vec<Effect>)>,
    mut next: Loaded,
) -> Result<Settled, ApiError> {
    let decided_on = next.version;
    let appended = written.acknowledged().await.map_err(store_error)?;
    if appended.first_seq != decided_on + 1 || appended.time_millis != origin.at {
        // Another call with this request id got there first (a request id
        // is checked before the write under a lock, so not from this
        // process).
        return Ok(match origin.asked {
            Some(asked) => Settled::Retried {
                first: appended.first_seq,
                last: appended.last_seq,
                asked,
            },
            None => Settled::Duplicate,
        });
    }
    // What was stored is what was decided: numbered from the append's first
    // sequence number, all at the append's time.
    let outcomes = events
        .into_iter()
        .zip(appended.first_seq..)
        .map(|((event, effects), seq)| Outcome {
            seq,
            time_millis: appended.time_millis,
            actor: origin.seat.and_then(|seat| actor_of(&event, seat)),
            event,
            effects,
        })
        .collect();
    next.version = appended.last_seq;
    let next = Arc::new(next);
    cache.put(&id, next.clone());
    listeners.tell(&id, &next);
    Ok(Settled::Acted(Acted {
        outcomes,
        loaded: next,
    }))
}

/// Who an event of a seat's action is by: the seat, but the server for
/// the draws that follow it.
fn actor_of(event: &Event, seat: Seat) -> Option<Seat> {
    (!matches!(event, Event::Drawn(_))).then_some(seat)
}
