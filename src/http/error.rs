//! Failed calls as HTTP answers: the gRPC status a service returned, its
//! HTTP status from the one table (`api::status::http_of`), and a JSON
//! body `{"code", "reason", "message"}` (with the `ErrorInfo` metadata
//! when there is some).

use std::collections::HashMap;

use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::api::status::{self, ApiError};

#[derive(Serialize)]
struct Body<'a> {
    code: &'static str,
    reason: String,
    message: &'a str,
    #[serde(skip_serializing_if = "HashMap::is_empty")]
    metadata: HashMap<String, String>,
}

/// A gRPC status as an HTTP answer.
pub struct Failed(pub tonic::Status);

impl From<tonic::Status> for Failed {
    fn from(status: tonic::Status) -> Failed {
        Failed(status)
    }
}

impl From<ApiError> for Failed {
    fn from(error: ApiError) -> Failed {
        Failed(error.into())
    }
}

impl Failed {
    /// The JSON body of the error, as an SSE event's data.
    pub fn json(&self) -> String {
        let (_, code) = status::http_of(self.0.code());
        let (reason, metadata) = status::error_info(&self.0).unwrap_or_default();
        let body = Body {
            code,
            reason,
            message: self.0.message(),
            metadata,
        };
        serde_json::to_string(&body).unwrap_or_else(|_| format!("{{\"code\":\"{code}\"}}"))
    }
}

impl IntoResponse for Failed {
    fn into_response(self) -> Response {
        let (http_status, _) = status::http_of(self.0.code());
        let http_status =
            http::StatusCode::from_u16(http_status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        (
            http_status,
            [
                (http::header::CONTENT_TYPE, "application/json"),
                (http::header::CACHE_CONTROL, "no-store"),
            ],
            self.json(),
        )
            .into_response()
    }
}

/// An invalid query parameter, as the services name a bad field.
pub fn invalid(field: &str, message: String) -> Failed {
    ApiError::InvalidArgument {
        field: field.to_owned(),
        message,
    }
    .into()
}

/// The integer query parameter `field`, if given.
pub fn integer<T: std::str::FromStr>(
    params: &HashMap<String, String>,
    field: &str,
) -> Result<Option<T>, Failed> {
    params
        .get(field)
        .map(|text| {
            text.trim()
                .parse()
                .map_err(|_| invalid(field, format!("not a number: {}", status::quote(text))))
        })
        .transpose()
}

/// A path that names nothing the server serves.
pub fn not_found(message: String) -> Failed {
    use tonic_types::{ErrorDetails, StatusExt as _};
    let details = ErrorDetails::with_error_info("PATH_NOT_FOUND", status::DOMAIN, HashMap::new());
    Failed(tonic::Status::with_error_details(
        tonic::Code::NotFound,
        message,
        details,
    ))
}
