//! Signed archives end to end: the server's key (made once, kept private,
//! the same through GetServerKey and `carcassonne public-key`), a finished
//! game exported through gRPC and HTTP, and `carcassonne audit` run as a
//! user runs it, on the genuine archive and on tampered ones, each
//! tampering named.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use carcassonne::proto;
use carcassonne_archive::{Archive, ArchiveBuilder, SigningKey, read_tar, write_tar};
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;

use crate::support::{TestServer, carcassonne, new_game, play, play_to_end, reason, serve};

type Watcher = proto::watch_service_client::WatchServiceClient<Channel>;

/// The archive of `name` through ExportGameArchive, its chunks joined.
async fn export(watcher: &mut Watcher, name: &str) -> Result<Vec<u8>, tonic::Status> {
    let mut stream = watcher
        .export_game_archive(proto::ExportGameArchiveRequest {
            name: name.to_owned(),
        })
        .await?
        .into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?.chunk;
        assert!(
            !chunk.is_empty() && chunk.len() <= 1 << 20,
            "{} bytes",
            chunk.len()
        );
        bytes.extend(chunk);
    }
    Ok(bytes)
}

async fn server_key(watcher: &mut Watcher) -> String {
    watcher
        .get_server_key(proto::GetServerKeyRequest {})
        .await
        .unwrap()
        .into_inner()
        .public_key
}

/// `carcassonne public-key --data DIR`: its exit code, standard output and
/// standard error.
fn public_key(data: &Path) -> (Option<i32>, String, String) {
    let out = carcassonne(&["public-key", "--data", data.to_str().unwrap()], "");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `carcassonne audit FILE extra...` on `bytes` written to a file: its
/// exit code and standard output.
pub fn audit(bytes: &[u8], extra: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.tar");
    std::fs::write(&file, bytes).unwrap();
    let mut args = vec!["audit", file.to_str().unwrap()];
    args.extend(extra);
    let out = carcassonne(&args, "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "{stderr}");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The audit's `FAIL` line.
pub fn failure(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| l.starts_with("FAIL  "))
        .unwrap_or_else(|| panic!("no failure in:\n{stdout}"))
}

/// A finished game on a server with its data in `data`: its name.
async fn finished_game(server: &TestServer, request_id: &str, seed: u8) -> String {
    let mut client = server.client().await;
    let (name, tokens) = new_game(&mut client, request_id, seed).await;
    play_to_end(&mut client, &name, &tokens).await;
    name
}

/// The files of an archive with `change` made to them, signed again by
/// `key`, with the genuine archive's subject and time.
pub fn resigned(bytes: &[u8], key: &SigningKey, change: impl FnOnce(&mut Vec<(String, Vec<u8>)>)) -> Vec<u8> {
    let archive = Archive::open(bytes, None).unwrap();
    let manifest = archive.manifest();
    let mut files: Vec<(String, Vec<u8>)> = archive
        .paths()
        .map(|p| (p.to_owned(), archive.file(p).unwrap().to_vec()))
        .collect();
    change(&mut files);
    let mut builder = ArchiveBuilder::new(manifest.kind, manifest.subject.clone(), manifest.created_at_ms);
    for (path, content) in files {
        builder.add(path, content).unwrap();
    }
    builder.sign(key).unwrap()
}

fn file<'a>(files: &'a mut [(String, Vec<u8>)], suffix: &str) -> &'a mut Vec<u8> {
    &mut files.iter_mut().find(|(p, _)| p.ends_with(suffix)).unwrap().1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_games_archive_from_grpc_and_http_passes_the_audit_and_every_tampering_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = TestServer::start(&data).await;
    let mut watcher = server.watcher().await;
    let name = finished_game(&server, "archive-1", 3).await;
    let id = name.strip_prefix("games/").unwrap().to_owned();

    // The key: the same from the call and from the command line.
    let key = server_key(&mut watcher).await;
    assert_eq!(key.len(), 64);
    let (code, printed, stderr) = public_key(&data);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(printed, format!("{key}\n"));
    let key_file = dir.path().join("server.pub");
    std::fs::write(&key_file, &printed).unwrap();

    // Through gRPC and through HTTP: both pass, with the key given as hex
    // or as a file.
    let by_grpc = export(&mut watcher, &name).await.unwrap();
    let answer = crate::http::get(&server, &format!("/api/games/{id}/archive"), &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), "application/x-tar");
    assert!(
        answer
            .header("content-disposition")
            .contains(&format!("{id}.tar"))
    );
    let by_http = answer.body.to_vec();
    for bytes in [&by_grpc, &by_http] {
        let (code, out) = audit(bytes, &["--key", &key]);
        assert_eq!(code, Some(0), "{out}");
        assert!(out.ends_with("audit: every check held\n"), "{out}");
        assert!(
            out.contains(&format!(
                "ok    signature: valid, by the key given with --key, {key}"
            )),
            "{out}"
        );
        for file in ["record.json", "events.json", "seed", "seed_sha256"] {
            assert!(
                out.contains(&format!("ok    games/{id}/{file}: ")),
                "{file}: {out}"
            );
        }
        assert!(!out.contains("FAIL"), "{out}");
        let (code, out) = audit(bytes, &["--key", key_file.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{out}");
    }
    // The archive holds exactly the game's files, the record as ExportGame
    // gives it.
    let archive = Archive::open(&by_grpc, None).unwrap();
    assert_eq!(
        archive.paths().collect::<Vec<_>>(),
        ["record.json", "events.json", "seed", "seed_sha256"].map(|f| format!("games/{id}/{f}"))
    );
    let exported = watcher
        .export_game(crate::support::export_request(&name))
        .await
        .unwrap()
        .into_inner();
    let record = archive.file(&format!("games/{id}/record.json")).unwrap();
    assert_eq!(record, exported.record_json.as_bytes());
    let events: Vec<proto::StoredEvent> =
        serde_json::from_slice(archive.file(&format!("games/{id}/events.json")).unwrap()).unwrap();
    assert_eq!(events, exported.events);
    let seed = archive.file(&format!("games/{id}/seed")).unwrap();
    assert_eq!(seed, format!("{}\n", exported.seed).as_bytes());

    // Without --key: checked against the key the archive names, and said so.
    let (code, out) = audit(&by_grpc, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("only --key proves who signed it"), "{out}");
    // As JSON.
    let (code, out) = audit(&by_grpc, &["--key", &key, "--json"]);
    assert_eq!(code, Some(0), "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["kind"], "game");
    assert_eq!(report["subject"], id.as_str());
    assert_eq!(report["server_key"], key.as_str());
    assert!(report["failure"].is_null());

    // Tampered, then signed again with the server's own key (read from its
    // data directory): the content's checks catch each change.
    let text = std::fs::read_to_string(data.join("server.key")).unwrap();
    let server_signing = SigningKey::from_file_text(&text).unwrap();
    assert_eq!(server_signing.public_key_hex(), key);

    // A move changed in the record: the first tile placed far from the
    // board.
    let bytes = resigned(&by_grpc, &server_signing, |files| {
        let record = file(files, "record.json");
        let mut json: serde_json::Value = serde_json::from_slice(record).unwrap();
        json["turns"][0]["x"] = 50.into();
        *record = serde_json::to_vec_pretty(&json).unwrap();
    });
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        failure(&out).starts_with(&format!("FAIL  games/{id}/record.json: turn 0: ")),
        "{out}"
    );
    let (_, json) = audit(&bytes, &["--key", &key, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["failure"]["file"], format!("games/{id}/record.json"));
    assert_eq!(report["failure"]["at"]["turn"], 0);

    // A record that replays, but is not the log's: another player's name.
    let bytes = resigned(&by_grpc, &server_signing, |files| {
        let record = file(files, "record.json");
        let mut json: serde_json::Value = serde_json::from_slice(record).unwrap();
        json["players"][0] = "Eve".into();
        *record = serde_json::to_vec_pretty(&json).unwrap();
    });
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("ok    games/{id}/seed: ")), "{out}");
    assert_eq!(
        failure(&out),
        format!("FAIL  games/{id}/record.json: the record's rules, players or bag are not the event log's")
    );

    // An event's payload changed in the log: its hash no longer matches.
    let bytes = resigned(&by_grpc, &server_signing, |files| {
        let log = file(files, "events.json");
        let mut events: Vec<proto::StoredEvent> = serde_json::from_slice(log).unwrap();
        let last = events[4].payload.len() - 1;
        events[4].payload[last] ^= 1;
        *log = serde_json::to_vec_pretty(&events).unwrap();
    });
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        failure(&out),
        format!("FAIL  games/{id}/events.json: event 5: its hash does not match its content: it was changed")
    );
    // The record's checks came first, and held.
    assert!(out.contains(&format!("ok    games/{id}/record.json: ")), "{out}");

    // A draw replaced by a later one, with every hash computed again: the
    // chain holds, the draw does not follow from the seed.
    let mut drawn = None;
    let bytes = resigned(&by_grpc, &server_signing, |files| {
        let log = file(files, "events.json");
        let mut events: Vec<proto::StoredEvent> = serde_json::from_slice(log).unwrap();
        let draw =
            |e: &proto::StoredEvent| match carcassonne_engine::codec::decode(e.schema as u16, &e.payload) {
                Ok(carcassonne_engine::Event::Drawn(tile)) => Some(tile),
                _ => None,
            };
        let first = events.iter().position(|e| draw(e).is_some()).unwrap();
        let other = events
            .iter()
            .position(|e| draw(e).is_some_and(|t| Some(t) != draw(&events[first])))
            .unwrap();
        events[first].payload = events[other].payload.clone();
        drawn = Some(events[first].seq);
        *log = serde_json::to_vec_pretty(&crate::support::rechain(&events, &name)).unwrap();
    });
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!("ok    games/{id}/events.json: {} events", events.len())),
        "{out}"
    );
    let seq = drawn.unwrap();
    assert!(
        failure(&out).starts_with(&format!("FAIL  games/{id}/events.json: event {seq}: ")),
        "{out}"
    );

    // Another seed revealed.
    let bytes = resigned(&by_grpc, &server_signing, |files| {
        *file(files, "/seed") = format!("{}\n", "ab".repeat(32)).into_bytes();
    });
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        failure(&out),
        format!("FAIL  games/{id}/seed: the revealed seed is not the game's seed")
    );

    // Another commitment.
    let bytes = resigned(&by_grpc, &server_signing, |files| {
        *file(files, "seed_sha256") = format!("{}\n", "cd".repeat(32)).into_bytes();
    });
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        failure(&out).starts_with(&format!(
            "FAIL  games/{id}/seed_sha256: the creation's seed does not hash"
        )),
        "{out}"
    );

    // The same files signed by another key: refused with --key, and the
    // two keys named.
    let other = SigningKey::from_secret_bytes([42; 32]);
    let bytes = resigned(&by_grpc, &other, |_| {});
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        failure(&out),
        format!(
            "FAIL  signature: signed by key {}, expected {key}",
            other.public_key_hex()
        )
    );

    // A file changed without signing again: its hash is not the listed one.
    let mut entries = read_tar(&by_grpc).unwrap();
    let seed = entries.iter_mut().find(|(p, _)| p.ends_with("/seed")).unwrap();
    seed.1[0] = if seed.1[0] == b'0' { b'1' } else { b'0' };
    let bytes = write_tar(&entries).unwrap();
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        failure(&out).starts_with(&format!("FAIL  games/{id}/seed: its SHA-256 is ")),
        "{out}"
    );
    assert!(failure(&out).ends_with("the file was changed"), "{out}");
    // Every check of the opening is told, those that held too, in order;
    // what the files say is not audited.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 7, "{out}");
    assert_eq!(
        lines[0],
        format!("ok    signature: valid, by the key given with --key, {key}"),
        "{out}"
    );
    assert!(lines[1].starts_with(&format!("ok    manifest.json: game archive of {id}, made at ")));
    assert!(lines[1].ends_with(" ms; 4 files"), "{out}");
    for (line, file) in lines[2..6]
        .iter()
        .zip(["record.json", "events.json", "seed", "seed_sha256"])
    {
        let verdict = if file == "seed" { "FAIL" } else { "ok  " };
        assert!(
            line.starts_with(&format!("{verdict}  games/{id}/{file}: ")),
            "{file}: {out}"
        );
    }
    assert!(lines[2].ends_with(" bytes, its listed size and SHA-256"), "{out}");
    assert_eq!(
        lines[6],
        "audit: 1 of the archive's 6 checks failed; what its files say is not audited"
    );
    // Two files changed: both told, as JSON too.
    let events = entries
        .iter_mut()
        .find(|(p, _)| p.ends_with("/events.json"))
        .unwrap();
    events.1.push(b' ');
    let bytes = write_tar(&entries).unwrap();
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("FAIL  ")).count(),
        2,
        "{out}"
    );
    assert!(out.contains(&format!("FAIL  games/{id}/events.json: ")), "{out}");
    let (code, out) = audit(&bytes, &["--key", &key, "--json"]);
    assert_eq!(code, Some(1), "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["passed"].as_array().unwrap().len(), 4, "{out}");
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2, "{out}");
    assert_eq!(failures[0]["file"], format!("games/{id}/events.json"));
    assert_eq!(failures[1]["file"], format!("games/{id}/seed"));
    assert_eq!(report["failure"], failures[0]);

    // Not an archive at all.
    let (code, out) = audit(b"not a tar", &["--key", &key]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        failure(&out).starts_with("FAIL  not a readable tar archive"),
        "{out}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_games_archive_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut client = server.client().await;
    let mut watcher = server.watcher().await;
    let (name, tokens) = new_game(&mut client, "archive-running", 4).await;
    play(&mut client, &name, &tokens, 3).await;
    let status = export(&mut watcher, &name).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert_eq!(reason(&status), "GAME_NOT_FINISHED");
    assert!(status.message().contains("still running"), "{}", status.message());
    let id = name.strip_prefix("games/").unwrap();
    let answer = crate::http::get(&server, &format!("/api/games/{id}/archive"), &[]).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.reason(), "GAME_NOT_FINISHED");
    // An unknown game.
    let status = export(&mut watcher, "games/nosuchgame").await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_is_made_once_private_and_kept_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Nothing to print before the first start, and nothing made.
    let (code, _, stderr) = public_key(&data);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no server key in"), "{stderr}");
    assert!(!data.join("server.key").exists());

    let server = TestServer::start(&data).await;
    let first = server_key(&mut server.watcher().await).await;
    server.stop().await;
    let mode = std::fs::metadata(data.join("server.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    // No staged file left beside it.
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("server.key"))
        .collect();
    assert_eq!(names, ["server.key"]);

    let server = TestServer::start(&data).await;
    assert_eq!(server_key(&mut server.watcher().await).await, first);
    let answer = crate::http::get(&server, "/api/server/key", &[]).await;
    assert_eq!(answer.status, 200);
    let json: serde_json::Value = answer.json();
    assert_eq!(json["publicKey"], first.as_str());
    server.stop().await;
    assert_eq!(public_key(&data).1, format!("{first}\n"));
}

#[test]
fn a_damaged_key_file_stops_the_server_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = serve(&data, &dir.path().join("first.log"), &[]).unwrap();
    let (status, log) = served.terminate();
    assert_eq!(status.code(), Some(0), "{log}");
    let path = data.join("server.key");
    let text = std::fs::read_to_string(&path).unwrap();
    // One digit of the public key changed.
    let line = text.lines().find(|l| l.starts_with("ed25519-public ")).unwrap();
    let digit = line.as_bytes()[line.len() - 1];
    let changed = format!(
        "{}{}",
        &line[..line.len() - 1],
        if digit == b'0' { '1' } else { '0' }
    );
    std::fs::write(&path, text.replace(line, &changed)).unwrap();
    let Err((status, log)) = serve(&data, &dir.path().join("second.log"), &[]) else {
        panic!("the server started with a damaged key");
    };
    assert_ne!(status.code(), Some(0));
    assert!(
        log.contains(&format!("the server key {} is damaged", path.display())),
        "{log}"
    );
    let (code, _, stderr) = public_key(&data);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("is damaged"), "{stderr}");
}

#[test]
fn a_tournament_archive_without_its_log_is_named() {
    // Signed and opened like any other; then its log is looked for (the
    // audit of whole tournaments is in `tournament_archive.rs`).
    let key = SigningKey::from_secret_bytes([5; 32]);
    let mut builder = ArchiveBuilder::new(carcassonne_archive::Kind::Tournament, "t1", 0);
    builder
        .add("tournaments/t1/events.json", b"[]\n".to_vec())
        .unwrap();
    let bytes = builder.sign(&key).unwrap();
    let (code, out) = audit(&bytes, &["--key", &key.public_key_hex()]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        failure(&out),
        "FAIL  tournament/events.json: missing: a tournament's archive holds it"
    );
}

#[test]
fn a_bad_key_argument_is_a_clear_error() {
    let out = carcassonne(&["audit", "nowhere.tar", "--key", "nosuchkeyfile"], "");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--key"), "{stderr}");
}

/// A finished game's archive is built once: later downloads, over gRPC
/// and HTTP, are the very same bytes (a build stamps its time), never
/// gzipped per download.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_games_archive_is_built_once_and_every_download_is_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data")).await;
    let name = finished_game(&server, "archived-once", 7).await;
    let mut watcher = server.watcher().await;
    let first = export(&mut watcher, &name).await.unwrap();
    for _ in 0..3 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        assert!(
            export(&mut watcher, &name).await.unwrap() == first,
            "another build"
        );
        let id = name.trim_start_matches("games/");
        // Even for a client that takes gzip: the kept bytes as they are,
        // not compressed again for each download.
        let answer = crate::http::get(
            &server,
            &format!("/api/games/{id}/archive"),
            &[("accept-encoding", "gzip")],
        )
        .await;
        assert_eq!(answer.header("content-encoding"), "");
        assert!(answer.body.to_vec() == first, "another build");
    }
}

/// `GET /api/games/{id}/verify` checks the game's seed against a
/// commitment only when the caller brings one (the one it was shown while
/// the game ran): this server's own is computed from the very seed it
/// exports, a check that cannot fail, so without one the answer says the
/// commitment was not checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_verify_page_checks_the_commitment_the_caller_brings_and_only_that() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data")).await;
    let mut client = server.client().await;
    let (name, tokens) = new_game(&mut client, "verified-game-01", 5).await;
    let shown = crate::support::game(&mut client, &name).await.seed_sha256;
    play_to_end(&mut client, &name, &tokens).await;
    let id = name.trim_start_matches("games/");
    let verify = async |query: &str| -> proto::VerifyGameResponse {
        let answer = crate::http::get(&server, &format!("/api/games/{id}/verify{query}"), &[]).await;
        assert_eq!(answer.status, 200);
        answer.json()
    };
    let unchecked = verify("").await;
    assert!(unchecked.ok && unchecked.finished, "{unchecked:?}");
    assert!(!unchecked.commitment_checked, "{unchecked:?}");
    let checked = verify(&format!("?seed_sha256={shown}")).await;
    assert!(checked.ok && checked.commitment_checked, "{checked:?}");
    let other = "ab".repeat(32);
    let refuted = verify(&format!("?seed_sha256={other}")).await;
    assert!(!refuted.ok && !refuted.commitment_checked, "{refuted:?}");
    assert!(refuted.error.contains("commitment"), "{refuted:?}");
    assert_eq!(refuted.at, 2);
}
