//! The server on PostgreSQL: `carcassonne migrate` from a sled store, and
//! several `serve --store` nodes on one database (a game created on one
//! node played through another, watchers on one node of what another
//! appends, two clients on two nodes racing one version).
//!
//! The database is the store tests' throwaway cluster (`pg.rs`, shared
//! with `crates/store/tests/it/`): skipped with a note without Debian's
//! postgresql-15, failing then when `CARCASSONNE_PG_TESTS=1`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::player_service_client::PlayerServiceClient;
use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, watch_game_response::Message as W};
use carcassonne_store::{EventStore as _, PgStore, SledStore, StoreConfig};
use tokio_stream::StreamExt as _;
use tonic::Code;

use crate::pg;
use crate::support::*;

fn carcassonne_command(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(args)
        .env_remove("CARCASSONNE_STORE")
        .output()
        .unwrap()
}

/// SIGTERM to each node; each exits 0 (its log tells why not).
fn stop_cleanly(nodes: impl IntoIterator<Item = Served>) {
    for node in nodes {
        let (status, log) = node.terminate();
        assert_eq!(status.code(), Some(0), "{log}");
    }
}

/// `serve --store URL` on a free port (its data directory unused but
/// given, so that nothing lands in the working directory).
fn serve_on(url: &str, dir: &Path, name: &str) -> Served {
    match serve(
        &dir.join(name),
        &dir.join(format!("{name}.log")),
        &["--store", url],
    ) {
        Ok(served) => served,
        Err((status, log)) => panic!("serve --store did not start ({status}):\n{log}"),
    }
}

/// The same database named with an unreachable host first, as a
/// connection string of a replicated cluster names every host.
fn with_dead_host_first(url: &str) -> String {
    let port = url
        .split_whitespace()
        .find_map(|pair| pair.strip_prefix("port="))
        .unwrap();
    url.replace("host=127.0.0.1", "host=127.0.0.1,127.0.0.1")
        .replace(&format!("port={port}"), &format!("port=1,{port}"))
}

/// The same database as a URL with two hosts, the first unreachable.
fn as_url_with_two_hosts(url: &str) -> String {
    let field = |name: &str| {
        url.split_whitespace()
            .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
            .unwrap()
            .to_owned()
    };
    format!(
        "postgres://postgres@127.0.0.1:1,127.0.0.1:{}/{}?target_session_attrs=read-write",
        field("port"),
        field("dbname")
    )
}

/// A new database (the driver is synchronous: off the async workers).
fn database(cluster: &pg::Cluster) -> String {
    tokio::task::block_in_place(|| cluster.database())
}

fn every_event(store: &dyn carcassonne_store::EventStore) -> Vec<carcassonne_store::StoredEvent> {
    let mut events = Vec::new();
    loop {
        let next = store.read_all(events.len() as u64 + 1, 10_000).unwrap();
        if next.is_empty() {
            return events;
        }
        events.extend(next);
    }
}

#[test]
fn backup_of_a_postgresql_store_is_refused_and_points_at_pg_dump() {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("games.backup");
    let out = carcassonne_command(&[
        "backup",
        "--store",
        "postgres://nobody@127.0.0.1:1/none",
        "--to",
        to.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("pg_dump") && stderr.contains("pg_basebackup"),
        "{stderr}"
    );
    assert!(!to.exists());
    let out = carcassonne_command(&["serve", "--store", "/var/lib/games"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("PostgreSQL connection string"), "{stderr}");
}

/// `migrate` copies every stream of a stopped server's sled store (games,
/// the players' registry) into an empty database, envelopes and positions
/// as they were; refuses a database that is not empty, writing nothing; a
/// server on the database then serves the games, retried requests
/// included, and plays them on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_copies_a_sled_store_and_refuses_a_database_that_is_not_empty() {
    let Some(cluster) = pg::cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = serve(&data, &dir.path().join("sled.log"), &[]).unwrap();
    let mut client = GameServiceClient::connect(served.addr.clone()).await.unwrap();
    PlayerServiceClient::connect(served.addr.clone())
        .await
        .unwrap()
        .register_player(proto::RegisterPlayerRequest { name: "Ada".into() })
        .await
        .unwrap();
    let mut games = Vec::new();
    for i in 0..3 {
        let (name, tokens) = new_game(&mut client, &format!("migrated-{i}"), i).await;
        play(&mut client, &name, &tokens, 5).await;
        games.push((name, tokens));
    }
    // The last action of the first game, to retry on the copy.
    let (name, tokens) = &games[0];
    let legal = legal_as(&mut client, name, &tokens[0]).await;
    let seat = legal.pending.as_ref().unwrap().seat as usize;
    let last = act(
        name,
        legal.version,
        "the-last-one",
        legal.actions[0].action.unwrap(),
    );
    let first_answer = client
        .act(with_token(last.clone(), &tokens[seat]))
        .await
        .unwrap()
        .into_inner();
    stop_cleanly([served]);

    let url = database(cluster);
    let out = carcassonne_command(&["migrate", "--from", data.to_str().unwrap(), "--to", &url]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Three games and the players' registry.
    assert!(
        said.starts_with("copied 4 streams, ") && said.contains("verified"),
        "{said}"
    );

    let sled = SledStore::open(&data, StoreConfig::default()).unwrap();
    let copy = PgStore::open(&url, StoreConfig::default()).unwrap();
    let source = every_event(&sled);
    assert!(source.len() > 20);
    assert_eq!(every_event(&copy), source, "every envelope at its position");
    assert!(copy.verify_all().unwrap().is_ok());
    sled.close().unwrap();
    drop(sled);

    // Into a database that is not empty: refused, nothing written.
    let out = carcassonne_command(&["migrate", "--from", data.to_str().unwrap(), "--to", &url]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not empty"), "{stderr}");
    let rows: i64 = tokio::task::block_in_place(|| {
        let mut admin = cluster.admin(&url);
        admin
            .query_one("SELECT count(*) FROM events", &[])
            .unwrap()
            .get(0)
    });
    assert_eq!(rows as usize, source.len());
    drop(copy);

    let node = serve_on(&url, dir.path(), "pg");
    let mut client = GameServiceClient::connect(node.addr.clone()).await.unwrap();
    // A retry of a request answered by the sled server: the first answer.
    let retried = client
        .act(with_token(last, &tokens[seat]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(retried.version, first_answer.version);
    assert_eq!(retried.events, first_answer.events);
    for (name, tokens) in &games {
        let finished = play_to_end(&mut client, name, tokens).await;
        assert_eq!(finished.status(), proto::GameStatus::Finished, "{name}");
    }
    stop_cleanly([node]);
}

/// Three nodes on one database, named three ways (one host; two hosts,
/// the first unreachable; the same as a URL): one signing key; a game
/// created on the first node is played to its end through the second
/// while a watcher on the third sees every event once, in order; the
/// server-wide stream is the same on every node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_on_one_database_serve_the_same_games_and_streams() {
    let Some(cluster) = pg::cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = database(cluster);
    let a = serve_on(&url, dir.path(), "a");
    let b = serve_on(&with_dead_host_first(&url), dir.path(), "b");
    let c = serve_on(&as_url_with_two_hosts(&url), dir.path(), "c");
    let mut keys = Vec::new();
    for node in [&a, &b, &c] {
        let mut watch = WatchServiceClient::connect(node.addr.clone()).await.unwrap();
        keys.push(
            watch
                .get_server_key(proto::GetServerKeyRequest {})
                .await
                .unwrap()
                .into_inner()
                .public_key,
        );
    }
    assert!(keys.iter().all(|key| *key == keys[0]), "one key: {keys:?}");
    let printed = carcassonne_command(&["public-key", "--store", &url]);
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&printed.stdout).trim(), keys[0]);

    let mut on_a = GameServiceClient::connect(a.addr.clone()).await.unwrap();
    let mut on_b = GameServiceClient::connect(b.addr.clone()).await.unwrap();
    let (name, tokens) = new_game(&mut on_a, "across-nodes-7f3a9c", 7).await;
    // A retried creation gets the first answer from another node too,
    // tokens included: they derive from the request id and the key the
    // nodes share.
    let retried = create(&mut on_b, create_request("across-nodes-7f3a9c", 2, &[], 7)).await;
    assert_eq!(retried, (name.clone(), tokens.clone()));
    let mut watcher = WatchServiceClient::connect(c.addr.clone()).await.unwrap();
    let mut stream = watch(&mut watcher, watch_request(&name, Some(1))).await;
    // Half the game through A, the rest through B, taking turns.
    for step in 0..20 {
        let node = if step % 2 == 0 { &mut on_a } else { &mut on_b };
        play_step(node, &name, &tokens, step).await.unwrap();
    }
    let finished = play_to_end(&mut on_b, &name, &tokens).await;
    assert_eq!(finished.status(), proto::GameStatus::Finished);
    let mut versions = Vec::new();
    while versions.last() != Some(&finished.version) {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .unwrap_or_else(|_| panic!("the watcher on C stopped at {versions:?}"))
            .unwrap()
            .unwrap();
        match message.message.unwrap() {
            W::Snapshot(game) => assert_eq!(game.version, 1),
            W::Event(event) => versions.push(event.event.unwrap().version),
            W::KeepAlive(_) => {}
            W::FellBehind(v) => panic!("fell behind at {v}"),
        }
    }
    let expected: Vec<i64> = (2..=finished.version).collect();
    assert_eq!(versions, expected, "every event once, in order");

    let mut changes = Vec::new();
    for node in [&a, &b, &c] {
        let mut watch = WatchServiceClient::connect(node.addr.clone()).await.unwrap();
        let mut seen = server_changes(&mut watch).await;
        for _ in 0..50 {
            if seen.last().map(|e| e.version) == Some(finished.version) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            seen = server_changes(&mut watch).await;
        }
        changes.push(seen);
    }
    assert!(!changes[0].is_empty());
    assert_eq!(changes[0], changes[1]);
    assert_eq!(changes[0], changes[2]);
    stop_cleanly([a, b, c]);
}

/// Two clients on two nodes act on one version at once, many times:
/// exactly one of each pair is stored, the other is told its version is
/// stale, and the game's events are numbered without a gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_on_two_nodes_racing_one_version_one_wins() {
    let Some(cluster) = pg::cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = database(cluster);
    let a = serve_on(&url, dir.path(), "a");
    let b = serve_on(&url, dir.path(), "b");
    let mut on_a = GameServiceClient::connect(a.addr.clone()).await.unwrap();
    let mut on_b = GameServiceClient::connect(b.addr.clone()).await.unwrap();
    let (name, tokens) = new_game(&mut on_a, "race", 3).await;
    for round in 0..12 {
        let legal = legal_as(&mut on_a, &name, &tokens[0]).await;
        let seat = legal.pending.as_ref().unwrap().seat as usize;
        let action = |n: usize| legal.actions[n % legal.actions.len()].action.unwrap();
        let ask = |n: usize| {
            with_token(
                act(&name, legal.version, &format!("r{round}-{n}"), action(n)),
                &tokens[seat],
            )
        };
        let (first, second) = tokio::join!(on_a.act(ask(0)), on_b.act(ask(1)));
        let won = [&first, &second].iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {first:?} {second:?}");
        for result in [first, second] {
            if let Err(status) = result {
                assert_eq!(status.code(), Code::Aborted, "{status:?}");
                assert_eq!(reason(&status), "STALE_VERSION");
            }
        }
    }
    let game = game(&mut on_b, &name).await;
    let store = PgStore::open(&url, StoreConfig::default()).unwrap();
    let id = carcassonne_store::GameId::new(name.strip_prefix("games/").unwrap()).unwrap();
    let seqs: Vec<u64> = store.read_game(&id, 1).unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(game.version, seqs.len() as i64 - 1);
    drop(store);
    stop_cleanly([a, b]);
}

/// What one node learns of another's writes: a player registered on one
/// node acts and is found on the other, and a clocked game's deadline
/// falls due on the node that did not write its last action (the writer
/// was killed): the timeout is stored by the survivor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_follows_what_another_node_wrote() {
    let Some(cluster) = pg::cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = database(cluster);
    let a = serve_on(&url, dir.path(), "a");
    let b = serve_on(&url, dir.path(), "b");
    let mut players_a = PlayerServiceClient::connect(a.addr.clone()).await.unwrap();
    let mut players_b = PlayerServiceClient::connect(b.addr.clone()).await.unwrap();
    // B knows the registry before A changes it.
    players_b
        .register_player(proto::RegisterPlayerRequest { name: "Brun".into() })
        .await
        .unwrap();
    players_a
        .register_player(proto::RegisterPlayerRequest { name: "Ada".into() })
        .await
        .unwrap();
    let mut found = None;
    for _ in 0..50 {
        match players_b
            .get_player(proto::GetPlayerRequest {
                name: "players/Ada".into(),
            })
            .await
        {
            Ok(player) => {
                found = Some(player.into_inner());
                break;
            }
            Err(status) => assert_eq!(status.code(), Code::NotFound, "{status:?}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(found.is_some(), "node B never saw the player registered on A");
    // And B registers the next one on a registry A moved on.
    players_b
        .register_player(proto::RegisterPlayerRequest { name: "Cleo".into() })
        .await
        .unwrap();

    let mut on_a = GameServiceClient::connect(a.addr.clone()).await.unwrap();
    let request = proto::CreateGameRequest {
        time_control: Some(proto::TimeControl {
            decision_ms: 1500,
            ..Default::default()
        }),
        ..create_request("clocked-across-nodes", 2, &[], 9)
    };
    let (name, tokens) = create(&mut on_a, request).await;
    play_step(&mut on_a, &name, &tokens, 0).await.unwrap();
    let log = a.kill();
    assert!(!log.contains("timed out"), "{log}");
    let mut on_b = GameServiceClient::connect(b.addr.clone()).await.unwrap();
    let mut over = None;
    for _ in 0..100 {
        let now = game(&mut on_b, &name).await;
        if now.status() == proto::GameStatus::Finished {
            over = Some(now);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, log) = b.terminate();
    let over = over.unwrap_or_else(|| panic!("node B never timed out the game node A was killed in:\n{log}"));
    assert!(over.ending.is_some());
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("timed out"), "{log}");
}

/// Plays `name` through `client` until the game ends or a call fails,
/// keeping in `acknowledged` the version of the last action answered.
async fn play_until_failure(
    mut client: GameServiceClient<tonic::transport::Channel>,
    name: String,
    tokens: Vec<String>,
    acknowledged: std::sync::Arc<std::sync::atomic::AtomicI64>,
) {
    for step in 0.. {
        let request = with_token(proto::GetLegalActionsRequest { name: name.clone() }, &tokens[0]);
        let Ok(legal) = client.get_legal_actions(request).await else {
            return;
        };
        let legal = legal.into_inner();
        let Some(pending) = legal.pending.as_ref() else {
            return;
        };
        if pending.kind == proto::DecisionKind::Unspecified as i32 || legal.actions.is_empty() {
            return;
        }
        let action = legal.actions[step % legal.actions.len()].action.unwrap();
        let request = act(&name, legal.version, &format!("v{}", legal.version), action);
        match client
            .act(with_token(request, &tokens[pending.seat as usize]))
            .await
        {
            Ok(answer) => {
                acknowledged.store(answer.into_inner().version, std::sync::atomic::Ordering::SeqCst)
            }
            Err(_) => return,
        }
    }
}

/// A node killed (SIGKILL) while games are played through it loses no
/// acknowledged action: the other node serves every game at least at its
/// last acknowledged version, every chain verifies, and the games play on
/// to their end through the survivor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_under_load_loses_no_acknowledged_action() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};
    let Some(cluster) = pg::cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = database(cluster);
    let a = serve_on(&url, dir.path(), "a");
    let b = serve_on(&url, dir.path(), "b");
    let mut on_a = GameServiceClient::connect(a.addr.clone()).await.unwrap();
    let mut games = Vec::new();
    let mut load = Vec::new();
    for i in 0..6 {
        let (name, tokens) = new_game(&mut on_a, &format!("loaded-{i}"), i).await;
        let acknowledged = Arc::new(AtomicI64::new(2));
        load.push(tokio::spawn(play_until_failure(
            on_a.clone(),
            name.clone(),
            tokens.clone(),
            acknowledged.clone(),
        )));
        games.push((name, tokens, acknowledged));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    a.kill();
    for task in load {
        task.await.unwrap();
    }
    let mut on_b = GameServiceClient::connect(b.addr.clone()).await.unwrap();
    let mut played = 0;
    for (name, _, acknowledged) in &games {
        let acknowledged = acknowledged.load(Ordering::SeqCst);
        played += acknowledged - 2;
        let now = game(&mut on_b, name).await;
        assert!(
            now.version >= acknowledged,
            "{name}: {} < {acknowledged}",
            now.version
        );
    }
    assert!(played > 0, "nothing was played before the kill");
    let verified = tokio::task::block_in_place(|| {
        PgStore::open(&url, StoreConfig::default())
            .unwrap()
            .verify_all()
            .unwrap()
    });
    assert!(verified.is_ok(), "{verified:?}");
    for (name, tokens, _) in &games {
        let finished = play_to_end(&mut on_b, name, tokens).await;
        assert_eq!(finished.status(), proto::GameStatus::Finished, "{name}");
    }
    stop_cleanly([b]);
}

/// A position no event has (an append that failed after taking it, here
/// one the database handed out to nobody) is passed over by the seats'
/// index: learning the games opened up to it ends, and later ones are
/// learnt after it.
#[test]
fn the_seats_index_passes_over_an_unused_position() {
    use std::sync::Arc;

    use carcassonne::games::stored::Opened;
    use carcassonne::players::seats::Seats;
    use carcassonne_store::{EventStore, GameId, RequestId};

    let Some(cluster) = pg::cluster() else { return };
    let url = cluster.database();
    let store: Arc<dyn EventStore> = Arc::new(PgStore::open(&url, StoreConfig::default()).unwrap());
    let seats = Arc::new(Seats::build(store.clone()).unwrap());
    let open = |name: &str| {
        let opened = Opened {
            token_hashes: vec![Default::default(); 2],
            accounts: vec![Some("Ada".into()), None],
            ..Opened::default()
        };
        let id = GameId::new(name).unwrap();
        let appended = store
            .append(&id, 0, &RequestId::none(), &[opened.to_new_event()])
            .unwrap();
        (id, appended.first_position)
    };
    let (before, at) = open("before");
    cluster
        .admin(&url)
        .batch_execute("SELECT nextval('event_positions')")
        .unwrap();
    let (after, later) = open("after");
    assert_eq!(later, at + 2, "one position left unused");
    let (done, finished) = std::sync::mpsc::channel();
    let learning = seats.clone();
    std::thread::spawn(move || done.send(learning.learn_through(at + 1)));
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("learning up to an unused position ends")
        .unwrap();
    assert_eq!(seats.open_games_of("Ada"), std::slice::from_ref(&before));
    seats.learn_through(later).unwrap();
    assert_eq!(seats.open_games_of("Ada"), [after, before]);
}

/// Issue 25, item 18: heartbeats are the database's clock's. A node whose
/// clock runs an hour ahead beats and stops; a node with a right clock
/// serves a clocked game and stops; a node started after the downtime
/// must find nobody alive (the fast node's heartbeat is not an hour in
/// the future) and resume the game from the moment the service stopped
/// (not from the fast node's future heartbeat, which would charge the
/// seat for the downtime).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_clock_ran_ahead_hides_neither_the_downtime_nor_its_own_stop() {
    use std::sync::Arc;

    use carcassonne::proto::game_event::Event as E;
    use carcassonne::server::{PostgresUrl, ServerConfig};
    use carcassonne_store::ManualClock;

    let Some(cluster) = pg::cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = database(cluster);
    let node = |name: &str, store: StoreConfig| ServerConfig {
        data: dir.path().join(name),
        postgres: Some(PostgresUrl::parse(&url).unwrap()),
        store,
        ..ServerConfig::default()
    };
    let unix_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    };
    // Given a node an hour ahead, which beats and stops.
    let hour_ahead = Arc::new(ManualClock::new(unix_ms() as u64 + 3_600_000));
    let fast = TestServer::start_with(node("fast", StoreConfig::default().clock(hour_ahead))).await;
    let _ = fast.client().await;
    fast.stop().await;
    // And a node with a right clock, with a clocked game whose seat's clock
    // runs, which stops too.
    let right = TestServer::start_with(node("right", StoreConfig::default())).await;
    let mut client = right.client().await;
    let request = proto::CreateGameRequest {
        time_control: Some(proto::TimeControl {
            main_ms: 600_000,
            ..Default::default()
        }),
        ..create_request("clocked-through-a-restart", 2, &[], 5)
    };
    let (name, tokens) = create(&mut client, request).await;
    play_step(&mut client, &name, &tokens, 0).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let before = game(&mut client, &name).await;
    let stopping_at = unix_ms();
    right.stop().await;
    let stopped_at = unix_ms();
    // When a node with a right clock starts after the downtime (longer
    // than the time a heartbeat keeps a node alive).
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    let restarted = TestServer::start_with(node("restarted", StoreConfig::default())).await;
    let mut client = restarted.client().await;
    // Then it resumed the game, from when the service stopped.
    let after = game(&mut client, &name).await;
    assert_eq!(
        after.version,
        before.version + 1,
        "one resumption: no node was alive meanwhile"
    );
    let mut watcher = WatchServiceClient::connect(restarted.url()).await.unwrap();
    let request = replay_request(&name, Some(after.version - 1), None);
    let resumed = replay(&mut watcher, request).await.pop().unwrap().event.unwrap();
    let Some(E::Resumed(proto::Resumed { down_since_ms })) = resumed.event else {
        panic!("the last event is {resumed:?}");
    };
    assert!(
        (stopping_at - 500..=stopped_at).contains(&down_since_ms),
        "down since {down_since_ms}: the service stopped between {stopping_at} and {stopped_at}"
    );
    // What the running seat had left when the service stopped, it has now.
    let had = before.pending.as_ref().unwrap().deadline_ms - stopped_at;
    let has = after.pending.as_ref().unwrap().deadline_ms - after.clock_time_ms;
    assert!(
        has >= had,
        "the seat was charged for the downtime: {had} ms left at the stop, {has} ms after"
    );
    restarted.stop().await;
}
