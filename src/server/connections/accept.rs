//! Accepting connections: at most the cap open at once, a pause when the
//! process is out of descriptors (EMFILE, ENFILE) instead of a loop that
//! fails at full speed, and at most one log line per interval about
//! either.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};

use super::{Connection, Timeouts};

/// How long accepting pauses after a failure that is not the peer's (out
/// of descriptors or memory): long enough not to spin, short enough that
/// a freed descriptor serves the next client soon.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// At most one log line per this interval about refused connections, and
/// one about failures to accept.
const REPORT_INTERVAL: Duration = Duration::from_secs(10);
/// Descriptors kept for everything but client connections: the store's
/// files, the admin socket and its clients, the runtime's own.
const RESERVED_FILES: u64 = 256;

/// Raises the soft limit of open files to the hard one; returns the
/// limit now in force (`None` if it cannot be read).
pub(crate) fn raise_open_file_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => Some(limit),
        Err(error) => {
            tracing::warn!(%error, "the limit of open files could not be read or raised");
            None
        }
    }
}

/// The connections to allow at once: `configured`, but below the
/// open-file limit by what the server needs besides (`reserved`), and at
/// most half the limit when the limit is tiny.
pub(crate) fn connection_cap(configured: usize, open_files: Option<u64>, reserved: u64) -> usize {
    let Some(limit) = open_files else {
        return configured;
    };
    let room = limit.saturating_sub(RESERVED_FILES + reserved).max(limit / 2);
    configured.min(usize::try_from(room).unwrap_or(usize::MAX)).max(1)
}

/// Where connections come from: a listener, or a test's stand-in.
pub(crate) trait Acceptor: Unpin {
    fn poll_accept(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>>;
}

impl Acceptor for TcpListener {
    fn poll_accept(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        TcpListener::poll_accept(self, cx)
    }
}

/// Counts events and says when one is to be logged: the first, then at
/// most one per interval, with how many came since the last one logged.
#[derive(Debug)]
pub(crate) struct Throttled {
    interval: Duration,
    last: Option<Instant>,
    unreported: u64,
}

impl Throttled {
    pub(crate) fn new(interval: Duration) -> Throttled {
        Throttled {
            interval,
            last: None,
            unreported: 0,
        }
    }

    /// One more event: `Some(events since the last report)` if it is time
    /// to report them.
    pub(crate) fn note(&mut self) -> Option<u64> {
        self.note_at(Instant::now())
    }

    /// [`Throttled::note`] at `now`.
    pub(crate) fn note_at(&mut self, now: Instant) -> Option<u64> {
        self.unreported += 1;
        if self.last.is_some_and(|last| now < last + self.interval) {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.unreported))
    }
}

/// Whether an accept failed because of that one connection (its peer
/// gave up before it was accepted): the next one may succeed at once.
fn peer_failure(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionRefused
    )
}

/// The accepted connections, as tonic serves them: each with a slot of
/// the cap. A connection past the cap is closed as soon as it is
/// accepted, so that its client learns at once (rather than waiting in
/// the kernel's backlog, connected but unanswered, until its own
/// deadline) while the connections open go on; it is the clients that
/// open too many that are turned away, and idle ones free their slots
/// within the first-request or idle timeout.
pub(crate) struct Incoming<A = TcpListener> {
    acceptor: A,
    slots: Arc<Semaphore>,
    cap: usize,
    timeouts: Timeouts,
    pause: Option<Pin<Box<Sleep>>>,
    refused: Throttled,
    failed: Throttled,
}

impl<A: Acceptor> Incoming<A> {
    pub(crate) fn new(acceptor: A, cap: usize, timeouts: Timeouts) -> Incoming<A> {
        Incoming {
            acceptor,
            slots: Arc::new(Semaphore::new(cap)),
            cap,
            timeouts,
            pause: None,
            refused: Throttled::new(REPORT_INTERVAL),
            failed: Throttled::new(REPORT_INTERVAL),
        }
    }

    #[cfg(test)]
    pub(crate) fn acceptor(&self) -> &A {
        &self.acceptor
    }

    fn accepted(&mut self, stream: TcpStream, remote: SocketAddr) -> Option<Connection> {
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            if let Some(refused) = self.refused.note() {
                tracing::warn!(
                    cap = self.cap,
                    refused,
                    "at the cap of open connections: closing new ones as they come"
                );
            }
            return None;
        };
        // Small gRPC frames must not wait for the peer's delayed
        // acknowledgement (Nagle's algorithm: 40 ms).
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY could not be set");
        }
        Some(Connection::new(stream, remote, slot, self.timeouts))
    }
}

impl<A: Acceptor> tokio_stream::Stream for Incoming<A> {
    type Item = io::Result<Connection>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<io::Result<Connection>>> {
        let this = &mut *self;
        loop {
            if let Some(pause) = &mut this.pause {
                ready!(pause.as_mut().poll(cx));
                this.pause = None;
            }
            match ready!(this.acceptor.poll_accept(cx)) {
                Ok((stream, remote)) => {
                    if let Some(connection) = this.accepted(stream, remote) {
                        return Poll::Ready(Some(Ok(connection)));
                    }
                }
                Err(error) if peer_failure(&error) => {}
                Err(error) => {
                    if let Some(failures) = this.failed.note() {
                        tracing::warn!(
                            %error,
                            failures,
                            pause_ms = ACCEPT_BACKOFF.as_millis() as u64,
                            "accepting connections fails (out of file descriptors?): pausing between attempts"
                        );
                    }
                    this.pause = Some(Box::pin(tokio::time::sleep(ACCEPT_BACKOFF)));
                }
            }
        }
    }
}
