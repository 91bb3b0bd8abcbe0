use carcassonne_engine::{Command, Rules, Seed, Setup};
use carcassonne_store::{EventStore, MemoryStore, RequestId};
use tokio_stream::StreamExt as _;

use super::lobby::Lobby;
use super::*;
use crate::games::{Acting, NewGame};
use crate::proto::watch_server_response as ws;

/// A game being played in a test: its seats' tokens.
struct Table {
    id: GameId,
    tokens: Vec<String>,
}

impl Table {
    /// A 2-player game created in `games`, spectators `spectator_delay`
    /// events behind.
    fn create(games: &Games, id: &str, seed: u64, spectator_delay: u32) -> Table {
        let id = GameId::new(id).unwrap();
        let setup = Setup {
            rules: Rules::default(),
            players: vec!["A".to_owned(), "B".to_owned()],
            tiles: None,
            seed: Some(Seed::from_u64(seed)),
            time_control: None,
        };
        let new = NewGame::guests(setup, spectator_delay);
        let request = RequestId::new(format!("create-{id}")).unwrap();
        let tokens = games
            .create(&id, &request, new)
            .unwrap()
            .tokens
            .into_iter()
            .flatten()
            .collect();
        Table { id, tokens }
    }

    /// Takes the first legal action, or `command` if given (in the seat
    /// whose decision is pending); `false` if the game is over.
    async fn act(&self, games: &Games, command: Option<Command>) -> bool {
        let loaded = games.load(&self.id).unwrap();
        let Some(seat) = loaded.game.pending().player() else {
            return false;
        };
        let command = command.unwrap_or(loaded.game.legal_commands()[0]);
        let request = RequestId::new(format!("r{}", loaded.version)).unwrap();
        let token = &self.tokens[usize::from(seat.0)];
        let Acting::InFlight(written) = games
            .act(&self.id, token, loaded.version, &request, &command)
            .unwrap()
        else {
            panic!("a new request id is not a retry");
        };
        games.settle(written).await.unwrap();
        true
    }

    /// Plays `actions` actions, or to the end; returns the version.
    async fn play(&self, games: &Games, actions: usize) -> u64 {
        for _ in 0..actions {
            if !self.act(games, None).await {
                break;
            }
        }
        games.load(&self.id).unwrap().version
    }
}

/// A game created in `games` and played `actions` actions (or to its
/// end), the first legal action each time; returns the version.
async fn played(games: &Games, id: &GameId, seed: u64, actions: usize) -> u64 {
    Table::create(games, id.as_str(), seed, 0)
        .play(games, actions)
        .await
}

type ServerStream = Responses<proto::WatchServerResponse>;

/// A server stream of `lobby` after `position`, with keep-alives every
/// 100 ms.
fn server_stream(lobby: &Arc<Lobby>, start: Start) -> ServerStream {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    // The server never stops in these tests.
    std::mem::forget(stop);
    server_watch::stream(lobby.clone(), start, Duration::from_millis(100), stopping)
}

/// Reads a server stream until its next keep-alive.
async fn until_keep_alive(stream: &mut ServerStream) -> Vec<proto::ServerEvent> {
    let mut seen = Vec::new();
    while let Some(message) = stream.next().await {
        match message.unwrap().message.unwrap() {
            ws::Message::Event(change) => seen.push(change),
            ws::Message::KeepAlive(_) => break,
            ws::Message::FellBehind(at) => panic!("fell behind at {at}"),
        }
    }
    seen
}

/// The server stream's changes after position `from`, up to its first
/// keep-alive.
async fn changes(lobby: &Arc<Lobby>, from: u64) -> Vec<proto::ServerEvent> {
    until_keep_alive(&mut server_stream(lobby, Start::After(from))).await
}

fn memory_games(cache: usize) -> (Arc<dyn EventStore>, Arc<Games>) {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
    let games = Arc::new(Games::new(store.clone(), cache));
    (store, games)
}

fn lobby_of(games: &Arc<Games>) -> Arc<Lobby> {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    std::mem::forget(stop);
    Lobby::new(games.clone(), stopping)
}

#[tokio::test]
async fn keep_alives_never_tell_a_spectator_when_a_delayed_game_moves() {
    let (store, games) = memory_games(16);
    let lobby = lobby_of(&games);
    let mut stream = server_stream(&lobby, Start::After(0));
    // Six moves, all of them hidden from spectators by the delay.
    Table::create(&games, "delayed", 5, 50).play(&games, 6).await;
    let last = store.last_position();
    let mut created_at = None;
    let mut keep_alives = 0;
    while keep_alives < 2 {
        match stream.next().await.unwrap().unwrap().message.unwrap() {
            ws::Message::Event(change) => {
                assert_eq!(change.change, proto::GameChange::Created as i32, "{change:?}");
                created_at = Some(change.position);
            }
            // A keep-alive before the creation says where the stream began.
            ws::Message::KeepAlive(at) if created_at.is_none() => assert_eq!(at, 0),
            ws::Message::KeepAlive(at) => {
                assert_eq!(Some(at), created_at, "not the store's last position {last}");
                keep_alives += 1;
            }
            ws::Message::FellBehind(at) => panic!("fell behind at {at}"),
        }
    }
    assert!(
        created_at.is_some_and(|at| (at as u64) < last),
        "moves were stored after it"
    );
}

#[tokio::test]
async fn the_server_stream_reads_each_game_once_and_leaves_the_cache_to_the_games_played() {
    // Room for one game: the one being played.
    let (store, games) = memory_games(1);
    let lobby = lobby_of(&games);
    let count = 12;
    for n in 0..count {
        let id = GameId::new(format!("other-{n}")).unwrap();
        // Half of them to the end.
        played(&games, &id, n, if n % 2 == 0 { usize::MAX } else { 9 }).await;
    }
    let playing = GameId::new("playing").unwrap();
    played(&games, &playing, 99, 5).await;
    let cached = games.cached(&playing).expect("the game played is cached");
    let folds = games.folds();
    // From the beginning: a game is folded only to know whether its last
    // event ends it, at most once (the game played not at all: it is
    // cached at its last version).
    let seen = changes(&lobby, 0).await;
    let finished = seen
        .iter()
        .filter(|c| c.change == proto::GameChange::Finished as i32)
        .count();
    assert_eq!(finished, count as usize / 2);
    assert!(
        games.folds() - folds <= count,
        "{} folds for {count} games",
        games.folds() - folds
    );
    // Again, from the middle of the store: what was learnt is known.
    let (folds, scans) = (games.folds(), lobby.scans());
    let middle = store.last_position() / 2;
    changes(&lobby, middle).await;
    assert_eq!(
        (games.folds(), lobby.scans()),
        (folds, scans),
        "nothing read again"
    );
    // A listing reads every game, and keeps none.
    let (listed, _) = games.list(None, 100, None).unwrap();
    assert_eq!(listed.len(), count as usize + 1);
    let still = games.cached(&playing).expect("still cached");
    assert!(Arc::ptr_eq(&still, &cached), "nothing pushed the game played out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_stream_from_any_position_sends_what_the_live_stream_sent() {
    let (store, games) = memory_games(64);
    let lobby = lobby_of(&games);
    let mut live = server_stream(&lobby, Start::Now);
    // Games played in turns, so that their events interleave: without a
    // delay, with one of 3 events, with one longer than the game (its
    // start is never announced), one resigned early, one still running
    // whose start spectators cannot see yet.
    let tables = [
        Table::create(&games, "plain", 1, 0),
        Table::create(&games, "delayed", 2, 3),
        Table::create(&games, "hidden", 3, 1000),
        Table::create(&games, "resigned", 4, 2),
        Table::create(&games, "running", 5, 100),
    ];
    let mut round = 0;
    loop {
        let mut acted = false;
        for (n, table) in tables.iter().enumerate() {
            let action = match n {
                3 if round == 2 => Some(Command::Resign),
                3 if round > 2 => continue,
                4 if round >= 20 => continue,
                _ => None,
            };
            acted |= table.act(&games, action).await;
        }
        round += 1;
        if !acted {
            break;
        }
    }
    let last = store.last_position();
    // The live stream, up to the last event's change (or as far as a
    // keep-alive says it got after the last event).
    let mut sent = Vec::new();
    while let Some(message) = live.next().await {
        match message.unwrap().message.unwrap() {
            ws::Message::Event(change) => sent.push(change),
            ws::Message::KeepAlive(_) if lobby.classified() >= last => break,
            ws::Message::KeepAlive(_) => {}
            ws::Message::FellBehind(at) => panic!("fell behind at {at}"),
        }
    }
    use proto::GameChange as C;
    let of = |name: &str| -> Vec<i32> {
        sent.iter()
            .filter(|c| c.name == format!("games/{name}"))
            .map(|c| c.change)
            .collect()
    };
    let full = vec![C::Created as i32, C::Started as i32, C::Finished as i32];
    assert_eq!(of("plain"), full);
    assert_eq!(of("delayed"), full);
    assert_eq!(of("hidden"), vec![C::Created as i32, C::Finished as i32]);
    assert_eq!(of("resigned"), full);
    assert_eq!(of("running"), vec![C::Created as i32]);
    // From every position, a new stream: the same changes after it.
    let sent = Arc::new(sent);
    let positions: Vec<u64> = (0..=last).collect();
    for some in positions.chunks(64) {
        let streams: Vec<_> = some
            .iter()
            .map(|&from| {
                let (lobby, sent) = (lobby.clone(), sent.clone());
                tokio::spawn(async move {
                    let expected: Vec<_> = sent
                        .iter()
                        .filter(|c| c.position as u64 > from)
                        .cloned()
                        .collect();
                    assert_eq!(changes(&lobby, from).await, expected, "from position {from}");
                })
            })
            .collect();
        for stream in streams {
            stream.await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_streams_share_one_fold_of_each_game() {
    let (store, games) = memory_games(64);
    let lobby = lobby_of(&games);
    // Games running before the streams open: each is met mid-way.
    let running: Vec<Table> = (0..4)
        .map(|n| Table::create(&games, &format!("running-{n}"), n, 0))
        .collect();
    for table in &running {
        table.play(&games, 3).await;
    }
    let (folds, start) = (games.folds(), store.last_position());
    // Streams from now, each read by a client of its own.
    let (ready, mut readies) = mpsc::channel(1);
    let streams: Vec<_> = (0..20)
        .map(|_| {
            let mut stream = server_stream(&lobby, Start::Now);
            let ready = ready.clone();
            tokio::spawn(async move {
                assert_eq!(until_keep_alive(&mut stream).await, []);
                ready.send(()).await.unwrap();
                let mut changes = Vec::new();
                while changes.last().map(|c: &proto::ServerEvent| c.change)
                    != Some(proto::GameChange::Finished as i32)
                {
                    changes.extend(until_keep_alive(&mut stream).await);
                }
                changes
            })
        })
        .collect();
    for _ in 0..streams.len() {
        readies.recv().await.unwrap();
    }
    // A move in each, then a new game played to its end.
    for table in &running {
        table.act(&games, None).await;
    }
    let new = Table::create(&games, "new", 9, 0);
    new.play(&games, usize::MAX).await;
    let stored = store.last_position() - start;
    let mut seen = Vec::new();
    for stream in streams {
        seen.push(stream.await.unwrap());
    }
    assert_eq!(seen[0].len(), 3, "{:?}", seen[0]);
    assert!(seen.iter().all(|changes| *changes == seen[0]));
    // One fold per game met mid-way (and one for the new game's first
    // move: a creation is not cached), and each event classified once,
    // whatever the number of streams.
    assert_eq!(games.folds() - folds, running.len() as u64 + 1);
    assert_eq!(lobby.classified(), stored);
}

/// A WatchService served on a loopback port; the server stops when the
/// sender is dropped.
async fn served(
    games: &Arc<Games>,
) -> (
    Arc<WatchService>,
    proto::watch_service_client::WatchServiceClient<tonic::transport::Channel>,
    tokio::sync::oneshot::Sender<()>,
) {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    std::mem::forget(stop);
    let key = Arc::new(carcassonne_archive::SigningKey::from_secret_bytes([7; 32]));
    let watch = Arc::new(WatchService::new(games.clone(), stopping, 16, key));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let service = proto::watch_service_server::WatchServiceServer::from_arc(watch.clone());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming_shutdown(tonic::transport::server::TcpIncoming::from(listener), async {
                let _ = stopped.await;
            }),
    );
    let client = proto::watch_service_client::WatchServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    (watch, client, stop)
}

/// Waits, without anything else happening meanwhile, until `done`.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..500 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: not within 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_server_stream_stops_at_once() {
    let (_store, games) = memory_games(64);
    let (watch, mut client, _stop) = served(&games).await;
    let running: Vec<Table> = (0..3)
        .map(|n| Table::create(&games, &format!("running-{n}"), n, 0))
        .collect();
    for table in &running {
        table.play(&games, 3).await;
    }
    let count = 10;
    let mut streams = Vec::new();
    for _ in 0..count {
        let request = proto::WatchServerRequest {
            from_position: None,
            keep_alive_ms: 1000,
        };
        streams.push(client.watch_server(request).await.unwrap().into_inner());
    }
    until("every stream follows", || watch.lobby.followers() == count).await;
    // The clients leave without reading: the streams go with them, and the
    // shared task with the last, before anything else happens.
    drop(streams);
    until("no stream follows", || watch.lobby.followers() == 0).await;
    // Moves that change nothing the stream tells: nobody works on them.
    let (folds, classified) = (games.folds(), watch.lobby.classified());
    for table in &running {
        table.act(&games, None).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        (games.folds(), watch.lobby.classified()),
        (folds, classified),
        "work after the streams were cancelled"
    );
}

#[tokio::test]
async fn a_replay_builds_its_steps_as_they_are_read() {
    let (_store, games) = memory_games(16);
    let id = GameId::new("replayed").unwrap();
    let last = played(&games, &id, 3, usize::MAX).await;
    assert!(last > 100, "a whole game: {last} events");
    let (_stop, stopping) = tokio::sync::watch::channel(false);
    let built = Arc::new(AtomicUsize::new(0));
    let plan = Plan {
        id: id.clone(),
        from: 2,
        to: last,
        reveal: crate::games::SeedReveal::unshared(),
    };
    let mut steps = Replay::spawn(games.clone(), plan, Duration::ZERO, stopping, built.clone());
    // Unread: one step waits in the channel, nothing more is built.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(built.load(Ordering::Relaxed), 1, "built before the first read");
    let mut versions = Vec::new();
    while let Some(step) = steps.recv().await {
        versions.push(step.unwrap().event.unwrap().version);
        // At most one step ahead of the reader.
        assert!(built.load(Ordering::Relaxed) <= versions.len() + 1);
    }
    // Stored seqs 3..=last, shown as API versions.
    assert_eq!(
        versions,
        (version::of_seq(3)..=version::of_seq(last)).collect::<Vec<_>>()
    );
    // A replay that is dropped unread ends its task and frees it all.
    let (_stop, stopping) = tokio::sync::watch::channel(false);
    let built = Arc::new(AtomicUsize::new(0));
    let plan = Plan {
        id,
        from: 2,
        to: last,
        reveal: crate::games::SeedReveal::unshared(),
    };
    let dropped = Replay::spawn(games.clone(), plan, Duration::ZERO, stopping, built.clone());
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(dropped);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(Arc::strong_count(&built), 1, "the replay's task ended");
    assert_eq!(built.load(Ordering::Relaxed), 1);
}
