//! The bound on streaming calls, for every one of them at once: each
//! gRPC method that streams (read from the descriptor sets the server
//! serves, so that a new one is bounded too) and each HTTP route that
//! streams (`crate::http::streams`). Such a call takes a slot of its
//! connection and a permit of the server's before its handler runs, and
//! holds both in its response's body until the body is dropped (the
//! stream's end, or the client's going away). Past either bound the call
//! is refused at once with RESOURCE_EXHAUSTED (reason TOO_MANY_STREAMS,
//! its `limit` and `scope` in the metadata; 429 over HTTP): an unread
//! stream costs the server its buffers and its task, so a flood of them
//! would cost every other client.

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use prost::Message as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::body::Body;

use super::connections::{ConnectionInfo, StreamSlot, guarded};
use crate::api::status::ApiError;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The gRPC paths (`/package.Service/Method`) of every method that
/// streams its requests or its responses, in `descriptor_sets`.
pub fn streaming_methods(descriptor_sets: &[&[u8]]) -> HashSet<String> {
    let mut paths = HashSet::new();
    for bytes in descriptor_sets {
        // The server's own descriptor sets, compiled in: they decode.
        let Ok(set) = prost_types::FileDescriptorSet::decode(*bytes) else {
            tracing::error!("a descriptor set that does not decode");
            continue;
        };
        for file in &set.file {
            for service in &file.service {
                let full = match file.package() {
                    "" => service.name().to_owned(),
                    package => format!("{package}.{}", service.name()),
                };
                for method in &service.method {
                    if method.server_streaming() || method.client_streaming() {
                        paths.insert(format!("/{full}/{}", method.name()));
                    }
                }
            }
        }
    }
    paths
}

/// The streaming calls the server allows at once.
#[derive(Debug)]
pub struct StreamLimits {
    grpc: HashSet<String>,
    total: Arc<Semaphore>,
    max_total: usize,
    per_connection: usize,
}

impl StreamLimits {
    pub fn new(grpc: HashSet<String>, max_total: usize, per_connection: usize) -> StreamLimits {
        StreamLimits {
            grpc,
            total: Arc::new(Semaphore::new(max_total)),
            max_total,
            per_connection,
        }
    }

    fn streams(&self, path: &str) -> bool {
        self.grpc.contains(path) || crate::http::streams(path)
    }

    /// The connection's slot (when the request came on one) and the
    /// server's permit for one more stream, or why not.
    fn admit(&self, info: Option<&ConnectionInfo>) -> Result<OpenStream, ApiError> {
        let slot = match info {
            Some(info) => Some(info.activity.open_stream(self.per_connection).ok_or(
                ApiError::TooManyStreams {
                    per_connection: true,
                    limit: self.per_connection,
                },
            )?),
            None => None,
        };
        let permit = self
            .total
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::TooManyStreams {
                per_connection: false,
                limit: self.max_total,
            })?;
        Ok(OpenStream {
            _slot: slot,
            _permit: permit,
        })
    }
}

/// What an open stream holds.
struct OpenStream {
    _slot: Option<StreamSlot>,
    _permit: OwnedSemaphorePermit,
}

/// The layer of [`StreamLimit`].
#[derive(Debug, Clone)]
pub struct StreamLimitLayer(pub Arc<StreamLimits>);

impl<S> tower::Layer<S> for StreamLimitLayer {
    type Service = StreamLimit<S>;

    fn layer(&self, inner: S) -> StreamLimit<S> {
        StreamLimit {
            inner,
            limits: self.0.clone(),
        }
    }
}

/// Admits a streaming call only within the limits, and holds its place
/// until its body is dropped.
#[derive(Debug, Clone)]
pub struct StreamLimit<S> {
    inner: S,
    limits: Arc<StreamLimits>,
}

impl<S, B> tower::Service<http::Request<Body>> for StreamLimit<S>
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
        if !self.limits.streams(request.uri().path()) {
            let response = self.inner.call(request);
            return Box::pin(async move { Ok(response.await?.map(Body::new)) });
        }
        let open = match self.limits.admit(request.extensions().get::<ConnectionInfo>()) {
            Ok(open) => open,
            Err(error) => {
                let refusal = refusal(&request, error);
                return Box::pin(async move { Ok(refusal) });
            }
        };
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| guarded(body, open)))
        })
    }
}

/// The refusal of a stream, as the request's protocol says errors: a
/// gRPC status, or the HTTP API's JSON error.
fn refusal(request: &http::Request<Body>, error: ApiError) -> http::Response<Body> {
    let status = tonic::Status::from(error);
    if crate::http::is_grpc(request) {
        status.into_http::<Body>()
    } else {
        crate::http::failed(status).map(Body::new)
    }
}
