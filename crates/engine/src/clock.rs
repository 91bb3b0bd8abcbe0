//! Time control (T-1 … T-5, T-10): every seat's clock, derived from the
//! times of the game's events.
//!
//! The engine reads no clock. Each event is folded with the time it was
//! stored ([`crate::Game::apply_at`]) and each command is decided at a time
//! given with it ([`crate::Game::decide_at`]); what a clock shows is a
//! function of those times alone, so a replay or an audit of the stored
//! events sees exactly the clocks the players saw.

use crate::model::{MAX_PLAYERS, Seat};

/// The longest duration a time control may name: 30 days.
pub const MAX_DURATION_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// How a game's time is controlled, chosen at creation (T-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeControl {
    /// A chess clock per seat: its main time and increment (T-3).
    pub main: Option<MainTime>,
    /// The most one decision may take (T-4).
    pub decision_ms: Option<u64>,
    /// What a timeout does (T-5).
    pub on_timeout: OnTimeout,
}

/// A seat's main time and what each hand-over adds to it (T-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MainTime {
    pub initial_ms: u64,
    pub increment_ms: u64,
}

/// What a timeout does (T-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnTimeout {
    /// The seat goes out (T-6): the default.
    #[default]
    Forfeit,
    /// The server decides for the seat and the game goes on (T-7).
    Auto,
}

impl OnTimeout {
    pub const fn name(self) -> &'static str {
        match self {
            OnTimeout::Forfeit => "forfeit",
            OnTimeout::Auto => "auto",
        }
    }

    pub fn from_name(name: &str) -> Option<OnTimeout> {
        [OnTimeout::Forfeit, OnTimeout::Auto]
            .into_iter()
            .find(|o| o.name() == name)
    }
}

impl TimeControl {
    /// Checks the figures: a main time or a limit per decision (or both),
    /// each of 1 ms to [`MAX_DURATION_MS`]; an increment of at most that.
    pub fn check(&self) -> Result<(), String> {
        let within = |what: &str, ms: u64, least: u64| {
            if (least..=MAX_DURATION_MS).contains(&ms) {
                Ok(())
            } else {
                Err(format!(
                    "{what} is {ms} ms; it must lie within {least}..={MAX_DURATION_MS} (30 days)"
                ))
            }
        };
        if self.main.is_none() && self.decision_ms.is_none() {
            return Err("a time control needs a main time, a limit per decision, or both".to_owned());
        }
        if let Some(main) = self.main {
            within("the main time", main.initial_ms, 1)?;
            within("the increment", main.increment_ms, 0)?;
        }
        if let Some(decision) = self.decision_ms {
            within("the limit per decision", decision, 1)?;
        }
        Ok(())
    }
}

/// The clocks of a game at its last event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Clocks {
    pub control: TimeControl,
    /// Each seat's main time left; for the seat whose clock runs, as of
    /// `since`.
    pub left: [u64; MAX_PLAYERS],
    /// When the running clock last started: the time of the last event.
    pub since: u64,
    /// Time the pending decision took before `since` (it spans events that
    /// do not answer it: a pause, another seat's resignation).
    pub spent: u64,
}

impl Clocks {
    pub fn new(control: TimeControl, at: u64) -> Clocks {
        Clocks {
            control,
            left: [control.main.map_or(0, |m| m.initial_ms); MAX_PLAYERS],
            since: at,
            spent: 0,
        }
    }

    /// Stops `seat`'s running clock at `until` (T-2): charges it the time
    /// since the clock started. Time never goes back: an earlier `until`
    /// charges nothing.
    pub fn charge(&mut self, seat: Seat, until: u64) {
        let elapsed = until.saturating_sub(self.since);
        let left = &mut self.left[seat.index()];
        *left = left.saturating_sub(elapsed);
        self.spent = self.spent.saturating_add(elapsed);
        self.since = self.since.max(until);
    }

    /// The increment, for a seat that hands the game over (T-3).
    pub fn add_increment(&mut self, seat: Seat) {
        if let Some(main) = self.control.main {
            let left = &mut self.left[seat.index()];
            *left = left.saturating_add(main.increment_ms);
        }
    }

    /// When the decision pending for `seat` times out (T-4): the earlier of
    /// its main time and the decision's limit running out.
    pub fn deadline(&self, seat: Seat) -> u64 {
        let main = self.control.main.map(|_| self.left[seat.index()]);
        let decision = self
            .control
            .decision_ms
            .map(|limit| limit.saturating_sub(self.spent));
        let allowed = match (main, decision) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => u64::MAX,
        };
        self.since.saturating_add(allowed)
    }

    /// `seat`'s main time left at `at`, `running` being the seat whose
    /// clock runs; `None` without a main time.
    pub fn left_at(&self, seat: Seat, running: Option<Seat>, at: u64) -> Option<u64> {
        self.control.main?;
        let left = self.left[seat.index()];
        Some(if running == Some(seat) {
            left.saturating_sub(at.saturating_sub(self.since))
        } else {
            left
        })
    }
}
