//! Duplicate bags: every table of a round draws the same tiles, so a
//! table that is ahead (or done) would show the others their coming
//! tiles. Nobody but a game's own seats sees such a game until its round
//! is over.

use std::time::Duration;

use carcassonne::players::Registration;
use carcassonne::proto;
use tonic::Code;

use crate::bots::{league_server, organiser, register, tournaments_client};
use crate::support::{TestServer, reason, with_token};
use crate::tournaments::{finish, start_bots, tournament_request};

/// A spectator's GetGame of `name`: the game, or the refusal's code and
/// reason.
async fn spectate(server: &TestServer, name: &str) -> Result<proto::Game, (Code, String)> {
    let mut client = server.client().await;
    client
        .get_game(proto::GetGameRequest {
            name: name.to_owned(),
        })
        .await
        .map(|r| r.into_inner().game.unwrap())
        .map_err(|status| (status.code(), reason(&status)))
}

async fn listed(server: &TestServer) -> Vec<String> {
    let mut client = server.client().await;
    let page = client
        .list_games(proto::ListGamesRequest {
            page_size: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    page.games.into_iter().map(|g| g.name).collect()
}

#[tokio::test]
async fn a_duplicate_round_is_sealed_to_everyone_but_each_games_seats_until_it_is_over() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let (mut names, _played, tasks) = start_bots(&server, 3, None).await;
    // Idle never acts: its table runs on while the other one finishes.
    let idle = register(&server, "Idle").await;
    names.push("Idle".to_owned());
    let mut client = tournaments_client(&server).await;
    let request = proto::CreateTournamentRequest {
        rounds: 1,
        duplicate_bags: true,
        time_control: Some(proto::TimeControl {
            decision_ms: 600_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
            ..Default::default()
        }),
        ..tournament_request("sealed-duplicate-01", &names)
    };
    let created = client
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let tables = &created.paired_rounds[0].tables;
    assert_eq!(tables.len(), 2);
    let (idle_table, other_table): (Vec<_>, Vec<_>) = tables
        .iter()
        .partition(|t| t.players.iter().any(|p| p == "players/Idle"));
    let idle_game = idle_table[0].games[0].game.clone();
    let other_game = other_table[0].games[0].game.clone();

    // The other table plays to its end.
    let mut ended = false;
    for _ in 0..600 {
        let now = client
            .get_tournament(proto::GetTournamentRequest {
                name: created.name.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .tournament
            .unwrap();
        let done = now.paired_rounds[0]
            .tables
            .iter()
            .flat_map(|t| &t.games)
            .any(|g| g.game == other_game && !g.ranks.is_empty());
        if done {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ended, "{other_game} did not end");

    // Both games are sealed: the finished one would show Idle's table its
    // tiles, the running one the order of the bag.
    let sealed = Err((Code::FailedPrecondition, "GAME_SEALED".to_owned()));
    assert_eq!(spectate(&server, &other_game).await, sealed);
    assert_eq!(spectate(&server, &idle_game).await, sealed);
    let listing = listed(&server).await;
    assert!(
        !listing.contains(&other_game) && !listing.contains(&idle_game),
        "{listing:?}"
    );
    let mut watch = server.watcher().await;
    let export = watch
        .export_game(crate::support::export_request(&other_game))
        .await
        .unwrap_err();
    assert_eq!(reason(&export), "GAME_SEALED");
    let id = other_game.trim_start_matches("games/");
    for path in [format!("/api/games/{id}"), format!("/games/{id}/board.svg")] {
        let answer = crate::http::get(&server, &path, &[]).await;
        assert_ne!(answer.status, 200, "{path}");
        assert!(!answer.text().contains("\"seed\""), "{path}: {}", answer.text());
    }
    assert_eq!(
        crate::http::get(&server, &format!("/api/games/{id}"), &[])
            .await
            .reason(),
        "GAME_SEALED"
    );
    // A seat's own player sees their game.
    let mut games = server.client().await;
    let own = games
        .get_game(with_token(
            proto::GetGameRequest {
                name: idle_game.clone(),
            },
            &idle,
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(own.name, idle_game);

    // Idle withdraws: its game is forfeited, the round is over, and both
    // games open to everyone, the seed with them.
    client
        .withdraw_player(with_token(
            proto::WithdrawPlayerRequest {
                name: created.name.clone(),
                player: "players/Idle".to_owned(),
            },
            &boss,
        ))
        .await
        .unwrap();
    finish(&server, &created.name, Duration::from_secs(60)).await;
    for game in [&other_game, &idle_game] {
        let seen = spectate(&server, game).await.unwrap();
        assert_eq!(seen.seed.len(), 64, "{game}");
    }
    let listing = listed(&server).await;
    assert!(
        listing.contains(&other_game) && listing.contains(&idle_game),
        "{listing:?}"
    );
    for task in tasks {
        task.abort();
    }
}

/// Every way a seat reads its own game, as the seat with `key`: the seed
/// each of them shows (empty: none), and whether the archive is refused.
async fn seeds_seen_by_a_seat(server: &TestServer, game: &str, key: &str) -> (Vec<String>, Option<String>) {
    let mut games = server.client().await;
    let mut watch = server.watcher().await;
    let get = games
        .get_game(with_token(
            proto::GetGameRequest {
                name: game.to_owned(),
            },
            key,
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    let export = watch
        .export_game(with_token(crate::support::export_request(game), key))
        .await
        .unwrap()
        .into_inner();
    assert!(
        export.seed.is_empty() == export.events.is_empty(),
        "the log (with the creation's seed) comes with the seed"
    );
    let mut stream = crate::support::watch(
        &mut watch,
        with_token(crate::support::watch_request(game, None), key),
    )
    .await;
    let snapshot = crate::support::snapshot(&mut stream).await;
    let steps = watch
        .replay_game(with_token(
            crate::support::replay_request(game, Some(1), None),
            key,
        ))
        .await
        .unwrap()
        .into_inner();
    let steps: Vec<_> = tokio_stream::StreamExt::collect::<Vec<_>>(steps).await;
    let last_step = steps.last().unwrap().as_ref().unwrap().game.clone().unwrap();
    let at = watch
        .get_game_at_version(with_token(
            proto::GetGameAtVersionRequest {
                name: game.to_owned(),
                version: get.version,
            },
            key,
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    let archive = watch
        .export_game_archive(with_token(
            proto::ExportGameArchiveRequest {
                name: game.to_owned(),
            },
            key,
        ))
        .await;
    let archive_refusal = match archive {
        Err(status) => Some(reason(&status)),
        Ok(chunks) => {
            let chunks: Vec<_> = tokio_stream::StreamExt::collect::<Vec<_>>(chunks.into_inner()).await;
            chunks
                .into_iter()
                .find_map(|c| c.err())
                .map(|status| reason(&status))
        }
    };
    (
        vec![get.seed, export.seed, snapshot.seed, last_step.seed, at.seed],
        archive_refusal,
    )
}

#[tokio::test]
async fn a_finished_duplicate_game_keeps_its_seed_from_its_own_seats_while_its_round_runs() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let mut keys = std::collections::HashMap::new();
    for name in ["Ada", "Brun", "Cleo", "Dag"] {
        keys.insert(format!("players/{name}"), register(&server, name).await);
    }
    let names: Vec<String> = ["Ada", "Brun", "Cleo", "Dag"].map(String::from).to_vec();
    let mut tournaments = tournaments_client(&server).await;
    let request = proto::CreateTournamentRequest {
        rounds: 1,
        duplicate_bags: true,
        time_control: Some(proto::TimeControl {
            decision_ms: 600_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
            ..Default::default()
        }),
        ..tournament_request("sealed-seed-seats-01", &names)
    };
    let created = tournaments
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let tables = &created.paired_rounds[0].tables;
    assert_eq!(tables.len(), 2);
    let (first, second) = (&tables[0], &tables[1]);
    let first_game = first.games[0].game.clone();
    let second_game = second.games[0].game.clone();
    let resigner = &keys[&first.players[0]];

    // A seat of the first table resigns at once: its game is over, but the
    // second table still draws from the same bag.
    let mut games = server.client().await;
    let reader = games.clone();
    let version_of = |game: &str, key: &str| {
        let mut games = reader.clone();
        let request = with_token(
            proto::GetGameRequest {
                name: game.to_owned(),
            },
            key,
        );
        async move {
            games
                .get_game(request)
                .await
                .unwrap()
                .into_inner()
                .game
                .unwrap()
                .version
        }
    };
    let version = version_of(&first_game, resigner).await;
    let resign = || proto::action::Action::Resign(proto::Resign {});
    let answer = games
        .act(with_token(
            crate::support::act(&first_game, version, "resign-1", resign()),
            resigner,
        ))
        .await
        .unwrap()
        .into_inner();
    let ended = answer.game.unwrap();
    assert_eq!(ended.status, proto::GameStatus::Finished as i32);
    assert_eq!(
        ended.seed, "",
        "the Act answer shows no seed while the round runs"
    );
    for key in [resigner, &keys[&first.players[1]]] {
        let (seeds, archive) = seeds_seen_by_a_seat(&server, &first_game, key).await;
        assert!(seeds.iter().all(String::is_empty), "{seeds:?}");
        assert_eq!(archive.as_deref(), Some("GAME_SEALED"));
    }

    // The second table ends too: the round, and the tournament, are over,
    // and the seat sees the seed everywhere.
    let version = version_of(&second_game, &keys[&second.players[0]]).await;
    games
        .act(with_token(
            crate::support::act(&second_game, version, "resign-2", resign()),
            &keys[&second.players[0]],
        ))
        .await
        .unwrap();
    finish(&server, &created.name, Duration::from_secs(60)).await;
    let (seeds, archive) = seeds_seen_by_a_seat(&server, &first_game, resigner).await;
    assert!(seeds.iter().all(|s| s.len() == 64), "{seeds:?}");
    assert_eq!(archive, None);
}
