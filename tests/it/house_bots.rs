//! House bots: built-in bots taking part in a tournament beside registered
//! players (`CreateTournamentRequest.house_bots`). A rated round robin of
//! two registered players' bot clients and two house bots, with clocks,
//! runs unattended to its end: the server plays the house bots' seats, only
//! the game between the registered players is rated, and the archive
//! audits clean.

use std::time::Duration;

use carcassonne::players::Registration;
use carcassonne::proto;
use carcassonne_archive::SigningKey;
use tonic::Code;
use tonic_types::StatusExt as _;

use crate::archive::audit;
use crate::bots::{league_server, organiser, players_client, tournaments_client};
use crate::support::{reason, with_token};
use crate::tournament_archive::export;
use crate::tournaments::{finish, start_bots, tournament_request};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_round_robin_with_house_bots_runs_to_its_end_and_its_archive_audits_clean() {
    let (server, dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let mut tournaments = tournaments_client(&server).await;

    // Levels are checked at the edge, and a house bot's name is no
    // registered player's.
    let (names, _played, tasks) = start_bots(&server, 2, None).await;
    let request = |request_id: &str, house_bots: &[&str]| proto::CreateTournamentRequest {
        format: proto::TournamentFormat::RoundRobin as i32,
        rounds: 0,
        rated: true,
        house_bots: house_bots.iter().map(|l| (*l).to_owned()).collect(),
        ..tournament_request(request_id, &names)
    };
    let refused = tournaments
        .create_tournament(with_token(
            request("house-bots-refused-01", &["greedy", "grandmaster"]),
            &boss,
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert_eq!(reason(&refused), "UNKNOWN_BOT_LEVEL");
    let details = refused.get_error_details();
    let field = details.error_info().unwrap().metadata.get("field").cloned();
    assert_eq!(field.as_deref(), Some("house_bots"));
    assert!(
        refused.message().starts_with("house_bots: "),
        "{}",
        refused.message()
    );
    let mut listed = request("house-bots-refused-02", &[]);
    listed.participants.push("players/greedy bot 1".to_owned());
    let refused = tournaments
        .create_tournament(with_token(listed, &boss))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");

    let created = tournaments
        .create_tournament(with_token(
            request("house-bots-round-robin-01", &["greedy", "search:20"]),
            &boss,
        ))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let house = ["players/greedy bot 1", "players/search bot 1"];
    assert_eq!(
        created.participants,
        ["players/Bot0", "players/Bot1", house[0], house[1]]
    );
    assert_eq!(
        created.house_bots,
        [
            proto::TournamentHouseBot {
                player: house[0].to_owned(),
                level: "greedy".to_owned()
            },
            proto::TournamentHouseBot {
                player: house[1].to_owned(),
                level: "search:20".to_owned()
            },
        ]
    );
    assert_eq!(created.rounds, 3);

    let end = finish(&server, &created.name, Duration::from_secs(600)).await;
    let tournament = end.tournament.unwrap();
    let standings = end.standings.unwrap();
    assert_eq!(tournament.status, proto::TournamentStatus::Finished as i32);
    assert!(standings.r#final);
    assert_eq!(standings.standings.len(), 4);
    for standing in &standings.standings {
        assert_eq!(standing.games, 3, "{standing:?}");
    }

    // Every game played to its end; the house bots' seats are bots' seats
    // at their levels, which never ran out of time; only the registered
    // players' game between themselves is rated.
    let mut games = server.client().await;
    let mut seen = 0;
    for game in tournament
        .paired_rounds
        .iter()
        .flat_map(|r| &r.tables)
        .flat_map(|t| &t.games)
    {
        assert!(game.ended && !game.ranks.is_empty(), "{game:?}");
        let state = crate::support::game(&mut games, &game.game).await;
        for (seat, player) in game.seats.iter().zip(&state.players) {
            let level = tournament
                .house_bots
                .iter()
                .find(|bot| bot.player == *seat)
                .map(|bot| bot.level.as_str());
            assert_eq!(player.bot, level.unwrap_or(""), "{}: {seat}", game.game);
            if level.is_some() {
                assert_eq!(player.account, "", "{}: {seat}", game.game);
                assert_ne!(
                    player.status,
                    proto::SeatStatus::OutOfTime as i32,
                    "{}: {seat}",
                    game.game
                );
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 6);

    // The ratings: each registered player's one game against the other.
    let mut players = players_client(&server).await;
    let mut counts = Vec::new();
    for _ in 0..100 {
        counts.clear();
        for name in &names {
            let request = proto::GetRatingHistoryRequest {
                name: format!("players/{name}"),
            };
            counts.push(
                players
                    .get_rating_history(request)
                    .await
                    .unwrap()
                    .into_inner()
                    .changes
                    .len(),
            );
        }
        if counts == [1, 1] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(counts, [1, 1]);
    for task in tasks {
        task.abort();
    }

    // The archive, audited offline as a user runs it.
    let bytes = export(&server, &created.name).await;
    server.stop().await;
    let key = SigningKey::from_file_text(&std::fs::read_to_string(dir.path().join("server.key")).unwrap())
        .unwrap()
        .public_key_hex();
    let (code, out) = audit(&bytes, &["--key", &key]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("every ranked game of the tournament without a house bot (1 game) rated once"),
        "{out}"
    );
    assert!(out.contains("the standings the fold gives (4 players"), "{out}");
    assert!(
        out.contains("every game (6 games) opened as the tournament's, rated unless it seats a house bot"),
        "{out}"
    );
}
