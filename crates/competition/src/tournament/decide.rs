//! Decisions: a command checked against the state, answered with the
//! events it produces; the state does not change.

use super::events::{GameResult, Table, TournamentCommand, TournamentError, TournamentEvent};
use super::{Tournament, game_id};

impl Tournament {
    /// The events `command` produces, or why it is refused. `Advance`
    /// produces nothing while a game of the current round has no result;
    /// otherwise the next round, or `Finished` when the format has no
    /// more rounds or fewer than two players are active. A round without
    /// a game (only byes, or every table emptied by withdrawals) is
    /// complete at once, so the same decision pairs the one after it too.
    pub fn decide(&self, command: &TournamentCommand) -> Result<Vec<TournamentEvent>, TournamentError> {
        if self.finished {
            return Err(TournamentError::Finished);
        }
        match command {
            TournamentCommand::RecordResult { game, result } => {
                self.check_result(game, result)?;
                Ok(vec![TournamentEvent::GameEnded {
                    game: game.clone(),
                    result: result.clone(),
                }])
            }
            TournamentCommand::Withdraw { player } => {
                if !self.spec.participants.contains(player) {
                    return Err(TournamentError::NotAParticipant(player.clone()));
                }
                if self.withdrawn.contains(player) {
                    return Err(TournamentError::AlreadyWithdrawn(player.clone()));
                }
                Ok(vec![TournamentEvent::Withdrawn {
                    player: player.clone(),
                }])
            }
            TournamentCommand::Advance => Ok(if self.round_complete() {
                self.advance()
            } else {
                Vec::new()
            }),
        }
    }

    /// Whether every game of the current round has a result (true before
    /// the first round).
    pub fn round_complete(&self) -> bool {
        self.rounds.last().is_none_or(|round| {
            round
                .tables
                .iter()
                .flat_map(|t| &t.games)
                .all(|g| self.results.contains_key(g))
        })
    }

    fn check_result(&self, game: &str, result: &GameResult) -> Result<(), TournamentError> {
        let seats = self
            .seats(game)
            .ok_or_else(|| TournamentError::UnknownGame(game.to_string()))?;
        if self.results.contains_key(game) {
            return Err(TournamentError::AlreadyRecorded(game.to_string()));
        }
        if let GameResult::Ranked { ranks, scores } = result {
            if let Some(got) = [ranks.len(), scores.len()].into_iter().find(|&len| len != seats) {
                return Err(TournamentError::WrongSeatCount {
                    game: game.to_string(),
                    expected: seats,
                    got,
                });
            }
            if ranks.iter().any(|&rank| rank == 0 || usize::from(rank) > seats) {
                return Err(TournamentError::InvalidRanks {
                    game: game.to_string(),
                });
            }
        }
        Ok(())
    }

    fn advance(&self) -> Vec<TournamentEvent> {
        let mut events = Vec::new();
        let mut ahead: Option<Tournament> = None;
        loop {
            let state = ahead.as_ref().unwrap_or(self);
            let event = state.next_round();
            let gameless = matches!(&event, TournamentEvent::RoundPaired { tables, .. } if tables.is_empty());
            events.push(event);
            if !gameless {
                return events;
            }
            if let Some(event) = events.last() {
                ahead.get_or_insert_with(|| self.clone()).apply(event);
            }
        }
    }

    /// The next round's pairing as an event, or `Finished`.
    fn next_round(&self) -> TournamentEvent {
        let Some(pairing) = self.pairing_for_next_round() else {
            return TournamentEvent::Finished;
        };
        let round = self.round() + 1;
        let tables = pairing
            .tables
            .into_iter()
            .enumerate()
            .map(|(t, players)| Table {
                players,
                games: (0..self.spec.games_per_match())
                    .map(|g| game_id(&self.id, round, t as u32 + 1, g))
                    .collect(),
            })
            .collect();
        TournamentEvent::RoundPaired {
            round,
            tables,
            byes: pairing.byes,
        }
    }
}
