//! Tournaments run by the server to their end, with bots playing through
//! their player streams: Swiss with a crashing bot, round robin with
//! tables of three, matches, duplicate bags, withdrawals, and pairings
//! recomputed from the stored events; a server restarted in the middle
//! of one (and stopped before recording a round's last result) carries on.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use carcassonne::players::Registration;
use carcassonne::proto::tournament_service_client::TournamentServiceClient;
use carcassonne::proto::{self, game_event::Event as E};
use tokio_stream::StreamExt as _;
use tonic::Code;
use tonic::transport::Channel;

use crate::bots::{
    self, Behaviour, Played, league_server, league_server_on, organiser, register, tournaments_client,
};
use crate::support::{TestServer, reason, with_token};

/// Every game with a clock: a decision not made in 2 s forfeits the seat.
pub fn fast_clock() -> proto::TimeControl {
    proto::TimeControl {
        decision_ms: 2_000,
        on_timeout: proto::TimeoutRule::Forfeit as i32,
        ..Default::default()
    }
}

pub fn tournament_request(request_id: &str, names: &[String]) -> proto::CreateTournamentRequest {
    proto::CreateTournamentRequest {
        request_id: request_id.to_owned(),
        title: "Test open".to_owned(),
        participants: names.iter().map(|n| format!("players/{n}")).collect(),
        format: proto::TournamentFormat::Swiss as i32,
        rounds: 3,
        time_control: Some(fast_clock()),
        // A small bag keeps the games short.
        rules: Some(proto::RuleOptions::default()),
        ..Default::default()
    }
}

/// Registers `n` bots, starts them, and returns their names and what they
/// do; `crash`: bot number `.0` stops for good after `.1` actions.
pub async fn start_bots(
    server: &TestServer,
    n: usize,
    crash: Option<(usize, usize)>,
) -> (Vec<String>, Vec<Arc<Played>>, Vec<tokio::task::JoinHandle<()>>) {
    let mut names = Vec::new();
    let mut played = Vec::new();
    let mut tasks = Vec::new();
    for i in 0..n {
        let name = format!("Bot{i}");
        let key = register(server, &name).await;
        let record = Arc::new(Played::default());
        let behaviour = Behaviour {
            crash_after: crash.filter(|c| c.0 == i).map(|c| c.1),
            choice: i,
            ..Behaviour::default()
        };
        tasks.push(tokio::spawn(bots::run_bot(
            server.url(),
            key,
            behaviour,
            record.clone(),
        )));
        names.push(name);
        played.push(record);
    }
    // Rounds are told to the streams open when they are paired.
    for record in &played {
        record.listening.notified().await;
    }
    (names, played, tasks)
}

/// A client of the tournament service, and tournament `name`'s stream.
async fn watch(
    server: &TestServer,
    name: &str,
) -> (
    TournamentServiceClient<Channel>,
    tonic::Streaming<proto::WatchTournamentResponse>,
) {
    let mut client = tournaments_client(server).await;
    let stream = client
        .watch_tournament(proto::WatchTournamentRequest {
            name: name.to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    (client, stream)
}

/// Follows a tournament's stream to its end; returns its last message.
pub async fn finish(server: &TestServer, name: &str, within: Duration) -> proto::WatchTournamentResponse {
    let (mut client, mut stream) = watch(server, name).await;
    let follow = async {
        let mut last = None;
        while let Some(message) = stream.next().await {
            last = Some(message.unwrap());
        }
        last.unwrap()
    };
    match tokio::time::timeout(within, follow).await {
        Ok(last) => last,
        Err(_) => {
            let now = client
                .get_tournament(proto::GetTournamentRequest {
                    name: name.to_owned(),
                })
                .await
                .unwrap()
                .into_inner();
            let mut games = server.client().await;
            let tournament = now.tournament.unwrap();
            for game in tournament
                .paired_rounds
                .iter()
                .flat_map(|r| &r.tables)
                .flat_map(|t| &t.games)
            {
                if !game.ended {
                    let state = crate::support::game(&mut games, &game.game).await;
                    eprintln!(
                        "{}: status {} version {} pending {:?} ending {:?}",
                        game.game, state.status, state.version, state.pending, state.ending
                    );
                }
            }
            panic!(
                "the tournament does not finish: round {}",
                tournament.current_round
            );
        }
    }
}

/// Every pair of players who shared a table, by round.
fn meetings(tournament: &proto::Tournament) -> Vec<BTreeSet<(String, String)>> {
    tournament
        .paired_rounds
        .iter()
        .map(|round| {
            let mut pairs = BTreeSet::new();
            for table in &round.tables {
                for a in &table.players {
                    for b in &table.players {
                        if a < b {
                            pairs.insert((a.clone(), b.clone()));
                        }
                    }
                }
            }
            pairs
        })
        .collect()
}

#[tokio::test]
async fn an_eight_player_swiss_runs_to_its_end_even_when_a_bot_crashes_mid_game() {
    let (server, dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let (names, played, tasks) = start_bots(&server, 8, Some((3, 5))).await;
    let mut client = tournaments_client(&server).await;
    let created = client
        .create_tournament(with_token(
            tournament_request("swiss-of-eight-0001", &names),
            &boss,
        ))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    assert_eq!(created.current_round, 1);
    assert_eq!(created.paired_rounds[0].tables.len(), 4);
    assert!(
        created.seed.is_empty(),
        "the seed is sealed while the tournament runs"
    );
    let end = finish(&server, &created.name, Duration::from_secs(60)).await;
    let tournament = end.tournament.unwrap();
    let standings = end.standings.unwrap();
    assert_eq!(tournament.status, proto::TournamentStatus::Finished as i32);
    assert_eq!(tournament.paired_rounds.len(), 3);
    assert!(standings.r#final);
    assert_eq!(standings.standings.len(), 8);
    // The crashed bot lost on time and the tournament went on without it.
    let crashed = standings
        .standings
        .iter()
        .find(|s| s.player == "players/Bot3")
        .unwrap();
    assert_eq!(crashed.points, "0", "{crashed:?}");
    assert_eq!(crashed.games, 3, "{crashed:?}");
    // Every round after the crash was paired, its tables seating all eight
    // (the crashed bot included: nobody withdrew it), and every game of it
    // has its result.
    for (index, round) in tournament.paired_rounds.iter().enumerate() {
        assert_eq!(round.round, index as u32 + 1);
        let seated: BTreeSet<&String> = round.tables.iter().flat_map(|t| &t.players).collect();
        assert_eq!(seated.len(), 8, "round {}: {round:?}", round.round);
        assert!(
            round.tables.iter().flat_map(|t| &t.games).all(|g| g.ended),
            "round {}: {round:?}",
            round.round
        );
    }
    // The bot crashed after its fifth action, in its round-1 game.
    assert_eq!(played[3].actions.load(std::sync::atomic::Ordering::SeqCst), 5);
    // Every game it sat in, the one it crashed in and those of the later
    // rounds, ended because its clock ran out: its last decision went
    // unanswered for the 2 s of the clock, the server timed it out and it
    // lost, the only seat out.
    let mut games = server.client().await;
    let mut watcher = server.watcher().await;
    for round in &tournament.paired_rounds {
        let played = round
            .tables
            .iter()
            .flat_map(|t| &t.games)
            .find(|g| g.seats.iter().any(|s| s == "players/Bot3"))
            .unwrap_or_else(|| panic!("round {}: Bot3 is seated", round.round));
        let seat = played.seats.iter().position(|s| s == "players/Bot3").unwrap();
        let game = crate::support::game(&mut games, &played.game).await;
        let ending = game.ending.as_ref().unwrap();
        assert_eq!(
            (ending.reason(), ending.seat),
            (proto::EndReason::OutOfTime, seat as u32),
            "{}",
            played.game
        );
        let statuses: Vec<_> = game.players.iter().map(|p| p.status()).collect();
        let mut expected = vec![proto::SeatStatus::Playing; 2];
        expected[seat] = proto::SeatStatus::OutOfTime;
        assert_eq!(statuses, expected, "{}", played.game);
        assert_eq!(played.ranks[seat], 2, "{}: {played:?}", played.game);
        let events = game_events(&mut watcher, &played.game).await;
        let actions = events.iter().filter(|e| e.seat == Some(seat as u32)).count();
        assert_eq!(
            actions,
            if round.round == 1 { 5 } else { 0 },
            "{}: Bot3's actions",
            played.game
        );
        let [.., pending_since, last] = events.as_slice() else {
            panic!("{}: {events:?}", played.game);
        };
        assert!(
            matches!(last.event, Some(E::TimedOut(proto::TimedOut { seat: s })) if s == seat as u32)
                && last.finished,
            "{}: {last:?}",
            played.game
        );
        assert!(
            last.time_ms - pending_since.time_ms >= 2_000,
            "{}: timed out {} ms after its decision became pending",
            played.game,
            last.time_ms - pending_since.time_ms
        );
    }
    // No pairing repeated.
    let rounds = meetings(&tournament);
    let all: Vec<_> = rounds.iter().flatten().collect();
    assert_eq!(all.len(), all.iter().collect::<BTreeSet<_>>().len(), "{rounds:?}");
    // Each bot was told of each of its rounds through its stream.
    for (name, record) in names.iter().zip(&played) {
        // The crashed bot heard of the first round only; the others may
        // still be reading their streams when the tournament ends.
        let expected = if name == "Bot3" { 1 } else { 3 };
        for _ in 0..200 {
            if record.rounds.lock().unwrap().len() >= expected {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            record.rounds.lock().unwrap().len(),
            expected,
            "{name}: {:?}",
            record.rounds.lock().unwrap()
        );
    }
    // The seed is revealed at the end, and commits as promised.
    assert_eq!(tournament.seed.len(), 64);
    for task in tasks {
        task.abort();
    }
    server.stop().await;
    // The pairings follow from the stored events alone.
    check_replay(dir.path(), &tournament);
}

/// Every event of a game, as a replay from its creation shows them.
async fn game_events(
    watcher: &mut proto::watch_service_client::WatchServiceClient<tonic::transport::Channel>,
    name: &str,
) -> Vec<proto::GameEvent> {
    crate::support::replay(watcher, crate::support::replay_request(name, Some(1), None))
        .await
        .into_iter()
        .map(|step| step.event.unwrap())
        .collect()
}

/// Folds the tournament's stored events again and compares every round's
/// pairing with what the pairing function gives from the events before it.
fn check_replay(data: &std::path::Path, served: &proto::Tournament) {
    let store = carcassonne_store::SledStore::open(data, carcassonne_store::StoreConfig::default()).unwrap();
    let id = served.name.trim_start_matches("tournaments/");
    let stream = carcassonne_store::GameId::new(format!("@tournament/{id}")).unwrap();
    let stored = carcassonne_store::EventStore::read_game(&store, &stream, 1).unwrap();
    let events: Vec<_> = stored
        .iter()
        .map(|e| carcassonne_competition::TournamentEvent::decode(&e.payload).unwrap())
        .collect();
    let mut tournament = carcassonne_competition::Tournament::from_event(id, &events[0]).unwrap();
    let mut rounds = 0;
    for event in &events[1..] {
        if let carcassonne_competition::TournamentEvent::RoundPaired { tables, byes, .. } = event {
            let pairing = tournament.pairing_for_next_round().unwrap();
            let players: Vec<_> = tables.iter().map(|t| t.players.clone()).collect();
            assert_eq!(pairing.tables, players);
            assert_eq!(&pairing.byes, byes);
            rounds += 1;
        }
        tournament.apply(event);
    }
    assert_eq!(rounds, served.paired_rounds.len());
    assert!(tournament.is_finished());
}

/// A tournament's stored events, folded afresh by the competition crate
/// alone (the server is stopped: this opens its store).
fn stored_fold(data: &std::path::Path, name: &str) -> carcassonne::tournaments::Held {
    let store = carcassonne_store::SledStore::open(data, carcassonne_store::StoreConfig::default()).unwrap();
    let id = name.trim_start_matches("tournaments/");
    let stream = carcassonne_store::GameId::new(format!("@tournament/{id}")).unwrap();
    let stored = carcassonne_store::EventStore::read_game(&store, &stream, 1).unwrap();
    let events: Vec<_> = stored
        .iter()
        .map(|e| carcassonne_competition::TournamentEvent::decode(&e.payload).unwrap())
        .collect();
    let mut tournament = carcassonne_competition::Tournament::from_event(id, &events[0]).unwrap();
    for event in &events[1..] {
        tournament.apply(event);
    }
    carcassonne::tournaments::Held {
        tournament,
        version: stored.last().unwrap().seq,
    }
}

/// The ids of the tournament's games without a result, as stored.
fn without_result(held: &carcassonne::tournaments::Held) -> Vec<String> {
    held.tournament
        .pending_games()
        .map(|g| format!("games/{}", g.id))
        .collect()
}

/// Follows a tournament's stream until `done`; returns that message.
async fn watch_until(
    server: &TestServer,
    name: &str,
    what: &str,
    done: impl Fn(&proto::WatchTournamentResponse) -> bool,
) -> proto::WatchTournamentResponse {
    let (_, mut stream) = watch(server, name).await;
    let follow = async {
        while let Some(message) = stream.next().await {
            let message = message.unwrap();
            if done(&message) {
                return message;
            }
        }
        panic!("{name}'s stream ended before {what}");
    };
    tokio::time::timeout(Duration::from_secs(30), follow)
        .await
        .unwrap_or_else(|_| panic!("{name}: no {what} within 30 s"))
}

/// The tournament and its standings as GetTournament and GetStandings
/// serve them.
async fn served(server: &TestServer, name: &str) -> (proto::Tournament, proto::Standings) {
    let mut client = tournaments_client(server).await;
    let tournament = client
        .get_tournament(proto::GetTournamentRequest {
            name: name.to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let standings = client
        .get_standings(proto::GetStandingsRequest {
            name: name.to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
        .standings
        .unwrap();
    (tournament, standings)
}

/// Plays the rest of a game as a server would have, then stops, as if it
/// crashed right after storing the game's last event: every legal action
/// appended to the store in `data` directly, never seen by a server's
/// recorder.
async fn finish_offline(data: &std::path::Path, name: &str) {
    use carcassonne::games::{Acting, Games, Settled};
    let store = Arc::new(
        carcassonne_store::SledStore::open(data, carcassonne_store::StoreConfig::default()).unwrap(),
    );
    let games = Games::new(store.clone(), 16);
    let id = carcassonne_store::GameId::new(name.trim_start_matches("games/")).unwrap();
    for step in 0.. {
        let loaded = games.load(&id).unwrap();
        if loaded.game.is_finished() {
            break;
        }
        let seat = loaded.game.pending().player().unwrap();
        let commands = loaded.game.legal_commands();
        let command = commands[step % commands.len()];
        let request = carcassonne_store::RequestId::new(format!("offline-{step}")).unwrap();
        let version = loaded.version;
        let Acting::InFlight(written) = games
            .act_as(loaded, &id, seat, version, &request, &command)
            .unwrap()
        else {
            panic!("{name}: a new request id is no retry");
        };
        let Settled::Acted(_) = games.settle(written).await.unwrap() else {
            panic!("{name}: nobody else acts");
        };
    }
    drop(games);
    store.close().unwrap();
}

#[tokio::test]
async fn a_server_restarted_mid_tournament_carries_on_to_the_standings_its_stored_events_give() {
    let (server, dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let mut keys = HashMap::new();
    let mut names = Vec::new();
    for i in 0..4 {
        let name = format!("Player{i}");
        keys.insert(format!("players/{name}"), register(&server, &name).await);
        names.push(name);
    }
    let seat_keys = |game: &proto::TournamentGame| -> Vec<String> {
        game.seats.iter().map(|s| keys[s].clone()).collect()
    };
    // The test plays every action itself; nothing waits for a clock, so a
    // long one keeps a slow machine from timing anyone out.
    let request = proto::CreateTournamentRequest {
        time_control: Some(proto::TimeControl {
            decision_ms: 60_000,
            ..fast_clock()
        }),
        ..tournament_request("restarted-swiss-001", &names)
    };
    let created = tournaments_client(&server)
        .await
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let name = created.name.clone();
    let mut games = server.client().await;

    // Life 1: round 1 is played; of round 2, one game to its end (its
    // result recorded) and the other one 10 actions in.
    for game in created.paired_rounds[0].tables.iter().flat_map(|t| &t.games) {
        crate::support::play_to_end(&mut games, &game.game, &seat_keys(game)).await;
    }
    let paired = watch_until(&server, &name, "round 2", |m| {
        m.tournament.as_ref().unwrap().current_round == 2
    })
    .await;
    let round_two = paired.tournament.unwrap().paired_rounds[1].clone();
    let [ended, running] = [&round_two.tables[0].games[0], &round_two.tables[1].games[0]];
    crate::support::play_to_end(&mut games, &ended.game, &seat_keys(ended)).await;
    crate::support::play(&mut games, &running.game, &seat_keys(running), 10).await;
    watch_until(&server, &name, "the first result of round 2", |m| {
        m.tournament.as_ref().unwrap().paired_rounds[1].tables[0].games[0].ended
    })
    .await;
    let before = served(&server, &name).await;
    drop(games);
    server.stop().await;
    let stored = stored_fold(dir.path(), &name);
    assert_eq!(stored.tournament.round(), 2);
    assert_eq!(without_result(&stored), std::slice::from_ref(&running.game));

    // Life 2: the tournament is served as it was, and the running game
    // goes on where it stopped.
    let server = league_server_on(dir.path(), Registration::Open).await;
    assert_eq!(served(&server, &name).await, before, "after the restart");
    let mut games = server.client().await;
    let at = crate::support::game(&mut games, &running.game).await.version;
    let now = crate::support::play(&mut games, &running.game, &seat_keys(running), 10).await;
    assert!(now > at, "{running:?} plays on");
    drop(games);
    server.stop().await;

    // A crash between rounds: round 2's last game ends, and the server
    // stops before it records the result (and pairs round 3).
    finish_offline(dir.path(), &running.game).await;
    let stored = stored_fold(dir.path(), &name);
    assert_eq!(stored.tournament.round(), 2);
    assert_eq!(without_result(&stored), std::slice::from_ref(&running.game));

    // Life 3: the restart records it, pairs round 3 and creates its games.
    let server = league_server_on(dir.path(), Registration::Open).await;
    let paired = watch_until(&server, &name, "round 3", |m| {
        m.tournament.as_ref().unwrap().current_round == 3
    })
    .await;
    let tournament = paired.tournament.unwrap();
    assert!(tournament.paired_rounds[1].tables[1].games[0].ended);
    let mut games = server.client().await;
    for game in tournament.paired_rounds[2].tables.iter().flat_map(|t| &t.games) {
        crate::support::play_to_end(&mut games, &game.game, &seat_keys(game)).await;
    }
    let end = finish(&server, &name, Duration::from_secs(30)).await;
    let tournament = end.tournament.unwrap();
    let standings = end.standings.unwrap();
    assert_eq!(tournament.status, proto::TournamentStatus::Finished as i32);
    assert_eq!(tournament.paired_rounds.len(), 3);
    assert!(standings.r#final);
    assert_eq!(standings.standings.len(), 4);
    // Every result is its game's: the places and scores the game shows,
    // the one that ended offline included.
    for game in tournament
        .paired_rounds
        .iter()
        .flat_map(|r| &r.tables)
        .flat_map(|t| &t.games)
    {
        let shown = crate::support::game(&mut games, &game.game).await;
        assert_eq!(shown.status, proto::GameStatus::Finished as i32, "{}", game.game);
        let ranks: Vec<u32> = shown.players.iter().map(|p| p.rank).collect();
        let scores: Vec<u32> = shown.players.iter().map(|p| p.score).collect();
        assert_eq!((&game.ranks, &game.scores), (&ranks, &scores), "{}", game.game);
    }
    drop(games);
    server.stop().await;

    // What was served is what the stored events fold to, and each round's
    // pairing what the pairing function gives from the events before it.
    let stored = stored_fold(dir.path(), &name);
    assert_eq!(
        carcassonne::tournaments::view::tournament_view(&stored),
        tournament
    );
    assert_eq!(carcassonne::tournaments::view::standings_view(&stored), standings);
    check_replay(dir.path(), &tournament);
}

#[tokio::test]
async fn a_round_robin_of_three_player_tables_scores_table_points() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let (names, _played, tasks) = start_bots(&server, 4, None).await;
    let mut client = tournaments_client(&server).await;
    let request = proto::CreateTournamentRequest {
        format: proto::TournamentFormat::RoundRobin as i32,
        rounds: 0,
        table_size: 3,
        table_points: vec![5, 3, 2],
        ..tournament_request("round-robin-three-01", &names)
    };
    let created = client
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    // Four players, every table of three once: four rounds of one table.
    assert_eq!(created.rounds, 4);
    let end = finish(&server, &created.name, Duration::from_secs(600)).await;
    let tournament = end.tournament.unwrap();
    let tables: BTreeSet<Vec<String>> = tournament
        .paired_rounds
        .iter()
        .flat_map(|r| r.tables.iter())
        .map(|t| {
            let mut players = t.players.clone();
            players.sort();
            players
        })
        .collect();
    assert_eq!(tables.len(), 4, "every table of three once");
    // The points are the table points of each game's places.
    let mut expected: HashMap<String, u64> = HashMap::new();
    for game in tournament
        .paired_rounds
        .iter()
        .flat_map(|r| &r.tables)
        .flat_map(|t| &t.games)
    {
        for (seat, player) in game.seats.iter().enumerate() {
            let rank = game.ranks[seat];
            let tied = game.ranks.iter().filter(|&&r| r == rank).count() as u64;
            let places = (rank as usize - 1)..(rank as usize - 1 + tied as usize);
            let points: u64 = places.map(|p| [5u64, 3, 2][p] * 60).sum::<u64>() / tied;
            *expected.entry(player.clone()).or_default() += points;
        }
    }
    for standing in &end.standings.unwrap().standings {
        assert_eq!(
            standing.points_sixtieths, expected[&standing.player],
            "{standing:?}"
        );
    }
    for task in tasks {
        task.abort();
    }
}

#[tokio::test]
async fn a_tournament_created_without_table_points_gets_one_zero_or_five_three_two_one_zero_cut_to_its_tables()
 {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let mut names = Vec::new();
    for i in 0..5 {
        let name = format!("Idle{i}");
        register(&server, &name).await;
        names.push(name);
    }
    let mut client = tournaments_client(&server).await;
    for (table_size, expected) in [
        (0, vec![1, 0]),
        (2, vec![1, 0]),
        (3, vec![5, 3, 2]),
        (4, vec![5, 3, 2, 1]),
        (5, vec![5, 3, 2, 1, 0]),
    ] {
        let request = proto::CreateTournamentRequest {
            rounds: 1,
            table_size,
            table_points: Vec::new(),
            ..tournament_request(&format!("default-points-{table_size:04}"), &names)
        };
        let created = client
            .create_tournament(with_token(request, &boss))
            .await
            .unwrap()
            .into_inner()
            .tournament
            .unwrap();
        assert_eq!(created.table_points, expected, "tables of {table_size}");
    }
}

#[tokio::test]
async fn a_match_of_two_games_alternates_the_first_seat_and_duplicate_bags_share_their_tiles() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let (names, _played, tasks) = start_bots(&server, 4, None).await;
    let mut client = tournaments_client(&server).await;
    let request = proto::CreateTournamentRequest {
        rounds: 1,
        games_per_match: 2,
        duplicate_bags: true,
        ..tournament_request("match-of-two-000001", &names)
    };
    let created = client
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let end = finish(&server, &created.name, Duration::from_secs(600)).await;
    let tournament = end.tournament.unwrap();
    let round = &tournament.paired_rounds[0];
    assert_eq!(round.tables.len(), 2);
    let mut games = server.client().await;
    let mut seeds_by_index: Vec<BTreeSet<String>> = vec![BTreeSet::new(), BTreeSet::new()];
    for table in &round.tables {
        assert_eq!(table.games.len(), 2);
        // The first seat alternates.
        assert_eq!(table.games[0].seats[0], table.games[1].seats[1]);
        assert_eq!(table.games[0].seats[1], table.games[1].seats[0]);
        for (index, played) in table.games.iter().enumerate() {
            let game = crate::support::game(&mut games, &played.game).await;
            assert_eq!(game.tournament, tournament.name);
            seeds_by_index[index].insert(game.seed);
        }
    }
    // Every table of the round deals game g with the same seed.
    assert_eq!(seeds_by_index[0].len(), 1);
    assert_eq!(seeds_by_index[1].len(), 1);
    assert_ne!(seeds_by_index[0], seeds_by_index[1]);
    // And the tiles each table actually drew, in draw order (discarded
    // ones included: a draw event each), are the same for game g at every
    // table: all of them when both games ended with the last tile, else as
    // far as both went.
    let mut watcher = server.watcher().await;
    let mut draws_by_index: Vec<Vec<(Vec<String>, bool)>> = vec![Vec::new(), Vec::new()];
    for table in &round.tables {
        for (index, played) in table.games.iter().enumerate() {
            let events = game_events(&mut watcher, &played.game).await;
            let drawn: Vec<String> = events
                .iter()
                .filter_map(|e| match &e.event {
                    Some(E::TileDrawn(drawn)) => Some(drawn.kind.clone()),
                    _ => None,
                })
                .collect();
            let ending = crate::support::game(&mut games, &played.game)
                .await
                .ending
                .unwrap();
            draws_by_index[index].push((drawn, ending.reason() == proto::EndReason::Normal));
        }
    }
    for (index, tables) in draws_by_index.iter().enumerate() {
        let [(first, first_whole), (second, second_whole)] = tables.as_slice() else {
            panic!("game {index}: two tables");
        };
        let common = first.len().min(second.len());
        assert!(
            common > 1,
            "game {index}: {} and {} draws",
            first.len(),
            second.len()
        );
        assert_eq!(
            first[..common],
            second[..common],
            "game {index}: the tables' draws"
        );
        if *first_whole && *second_whole {
            assert_eq!(first, second, "game {index}: every tile of the bag");
        }
    }
    // The two games of a match are dealt differently.
    assert_ne!(draws_by_index[0][0].0, draws_by_index[1][0].0);
    // The signed archive holds every game and the tournament's own log.
    let mut chunks = client
        .export_tournament_archive(proto::ExportTournamentArchiveRequest {
            name: tournament.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = chunks.next().await {
        bytes.extend(chunk.unwrap().chunk);
    }
    let archive = carcassonne_archive::Archive::open(&bytes, None).unwrap();
    let paths: BTreeSet<_> = archive.paths().map(str::to_owned).collect();
    for path in [
        "tournament/events.json",
        "tournament/standings.json",
        "tournament/tournament.json",
    ] {
        assert!(paths.contains(path), "{path} in {paths:?}");
    }
    for game in round.tables.iter().flat_map(|t| &t.games) {
        let id = game.game.trim_start_matches("games/");
        assert!(paths.contains(&format!("games/{id}/events.json")), "{id}");
    }
    for task in tasks {
        task.abort();
    }
}

#[tokio::test]
async fn only_organisers_create_tournaments_and_withdrawn_players_are_never_paired_again() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    // Bot0 never acts: its game can end only by its withdrawal (or clock).
    let (names, _played, tasks) = start_bots(&server, 6, Some((0, 0))).await;
    let plain = register(&server, "Plain").await;
    let mut client = tournaments_client(&server).await;
    let refused = client
        .create_tournament(with_token(
            tournament_request("not-an-organiser-01", &names),
            &plain,
        ))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::PermissionDenied, "NOT_ORGANISER")
    );
    let mut untimed = tournament_request("without-a-clock-001", &names);
    untimed.time_control = None;
    let refused = client
        .create_tournament(with_token(untimed, &boss))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);

    let created = client
        .create_tournament(with_token(
            tournament_request("withdrawals-000001", &names),
            &boss,
        ))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let withdraw = proto::WithdrawPlayerRequest {
        name: created.name.clone(),
        player: "players/Bot0".to_owned(),
    };
    let refused = client
        .withdraw_player(with_token(withdraw.clone(), &plain))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "NOT_ORGANISER");
    let after = client
        .withdraw_player(with_token(withdraw.clone(), &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    assert_eq!(after.withdrawn, ["players/Bot0"]);
    let twice = client
        .withdraw_player(with_token(withdraw, &boss))
        .await
        .unwrap_err();
    assert_eq!(reason(&twice), "TOURNAMENT_STATE");
    let end = finish(&server, &created.name, Duration::from_secs(600)).await;
    let tournament = end.tournament.unwrap();
    for round in &tournament.paired_rounds[1..] {
        for table in &round.tables {
            assert!(
                !table.players.contains(&"players/Bot0".to_owned()),
                "round {}",
                round.round
            );
        }
        assert!(!round.byes.contains(&"players/Bot0".to_owned()));
    }
    // Its round-1 game was forfeited: the opponent won it.
    let first = round_one_game_of(&tournament, "players/Bot0");
    let seat = first.seats.iter().position(|s| s == "players/Bot0").unwrap();
    assert_eq!(first.ranks[seat], 2);
    let mut games = server.client().await;
    let ended = crate::support::game(&mut games, &first.game)
        .await
        .ending
        .unwrap();
    assert_eq!(ended.reason, proto::EndReason::Resigned as i32);
    for task in tasks {
        task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_organiser_withdraws_a_house_bot_like_any_participant_and_the_archive_audits_clean() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Organiser").await;
    let (names, _played, tasks) = start_bots(&server, 2, None).await;
    let mut client = tournaments_client(&server).await;
    let request = proto::CreateTournamentRequest {
        format: proto::TournamentFormat::RoundRobin as i32,
        rounds: 0,
        house_bots: vec!["random".to_owned(), "random".to_owned()],
        ..tournament_request("withdraw-house-bot-01", &names)
    };
    let created = client
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let bot = "players/random bot 1";
    let withdraw = proto::WithdrawPlayerRequest {
        name: created.name.clone(),
        player: bot.to_owned(),
    };
    let after = client
        .withdraw_player(with_token(withdraw.clone(), &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    assert_eq!(after.withdrawn, [bot]);
    let twice = client
        .withdraw_player(with_token(withdraw, &boss))
        .await
        .unwrap_err();
    assert_eq!(reason(&twice), "TOURNAMENT_STATE", "{twice:?}");

    let end = finish(&server, &created.name, Duration::from_secs(600)).await;
    let tournament = end.tournament.unwrap();
    for round in &tournament.paired_rounds[1..] {
        for table in &round.tables {
            assert!(!table.players.contains(&bot.to_owned()), "round {}", round.round);
        }
    }
    for task in tasks {
        task.abort();
    }
    let bytes = crate::tournament_archive::export(&server, &created.name).await;
    server.stop().await;
    let (code, out) = crate::archive::audit(&bytes, &[]);
    assert_eq!(code, Some(0), "{out}");
    // The commitment is printed for the reader to compare with the one
    // shown while the tournament ran; the archive cannot check it alone.
    let line = format!(
        "its SHA-256 {}: compare it with the seed_sha256 the players were shown while it ran",
        created.seed_sha256
    );
    assert!(out.contains(&line), "{line}\n{out}");
    assert!(!out.contains("which hashes to the commitment"), "{out}");
}

fn round_one_game_of<'a>(tournament: &'a proto::Tournament, player: &str) -> &'a proto::TournamentGame {
    tournament.paired_rounds[0]
        .tables
        .iter()
        .flat_map(|t| &t.games)
        .find(|g| g.seats.iter().any(|s| s == player))
        .unwrap()
}
