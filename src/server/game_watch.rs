//! One watcher's stream of a game: a snapshot at the version it starts
//! from, the events since (its catch-up, folded from the store), then the
//! game's live feed, each event once and never past what the audience may see.
//!
//! The stream is polled by the connection that carries it, with no task of
//! its own: an event costs a watcher one clone of a message the feed built.
//! A client that does not read stops the polling, so it lags in the feed's
//! broadcast, which never waits for it, and is told it fell behind.

use std::collections::VecDeque;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use carcassonne_store::StoredEvent;
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tonic::Status;

use super::audience::Audience;
use super::feed::{self, Received, Subscription, Update};
use crate::api::status::ApiError;
use crate::api::{version, view};
use crate::games::SeedReveal;
use crate::games::stored::Loaded;
use crate::proto::{self, watch_game_response as wg};

/// What a watcher starts with, from the game's stored events.
pub struct CatchUp {
    snapshot: proto::Game,
    /// The events after the snapshot's version, up to `head`.
    updates: VecDeque<Arc<Update>>,
    /// The snapshot's version.
    start: u64,
    head: u64,
    finished: bool,
    delay: u32,
}

/// Folds a game's `stored` events for an audience that starts from version
/// `from` (0: as far as it may see now); `reveal` says whether the seed
/// shows at the end.
pub fn catch_up(
    stored: &[StoredEvent],
    from: u64,
    audience: Audience,
    reveal: SeedReveal,
) -> Result<CatchUp, ApiError> {
    let [first, second, rest @ ..] = stored else {
        return Err(ApiError::Corrupt("fewer than two events".to_owned()));
    };
    let mut loaded = Loaded::start(first, second).map_err(ApiError::Corrupt)?;
    let delay = loaded.info.spectator_delay;
    let head = rest.last().map_or(second.seq, |e| e.seq);
    // Where the snapshot is: at `from`, or as far as the audience may see,
    // which depends on whether the game is over, known only once folded.
    let candidates = match from {
        0 => [audience.visible(head, false, delay), head],
        from => [from, from],
    };
    let mut snapshots = Vec::with_capacity(2);
    let mut take = |loaded: &Loaded| {
        if candidates.contains(&loaded.version) {
            let game = view::game(&loaded.info, loaded.version as i64, &loaded.game, reveal);
            snapshots.push((loaded.version, game));
        }
    };
    take(&loaded);
    let earliest = candidates[0].min(candidates[1]);
    let mut updates = VecDeque::new();
    for event in rest {
        let update = feed::update(&mut loaded, event)?;
        if update.seq > earliest {
            updates.push_back(Arc::new(update));
        }
        take(&loaded);
    }
    let finished = loaded.game.is_finished();
    let visible = audience.visible(head, finished, delay);
    let start = if from == 0 { visible } else { from };
    super::audience::within_visible("from_version", start, visible)?;
    let snapshot = snapshots
        .into_iter()
        .find_map(|(version, game)| (version == start).then_some(game))
        .ok_or_else(|| ApiError::Internal(format!("no snapshot at seq {start}")))?;
    updates.retain(|u| u.seq > start);
    Ok(CatchUp {
        snapshot,
        updates,
        start,
        head,
        finished,
        delay,
    })
}

type Responses = Pin<Box<dyn Stream<Item = Result<proto::WatchGameResponse, Status>> + Send>>;

/// The stream of a watcher who caught up with `catch_up` and joined the
/// game's feed (before reading what it caught up from), with a keep-alive
/// after `every` of silence, until the game ends or the server stops.
pub fn stream(
    catch_up: CatchUp,
    audience: Audience,
    live: Subscription,
    every: Duration,
    stopping: watch::Receiver<bool>,
) -> Responses {
    Box::pin(Watch {
        snapshot: Some(catch_up.snapshot),
        queue: catch_up.updates,
        live,
        audience,
        delay: catch_up.delay,
        head: catch_up.head,
        finished: catch_up.finished,
        sent: catch_up.start,
        every,
        beat: Box::pin(tokio::time::sleep(every)),
        last: Instant::now(),
        stopping,
        done: false,
    })
}

/// A watcher's stream, polled in place by its connection: no task, and no
/// future rebuilt per message.
struct Watch {
    snapshot: Option<proto::Game>,
    /// Events known but not yet sent: the audience may not see them yet.
    queue: VecDeque<Arc<Update>>,
    live: Subscription,
    audience: Audience,
    delay: u32,
    /// The last version known, and whether the game ended with it.
    head: u64,
    finished: bool,
    /// The last version sent.
    sent: u64,
    every: Duration,
    /// Wakes the stream to check whether a keep-alive is due. Re-armed only
    /// when it fires, not for every message.
    beat: Pin<Box<Sleep>>,
    /// When the last message went out.
    last: Instant,
    /// Read when the feed closes: the feeds end when the server stops, so
    /// a watcher need not wait on this (a lock all watchers share) itself.
    stopping: watch::Receiver<bool>,
    done: bool,
}

fn message(message: wg::Message) -> Result<proto::WatchGameResponse, Status> {
    Ok(proto::WatchGameResponse {
        message: Some(message),
    })
}

impl Stream for Watch {
    type Item = Result<proto::WatchGameResponse, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(snapshot) = this.snapshot.take() {
            return Poll::Ready(Some(this.emit(wg::Message::Snapshot(snapshot))));
        }
        loop {
            let visible = this.audience.visible(this.head, this.finished, this.delay);
            if this.queue.front().is_some_and(|u| u.seq <= visible)
                && let Some(update) = this.queue.pop_front()
            {
                this.sent = update.seq;
                this.done = update.finished;
                return Poll::Ready(Some(this.emit(wg::Message::Event(update.message.clone()))));
            }
            // Joined a game that is over at its last version: the snapshot
            // said it all, and nothing more will come.
            if this.finished && this.queue.is_empty() {
                this.done = true;
                return Poll::Ready(None);
            }
            let Poll::Ready(received) = this.live.poll_recv(cx) else {
                break;
            };
            match received {
                // Already in the catch-up.
                Received::Step(Ok(update)) if update.seq <= this.head => {}
                Received::Step(Ok(update)) if update.seq == this.head + 1 => {
                    this.head = update.seq;
                    this.finished = update.finished;
                    this.queue.push_back(update);
                }
                Received::Step(Err(error)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err((*error).clone().into())));
                }
                Received::Closed if *this.stopping.borrow() => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                // Lagged, or a gap or an end the feed never should have:
                // the client resumes from what it saw.
                Received::Step(Ok(_)) | Received::Lagged | Received::Closed => {
                    this.done = true;
                    let behind = wg::Message::FellBehind(version::of_seq(this.sent));
                    return Poll::Ready(Some(message(behind)));
                }
            }
        }
        while this.beat.as_mut().poll(cx).is_ready() {
            let due = this.last + this.every;
            if Instant::now() >= due {
                let beat = wg::Message::KeepAlive(version::of_seq(this.sent));
                return Poll::Ready(Some(this.emit(beat)));
            }
            // Polled again below, so that it wakes the stream at `due`.
            this.beat.as_mut().reset(due);
        }
        Poll::Pending
    }
}

impl Watch {
    /// `body` as a message, noting when it went out.
    fn emit(&mut self, body: wg::Message) -> Result<proto::WatchGameResponse, Status> {
        self.last = Instant::now();
        if self.beat.deadline() <= self.last {
            self.beat.as_mut().reset(self.last + self.every);
        }
        message(body)
    }
}
