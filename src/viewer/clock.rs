//! Clocks and the ways a game ends (docs/rules.md, T-1 to T-11) as the
//! viewer shows them: the server's clock estimated from its own times,
//! clock readings, time controls, end reasons and rankings in words.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use carcassonne::proto;

use super::draw::seat_name;

/// Milliseconds since the Unix epoch by this machine's clock.
pub fn local_now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
    })
}

/// The server's clock as the viewer estimates it. The server's clock is
/// the only authority (T-1): a running clock counts down from the
/// server's figures (`time_left_ms` as of `clock_time_ms`, `deadline_ms`)
/// to the server's now. Why not count from the moment a version arrived:
/// the snapshot a watch starts with may be hours old (a correspondence
/// game), and its figures hold as of its last event, not as of its
/// arrival. So the offset (this machine's clock minus the server's) is
/// bounded from both sides: the answer's `date` header (whole seconds,
/// written between the request and the answer) bounds it both ways, and
/// every event arrives after it was stored (`time_ms`), an upper bound as
/// tight as the stream's latency. The estimate is the middle of what all
/// samples allow; a sample that contradicts them (this machine's clock
/// was set) starts it anew.
#[derive(Debug, Clone, Copy)]
pub struct ServerClock {
    low: i64,
    high: i64,
}

impl Default for ServerClock {
    fn default() -> ServerClock {
        ServerClock {
            low: i64::MIN,
            high: i64::MAX,
        }
    }
}

impl ServerClock {
    fn narrow(&mut self, low: i64, high: i64) {
        let (new_low, new_high) = (self.low.max(low), self.high.min(high));
        if new_low > new_high {
            (self.low, self.high) = (low, high);
        } else {
            (self.low, self.high) = (new_low, new_high);
        }
    }

    /// An answer's `date` header, with this machine's times just before the
    /// request and just after the answer.
    pub fn note_date(&mut self, date: &str, sent: i64, received: i64) {
        if let Some(stamp) = parse_http_date(date) {
            self.narrow(
                sent.saturating_sub(stamp.saturating_add(1000)),
                received.saturating_sub(stamp),
            );
        }
    }

    /// Something the server stored at `server_ms` arrived at `received`.
    pub fn note_time(&mut self, server_ms: i64, received: i64) {
        if server_ms > 0 {
            self.narrow(i64::MIN, received.saturating_sub(server_ms));
        }
    }

    /// This machine's clock minus the server's, as best known.
    pub fn offset(&self) -> i64 {
        match (self.low, self.high) {
            (i64::MIN, i64::MAX) => 0,
            (i64::MIN, high) => high,
            (low, i64::MAX) => low,
            (low, high) => low + (high - low) / 2,
        }
    }

    /// The server's now, in Unix milliseconds.
    pub fn now(&self) -> i64 {
        local_now_ms().saturating_sub(self.offset())
    }
}

/// An HTTP date (`Wed, 02 Dec 2026 06:11:52 GMT`) in Unix milliseconds.
pub fn parse_http_date(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = i64::try_from(MONTHS.iter().position(|m| m == month)?).ok()? + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let mut hms = time.split(':').map(str::parse::<i64>);
    let (Some(Ok(h)), Some(Ok(m)), Some(Ok(s)), None) = (hms.next(), hms.next(), hms.next(), hms.next())
    else {
        return None;
    };
    // Within these bounds nothing below can overflow.
    let in_range = (1..=9999).contains(&year)
        && (1..=31).contains(&day)
        && (0..=23).contains(&h)
        && (0..=59).contains(&m)
        && (0..=60).contains(&s);
    if !in_range {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
    // days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    Some(((days * 24 + h) * 60 + m) * 60_000 + s * 1000)
}

/// A clock's reading to the nearest second: `04:59` under an hour,
/// `1:04:59` under a day, then `2 d 03:04:59`.
pub fn clock_text(ms: i64) -> String {
    let total = ms.max(0).saturating_add(500) / 1000;
    let (days, hours, minutes, seconds) = (
        total / 86_400,
        total % 86_400 / 3600,
        total % 3600 / 60,
        total % 60,
    );
    if days > 0 {
        format!("{days} d {hours:02}:{minutes:02}:{seconds:02}")
    } else if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes:02}:{seconds:02}")
    }
}

/// A duration in words: `10 min`, `1 h 30 min`, `1.5 s`, `2 days`.
pub fn duration_text(ms: i64) -> String {
    let ms = ms.max(0);
    let (days, hours, minutes) = (
        ms / 86_400_000,
        ms % 86_400_000 / 3_600_000,
        ms % 3_600_000 / 60_000,
    );
    let rest = ms % 60_000;
    let mut parts = Vec::new();
    if days > 0 {
        parts.push(format!("{days} {}", if days == 1 { "day" } else { "days" }));
    }
    if hours > 0 {
        parts.push(format!("{hours} h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes} min"));
    }
    if rest > 0 || parts.is_empty() {
        let seconds = format!("{}.{:03}", rest / 1000, rest % 1000);
        parts.push(format!(
            "{} s",
            seconds.trim_end_matches('0').trim_end_matches('.')
        ));
    }
    parts.join(" ")
}

/// The game's time control in words (`10 min + 5 s a move, 1 day a
/// decision, forfeit on time`), or `None` when no clock runs in it.
pub fn time_control_text(game: &proto::Game) -> Option<String> {
    let control = game.time_control.as_ref()?;
    if control.main_ms == 0 && control.decision_ms == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if control.main_ms > 0 {
        let main = duration_text(i64::from(control.main_ms));
        parts.push(if control.increment_ms > 0 {
            format!(
                "{main} + {} a move",
                duration_text(i64::from(control.increment_ms))
            )
        } else {
            format!("{main} each")
        });
    }
    if control.decision_ms > 0 {
        parts.push(format!(
            "{} a decision",
            duration_text(i64::from(control.decision_ms))
        ));
    }
    parts.push(match control.on_timeout() {
        proto::TimeoutRule::Auto => "the server plays for a seat out of time".to_owned(),
        _ => "forfeit on time".to_owned(),
    });
    Some(parts.join(", "))
}

/// The clocks of a game state: `now` is the server's now for a live view
/// (the running clock counts down to it), `None` for the figures as of the
/// state's own moment (`clock_time_ms`), a replay's still picture.
pub struct Figures {
    /// The seat whose clock runs.
    pub running: Option<u32>,
    /// Each seat's main time left, in seat order (empty without a main time).
    pub main: Vec<(u32, i64)>,
    /// The pending decision's time left, while a clock runs.
    pub decision: Option<i64>,
}

pub fn figures(game: &proto::Game, now: Option<i64>) -> Figures {
    let at = game.clock_time_ms;
    let moment = now.unwrap_or(at);
    let deadline = game.pending.as_ref().map_or(0, |p| p.deadline_ms);
    let running = (deadline > 0 && game.status() != proto::GameStatus::Finished)
        .then(|| game.pending.as_ref().map(|p| p.seat))
        .flatten();
    let main = game
        .players
        .iter()
        .filter_map(|p| {
            let left = p.time_left_ms?;
            let spent = if Some(p.seat) == running {
                moment.saturating_sub(at).max(0)
            } else {
                0
            };
            Some((p.seat, left.saturating_sub(spent)))
        })
        .collect();
    Figures {
        running,
        main,
        decision: running.map(|_| deadline.saturating_sub(moment)),
    }
}

/// `clocks: Ada 09:58 (running), Brun 10:00; deadline in 01:53`, or `None`
/// for a game without a time control.
pub fn clocks_line(game: &proto::Game, now: Option<i64>) -> Option<String> {
    time_control_text(game)?;
    let figures = figures(game, now);
    let mains: Vec<String> = figures
        .main
        .iter()
        .map(|&(seat, left)| {
            let running = if figures.running == Some(seat) {
                " (running)"
            } else {
                ""
            };
            format!("{} {}{running}", seat_name(game, seat), clock_text(left))
        })
        .collect();
    let mut line = format!("clocks: {}", mains.join(", "));
    match figures.decision {
        Some(left) => {
            if !mains.is_empty() {
                line.push_str("; ");
            }
            let _ = write!(line, "deadline in {}", clock_text(left));
        }
        None if mains.is_empty() => line.push_str("none running"),
        None => {}
    }
    Some(line)
}

/// A seat that is out: `out of time`, `resigned`; `None` while it plays.
pub fn seat_out(player: &proto::Player) -> Option<&'static str> {
    match player.status() {
        proto::SeatStatus::OutOfTime => Some("out of time"),
        proto::SeatStatus::Resigned => Some("resigned"),
        _ => None,
    }
}

/// Why a finished game ended (`Ada resigned`, `Brun ran out of time`,
/// `Ada aborted the game: no result`, `the last tile was played`).
pub fn end_reason(game: &proto::Game) -> Option<String> {
    let ending = game.ending.as_ref()?;
    let who = seat_name(game, ending.seat);
    Some(match ending.reason() {
        proto::EndReason::Unspecified => return None,
        proto::EndReason::Normal => "the last tile was played".to_owned(),
        proto::EndReason::OutOfTime => format!("{who} ran out of time"),
        proto::EndReason::Resigned => format!("{who} resigned"),
        proto::EndReason::Aborted => format!("{who} aborted the game: no result"),
    })
}

/// `ranking: 1. Brun 12, 2. Ada 10 (resigned)`; `None` without a ranking
/// (a running or aborted game).
pub fn ranking_line(game: &proto::Game) -> Option<String> {
    let mut ranked: Vec<&proto::Player> = game.players.iter().filter(|p| p.rank > 0).collect();
    if ranked.is_empty() {
        return None;
    }
    ranked.sort_by_key(|p| (p.rank, p.seat));
    let places: Vec<String> = ranked
        .iter()
        .map(|p| {
            let out = seat_out(p).map_or_else(String::new, |why| format!(" ({why})"));
            format!("{}. {} {}{out}", p.rank, p.name, p.score)
        })
        .collect();
    Some(format!("ranking: {}", places.join(", ")))
}
