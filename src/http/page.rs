//! The web page: the files of `src/http/page/`, embedded in the binary
//! (nothing to install or build beside it), each with its content type
//! and an ETag of its bytes, so that a browser revalidates cheaply.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use http::HeaderMap;
use include_dir::{Dir, include_dir};

static PAGE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/src/http/page");

/// Each file's ETag: a hash of its bytes.
fn etags() -> &'static HashMap<&'static str, String> {
    static ETAGS: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        let mut etags = HashMap::new();
        let mut dirs = vec![&PAGE];
        while let Some(dir) = dirs.pop() {
            for file in dir.files() {
                use sha2::Digest as _;
                let digest = sha2::Sha256::digest(file.contents());
                if let Some(path) = file.path().to_str() {
                    etags.insert(path, format!("\"{}\"", &crate::games::auth::hex(&digest)[..20]));
                }
            }
            dirs.extend(dir.dirs());
        }
        etags
    })
}

/// `GET /`, `GET /games/{id}` and `GET /tournaments/{id}`: the page's
/// shell; the page reads the game or the tournament from its URL.
pub async fn index(headers: HeaderMap) -> Response {
    file("index.html", &headers)
}

/// `GET /assets/{file}`: any file of the page.
pub async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    file(&path, &headers)
}

fn file(path: &str, headers: &HeaderMap) -> Response {
    let found = (!path.split('/').any(|part| part == ".." || part.is_empty()))
        .then(|| PAGE.get_file(path))
        .flatten();
    let (Some(file), Some(etag)) = (found, etags().get(path)) else {
        let message = format!("no file {} in the page", crate::api::status::quote(path));
        return super::error::not_found(message).into_response();
    };
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let text = mime.type_() == "text" || matches!(mime.subtype().as_str(), "javascript" | "json" | "svg");
    let content_type = if text {
        format!("{}; charset=utf-8", mime.essence_str())
    } else {
        mime.essence_str().to_owned()
    };
    let cache = [
        (http::header::ETAG, etag.clone()),
        // Unversioned names: revalidate each time, at the cost of a 304.
        (http::header::CACHE_CONTROL, "no-cache".to_owned()),
    ];
    if super::board::matches(headers, etag) {
        return (http::StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (
        cache,
        [(http::header::CONTENT_TYPE, content_type)],
        file.contents(),
    )
        .into_response()
}
