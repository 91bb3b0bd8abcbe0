//! The viewer's commands: single keys in raw mode on a terminal, or one
//! command a line from a pipe (for scripts and tests).

use std::io::{BufRead as _, Write as _};

use anyhow::Context as _;
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, terminal};

/// What the user asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Next,
    Back,
    Goto(i64),
    Quit,
    /// Something unknown: show the help.
    Help,
    /// Move the board's window by this many tiles east and north.
    Scroll(i32, i32),
    /// Put the board's window back around the last tile laid.
    Follow,
    /// The terminal changed size: draw again.
    Redraw,
}

pub const HELP: &str = "n/space/right: next  p/left: back  g N: go to version N  q: quit";

/// One command a line: `n` (or an empty line), `p`, `g N`, `q`, and
/// `w`, `a`, `s`, `d`, `c` for the board; the end of input is `q`.
pub fn parse_line(line: &str) -> Command {
    let line = line.trim();
    let mut chars = line.chars();
    if let (Some(key), None) = (chars.next(), chars.next())
        && let Some(command) = board_key(key)
    {
        return command;
    }
    match line {
        "" | "n" | "next" => Command::Next,
        "p" | "b" | "back" => Command::Back,
        "q" | "quit" => Command::Quit,
        _ => line
            .strip_prefix('g')
            .and_then(|n| n.trim().parse().ok())
            .map_or(Command::Help, Command::Goto),
    }
}

/// The board's keys: `w`, `a`, `s`, `d` scroll north, west, south, east;
/// `c` follows the last tile again.
fn board_key(key: char) -> Option<Command> {
    Some(match key {
        'w' => Command::Scroll(0, 1),
        'a' => Command::Scroll(-1, 0),
        's' => Command::Scroll(0, -1),
        'd' => Command::Scroll(1, 0),
        'c' => Command::Follow,
        _ => return None,
    })
}

/// The command of a terminal event that needs nothing more: a key of
/// `replay` and `watch` (arrows and `n`/`p` step, which `watch` ignores),
/// or a change of size. `g` is not one: it reads a version.
pub fn command_of(event: &Event) -> Option<Command> {
    let key = match event {
        Event::Resize(..) => return Some(Command::Redraw),
        Event::Key(key) if key.kind == KeyEventKind::Press => key,
        _ => return None,
    };
    Some(match key.code {
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Command::Quit,
        KeyCode::Char(c @ ('w' | 'a' | 's' | 'd' | 'c')) => return board_key(c),
        KeyCode::Char('n' | ' ' | 'l') | KeyCode::Right | KeyCode::Enter | KeyCode::Down => Command::Next,
        KeyCode::Char('p' | 'b' | 'h') | KeyCode::Left | KeyCode::Backspace | KeyCode::Up => Command::Back,
        KeyCode::Char('q') | KeyCode::Esc => Command::Quit,
        KeyCode::Home => Command::Goto(super::versions::CREATION),
        _ => return None,
    })
}

/// The command of the next terminal event within `timeout`, if any.
pub fn poll_command(timeout: std::time::Duration) -> anyhow::Result<Option<Command>> {
    if !event::poll(timeout).context("reading the terminal")? {
        return Ok(None);
    }
    Ok(command_of(&event::read().context("reading the terminal")?))
}

/// Reads the next command from a line of standard input.
pub fn read_line() -> anyhow::Result<Command> {
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading standard input")?;
    Ok(if n == 0 { Command::Quit } else { parse_line(&line) })
}

/// The terminal in raw mode on the alternate screen, for as long as it
/// lives; put back as it was when dropped, also on an error.
pub struct RawTerminal(());

impl RawTerminal {
    pub fn enter() -> anyhow::Result<RawTerminal> {
        terminal::enable_raw_mode().context("switching the terminal to raw mode")?;
        let guard = RawTerminal(());
        execute!(std::io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)
            .context("switching to the alternate screen")?;
        Ok(guard)
    }

    /// Clears the screen and draws `text` from the top left.
    pub fn draw(&self, text: &str) -> anyhow::Result<()> {
        let mut out = crate::stdout::lock();
        execute!(
            out,
            terminal::Clear(terminal::ClearType::All),
            cursor::MoveTo(0, 0)
        )?;
        // Raw mode: a new line does not return the carriage. None after
        // the last row: it would scroll the first away.
        out.write_all(text.trim_end_matches('\n').replace('\n', "\r\n").as_bytes())?;
        out.flush()?;
        Ok(())
    }

    /// Waits for a key (or a change of size) and returns its command; `g`
    /// reads a version up to Enter.
    pub fn read_key(&self) -> anyhow::Result<Command> {
        loop {
            let event = event::read().context("reading the terminal")?;
            if let Event::Key(key) = &event
                && key.kind == KeyEventKind::Press
                && key.code == KeyCode::Char('g')
            {
                return self.read_version();
            }
            if let Some(command) = command_of(&event) {
                return Ok(command);
            }
        }
    }

    fn read_version(&self) -> anyhow::Result<Command> {
        let mut digits = String::new();
        loop {
            {
                let mut out = crate::stdout::lock();
                let (_, rows) = terminal::size().unwrap_or((80, 24));
                execute!(
                    out,
                    cursor::MoveTo(0, rows.saturating_sub(1)),
                    terminal::Clear(terminal::ClearType::CurrentLine)
                )?;
                write!(out, "go to version: {digits}")?;
                out.flush()?;
            }
            match next_key()?.code {
                KeyCode::Char(c) if c.is_ascii_digit() => digits.push(c),
                KeyCode::Backspace => {
                    digits.pop();
                }
                KeyCode::Enter => return Ok(digits.parse().map_or(Command::Help, Command::Goto)),
                KeyCode::Esc => return Ok(Command::Help),
                _ => {}
            }
        }
    }
}

fn next_key() -> anyhow::Result<KeyEvent> {
    loop {
        if let Event::Key(key) = event::read().context("reading the terminal")?
            && key.kind == KeyEventKind::Press
        {
            return Ok(key);
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let _ = execute!(std::io::stdout(), cursor::Show, terminal::LeaveAlternateScreen);
        let _ = terminal::disable_raw_mode();
    }
}
