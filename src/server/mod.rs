//! The gRPC server and its life cycle, in the manner of mini-redis: one
//! listener, limits on connections (`connections`), messages, streams
//! (`streams`) and calls in flight, errors that
//! stay with their call, and a graceful shutdown on a signal: stop
//! accepting, finish the calls in flight (their appends are durable before
//! they answer), close the store.

pub mod admin;
pub mod archive_cache;
pub(crate) mod audience;
pub mod audit;
mod challenge_service;
pub mod connections;
mod feed;
mod game_service;
mod game_watch;
mod intake;
pub mod key;
mod liveness;
mod player_service;
mod player_stream;
pub(crate) mod request;
mod streams;
mod tournament_service;
mod watch_service;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use carcassonne_store::{EventStore, PgStore, SledStore, StoreConfig};
use tokio::net::TcpListener;
use tonic::transport::Server;

pub use self::connections::Limits as ConnectionLimits;
pub use self::game_service::GameService;
pub use self::intake::request_limit;
pub use self::tournament_service::TournamentService;
pub use self::watch_service::WatchService;
use crate::games::{Games, timekeeper};
use crate::proto;
use crate::proto::challenge_service_server::ChallengeServiceServer;
use crate::proto::game_service_server::GameServiceServer;
use crate::proto::player_service_server::PlayerServiceServer;
use crate::proto::tournament_service_server::TournamentServiceServer;
use crate::proto::watch_service_server::WatchServiceServer;

/// Largest response; a full game's state is far below it.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// The most events a watcher may fall behind its game's live feed before
/// it is told so: more than a base game has (about 215).
const MAX_FEED_CAPACITY: usize = 256;

/// The most threads a server's runtime should run blocking store work on
/// (reads, game creation). That work is short and CPU-bound, so a few
/// threads keep the cores busy; tokio's default of 512 gives a burst of
/// calls hundreds of threads, each with a stack and an allocator heap
/// (measured with the binary's mimalloc: 1.4 GB resident after 1,000
/// concurrent creations and watches; 180 MB with 8 threads).
pub const BLOCKING_THREADS: usize = 8;

/// A PostgreSQL connection string (a `postgres://` URL or libpq's
/// `key=value` form, several hosts allowed). Its `Debug` hides it: it may
/// hold a password.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

impl PostgresUrl {
    /// `text` if it is a PostgreSQL connection string: a URL
    /// (`postgres://` or `postgresql://`) or `key=value` pairs. Whether it
    /// connects is found out at start.
    pub fn parse(text: &str) -> Result<PostgresUrl, String> {
        let text = text.trim();
        if text.starts_with("postgres://") || text.starts_with("postgresql://") || text.contains('=') {
            Ok(PostgresUrl(text.to_owned()))
        } else {
            Err(
                "expected a PostgreSQL connection string: postgres://USER@HOST[,HOST2...]/DATABASE \
                 or 'host=A,B dbname=D user=U'; without --store the server keeps its games in the \
                 sled store of --data"
                    .to_owned(),
            )
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PostgresUrl(..)")
    }
}

impl std::str::FromStr for PostgresUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        PostgresUrl::parse(text)
    }
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The event store's directory (the sled store, the signing key, the
    /// heartbeat, the admin socket), unless `postgres` is set.
    pub data: PathBuf,
    /// The event store in PostgreSQL instead of sled: shared by any number
    /// of server nodes. The data directory is then not used.
    pub postgres: Option<PostgresUrl>,
    /// Where the signing key is kept, instead of `server.key` in the data
    /// directory (sled) or the database's `server_secrets` (PostgreSQL).
    pub key_file: Option<PathBuf>,
    /// Games kept folded in memory (the bound on games in memory).
    pub cache_games: usize,
    /// Calls that may wait on the store at once.
    pub max_in_flight: usize,
    /// Concurrent HTTP/2 streams per connection.
    pub max_streams_per_connection: u32,
    /// Concurrent calls per connection.
    pub max_calls_per_connection: usize,
    pub store: StoreConfig,
    /// The admin credential: it makes players organisers (and registers
    /// them when registration is not open). Never logged.
    pub admin_key: Option<String>,
    /// Who may register players.
    pub registration: crate::players::Registration,
    /// Registrations a minute without the admin key (`None`: unbounded).
    pub registration_rate: Option<std::num::NonZeroU32>,
    /// How the server plays its games' bot seats.
    pub bots: crate::games::bot_seats::BotConfig,
    /// Connections and streams: how many, how long idle.
    pub connections: ConnectionLimits,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            data: PathBuf::from("./data"),
            postgres: None,
            key_file: None,
            cache_games: 10_000,
            max_in_flight: 4096,
            max_streams_per_connection: 1024,
            max_calls_per_connection: 1024,
            store: StoreConfig::default(),
            admin_key: None,
            registration: crate::players::Registration::Open,
            registration_rate: Some(crate::players::DEFAULT_REGISTRATION_RATE),
            bots: crate::games::bot_seats::BotConfig::default(),
            connections: ConnectionLimits::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "the data directory {} is in use by another server: stop that one, or give this one another directory",
        path.display()
    )]
    DataInUse { path: PathBuf },
    /// Not a `#[source]`: the message holds the store's, which holds its
    /// own cause, and a chain would print each of them again.
    #[error("opening the store in {}: {error}", path.display())]
    Store {
        path: PathBuf,
        error: carcassonne_store::StoreError,
    },
    /// Not a `#[source]`, as above. The connection string is not quoted:
    /// it may hold a password.
    #[error("opening the PostgreSQL store: {0}")]
    Database(carcassonne_store::StoreError),
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The server's signing key could not be read or made. Not a
    /// `#[source]`: the message is the key's error's own.
    #[error("{0}")]
    Key(key::ServerKeyError),
    /// The clocks of the running games could not be resumed (T-10).
    #[error("resuming the clocks: {0}")]
    Clocks(String),
    /// The registered players, ratings or tournaments could not be read.
    #[error("reading players, ratings and tournaments: {0}")]
    Competition(String),
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// Every call was answered, but the store's close was not clean (its
    /// final flush failed) or its storage was unavailable: the exit code
    /// must say so.
    #[error("the server stopped, but not cleanly: {0}")]
    UncleanShutdown(String),
}

/// Logs to standard error, at the level of `RUST_LOG` (default `info`), in
/// colour only when standard error is a terminal (not in a file or a pipe).
pub fn init_tracing() {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM. The handlers are installed at
/// once, before the future is first polled, so that a signal sent as soon
/// as the server says it listens is not lost to the default action.
pub fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            match (interrupt, terminate) {
                (Ok(mut interrupt), Ok(mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                }
                (Err(error), _) | (_, Err(error)) => {
                    tracing::warn!(%error, "no signal handlers; stop the server by killing it");
                    std::future::pending::<()>().await;
                }
            }
            tracing::info!("shutting down: no new calls, finishing the calls in flight");
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutting down: no new calls, finishing the calls in flight");
        }
    }
}

/// Serves every service on `listener` until `shutdown` resolves, then lets
/// the calls in flight finish and closes the store.
pub async fn serve(
    config: ServerConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    serve_with_ready(config, listener, shutdown, |_| {}).await
}

/// [`serve`], calling `ready` with the address once the store is open and
/// the services are built, just before the first connection is accepted.
pub async fn serve_with_ready(
    config: ServerConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServerError> {
    let backend = Backend::open(&config)?;
    let store = backend.store();
    // The key that signs archives: made at the first start, its secret
    // never logged.
    let (key, made) = match (&config.key_file, &backend) {
        (Some(file), _) => key::load_or_create_file(file),
        (None, Backend::Sled(_)) => key::load_or_create(&config.data),
        (None, Backend::Postgres(pg)) => key::load_or_create_in(pg),
    }
    .map_err(ServerError::Key)?;
    if made {
        tracing::info!(public_key = %key.public_key(), kept = %backend.key_place(&config), "made the server's signing key");
    } else {
        tracing::info!(public_key = %key.public_key(), "signing archives with the server's key");
    }
    let key = Arc::new(key);
    // Every node shares the signing key, so every node derives the same
    // seat tokens: a creation's retry gets them from any node.
    let token_secret = crate::games::auth::TokenSecret::new(key.derive_secret("carcassonne seat tokens"));
    let games = Arc::new(Games::new(store.clone(), config.cache_games).with_token_secret(token_secret));
    if matches!(backend, Backend::Postgres(_)) {
        games.shared_with_other_nodes();
    }
    // Shutdown by broadcast: streams end when it comes.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        shutdown.await;
        let _ = stop.send(true);
    };
    // The clocks: the timekeeper first, so that the resumptions arm their
    // deadlines; then every running clocked game resumes (T-10) before the
    // first call can act on one.
    let clock = config.store.clock.clone();
    let liveness = match &backend {
        Backend::Sled(_) => liveness::Liveness::new(&config.data, clock.clone()),
        Backend::Postgres(pg) => {
            liveness::Liveness::in_database(pg.clone(), node_name(&listener), clock.clone())
        }
    };
    let timekeeper = timekeeper::spawn(games.clone(), clock, stopping.clone())
        .map_err(|e| ServerError::Clocks(e.to_string()))?;
    // The bot seats, before the resumptions: a resumed game whose seat
    // is a bot's is its turn.
    let bots = crate::games::bot_seats::spawn(games.clone(), config.bots.clone(), stopping.clone())
        .map_err(|e| ServerError::Clocks(e.to_string()))?;
    if liveness.others_alive() {
        // Other nodes on the database served the games meanwhile: their
        // clocks never stopped. Only this node's timekeeper must learn them.
        let armed = timekeeper::arm_all(&games)
            .await
            .map_err(|e| ServerError::Clocks(e.to_string()))?;
        tracing::info!(
            games = armed,
            "other nodes are running: clocks followed, none resumed"
        );
    } else {
        let resumed = timekeeper::resume_all(&games, liveness.last_alive())
            .await
            .map_err(|e| ServerError::Clocks(e.to_string()))?;
        if resumed > 0 {
            tracing::info!(games = resumed, "clocks resumed after the restart");
        }
    }
    if let Err(error) = liveness.beat() {
        tracing::warn!(%error, "the first heartbeat could not be written");
    }
    let heartbeat = tokio::spawn(liveness.run(stopping.clone()));
    let competition = |e: crate::api::status::ApiError| ServerError::Competition(e.to_string());
    let players = Arc::new(
        crate::players::Players::open(store.clone(), config.admin_key.as_deref(), config.registration)
            .map_err(competition)?
            .with_registration_rate(config.registration_rate),
    );
    let seats = Arc::new(crate::players::seats::Seats::build(store.clone()).map_err(competition)?);
    let ratings = Arc::new(crate::ratings::RatingBook::open(store.clone()).map_err(competition)?);
    let tournaments = Arc::new(
        crate::tournaments::Tournaments::open(store.clone(), games.clone(), players.clone())
            .map_err(competition)?,
    );
    let challenges = Arc::new(
        crate::challenges::Challenges::open(store.clone(), games.clone(), players.clone())
            .map_err(competition)?,
    );
    let seals: Arc<dyn crate::games::Seals> = tournaments.clone();
    games.lift_seals_with(Arc::downgrade(&seals));
    let recorder = Arc::new(crate::recorder::Recorder {
        games: games.clone(),
        seats: seats.clone(),
        ratings: ratings.clone(),
        tournaments: tournaments.clone(),
        players: players.clone(),
        challenges: challenges.clone(),
    });
    let recording = tokio::spawn(recorder.run(stopping.clone()));
    let player_service = PlayerServiceServer::new(player_service::PlayerService {
        games: games.clone(),
        players: players.clone(),
        seats,
        ratings,
        challenges: challenges.clone(),
        stopping: stopping.clone(),
    })
    .max_decoding_message_size(intake::largest_request("/carcassonne.v1.PlayerService/"))
    .max_encoding_message_size(MAX_RESPONSE_BYTES);
    let challenge_service = ChallengeServiceServer::new(challenge_service::ChallengeService {
        players: players.clone(),
        challenges,
        store: store.clone(),
    })
    .max_decoding_message_size(intake::largest_request("/carcassonne.v1.ChallengeService/"))
    .max_encoding_message_size(MAX_RESPONSE_BYTES);
    let tournament = Arc::new(TournamentService {
        players: players.clone(),
        tournaments: tournaments.clone(),
        key: key.clone(),
        stopping: stopping.clone(),
    });
    let tournament_service = TournamentServiceServer::from_arc(tournament.clone())
        .max_decoding_message_size(intake::largest_request("/carcassonne.v1.TournamentService/"))
        .max_encoding_message_size(MAX_RESPONSE_BYTES);
    let game = Arc::new(GameService::new(games.clone(), players, config.max_in_flight));
    let game_service = GameServiceServer::from_arc(game.clone())
        .max_decoding_message_size(intake::largest_request("/carcassonne.v1.GameService/"))
        .max_encoding_message_size(MAX_RESPONSE_BYTES);
    // A watcher may fall as far behind its game's feed as a subscriber of
    // the store behind the store, up to a game's length: a feed's ring is
    // allocated whole, for every watched game.
    let feed_capacity = config.store.subscription_capacity.min(MAX_FEED_CAPACITY);
    // Records to verify may be larger than other requests.
    let watch = Arc::new(WatchService::new(
        games.clone(),
        stopping.clone(),
        feed_capacity,
        key,
    ));
    let watch_service = WatchServiceServer::from_arc(watch.clone())
        .max_decoding_message_size(intake::largest_request("/carcassonne.v1.WatchService/"))
        .max_encoding_message_size(MAX_RESPONSE_BYTES);

    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        // google.rpc.ErrorInfo, so that grpcurl decodes every error's reason.
        .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        // google.rpc.ErrorInfo, so that grpcurl decodes every error's reason.
        .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<GameServiceServer<GameService>>().await;
    health.set_serving::<WatchServiceServer<WatchService>>().await;
    let health_check = tonic_health::server::HealthService::from_health_reporter(health.clone());
    let storage_health = tokio::spawn(report_storage_health(store.clone(), health, stopping.clone()));
    let admin = match &backend {
        Backend::Sled(sled) => admin::start(sled.clone(), &config.data, stopping.clone()),
        // PostgreSQL is backed up with its own tools (pg_dump, base backups).
        Backend::Postgres(_) => None,
    };
    let cap = connection_cap(&config);
    let place = backend.describe(&config);
    match listener.local_addr() {
        Ok(addr) => {
            tracing::info!(%addr, store = %place, "serving");
            ready(addr);
        }
        Err(error) => tracing::warn!(%error, store = %place, "serving on an unknown address"),
    }
    // The gRPC services and, beside them on the same port, HTTP (the web
    // page, its JSON and event streams, pictures): one router.
    let grpc = tonic::service::Routes::new(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(game_service)
        .add_service(watch_service)
        .add_service(player_service)
        .add_service(tournament_service)
        .add_service(challenge_service);
    let http = crate::http::router(Arc::new(crate::http::Http::new(
        game,
        watch,
        tournament,
        health_check,
        games,
    )));
    let routes = tonic::service::Routes::from(
        grpc.into_axum_router()
            .merge(http)
            .fallback(crate::http::fallback),
    );
    let limits = &config.connections;
    let streams = streams::StreamLimitLayer(Arc::new(streams::StreamLimits::new(
        streams::streaming_methods(&[
            proto::FILE_DESCRIPTOR_SET,
            tonic_health::pb::FILE_DESCRIPTOR_SET,
            tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
            tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
        ]),
        limits.max_streaming_calls,
        limits.max_streaming_calls_per_connection,
    )));
    let incoming = connections::Incoming::new(
        listener,
        cap,
        connections::Timeouts {
            first_request: limits.first_request_timeout,
            idle: limits.idle_timeout,
        },
    );
    // Browsers speak grpc-web (and plain HTTP) over HTTP/1.1 on the same
    // port, with CORS. The first layer is the outermost.
    Server::builder()
        .accept_http1(true)
        .http2_keepalive_interval(Some(limits.keepalive_interval))
        .http2_keepalive_timeout(Some(limits.keepalive_timeout))
        // Every request counts as in flight on its connection, CORS
        // preflights included: an idle connection is closed.
        .layer(connections::ActivityLayer)
        .layer(crate::http::SecurityHeadersLayer)
        .layer(crate::http::cors())
        // grpc-web for gRPC's requests; the HTTP routes' go past it.
        .layer(crate::http::GrpcWebOrHttpLayer)
        // Inside grpc-web, so that its refusals are translated too.
        .layer(streams)
        // Inside grpc-web, so that it sees every request as gRPC.
        .layer(intake::IntakeLayer)
        .max_concurrent_streams(config.max_streams_per_connection)
        .concurrency_limit_per_connection(config.max_calls_per_connection)
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    // Every call has answered, and the timekeeper has stored the timeouts
    // it was storing, so every append is durable: closing makes sled
    // durable too, and says whether that worked.
    let _ = timekeeper.await;
    let _ = bots.await;
    let _ = recording.await;
    let _ = heartbeat.await;
    let _ = storage_health.await;
    if let Some(admin) = admin {
        let _ = admin.await;
    }
    let problem = store.storage_problem();
    let closed = backend.close();
    drop(store);
    match (closed, problem) {
        (Err(error), _) => {
            tracing::error!(%error, "stopped, but the store's close failed");
            Err(ServerError::UncleanShutdown(error.to_string()))
        }
        (Ok(()), Some(problem)) => {
            tracing::error!(%problem, "stopped with the storage unavailable");
            Err(ServerError::UncleanShutdown(format!(
                "the storage was unavailable ({problem}); every acknowledged event is on disk"
            )))
        }
        (Ok(()), None) => {
            tracing::info!("stopped");
            Ok(())
        }
    }
}

/// The event store a server runs on: the embedded sled store of its data
/// directory, or a PostgreSQL database it may share with other nodes.
/// Everything but start and stop works on [`Backend::store`], the store
/// behind the trait; what only one backend has is here.
enum Backend {
    Sled(Arc<SledStore>),
    Postgres(Arc<PgStore>),
}

impl Backend {
    fn open(config: &ServerConfig) -> Result<Backend, ServerError> {
        if let Some(url) = &config.postgres {
            let store = PgStore::open(url.as_str(), config.store.clone()).map_err(ServerError::Database)?;
            return Ok(Backend::Postgres(Arc::new(store)));
        }
        let store = SledStore::open(&config.data, config.store.clone()).map_err(|error| {
            let path = config.data.clone();
            // sled's words when another process holds its directory's lock.
            if error.to_string().contains("could not acquire lock") {
                ServerError::DataInUse { path }
            } else {
                ServerError::Store { path, error }
            }
        })?;
        if store.compression() != config.store.compression {
            tracing::warn!(
                compression = store.compression(),
                "the store keeps the compression it was created with; restore a backup into a new \
                 directory to change it"
            );
        }
        Ok(Backend::Sled(Arc::new(store)))
    }

    fn store(&self) -> Arc<dyn EventStore> {
        match self {
            Backend::Sled(sled) => sled.clone(),
            Backend::Postgres(pg) => pg.clone(),
        }
    }

    /// Where the store is, for the log (never the connection string: it may
    /// hold a password).
    fn describe(&self, config: &ServerConfig) -> String {
        match self {
            Backend::Sled(_) => format!("sled in {}", config.data.display()),
            Backend::Postgres(_) => "PostgreSQL".to_owned(),
        }
    }

    /// Where a new signing key is kept, for the log.
    fn key_place(&self, config: &ServerConfig) -> String {
        match (&config.key_file, self) {
            (Some(file), _) => file.display().to_string(),
            (None, Backend::Sled(_)) => key::path(&config.data).display().to_string(),
            (None, Backend::Postgres(_)) => {
                format!("the database's server_secrets ({})", key::DATABASE_SECRET)
            }
        }
    }

    /// Closes the store: sled's final flush, whose outcome the exit code
    /// tells. PostgreSQL acknowledged every commit already.
    fn close(&self) -> Result<(), carcassonne_store::StoreError> {
        match self {
            Backend::Sled(sled) => sled.close(),
            Backend::Postgres(_) => Ok(()),
        }
    }
}

/// The connections to allow at once: the configured cap, under the
/// open-file limit (raised first to its hard limit) by what the server
/// keeps open besides, PostgreSQL's connections included.
fn connection_cap(config: &ServerConfig) -> usize {
    let open_files = connections::raise_open_file_limit();
    let store_files = if config.postgres.is_some() {
        u64::from(config.store.postgres_connections)
    } else {
        0
    };
    let cap = connections::connection_cap(config.connections.max_connections, open_files, store_files);
    if cap < config.connections.max_connections {
        tracing::warn!(
            cap,
            open_files,
            configured = config.connections.max_connections,
            "fewer connections than configured: the limit of open files allows no more"
        );
    }
    tracing::info!(
        connections = cap,
        streams = config.connections.max_streaming_calls,
        streams_per_connection = config.connections.max_streaming_calls_per_connection,
        "limits"
    );
    cap
}

/// This node's name among the nodes of one database: its host's name and
/// the address it listens on (stable across its restarts, so that a node
/// that crashed is never taken for another one still running).
fn node_name(listener: &TcpListener) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned());
    match listener.local_addr() {
        Ok(addr) => format!("{host}/{addr}"),
        Err(_) => format!("{host}/{}", std::process::id()),
    }
}

/// How often health looks at the store's storage.
const STORAGE_HEALTH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// Health says NOT_SERVING (the server and both services) while the store
/// cannot take appends, and SERVING again once it can; the reason is
/// logged at each change.
async fn report_storage_health(
    store: Arc<dyn carcassonne_store::EventStore>,
    health: tonic_health::server::HealthReporter,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    use tonic_health::ServingStatus;
    let mut serving = true;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(STORAGE_HEALTH_INTERVAL) => {}
            _ = stopping.wait_for(|stopping| *stopping) => return,
        }
        let problem = {
            let store = store.clone();
            match tokio::task::spawn_blocking(move || store.storage_problem()).await {
                Ok(problem) => problem,
                Err(error) => Some(format!("the storage check failed: {error}")),
            }
        };
        if problem.is_none() == serving {
            continue;
        }
        serving = problem.is_none();
        let status = if serving {
            tracing::info!("storage available again: serving");
            ServingStatus::Serving
        } else {
            tracing::error!(
                problem = problem.as_deref().unwrap_or_default(),
                "storage unavailable: not serving"
            );
            ServingStatus::NotServing
        };
        for service in [
            "",
            <GameServiceServer<GameService> as tonic::server::NamedService>::NAME,
            <WatchServiceServer<WatchService> as tonic::server::NamedService>::NAME,
        ] {
            health.set_service_status(service, status).await;
        }
    }
}
