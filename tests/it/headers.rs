//! Headers on every answer: CORS lets a page of any origin call the JSON
//! API and grpc-web with its bearer token but never with credentials, and
//! the security headers are on every answer, the 404s, gRPC's and the
//! CORS preflights' included.

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::http::Answer;
use crate::support::{TestServer, new_game, start};

const ORIGIN: &str = "https://pages.example";

/// `method path` with `headers` and `body`, over HTTP/1.1.
async fn send(
    server: &TestServer,
    method: http::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("{}{path}", server.url()));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::copy_from_slice(body))).unwrap();
    let response = Client::builder(TokioExecutor::new())
        .build_http()
        .request(request)
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    Answer {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes(),
    }
}

/// The comma-separated values of header `name`, in lower case.
fn listed(answer: &Answer, name: &str) -> Vec<String> {
    answer
        .header(name)
        .split(',')
        .map(|value| value.trim().to_ascii_lowercase())
        .filter(|value| !value.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_origin_may_call_with_a_bearer_token_but_never_with_credentials() {
    let (server, mut client) = start().await;
    let (name, _) = new_game(&mut client, "cors-game", 2).await;
    let id = name.trim_start_matches("games/");
    // Given a page of another origin: its grpc-web POST's preflight
    let preflight = send(
        &server,
        http::Method::OPTIONS,
        "/carcassonne.v1.GameService/Act",
        &[
            ("origin", ORIGIN),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "authorization,content-type,x-grpc-web,x-user-agent,grpc-timeout",
            ),
        ],
        b"",
    )
    .await;
    // Then any origin is allowed, with the headers grpc-web needs
    assert!(preflight.status < 300, "{}", preflight.status);
    assert_eq!(preflight.header("access-control-allow-origin"), "*");
    let allowed = listed(&preflight, "access-control-allow-headers");
    for header in [
        "authorization",
        "content-type",
        "x-grpc-web",
        "x-user-agent",
        "grpc-timeout",
    ] {
        assert!(
            allowed.contains(&header.to_owned()),
            "{header} not in {allowed:?}"
        );
    }
    assert!(listed(&preflight, "access-control-allow-methods").contains(&"post".to_owned()));
    // And no credentials: a browser sends no cookies and reads no answer
    // to a request that carried them
    assert_eq!(preflight.headers.get("access-control-allow-credentials"), None);

    // When the page reads the JSON API and a failed grpc-web call
    let json = send(
        &server,
        http::Method::GET,
        &format!("/api/games/{id}"),
        &[("origin", ORIGIN)],
        b"",
    )
    .await;
    let grpc_web = send(
        &server,
        http::Method::POST,
        "/carcassonne.v1.GameService/GetGame",
        &[("origin", ORIGIN), ("content-type", "application/grpc-web+proto")],
        &[0, 0, 0, 0, 2, 0x0a, 0],
    )
    .await;
    for (what, answer) in [("json", &json), ("grpc-web", &grpc_web)] {
        // Then the answer is open to it, without credentials
        assert_eq!(answer.status, 200, "{what}: {}", answer.text());
        assert_eq!(answer.header("access-control-allow-origin"), "*", "{what}");
        assert_eq!(
            answer.headers.get("access-control-allow-credentials"),
            None,
            "{what}"
        );
    }
    // And the page may read a failed call's status and reason
    let exposed = listed(&grpc_web, "access-control-expose-headers");
    for header in ["grpc-status", "grpc-message", "grpc-status-details-bin"] {
        assert!(
            exposed.contains(&header.to_owned()),
            "{header} not in {exposed:?}"
        );
    }
    assert_ne!(grpc_web.header("grpc-status"), "0", "an empty name is refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_the_security_headers() {
    let (server, _client) = start().await;
    let grpc_web = [("content-type", "application/grpc-web+proto")];
    let preflight = [("origin", ORIGIN), ("access-control-request-method", "POST")];
    let answers = [
        ("the page", http::Method::GET, "/", &[][..]),
        ("JSON", http::Method::GET, "/api/health", &[][..]),
        ("an unknown path", http::Method::GET, "/no/such/path", &[][..]),
        (
            "an unknown game",
            http::Method::GET,
            "/api/games/nosuchgame",
            &[][..],
        ),
        ("a POST to a page", http::Method::POST, "/", &[][..]),
        (
            "a grpc-web call",
            http::Method::POST,
            "/carcassonne.v1.GameService/GetGame",
            &grpc_web[..],
        ),
        (
            "an unknown gRPC method",
            http::Method::POST,
            "/carcassonne.v1.NoSuchService/Get",
            &grpc_web[..],
        ),
        (
            "a CORS preflight",
            http::Method::OPTIONS,
            "/carcassonne.v1.GameService/Act",
            &preflight[..],
        ),
    ];
    for (what, method, path, headers) in answers {
        // When anything is asked
        let answer = send(&server, method, path, headers, &[0, 0, 0, 0, 0]).await;
        // Then its answer is confined as the page is
        let policy = answer.header("content-security-policy");
        assert!(policy.contains("default-src 'self'"), "{what}: {policy:?}");
        assert!(policy.contains("frame-ancestors 'self'"), "{what}: {policy:?}");
        assert_eq!(answer.header("x-content-type-options"), "nosniff", "{what}");
        assert_eq!(answer.header("referrer-policy"), "same-origin", "{what}");
    }
    // The unknown path is the fallback's 404, with its JSON error
    let missing = send(&server, http::Method::GET, "/no/such/path", &[], b"").await;
    assert_eq!(
        (missing.status, missing.reason()),
        (404, "PATH_NOT_FOUND".to_owned())
    );
}
