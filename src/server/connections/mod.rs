//! The server's connections: how many may be open, how long one may stay
//! without a request, and what each one is doing.
//!
//! Every accepted connection ([`Connection`]) holds one of the server's
//! connection slots (`accept`: the cap, sized below the open-file limit)
//! and an [`Activity`] that the layers of every request share through
//! tonic's connect info ([`ConnectionInfo`]): [`ActivityLayer`] counts the
//! requests in flight on it (a request is in flight until its response's
//! body is dropped, so an open stream is one), `server::streams` its
//! streaming calls. A connection with no request in flight is closed once
//! it has been so for `first_request_timeout` (before its first request:
//! a peer that connects and says nothing, or only the HTTP/2 preface) or
//! `idle_timeout` (after it): its reads end and its writes fail, so hyper
//! drops it and its descriptor is free again.

mod accept;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};
use tonic::body::Body;

pub(crate) use self::accept::{Incoming, connection_cap, raise_open_file_limit};

/// What the server allows its connections.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections open at once; a connection past them is closed as soon
    /// as it is accepted. Lowered at start to fit under the open-file
    /// limit.
    pub max_connections: usize,
    /// How long a new connection may take to start its first request.
    pub first_request_timeout: Duration,
    /// How long a connection may stay with no request in flight after
    /// its first one.
    pub idle_timeout: Duration,
    /// An HTTP/2 ping every so often on each connection; a peer that does
    /// not answer within `keepalive_timeout` is gone, its streams with it.
    pub keepalive_interval: Duration,
    pub keepalive_timeout: Duration,
    /// Streaming calls (watches, replays, exports, event streams) open at
    /// once on the whole server.
    pub max_streaming_calls: usize,
    /// Streaming calls open at once on one connection.
    pub max_streaming_calls_per_connection: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 10_000,
            first_request_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            keepalive_interval: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(20),
            max_streaming_calls: 4096,
            max_streaming_calls_per_connection: 256,
        }
    }
}

/// The deadlines of a connection without a request in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub first_request: Duration,
    pub idle: Duration,
}

/// What the requests of one connection are doing, shared by the
/// connection and the layers.
#[derive(Debug)]
pub(crate) struct Activity {
    accepted: Instant,
    /// Requests whose response (its body included) is not done.
    in_flight: AtomicUsize,
    /// Whether a request has come at all.
    served: AtomicBool,
    /// Milliseconds from `accepted` to when `in_flight` last fell to 0.
    idle_since_ms: AtomicU64,
    /// Streaming calls open (`server::streams`).
    streams: AtomicUsize,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            accepted: Instant::now(),
            in_flight: AtomicUsize::new(0),
            served: AtomicBool::new(false),
            idle_since_ms: AtomicU64::new(0),
            streams: AtomicUsize::new(0),
        }
    }

    /// When the connection is to be closed if nothing comes meanwhile;
    /// `None` while a request is in flight.
    fn deadline(&self, timeouts: Timeouts) -> Option<Instant> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let timeout = if self.served.load(Ordering::Acquire) {
            timeouts.idle
        } else {
            timeouts.first_request
        };
        let idle_since = Duration::from_millis(self.idle_since_ms.load(Ordering::Acquire));
        Some(self.accepted + idle_since + timeout)
    }

    /// A request starts; it is in flight until the guard is dropped.
    fn begin(self: &Arc<Activity>) -> InFlight {
        self.served.store(true, Ordering::Release);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// A slot for one more streaming call, unless `limit` are open.
    pub(crate) fn open_stream(self: &Arc<Activity>, limit: usize) -> Option<StreamSlot> {
        self.streams
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < limit).then_some(open + 1)
            })
            .ok()?;
        Some(StreamSlot(self.clone()))
    }
}

/// A request in flight on its connection.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        // The idle time first: a connection seen with no request in
        // flight must find when its last one ended.
        let now = Instant::now().saturating_duration_since(self.0.accepted);
        let millis = u64::try_from(now.as_millis()).unwrap_or(u64::MAX);
        self.0.idle_since_ms.fetch_max(millis, Ordering::AcqRel);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One streaming call open on its connection.
#[derive(Debug)]
pub(crate) struct StreamSlot(Arc<Activity>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What tonic puts in the extensions of each request of a connection.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    /// The peer's address.
    pub remote: SocketAddr,
    pub(crate) activity: Arc<Activity>,
}

/// An accepted TCP connection, holding its slot, that ends once it has
/// been idle too long.
pub struct Connection {
    stream: TcpStream,
    info: ConnectionInfo,
    timeouts: Timeouts,
    /// When to look again whether the connection is idle too long.
    check: Pin<Box<Sleep>>,
    timed_out: bool,
    _slot: OwnedSemaphorePermit,
}

impl Connection {
    pub(crate) fn new(
        stream: TcpStream,
        remote: SocketAddr,
        slot: OwnedSemaphorePermit,
        timeouts: Timeouts,
    ) -> Connection {
        let activity = Arc::new(Activity::new());
        let first = timeouts.first_request.min(timeouts.idle);
        let check = Box::pin(tokio::time::sleep_until(activity.accepted + first));
        Connection {
            stream,
            info: ConnectionInfo { remote, activity },
            timeouts,
            check,
            timed_out: false,
            _slot: slot,
        }
    }

    /// Whether the connection has been without a request in flight for
    /// too long. Otherwise its timer is armed with `cx`'s waker: the
    /// connection's task, which polls its reads, wakes when it is due.
    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        while !self.timed_out && self.check.as_mut().poll(cx).is_ready() {
            // Looked at only when due, and due again within an idle
            // timeout at most: a request that ends after now leaves the
            // connection idle until later than that, so no deadline is
            // ever missed.
            let now = Instant::now();
            let next = match self.info.activity.deadline(self.timeouts) {
                Some(deadline) if deadline <= now => {
                    tracing::debug!(remote = %self.info.remote, "closing a connection idle too long");
                    self.timed_out = true;
                    break;
                }
                Some(deadline) => deadline.min(now + self.timeouts.idle),
                None => now + self.timeouts.idle,
            };
            self.check.as_mut().reset(next);
        }
        self.timed_out
    }
}

fn idle_error() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "the connection was idle too long")
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.timed_out(cx) {
            // The end of the stream: hyper closes the connection.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.timed_out(cx) {
            return Poll::Ready(Err(idle_error()));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.timed_out(cx) {
            return Poll::Ready(Err(idle_error()));
        }
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.timed_out(cx) {
            return Poll::Ready(Err(idle_error()));
        }
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        self.info.clone()
    }
}

/// The layer of [`ActivityService`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ActivityLayer;

impl<S> tower::Layer<S> for ActivityLayer {
    type Service = ActivityService<S>;

    fn layer(&self, inner: S) -> ActivityService<S> {
        ActivityService { inner }
    }
}

/// Counts each request as in flight on its connection until its
/// response's body is dropped.
#[derive(Debug, Clone)]
pub struct ActivityService<S> {
    inner: S,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> tower::Service<http::Request<Body>> for ActivityService<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let in_flight = request
            .extensions()
            .get::<ConnectionInfo>()
            .map(|info| info.activity.begin());
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| guarded(body, in_flight)))
        })
    }
}

/// `body`, holding `guard` until it is dropped (its stream's end, or the
/// client's going away).
pub(crate) fn guarded<B, G>(body: B, guard: G) -> Body
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    G: Send + Unpin + 'static,
{
    Body::new(Guarded {
        body: Body::new(body),
        _guard: guard,
    })
}

struct Guarded<G> {
    body: Body,
    _guard: G,
}

impl<G: Unpin> http_body::Body for Guarded<G> {
    type Data = bytes::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, tonic::Status>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
