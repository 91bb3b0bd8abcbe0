//! `carcassonne bot`: the server's built-in bots as an external gRPC
//! client, for bot authors to test against any server.
//!
//! The bot rebuilds each game from what its player is shown (the game at
//! version 1, then every public event, folded by `api::follow` into a
//! `PublicGame`: no seed, no order) and decides from that alone, within
//! its budget and the seat's clock, as the server's bot seats do. With
//! `--game`, `--seat` and `--token` it follows one game's WatchGame
//! stream and plays that seat; with `--key` it follows the registered
//! player's WatchPlayer stream and plays every decision of every game the
//! player sits in; with `--accept-challenges` as well it also takes the
//! player's named seat of every challenge the stream tells of (without
//! it, the player's games are only those they agreed to elsewhere; it
//! never takes an open seat, a seek being a person's choice). Acts carry request ids named by the seat and the
//! version, retried as they are after UNAVAILABLE, so a decision is stored
//! at most once; a lost stream is reopened after its last version (or
//! position). It says on standard output what it does: a line when it
//! takes a seat, one for each of its decisions (unless `--quiet`), and the
//! result when a game ends. `--log FILE` appends a line for every action
//! the server acknowledged, so that a test can check afterwards that each
//! one is still stored (tests/failover/run.sh, across a database failover).

use std::collections::HashMap;
use std::fmt::Display;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, bail};
use carcassonne::api::{follow, view};
use carcassonne::games::bot_seats::{bot_seed, budget_for};
use carcassonne::proto::challenge_service_client::ChallengeServiceClient;
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::player_service_client::PlayerServiceClient;
use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, watch_game_response::Message as W, watch_player_response::Message as P};
use carcassonne_bots::{Bot, Level};
use carcassonne_engine::{Actor, PublicGame, Seat};

use crate::viewer::draw;
use tokio_stream::StreamExt as _;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status};

#[derive(clap::Args)]
pub struct BotArgs {
    /// The server's address.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    addr: String,
    /// The bot: random, greedy, search (the default search) or search:N
    /// (N iterations a decision at most).
    #[arg(long, default_value = "search", value_parser = parse_level)]
    level: Level,
    /// A registered player's API key: play every game the player sits
    /// in, through the player's stream, until stopped.
    #[arg(long, env = "CARCASSONNE_KEY", hide_env_values = true, conflicts_with_all = ["game", "seat", "token"])]
    key: Option<String>,
    /// With --key: accept every challenge that names the player (their
    /// consent to any game others offer them, given once for the bot).
    #[arg(long, requires = "key")]
    accept_challenges: bool,
    /// One game to play a seat of (`games/{id}` or its id), to its end.
    #[arg(long, requires_all = ["seat", "token"])]
    game: Option<String>,
    /// The seat to play in `--game`.
    #[arg(long)]
    seat: Option<u8>,
    /// The seat's token (CreateGame's answer).
    #[arg(long, env = "CARCASSONNE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The most milliseconds a decision may take (less when the seat's
    /// clock is short).
    #[arg(long, default_value_t = 1_000)]
    budget_ms: u64,
    /// Append one JSON line to FILE for every action the server
    /// acknowledged, once the answer is in: `game`, `seat`, `request_id`,
    /// `acted_on` (the version acted on), `version` (the game's version
    /// after the action) and `time_ms` (when the action's event, version
    /// `acted_on + 1`, was stored). Written before the next action.
    #[arg(long, value_name = "FILE")]
    log: Option<std::path::PathBuf>,
    /// Say only which games the bot plays and how they end, not each of
    /// its decisions.
    #[arg(long)]
    quiet: bool,
}

fn parse_level(name: &str) -> Result<Level, String> {
    Level::from_name(name)
        .ok_or_else(|| "random, greedy, search or search:N (N from 1 to 10000000)".to_owned())
}

/// Failures in a row after which the bot gives up on the server.
const MAX_FAILURES: u32 = 20;

pub fn bot(args: &BotArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        let channel = connect(&args.addr).await?;
        let log = match &args.log {
            Some(path) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("opening the log {}", path.display()))?,
            ),
            None => None,
        };
        let mut player = Player {
            games: GameServiceClient::new(channel.clone()),
            watch: WatchServiceClient::new(channel.clone()),
            level: args.level,
            budget: Duration::from_millis(args.budget_ms),
            log,
            quiet: args.quiet,
        };
        match (&args.key, &args.game, args.seat, &args.token) {
            (Some(key), None, None, None) => {
                let challenges = args
                    .accept_challenges
                    .then(|| ChallengeServiceClient::new(channel.clone()));
                let players = PlayerServiceClient::new(channel);
                player.play_every_game(players, challenges, key).await?;
            }
            (None, Some(game), Some(seat), Some(token)) => {
                let name = if game.starts_with("games/") {
                    game.clone()
                } else {
                    format!("games/{game}")
                };
                player.play_one_game(&name, Seat(seat), token).await?;
            }
            _ => bail!("give either --key, or --game with --seat and --token"),
        }
        Ok(ExitCode::SUCCESS)
    })
}

async fn connect(addr: &str) -> anyhow::Result<Channel> {
    let addr = if addr.contains("://") {
        addr.to_owned()
    } else {
        format!("http://{addr}")
    };
    let endpoint = Endpoint::from_shared(addr.clone()).with_context(|| format!("the address {addr}"))?;
    // Connects on first use, and again after the server comes back.
    Ok(endpoint.connect_lazy())
}

fn with_token<T>(message: T, token: &str) -> anyhow::Result<Request<T>> {
    let mut request = Request::new(message);
    let value = format!("Bearer {token}")
        .parse()
        .context("the token is not valid in a header")?;
    request.metadata_mut().insert("authorization", value);
    Ok(request)
}

/// Takes the player's named seat of `challenge` if it is open and waits
/// for a named player, once. The stream tells only of challenges the
/// player made, is named in or took a seat of, so AcceptChallenge takes
/// the player's own seat or says why not (ALREADY_SEATED, CHALLENGE_CLOSED,
/// ...), which is said and not asked again. An error: a transient one, for
/// the stream to be reopened and the challenge, still open, told again.
async fn accept(
    challenges: &mut ChallengeServiceClient<Channel>,
    challenge: &proto::Challenge,
    answered: &mut std::collections::HashSet<String>,
    key: &str,
) -> Result<(), Status> {
    let waits = challenge
        .seats
        .iter()
        .any(|seat| !seat.player.is_empty() && !seat.open && !seat.accepted);
    if challenge.status != proto::ChallengeStatus::Open as i32 || !waits || answered.contains(&challenge.name)
    {
        return Ok(());
    }
    let request = proto::AcceptChallengeRequest {
        name: challenge.name.clone(),
        seat: None,
    };
    match challenges.accept_challenge(self::request(request, key)?).await {
        Ok(_) => say(format_args!("{}: accepted", challenge.name)),
        Err(status) if transient(&status) => return Err(status),
        Err(status) if status.code() == Code::FailedPrecondition => {}
        Err(status) => eprintln!("{}: {}", challenge.name, status.message()),
    }
    answered.insert(challenge.name.clone());
    Ok(())
}

/// Failures worth another try: the server is away or stopping.
fn transient(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable | Code::DeadlineExceeded | Code::Unknown | Code::Cancelled
    )
}

async fn pause(failures: u32) {
    tokio::time::sleep(Duration::from_millis(50 << failures.min(5))).await;
}

/// A game as its player sees it, at a version.
struct Table {
    game: PublicGame,
    version: i64,
    /// The game as the server showed it last: its players' names.
    shown: proto::Game,
}

/// A line on standard output. A reader gone away (`| head`) stops the
/// lines, not the bot.
fn say(line: impl Display) {
    let _ = writeln!(crate::stdout::lock(), "{line}");
}

/// The line of a seat the bot takes: `games/x: playing seat 1 (Brun) as greedy`.
fn say_seat(name: &str, seat: Seat, shown: &proto::Game, level: Level) {
    let player = shown
        .players
        .iter()
        .find(|p| p.seat == u32::from(seat.0))
        .map_or("?", |p| p.name.as_str());
    say(format_args!(
        "{name}: playing seat {} ({player}) as {}",
        seat.0,
        level.name()
    ));
}

/// A finished game's lines: why it ended, its scores, its ranking.
fn say_result(name: &str, game: &proto::Game) {
    for line in draw::final_scores(game).lines() {
        say(format_args!("{name}: {line}"));
    }
}

struct Player {
    games: GameServiceClient<Channel>,
    watch: WatchServiceClient<Channel>,
    level: Level,
    budget: Duration,
    /// `--log`: where acknowledged actions are written.
    log: Option<std::fs::File>,
    /// `--quiet`: no line for each decision.
    quiet: bool,
}

impl Player {
    /// Plays `seat` of game `name` to its end, following its WatchGame
    /// stream (reopened after its last version when it breaks).
    async fn play_one_game(&mut self, name: &str, seat: Seat, token: &str) -> anyhow::Result<()> {
        let mut table: Option<Table> = None;
        let mut failures = 0;
        loop {
            match self.follow_game(name, seat, token, &mut table).await {
                Ok(true) => {
                    self.say_end(name, token).await;
                    return Ok(());
                }
                Ok(false) => failures = 0,
                Err(status) if transient(&status) && failures < MAX_FAILURES => {
                    failures += 1;
                    eprintln!("{name}: {} (trying again)", status.message());
                    pause(failures).await;
                }
                Err(status) => bail!("{name}: {:?}: {}", status.code(), status.message()),
            }
        }
    }

    /// One WatchGame stream: `Ok(true)` once the game is over.
    async fn follow_game(
        &mut self,
        name: &str,
        seat: Seat,
        token: &str,
        table: &mut Option<Table>,
    ) -> Result<bool, Status> {
        let now = self
            .games
            .get_game(request(
                proto::GetGameRequest {
                    name: name.to_owned(),
                },
                token,
            )?)
            .await?
            .into_inner();
        let head = now.game.map_or(0, |g| g.version);
        let from = table.as_ref().map_or(1, |t| t.version);
        let watch = proto::WatchGameRequest {
            name: name.to_owned(),
            from_version: Some(from),
            keep_alive_ms: 0,
        };
        let mut stream = self.watch.watch_game(request(watch, token)?).await?.into_inner();
        while let Some(message) = stream.next().await {
            match message?.message {
                Some(W::Snapshot(snapshot)) => {
                    if table.is_none() {
                        let game = follow::created(&snapshot).map_err(Status::from)?;
                        say_seat(name, seat, &snapshot, self.level);
                        *table = Some(Table {
                            game,
                            version: 1,
                            shown: snapshot,
                        });
                    }
                }
                Some(W::Event(watched)) => {
                    let Some(event) = watched.event else { continue };
                    let Some(t) = table.as_mut() else {
                        return Err(Status::internal("an event before the snapshot"));
                    };
                    if event.version <= t.version {
                        continue;
                    }
                    follow::follow(&mut t.game, &event).map_err(Status::from)?;
                    t.version = event.version;
                    if event.finished {
                        return Ok(true);
                    }
                }
                Some(W::FellBehind(_)) => return Ok(false),
                _ => continue,
            }
            let Some(t) = table.as_mut() else { continue };
            if t.game.game().is_finished() {
                return Ok(true);
            }
            if t.version >= head && t.game.game().pending().actor() == Some(Actor::Seat(seat)) {
                self.decide_and_act(name, t, token).await?;
            }
        }
        Ok(table.as_ref().is_some_and(|t| t.game.game().is_finished()))
    }

    /// Plays every decision of the player of `key`, from its WatchPlayer
    /// stream, resumed after its last position when it breaks; with
    /// `challenges`, accepts the player's named seat of each challenge.
    async fn play_every_game(
        &mut self,
        mut players: PlayerServiceClient<Channel>,
        mut challenges: Option<ChallengeServiceClient<Channel>>,
        key: &str,
    ) -> anyhow::Result<()> {
        let mut tables: HashMap<String, Table> = HashMap::new();
        // Challenges answered already (accepted, or moved on without us).
        let mut answered: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut position = 0;
        let mut failures = 0;
        loop {
            let result: Result<(), Status> = async {
                let watch = proto::WatchPlayerRequest {
                    after_position: position,
                    keep_alive_ms: 0,
                };
                let mut stream = players.watch_player(request(watch, key)?).await?.into_inner();
                failures = 0;
                while let Some(message) = stream.next().await {
                    let message = message?;
                    match message.message {
                        Some(P::Decision(decision)) => {
                            let version = decision.legal.as_ref().map_or(0, |l| l.version);
                            let played = async {
                                let seat = Seat(decision.seat as u8);
                                let table = self
                                    .catch_up(&mut tables, &decision.game, seat, version, key)
                                    .await?;
                                if table.version == version
                                    && table.game.game().pending().actor()
                                        == Some(Actor::Seat(Seat(decision.seat as u8)))
                                {
                                    self.decide_and_act(&decision.game, table, key).await?;
                                }
                                Ok::<(), Status>(())
                            }
                            .await;
                            match played {
                                Err(status) if transient(&status) => return Err(status),
                                // One game's trouble never stops the others:
                                // said, and its table made again next time.
                                Err(status) => {
                                    eprintln!("{}: {}", decision.game, status.message());
                                    tables.remove(&decision.game);
                                }
                                Ok(()) => {}
                            }
                        }
                        Some(P::Challenge(challenge)) => {
                            if let Some(challenges) = &mut challenges {
                                accept(challenges, &challenge, &mut answered, key).await?;
                            }
                        }
                        Some(P::GameEnded(ended)) => {
                            if let Some(game) = ended.game {
                                // A snapshot's ended games were said before.
                                if tables.remove(&game.name).is_some() || !message.snapshot {
                                    say_result(&game.name, &game);
                                }
                            }
                        }
                        _ => {}
                    }
                    if !message.snapshot {
                        position = message.position;
                    }
                }
                Err(Status::unavailable("the player's stream ended"))
            }
            .await;
            match result {
                Err(status) if transient(&status) && failures < MAX_FAILURES => {
                    failures += 1;
                    eprintln!("{} (trying again)", status.message());
                    pause(failures).await;
                }
                Err(status) => bail!("{:?}: {}", status.code(), status.message()),
                Ok(()) => {}
            }
        }
    }

    /// The table of game `name` at `version`: made from the game at version
    /// 1 if new, then the events up to `version` replayed into it.
    async fn catch_up<'t>(
        &mut self,
        tables: &'t mut HashMap<String, Table>,
        name: &str,
        seat: Seat,
        version: i64,
        token: &str,
    ) -> Result<&'t mut Table, Status> {
        if !tables.contains_key(name) {
            let at = proto::GetGameAtVersionRequest {
                name: name.to_owned(),
                version: 1,
            };
            let shown = self
                .watch
                .get_game_at_version(request(at, token)?)
                .await?
                .into_inner();
            let shown = shown.game.unwrap_or_default();
            let game = follow::created(&shown).map_err(Status::from)?;
            say_seat(name, seat, &shown, self.level);
            tables.insert(
                name.to_owned(),
                Table {
                    game,
                    version: 1,
                    shown,
                },
            );
        }
        let Some(table) = tables.get_mut(name) else {
            return Err(Status::internal("a table just made"));
        };
        if table.version < version {
            let replay = proto::ReplayGameRequest {
                name: name.to_owned(),
                from_version: Some(table.version),
                to_version: Some(version),
                interval_ms: 0,
            };
            let mut steps = self
                .watch
                .replay_game(request(replay, token)?)
                .await?
                .into_inner();
            while let Some(step) = steps.next().await {
                let Some(event) = step?.event else { continue };
                if event.version > table.version {
                    follow::follow(&mut table.game, &event).map_err(Status::from)?;
                    table.version = event.version;
                }
            }
        }
        Ok(table)
    }

    /// Decides the seat's pending decision of `table` and acts; a refusal
    /// (the game moved on, the time ran out) is reported and left: the
    /// stream brings what comes next.
    async fn decide_and_act(&mut self, name: &str, table: &mut Table, token: &str) -> Result<(), Status> {
        let game = table.game.game();
        let Some(Actor::Seat(seat)) = game.pending().actor() else {
            return Ok(());
        };
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let budget = budget_for(self.budget, now, game.deadline());
        let id = name.strip_prefix("games/").unwrap_or(name);
        let mut bot = Bot::new(self.level, bot_seed(id, seat, table.version as u64));
        let public = table.game.clone();
        let started = Instant::now();
        let decided =
            tokio::task::spawn_blocking(move || bot.decide_within(&public, |_| started.elapsed() >= budget))
                .await
                .map_err(|e| Status::internal(format!("the search failed: {e}")))?;
        let Some((_, command)) = decided else {
            return Ok(());
        };
        let act = proto::ActRequest {
            name: name.to_owned(),
            expected_version: table.version,
            request_id: format!("bot-{}-{}", seat.0, table.version),
            action: view::action(command),
            view: proto::GameView::Basic as i32,
        };
        let mut failures = 0;
        loop {
            match self.games.act(request(act.clone(), token)?).await {
                Ok(answer) => {
                    let answer = answer.into_inner();
                    if let Some(shown) = &answer.game {
                        table.shown.clone_from(shown);
                    }
                    self.say_decision(name, &act, &table.shown, &answer);
                    return self.log_acknowledged(&act, seat, &answer);
                }
                Err(status) if transient(&status) && failures < MAX_FAILURES => {
                    failures += 1;
                    eprintln!(
                        "{name}: act at version {}: {} (trying again)",
                        table.version,
                        status.message()
                    );
                    pause(failures).await;
                }
                Err(status) if transient(&status) => return Err(status),
                Err(status) => {
                    eprintln!("{name}: version {} refused: {}", table.version, status.message());
                    return Ok(());
                }
            }
        }
    }

    /// The line of the bot's own decision, as the server stored it:
    /// `games/x v12 Brun (seat 1) placed the tile at (1, 0), rotated 90`.
    fn say_decision(
        &self,
        name: &str,
        act: &proto::ActRequest,
        shown: &proto::Game,
        answer: &proto::ActResponse,
    ) {
        if self.quiet {
            return;
        }
        if let Some(own) = answer
            .events
            .iter()
            .find(|e| e.version == act.expected_version + 1)
        {
            say(format_args!("{name} {}", draw::event_line(shown, own)));
        }
    }

    /// The result of a game that ended, as the server shows it to the seat.
    async fn say_end(&mut self, name: &str, token: &str) {
        let asked = request(
            proto::GetGameRequest {
                name: name.to_owned(),
            },
            token,
        );
        let shown = match asked {
            Ok(asked) => self.games.get_game(asked).await.map(|r| r.into_inner().game),
            Err(status) => Err(status),
        };
        match shown {
            Ok(Some(game)) => say_result(name, &game),
            _ => say(format_args!("{name}: the game is over")),
        }
    }

    /// Writes the `--log` line of an acknowledged action, in one write to
    /// a file opened for appending, so that bots may share a file.
    fn log_acknowledged(
        &mut self,
        act: &proto::ActRequest,
        seat: Seat,
        answer: &proto::ActResponse,
    ) -> Result<(), Status> {
        let Some(log) = self.log.as_mut() else {
            return Ok(());
        };
        let own = answer
            .events
            .iter()
            .find(|e| e.version == act.expected_version + 1);
        let line = serde_json::json!({
            "game": act.name,
            "seat": seat.0,
            "request_id": act.request_id,
            "acted_on": act.expected_version,
            "version": answer.version,
            "time_ms": own.map(|e| e.time_ms),
        });
        log.write_all(format!("{line}\n").as_bytes())
            .map_err(|e| Status::internal(format!("writing the log: {e}")))
    }
}

fn request<T>(message: T, token: &str) -> Result<Request<T>, Status> {
    with_token(message, token).map_err(|e| Status::invalid_argument(e.to_string()))
}
