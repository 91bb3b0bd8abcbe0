//! A game's events, with the times they were stored, written back as a
//! record.

use super::{Deploy, FinalMove, Interruption, Outcome, Placed, Record, Redeploy, TimelineEntry, Turn};
use crate::game::Game;
use crate::model::{Command, Effect, Event, Pending};

impl Record {
    /// The record of a game from its events alone, as
    /// [`Record::from_timed_events`] with every time 0: right for a game
    /// folded without times (with [`Game::apply`]). A game with a time
    /// control needs its times: its timeouts at 0 would come before their
    /// deadlines, and its record would not verify.
    pub fn from_events(events: &[Event]) -> Option<Record> {
        Record::written(events.iter().map(|event| (event, 0)))
    }

    /// The record of a game from its events and the time each was stored
    /// at (ms since the Unix epoch); the first event is the creation. Draws
    /// that fit nowhere are written as discards, a tile whose player went
    /// out (or whose game ended) before placing it as abandoned. A game with
    /// a time control, or one that had an interruption (a timeout, a
    /// resignation, an abort, a resumption), gets its `time_control`,
    /// `created_at` and `timeline`, and once it is finished its `result`;
    /// any other game is written exactly as without times. A finished game
    /// claims its scores.
    ///
    /// The events of a running game should end with a complete turn: a
    /// tile drawn and not yet placed is left out, with whatever the timeline
    /// holds after its draw.
    pub fn from_timed_events(events: &[(Event, u64)]) -> Option<Record> {
        Record::written(events.iter().map(|(event, at)| (event, *at)))
    }

    fn written<'e>(mut events: impl Iterator<Item = (&'e Event, u64)>) -> Option<Record> {
        let (Event::Created(setup), created_at) = events.next()? else {
            return None;
        };
        let mut game = Game::created_at(setup.clone(), created_at, &mut ());
        let mut turns: Vec<Turn> = Vec::new();
        let mut final_round = Vec::new();
        let mut timeline = Vec::new();
        // The last turn's tile while it is drawn and not yet placed, and the
        // length of the timeline at its draw.
        let mut unplaced: Option<usize> = None;
        let mut effects = Vec::new();
        for (event, at) in events {
            let pending = game.pending();
            effects.clear();
            game.apply_at(event, at, &mut effects);
            if let Some(entry) = timeline_entry(event, at) {
                timeline.push(entry);
            }
            for effect in &effects {
                match *effect {
                    // T-7: the timeout placed the tile.
                    Effect::DecidedFor {
                        command: Command::PlaceTile { pos, rotation },
                        ..
                    } => {
                        if let Some(last) = turns.last_mut() {
                            *last = Turn::Placed(Placed::new(last.tile(), pos, rotation, None));
                        }
                        unplaced = None;
                    }
                    // T-6: it left the game unplaced; the turn stays abandoned.
                    Effect::Out {
                        abandoned: Some(_), ..
                    } => unplaced = None,
                    _ => {}
                }
            }
            let last = match turns.last_mut() {
                Some(Turn::Placed(placed)) => Some(placed),
                _ => None,
            };
            match (event, pending, last) {
                (&Event::Drawn(tile), ..) => {
                    let discarded = effects.iter().any(|e| matches!(e, Effect::Discarded(_)));
                    if discarded {
                        turns.push(Turn::Discarded { tile });
                    } else {
                        // Abandoned until it is placed.
                        turns.push(Turn::Abandoned { tile });
                        unplaced = Some(timeline.len());
                    }
                }
                (&Event::TilePlaced { pos, rotation }, Pending::PlaceTile { tile, .. }, _) => {
                    if let Some(last) = turns.last_mut() {
                        *last = Turn::Placed(Placed::new(tile, pos, rotation, None));
                    }
                    unplaced = None;
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
        // A running game's tile not yet placed: not a turn yet.
        if let Some(at_draw) = unplaced
            && !game.is_finished()
        {
            turns.pop();
            timeline.truncate(at_draw);
        }
        let timed = setup.time_control.is_some() || timeline.iter().any(|e| e.interruption.is_some());
        let result = game.ending().filter(|_| timed).map(|ending| Outcome {
            ending,
            ranks: game.ranking(),
        });
        Some(Record {
            rules: setup.rules,
            players: setup.players.clone(),
            tiles: setup.tiles.clone(),
            turns,
            final_round: (!final_round.is_empty()).then_some(final_round),
            final_scores: game.is_finished().then(|| game.scores().to_vec()),
            time_control: setup.time_control,
            created_at: timed.then_some(created_at),
            timeline: timed.then_some(timeline),
            result,
        })
    }
}

/// The timeline's entry for an event: every one but the draws.
fn timeline_entry(event: &Event, at: u64) -> Option<TimelineEntry> {
    let interruption = match *event {
        Event::Created(_) | Event::Drawn(_) => return None,
        Event::TilePlaced { .. }
        | Event::FollowerPlaced(_)
        | Event::FollowerMoved(_)
        | Event::Passed
        | Event::DeployedToCarcassonne { .. } => None,
        Event::TimedOut(seat) => Some(Interruption::Timeout(seat)),
        Event::Resigned(seat) => Some(Interruption::Resign(seat)),
        Event::Aborted(seat) => Some(Interruption::Abort(seat)),
        Event::Resumed { down_since_ms } => Some(Interruption::Resume { down_since_ms }),
    };
    Some(TimelineEntry { at, interruption })
}
