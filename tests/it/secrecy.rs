//! Hidden information never leaks: the seed and the order of the bag reach
//! no response (gRPC or HTTP) and no log line before the game ends, and the
//! server's secret key none ever.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use carcassonne::proto::{self, game_event::Event as E};

use crate::support::{act_legal, create_request, game, hex, legal, start};

/// Every log line of the test binary's servers, from the start on.
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let _ = tracing_subscriber::fmt()
            .with_env_filter("debug,carcassonne=trace,carcassonne_store=trace")
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()))
            .try_init();
        logs
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_response_or_log_line_shows_the_seed_or_the_coming_draws() {
    let logs = captured_logs();
    let (server, mut client) = start().await;
    let seed = [0x5a; 32];
    let mut request = create_request("secrecy", 2, &[proto::Expansion::River], 0);
    request.seed = hex(&seed);
    let created = client.create_game(request).await.unwrap().into_inner();
    let name = created.game.clone().unwrap().name;
    let tokens = crate::support::tokens(&created);

    // Every response while the game runs, with the number of tiles drawn.
    let mut seen: Vec<(usize, String)> = vec![(1, format!("{created:?}"))];
    let mut draws: Vec<String> = Vec::new();
    let mut finished = false;
    for step in 0.. {
        let legal = legal(&mut client, &name).await;
        let Some(pending) = legal.pending.clone() else {
            break;
        };
        if pending.kind == proto::DecisionKind::Unspecified as i32 {
            break;
        }
        seen.push((draws.len(), format!("{legal:?}")));
        let answer = act_legal(&mut client, &name, &tokens, &legal, step).await;
        for event in &answer.events {
            if let Some(E::TileDrawn(t)) = &event.event {
                draws.push(t.kind.clone());
            }
            finished |= event.finished;
        }
        if !finished {
            seen.push((draws.len(), format!("{answer:?}")));
            let game = client
                .get_game(proto::GetGameRequest { name: name.clone() })
                .await
                .unwrap()
                .into_inner();
            seen.push((draws.len(), format!("{game:?}")));
            // The same over HTTP: JSON, the picture, the export.
            let id = &name["games/".len()..];
            for path in [
                format!("/api/games/{id}"),
                "/api/games".to_owned(),
                format!("/api/games/{id}/export"),
                format!("/api/games/{id}/verify"),
                format!("/games/{id}/board.svg?coordinates=true"),
            ] {
                let answer = crate::http::get(&server, &path, &[]).await;
                assert_eq!(answer.status, 200, "{path}");
                seen.push((draws.len(), answer.text()));
            }
            // A seat's token in its header: never logged.
            let seat = format!("Bearer {}", tokens[1]);
            let answer =
                crate::http::get(&server, &format!("/api/games/{id}"), &[("authorization", &seat)]).await;
            assert_eq!(answer.status, 200);
            seen.push((draws.len(), answer.text()));
        }
    }
    assert!(finished);
    let seed_hex = hex(&seed);
    let seed_bytes = format!("{:?}", seed.to_vec());
    for (drawn, text) in &seen {
        assert!(!text.contains(&seed_hex), "the seed in a response");
        assert!(!text.contains(&seed_bytes), "the seed's bytes in a response");
        // The next few draws, in order, in no response before they happen.
        let coming = &draws[(*drawn).min(draws.len())..];
        if coming.len() >= 4 {
            let order = format!("{:?}", &coming[..4]);
            assert!(!text.contains(&order), "the coming draws {order} in a response");
            let joined = coming[..4].concat();
            assert!(!text.contains(&joined), "the coming draws {joined} in a response");
        }
    }
    let logged = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        logged.contains("secrecy") || logged.contains(&name[6..]),
        "the logs were not captured"
    );
    assert!(!logged.contains(&seed_hex), "the seed in the logs");
    let order: Vec<String> = draws.iter().map(|d| format!("{d:?}")).collect();
    assert!(
        !logged.contains(&order[..6].join(", ")),
        "the draw order in the logs"
    );
    for token in &tokens {
        assert!(!logged.contains(token.as_str()), "a seat token in the logs");
    }
    // At the end, the seed is revealed.
    assert_eq!(game(&mut client, &name).await.seed, seed_hex);

    // The server's secret key: in no answer, its archives and its public
    // key included, and in no log line.
    let key_file = std::fs::read_to_string(server.data().unwrap().join("server.key")).unwrap();
    let secret = key_file
        .lines()
        .find_map(|line| line.strip_prefix("ed25519-secret "))
        .unwrap()
        .to_owned();
    assert_eq!(secret.len(), 64);
    let id = &name["games/".len()..];
    let mut answers: Vec<String> = seen.into_iter().map(|(_, text)| text).collect();
    let mut watcher = server.watcher().await;
    let key = watcher
        .get_server_key(proto::GetServerKeyRequest {})
        .await
        .unwrap()
        .into_inner();
    answers.push(format!("{key:?}"));
    let mut archive = watcher
        .export_game_archive(proto::ExportGameArchiveRequest { name: name.clone() })
        .await
        .unwrap()
        .into_inner();
    use tokio_stream::StreamExt as _;
    while let Some(chunk) = archive.next().await {
        let chunk = chunk.unwrap().chunk;
        answers.push(format!("{chunk:?}"));
        answers.push(String::from_utf8_lossy(&chunk).into_owned());
    }
    for path in [
        format!("/api/games/{id}/archive"),
        "/api/server/key".to_owned(),
        format!("/api/games/{id}/export"),
    ] {
        let answer = crate::http::get(&server, &path, &[]).await;
        assert_eq!(answer.status, 200, "{path}");
        answers.push(answer.text());
    }
    assert!(
        answers.iter().any(|a| a.contains(&key.public_key)),
        "the public key is shown"
    );
    let secret_bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&secret[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let secret_debug = format!("{secret_bytes:?}");
    let secret_upper = secret.to_uppercase();
    for text in &answers {
        assert!(!text.contains(&secret), "the secret key in an answer");
        assert!(!text.contains(&secret_upper), "the secret key in an answer");
        assert!(
            !text.contains(&secret_debug),
            "the secret key's bytes in an answer"
        );
        assert!(
            !text.as_bytes().windows(32).any(|w| w == secret_bytes.as_slice()),
            "the secret key's raw bytes in an answer"
        );
    }
    server.stop().await;
    let logged = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        logged.contains(&key.public_key),
        "the public key is logged at start"
    );
    assert!(!logged.contains(&secret), "the secret key in the logs");
    assert!(!logged.contains(&secret_upper), "the secret key in the logs");
    assert!(
        !logged.contains(&secret_debug),
        "the secret key's bytes in the logs"
    );
}

/// The files under `dir`, read whole.
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            found.push((path, bytes));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_log_or_stored_byte_shows_a_key_or_a_running_tournaments_seed() {
    use carcassonne::players::Registration;

    use crate::bots::{
        ADMIN_KEY, Behaviour, Played, organiser, players_client, register, run_bot, tournaments_client,
    };
    use crate::support::with_token;

    let logs = captured_logs();
    let (server, dir) = crate::bots::league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let mut keys = vec![boss.clone()];
    let mut names = Vec::new();
    let mut tasks = Vec::new();
    for i in 0..4 {
        let name = format!("Keeper{i}");
        let key = register(&server, &name).await;
        let played = Arc::new(Played::default());
        tasks.push(tokio::spawn(run_bot(
            server.url(),
            key.clone(),
            Behaviour {
                choice: i,
                ..Behaviour::default()
            },
            played.clone(),
        )));
        played.listening.notified().await;
        keys.push(key);
        names.push(name);
    }
    let mut tournaments = tournaments_client(&server).await;
    let mut players = players_client(&server).await;
    let request = proto::CreateTournamentRequest {
        rounds: 2,
        rated: true,
        ..crate::tournaments::tournament_request("secrecy-of-keys-01", &names)
    };
    let created = tournaments
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner();
    let name = created.tournament.clone().unwrap().name;
    // What anyone can read while it runs.
    let mut running: Vec<String> = vec![format!("{created:?}")];
    let tournament = tournaments
        .get_tournament(proto::GetTournamentRequest { name: name.clone() })
        .await
        .unwrap()
        .into_inner();
    running.push(format!("{tournament:?}"));
    let standings = tournaments
        .get_standings(proto::GetStandingsRequest { name: name.clone() })
        .await
        .unwrap()
        .into_inner();
    running.push(format!("{standings:?}"));
    let list = tournaments
        .list_tournaments(proto::ListTournamentsRequest::default())
        .await
        .unwrap()
        .into_inner();
    running.push(format!("{list:?}"));
    let end = crate::tournaments::finish(&server, &name, std::time::Duration::from_secs(120)).await;
    let seed = end.tournament.clone().unwrap().seed;
    assert_eq!(seed.len(), 64, "the seed is revealed at the end");
    for text in &running {
        assert!(!text.contains(&seed), "a running tournament's seed in an answer");
    }

    // After it: every answer about players and the tournament.
    let mut answers = running;
    answers.push(format!("{end:?}"));
    for player in names.iter().chain(["Organiser".to_owned()].iter()) {
        let got = players
            .get_player(proto::GetPlayerRequest {
                name: format!("players/{player}"),
            })
            .await
            .unwrap()
            .into_inner();
        answers.push(format!("{got:?}"));
        let history = players
            .get_rating_history(proto::GetRatingHistoryRequest {
                name: format!("players/{player}"),
            })
            .await
            .unwrap()
            .into_inner();
        answers.push(format!("{history:?}"));
    }
    let board = players
        .get_leaderboard(proto::GetLeaderboardRequest {
            pool: proto::RatingPool::Duel as i32,
            limit: 10,
        })
        .await
        .unwrap()
        .into_inner();
    answers.push(format!("{board:?}"));
    let mut archive = tournaments
        .export_tournament_archive(proto::ExportTournamentArchiveRequest { name: name.clone() })
        .await
        .unwrap()
        .into_inner();
    use tokio_stream::StreamExt as _;
    while let Some(chunk) = archive.next().await {
        answers.push(String::from_utf8_lossy(&chunk.unwrap().chunk).into_owned());
    }
    for task in tasks {
        task.abort();
    }
    server.stop().await;

    let logged = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(logged.contains("Keeper0"), "the logs were not captured");
    let stored = files_under(dir.path());
    // The scan sees what is stored as written: the players' names are.
    assert!(
        stored
            .iter()
            .any(|(_, bytes)| bytes.windows(7).any(|w| w == b"Keeper0")),
        "the stored bytes are not readable as written"
    );
    for key in keys.iter().map(String::as_str).chain([ADMIN_KEY]) {
        assert!(!logged.contains(key), "a key in the logs");
        for text in &answers {
            assert!(!text.contains(key), "a key in an answer");
        }
        for (path, bytes) in &stored {
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "a key stored in {}",
                path.display()
            );
        }
    }
}
