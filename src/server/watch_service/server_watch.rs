//! One WatchServer stream: the changes after its start position, first
//! from the store (a page at a time, classified as the shared task
//! classifies: `lobby.rs`), then live from the shared task's broadcast,
//! with a keep-alive after `every` of silence.
//!
//! The stream is polled in place by its connection: no task of its own, so
//! a client that does not read costs no work at all (its receiver waits in
//! the broadcast, which holds the changes once for every stream), and a
//! client that leaves drops the stream, which stops at once. What one
//! holds: its position, its receiver, a timer, and while it catches up one
//! page's changes.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tonic::Status;

use super::lobby::{Broadcast, CATCH_UP_PAGE, Lobby};
use crate::api::status::ApiError;
use crate::api::version::Start;
use crate::games::store_error;
use crate::proto::{self, watch_server_response as ws};

type Responses = Pin<Box<dyn Stream<Item = Result<proto::WatchServerResponse, Status>> + Send>>;

/// A page of the store classified.
struct Page {
    changes: Vec<proto::ServerEvent>,
    /// Its last position (`None`: the store held nothing after the
    /// position read from).
    last: Option<u64>,
    /// Whether it reached the store's end as it was then.
    end: bool,
}

/// The server's changes after `start`, until the server stops.
pub fn stream(
    lobby: Arc<Lobby>,
    start: Start,
    every: Duration,
    stopping: watch::Receiver<bool>,
) -> Responses {
    let (live, position) = match start {
        // Join before taking the store's position: every change after it
        // comes through the broadcast.
        Start::Now => {
            let live = lobby.subscribe();
            (
                Some(BroadcastStream::new(live)),
                lobby.games().store().last_position(),
            )
        }
        Start::After(position) => (None, position),
    };
    Box::pin(ServerWatch {
        lobby,
        live,
        position,
        resume: position,
        queue: VecDeque::new(),
        reading: None,
        caught_up: false,
        live_now: false,
        every,
        beat: Box::pin(tokio::time::sleep(every)),
        last: Instant::now(),
        stopping,
        done: false,
    })
}

struct ServerWatch {
    lobby: Arc<Lobby>,
    /// The broadcast, once joined. A catch-up joins when it nears the
    /// store's end, and reads to the end once more afterwards: a change
    /// broadcast before it joined is of an event that read finds, and
    /// every later one comes through the broadcast.
    live: Option<BroadcastStream<Broadcast>>,
    /// The last position the stream has covered: what it read from the
    /// store, or the last change received.
    position: u64,
    /// Where a client resumes after a keep-alive or falling behind: after
    /// the last change sent (or where it started), never the store's last
    /// position, which would tell a spectator when the hidden moves of a
    /// delayed game happen.
    resume: u64,
    /// A catch-up page's changes not yet sent.
    queue: VecDeque<proto::ServerEvent>,
    /// The store's next page, being read and classified.
    reading: Option<JoinHandle<Result<Page, ApiError>>>,
    /// Whether the stream joined before a read that reached the store's
    /// end: once that read's changes are sent, the broadcast has the rest.
    caught_up: bool,
    /// Whether the stream is past its catch-up.
    live_now: bool,
    every: Duration,
    /// Wakes the stream to check whether a keep-alive is due. Re-armed only
    /// when it fires, not for every message.
    beat: Pin<Box<Sleep>>,
    /// When the last message went out.
    last: Instant,
    /// Read between pages, and when the broadcast closes: the shared task
    /// ends when the server stops, so a stream need not wait on this (a
    /// lock all streams share) itself.
    stopping: watch::Receiver<bool>,
    done: bool,
}

fn message(message: ws::Message) -> Result<proto::WatchServerResponse, Status> {
    Ok(proto::WatchServerResponse {
        message: Some(message),
    })
}

impl Stream for ServerWatch {
    type Item = Result<proto::WatchServerResponse, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if !this.live_now {
            match ready!(this.poll_catch_up(cx)) {
                Some(item) => return Poll::Ready(item),
                None => this.live_now = true,
            }
        }
        while let Some(live) = &mut this.live {
            let Poll::Ready(received) = Pin::new(live).poll_next(cx) else {
                break;
            };
            match received {
                // Already read from the store.
                Some(Ok(Ok(change))) if change.position as u64 <= this.position => {}
                Some(Ok(Ok(change))) => {
                    this.position = change.position as u64;
                    return Poll::Ready(Some(this.change((*change).clone())));
                }
                Some(Ok(Err(error))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err((*error).clone().into())));
                }
                Some(Err(BroadcastStreamRecvError::Lagged(_))) => {
                    this.done = true;
                    return Poll::Ready(Some(message(ws::Message::FellBehind(this.resume as i64))));
                }
                // The shared task ended: the server stops, or the changes
                // stopped (said before); either way the client resumes.
                None if *this.stopping.borrow() => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                None => {
                    this.done = true;
                    return Poll::Ready(Some(message(ws::Message::FellBehind(this.resume as i64))));
                }
            }
        }
        while this.beat.as_mut().poll(cx).is_ready() {
            let due = this.last + this.every;
            if Instant::now() >= due {
                let beat = ws::Message::KeepAlive(this.resume as i64);
                return Poll::Ready(Some(this.emit(beat)));
            }
            // Polled again below, so that it wakes the stream at `due`.
            this.beat.as_mut().reset(due);
        }
        Poll::Pending
    }
}

impl ServerWatch {
    /// Reads the store's next page, joining the broadcast once near the
    /// store's end: ready with what the stream sends (`Some(None)`: it
    /// ends), or with `None` once caught up.
    #[allow(clippy::type_complexity)]
    fn poll_catch_up(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Option<Result<proto::WatchServerResponse, Status>>>> {
        loop {
            if let Some(change) = self.queue.pop_front() {
                return Poll::Ready(Some(Some(self.change(change))));
            }
            if self.caught_up {
                // Keep-alives from now on.
                self.last = Instant::now();
                self.beat.as_mut().reset(self.last + self.every);
                return Poll::Ready(None);
            }
            let Some(reading) = &mut self.reading else {
                if *self.stopping.borrow() {
                    self.done = true;
                    return Poll::Ready(Some(None));
                }
                self.reading = Some(self.read_next_page());
                continue;
            };
            let read = ready!(Pin::new(reading).poll(cx));
            self.reading = None;
            let page = match read {
                Ok(Ok(page)) => page,
                Ok(Err(error)) => return Poll::Ready(Some(Some(self.fail(error)))),
                Err(error) => {
                    return Poll::Ready(Some(Some(self.fail(ApiError::Internal(error.to_string())))));
                }
            };
            if let Some(last) = page.last {
                self.position = last;
            }
            self.queue.extend(page.changes);
            if page.end {
                match self.live {
                    // Joined before this read: the broadcast has the rest.
                    Some(_) => self.caught_up = true,
                    // Joined now, the stream reads to the end once more.
                    None => self.live = Some(BroadcastStream::new(self.lobby.subscribe())),
                }
            }
        }
    }

    /// The store's page after the stream's position, classified, in a
    /// blocking task (dropped with the stream, which then ends it after
    /// this page).
    fn read_next_page(&self) -> JoinHandle<Result<Page, ApiError>> {
        let lobby = self.lobby.clone();
        let from = self.position + 1;
        tokio::task::spawn_blocking(move || {
            let events = lobby
                .games()
                .store()
                .read_all(from, CATCH_UP_PAGE)
                .map_err(store_error)?;
            Ok(Page {
                changes: lobby.classify_stored(&events),
                last: events.last().map(|event| event.position),
                end: events.len() < CATCH_UP_PAGE,
            })
        })
    }

    fn fail(&mut self, error: ApiError) -> Result<proto::WatchServerResponse, Status> {
        self.done = true;
        Err(error.into())
    }

    /// A change to send: clients resume after it.
    fn change(&mut self, change: proto::ServerEvent) -> Result<proto::WatchServerResponse, Status> {
        self.resume = change.position as u64;
        self.emit(ws::Message::Event(change))
    }

    /// `body` as a message, noting when it went out.
    fn emit(&mut self, body: ws::Message) -> Result<proto::WatchServerResponse, Status> {
        self.last = Instant::now();
        if self.beat.deadline() <= self.last {
            self.beat.as_mut().reset(self.last + self.every);
        }
        message(body)
    }
}
