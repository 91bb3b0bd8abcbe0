//! `GET /games/{id}/board.svg` and `board.png`: the board picture of
//! `carcassonne-picture` at a version, seen exactly as GetGameAtVersion
//! shows it (`server::audience::at_version`: a spectator sees a running
//! game `spectator_delay` events behind, a seat's token shows it all).
//!
//! A version's picture never changes, so a named version is cached for a
//! year: publicly when any spectator may see it and it was asked without
//! a token, privately otherwise (a sealed game, a version past the
//! spectator delay, anything asked with a token). Without a version the picture is the latest
//! the caller may see, revalidated each time by its ETag. PNGs are
//! drawn on blocking threads, a few at a time (PNGs fewer still), so that
//! a burst of renders never stalls other calls.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use carcassonne_engine::Game;
use http::HeaderMap;
use lru::LruCache;
use tokio::sync::Semaphore;

use super::error::{self, Failed};
use super::{Http, game_name, grpc_request, query};
use crate::api::status::ApiError;
use crate::api::version;
use crate::server::{audience, request};

/// PNGs rasterised at once: about the cores of a small server.
const PNG_RENDERS: usize = 2;
/// Pictures being loaded and drawn at once (each holds a blocking thread
/// while it reads and folds the game): a burst of pictures of many
/// versions waits here instead of filling the blocking pool that every
/// other read of the store needs.
const PICTURES_AT_ONCE: usize = 8;
/// Pictures kept once rendered (a 5-player board's PNG is about 250 KB):
/// an embedded picture is asked for again and again, and a version's
/// picture never changes.
const PICTURES_KEPT: usize = 64;

/// What renders pictures, and the last ones rendered.
pub struct Pictures {
    at_once: Arc<Semaphore>,
    png_renders: Arc<Semaphore>,
    /// By ETag (game, version, options, format): the same bytes for every
    /// caller who may see that version, so keeping them shows nobody more.
    rendered: Mutex<LruCache<String, Bytes>>,
}

impl Default for Pictures {
    fn default() -> Pictures {
        Pictures {
            at_once: Arc::new(Semaphore::new(PICTURES_AT_ONCE)),
            png_renders: Arc::new(Semaphore::new(PNG_RENDERS)),
            rendered: Mutex::new(LruCache::new(
                NonZeroUsize::new(PICTURES_KEPT).unwrap_or(NonZeroUsize::MIN),
            )),
        }
    }
}

impl Pictures {
    fn rendered(&self) -> MutexGuard<'_, LruCache<String, Bytes>> {
        // A cache of plain bytes: a panic elsewhere cannot leave it
        // half-updated.
        self.rendered.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Svg,
    Png,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Format::Svg => "image/svg+xml",
            Format::Png => "image/png",
        }
    }
}

pub async fn svg(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    picture(http, &id, &headers, raw.as_deref(), Format::Svg).await
}

pub async fn png(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    picture(http, &id, &headers, raw.as_deref(), Format::Png).await
}

/// A boolean query parameter: `true`/`1` or `false`/`0`.
fn flag(params: &std::collections::HashMap<String, String>, field: &str) -> Result<bool, Failed> {
    match params
        .get(field)
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("false" | "0") => Ok(false),
        Some("" | "true" | "1") => Ok(true),
        Some(other) => Err(error::invalid(
            field,
            format!("true or false, not {}", crate::api::status::quote(other)),
        )),
    }
}

/// Whether `If-None-Match` names `etag` (or `*`).
pub fn matches(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(http::header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == etag || tag == "*")
}

async fn picture(
    http: Arc<Http>,
    id: &str,
    headers: &HeaderMap,
    raw: Option<&str>,
    format: Format,
) -> Result<Response, Failed> {
    let params = query(raw);
    let asked = error::integer::<i64>(&params, "version")?;
    let seq = asked.map(|v| version::to_seq("version", v)).transpose()?;
    let coordinates = flag(&params, "coordinates")?;
    let token = request::optional_token(&grpc_request(headers, ()))?;
    let game = request::game_id(&game_name(id))?;
    let _permit = http
        .pictures
        .at_once
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| ApiError::ShuttingDown)?;
    let games = http.games.clone();
    let (at, game) = blocking(move || {
        let at = audience::at_version(&games, &game, token.as_deref(), seq)?;
        Ok((at, game))
    })
    .await?;
    let etag = format!(
        "\"{}.{}.{}.{}.{}\"",
        game,
        version::of_seq(at.seq),
        u8::from(coordinates),
        format.extension(),
        env!("CARGO_PKG_VERSION")
    );
    // Public only what any spectator may see, asked without a token: a
    // sealed game, a version past the spectator delay and every answer to
    // a token stay out of shared caches.
    let public = at.public && !headers.contains_key(http::header::AUTHORIZATION);
    let cache = match (asked.is_some(), public) {
        // A version never changes.
        (true, true) => "public, max-age=31536000, immutable",
        (true, false) => "private, max-age=31536000, immutable",
        // The latest version changes with the game.
        (false, true) => "no-cache",
        (false, false) => "private, no-cache",
    };
    let cached = [
        (http::header::ETAG, etag.clone()),
        (http::header::CACHE_CONTROL, cache.to_owned()),
        (http::header::VARY, "authorization".to_owned()),
    ];
    if matches(headers, &etag) {
        return Ok((http::StatusCode::NOT_MODIFIED, cached).into_response());
    }
    let kept = http.pictures.rendered().get(&etag).cloned();
    if let Some(bytes) = kept {
        return Ok((
            cached,
            [(http::header::CONTENT_TYPE, format.content_type())],
            bytes,
        )
            .into_response());
    }
    let games = http.games.clone();
    let bytes = match format {
        Format::Svg => {
            blocking(move || {
                let loaded = at.load(&games, &game)?;
                Ok(render_svg(&loaded.game, coordinates).into_bytes())
            })
            .await?
        }
        Format::Png => {
            let _png_permit = http
                .pictures
                .png_renders
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| ApiError::ShuttingDown)?;
            blocking(move || {
                let loaded = at.load(&games, &game)?;
                render_png(&render_svg(&loaded.game, coordinates))
            })
            .await?
        }
    };
    let bytes = Bytes::from(bytes);
    http.pictures.rendered().put(etag, bytes.clone());
    Ok((
        cached,
        [(http::header::CONTENT_TYPE, format.content_type())],
        bytes,
    )
        .into_response())
}

/// Runs store work and renders on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, Failed> {
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(work))
        .await
        .map_err(|e| ApiError::Internal(format!("picture task failed: {e}")))?
        .map_err(Failed::from)
}

fn render_svg(game: &Game, coordinates: bool) -> String {
    let options = carcassonne_picture::BoardOptions {
        coordinates,
        ..carcassonne_picture::BoardOptions::default()
    };
    carcassonne_picture::board_svg(game, &options)
}

fn render_png(svg: &str) -> Result<Vec<u8>, ApiError> {
    // Our own pictures always rasterise, within the crate's size limits.
    carcassonne_picture::svg_to_png(svg).map_err(|e| ApiError::Internal(format!("png: {e}")))
}
