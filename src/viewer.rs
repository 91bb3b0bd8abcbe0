//! The terminal viewer: `watch` follows a game live through WatchGame,
//! `replay` steps through a game with ReplayGame and GetGameAtVersion.
//!
//! On a terminal each frame is drawn over the last; otherwise (a pipe, a
//! test) frames are printed one after the other and `replay` reads one
//! command a line, so that both can be scripted.

mod draw;
mod input;

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, watch_game_response::Message as W};
use crossterm::{cursor, execute, terminal};
use tonic::Request;
use tonic::transport::{Channel, Endpoint};

use draw::Frame;
use input::Command;

/// Where the server is and who is asking.
#[derive(clap::Args)]
pub struct Connection {
    /// The server's address.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    addr: String,
    /// A seat's token: watch as that player, without the spectator delay.
    #[arg(long, env = "CARCASSONNE_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(clap::Args)]
pub struct WatchArgs {
    /// The game: `games/{id}` or its id.
    game: String,
    #[command(flatten)]
    connection: Connection,
}

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The game: `games/{id}` or its id.
    game: String,
    #[command(flatten)]
    connection: Connection,
    /// The version to start at (1 is the game's creation).
    #[arg(long, default_value_t = 1)]
    from: i64,
}

/// A connected client with the caller's token.
struct Client {
    watch: WatchServiceClient<Channel>,
    token: Option<String>,
    name: String,
}

impl Client {
    async fn connect(connection: &Connection, game: &str) -> anyhow::Result<Client> {
        let addr = if connection.addr.contains("://") {
            connection.addr.clone()
        } else {
            format!("http://{}", connection.addr)
        };
        let channel = Endpoint::from_shared(addr.clone())
            .with_context(|| format!("the address {addr}"))?
            .connect()
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        let name = if game.starts_with("games/") {
            game.to_owned()
        } else {
            format!("games/{game}")
        };
        Ok(Client {
            watch: WatchServiceClient::new(channel),
            token: connection.token.clone(),
            name,
        })
    }

    fn request<T>(&self, message: T) -> anyhow::Result<Request<T>> {
        let mut request = Request::new(message);
        if let Some(token) = &self.token {
            let value = format!("Bearer {token}")
                .parse()
                .context("the token is not valid in a header")?;
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    }

    async fn game_at(&mut self, version: i64) -> anyhow::Result<proto::Game> {
        let request = self.request(proto::GetGameAtVersionRequest {
            name: self.name.clone(),
            version,
        })?;
        let response = self.watch.get_game_at_version(request).await.map_err(status)?;
        response.into_inner().game.context("the server sent no game")
    }

    /// The game at a version the watch stream has just sent. The server
    /// publishes an event a moment before its other calls see it, so a
    /// version out of range is asked again a few times.
    async fn game_after(&mut self, version: i64) -> anyhow::Result<proto::Game> {
        for _ in 0..40 {
            let request = self.request(proto::GetGameAtVersionRequest {
                name: self.name.clone(),
                version,
            })?;
            match self.watch.get_game_at_version(request).await {
                Ok(response) => return response.into_inner().game.context("the server sent no game"),
                Err(s) if s.code() == tonic::Code::InvalidArgument => {
                    tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                }
                Err(s) => return Err(status(s)),
            }
        }
        self.game_at(version).await
    }

    async fn replay(
        &mut self,
        from: i64,
        to: Option<i64>,
    ) -> anyhow::Result<tonic::Streaming<proto::ReplayGameResponse>> {
        let request = self.request(proto::ReplayGameRequest {
            name: self.name.clone(),
            from_version: Some(from),
            to_version: to,
            interval_ms: 0,
        })?;
        Ok(self
            .watch
            .replay_game(request)
            .await
            .map_err(status)?
            .into_inner())
    }

    /// The game at `version` with the event that led to it (none for the
    /// creation).
    async fn step(&mut self, version: i64) -> anyhow::Result<Step> {
        if version > 1 {
            let mut stream = self.replay(version - 1, Some(version)).await?;
            if let Some(step) = stream.message().await.map_err(status)?
                && let Some(game) = step.game
            {
                return Ok(Step {
                    game,
                    event: step.event,
                });
            }
        }
        Ok(Step {
            game: self.game_at(version).await?,
            event: None,
        })
    }
}

/// A gRPC status as an error a user reads.
fn status(status: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{:?}: {}", status.code(), status.message())
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Prints frames: over each other on a terminal, one after the other
/// otherwise.
struct Screen {
    terminal: bool,
}

impl Screen {
    fn show(&self, text: &str) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if self.terminal {
            execute!(
                out,
                terminal::Clear(terminal::ClearType::All),
                cursor::MoveTo(0, 0)
            )?;
        }
        writeln!(out, "{text}")?;
        out.flush()?;
        Ok(())
    }
}

/// `carcassonne watch`: draws the game at every event until it ends.
pub fn watch(args: &WatchArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(watch_game(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn watch_game(args: &WatchArgs) -> anyhow::Result<()> {
    let mut client = Client::connect(&args.connection, &args.game).await?;
    let screen = Screen {
        terminal: std::io::stdout().is_terminal(),
    };
    // None: from the game as it is now; after falling behind, where we were.
    let mut from = None;
    loop {
        let request = client.request(proto::WatchGameRequest {
            name: client.name.clone(),
            from_version: from,
            keep_alive_ms: 0,
        })?;
        let mut stream = client
            .watch
            .watch_game(request)
            .await
            .map_err(status)?
            .into_inner();
        let mut fell_behind = false;
        while let Some(message) = stream.message().await.map_err(status)? {
            let (game, event) = match message.message {
                Some(W::Snapshot(game)) => (game, None),
                Some(W::Event(watched)) => {
                    let event = watched.event.context("the server sent an empty event")?;
                    // The event says what changed; the board comes with the
                    // game at its version.
                    (client.game_after(event.version).await?, Some(event))
                }
                Some(W::FellBehind(version)) => {
                    // Too slow: resume from the last version seen.
                    from = Some(version);
                    fell_behind = true;
                    break;
                }
                Some(W::KeepAlive(_)) | None => continue,
            };
            from = Some(game.version);
            screen.show(&draw::frame(&Frame {
                game: &game,
                event: event.as_ref(),
            }))?;
            if game.status() == proto::GameStatus::Finished {
                println!("{}", draw::final_scores(&game));
                return Ok(());
            }
        }
        if !fell_behind {
            bail!("the watch stream of {} ended before the game did", client.name);
        }
    }
}

/// A game's state at one version and the event that led to it.
struct Step {
    game: proto::Game,
    event: Option<proto::GameEvent>,
}

/// The steps seen so far, contiguous in version, and the one shown.
struct Replay {
    client: Client,
    steps: Vec<Step>,
    at: usize,
    /// The steps after the last one, read as they are needed.
    ahead: Option<tonic::Streaming<proto::ReplayGameResponse>>,
    /// A word for the user under the frame.
    note: Option<String>,
}

impl Replay {
    async fn start(client: Client, version: i64) -> anyhow::Result<Replay> {
        let mut replay = Replay {
            client,
            steps: Vec::new(),
            at: 0,
            ahead: None,
            note: None,
        };
        let first = replay.client.step(version).await?;
        replay.steps.push(first);
        Ok(replay)
    }

    fn current(&self) -> Option<&Step> {
        self.steps.get(self.at)
    }

    async fn run(&mut self, command: Command) {
        self.note = None;
        let result = match command {
            Command::Next => self.next().await,
            Command::Back => self.back().await,
            Command::Goto(version) => self.goto(version).await,
            Command::Help => {
                self.note = Some(input::HELP.to_owned());
                Ok(())
            }
            Command::Quit => Ok(()),
        };
        if let Err(error) = result {
            self.note = Some(format!("error: {error:#}"));
        }
    }

    async fn next(&mut self) -> anyhow::Result<()> {
        if self.at + 1 < self.steps.len() {
            self.at += 1;
            return Ok(());
        }
        let Some(last) = self.steps.last() else {
            return Ok(());
        };
        let (version, finished) = (
            last.game.version,
            last.game.status() == proto::GameStatus::Finished,
        );
        // The open stream, then once more from the last step for a game
        // that has gone on since.
        for _ in 0..2 {
            if self.ahead.is_none() {
                if finished {
                    break;
                }
                self.ahead = Some(self.client.replay(version, None).await?);
            }
            let Some(stream) = self.ahead.as_mut() else { break };
            match stream.message().await.map_err(status)? {
                Some(proto::ReplayGameResponse {
                    event,
                    game: Some(game),
                }) => {
                    self.steps.push(Step { game, event });
                    self.at = self.steps.len() - 1;
                    return Ok(());
                }
                _ => self.ahead = None,
            }
        }
        self.note = Some(if finished {
            "this is the end of the game".to_owned()
        } else {
            "no newer step yet".to_owned()
        });
        Ok(())
    }

    async fn back(&mut self) -> anyhow::Result<()> {
        if self.at > 0 {
            self.at -= 1;
            return Ok(());
        }
        let version = self.steps.first().map_or(2, |s| s.game.version);
        if version <= 2 {
            self.note = Some("this is the game's creation".to_owned());
            return Ok(());
        }
        let step = self.client.step(version - 1).await?;
        self.steps.insert(0, step);
        Ok(())
    }

    async fn goto(&mut self, version: i64) -> anyhow::Result<()> {
        if let Some(i) = self.steps.iter().position(|s| s.game.version == version) {
            self.at = i;
            return Ok(());
        }
        let step = self.client.step(version).await?;
        self.steps = vec![step];
        self.at = 0;
        self.ahead = None;
        Ok(())
    }

    fn frame(&self, keys: bool) -> String {
        let mut text = match self.current() {
            Some(step) => draw::frame(&Frame {
                game: &step.game,
                event: step.event.as_ref(),
            }),
            None => String::new(),
        };
        if let Some(note) = &self.note {
            text.push_str(note);
            text.push('\n');
        }
        if keys {
            text.push_str(input::HELP);
            text.push('\n');
        }
        text
    }
}

/// `carcassonne replay`: steps through a game with keys, or with commands
/// a line from a pipe.
pub fn replay(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let runtime = runtime()?;
    let mut replay = runtime.block_on(async {
        let client = Client::connect(&args.connection, &args.game).await?;
        Replay::start(client, args.from).await
    })?;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        let raw = input::RawTerminal::enter()?;
        loop {
            raw.draw(&replay.frame(true))?;
            match raw.read_key()? {
                Command::Quit => break,
                command => runtime.block_on(replay.run(command)),
            }
        }
    } else {
        let screen = Screen { terminal: false };
        loop {
            screen.show(&replay.frame(false))?;
            match input::read_line()? {
                Command::Quit => break,
                command => runtime.block_on(replay.run(command)),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
