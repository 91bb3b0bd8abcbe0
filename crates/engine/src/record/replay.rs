//! Playing a record through the rules, and writing a game's events back
//! as a record.

use super::{Deploy, FinalMove, Placed, Record, RecordError, Redeploy, Turn};
use crate::game::Game;
use crate::model::{Actor, Command, Effect, Event, Pending, Seat, Setup};
use crate::rules::id;

/// A record played through the engine.
#[derive(Debug, Clone)]
pub struct Replay {
    pub game: Game,
    pub events: Vec<Event>,
    /// Every effect, with the index of the turn that caused it (the final
    /// round and final scoring: the number of turns).
    pub effects: Vec<(usize, Effect)>,
}

/// The game being replayed, with what it produced so far.
struct Player {
    game: Game,
    events: Vec<Event>,
    effects: Vec<Effect>,
    tagged: Vec<(usize, Effect)>,
}

impl Player {
    fn new(setup: Setup) -> Player {
        let mut effects = Vec::new();
        Player {
            game: Game::created(setup.clone(), &mut effects),
            events: vec![Event::Created(setup)],
            effects,
            tagged: Vec::new(),
        }
    }

    fn act(&mut self, turn: usize, actor: Actor, command: Command) -> Result<(), RecordError> {
        let events = self
            .game
            .execute(actor, &command, &mut self.effects)
            .map_err(|e| RecordError::play(turn, e))?;
        self.events.extend(events);
        Ok(())
    }

    /// Closes a turn: its effects are tagged with its index.
    fn close(&mut self, turn: usize) {
        self.tagged.extend(self.effects.drain(..).map(|e| (turn, e)));
    }

    fn seat(&self) -> Option<Seat> {
        self.game.pending().player()
    }
}

impl Record {
    /// Plays every turn through the rules. The first illegal turn is an
    /// error naming its index and rule.
    pub fn replay(&self) -> Result<Replay, RecordError> {
        let setup = self.setup();
        Game::check_setup(&setup)?;
        let mut p = Player::new(setup);
        for (turn, entry) in self.turns.iter().enumerate() {
            let player = match p.game.pending() {
                Pending::Draw { player } => player,
                Pending::Finished | Pending::FinalRound { .. } => {
                    return Err(RecordError::rule(
                        turn,
                        id::B_E1,
                        "the game is over: every tile was drawn",
                    ));
                }
                other => {
                    return Err(RecordError::Turn {
                        turn,
                        message: format!("unexpected {}", other.name()),
                    });
                }
            };
            p.act(turn, Actor::Dealer, Command::Draw(entry.tile()))?;
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
                Turn::Placed(placed) => play_turn(&mut p, turn, player, placed)?,
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
        p.close(end);
        Ok(Replay {
            game: p.game,
            events: p.events,
            effects: p.tagged,
        })
    }

    /// Replays the record and checks its claimed `final_scores`.
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
        Ok(replay)
    }
}

/// A placed tile, its follower, the Count's redeploy round and deploy.
fn play_turn(p: &mut Player, turn: usize, placer: Seat, placed: &Placed) -> Result<(), RecordError> {
    let actor = Actor::Seat(placer);
    p.act(
        turn,
        actor,
        Command::PlaceTile {
            pos: placed.pos,
            rotation: placed.rotation,
        },
    )?;
    // The state the redeploy round starts from, to explain a refused entry.
    let before_round = (!placed.redeploy.is_empty()).then(|| p.game.clone());
    p.act(turn, actor, Command::PlaceFollower(placed.follower))?;
    let mut entries = placed.redeploy.iter().peekable();
    while let Pending::Redeploy { player, .. } = p.game.pending() {
        match entries.peek() {
            Some(entry) if entry.player == player => {
                p.act(turn, Actor::Seat(player), Command::MoveFromCarcassonne(entry.to))?;
                entries.next();
            }
            _ => p.act(turn, Actor::Seat(player), Command::Pass)?,
        }
    }
    if let Some(entry) = entries.next() {
        return Err(refused_redeploy(turn, before_round.as_ref(), entry));
    }
    match (p.game.pending(), placed.carcassonne) {
        (Pending::DeployToCarcassonne { player }, Some(Deploy { quarter, count })) => p.act(
            turn,
            Actor::Seat(player),
            Command::DeployToCarcassonne { quarter, count },
        ),
        (Pending::DeployToCarcassonne { player }, None) => p.act(turn, Actor::Seat(player), Command::Pass),
        (_, Some(_)) => Err(refused_deploy(p, turn, placer, placed)),
        (_, None) => Ok(()),
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
/// `final_round`, every player passed at once.
fn play_final_round(p: &mut Player, end: usize, moves: Option<&[FinalMove]>) -> Result<(), RecordError> {
    let mut moves = moves.map(|m| m.iter());
    while let Some(player) = p.seat() {
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
                return Err(RecordError::rule(
                    end,
                    id::CD_3,
                    format!("final round: {} acts where it is {player}'s turn", m.player()),
                ));
            }
            Some(Some(FinalMove::Move { to, .. })) => Command::MoveFromCarcassonne(*to),
            Some(Some(FinalMove::Pass { .. })) => Command::Pass,
        };
        p.act(end, Actor::Seat(player), command)?;
    }
    if let Some(extra) = moves.and_then(|mut m| m.next()) {
        return Err(RecordError::rule(
            end,
            id::CD_3,
            format!("final round: {} acts after every player passed", extra.player()),
        ));
    }
    Ok(())
}

impl Record {
    /// The record of a game, from its events. Draws that fit nowhere are
    /// written as discards. Claims the game's scores when it is finished.
    pub fn from_events(events: &[Event]) -> Option<Record> {
        let Some(Event::Created(setup)) = events.first() else {
            return None;
        };
        let mut game = Game::new(setup.clone());
        let mut turns = Vec::new();
        let mut final_round = Vec::new();
        let mut effects = Vec::new();
        for event in &events[1..] {
            let pending = game.pending();
            effects.clear();
            game.apply_observed(event, &mut effects);
            let last = match turns.last_mut() {
                Some(Turn::Placed(placed)) => Some(placed),
                _ => None,
            };
            match (event, pending, last) {
                (&Event::Drawn(tile), ..) => {
                    let discarded = effects.iter().any(|e| matches!(e, Effect::Discarded(_)));
                    turns.push(if discarded {
                        Turn::Discarded { tile }
                    } else {
                        Turn::Placed(Placed::new(tile, Default::default(), Default::default(), None))
                    });
                }
                (&Event::TilePlaced { pos, rotation }, _, Some(last)) => {
                    (last.pos, last.rotation) = (pos, rotation)
                }
                (&Event::FollowerPlaced(place), _, Some(last)) => last.follower = place,
                (&Event::FollowerMoved(to), Pending::Redeploy { player, .. }, Some(last)) => {
                    last.redeploy.push(Redeploy { player, to });
                }
                (&Event::DeployedToCarcassonne { quarter, count }, _, Some(last)) => {
                    last.carcassonne = Some(Deploy { quarter, count });
                }
                (&Event::FollowerMoved(to), Pending::FinalRound { player }, _) => {
                    final_round.push(FinalMove::Move { player, to });
                }
                (Event::Passed, Pending::FinalRound { player }, _) => {
                    final_round.push(FinalMove::Pass { player })
                }
                _ => {}
            }
        }
        let reached_final_round = !final_round.is_empty();
        Some(Record {
            rules: setup.rules,
            players: setup.players.clone(),
            tiles: setup.tiles.clone(),
            turns,
            final_round: reached_final_round.then_some(final_round),
            final_scores: game.is_finished().then(|| game.scores().to_vec()),
        })
    }
}
