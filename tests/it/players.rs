//! Registered players: registration and its option, keys that act only in
//! their player's seats, organisers, one stream for many games, ratings.

use std::sync::Arc;
use std::time::Duration;

use carcassonne::players::Registration;
use carcassonne::proto;
use tonic::Code;

use crate::bots::{
    self, ADMIN_KEY, Behaviour, Played, agreed_game, challenge_request, league_server, players_client,
    register,
};
use crate::support::{act_legal, create_request, game, legal_as, reason, with_token};

/// A creation that names registered players' seats, in seat order.
fn accounts_request(request_id: &str, names: &[&str]) -> proto::CreateGameRequest {
    proto::CreateGameRequest {
        accounts: names.iter().map(|n| format!("players/{n}")).collect(),
        ..create_request(request_id, names.len(), &[], 7)
    }
}

#[tokio::test]
async fn registration_shows_a_key_once_refuses_taken_names_and_follows_its_option() {
    let (server, _dir) = league_server(Registration::Open).await;
    let mut players = players_client(&server).await;
    let answer = players
        .register_player(proto::RegisterPlayerRequest {
            name: "Ada".to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.api_key.len(), 64);
    assert_eq!(answer.player.unwrap().name, "players/Ada");
    // The key is never shown again.
    let shown = players
        .get_player(proto::GetPlayerRequest {
            name: "players/Ada".to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!format!("{shown:?}").contains(&answer.api_key));
    // Names are unique regardless of case.
    let taken = players
        .register_player(proto::RegisterPlayerRequest {
            name: "ada".to_owned(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (taken.code(), reason(&taken).as_str()),
        (Code::AlreadyExists, "NAME_TAKEN")
    );
    let bad = players
        .register_player(proto::RegisterPlayerRequest {
            name: "no spaces".to_owned(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);

    let (closed, _dir) = league_server(Registration::Admin).await;
    let mut players = players_client(&closed).await;
    let refused = players
        .register_player(proto::RegisterPlayerRequest {
            name: "Brun".to_owned(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::PermissionDenied, "REGISTRATION_CLOSED")
    );
    register(&closed, "Brun").await;
}

#[tokio::test]
async fn only_the_admin_makes_organisers_and_a_key_acts_only_in_its_players_seats() {
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let _cleo = register(&server, "Cleo").await;
    let mut players = players_client(&server).await;
    let promote = proto::SetOrganiserRequest {
        name: "players/Ada".to_owned(),
        organiser: true,
    };
    let refused = players
        .set_organiser(with_token(promote.clone(), &ada))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "NOT_ADMIN");
    let promoted = players
        .set_organiser(with_token(promote, ADMIN_KEY))
        .await
        .unwrap()
        .into_inner();
    assert!(promoted.player.unwrap().organiser);

    let mut client = server.client().await;
    let name = agreed_game(
        &server,
        challenge_request("accounts-game-00001", &["Ada", "Brun"], false),
        &[&ada, &brun],
    )
    .await;
    let game_view = game(&mut client, &name).await;
    assert_eq!(game_view.players[1].account, "players/Brun");
    // Ada's key acts for Ada's seat (0), and not for Brun's.
    let legal = legal_as(&mut client, &name, &ada).await;
    assert_eq!(legal.pending.as_ref().unwrap().seat, 0);
    let keys = vec![ada.clone(), brun.clone()];
    let acted = act_legal(&mut client, &name, &keys, &legal, 0).await;
    let legal = legal_as(&mut client, &name, &ada).await;
    assert_eq!(legal.version, acted.version);
    let action = legal.actions[0].action.unwrap();
    let wrong_seat = client
        .act(with_token(
            crate::support::act(&name, legal.version, "not-mine", action),
            &brun,
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&wrong_seat), "NOT_YOUR_TURN");
    // A key of a player with no seat in the game is no token of it.
    let other = agreed_game(
        &server,
        challenge_request("accounts-game-00002", &["Brun", "Cleo"], false),
        &[&brun, &_cleo],
    )
    .await;
    let legal = legal_as(&mut client, &other, &brun).await;
    let action = legal.actions[0].action.unwrap();
    let stranger = client
        .act(with_token(
            crate::support::act(&other, legal.version, "stranger", action),
            &ada,
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&stranger), "BAD_TOKEN");
    // A player holds one seat of a game, with their own key.
    let twice = client
        .create_game(with_token(
            accounts_request("accounts-game-3", &["Ada", "Ada"]),
            &ada,
        ))
        .await
        .unwrap_err();
    assert_eq!(twice.code(), Code::InvalidArgument);
    // A creation with a key seats its player, and guests: no token for
    // the player's seat.
    let mut own = accounts_request("accounts-game-4", &["Ada", "Brun"]);
    own.accounts[1] = String::new();
    let created = client
        .create_game(with_token(own, &ada))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(created.tokens.len(), 1);
    assert_eq!(created.tokens[0].seat, 1);
    // The server's own streams are no games.
    for hidden in ["games/@players", "games/@ratings"] {
        let status = client
            .get_game(proto::GetGameRequest {
                name: hidden.to_owned(),
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::NotFound, "{hidden}");
    }
    let listed = client
        .list_games(proto::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(listed.games.iter().all(|g| !g.name.contains('@')));
    assert_eq!(listed.games.len(), 3);
}

#[tokio::test]
async fn a_bot_plays_twenty_games_over_one_stream_and_reconnects_without_missing_a_decision() {
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let (ada_played, brun_played) = (Arc::new(Played::default()), Arc::new(Played::default()));
    let ada_bot = tokio::spawn(bots::run_bot(
        server.url(),
        ada.clone(),
        Behaviour {
            reconnect_after: Some(300),
            ..Behaviour::default()
        },
        ada_played.clone(),
    ));
    let brun_bot = tokio::spawn(bots::run_bot(
        server.url(),
        brun.clone(),
        Behaviour {
            choice: 1,
            ..Behaviour::default()
        },
        brun_played.clone(),
    ));
    let mut client = server.client().await;
    let mut names = Vec::new();
    for n in 0..20 {
        // Ada plays first in half of them.
        let (seats, keys) = if n % 2 == 0 {
            (["Ada", "Brun"], [&ada, &brun])
        } else {
            (["Brun", "Ada"], [&brun, &ada])
        };
        let request = challenge_request(&format!("twenty-games-{n:08}"), &seats, true);
        names.push(agreed_game(&server, request, &keys.map(String::as_str)).await);
    }
    // No clock: a decision the bots missed would stall its game forever.
    let all_ended = async {
        loop {
            let ended = ada_played.ended.lock().unwrap().len();
            if ended == 20 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(240), all_ended)
        .await
        .expect("every game ends: no decision was missed");
    ada_bot.abort();
    brun_bot.abort();
    // Every action of Ada's seats is one she answered from her stream.
    let mut ada_actions = 0;
    for name in &names {
        let finished = game(&mut client, name).await;
        assert_eq!(finished.status, proto::GameStatus::Finished as i32, "{name}");
        let ada_seat = finished
            .players
            .iter()
            .position(|p| p.account == "players/Ada")
            .unwrap();
        let request = crate::support::replay_request(name, Some(1), None);
        let events = crate::support::replay(&mut server.watcher().await, request).await;
        ada_actions += events
            .iter()
            .filter(|e| e.event.as_ref().is_some_and(|e| e.seat == Some(ada_seat as u32)))
            .count();
    }
    assert!(
        ada_played.actions.load(std::sync::atomic::Ordering::SeqCst) >= 300,
        "the bot reconnected mid-way"
    );
    assert_eq!(
        ada_actions,
        ada_played.actions.load(std::sync::atomic::Ordering::SeqCst)
    );
    assert_eq!(brun_played.ended.lock().unwrap().len(), 20);
}

#[tokio::test]
async fn ratings_follow_rated_games_only_and_recompute_from_the_stored_results() {
    let (server, dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let cleo = register(&server, "Cleo").await;
    let mut client = server.client().await;
    let keys = |names: &[&str]| {
        names
            .iter()
            .map(|n| match *n {
                "Ada" => ada.clone(),
                "Brun" => brun.clone(),
                _ => cleo.clone(),
            })
            .collect::<Vec<_>>()
    };
    // A rated duel, an unrated duel, a rated game of three, an aborted one.
    let plays: [(&str, &[&str], bool); 3] = [
        ("rated-duel-000001", &["Ada", "Brun"], true),
        ("unrated-duel-00001", &["Ada", "Brun"], false),
        ("rated-three-00001", &["Ada", "Brun", "Cleo"], true),
    ];
    for (id, names, rated) in plays {
        let held = keys(names);
        let refs: Vec<&str> = held.iter().map(String::as_str).collect();
        let game = agreed_game(&server, challenge_request(id, names, rated), &refs).await;
        crate::support::play_to_end(&mut client, &game, &held).await;
    }
    let aborted = agreed_game(
        &server,
        challenge_request("rated-aborted-0001", &["Ada", "Cleo"], true),
        &[&ada, &cleo],
    )
    .await;
    let abort = proto::action::Action::Abort(proto::Abort {});
    client
        .act(with_token(crate::support::act(&aborted, 2, "abort", abort), &ada))
        .await
        .unwrap();
    let mut players = players_client(&server).await;
    // The ratings follow once the games end (the recorder runs beside).
    let history = |name: &str| proto::GetRatingHistoryRequest {
        name: format!("players/{name}"),
    };
    let mut ada_history = Vec::new();
    for _ in 0..100 {
        ada_history = players
            .get_rating_history(history("Ada"))
            .await
            .unwrap()
            .into_inner()
            .changes;
        if ada_history.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pools: Vec<_> = ada_history.iter().map(|c| c.pool).collect();
    assert_eq!(
        pools,
        [
            proto::RatingPool::Duel as i32,
            proto::RatingPool::Multiplayer as i32
        ]
    );
    let cleo_history = players
        .get_rating_history(history("Cleo"))
        .await
        .unwrap()
        .into_inner()
        .changes;
    assert_eq!(cleo_history.len(), 1, "the aborted game changes no rating");
    // Everything served of the ratings: both pools' leaderboards (rank,
    // player, value, deviation, games) and each player's own ratings.
    let mut served = Vec::new();
    for pool in [proto::RatingPool::Duel, proto::RatingPool::Multiplayer] {
        let board = players
            .get_leaderboard(proto::GetLeaderboardRequest {
                pool: pool as i32,
                limit: 0,
            })
            .await
            .unwrap()
            .into_inner();
        let entries: Vec<_> = board
            .entries
            .into_iter()
            .map(|e| (e.rank, e.player, e.rating.unwrap()))
            .collect();
        served.push(entries);
    }
    assert_eq!(served[0].len(), 2, "Ada and Brun's duel: {served:?}");
    assert_eq!(served[1].len(), 3, "the game of three: {served:?}");
    let mut served_players = Vec::new();
    for name in ["Ada", "Brun", "Cleo"] {
        let player = players
            .get_player(proto::GetPlayerRequest {
                name: format!("players/{name}"),
            })
            .await
            .unwrap()
            .into_inner()
            .player
            .unwrap();
        served_players.push((player.duel_rating, player.multiplayer_rating));
    }
    drop(players);
    server.stop().await;
    // Recomputed from the stored results alone: the same numbers.
    let store =
        carcassonne_store::SledStore::open(dir.path(), carcassonne_store::StoreConfig::default()).unwrap();
    let stream = carcassonne_store::GameId::new(carcassonne::ratings::RATINGS_STREAM).unwrap();
    let stored = carcassonne_store::EventStore::read_game(&store, &stream, 1).unwrap();
    assert_eq!(stored.len(), 2, "two rated games ended");
    let (ratings, _) = carcassonne::ratings::fold(&stored).unwrap();
    let view = |rating: carcassonne_competition::Rating| proto::Rating {
        value: rating.value,
        deviation: rating.deviation,
        games: rating.games,
    };
    let recomputed: Vec<Vec<_>> = [
        carcassonne_competition::Pool::Duel,
        carcassonne_competition::Pool::Multiplayer,
    ]
    .into_iter()
    .map(|pool| {
        ratings
            .leaderboard(pool)
            .into_iter()
            .enumerate()
            .map(|(i, (name, rating))| (i as u32 + 1, format!("players/{name}"), view(rating)))
            .collect()
    })
    .collect();
    // Bit for bit: the same results folded give the same floats.
    assert_eq!(served, recomputed);
    let recomputed_players: Vec<_> = ["Ada", "Brun", "Cleo"]
        .into_iter()
        .map(|name| {
            let name = carcassonne_competition::PlayerName::new(name).unwrap();
            (
                ratings
                    .rating(carcassonne_competition::Pool::Duel, &name)
                    .map(view),
                ratings
                    .rating(carcassonne_competition::Pool::Multiplayer, &name)
                    .map(view),
            )
        })
        .collect();
    assert_eq!(served_players, recomputed_players);
    // Cleo played no rated duel; everyone played one rated game per pool,
    // which left them less uncertain than the starting deviations.
    assert_eq!(served_players[2].0, None);
    for (entries, start) in served.iter().zip([350.0, 25.0 / 3.0]) {
        for (_, _, rating) in entries {
            assert_eq!(rating.games, 1, "{served:?}");
            assert!(rating.deviation < start, "{served:?}");
        }
    }
}

/// A player's stream learns that a game is over before the recorder may
/// have recorded its end (the recorder fell behind the server-wide
/// stream): the game must stay among those the recorder's catch-up
/// records, or its rating is never stored (the 64-player tournament
/// bench found a rated game left unrated that way).
#[test]
fn a_game_a_player_saw_end_is_still_recorded_until_the_recorder_has() {
    use carcassonne::games::stored::Opened;
    use carcassonne::players::seats::Seats;
    use carcassonne_store::{EventStore, GameId, MemoryStore, RequestId};

    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
    let id = GameId::new("rated-1").unwrap();
    let opened = Opened {
        token_hashes: vec![Default::default(); 2],
        accounts: vec![Some("Ada".into()), Some("Brun".into())],
        rated: true,
        ..Opened::default()
    };
    store
        .append(&id, 0, &RequestId::none(), &[opened.to_new_event()])
        .unwrap();
    let seats = Seats::build(store).unwrap();
    let to_record =
        |seats: &Seats| -> Vec<GameId> { seats.ends_to_record().into_iter().map(|(id, _)| id).collect() };
    assert_eq!(to_record(&seats), std::slice::from_ref(&id));
    // Ada's stream saw the end.
    seats.finished(&id);
    assert!(seats.open_games_of("Ada").is_empty());
    assert_eq!(
        to_record(&seats),
        std::slice::from_ref(&id),
        "the recorder's catch-up would skip it"
    );
    seats.end_recorded(&id);
    assert!(to_record(&seats).is_empty());
}

/// A player's stream asks the index for the player's open games up to the
/// position it starts at: a game opened a moment before (its opening not
/// yet met by the recorder or any stream, or appended by another node)
/// must be among them, or its first decision is never sent.
#[test]
fn the_seats_index_learns_every_game_opened_up_to_a_position() {
    use carcassonne::games::stored::Opened;
    use carcassonne::players::seats::Seats;
    use carcassonne_store::{EventStore, GameId, MemoryStore, RequestId};

    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
    let seats = Seats::build(store.clone()).unwrap();
    let open = |name: &str, accounts: [&str; 2]| {
        let opened = Opened {
            token_hashes: vec![Default::default(); 2],
            accounts: accounts.map(|a| Some(a.into())).to_vec(),
            ..Opened::default()
        };
        let id = GameId::new(name).unwrap();
        store
            .append(&id, 0, &RequestId::none(), &[opened.to_new_event()])
            .unwrap();
        id
    };
    let first = open("first", ["Ada", "Brun"]);
    let second = open("second", ["Brun", "Cy"]);
    assert!(seats.open_games_of("Ada").is_empty(), "built before either");
    seats.learn_through(store.last_position() - 1).unwrap();
    assert_eq!(
        seats.open_games_of("Brun"),
        std::slice::from_ref(&first),
        "not past the position"
    );
    seats.learn_through(store.last_position()).unwrap();
    assert_eq!(seats.open_games_of("Brun"), [first.clone(), second.clone()]);
    assert_eq!(seats.open_games_of("Cy"), std::slice::from_ref(&second));
    // An opening that does not decode is that game's trouble only.
    let broken = GameId::new("broken").unwrap();
    let garbage = carcassonne_store::NewEvent {
        actor: carcassonne_store::Actor::Server,
        schema: carcassonne::games::stored::OPENED_SCHEMA,
        payload: b"not an opening".to_vec(),
    };
    store.append(&broken, 0, &RequestId::none(), &[garbage]).unwrap();
    let after = open("after-broken", ["Cy", "Ada"]);
    seats.learn_through(store.last_position()).unwrap();
    assert_eq!(seats.open_games_of("Cy"), [after.clone(), second]);
    assert!(seats.of(&broken).is_err());
    // A follower's events move the index along without reading the store.
    let third = open("third", ["Ada", "Cy"]);
    let opening = store.read_game(&third, 1).unwrap().remove(0);
    seats.passed(&opening);
    assert_eq!(seats.open_games_of("Ada"), [after, first, third]);
}

/// The messages of a player's stream after `after`, without keep-alives,
/// until the end of game `last`; the snapshot's go to `snapshot`.
async fn player_messages_until_end_of(
    stream: &mut tonic::Streaming<proto::WatchPlayerResponse>,
    last: &str,
    snapshot: &mut Vec<proto::WatchPlayerResponse>,
) -> Vec<proto::WatchPlayerResponse> {
    use carcassonne::proto::watch_player_response::Message as P;
    use tokio_stream::StreamExt as _;

    let mut messages = Vec::new();
    while let Some(message) = stream.next().await {
        let message = message.unwrap();
        if message.snapshot {
            snapshot.push(message);
            continue;
        }
        let ended = match &message.message {
            Some(P::KeepAlive(_)) => continue,
            Some(P::GameEnded(e)) => e.game.as_ref().is_some_and(|g| g.name == last),
            _ => false,
        };
        messages.push(message);
        if ended {
            return messages;
        }
    }
    panic!("the stream ended before {last} did");
}

/// Issue 25, item 15: a stream resumed with `after_position` sends every
/// message the uninterrupted stream sent after that position, in order:
/// the decisions that became the player's and were answered while it was
/// away, and the games started meanwhile, each as it stood then, not only
/// what is pending when it resumes.
#[tokio::test]
async fn a_resumed_player_stream_sends_what_the_uninterrupted_one_sent_after_its_position() {
    use carcassonne::proto::watch_player_response::Message as P;
    use tokio_stream::StreamExt as _;

    use crate::support::{play, play_to_end};

    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let mut players = players_client(&server).await;
    let watch = |after: i64| {
        let request = proto::WatchPlayerRequest {
            after_position: after,
            keep_alive_ms: 0,
        };
        with_token(request, &ada)
    };
    // Given Ada's stream, read throughout, and a second one she leaves
    // after her first decision.
    let mut uninterrupted = players.watch_player(watch(0)).await.unwrap().into_inner();
    let mut interrupted = players.watch_player(watch(0)).await.unwrap().into_inner();
    let mut client = server.client().await;
    let first = agreed_game(
        &server,
        challenge_request("resume-first-00000", &["Ada", "Brun"], false),
        &[&ada, &brun],
    )
    .await;
    let second = agreed_game(
        &server,
        challenge_request("resume-second-0000", &["Brun", "Ada"], false),
        &[&brun, &ada],
    )
    .await;
    let keys = [ada.clone(), brun.clone()];
    let second_keys = [brun.clone(), ada.clone()];
    let reader = tokio::spawn({
        let second = second.clone();
        async move {
            let mut snapshot = Vec::new();
            let messages = player_messages_until_end_of(&mut uninterrupted, &second, &mut snapshot).await;
            assert!(snapshot.is_empty(), "no decision was Ada's when it opened");
            messages
        }
    });
    let mut left_at = None;
    while let Some(message) = interrupted.next().await {
        let message = message.unwrap();
        if let Some(P::Decision(decision)) = &message.message {
            assert_eq!(decision.game, first);
            left_at = Some(message.position);
            break;
        }
    }
    let left_at = left_at.expect("Ada's first decision");
    drop(interrupted);
    // When, meanwhile, both play (Ada with her key) and a game ends.
    play(&mut client, &first, &keys, 9).await;
    let ended = play_to_end(&mut client, &second, &second_keys).await;
    assert_eq!(ended.status, proto::GameStatus::Finished as i32);
    play(&mut client, &first, &keys, 3).await;
    let pending = legal_as(&mut client, &first, &ada).await;
    // Then the resumed stream sends what the uninterrupted one sent after
    // the position it left at.
    let mut resumed = players.watch_player(watch(left_at)).await.unwrap().into_inner();
    let mut snapshot = Vec::new();
    let caught_up = player_messages_until_end_of(&mut resumed, &second, &mut snapshot).await;
    let sent = reader.await.unwrap();
    let after: Vec<_> = sent.iter().filter(|m| m.position > left_at).cloned().collect();
    assert!(
        after.len() > 60,
        "Ada's decisions while away, and the second game's start and end: {}",
        after.len()
    );
    let decisions = |messages: &[proto::WatchPlayerResponse]| -> Vec<(String, i64)> {
        messages
            .iter()
            .filter_map(|m| match &m.message {
                Some(P::Decision(d)) => Some((d.game.clone(), d.legal.as_ref().unwrap().version)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        decisions(&caught_up),
        decisions(&after),
        "the decisions made and answered while away"
    );
    assert_eq!(caught_up, after);
    // Every action of Ada's answered a decision the stream sent, at its
    // version.
    let decided: std::collections::HashSet<_> = sent
        .iter()
        .filter_map(|m| match &m.message {
            Some(P::Decision(d)) => Some((d.game.clone(), d.legal.as_ref().unwrap().version)),
            _ => None,
        })
        .collect();
    for (name, seat) in [(&first, 0), (&second, 1)] {
        let request = crate::support::replay_request(name, Some(1), None);
        let events = crate::support::replay(&mut server.watcher().await, request).await;
        let mut version_before = 1;
        for step in events {
            let event = step.event.unwrap();
            if event.seat == Some(seat) {
                assert!(
                    decided.contains(&(name.clone(), version_before)),
                    "{name}: Ada acted at version {version_before} without a decision sent"
                );
            }
            version_before = event.version;
        }
    }
    // The snapshot repeats what is pending now.
    let pending_now: Vec<_> = snapshot
        .iter()
        .filter_map(|m| match &m.message {
            Some(P::Decision(d)) => Some(d.legal.clone().unwrap()),
            _ => None,
        })
        .collect();
    if pending.pending.as_ref().unwrap().seat == 0 {
        assert_eq!(pending_now, [pending]);
    } else {
        assert!(pending_now.is_empty());
    }
}

/// One rated game whose end can never be recorded (its events do not fold)
/// holds up no other: the recorder logs it and goes on, finding the games
/// that ended before it started and those that end while it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_whose_end_never_records_holds_up_no_other() {
    use carcassonne::challenges::Challenges;
    use carcassonne::games::stored::Opened;
    use carcassonne::games::{Games, NewGame};
    use carcassonne::players::Players;
    use carcassonne::players::seats::Seats;
    use carcassonne::ratings::RatingBook;
    use carcassonne::recorder::Recorder;
    use carcassonne::tournaments::Tournaments;
    use carcassonne_competition::PlayerName;
    use carcassonne_engine::{Rules, Seed, Setup};
    use carcassonne_store::{EventStore, GameId, MemoryStore, RequestId};

    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
    let games = Arc::new(Games::new(store.clone(), 100));
    let players = Arc::new(Players::open(store.clone(), Some(ADMIN_KEY), Registration::Admin).unwrap());
    let names = ["Ada", "Brun"];
    for name in names {
        players.register(Some(ADMIN_KEY), name).unwrap();
    }
    let accounts: Vec<_> = names
        .iter()
        .map(|n| Some(players.account(&PlayerName::new(*n).unwrap()).unwrap()))
        .collect();
    // A rated game between them that is over at once: its bag is empty.
    let finished = |id: &str| {
        let new = NewGame {
            accounts: accounts.clone(),
            rated: true,
            ..NewGame::guests(
                Setup {
                    rules: Rules::default(),
                    players: names.map(str::to_owned).to_vec(),
                    tiles: Some(Vec::new()),
                    seed: Some(Seed::from_u64(1)),
                    time_control: None,
                },
                0,
            )
        };
        let id = GameId::new(id).unwrap();
        games
            .create(&id, &RequestId::new(format!("create-{id}")).unwrap(), new)
            .unwrap();
        id
    };
    // Sorted first among the ends to record: a rated opening of theirs
    // with no creation after it, so the game never folds.
    let broken = GameId::new("a-broken").unwrap();
    let opened = Opened {
        token_hashes: vec![Default::default(); 2],
        accounts: names.map(|n| Some(n.to_owned())).to_vec(),
        rated: true,
        ..Opened::default()
    };
    store
        .append(&broken, 0, &RequestId::none(), &[opened.to_new_event()])
        .unwrap();
    let before = finished("b-before");

    let ratings = Arc::new(RatingBook::open(store.clone()).unwrap());
    let recorder = Arc::new(Recorder {
        games: games.clone(),
        seats: Arc::new(Seats::build(store.clone()).unwrap()),
        ratings: ratings.clone(),
        tournaments: Arc::new(Tournaments::open(store.clone(), games.clone(), players.clone()).unwrap()),
        challenges: Arc::new(Challenges::open(store.clone(), games.clone(), players.clone()).unwrap()),
        players,
    });
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(recorder.run(stopping));
    // Let the first catch-up meet the broken game before another ends.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = finished("c-after");
    let rated = async {
        while !(ratings.is_rated(&before) && ratings.is_rated(&after)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let recorded = tokio::time::timeout(Duration::from_secs(10), rated).await;
    assert!(
        recorded.is_ok(),
        "rated: before {}, after {}",
        ratings.is_rated(&before),
        ratings.is_rated(&after)
    );
    assert!(!ratings.is_rated(&broken));
    stop.send(true).unwrap();
    running.await.unwrap();
}

/// A MemoryStore that counts the events its readers are given.
#[derive(Default)]
struct CountingStore {
    inner: carcassonne_store::MemoryStore,
    events_read: std::sync::atomic::AtomicUsize,
}

impl CountingStore {
    fn count(
        &self,
        read: carcassonne_store::Result<Vec<carcassonne_store::StoredEvent>>,
    ) -> carcassonne_store::Result<Vec<carcassonne_store::StoredEvent>> {
        if let Ok(events) = &read {
            self.events_read
                .fetch_add(events.len(), std::sync::atomic::Ordering::SeqCst);
        }
        read
    }

    fn events_read(&self) -> usize {
        self.events_read.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl carcassonne_store::EventStore for CountingStore {
    fn write_at(
        &self,
        game: &carcassonne_store::GameId,
        expected_seq: u64,
        request_id: &carcassonne_store::RequestId,
        time_millis: u64,
        events: &[carcassonne_store::NewEvent],
    ) -> carcassonne_store::Result<carcassonne_store::Written> {
        self.inner
            .write_at(game, expected_seq, request_id, time_millis, events)
    }
    fn now_millis(&self) -> u64 {
        self.inner.now_millis()
    }
    fn find_request(
        &self,
        game: &carcassonne_store::GameId,
        request_id: &carcassonne_store::RequestId,
    ) -> carcassonne_store::Result<Option<carcassonne_store::Written>> {
        self.inner.find_request(game, request_id)
    }
    fn read_game(
        &self,
        game: &carcassonne_store::GameId,
        from_seq: u64,
    ) -> carcassonne_store::Result<Vec<carcassonne_store::StoredEvent>> {
        self.count(self.inner.read_game(game, from_seq))
    }
    fn read_game_chunk(
        &self,
        game: &carcassonne_store::GameId,
        from_seq: u64,
        limit: usize,
    ) -> carcassonne_store::Result<Vec<carcassonne_store::StoredEvent>> {
        self.count(self.inner.read_game_chunk(game, from_seq, limit))
    }
    fn read_all(
        &self,
        from_position: u64,
        limit: usize,
    ) -> carcassonne_store::Result<Vec<carcassonne_store::StoredEvent>> {
        self.count(self.inner.read_all(from_position, limit))
    }
    fn game(
        &self,
        game: &carcassonne_store::GameId,
    ) -> carcassonne_store::Result<Option<carcassonne_store::GameSummary>> {
        self.inner.game(game)
    }
    fn list_games(
        &self,
        page_token: Option<&str>,
        page_size: usize,
    ) -> carcassonne_store::Result<carcassonne_store::GamePage> {
        self.inner.list_games(page_token, page_size)
    }
    fn last_position(&self) -> u64 {
        self.inner.last_position()
    }
    fn subscribe_game(&self, game: &carcassonne_store::GameId) -> carcassonne_store::EventReceiver {
        self.inner.subscribe_game(game)
    }
    fn subscribe_all(&self) -> carcassonne_store::EventReceiver {
        self.inner.subscribe_all()
    }
    fn verify_game(
        &self,
        game: &carcassonne_store::GameId,
    ) -> carcassonne_store::Result<carcassonne_store::VerifyReport> {
        self.inner.verify_game(game)
    }
    fn verify_all(&self) -> carcassonne_store::Result<carcassonne_store::VerifyReport> {
        self.inner.verify_all()
    }
}

/// What a registration costs does not grow with the registry: a node
/// that learns of a new registration (the recorder hands it every event
/// of the registry's stream, and on a shared store another node may have
/// written it) reads the events it has not folded, never the whole
/// registry again, and a refresh for an event it holds reads nothing.
#[test]
fn a_registry_refresh_reads_only_the_events_it_has_not_folded() {
    use carcassonne::players::Players;
    use carcassonne_store::EventStore as _;

    let store = Arc::new(CountingStore::default());
    let shared: Arc<dyn carcassonne_store::EventStore> = store.clone();
    let here = Players::open(shared.clone(), Some(ADMIN_KEY), Registration::Open).unwrap();
    let there = Players::open(shared, Some(ADMIN_KEY), Registration::Open).unwrap();
    let registry = carcassonne_store::GameId::new(carcassonne::players::REGISTRY_STREAM).unwrap();
    let last_seq = || store.game(&registry).unwrap().unwrap().last_seq;
    for n in 0..200 {
        here.register(None, &format!("p{n:03}")).unwrap();
        // This node wrote it: the recorder's refresh, after the write or
        // racing it, reads nothing.
        let before = store.events_read();
        here.refresh(last_seq()).unwrap();
        assert_eq!(store.events_read(), before, "registration {n}");
    }
    there.refresh(last_seq()).unwrap();
    assert!(there.get(&"p199".parse().unwrap()).is_ok());
    // One more, written here: the other node reads that one.
    here.register(None, "late").unwrap();
    let before = store.events_read();
    there.refresh(last_seq()).unwrap();
    assert_eq!(store.events_read() - before, 1);
    assert!(there.get(&"late".parse().unwrap()).is_ok());
}

/// `serve --registration-rate`: registrations without the admin key are
/// bounded server-wide; past the bound, RESOURCE_EXHAUSTED says when to
/// retry and stores nothing, and the admin key still registers.
#[tokio::test]
async fn anonymous_registrations_past_the_rate_are_refused_and_the_admin_key_still_registers() {
    let dir = tempfile::tempdir().unwrap();
    let server = crate::support::TestServer::start_with(carcassonne::server::ServerConfig {
        data: dir.path().to_owned(),
        admin_key: Some(ADMIN_KEY.to_owned()),
        registration: Registration::Open,
        registration_rate: std::num::NonZeroU32::new(3),
        ..carcassonne::server::ServerConfig::default()
    })
    .await;
    let mut players = players_client(&server).await;
    let request = |name: &str| proto::RegisterPlayerRequest {
        name: name.to_owned(),
    };
    for name in ["Ada", "Brun", "Cleo"] {
        players.register_player(request(name)).await.unwrap();
    }
    let refused = players.register_player(request("Dirk")).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::ResourceExhausted, "REGISTRATION_RATE"),
        "{refused:?}"
    );
    assert!(
        refused.message().contains("3 players a minute"),
        "{}",
        refused.message()
    );
    use tonic_types::StatusExt as _;
    let retry_after: u64 = refused.get_error_details().error_info().unwrap().metadata["retry_after_ms"]
        .parse()
        .unwrap();
    assert!((1..=20_000).contains(&retry_after), "{retry_after}");
    let missing = players
        .get_player(proto::GetPlayerRequest {
            name: "players/Dirk".to_owned(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    register(&server, "Dirk").await;
}

/// The ratings are folded the same way: a refresh reads only the rated
/// games this node has not folded yet.
#[test]
fn a_ratings_refresh_reads_only_the_events_it_has_not_folded() {
    use carcassonne::ratings::{RATINGS_STREAM, RatingBook};
    use carcassonne_competition::PlayerName;
    use carcassonne_store::EventStore as _;

    let store = Arc::new(CountingStore::default());
    let shared: Arc<dyn carcassonne_store::EventStore> = store.clone();
    let here = RatingBook::open(shared.clone()).unwrap();
    let there = RatingBook::open(shared).unwrap();
    let ratings = carcassonne_store::GameId::new(RATINGS_STREAM).unwrap();
    let last_seq = || store.game(&ratings).unwrap().unwrap().last_seq;
    let players = || vec![PlayerName::new("Ada").unwrap(), PlayerName::new("Brun").unwrap()];
    let game = |n: usize| carcassonne_store::GameId::new(format!("g{n:03}")).unwrap();
    for n in 0..100 {
        here.rate(&game(n), players(), vec![1, 2]).unwrap();
    }
    there.refresh(last_seq()).unwrap();
    assert!(there.is_rated(&game(99)));
    here.rate(&game(100), players(), vec![2, 1]).unwrap();
    let before = store.events_read();
    there.refresh(last_seq()).unwrap();
    assert_eq!(store.events_read() - before, 1);
    assert!(there.is_rated(&game(100)));
    let before = store.events_read();
    here.refresh(last_seq()).unwrap();
    assert_eq!(store.events_read(), before, "its own: nothing to read");
}
