//! Challenges: how registered players agree to play each other.
//!
//! No game seats a registered player who did not agree to it. A player
//! (the challenger) offers a game: its seats, each for a named registered
//! player, open to any registered player (a seek), or a built-in bot's,
//! and whether it is rated. The challenger's own seat is theirs by the
//! offer; every other player's seat waits for that player to accept it
//! (a named seat by its player, an open seat by whoever takes it first).
//! Once every seat is taken, the server creates the game. A named player
//! may decline, and the challenger may cancel, while the game has not
//! started; an offer not taken up by its expiry lapses.
//!
//! A challenge is one stream of [`ChallengeEvent`]s (schema
//! [`CHALLENGE_SCHEMA`]); [`Challenge`] is their fold, and
//! [`Challenge::decide`] checks a command at a time the caller gives (the
//! store's), changing nothing. Pure: the time is data.

use serde::{Deserialize, Serialize};

use crate::codec::json_codec;
use crate::name::PlayerName;

/// The fewest seats of a challenge's game.
pub const MIN_CHALLENGE_SEATS: usize = 2;
/// The most seats of a challenge's game.
pub const MAX_CHALLENGE_SEATS: usize = 5;

/// One seat of a challenge's game, as the challenger offers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatOffer {
    /// This registered player's seat: theirs only once they accept it
    /// (the challenger's own seat is accepted by the offer).
    Player(PlayerName),
    /// A seat any registered player may take (a seek).
    Open,
    /// A built-in bot's seat, at this level (kept as given: the server
    /// knows the levels).
    Bot(String),
}

/// What a challenge offers, fixed when it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeSpec {
    pub challenger: PlayerName,
    /// The game's seats, in seat order.
    pub seats: Vec<SeatOffer>,
    /// The game changes its players' ratings when it ends.
    pub rated: bool,
    /// The game's other settings (rule options, time control, spectator
    /// delay), opaque here: the server's own encoding.
    pub game: serde_json::Value,
    /// When the offer lapses, in Unix milliseconds.
    pub expires_at_ms: u64,
}

/// Why a challenge's spec cannot be offered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("a challenge has {MIN_CHALLENGE_SEATS} to {MAX_CHALLENGE_SEATS} seats, not {0}")]
    Seats(usize),
    #[error("the challenger holds one seat of the game, named as theirs")]
    ChallengerSeat,
    #[error("players/{0} holds at most one seat of a game")]
    Twice(PlayerName),
    #[error("a rated game seats registered players only, not bots")]
    RatedWithBots,
}

impl SpecError {
    /// The request field the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            SpecError::RatedWithBots => "rated",
            _ => "seats",
        }
    }
}

impl ChallengeSpec {
    /// Checks the seats: 2 to 5, the challenger in exactly one, no player
    /// twice, and no bot in a rated game.
    pub fn check(&self) -> Result<(), SpecError> {
        if !(MIN_CHALLENGE_SEATS..=MAX_CHALLENGE_SEATS).contains(&self.seats.len()) {
            return Err(SpecError::Seats(self.seats.len()));
        }
        let mut named = std::collections::BTreeSet::new();
        for seat in &self.seats {
            if let SeatOffer::Player(name) = seat
                && !named.insert(name)
            {
                return Err(SpecError::Twice(name.clone()));
            }
        }
        if !named.contains(&self.challenger) {
            return Err(SpecError::ChallengerSeat);
        }
        if self.rated && self.seats.iter().any(|s| matches!(s, SeatOffer::Bot(_))) {
            return Err(SpecError::RatedWithBots);
        }
        Ok(())
    }
}

/// What happens to a challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeEvent {
    /// The challenge is offered.
    Created { spec: ChallengeSpec },
    /// `player` took seat `seat`: their own named seat, or an open one.
    Accepted { player: PlayerName, seat: u8 },
    /// `player`, named or seated in it, turned the game down: it will not
    /// start.
    Declined { player: PlayerName },
    /// The challenger withdrew the offer.
    Cancelled,
}

json_codec!(ChallengeEvent);

/// What a player asks of a challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChallengeCommand {
    /// Take a seat: one's own named seat, or else seat `seat` if it is
    /// open (`None`: the first open seat).
    Accept { seat: Option<u8> },
    /// Turn the game down (a player named or seated in it, not the
    /// challenger).
    Decline,
    /// Withdraw the offer (the challenger).
    Cancel,
}

/// Where a challenge stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChallengeStatus {
    /// Waiting for seats to be taken.
    Open,
    /// Every seat is taken: the game is (being) created.
    Accepted,
    /// A player turned it down.
    Declined(PlayerName),
    /// The challenger withdrew it.
    Cancelled,
    /// Not taken up before it lapsed.
    Expired,
}

/// Why a command is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeError {
    #[error("the challenge is {0} already")]
    Closed(&'static str),
    #[error("the challenge lapsed: it was not taken up in time")]
    Expired,
    #[error("players/{0} has no seat in this challenge and it has no open seat")]
    NotInvited(PlayerName),
    #[error("players/{0} holds a seat of this challenge already")]
    AlreadySeated(PlayerName),
    #[error("seat {0} is not an open seat of this challenge")]
    NotAnOpenSeat(u8),
    #[error("only the challenger may cancel a challenge")]
    NotChallenger,
    #[error("the challenger cannot decline their own challenge: cancel it")]
    ChallengerDeclines,
}

/// A challenge: its spec and who took which seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    id: String,
    spec: ChallengeSpec,
    /// Per seat, the player who holds it (bots' seats stay `None`).
    taken: Vec<Option<PlayerName>>,
    declined: Option<PlayerName>,
    cancelled: bool,
}

impl Challenge {
    /// The challenge `event` creates, if it is a creation.
    pub fn from_event(id: &str, event: &ChallengeEvent) -> Option<Challenge> {
        let ChallengeEvent::Created { spec } = event else {
            return None;
        };
        let taken = spec
            .seats
            .iter()
            .map(|seat| match seat {
                SeatOffer::Player(name) if *name == spec.challenger => Some(name.clone()),
                _ => None,
            })
            .collect();
        Some(Challenge {
            id: id.to_owned(),
            spec: spec.clone(),
            taken,
            declined: None,
            cancelled: false,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn spec(&self) -> &ChallengeSpec {
        &self.spec
    }

    /// Per seat, the player who holds it: the challenger's seat and every
    /// seat accepted so far.
    pub fn taken(&self) -> &[Option<PlayerName>] {
        &self.taken
    }

    /// Folds an event in. An event `decide` would never produce changes
    /// nothing.
    pub fn apply(&mut self, event: &ChallengeEvent) {
        match event {
            ChallengeEvent::Created { .. } => {}
            ChallengeEvent::Accepted { player, seat } => {
                if let Some(slot) = self.taken.get_mut(usize::from(*seat))
                    && slot.is_none()
                {
                    *slot = Some(player.clone());
                }
            }
            ChallengeEvent::Declined { player } => {
                if self.declined.is_none() {
                    self.declined = Some(player.clone());
                }
            }
            ChallengeEvent::Cancelled => self.cancelled = true,
        }
    }

    /// Whether every player's seat is taken (bots' seats need no one).
    pub fn is_full(&self) -> bool {
        self.spec
            .seats
            .iter()
            .zip(&self.taken)
            .all(|(offer, taken)| matches!(offer, SeatOffer::Bot(_)) || taken.is_some())
    }

    /// Where the challenge stands at `now_ms`. A challenge whose seats are
    /// all taken stays accepted whatever the time: its game starts.
    pub fn status(&self, now_ms: u64) -> ChallengeStatus {
        if let Some(player) = &self.declined {
            return ChallengeStatus::Declined(player.clone());
        }
        if self.cancelled {
            return ChallengeStatus::Cancelled;
        }
        if self.is_full() {
            return ChallengeStatus::Accepted;
        }
        if now_ms >= self.spec.expires_at_ms {
            return ChallengeStatus::Expired;
        }
        ChallengeStatus::Open
    }

    /// Whether `player` is named in a seat or holds one.
    pub fn involves(&self, player: &PlayerName) -> bool {
        self.seat_of(player).is_some()
    }

    /// The seat named for `player` or held by them.
    pub fn seat_of(&self, player: &PlayerName) -> Option<u8> {
        let named = self
            .spec
            .seats
            .iter()
            .position(|seat| matches!(seat, SeatOffer::Player(name) if name == player));
        let held = self.taken.iter().position(|p| p.as_ref() == Some(player));
        named.or(held).and_then(|seat| u8::try_from(seat).ok())
    }

    /// The open seats nobody has taken yet.
    pub fn open_seats(&self) -> impl Iterator<Item = u8> + '_ {
        self.spec
            .seats
            .iter()
            .zip(&self.taken)
            .enumerate()
            .filter(|(_, (offer, taken))| matches!(offer, SeatOffer::Open) && taken.is_none())
            .filter_map(|(seat, _)| u8::try_from(seat).ok())
    }

    /// The events `command` of `caller` makes at `now_ms`, or why it is
    /// refused; changes nothing.
    pub fn decide(
        &self,
        caller: &PlayerName,
        command: &ChallengeCommand,
        now_ms: u64,
    ) -> Result<Vec<ChallengeEvent>, ChallengeError> {
        match self.status(now_ms) {
            ChallengeStatus::Open => {}
            ChallengeStatus::Expired => return Err(ChallengeError::Expired),
            ChallengeStatus::Accepted => return Err(ChallengeError::Closed("accepted")),
            ChallengeStatus::Declined(_) => return Err(ChallengeError::Closed("declined")),
            ChallengeStatus::Cancelled => return Err(ChallengeError::Closed("cancelled")),
        }
        match command {
            ChallengeCommand::Accept { seat } => self.accept(caller, *seat),
            ChallengeCommand::Decline if *caller == self.spec.challenger => {
                Err(ChallengeError::ChallengerDeclines)
            }
            ChallengeCommand::Decline if self.involves(caller) => Ok(vec![ChallengeEvent::Declined {
                player: caller.clone(),
            }]),
            ChallengeCommand::Decline => Err(ChallengeError::NotInvited(caller.clone())),
            ChallengeCommand::Cancel if *caller == self.spec.challenger => {
                Ok(vec![ChallengeEvent::Cancelled])
            }
            ChallengeCommand::Cancel => Err(ChallengeError::NotChallenger),
        }
    }

    fn accept(&self, caller: &PlayerName, seat: Option<u8>) -> Result<Vec<ChallengeEvent>, ChallengeError> {
        let accepted = |seat: u8| {
            Ok(vec![ChallengeEvent::Accepted {
                player: caller.clone(),
                seat,
            }])
        };
        if let Some(own) = self.seat_of(caller) {
            // Accepting one's own seat again, or holding one already.
            if self.taken.get(usize::from(own)).is_some_and(Option::is_some) {
                return Err(ChallengeError::AlreadySeated(caller.clone()));
            }
            return match seat {
                Some(asked) if asked != own => Err(ChallengeError::AlreadySeated(caller.clone())),
                _ => accepted(own),
            };
        }
        match seat {
            Some(asked) if self.open_seats().any(|s| s == asked) => accepted(asked),
            Some(asked) => Err(ChallengeError::NotAnOpenSeat(asked)),
            None => match self.open_seats().next() {
                Some(open) => accepted(open),
                None => Err(ChallengeError::NotInvited(caller.clone())),
            },
        }
    }
}
