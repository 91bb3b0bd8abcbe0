//! What the tests share, one helper a boundary: a server in the test
//! process and its clients, games created and played through the API, the
//! watch and replay streams read to their end, and the `carcassonne`
//! binary run as a command or as a server.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, action::Action as A, watch_game_response::Message as W};
use carcassonne::server::{self, ServerConfig};
use carcassonne_store::{ManualClock, StoreConfig};
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;
use tonic::{Request, Status, Streaming};

/// A server on a free loopback port, stopped when dropped or on `stop`.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// The store's directory, when the server has one of its own.
    _dir: Option<tempfile::TempDir>,
}

impl TestServer {
    pub async fn start(data: &Path) -> TestServer {
        TestServer::start_with(ServerConfig {
            data: data.to_owned(),
            ..ServerConfig::default()
        })
        .await
    }

    pub async fn start_with(config: ServerConfig) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server::serve(config, listener, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        TestServer {
            addr,
            stop: Some(stop),
            task: Some(task),
            _dir: None,
        }
    }

    /// A server on a store of its own whose clock stands at `start_ms` and
    /// moves only when the test moves the clock returned (the timekeeper
    /// wakes at every move).
    pub async fn start_clocked(start_ms: u64) -> (TestServer, Arc<ManualClock>) {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(start_ms));
        let mut server = TestServer::start_with(ServerConfig {
            data: dir.path().to_owned(),
            store: StoreConfig::default().clock(clock.clone()),
            ..ServerConfig::default()
        })
        .await;
        server._dir = Some(dir);
        (server, clock)
    }

    /// The data directory of a server on a store of its own.
    pub fn data(&self) -> Option<&Path> {
        self._dir.as_ref().map(tempfile::TempDir::path)
    }

    /// `http://` and the server's address.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn client(&self) -> GameServiceClient<Channel> {
        let url = self.url();
        for _ in 0..50 {
            if let Ok(client) = GameServiceClient::connect(url.clone()).await {
                return client;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("the server at {url} does not answer");
    }

    /// A client of the watch service, once the server answers.
    pub async fn watcher(&self) -> WatchServiceClient<Channel> {
        let _ = self.client().await;
        WatchServiceClient::connect(self.url()).await.unwrap()
    }

    /// Stops the server and waits until its store is closed.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A server on a store of its own in a temporary directory, and a client.
pub async fn start() -> (TestServer, GameServiceClient<Channel>) {
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start(dir.path()).await;
    server._dir = Some(dir);
    let client = server.client().await;
    (server, client)
}

pub fn create_request(
    request_id: &str,
    players: usize,
    expansions: &[proto::Expansion],
    seed: u8,
) -> proto::CreateGameRequest {
    proto::CreateGameRequest {
        request_id: request_id.to_owned(),
        players: (0..players).map(|i| format!("Bot {i}")).collect(),
        rules: Some(proto::RuleOptions {
            expansions: expansions.iter().map(|e| *e as i32).collect(),
            ..Default::default()
        }),
        seed: hex(&[seed; 32]),
        tiles: Vec::new(),
        spectator_delay: 0,
        time_control: None,
        ..Default::default()
    }
}

/// A 2-player game's creation that spectators see `delay` versions behind.
pub fn delayed_request(
    request_id: &str,
    delay: u32,
    expansions: &[proto::Expansion],
    seed: u8,
) -> proto::CreateGameRequest {
    proto::CreateGameRequest {
        spectator_delay: delay,
        ..create_request(request_id, 2, expansions, seed)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn with_token<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

pub fn act(name: &str, version: i64, request_id: &str, action: A) -> proto::ActRequest {
    proto::ActRequest {
        name: name.to_owned(),
        expected_version: version,
        request_id: request_id.to_owned(),
        action: Some(proto::Action { action: Some(action) }),
        view: 0,
    }
}

pub fn reason(status: &Status) -> String {
    use tonic_types::StatusExt as _;
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

/// The seats' tokens of a creation's answer.
pub fn tokens(created: &proto::CreateGameResponse) -> Vec<String> {
    created.tokens.iter().map(|t| t.token.clone()).collect()
}

/// Creates a game: its name and its seats' tokens.
pub async fn create(
    client: &mut GameServiceClient<Channel>,
    request: proto::CreateGameRequest,
) -> (String, Vec<String>) {
    let created = client.create_game(request).await.unwrap().into_inner();
    let tokens = tokens(&created);
    (created.game.unwrap().name, tokens)
}

/// A new 2-player base game: its name and its seats' tokens.
pub async fn new_game(
    client: &mut GameServiceClient<Channel>,
    request_id: &str,
    seed: u8,
) -> (String, Vec<String>) {
    create(client, create_request(request_id, 2, &[], seed)).await
}

/// The game as GetGame shows it to a spectator.
pub async fn game(client: &mut GameServiceClient<Channel>, name: &str) -> proto::Game {
    client
        .get_game(proto::GetGameRequest {
            name: name.to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap()
}

/// The game's pending decision and its legal actions, as a spectator sees
/// them.
pub async fn legal(client: &mut GameServiceClient<Channel>, name: &str) -> proto::GetLegalActionsResponse {
    legal_of(client, Request::new(legal_request(name))).await
}

/// The same as the seat of `token` sees them: a player sees no delay.
pub async fn legal_as(
    client: &mut GameServiceClient<Channel>,
    name: &str,
    token: &str,
) -> proto::GetLegalActionsResponse {
    legal_of(client, with_token(legal_request(name), token)).await
}

fn legal_request(name: &str) -> proto::GetLegalActionsRequest {
    proto::GetLegalActionsRequest {
        name: name.to_owned(),
    }
}

async fn legal_of(
    client: &mut GameServiceClient<Channel>,
    request: Request<proto::GetLegalActionsRequest>,
) -> proto::GetLegalActionsResponse {
    client.get_legal_actions(request).await.unwrap().into_inner()
}

/// Takes the legal action number `choice` (modulo their number) of `legal`
/// as the seat it waits for, with a request id named by the version.
pub async fn act_legal(
    client: &mut GameServiceClient<Channel>,
    name: &str,
    tokens: &[String],
    legal: &proto::GetLegalActionsResponse,
    choice: usize,
) -> proto::ActResponse {
    let seat = legal.pending.as_ref().unwrap().seat as usize;
    let action = legal.actions[choice % legal.actions.len()].action.unwrap();
    client
        .act(with_token(
            act(name, legal.version, &format!("v{}", legal.version), action),
            &tokens[seat],
        ))
        .await
        .unwrap()
        .into_inner()
}

/// One step of a game as its players see it: the legal action `choice`
/// (modulo their number); `None` once the game is over.
pub async fn play_step(
    client: &mut GameServiceClient<Channel>,
    name: &str,
    tokens: &[String],
    choice: usize,
) -> Option<proto::ActResponse> {
    // A player's view: spectators of a delayed game see it behind.
    let legal = legal_as(client, name, &tokens[0]).await;
    if legal.pending.as_ref().unwrap().kind == proto::DecisionKind::Unspecified as i32 {
        return None;
    }
    Some(act_legal(client, name, tokens, &legal, choice).await)
}

/// Plays `steps` actions of a running game, action `n` of the legal ones
/// at step `n`; returns the version after them.
pub async fn play(
    client: &mut GameServiceClient<Channel>,
    name: &str,
    tokens: &[String],
    steps: usize,
) -> i64 {
    let mut version = 0;
    for step in 0..steps {
        let acted = play_step(client, name, tokens, step).await;
        version = acted
            .unwrap_or_else(|| panic!("{name} is over at step {step}"))
            .version;
    }
    version
}

/// Plays the game to its end, action `n` of the legal ones at step `n`, as
/// the seat the game waits for. Returns the final game.
pub async fn play_to_end(
    client: &mut GameServiceClient<Channel>,
    name: &str,
    tokens: &[String],
) -> proto::Game {
    for step in 0.. {
        if play_step(client, name, tokens, step).await.is_none() {
            break;
        }
    }
    game(client, name).await
}

/// A watch of `name` from `from` (unset: now), without keep-alives.
pub fn watch_request(name: &str, from: Option<i64>) -> proto::WatchGameRequest {
    proto::WatchGameRequest {
        name: name.to_owned(),
        from_version: from,
        keep_alive_ms: 0,
    }
}

/// Opens a watch stream.
pub async fn watch(
    w: &mut WatchServiceClient<Channel>,
    request: impl tonic::IntoRequest<proto::WatchGameRequest>,
) -> Streaming<proto::WatchGameResponse> {
    w.watch_game(request).await.unwrap().into_inner()
}

/// The next message of a watch stream, which must be a snapshot.
pub async fn snapshot(stream: &mut Streaming<proto::WatchGameResponse>) -> proto::Game {
    let Some(Ok(proto::WatchGameResponse {
        message: Some(W::Snapshot(snapshot)),
    })) = stream.next().await
    else {
        panic!("no snapshot")
    };
    snapshot
}

/// Reads a watch stream to its end: the snapshot's version and the events'.
pub async fn read_all(mut stream: Streaming<proto::WatchGameResponse>) -> (i64, Vec<proto::WatchedEvent>) {
    let mut snapshot = 0;
    let mut events = Vec::new();
    while let Some(message) = stream.next().await {
        match message.unwrap().message.unwrap() {
            W::Snapshot(game) => snapshot = game.version,
            W::Event(event) => events.push(event),
            W::KeepAlive(_) => {}
            W::FellBehind(v) => panic!("fell behind at {v}"),
        }
    }
    (snapshot, events)
}

/// A replay of `name` from `from` to `to` (unset: now), unpaced.
pub fn replay_request(name: &str, from: Option<i64>, to: Option<i64>) -> proto::ReplayGameRequest {
    proto::ReplayGameRequest {
        name: name.to_owned(),
        from_version: from,
        to_version: to,
        interval_ms: 0,
    }
}

/// Every step of a replay, to its end.
pub async fn replay(
    w: &mut WatchServiceClient<Channel>,
    request: proto::ReplayGameRequest,
) -> Vec<proto::ReplayGameResponse> {
    let mut stream = w.replay_game(request).await.unwrap().into_inner();
    let mut steps = Vec::new();
    while let Some(step) = stream.next().await {
        steps.push(step.unwrap());
    }
    steps
}

/// The game at `version` as GetGameAtVersion shows it.
pub async fn game_at(
    w: &mut WatchServiceClient<Channel>,
    name: &str,
    version: i64,
) -> Result<proto::Game, Status> {
    let answer = w
        .get_game_at_version(proto::GetGameAtVersionRequest {
            name: name.to_owned(),
            version,
        })
        .await?;
    Ok(answer.into_inner().game.unwrap())
}

pub fn export_request(name: &str) -> proto::ExportGameRequest {
    proto::ExportGameRequest {
        name: name.to_owned(),
    }
}

/// The server stream's changes from the store's beginning up to its first
/// keep-alive.
pub async fn server_changes(w: &mut WatchServiceClient<Channel>) -> Vec<proto::ServerEvent> {
    use proto::watch_server_response::Message as S;
    let mut stream = w
        .watch_server(proto::WatchServerRequest {
            from_position: Some(0),
            keep_alive_ms: 1000,
        })
        .await
        .unwrap()
        .into_inner();
    let mut changes = Vec::new();
    loop {
        match stream.next().await.unwrap().unwrap().message.unwrap() {
            S::Event(e) => changes.push(e),
            S::KeepAlive(_) => return changes,
            S::FellBehind(p) => panic!("fell behind at {p}"),
        }
    }
}

/// Runs the binary with `args`, feeding `stdin`, with no token from the
/// environment.
pub fn carcassonne(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(args)
        .env_remove("CARCASSONNE_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// `carcassonne serve` on `data`, its log in `log`.
pub struct Served {
    child: Child,
    pub addr: String,
    log: PathBuf,
}

/// Starts `carcassonne serve` on `data` and a free port; the exit status
/// and the log when it stops before it listens.
pub fn serve(data: &Path, log: &Path, extra: &[&str]) -> Result<Served, (ExitStatus, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(data)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    match line.strip_prefix("listening on ") {
        Some(addr) => Ok(Served {
            child,
            addr: format!("http://{}", addr.trim()),
            log: log.to_owned(),
        }),
        None => {
            let status = child.wait().unwrap();
            Err((status, std::fs::read_to_string(log).unwrap()))
        }
    }
}

impl Served {
    /// SIGTERM, then the exit status and the log.
    pub fn terminate(mut self) -> (ExitStatus, String) {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = self.child.wait().unwrap();
        (status, std::fs::read_to_string(&self.log).unwrap())
    }
}

impl Served {
    /// SIGKILL: the server stops at once, as in a crash; the log so far.
    pub fn kill(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::fs::read_to_string(&self.log).unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A log with every hash recomputed, named `name` (moved to another game,
/// or its events changed): a chain that checks out on its own.
pub fn rechain(events: &[proto::StoredEvent], name: &str) -> Vec<proto::StoredEvent> {
    rechain_stream(events, name.strip_prefix("games/").unwrap())
}

/// The events of the stream `stream` (a game's id, or a server stream's
/// such as `@ratings`) with every hash computed again.
pub fn rechain_stream(events: &[proto::StoredEvent], stream: &str) -> Vec<proto::StoredEvent> {
    use carcassonne_store::{Actor, GameId, Hash, RequestId, StoredEvent};
    let id = GameId::new(stream).unwrap();
    let mut previous = Hash::ZERO;
    events
        .iter()
        .map(|e| {
            let event = StoredEvent {
                game: id.clone(),
                seq: e.seq as u64,
                position: e.position as u64,
                time_millis: e.time_ms as u64,
                actor: e.seat.map_or(Actor::Server, |s| Actor::Seat(s as u8)),
                request_id: RequestId::new(e.request_id.clone()).unwrap(),
                schema: e.schema as u16,
                payload: e.payload.clone(),
                prev_hash: previous,
                hash: Hash::ZERO,
            };
            let (_, hash) = carcassonne_store::envelope::encode(&event);
            let out = proto::StoredEvent {
                prev_hash: previous.to_string(),
                hash: hash.to_string(),
                ..e.clone()
            };
            previous = hash;
            out
        })
        .collect()
}
