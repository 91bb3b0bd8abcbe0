//! Tournament archives end to end: small tournaments played by bots to
//! their end, exported (ExportTournamentArchive), audited by
//! `carcassonne audit` as a user runs it, then tampered with and signed
//! again with the server's own key, each tampering named by the audit.

use std::time::Duration;

use carcassonne::players::Registration;
use carcassonne::proto;
use carcassonne_archive::{Archive, SigningKey};
use carcassonne_competition::{GameResult, RatingEvent, TournamentEvent};
use serde_json::Value;
use tokio_stream::StreamExt as _;

use crate::archive::{audit, failure, resigned};
use crate::bots::{league_server, organiser, players_client, tournaments_client};
use crate::support::{TestServer, rechain_stream, with_token};
use crate::tournaments::{finish, start_bots, tournament_request};

type Files = Vec<(String, Vec<u8>)>;

/// The archive of the tournament `name`, its chunks joined.
pub(crate) async fn export(server: &TestServer, name: &str) -> Vec<u8> {
    let mut chunks = tournaments_client(server)
        .await
        .export_tournament_archive(proto::ExportTournamentArchiveRequest {
            name: name.to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = chunks.next().await {
        bytes.extend(chunk.unwrap().chunk);
    }
    bytes
}

/// Plays the tournament `request` with 4 bots to its end on a server of
/// its own; returns the server, its data directory, the tournament's name
/// and its archive.
async fn played(
    request: impl FnOnce(&[String]) -> proto::CreateTournamentRequest,
) -> (TestServer, tempfile::TempDir, String, Vec<u8>) {
    played_withdrawing(request, None).await
}

/// [`played`], with bot number `withdrawn` (if any) never acting and
/// withdrawn by the organiser as soon as the tournament is created, while
/// its round-1 game runs: the server resigns its seat there.
async fn played_withdrawing(
    request: impl FnOnce(&[String]) -> proto::CreateTournamentRequest,
    withdrawn: Option<usize>,
) -> (TestServer, tempfile::TempDir, String, Vec<u8>) {
    let (server, dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let (names, _played, tasks) = start_bots(&server, 4, withdrawn.map(|bot| (bot, 0))).await;
    let mut client = tournaments_client(&server).await;
    let created = client
        .create_tournament(with_token(request(names.as_slice()), &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    if let Some(bot) = withdrawn {
        let withdraw = proto::WithdrawPlayerRequest {
            name: created.name.clone(),
            player: format!("players/{}", names[bot]),
        };
        client.withdraw_player(with_token(withdraw, &boss)).await.unwrap();
    }
    let end = finish(&server, &created.name, Duration::from_secs(600)).await;
    let tournament = end.tournament.unwrap();
    if tournament.rated {
        // A game's rating is stored before its result drives the
        // tournament, but another game's end may drive it first, and the
        // archive is refused until every game is rated: wait for them.
        let games: usize = tournament
            .paired_rounds
            .iter()
            .flat_map(|r| &r.tables)
            .map(|t| t.games.len() * t.players.len())
            .sum();
        let mut players = players_client(&server).await;
        for _ in 0..100 {
            let mut changes = 0;
            for name in &names {
                let request = proto::GetRatingHistoryRequest {
                    name: format!("players/{name}"),
                };
                changes += players
                    .get_rating_history(request)
                    .await
                    .unwrap()
                    .into_inner()
                    .changes
                    .len();
            }
            if changes == games {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for task in tasks {
        task.abort();
    }
    let bytes = export(&server, &created.name).await;
    (server, dir, created.name, bytes)
}

/// The audit of `bytes` with `--key key` fails, and its `FAIL` line
/// begins with `expected`.
fn check(bytes: &[u8], key: &str, expected: &str) {
    let (code, out) = audit(bytes, &["--key", key]);
    assert_eq!(code, Some(1), "expected FAIL  {expected}\n{out}");
    let line = failure(&out);
    assert!(
        line.starts_with(&format!("FAIL  {expected}")),
        "expected FAIL  {expected}\n{out}"
    );
}

/// The file `path` of `files`.
fn file<'a>(files: &'a mut Files, path: &str) -> &'a mut Vec<u8> {
    &mut files
        .iter_mut()
        .find(|(p, _)| p == path)
        .unwrap_or_else(|| panic!("no {path}"))
        .1
}

/// Changes the JSON file `path`.
fn edit_json(files: &mut Files, path: &str, change: impl FnOnce(&mut Value)) {
    let bytes = file(files, path);
    let mut json: Value = serde_json::from_slice(bytes).unwrap();
    change(&mut json);
    *bytes = serde_json::to_vec_pretty(&json).unwrap();
}

/// Changes the event log `path`, its hashes computed again as the stream
/// `rechain`'s when it is given.
fn edit_log(
    files: &mut Files,
    path: &str,
    rechain: Option<&str>,
    change: impl FnOnce(&mut Vec<proto::StoredEvent>),
) {
    let bytes = file(files, path);
    let mut events: Vec<proto::StoredEvent> = serde_json::from_slice(bytes).unwrap();
    change(&mut events);
    if let Some(stream) = rechain {
        events = rechain_stream(&events, stream);
    }
    *bytes = serde_json::to_vec_pretty(&events).unwrap();
}

/// Changes the first tournament event `change` changes (returning true);
/// returns its sequence number.
fn edit_tournament_event(
    events: &mut [proto::StoredEvent],
    mut change: impl FnMut(&mut TournamentEvent) -> bool,
) -> i64 {
    for stored in events {
        let mut event = TournamentEvent::decode(&stored.payload).unwrap();
        if change(&mut event) {
            stored.payload = event.encode();
            return stored.seq;
        }
    }
    panic!("no event to change");
}

/// A result's ranks reversed, if that changes them.
fn reverse_ranks(event: &mut TournamentEvent) -> bool {
    match event {
        TournamentEvent::GameEnded {
            result: GameResult::Ranked { ranks, .. },
            ..
        } if ranks.iter().any(|r| *r != ranks[0]) => {
            ranks.reverse();
            true
        }
        _ => false,
    }
}

/// The server's signing key, from its data directory.
fn signing_key(data: &std::path::Path) -> SigningKey {
    SigningKey::from_file_text(&std::fs::read_to_string(data.join("server.key")).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_swiss_archive_passes_the_audit_and_every_tampering_is_named() {
    let (server, dir, name, genuine) = played(|names| proto::CreateTournamentRequest {
        rounds: 2,
        rated: true,
        ..tournament_request("audited-swiss-0001", names)
    })
    .await;
    server.stop().await;
    let id = name.strip_prefix("tournaments/").unwrap().to_owned();
    let stream = format!("@tournament/{id}");
    let signing = signing_key(dir.path());
    let key = signing.public_key_hex();

    // The genuine archive: every check holds, one line each.
    let (code, out) = audit(&genuine, &["--key", &key]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("audit: every check held\n"), "{out}");
    let archive = Archive::open(&genuine, None).unwrap();
    let games: Vec<String> = archive
        .paths()
        .filter_map(|p| p.strip_suffix("/record.json"))
        .filter_map(|p| p.strip_prefix("games/"))
        .map(str::to_owned)
        .collect();
    assert_eq!(games.len(), 4, "two rounds of two tables: {games:?}");
    for line in [
        "ok    tournament/events.json: ",
        "ok    tournament/standings.json: the standings the fold gives",
        "ok    tournament/tournament.json: the tournament the fold gives",
        "ok    ratings/events.json: every ranked game of the tournament (4 games) rated once",
        "ok    ratings/changes.json: ",
        &format!("ok    games/{}/record.json: ", games[3]),
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert!(out.contains("are pairing/1's from the events before it"), "{out}");
    // As JSON: the checks listed.
    let (code, json) = audit(&genuine, &["--key", &key, "--json"]);
    assert_eq!(code, Some(0), "{json}");
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["kind"], "tournament");
    assert_eq!(report["subject"], id.as_str());
    let files: Vec<&str> = report["passed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap())
        .collect();
    for path in archive.paths() {
        assert!(files.contains(&path), "{path} checked: {files:?}");
    }

    // Tampered, then signed again with the server's own key: the content's
    // checks catch each change.
    let tampered = |change: &mut dyn FnMut(&mut Files)| resigned(&genuine, &signing, |f| change(f));
    let game = &games[1];

    // A move changed in one game.
    let bytes = tampered(&mut |f| {
        edit_json(f, &format!("games/{game}/record.json"), |r| {
            r["turns"][0]["x"] = 50.into();
        });
    });
    check(&bytes, &key, &format!("games/{game}/record.json: turn 0: "));

    // A result changed in the tournament's log, its chain computed again:
    // only the comparison with the game finds it.
    let mut seq = 0;
    let bytes = tampered(&mut |f| {
        edit_log(f, "tournament/events.json", Some(&stream), |events| {
            seq = edit_tournament_event(events, reverse_ranks);
        });
    });
    check(
        &bytes,
        &key,
        &format!("tournament/events.json: event {seq}: the log records game "),
    );
    // The same without the chain computed again: the chain breaks there.
    let bytes = tampered(&mut |f| {
        edit_log(f, "tournament/events.json", None, |events| {
            edit_tournament_event(events, reverse_ranks);
        });
    });
    check(
        &bytes,
        &key,
        &format!("tournament/events.json: event {seq}: its hash does not match its content"),
    );

    // A game removed.
    let bytes = tampered(&mut |f| f.retain(|(p, _)| !p.starts_with(&format!("games/{game}/"))));
    check(
        &bytes,
        &key,
        &format!("tournament/events.json: removed game: the log pairs game {game}"),
    );

    // Round 2's pairing changed (two players swapped between its tables),
    // the chain computed again.
    let mut paired = 0;
    let bytes = tampered(&mut |f| {
        edit_log(f, "tournament/events.json", Some(&stream), |events| {
            paired = edit_tournament_event(events, |event| match event {
                TournamentEvent::RoundPaired { round: 2, tables, .. } => {
                    let moved = tables[0].players[1].clone();
                    tables[0].players[1] = std::mem::replace(&mut tables[1].players[1], moved);
                    true
                }
                _ => false,
            });
        });
    });
    check(
        &bytes,
        &key,
        &format!("tournament/events.json: event {paired}: round 2 table 1 seats "),
    );

    // A rating value changed.
    let bytes = tampered(&mut |f| {
        edit_json(f, "ratings/changes.json", |changes| {
            let value = changes[0]["changes"][0]["after"]["value"].as_f64().unwrap();
            changes[0]["changes"][0]["after"]["value"] = (value + 1.0).into();
        });
    });
    check(
        &bytes,
        &key,
        "ratings/changes.json: [0].changes[0].after.value: the file states ",
    );

    // A rated game's ranks changed in the ratings stream, its chain
    // computed again.
    let mut rated = 0;
    let bytes = tampered(&mut |f| {
        edit_log(f, "ratings/events.json", Some("@ratings"), |events| {
            let stored = events
                .iter_mut()
                .find(|e| {
                    let RatingEvent::Rated { ranks, .. } = RatingEvent::decode(&e.payload).unwrap();
                    ranks[0] != ranks[1]
                })
                .unwrap();
            let RatingEvent::Rated {
                game,
                players,
                mut ranks,
            } = RatingEvent::decode(&stored.payload).unwrap();
            ranks.reverse();
            stored.payload = RatingEvent::Rated { game, players, ranks }.encode();
            rated = stored.seq;
        });
    });
    check(
        &bytes,
        &key,
        &format!("ratings/events.json: event {rated}: rates game "),
    );

    // The standings changed.
    let bytes = tampered(&mut |f| {
        edit_json(f, "tournament/standings.json", |s| {
            s["standings"][0]["points"] = "99".into();
        });
    });
    check(
        &bytes,
        &key,
        r#"tournament/standings.json: standings[0].points: the file states "99"; the fold gives "#,
    );

    // The tournament's view changed.
    let bytes = tampered(&mut |f| {
        edit_json(f, "tournament/tournament.json", |t| {
            t["title"] = "Another cup".into()
        });
    });
    check(
        &bytes,
        &key,
        r#"tournament/tournament.json: title: the file states "Another cup"; the fold gives "Test open""#,
    );

    // Files no check reads: anything, or a game the log does not pair.
    let bytes = tampered(&mut |f| f.push(("notes.txt".to_owned(), b"hello\n".to_vec())));
    check(
        &bytes,
        &key,
        "notes.txt: not a file of a tournament's archive: this build checks nothing in it",
    );
    let bytes = tampered(&mut |f| {
        let record = file(f, &format!("games/{game}/record.json")).clone();
        f.push(("games/intruder/record.json".to_owned(), record));
    });
    check(
        &bytes,
        &key,
        "games/intruder/record.json: game intruder is not a game of the tournament's log",
    );

    // The same files signed by another key: refused with --key.
    let other = SigningKey::from_secret_bytes([42; 32]);
    let bytes = resigned(&genuine, &other, |_| {});
    check(
        &bytes,
        &key,
        &format!(
            "signature: signed by key {}, expected {key}",
            other.public_key_hex()
        ),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unrated_archive_with_duplicate_bags_passes_the_audit_and_holds_no_ratings() {
    let (server, dir, _name, genuine) = played(|names| proto::CreateTournamentRequest {
        rounds: 1,
        games_per_match: 2,
        duplicate_bags: true,
        ..tournament_request("audited-duplicate-01", names)
    })
    .await;
    server.stop().await;
    let signing = signing_key(dir.path());
    let key = signing.public_key_hex();
    let (code, out) = audit(&genuine, &["--key", &key]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("duplicate bags: each round's game g dealt alike at every table"),
        "{out}"
    );
    assert!(
        out.contains("every game (4 games) opened as the tournament's, unrated"),
        "{out}"
    );
    assert!(!out.contains("ratings/"), "{out}");
    let archive = Archive::open(&genuine, None).unwrap();
    assert!(archive.paths().all(|p| !p.starts_with("ratings/")));

    // A ratings file in an unrated tournament's archive: no check reads it.
    let bytes = resigned(&genuine, &signing, |f| {
        f.push(("ratings/events.json".to_owned(), b"[]\n".to_vec()));
    });
    check(
        &bytes,
        &key,
        "ratings/events.json: the tournament is not rated: this build checks nothing in it",
    );
    // The standings claimed before the end.
    let bytes = resigned(&genuine, &signing, |f| {
        edit_json(f, "tournament/standings.json", |s| s["final"] = false.into());
    });
    check(
        &bytes,
        &key,
        "tournament/standings.json: final: the file states false; the fold gives true",
    );
}

/// Changes the list of a log's events with `change`, then numbers them
/// 1, 2, 3, ... again, their positions and times the original ones in
/// order: a log that reads as the server's own.
fn relist(events: &mut Vec<proto::StoredEvent>, change: impl FnOnce(&mut Vec<proto::StoredEvent>)) {
    let stamps: Vec<(i64, i64)> = events.iter().map(|e| (e.position, e.time_ms)).collect();
    change(events);
    for (i, (event, (position, time_ms))) in events.iter_mut().zip(stamps).enumerate() {
        event.seq = i as i64 + 1;
        event.position = position;
        event.time_ms = time_ms;
    }
}

/// Whether the stored event is a withdrawal.
fn is_withdrawal(stored: &proto::StoredEvent) -> bool {
    matches!(
        TournamentEvent::decode(&stored.payload).unwrap(),
        TournamentEvent::Withdrawn { .. }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_with_a_withdrawal_passes_the_audit_and_tampering_with_the_withdrawal_is_named() {
    // Bot0 never acts and is withdrawn while its round-1 game runs; the
    // clock is long, so only the withdrawal ends that game (the server
    // resigns its seat). Round 2 pairs the three others: a table and a bye.
    let (server, dir, name, genuine) = played_withdrawing(
        |names| proto::CreateTournamentRequest {
            rounds: 2,
            time_control: Some(proto::TimeControl {
                decision_ms: 60_000,
                ..crate::tournaments::fast_clock()
            }),
            ..tournament_request("audited-withdrawal-1", names)
        },
        Some(0),
    )
    .await;
    server.stop().await;
    let id = name.strip_prefix("tournaments/").unwrap().to_owned();
    let stream = format!("@tournament/{id}");
    let signing = signing_key(dir.path());
    let key = signing.public_key_hex();

    let (code, out) = audit(&genuine, &["--key", &key]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("2 rounds paired, 3 results, 1 withdrawal, then finished"),
        "{out}"
    );
    assert!(out.ends_with("audit: every check held\n"), "{out}");

    // Bot0's round-1 game, and its seat there, resigned by the server for
    // the withdrawal (request id `~withdrawn/<seat>`).
    let archive = Archive::open(&genuine, None).unwrap();
    let log: Vec<proto::StoredEvent> =
        serde_json::from_slice(archive.file("tournament/events.json").unwrap()).unwrap();
    let (game, seat) = log
        .iter()
        .find_map(|stored| match TournamentEvent::decode(&stored.payload).unwrap() {
            TournamentEvent::RoundPaired { round: 1, tables, .. } => tables.into_iter().find_map(|t| {
                let seat = t.players.iter().position(|p| p.as_str() == "Bot0")?;
                Some((t.games[0].clone(), seat))
            }),
            _ => None,
        })
        .unwrap();
    let game_log: Vec<proto::StoredEvent> =
        serde_json::from_slice(archive.file(&format!("games/{game}/events.json")).unwrap()).unwrap();
    assert!(
        game_log
            .iter()
            .any(|e| e.request_id == format!("~withdrawn/{seat}")),
        "the withdrawal resigned Bot0's seat {seat} of {game}"
    );
    let result = log
        .iter()
        .find(|e| {
            matches!(TournamentEvent::decode(&e.payload).unwrap(),
                TournamentEvent::GameEnded { game: g, .. } if g == game)
        })
        .unwrap()
        .seq;
    let withdrawal = log.iter().find(|e| is_withdrawal(e)).unwrap().seq;
    assert!(
        withdrawal < result,
        "withdrawn at {withdrawal}, result at {result}"
    );

    let tampered = |change: &mut dyn FnMut(&mut Vec<proto::StoredEvent>)| {
        resigned(&genuine, &signing, |f| {
            edit_log(f, "tournament/events.json", Some(&stream), |events| {
                change(events)
            })
        })
    };

    // The withdrawal removed from the log, the chain computed again.
    let bytes = tampered(&mut |events| relist(events, |events| events.retain(|e| !is_withdrawal(e))));
    check(
        &bytes,
        &key,
        &format!(
            "tournament/events.json: event {}: game {game}: the server resigned seat {seat} (Bot0) \
             for a withdrawal (event ",
            result - 1
        ),
    );

    // Another player withdrawn instead.
    let bytes = tampered(&mut |events| {
        edit_tournament_event(events, |event| match event {
            TournamentEvent::Withdrawn { player } => {
                *player = carcassonne_competition::PlayerName::new("Bot1").unwrap();
                true
            }
            _ => false,
        });
    });
    check(
        &bytes,
        &key,
        &format!(
            "tournament/events.json: event {result}: game {game}: the server resigned seat {seat} \
             (Bot0) for a withdrawal (event "
        ),
    );

    // The withdrawal moved after the game's result (before round 2 is
    // paired, so the pairings still follow).
    let bytes = tampered(&mut |events| {
        relist(events, |events| {
            let at = events.iter().position(is_withdrawal).unwrap();
            let moved = events.remove(at);
            events.insert(result as usize - 1, moved);
        })
    });
    check(
        &bytes,
        &key,
        &format!(
            "tournament/events.json: event {result}: Bot0 withdrawn after the result of game {game} (event {})",
            result - 1
        ),
    );
}

/// A finished tournament's archive is built once: downloads at once, over
/// gRPC and HTTP, and later ones are the very same bytes (a build stamps
/// its time in the manifest, so a second build would differ).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_tournaments_archive_is_built_once_and_every_download_is_the_same_bytes() {
    let (server, _dir, name, first) = played(|names| proto::CreateTournamentRequest {
        rounds: 1,
        ..tournament_request("built-once-0000001", names)
    })
    .await;
    let server = std::sync::Arc::new(server);
    let id = name.trim_start_matches("tournaments/").to_owned();
    let downloads: Vec<_> = (0..20)
        .map(|n| {
            let (server, name, id) = (server.clone(), name.clone(), id.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(n)).await;
                if n % 2 == 0 {
                    export(&server, &name).await
                } else {
                    let answer =
                        crate::http::get(&server, &format!("/api/tournaments/{id}/archive"), &[]).await;
                    assert_eq!(answer.status, 200);
                    answer.body.to_vec()
                }
            })
        })
        .collect();
    for download in downloads {
        assert!(download.await.unwrap() == first, "another build");
    }
    assert!(export(&server, &name).await == first, "another build");
}
