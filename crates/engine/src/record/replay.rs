//! Playing a record through the rules, at the times of its timeline, and
//! checking what it claims.
//!
//! Draws are driven by `turns`: a tile is drawn whenever the game waits
//! for one, at the time of the event before (as the server draws, at
//! once). Before each decision the replayer applies the timeline's
//! interruptions that come before that decision's entry, but none while a
//! tile is still to be drawn: on the server the draw follows the decision
//! before it at once, so an interruption stored after that decision came
//! after the draw too. An interruption may take a decision the turn
//! describes (T-6, T-7, T-9); the turn must then say what became of it.

use super::{
    Deploy, FinalMove, Interruption, Outcome, Placed, Record, RecordError, Redeploy, TimelineEntry, Turn,
};
use crate::game::Game;
use crate::model::{Actor, Command, Effect, Ending, Event, OutReason, Pending, Seat, Setup};
use crate::rules::id;
use crate::tiles::TileKind;

/// A record played through the engine.
#[derive(Debug, Clone)]
pub struct Replay {
    pub game: Game,
    pub events: Vec<Event>,
    /// The time each of `events` was folded in at (ms since the Unix
    /// epoch): the record's timeline, or 0 without one.
    pub times: Vec<u64>,
    /// Every effect, with the index of the turn that caused it (the final
    /// round and final scoring: the number of turns).
    pub effects: Vec<(usize, Effect)>,
}

impl Replay {
    /// The events with their times, as [`Record::from_timed_events`] takes
    /// them.
    pub fn timed_events(&self) -> Vec<(Event, u64)> {
        self.events
            .iter()
            .cloned()
            .zip(self.times.iter().copied())
            .collect()
    }
}

/// A record's timeline, read in order.
struct Timeline<'r> {
    entries: &'r [TimelineEntry],
    next: usize,
}

/// The game being replayed, with what it produced so far.
struct Player<'r> {
    game: Game,
    events: Vec<Event>,
    times: Vec<u64>,
    /// The effects of the turn being played.
    effects: Vec<Effect>,
    /// Every decision the game waited for during the turn being played.
    waited: Vec<Pending>,
    tagged: Vec<(usize, Effect)>,
    timeline: Option<Timeline<'r>>,
}

impl<'r> Player<'r> {
    fn new(setup: Setup, created_at: u64, timeline: Option<&'r [TimelineEntry]>) -> Player<'r> {
        let mut effects = Vec::new();
        Player {
            game: Game::created_at(setup.clone(), created_at, &mut effects),
            events: vec![Event::Created(setup)],
            times: vec![created_at],
            effects,
            waited: Vec::new(),
            tagged: Vec::new(),
            timeline: timeline.map(|entries| Timeline { entries, next: 0 }),
        }
    }

    /// Executes `command` at `at`, keeping its events and effects.
    fn run(&mut self, at: u64, actor: Actor, command: Command) -> Result<(), crate::PlayError> {
        let events = self.game.execute_at(at, actor, &command, &mut self.effects)?;
        self.waited.push(self.game.pending());
        self.times.extend(std::iter::repeat_n(at, events.len()));
        self.events.extend(events);
        Ok(())
    }

    /// Draws `tile`, at the time of the event before.
    fn draw(&mut self, turn: usize, tile: TileKind) -> Result<(), RecordError> {
        self.run(self.game.time(), Actor::Dealer, Command::Draw(tile))
            .map_err(|e| RecordError::play(turn, e))
    }

    /// Plays a decision of `seat` at the time of its timeline entry (at the
    /// time of the event before, without a timeline).
    fn decide(&mut self, turn: usize, seat: Seat, command: Command) -> Result<(), RecordError> {
        let actor = Actor::Seat(seat);
        let Some(timeline) = &mut self.timeline else {
            return self
                .run(self.game.time(), actor, command)
                .map_err(|e| RecordError::play(turn, e));
        };
        let index = timeline.next;
        let what = format!("{} by {seat}", command.name());
        let at = match timeline.entries.get(index) {
            Some(TimelineEntry {
                at,
                interruption: None,
            }) => *at,
            Some(TimelineEntry {
                interruption: Some(other),
                ..
            }) => {
                return Err(RecordError::Turn {
                    turn,
                    message: format!("timeline[{index}]: {other} stands where {what} was expected"),
                });
            }
            None => {
                return Err(RecordError::Turn {
                    turn,
                    message: format!(
                        "timeline: {what} has no entry (the timeline ends after {index} entries)"
                    ),
                });
            }
        };
        timeline.next += 1;
        self.check_time(turn, index, &what, at)?;
        self.run(at, actor, command)
            .map_err(|e| RecordError::timed(turn, index, &what, at, e))
    }

    /// Applies the timeline's interruptions up to its next decision entry;
    /// none while a tile is to be drawn (see the module's comment).
    fn interrupt(&mut self, turn: usize) -> Result<(), RecordError> {
        self.interrupt_while(turn, |game| !matches!(game.pending(), Pending::Draw { .. }))
    }

    /// Applies every interruption up to the timeline's next decision entry.
    fn interrupt_all(&mut self, turn: usize) -> Result<(), RecordError> {
        self.interrupt_while(turn, |_| true)
    }

    fn interrupt_while(&mut self, turn: usize, go_on: impl Fn(&Game) -> bool) -> Result<(), RecordError> {
        loop {
            let Some(timeline) = &mut self.timeline else {
                return Ok(());
            };
            let index = timeline.next;
            let Some(&TimelineEntry {
                at,
                interruption: Some(interruption),
            }) = timeline.entries.get(index)
            else {
                return Ok(());
            };
            if !go_on(&self.game) {
                return Ok(());
            }
            timeline.next += 1;
            let what = interruption.to_string();
            self.check_time(turn, index, &what, at)?;
            let (actor, command) = match interruption {
                Interruption::Timeout(seat) => {
                    if let Some(running) = self.game.clock_running()
                        && running != seat
                    {
                        return Err(RecordError::rule(
                            turn,
                            id::T_5,
                            format!(
                                "timeline[{index}]: {what} at {at} ms, but the clock that runs is {running}'s"
                            ),
                        ));
                    }
                    (Actor::Dealer, Command::TimeOut)
                }
                Interruption::Resign(seat) => (Actor::Seat(seat), Command::Resign),
                Interruption::Abort(seat) => (Actor::Seat(seat), Command::Abort),
                Interruption::Resume { down_since_ms } => (Actor::Dealer, Command::Resume { down_since_ms }),
            };
            self.run(at, actor, command)
                .map_err(|e| RecordError::timed(turn, index, &what, at, e))?;
        }
    }

    /// T-2 for every record with a timeline, with a clock or without.
    fn check_time(&self, turn: usize, index: usize, what: &str, at: u64) -> Result<(), RecordError> {
        let last = self.game.time();
        if at < last {
            return Err(RecordError::rule(
                turn,
                id::T_2,
                format!(
                    "timeline[{index}]: {what} at {at} ms comes before the last event, at {last} ms: time never goes back"
                ),
            ));
        }
        Ok(())
    }

    /// Closes a turn: its effects are tagged with its index.
    fn close(&mut self, turn: usize) {
        self.tagged.extend(self.effects.drain(..).map(|e| (turn, e)));
        self.waited.clear();
    }

    /// Where the replay stands in the timeline.
    fn timeline_used(&self) -> Option<usize> {
        self.timeline.as_ref().map(|t| t.next)
    }

    /// Whether an interruption of this turn took decisions of `seat`: its
    /// timeout under `auto` (T-7), its going out (T-6), or the end of the
    /// game.
    fn was_taken(&self, seat: Seat) -> bool {
        self.game.ending().is_some_and(|e| e != Ending::Normal)
            || self.effects.iter().any(|e| {
                matches!(*e, Effect::DecidedFor { seat: s, .. } | Effect::Out { seat: s, .. } if s == seat)
            })
    }

    /// The error for a turn that says `claim` about a decision of `seat`
    /// that an interruption took first.
    fn taken(&self, turn: usize, seat: Seat, claim: &str) -> RecordError {
        let first = self.effects.iter().find_map(|e| match *e {
            Effect::DecidedFor { seat: s, .. } if s == seat => {
                Some((id::T_7, format!("the timeout of {seat} had decided it")))
            }
            Effect::Out { seat: s, .. } if s == seat => Some((
                id::T_6,
                format!(
                    "{seat} was out of the game ({})",
                    self.game.out_reason(seat).map_or("out", out_words)
                ),
            )),
            _ => None,
        });
        let (rule, why) = match (first, self.game.ending()) {
            (Some(taken), _) => taken,
            (None, Some(Ending::Aborted(s))) => (id::T_9, format!("{s} had aborted the game")),
            (None, Some(ending)) => (
                id::T_6,
                format!("the game had ended ({})", Outcome::of(&self.game, ending)),
            ),
            (None, None) => {
                return RecordError::Turn {
                    turn,
                    message: format!("{claim}, but the game waits for {}", self.game.pending().name()),
                };
            }
        };
        RecordError::rule(turn, rule, format!("{claim}, but by then {why}"))
    }
}

impl Outcome {
    /// How `game` ended, and its ranking.
    fn of(game: &Game, ending: Ending) -> Outcome {
        Outcome {
            ending,
            ranks: game.ranking(),
        }
    }
}

impl Record {
    /// Plays every turn through the rules, every decision and interruption
    /// at its time in the timeline. The first illegal turn is an error
    /// naming its index and rule.
    pub fn replay(&self) -> Result<Replay, RecordError> {
        let p = self.play(None)?;
        Ok(Replay {
            game: p.game,
            events: p.events,
            times: p.times,
            effects: p.tagged,
        })
    }

    /// Replays the record and checks its claims: `final_scores` and
    /// `result`.
    pub fn verify(&self) -> Result<Replay, RecordError> {
        let replay = self.replay()?;
        if let Some(claimed) = &self.final_scores {
            let actual = replay.game.scores().to_vec();
            if *claimed != actual {
                return Err(RecordError::WrongScores {
                    claimed: claimed.clone(),
                    actual,
                });
            }
        }
        if let Some(claimed) = &self.result {
            let actual = replay.game.ending().map(|e| Outcome::of(&replay.game, e));
            if actual.as_ref() != Some(claimed) {
                return Err(RecordError::WrongResult {
                    claimed: claimed.clone(),
                    actual,
                });
            }
        }
        Ok(replay)
    }

    /// The record of the game after its first `turns` turns, as a game in
    /// progress: no final round and no claims, and its timeline up to the
    /// draw of the next turn. The whole record when `turns` covers it.
    pub fn first_turns(&self, turns: usize) -> Result<Record, RecordError> {
        if turns >= self.turns.len() {
            return Ok(self.clone());
        }
        let used = self.play(Some(turns))?.timeline_used();
        Ok(Record {
            turns: self.turns[..turns].to_vec(),
            final_round: None,
            final_scores: None,
            result: None,
            timeline: self
                .timeline
                .as_ref()
                .zip(used)
                .map(|(entries, used)| entries[..used].to_vec()),
            ..self.clone()
        })
    }

    /// Plays the turns (up to the draw of turn `limit`, if given: then the
    /// final round and the rest of the timeline are left out).
    fn play(&self, limit: Option<usize>) -> Result<Player<'_>, RecordError> {
        let setup = self.setup();
        Game::check_setup(&setup)?;
        let created_at = self.created_at.unwrap_or(0);
        let mut p = Player::new(setup, created_at, self.timeline.as_deref());
        for (turn, entry) in self.turns.iter().enumerate() {
            if limit == Some(turn) {
                return Ok(p);
            }
            let player = match p.game.pending() {
                Pending::Draw { player } => player,
                Pending::Finished | Pending::FinalRound { .. } => return Err(game_over(&p.game, turn)),
                other => {
                    return Err(RecordError::Turn {
                        turn,
                        message: format!("unexpected {}", other.name()),
                    });
                }
            };
            p.draw(turn, entry.tile())?;
            let discarded = p.effects.iter().any(|e| matches!(e, Effect::Discarded(_)));
            match entry {
                Turn::Discarded { tile } if !discarded => {
                    let example = p
                        .game
                        .legal_placements()
                        .first()
                        .map(|p| format!(" (e.g. at {} rotation {})", p.pos, p.rotation));
                    return Err(RecordError::rule(
                        turn,
                        id::B_T2,
                        format!(
                            "{tile} can be placed{}, so it is not discarded",
                            example.unwrap_or_default()
                        ),
                    ));
                }
                Turn::Discarded { .. } => {}
                Turn::Placed(placed) if discarded => {
                    return Err(RecordError::rule(
                        turn,
                        id::B_T2,
                        format!(
                            "{} fits nowhere: it must be discarded, not placed at {}",
                            placed.tile, placed.pos
                        ),
                    ));
                }
                Turn::Abandoned { tile } if discarded => {
                    return Err(RecordError::rule(
                        turn,
                        id::B_T2,
                        format!("{tile} fits nowhere: it must be discarded, not abandoned"),
                    ));
                }
                Turn::Placed(placed) => play_turn(&mut p, turn, player, placed)?,
                Turn::Abandoned { tile } => abandon(&mut p, turn, player, *tile)?,
            }
            p.close(turn);
        }
        let end = self.turns.len();
        if let Pending::FinalRound { .. } = p.game.pending() {
            play_final_round(&mut p, end, self.final_round.as_deref())?;
        } else if self.final_round.is_some() {
            return Err(RecordError::rule(
                end,
                id::CD_3,
                "final_round written, but the final round has not begun",
            ));
        }
        p.interrupt_all(end)?;
        if let Some(timeline) = &p.timeline
            && timeline.next < timeline.entries.len()
        {
            return Err(RecordError::Turn {
                turn: end,
                message: format!(
                    "timeline[{}]: an entry for a decision that neither turns nor final_round has",
                    timeline.next
                ),
            });
        }
        p.close(end);
        Ok(p)
    }
}

fn out_words(reason: OutReason) -> &'static str {
    match reason {
        OutReason::OutOfTime => "out of time",
        OutReason::Resigned => "resigned",
    }
}

/// Why no turn may follow: the game is over, by its last tile (B-E1) or
/// early (T-6, T-9).
fn game_over(game: &Game, turn: usize) -> RecordError {
    match game.ending() {
        Some(Ending::Aborted(seat)) => {
            RecordError::rule(turn, id::T_9, format!("the game is over: {seat} aborted it"))
        }
        Some(Ending::OutOfTime(seat)) => RecordError::rule(
            turn,
            id::T_6,
            format!("the game is over: {seat} ran out of time and one seat was left"),
        ),
        Some(Ending::Resigned(seat)) => RecordError::rule(
            turn,
            id::T_6,
            format!("the game is over: {seat} resigned and one seat was left"),
        ),
        Some(Ending::Normal) | None => {
            RecordError::rule(turn, id::B_E1, "the game is over: every tile was drawn")
        }
    }
}

/// A placed tile, its follower, the Count's redeploy round and deploy.
fn play_turn(p: &mut Player, turn: usize, placer: Seat, placed: &Placed) -> Result<(), RecordError> {
    p.interrupt(turn)?;
    if p.game.pending()
        == (Pending::PlaceTile {
            player: placer,
            tile: placed.tile,
        })
    {
        p.decide(
            turn,
            placer,
            Command::PlaceTile {
                pos: placed.pos,
                rotation: placed.rotation,
            },
        )?;
    } else {
        check_placed_for(p, turn, placer, placed)?;
    }
    // The state the redeploy round starts from, to explain a refused entry.
    let before_round = (!placed.redeploy.is_empty()).then(|| p.game.clone());
    p.interrupt(turn)?;
    if p.game.pending() == (Pending::PlaceFollower { player: placer }) {
        p.decide(turn, placer, Command::PlaceFollower(placed.follower))?;
    } else if let Some(place) = placed.follower {
        return Err(p.taken(turn, placer, &format!("the record puts a follower at {place}")));
    }
    let mut entries = placed.redeploy.iter().peekable();
    while let Pending::Redeploy { .. } = p.game.pending() {
        p.interrupt(turn)?;
        let Pending::Redeploy { player, .. } = p.game.pending() else {
            break;
        };
        match entries.peek() {
            Some(entry) if entry.player == player => {
                p.decide(turn, player, Command::MoveFromCarcassonne(entry.to))?;
                entries.next();
            }
            _ => p.decide(turn, player, Command::Pass)?,
        }
    }
    if let Some(entry) = entries.next() {
        if p.was_taken(entry.player) {
            let claim = format!(
                "the record redeploys a follower of {} to {}",
                entry.player, entry.to
            );
            return Err(p.taken(turn, entry.player, &claim));
        }
        return Err(refused_redeploy(turn, before_round.as_ref(), entry));
    }
    p.interrupt(turn)?;
    let offered = p
        .waited
        .contains(&Pending::DeployToCarcassonne { player: placer });
    match (p.game.pending(), placed.carcassonne) {
        (Pending::DeployToCarcassonne { player }, Some(Deploy { quarter, count })) => {
            p.decide(turn, player, Command::DeployToCarcassonne { quarter, count })
        }
        (Pending::DeployToCarcassonne { player }, None) => p.decide(turn, player, Command::Pass),
        (_, Some(_)) if offered => Err(p.taken(turn, placer, "the record deploys to Carcassonne")),
        (_, Some(_)) => Err(refused_deploy(p, turn, placer, placed)),
        (_, None) => Ok(()),
    }
}

/// The placement of `placer` was taken by an interruption: only its
/// timeout under `auto` places a tile (T-7), and where it did must be
/// where the turn says. A symmetric tile's first legal placement may be
/// written at any rotation that lays it alike: it is the same placement.
fn check_placed_for(p: &Player, turn: usize, placer: Seat, placed: &Placed) -> Result<(), RecordError> {
    let decided = p.effects.iter().find_map(|e| match *e {
        Effect::DecidedFor {
            seat,
            command: Command::PlaceTile { pos, rotation },
        } if seat == placer => Some((pos, rotation)),
        _ => None,
    });
    match decided {
        Some((pos, rotation))
            if pos == placed.pos && placed.tile.def().lies_alike(rotation, placed.rotation) =>
        {
            Ok(())
        }
        Some((pos, rotation)) => Err(RecordError::rule(
            turn,
            id::T_7,
            format!(
                "the timeout of {placer} placed {} at {pos} rotation {rotation} (its first legal placement), not at {} rotation {} as written",
                placed.tile, placed.pos, placed.rotation
            ),
        )),
        None => Err(p.taken(
            turn,
            placer,
            &format!("the record places {} at {}", placed.tile, placed.pos),
        )),
    }
}

/// A tile written abandoned: its player went out before placing it (T-6),
/// or the game ended first (T-6, T-9).
fn abandon(p: &mut Player, turn: usize, player: Seat, tile: TileKind) -> Result<(), RecordError> {
    p.interrupt(turn)?;
    let mut went_out = false;
    let mut placed_for = None;
    for effect in &p.effects {
        match *effect {
            Effect::Out {
                seat,
                abandoned: Some(_),
            } if seat == player => went_out = true,
            Effect::DecidedFor {
                seat,
                command: Command::PlaceTile { pos, rotation },
            } if seat == player => placed_for = Some((pos, rotation)),
            _ => {}
        }
    }
    match placed_for {
        Some((pos, rotation)) => Err(RecordError::rule(
            turn,
            id::T_7,
            format!(
                "{tile} is written abandoned, but the timeout of {player} placed it at {pos} rotation {rotation}"
            ),
        )),
        None if went_out || p.game.is_finished() => Ok(()),
        None => Err(RecordError::rule(
            turn,
            id::T_6,
            format!(
                "{tile} is written abandoned, but {player} still had to place it: it did not go out, nor did the game end"
            ),
        )),
    }
}

/// Why a redeploy entry could not be played: the rule its move breaks, or
/// else its place in the round's seat order.
fn refused_redeploy(turn: usize, before_round: Option<&Game>, entry: &Redeploy) -> RecordError {
    if let Some(game) = before_round
        && let Err(error) = game.check_move(entry.player, entry.to, false)
    {
        return RecordError::play(turn, error);
    }
    RecordError::rule(
        turn,
        id::C_6,
        format!(
            "the redeploy of {} to {} is out of seat order (left of the placer first, the placer last, each player's moves together)",
            entry.player, entry.to
        ),
    )
}

/// Why the placer may not deploy to Carcassonne this turn (C-3, C-4).
fn refused_deploy(p: &Player, turn: usize, placer: Seat, placed: &Placed) -> RecordError {
    let scored: Vec<_> = p
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Scored(s) => Some(s.players),
            _ => None,
        })
        .collect();
    let placer_scored = scored.iter().any(|s| s.contains(placer));
    let redeployed = placed.redeploy.iter().any(|r| r.player == placer);
    let (rule, why) = if placer_scored && redeployed {
        (
            id::C_4,
            "the placer profited from a redeploy into this turn's scoring",
        )
    } else if placer_scored {
        (id::C_3, "the placer scored in a feature completed this turn")
    } else if scored.is_empty() {
        (id::C_3, "nobody scored in a feature completed this turn")
    } else {
        (id::C_3, "the placer has no follower in supply")
    };
    RecordError::rule(turn, rule, format!("no deploy to Carcassonne: {why}"))
}

/// The Count's final round (C-9): every move and pass in order. Without
/// `final_round`, every player passed at once. A seat out of the game, or
/// one whose timeout passed for it, has no entry.
fn play_final_round(p: &mut Player, end: usize, moves: Option<&[FinalMove]>) -> Result<(), RecordError> {
    let mut moves = moves.map(|m| m.iter());
    loop {
        p.interrupt(end)?;
        let Pending::FinalRound { player } = p.game.pending() else {
            break;
        };
        let command = match moves.as_mut().map(Iterator::next) {
            None => Command::Pass,
            Some(None) => {
                return Err(RecordError::rule(
                    end,
                    id::CD_3,
                    format!("final round: the pass of {player} is missing"),
                ));
            }
            Some(Some(m)) if m.player() != player => {
                if let Some(reason) = p.game.out_reason(m.player()) {
                    return Err(RecordError::rule(
                        end,
                        id::T_6,
                        format!(
                            "final round: {} acts, but it is out of the game ({})",
                            m.player(),
                            out_words(reason)
                        ),
                    ));
                }
                return Err(RecordError::rule(
                    end,
                    id::CD_3,
                    format!("final round: {} acts where it is {player}'s turn", m.player()),
                ));
            }
            Some(Some(FinalMove::Move { to, .. })) => Command::MoveFromCarcassonne(*to),
            Some(Some(FinalMove::Pass { .. })) => Command::Pass,
        };
        p.decide(end, player, command)?;
    }
    if let Some(extra) = moves.and_then(|mut m| m.next()) {
        if p.was_taken(extra.player()) {
            return Err(p.taken(
                end,
                extra.player(),
                &format!("final round: {} acts", extra.player()),
            ));
        }
        return Err(RecordError::rule(
            end,
            id::CD_3,
            format!("final round: {} acts after every player passed", extra.player()),
        ));
    }
    Ok(())
}
