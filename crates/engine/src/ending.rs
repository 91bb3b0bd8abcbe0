//! How a game ends other than by its last tile (T-4 … T-11): timeouts,
//! resignations and aborts, the seats that go out, what the server decides
//! for a seat under `auto`, and the ranking of a finished game.
//!
//! Commands are checked here at a given time ([`Game::decide_at`]): once
//! the pending decision's deadline has passed, only its timeout may come.

use crate::clock::OnTimeout;
use crate::game::{Game, Observer};
use crate::model::*;
use crate::rules::id;

impl Game {
    /// Checks `command` by `actor` at `at` (ms since the Unix epoch)
    /// against the rules and the clocks, and returns the events it
    /// produces. Changes nothing. [`Game::decide`] decides at the time of
    /// the last event.
    pub fn decide_at(&self, at: u64, actor: Actor, command: &Command) -> Result<Vec<Event>, PlayError> {
        let mut events = Vec::with_capacity(4);
        self.decide_at_into(at, actor, command, &mut events)?;
        Ok(events)
    }

    /// [`Game::decide_at`], appending the events to `out`; on an error
    /// `out` is as it was.
    pub fn decide_at_into(
        &self,
        at: u64,
        actor: Actor,
        command: &Command,
        out: &mut Vec<Event>,
    ) -> Result<(), PlayError> {
        let before = out.len();
        let decided = self.decide_unchecked_into(at, actor, command, out);
        if decided.is_err() {
            out.truncate(before);
        }
        decided
    }

    fn decide_unchecked_into(
        &self,
        at: u64,
        actor: Actor,
        command: &Command,
        out: &mut Vec<Event>,
    ) -> Result<(), PlayError> {
        self.check_time(at, actor, command)?;
        match *command {
            Command::Resign => out.push(Event::Resigned(self.seat_in_game(actor, id::T_8)?)),
            Command::Abort => out.push(Event::Aborted(self.check_abort(actor)?)),
            Command::TimeOut => out.push(Event::TimedOut(self.check_timeout(at, actor)?)),
            Command::Resume { down_since_ms } => {
                self.check_resume(at, actor, down_since_ms)?;
                out.push(Event::Resumed { down_since_ms });
            }
            _ => {
                if let Actor::Seat(seat) = actor {
                    self.check_not_out(seat)?;
                }
                self.decide_into(actor, command, out)?;
            }
        }
        Ok(())
    }

    /// Time never goes back (T-2), and past the pending decision's
    /// deadline only its timeout (or a resumption) may come (T-4, T-5).
    fn check_time(&self, at: u64, actor: Actor, command: &Command) -> Result<(), PlayError> {
        if self.is_finished() {
            return Err(PlayError::Finished);
        }
        let Some(clocks) = &self.clocks else {
            return Ok(());
        };
        if at < self.time {
            return Err(PlayError::rule(
                id::T_2,
                format!(
                    "{} at {at} ms comes before the last event, at {} ms: time never goes back",
                    describe(actor, command),
                    self.time
                ),
            ));
        }
        if matches!(command, Command::TimeOut | Command::Resume { .. }) {
            return Ok(());
        }
        if let Some(seat) = self.decision_owner() {
            let deadline_ms = clocks.deadline(seat);
            if at >= deadline_ms {
                return Err(PlayError::OutOfTime { seat, deadline_ms });
            }
        }
        Ok(())
    }

    /// The seat of `actor`, if it is a seat still in the game; `rule` is
    /// the rule that asks for one.
    fn seat_in_game(&self, actor: Actor, rule: crate::RuleId) -> Result<Seat, PlayError> {
        let Actor::Seat(seat) = actor else {
            return Err(PlayError::rule(rule, format!("{actor} is no seat of the game")));
        };
        self.check_not_out(seat)?;
        Ok(seat)
    }

    fn check_not_out(&self, seat: Seat) -> Result<(), PlayError> {
        match self.out.get(seat.index()).copied().flatten() {
            Some((reason, _)) => Err(PlayError::rule(
                id::T_6,
                format!("{seat} is out of the game ({})", reason_words(reason)),
            )),
            None if seat.index() >= self.players() => {
                Err(PlayError::rule(id::B_2, format!("the game has no {seat}")))
            }
            None => Ok(()),
        }
    }

    /// T-9: a seat still in may abort until every seat still in has had a
    /// decision of its own.
    fn check_abort(&self, actor: Actor) -> Result<Seat, PlayError> {
        let seat = self.seat_in_game(actor, id::T_9)?;
        if self.seats_in().all(|s| self.played.contains(s)) {
            return Err(PlayError::rule(
                id::T_9,
                "every seat still in the game has had a decision: the game can no longer be aborted",
            ));
        }
        Ok(seat)
    }

    /// T-5: the dealer times out the pending decision, at its deadline and
    /// not before.
    fn check_timeout(&self, at: u64, actor: Actor) -> Result<Seat, PlayError> {
        if actor != Actor::Dealer {
            return Err(PlayError::rule(id::T_5, "only the server times a decision out"));
        }
        let Some(clocks) = &self.clocks else {
            return Err(PlayError::rule(id::T_5, "this game has no time control"));
        };
        let Some(seat) = self.decision_owner() else {
            return Err(PlayError::rule(id::T_5, "no seat's clock runs now"));
        };
        let deadline = clocks.deadline(seat);
        if at < deadline {
            return Err(PlayError::rule(
                id::T_5,
                format!(
                    "the timeout of {seat} at {at} ms comes before its deadline, {deadline} ms ({} ms early)",
                    deadline - at
                ),
            ));
        }
        Ok(seat)
    }

    /// T-10: a resumption names when the server was last known alive: not
    /// before the last event, nor after the resumption itself.
    fn check_resume(&self, at: u64, actor: Actor, down_since_ms: u64) -> Result<(), PlayError> {
        if actor != Actor::Dealer {
            return Err(PlayError::rule(id::T_10, "only the server resumes the clocks"));
        }
        if self.clocks.is_none() {
            return Err(PlayError::rule(id::T_10, "this game has no time control"));
        }
        if !(self.time..=at).contains(&down_since_ms) {
            return Err(PlayError::rule(
                id::T_10,
                format!(
                    "the server cannot have gone down at {down_since_ms} ms: that is not between the last event ({} ms) and the resumption ({at} ms)",
                    self.time
                ),
            ));
        }
        Ok(())
    }

    // ---- The fold ----------------------------------------------------------

    /// T-5: under `forfeit` the seat goes out, under `auto` the server
    /// decides for it.
    pub(crate) fn timed_out(&mut self, seat: Seat, observer: &mut impl Observer) {
        match self.clocks.as_ref().map(|c| c.control.on_timeout) {
            Some(OnTimeout::Auto) => self.decide_for(seat, observer),
            _ => self.go_out(seat, OutReason::OutOfTime, observer),
        }
    }

    /// T-7: the server takes every decision of `seat` while the game waits
    /// for one: the first legal placement (smallest x, then y, then
    /// rotation), no follower, a pass for every Count decision.
    fn decide_for(&mut self, seat: Seat, observer: &mut impl Observer) {
        while self.pending.actor() == Some(Actor::Seat(seat)) {
            let Some(command) = self.default_command() else {
                debug_assert!(false, "no default for {:?}", self.pending);
                return;
            };
            let mut events = Vec::with_capacity(1);
            if let Err(error) = self.decide_into(Actor::Seat(seat), &command, &mut events) {
                debug_assert!(false, "the default {command:?} is illegal: {error}");
                return;
            }
            observer.effect(Effect::DecidedFor { seat, command });
            for event in &events {
                self.apply_at(event, self.time, observer);
            }
        }
    }

    /// The decision the server takes for a seat that timed out (T-7).
    pub fn default_command(&self) -> Option<Command> {
        match self.pending {
            Pending::PlaceTile { .. } => {
                let first = self.legal_placements().into_iter().min()?;
                Some(Command::PlaceTile {
                    pos: first.pos,
                    rotation: first.rotation,
                })
            }
            Pending::PlaceFollower { .. } => Some(Command::PlaceFollower(None)),
            Pending::Redeploy { .. } | Pending::DeployToCarcassonne { .. } | Pending::FinalRound { .. } => {
                Some(Command::Pass)
            }
            Pending::Draw { .. } | Pending::Finished => None,
        }
    }

    /// T-6: `seat` goes out. With one seat left the game is over; else any
    /// decision it owed is taken as T-6 says and the game goes on.
    pub(crate) fn go_out(&mut self, seat: Seat, reason: OutReason, observer: &mut impl Observer) {
        let order = self.out.iter().flatten().count() as u8 + 1;
        self.out[seat.index()] = Some((reason, order));
        let abandoned = match self.pending {
            Pending::PlaceTile { player, tile } if player == seat => Some(tile),
            _ => None,
        };
        observer.effect(Effect::Out { seat, abandoned });
        if self.seats_in().count() <= 1 {
            let ending = match reason {
                OutReason::OutOfTime => Ending::OutOfTime(seat),
                OutReason::Resigned => Ending::Resigned(seat),
            };
            return self.end(ending, observer);
        }
        match self.pending {
            Pending::Draw { player } if player == seat => {
                self.pending = Pending::Draw {
                    player: self.next_seat(seat),
                };
            }
            // The tile leaves the game; the next seat still in draws.
            Pending::PlaceTile { player, .. } if player == seat => {
                self.end_turn(seat, self.next_seat(seat), observer);
            }
            Pending::PlaceFollower { player } if player == seat => {
                self.after_follower_decision(seat, observer);
            }
            Pending::Redeploy { player, placer } if player == seat => {
                self.after_redeploy_pass(placer, observer);
            }
            Pending::DeployToCarcassonne { player } if player == seat => {
                self.end_turn(seat, self.next_seat(seat), observer);
            }
            Pending::FinalRound { player } if player == seat => self.leave_final_round(seat, observer),
            Pending::FinalRound { .. } => self.rounds.active.0 &= !(1 << seat.0),
            _ => {}
        }
    }

    // ---- Reading -------------------------------------------------------------

    /// The seats still in the game (T-6), in seat order.
    pub fn seats_in(&self) -> impl Iterator<Item = Seat> + '_ {
        (0..self.players() as u8)
            .map(Seat)
            .filter(|s| self.out[s.index()].is_none())
    }

    /// Why `seat` is out of the game, if it is (T-6).
    pub fn out_reason(&self, seat: Seat) -> Option<OutReason> {
        self.out
            .get(seat.index())
            .copied()
            .flatten()
            .map(|(reason, _)| reason)
    }

    pub(crate) fn is_out(&self, seat: Seat) -> bool {
        self.out_reason(seat).is_some()
    }

    /// How the game ended; `None` while it runs.
    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    /// Each seat's rank in a finished game, in seat order, 1 the best
    /// (T-11): the seats still in by score (equal scores share a rank),
    /// then the seats that went out, the last to go out first. `None`
    /// while the game runs and for an aborted game.
    pub fn ranking(&self) -> Option<Vec<u8>> {
        match self.ending? {
            Ending::Aborted(_) => return None,
            Ending::Normal | Ending::OutOfTime(_) | Ending::Resigned(_) => {}
        }
        let players = self.players();
        let still_in = self.seats_in().count() as u8;
        let went_out = self.out.iter().flatten().count() as u8;
        Some(
            (0..players)
                .map(|seat| match self.out[seat] {
                    None => {
                        let score = self.scores[seat];
                        1 + self.seats_in().filter(|s| self.scores[s.index()] > score).count() as u8
                    }
                    // The first out ranks last.
                    Some((_, order)) => still_in + went_out - order + 1,
                })
                .collect(),
        )
    }

    /// The seats ranked first in a finished game (T-11); none while it
    /// runs, and for an aborted game.
    pub fn winners(&self) -> Seats {
        let mut seats = Seats::default();
        for (seat, rank) in self.ranking().unwrap_or_default().into_iter().enumerate() {
            if rank == 1 {
                seats.insert(Seat(seat as u8));
            }
        }
        seats
    }

    /// The seat that owes the pending decision, when a seat does (not
    /// while a tile is drawn, nor once the game is over).
    pub fn decision_owner(&self) -> Option<Seat> {
        match self.pending.actor() {
            Some(Actor::Seat(seat)) => Some(seat),
            _ => None,
        }
    }

    /// The time of the last event, in ms since the Unix epoch.
    pub fn time(&self) -> u64 {
        self.time
    }

    /// The seat whose clock runs: the one that owes the pending decision,
    /// in a game with a time control (T-2).
    pub fn clock_running(&self) -> Option<Seat> {
        self.clocks.as_ref()?;
        self.decision_owner()
    }

    /// When the pending decision times out, in ms since the Unix epoch
    /// (T-4); `None` when no clock runs.
    pub fn deadline(&self) -> Option<u64> {
        let clocks = self.clocks.as_ref()?;
        Some(clocks.deadline(self.decision_owner()?))
    }

    /// `seat`'s main time left as of the last event (T-2); `None` without
    /// a main time.
    pub fn time_left(&self, seat: Seat) -> Option<u64> {
        self.clocks
            .as_ref()?
            .left_at(seat, self.decision_owner(), self.time)
    }

    /// Whether a seat still in may abort now (T-9).
    pub fn may_abort(&self) -> bool {
        !self.is_finished() && self.seats_in().any(|s| !self.played.contains(s))
    }
}

fn reason_words(reason: OutReason) -> &'static str {
    match reason {
        OutReason::OutOfTime => "out of time",
        OutReason::Resigned => "resigned",
    }
}

fn describe(actor: Actor, command: &Command) -> String {
    format!("{} by {actor}", command.name())
}
