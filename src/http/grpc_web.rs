//! grpc-web beside plain HTTP on the same port. tonic-web answers 400 to
//! every HTTP/1.1 request that is not grpc-web, so it sees only the gRPC
//! requests (content type `application/grpc...`); the page, its JSON,
//! streams and pictures go straight to their routes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::body::Body;
use tower::{Layer, Service, ServiceExt as _};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The layer of [`GrpcWebOrHttp`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcWebOrHttpLayer;

impl<S: Clone> Layer<S> for GrpcWebOrHttpLayer {
    type Service = GrpcWebOrHttp<S>;

    fn layer(&self, inner: S) -> GrpcWebOrHttp<S> {
        GrpcWebOrHttp {
            web: tonic_web::GrpcWebLayer::new().layer(inner.clone()),
            plain: inner,
        }
    }
}

/// gRPC and grpc-web requests through tonic-web, the others past it.
#[derive(Debug, Clone)]
pub struct GrpcWebOrHttp<S> {
    web: tonic_web::GrpcWebService<S>,
    plain: S,
}

/// Whether a request is gRPC or grpc-web, by its content type.
pub fn is_grpc<B>(request: &http::Request<B>) -> bool {
    request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/grpc"))
}

impl<S, ResBody> Service<http::Request<Body>> for GrpcWebOrHttp<S>
where
    S: Service<http::Request<Body>, Response = http::Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError> + std::fmt::Display,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        <tonic_web::GrpcWebService<S> as Service<http::Request<Body>>>::poll_ready(&mut self.web, cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if is_grpc(&request) {
            return Box::pin(self.web.call(request));
        }
        let plain = self.plain.clone();
        Box::pin(async move {
            let response = plain.oneshot(request).await?;
            Ok(response.map(Body::new))
        })
    }
}
