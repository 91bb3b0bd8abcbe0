//! The terminal viewer: `watch` follows a game live through WatchGame,
//! `replay` steps through a game with ReplayGame and GetGameAtVersion.
//!
//! On a terminal each frame is drawn over the last, fitted to its size
//! (the board scrolls when it does not fit), and keys are read as they are
//! pressed; otherwise (a pipe, a test) frames are printed one after the
//! other, whole or fitted to `--size`, and commands are read one a line,
//! so that both can be scripted.
//!
//! In a game with a time control `watch` counts the running clock down
//! against the server's clock (`clock.rs`), redrawing as its reading
//! changes (from a pipe: only the `clocks:` line); `replay` shows the
//! clocks as of each step, still.

mod clock;
pub(crate) mod draw;
mod input;

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, watch_game_response::Message as W};
use crossterm::{cursor, execute, terminal};
use tonic::Request;
use tonic::transport::{Channel, Endpoint};

use draw::{Frame, Layout};
use input::{Command, RawTerminal};

/// The API's version numbers as the viewer uses them, in one place.
pub mod versions {
    /// The version of a game's creation: the first a client sees.
    pub const CREATION: i64 = 1;
    /// WatchGame's `from_version` for "from the game as it is now".
    pub const WATCH_FROM_NOW: Option<i64> = None;
    /// ReplayGame's `to_version` for "to the last event".
    pub const REPLAY_TO_END: Option<i64> = None;
}

/// How frames are drawn.
#[derive(clap::Args)]
pub struct Look {
    /// Fit each frame into COLSxROWS characters, e.g. 80x24 (default: the
    /// terminal's size on a terminal, otherwise the whole board).
    #[arg(long, value_name = "COLSxROWS", value_parser = parse_size)]
    size: Option<(usize, usize)>,
}

fn parse_size(text: &str) -> Result<(usize, usize), String> {
    let parsed = text
        .split_once(['x', 'X'])
        .and_then(|(cols, rows)| Some((cols.trim().parse().ok()?, rows.trim().parse().ok()?)));
    match parsed {
        Some((cols, rows)) if cols > 0 && rows > 0 => Ok((cols, rows)),
        _ => Err("expected columns x rows, e.g. 80x24".to_owned()),
    }
}

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
    #[command(flatten)]
    look: Look,
}

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The game: `games/{id}` or its id.
    game: String,
    #[command(flatten)]
    connection: Connection,
    #[command(flatten)]
    look: Look,
    /// The version to start at (the default is the game's creation).
    #[arg(long, default_value_t = versions::CREATION)]
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
        if version > versions::CREATION {
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

/// Where frames go: a terminal in raw mode (keys read as pressed), a
/// terminal drawn over, or a pipe; at the size given or the terminal's.
struct Screen {
    raw: Option<RawTerminal>,
    terminal: bool,
    /// Each frame over the last (a terminal), or one after the other.
    clear: bool,
    size: Option<(usize, usize)>,
}

impl Screen {
    /// Raw mode when both ends are a terminal.
    fn open(look: &Look) -> anyhow::Result<Screen> {
        let terminal = std::io::stdout().is_terminal();
        let raw = if terminal && std::io::stdin().is_terminal() {
            Some(RawTerminal::enter()?)
        } else {
            None
        };
        Ok(Screen {
            raw,
            terminal,
            clear: terminal,
            size: look.size,
        })
    }

    /// The size frames must fit: `--size`, or the terminal's.
    fn size(&self) -> Option<(usize, usize)> {
        self.size.or_else(|| {
            self.terminal
                .then(|| terminal::size().ok())
                .flatten()
                .map(|(cols, rows)| (usize::from(cols), usize::from(rows)))
        })
    }

    fn show(&self, text: &str) -> anyhow::Result<()> {
        if let Some(raw) = &self.raw {
            return raw.draw(text);
        }
        let mut out = crate::stdout::lock();
        if self.clear {
            execute!(
                out,
                terminal::Clear(terminal::ClearType::All),
                cursor::MoveTo(0, 0)
            )?;
            // No new line after the last row: it would scroll the first away.
            write!(out, "{}", text.trim_end_matches('\n'))?;
        } else {
            writeln!(out, "{text}")?;
        }
        out.flush()?;
        Ok(())
    }

    /// Frames one after the other (a pipe), none drawn over another.
    fn is_pipe(&self) -> bool {
        self.raw.is_none() && !self.clear
    }

    /// Back from raw mode to the terminal as it was.
    fn leave_raw(&mut self) {
        self.raw = None;
    }
}

/// The board's window: around the last tile laid, or where the user
/// scrolled it.
#[derive(Default)]
struct BoardView {
    /// The window's top left tile once scrolled; `None`: follow.
    origin: Option<(i32, i32)>,
    /// The window of the last frame drawn, when the board was cut.
    shown: Option<(i32, i32)>,
}

impl BoardView {
    /// Applies a board command; false for any other command.
    fn command(&mut self, command: Command) -> bool {
        match command {
            Command::Scroll(east, north) => {
                if let Some((x, y)) = self.shown {
                    self.origin = Some((x.saturating_add(east), y.saturating_add(north)));
                }
            }
            Command::Follow => self.origin = None,
            Command::Redraw => {}
            _ => return false,
        }
        true
    }

    fn draw(&mut self, frame: &Frame<'_>, size: Option<(usize, usize)>, reserved: usize) -> String {
        let drawn = draw::frame(
            frame,
            &Layout {
                size,
                reserved,
                origin: self.origin,
            },
        );
        self.shown = drawn.origin;
        if self.origin.is_some() {
            // Kept inside the board, so that the next key moves it at once.
            self.origin = drawn.origin;
        }
        drawn.text
    }
}

/// How often `watch` looks whether a running clock's reading changed.
const CLOCK_TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// Whether a clock runs in the game: that of the seat that owes the pending
/// decision, in a game with a time control (T-2).
fn clock_runs(game: &proto::Game) -> bool {
    game.status() != proto::GameStatus::Finished && game.pending.as_ref().is_some_and(|p| p.deadline_ms > 0)
}

/// `carcassonne watch`: draws the game at every event until it ends, or
/// until `q`.
pub fn watch(args: &WatchArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(watch_game(args))?;
    Ok(ExitCode::SUCCESS)
}

/// The commands typed while watching: keys on a terminal, lines from a
/// pipe (whose end stops nothing: `watch` runs until the game ends). A
/// terminal that is not also where frames go is left alone.
fn watch_commands(raw: bool) -> tokio::sync::mpsc::UnboundedReceiver<Command> {
    let (sender, commands) = tokio::sync::mpsc::unbounded_channel();
    if raw {
        std::thread::spawn(move || {
            while !sender.is_closed() {
                match input::poll_command(std::time::Duration::from_millis(100)) {
                    Ok(Some(command)) if sender.send(command).is_err() => break,
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        });
    } else if !std::io::stdin().is_terminal() {
        std::thread::spawn(move || {
            for line in std::io::stdin().lines() {
                let Ok(line) = line else { break };
                if sender.send(input::parse_line(&line)).is_err() {
                    break;
                }
            }
        });
    }
    commands
}

async fn watch_game(args: &WatchArgs) -> anyhow::Result<()> {
    let mut client = Client::connect(&args.connection, &args.game).await?;
    let mut screen = Screen::open(&args.look)?;
    let mut commands = watch_commands(screen.raw.is_some());
    let mut view = BoardView::default();
    let mut shown: Option<Step> = None;
    let mut server_clock = clock::ServerClock::default();
    // Whether the version shown is the present, whose running clock counts.
    let mut present = true;
    // The reading of the running clocks last written.
    let mut clocks_shown: Option<String> = None;
    let mut ticks = tokio::time::interval(CLOCK_TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // After falling behind, resume where we were.
    let mut from = versions::WATCH_FROM_NOW;
    loop {
        let request = client.request(proto::WatchGameRequest {
            name: client.name.clone(),
            from_version: from,
            keep_alive_ms: 0,
        })?;
        let sent = clock::local_now_ms();
        let response = client.watch.watch_game(request).await.map_err(status)?;
        if let Some(date) = response.metadata().get("date").and_then(|d| d.to_str().ok()) {
            server_clock.note_date(date, sent, clock::local_now_ms());
        }
        let mut stream = response.into_inner();
        let mut fell_behind = false;
        loop {
            tokio::select! {
                message = stream.message() => {
                    let Some(message) = message.map_err(status)? else { break };
                    let received = clock::local_now_ms();
                    let (game, event) = match message.message {
                        Some(W::Snapshot(game)) => {
                            server_clock.note_time(game.clock_time_ms, received);
                            (game, None)
                        }
                        Some(W::Event(watched)) => {
                            let event = watched.event.context("the server sent an empty event")?;
                            server_clock.note_time(event.time_ms, received);
                            // The event says what changed; the board comes
                            // with the game at its version.
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
                    // A spectator of a delayed game sees the past: its
                    // clocks stand as they were (a player sees the present).
                    present = client.token.is_some() || game.spectator_delay == 0;
                    if game.status() == proto::GameStatus::Finished {
                        return show_the_end(&mut screen, &mut view, &Step { game, event });
                    }
                    shown = Some(Step { game, event });
                }
                Some(command) = commands.recv() => {
                    if command == Command::Quit {
                        return Ok(());
                    }
                    if !view.command(command) {
                        continue;
                    }
                }
                _ = ticks.tick() => {
                    let Some(step) = shown.as_ref().filter(|s| clock_runs(&s.game) && present) else { continue };
                    let clocks = clock::clocks_line(&step.game, Some(server_clock.now()));
                    if clocks == clocks_shown {
                        continue;
                    }
                    if screen.is_pipe() {
                        // Frames stay in a pipe: a new reading, not a new frame.
                        if let Some(line) = &clocks {
                            screen.show(line)?;
                        }
                        clocks_shown = clocks;
                        continue;
                    }
                }
            }
            if let Some(step) = &shown {
                let now = present.then(|| server_clock.now());
                let frame = Frame {
                    game: &step.game,
                    event: step.event.as_ref(),
                    now,
                };
                screen.show(&view.draw(&frame, screen.size(), 0))?;
                clocks_shown = clock::clocks_line(&step.game, now);
            }
        }
        if !fell_behind {
            bail!("the watch stream of {} ended before the game did", client.name);
        }
    }
}

/// The last frame and the final scores, on the terminal's own screen (not
/// the alternate one raw mode draws on), so that they stay.
fn show_the_end(screen: &mut Screen, view: &mut BoardView, last: &Step) -> anyhow::Result<()> {
    let was_raw = screen.raw.is_some();
    screen.leave_raw();
    let mut out = crate::stdout::lock();
    if screen.clear && !was_raw {
        execute!(
            out,
            terminal::Clear(terminal::ClearType::All),
            cursor::MoveTo(0, 0)
        )?;
    }
    let scores = draw::final_scores(&last.game);
    let frame = Frame {
        game: &last.game,
        event: last.event.as_ref(),
        now: None,
    };
    // The scores' lines and the shell's prompt fit under the frame.
    let reserved = scores.lines().count() + 1;
    let text = view.draw(&frame, screen.size(), reserved);
    write!(out, "{text}{scores}")?;
    out.flush()?;
    Ok(())
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
    view: BoardView,
}

impl Replay {
    async fn start(client: Client, version: i64) -> anyhow::Result<Replay> {
        let mut replay = Replay {
            client,
            steps: Vec::new(),
            at: 0,
            ahead: None,
            note: None,
            view: BoardView::default(),
        };
        let first = replay.client.step(version).await?;
        replay.steps.push(first);
        Ok(replay)
    }

    async fn run(&mut self, command: Command) {
        self.note = None;
        if self.view.command(command) {
            return;
        }
        let result = match command {
            Command::Next => self.next().await,
            Command::Back => self.back().await,
            Command::Goto(version) => self.goto(version).await,
            Command::Help => {
                self.note = Some(input::HELP.to_owned());
                Ok(())
            }
            Command::Quit | Command::Scroll(..) | Command::Follow | Command::Redraw => Ok(()),
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
                self.ahead = Some(self.client.replay(version, versions::REPLAY_TO_END).await?);
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
        let version = self.steps.first().map_or(versions::CREATION, |s| s.game.version);
        if version <= versions::CREATION {
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

    /// The frame, with the note and (for keys) the help under it, fitted
    /// to `size`.
    fn frame(&mut self, size: Option<(usize, usize)>, keys: bool) -> String {
        let mut under: Vec<&str> = self.note.iter().flat_map(|n| n.lines()).collect();
        if keys {
            under.push(input::HELP);
        }
        let mut text = match self.steps.get(self.at) {
            Some(step) => self.view.draw(
                &Frame {
                    game: &step.game,
                    event: step.event.as_ref(),
                    now: None,
                },
                size,
                under.len(),
            ),
            None => String::new(),
        };
        for line in under {
            match size {
                Some((cols, _)) => text.extend(line.chars().take(cols)),
                None => text.push_str(line),
            }
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
    let mut screen = Screen::open(&args.look)?;
    if screen.raw.is_none() {
        // Commands from a pipe: every frame stays to be read.
        screen.clear = false;
    }
    loop {
        screen.show(&replay.frame(screen.size(), screen.raw.is_some()))?;
        let command = match &screen.raw {
            Some(raw) => raw.read_key()?,
            None => input::read_line()?,
        };
        match command {
            Command::Quit => break,
            command => runtime.block_on(replay.run(command)),
        }
    }
    Ok(ExitCode::SUCCESS)
}
