//! The `carcassonne` binary: the command line of the project.

mod archives;
mod bot_client;
mod cli;
mod ops;
mod pictures;
mod stdout;
mod text;
mod viewer;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use carcassonne::server::{self, ServerConfig};

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "carcassonne",
    version,
    about = "A Carcassonne game server and its tools"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the gRPC server, with its event store in the data directory.
    Serve(ServeArgs),
    /// Play a random game between bots and print the board and the scores.
    Demo(cli::DemoArgs),
    /// Replay a game record and print its scores.
    Score(cli::ScoreArgs),
    /// Check a game record: exits 0 only if every turn is legal and its
    /// `final_scores`, when present, are right.
    Verify(cli::VerifyArgs),
    /// Draw a record's board at any turn, as SVG or PNG.
    Render(pictures::RenderArgs),
    /// Draw every tile kind with its name, as SVG or PNG.
    Tiles(pictures::TilesArgs),
    /// Follow a game on a server live, until it ends or q.
    ///
    /// The scores, the pending decision, the last event and the board,
    /// redrawn at every event; w a s d scroll a board larger than the
    /// terminal, c follows the last tile again.
    Watch(viewer::WatchArgs),
    /// Step through a game on a server.
    ///
    /// n/space/right next, p/left back, g N go to version N, w a s d
    /// scroll the board, c follow the last tile, q quit (one command a
    /// line from a pipe).
    Replay(viewer::ReplayArgs),
    /// Play as a built-in bot on a server: one seat of one game (--game,
    /// --seat, --token), or every game of a registered player (--key).
    ///
    /// The bot decides from what its player is shown only (no seed, no
    /// order), within --budget-ms a decision and the seat's clock.
    Bot(bot_client::BotArgs),
    /// Back up the event store, from the running server on that data
    /// directory (it goes on serving) or from the directory itself.
    Backup(ops::BackupArgs),
    /// Restore a backup into a new data directory, and verify it.
    Restore(ops::RestoreArgs),
    /// Copy every stream of a sled store (a stopped server's data
    /// directory) into an empty PostgreSQL database, checking every hash
    /// chain; refuses a database that is not empty.
    Migrate(ops::MigrateArgs),
    /// Check a signed archive offline: its signature, every file's hash,
    /// and every game in it (rules, draws against the seed, hash chain,
    /// timeouts). Exits 0 only if every check holds; names the first that
    /// does not.
    Audit(archives::AuditArgs),
    /// Print the public key of the server's signing key in its data
    /// directory (as GetServerKey gives it), for `audit --key`.
    PublicKey(archives::PublicKeyArgs),
}

// mimalloc: the server allocates many small, short-lived buffers per call
// (requests, views, events). In the load benchmark (`benches/load.rs`), in
// one run against the other, it took Act from 3.1k to 5.1k calls/s while
// the health-check baseline stayed at 19.6k.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Command::Serve(a) => serve(a).map(|()| ExitCode::SUCCESS),
        Command::Demo(a) => cli::demo(&a),
        Command::Score(a) => cli::score(&a),
        Command::Verify(a) => cli::verify(&a),
        Command::Render(a) => pictures::render(&a),
        Command::Tiles(a) => pictures::tiles(&a),
        Command::Watch(a) => viewer::watch(&a),
        Command::Replay(a) => viewer::replay(&a),
        Command::Bot(a) => bot_client::bot(&a),
        Command::Backup(a) => ops::backup(&a),
        Command::Restore(a) => ops::restore(&a),
        Command::Migrate(a) => ops::migrate(&a),
        Command::Audit(a) => archives::audit(&a),
        Command::PublicKey(a) => archives::public_key(&a),
    };
    match result {
        Ok(code) => code,
        // The reader of standard output went away (`| head`): nothing to say.
        Err(error) if stdout::is_closed(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

#[derive(clap::Args)]
struct ServeArgs {
    /// The address to listen on (port 0: any free port, printed at start).
    #[arg(long, env = "CARCASSONNE_ADDR", default_value = "127.0.0.1:50051")]
    addr: SocketAddr,
    /// The directory of the event store (created if missing): the embedded
    /// sled store, the default.
    #[arg(long, env = "CARCASSONNE_DATA", default_value = "./data")]
    data: PathBuf,
    /// Keep the games in PostgreSQL instead, which several server nodes
    /// may share: a connection string, `postgres://USER@HOST1,HOST2/DB`
    /// or `host=HOST1,HOST2 dbname=DB user=USER` (every host of a
    /// replicated cluster: the server finds the writable one). The schema
    /// is made or migrated at start; --data is then not used.
    #[arg(long, env = "CARCASSONNE_STORE", value_name = "POSTGRES_URL")]
    store: Option<server::PostgresUrl>,
    /// With --store: start even though PostgreSQL runs with `fsync=off` or
    /// `synchronous_commit=off`, which the server refuses by default (a
    /// commit it acknowledged could be lost in a crash).
    #[arg(long, env = "CARCASSONNE_ACCEPT_UNSAFE_DURABILITY", requires = "store")]
    accept_unsafe_durability: bool,
    /// With `--store`: the most connections this node opens to PostgreSQL
    /// (one more follows the other nodes). The database's
    /// `max_connections` must allow this many for every node.
    #[arg(long, env = "CARCASSONNE_STORE_CONNECTIONS", default_value_t = 16, requires = "store",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    store_connections: u32,
    /// Keep the server's signing key in this file (made at the first start
    /// if missing), instead of `server.key` in --data or, with --store, in
    /// the database (where every node finds it).
    #[arg(long, env = "CARCASSONNE_KEY_FILE")]
    key_file: Option<PathBuf>,
    /// Games kept folded in memory; others are rebuilt from the store.
    #[arg(long, env = "CARCASSONNE_CACHE_GAMES", default_value_t = 10_000)]
    cache_games: usize,
    /// Calls that may wait on the store at once; more get RESOURCE_EXHAUSTED.
    #[arg(long, env = "CARCASSONNE_MAX_IN_FLIGHT", default_value_t = 4096)]
    max_in_flight: usize,
    /// Compress the store's data (zstd): about 3 times less disk for more
    /// CPU per append. Chosen when the store is created; an existing store
    /// keeps its setting (restore a backup into a new directory to change it).
    #[arg(long, env = "CARCASSONNE_COMPRESSION")]
    compression: bool,
    /// The write-ahead log's size in MiB, allocated when the store is
    /// created. A smaller one fits a small disk, for more checkpoints.
    #[arg(long, env = "CARCASSONNE_WAL_MIB", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    wal_mib: u64,
    /// A file holding the admin key (its first line): the key makes
    /// players organisers, and registers players when registration is
    /// `admin`. Or give the key itself in CARCASSONNE_ADMIN_KEY. Without
    /// either, nobody is admin. The key is never logged.
    #[arg(long, env = "CARCASSONNE_ADMIN_KEY_FILE")]
    admin_key_file: Option<PathBuf>,
    /// Who may register players: anybody (`open`), or only the bearer of
    /// the admin key (`admin`).
    #[arg(long, env = "CARCASSONNE_REGISTRATION", value_enum, default_value = "open")]
    registration: carcassonne::players::Registration,
    /// Registrations a minute the whole server takes without the admin key
    /// (a bucket of that many, refilled evenly; more get
    /// RESOURCE_EXHAUSTED, `REGISTRATION_RATE`); 0: no bound.
    #[arg(long, env = "CARCASSONNE_REGISTRATION_RATE", value_name = "PER_MINUTE",
          default_value_t = carcassonne::players::DEFAULT_REGISTRATION_RATE.get())]
    registration_rate: u32,
    #[command(flatten)]
    connections: ConnectionArgs,
}

/// What the server allows its connections and streams.
#[derive(clap::Args)]
struct ConnectionArgs {
    /// Connections open at once; one more is closed as soon as it is
    /// accepted. Lowered at start to fit under the limit of open files
    /// (whose soft limit the server raises to the hard one).
    #[arg(long, env = "CARCASSONNE_MAX_CONNECTIONS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// Seconds a new connection may take to start its first request
    /// before it is closed.
    #[arg(long, env = "CARCASSONNE_FIRST_REQUEST_TIMEOUT", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    first_request_timeout: u64,
    /// Seconds a connection may stay with no call in flight (an open
    /// stream is one) before it is closed.
    #[arg(long, env = "CARCASSONNE_IDLE_TIMEOUT", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    idle_timeout: u64,
    /// Streaming calls (watches, replays, exports, event streams) open at
    /// once on the whole server; more get RESOURCE_EXHAUSTED
    /// (TOO_MANY_STREAMS).
    #[arg(long, env = "CARCASSONNE_MAX_STREAMS", default_value_t = 4096,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_streams: u64,
    /// Streaming calls open at once on one connection.
    #[arg(long, env = "CARCASSONNE_MAX_STREAMS_PER_CONNECTION", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_streams_per_connection: u64,
}

impl ConnectionArgs {
    fn limits(&self) -> server::ConnectionLimits {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        server::ConnectionLimits {
            max_connections: count(self.max_connections),
            first_request_timeout: std::time::Duration::from_secs(self.first_request_timeout),
            idle_timeout: std::time::Duration::from_secs(self.idle_timeout),
            max_streaming_calls: count(self.max_streams),
            max_streaming_calls_per_connection: count(self.max_streams_per_connection),
            ..server::ConnectionLimits::default()
        }
    }
}

/// The admin key: from the file given, else from CARCASSONNE_ADMIN_KEY.
fn admin_key(file: Option<&std::path::Path>) -> anyhow::Result<Option<String>> {
    let key = match file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the admin key file {}", path.display()))?;
            text.lines().next().unwrap_or_default().trim().to_owned()
        }
        None => match std::env::var("CARCASSONNE_ADMIN_KEY") {
            Ok(key) => key.trim().to_owned(),
            Err(_) => return Ok(None),
        },
    };
    if key.len() < 16 {
        anyhow::bail!("the admin key must have at least 16 characters");
    }
    Ok(Some(key))
}

/// Runs the server until SIGINT or SIGTERM, then stops accepting, lets the
/// calls in flight finish, closes the store and exits 0, or non-zero when
/// the store's close was not clean or its storage was unavailable.
fn serve(args: ServeArgs) -> anyhow::Result<()> {
    server::init_tracing();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(server::BLOCKING_THREADS)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let admin_key = admin_key(args.admin_key_file.as_deref())?;
    runtime.block_on(async {
        let config = ServerConfig {
            admin_key,
            registration: args.registration,
            registration_rate: std::num::NonZeroU32::new(args.registration_rate),
            data: args.data,
            postgres: args.store,
            key_file: args.key_file,
            cache_games: args.cache_games,
            max_in_flight: args.max_in_flight,
            store: carcassonne_store::StoreConfig {
                compression: args.compression,
                log_capacity_bytes: args.wal_mib << 20,
                // Only PostgreSQL reads it with this meaning: the check at
                // start is what the operator waives.
                durability: if args.accept_unsafe_durability {
                    carcassonne_store::Durability::Written
                } else {
                    carcassonne_store::Durability::Flush
                },
                postgres_connections: args.store_connections,
                ..carcassonne_store::StoreConfig::default()
            },
            connections: args.connections.limits(),
            ..ServerConfig::default()
        };
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("listening on {}", args.addr))?;
        server::serve_with_ready(config, listener, server::shutdown_signal(), |addr| {
            // Scripts and tests read this line to find the port.
            println!("listening on {addr}");
        })
        .await?;
        Ok(())
    })
}
