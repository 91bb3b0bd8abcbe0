//! What a game's stream holds, and how it folds back into a game.
//!
//! A game's stream starts with the server's own event (schema
//! [`OPENED_SCHEMA`]: the seats' token hashes and the spectator delay),
//! then the engine's events (schema [`carcassonne_engine::codec::SCHEMA`]):
//! the creation, every draw and every decision.

use carcassonne_engine::{Effect, Event, Game, Seat, codec};
use carcassonne_store::{Actor, NewEvent, RequestId, StoredEvent};

use super::auth::{TokenHash, seed_commitment};
use crate::api::view::GameInfo;

/// The schema of the server's first event of a game.
pub const OPENED_SCHEMA: u16 = 100;

/// The server's first event of a game.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Opened {
    /// Per seat, the hash of the secret that acts for it: a guest seat's
    /// token, or the API key of the registered player the seat belongs to.
    pub token_hashes: Vec<TokenHash>,
    pub spectator_delay: u32,
    /// Per seat, the registered player it belongs to (`None`: a guest).
    /// Empty when no seat belongs to one.
    pub accounts: Vec<Option<String>>,
    /// The game updates its players' ratings when it ends.
    pub rated: bool,
    /// The tournament the game belongs to.
    pub tournament: Option<String>,
    /// The game draws the same tiles as other games of its tournament
    /// round (duplicate bags): nobody but its seats may see it until the
    /// tournament says the round is over ([`crate::games::Games::sealed`]).
    pub sealed: bool,
    /// Per seat, the level of the built-in bot the server plays it with
    /// (`None`: a client's seat), by its name ([`carcassonne_bots::Level`]).
    /// Empty when no seat is a bot's.
    pub bots: Vec<Option<String>>,
    /// The least time from a bot's decision becoming pending to its storing
    /// (`CreateGameRequest.bot_pace_ms`; 0: none).
    pub bot_pace_ms: u32,
}

impl Opened {
    /// Format 1: `1`, spectator delay `u32` LE, seats `u8`, 32 bytes each.
    /// Format 2 (a game with registered players, rated, or of a
    /// tournament) goes on after the hashes with, per seat, the length of
    /// its player's name (`u8`, 0 for a guest) and the name; then flags
    /// (`u8`, bit 0: rated, bit 1: sealed, bit 2: bots, bit 3: a bots'
    /// pace); then the tournament id's length (`u8`) and the
    /// id; then, with bots, per seat the length of its bot's level name
    /// (`u8`, 0 for a client's seat) and the name; then, with a pace, the
    /// pace in milliseconds (`u32` LE). A game with none of
    /// those is written in format 1.
    pub fn encode(&self) -> Vec<u8> {
        let bots = self.bots.iter().any(Option::is_some);
        let extended =
            self.accounts.iter().any(Option::is_some) || self.rated || self.tournament.is_some() || bots;
        let mut out = vec![if extended { 2 } else { 1 }];
        out.extend(self.spectator_delay.to_le_bytes());
        out.push(self.token_hashes.len() as u8);
        for hash in &self.token_hashes {
            out.extend(hash);
        }
        if extended {
            for seat in 0..self.token_hashes.len() {
                let name = self.account(seat).unwrap_or_default();
                out.push(name.len() as u8);
                out.extend(name.as_bytes());
            }
            let paced = bots && self.bot_pace_ms > 0;
            out.push(
                u8::from(self.rated)
                    | u8::from(self.sealed) << 1
                    | u8::from(bots) << 2
                    | u8::from(paced) << 3,
            );
            let tournament = self.tournament.as_deref().unwrap_or_default();
            out.push(tournament.len() as u8);
            out.extend(tournament.as_bytes());
            if bots {
                for seat in 0..self.token_hashes.len() {
                    let level = self.bot(seat).unwrap_or_default();
                    out.push(level.len() as u8);
                    out.extend(level.as_bytes());
                }
            }
            if paced {
                out.extend(self.bot_pace_ms.to_le_bytes());
            }
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Opened, String> {
        let (&format, rest) = bytes.split_first().ok_or("empty")?;
        if format != 1 && format != 2 {
            return Err(format!("unknown format {format}"));
        }
        let mut reader = Reader(rest);
        let delay = u32::from_le_bytes(
            reader
                .take(4, "delay")?
                .try_into()
                .map_err(|_| "truncated delay")?,
        );
        let seats = reader.byte("seats")?;
        let token_hashes = (0..seats)
            .map(|_| {
                let mut hash = [0; 32];
                hash.copy_from_slice(reader.take(32, "token hashes")?);
                Ok(hash)
            })
            .collect::<Result<Vec<_>, String>>()?;
        let mut opened = Opened {
            token_hashes,
            spectator_delay: delay,
            ..Opened::default()
        };
        if format == 2 {
            opened.accounts = (0..seats)
                .map(|_| {
                    reader
                        .text("a seat's player")
                        .map(|name| (!name.is_empty()).then_some(name))
                })
                .collect::<Result<_, _>>()?;
            // As written: no account is no list (a game of guests and bots).
            if opened.accounts.iter().all(Option::is_none) {
                opened.accounts.clear();
            }
            let flags = reader.byte("flags")?;
            if flags > 0b1111 {
                return Err(format!("unknown flags {flags:#x}"));
            }
            opened.rated = flags & 1 != 0;
            opened.sealed = flags & 0b10 != 0;
            let tournament = reader.text("the tournament")?;
            opened.tournament = (!tournament.is_empty()).then_some(tournament);
            if flags & 0b100 != 0 {
                opened.bots = (0..seats)
                    .map(|_| {
                        reader
                            .text("a seat's bot")
                            .map(|level| (!level.is_empty()).then_some(level))
                    })
                    .collect::<Result<_, _>>()?;
            }
            if flags & 0b1000 != 0 {
                let pace = reader.take(4, "the bots' pace")?;
                opened.bot_pace_ms = u32::from_le_bytes(pace.try_into().map_err(|_| "truncated pace")?);
            }
        }
        if !reader.0.is_empty() {
            return Err(format!("{} bytes after the end", reader.0.len()));
        }
        Ok(opened)
    }

    /// The registered player seat `seat` belongs to.
    pub fn account(&self, seat: usize) -> Option<&str> {
        self.accounts.get(seat).and_then(|a| a.as_deref())
    }

    /// The level of the bot that plays seat `seat`, by name.
    pub fn bot(&self, seat: usize) -> Option<&str> {
        self.bots.get(seat).and_then(|b| b.as_deref())
    }

    /// The seat that belongs to registered player `name`.
    pub fn seat_of_account(&self, name: &str) -> Option<u8> {
        (0..self.token_hashes.len())
            .find(|&seat| self.account(seat) == Some(name))
            .map(|seat| seat as u8)
    }

    pub fn to_new_event(&self) -> NewEvent {
        NewEvent {
            actor: Actor::Server,
            schema: OPENED_SCHEMA,
            payload: self.encode(),
        }
    }
}

/// Reads the opening's fields one by one.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err(format!("truncated {what}"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn byte(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    fn text(&mut self, what: &str) -> Result<String, String> {
        let len = self.byte(what)?;
        let bytes = self.take(usize::from(len), what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("{what}: not UTF-8"))
    }
}

/// An engine event, ready to append.
pub fn new_event(actor: Option<Seat>, event: &Event) -> NewEvent {
    NewEvent {
        actor: actor.map_or(Actor::Server, |s| Actor::Seat(s.0)),
        schema: codec::SCHEMA,
        payload: codec::encode(event),
    }
}

/// A game folded from its stream.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub info: GameInfo,
    pub opened: Opened,
    pub game: Game,
    /// The sequence number of the last event.
    pub version: u64,
    /// The request id the creation was stored with (the id's hash: see
    /// `auth::stored_creation_id`).
    pub creation_request: RequestId,
}

/// Decodes one stored engine event.
pub fn engine_event(stored: &StoredEvent) -> Result<Event, String> {
    codec::decode(stored.schema, &stored.payload).map_err(|e| format!("event {}: {e}", stored.seq))
}

impl Loaded {
    /// A game from its first two events: the server's opening and the
    /// engine's creation.
    pub fn start(first: &StoredEvent, second: &StoredEvent) -> Result<Loaded, String> {
        if first.seq != 1 || first.schema != OPENED_SCHEMA {
            return Err(format!("event {} is not the server's opening", first.seq));
        }
        let opened = Opened::decode(&first.payload).map_err(|e| format!("event 1: {e}"))?;
        let Event::Created(setup) = engine_event(second)? else {
            return Err("event 2 is not the creation".to_owned());
        };
        if second.seq != 2 {
            return Err(format!("the creation is event {}, not 2", second.seq));
        }
        Game::check_setup(&setup).map_err(|e| format!("event 2: {e}"))?;
        if setup.players.len() != opened.token_hashes.len() {
            return Err("seats and token hashes disagree".to_owned());
        }
        if !opened.accounts.is_empty() && opened.accounts.len() != opened.token_hashes.len() {
            return Err("seats and their players disagree".to_owned());
        }
        if !opened.bots.is_empty() && opened.bots.len() != opened.token_hashes.len() {
            return Err("seats and their bots disagree".to_owned());
        }
        let info = GameInfo {
            id: first.game.as_str().to_owned(),
            create_time_ms: first.time_millis as i64,
            spectator_delay: opened.spectator_delay,
            seed_sha256: setup.seed.map(|s| seed_commitment(&s.0)).unwrap_or_default(),
            accounts: opened.accounts.clone(),
            bots: opened.bots.clone(),
            rated: opened.rated,
            tournament: opened.tournament.clone(),
        };
        Ok(Loaded {
            info,
            opened,
            // The clocks start with the creation's stored time (T-2).
            game: Game::new_at(setup, second.time_millis),
            version: 2,
            creation_request: first.request_id.clone(),
        })
    }

    /// Whether `request_id` is the one this game was created with.
    pub fn created_by(&self, request_id: &RequestId) -> bool {
        !request_id.as_str().is_empty()
            && super::auth::stored_creation_id(request_id.as_str()) == self.creation_request.as_str()
    }

    /// Folds the next stored event in at its stored time, with its
    /// effects. Only events that `decide` accepted were ever stored; they
    /// are checked again anyway, at their stored times (so a timeout before
    /// its deadline, or an action after it, is refused by T-4 and T-5), and
    /// every draw against the seed's order, so that a damaged or forged
    /// stream is an error, not a wrong game.
    pub fn advance(&mut self, stored: &StoredEvent) -> Result<(Event, Vec<Effect>), String> {
        if stored.seq != self.version + 1 {
            return Err(format!("event {} follows event {}", stored.seq, self.version));
        }
        let event = engine_event(stored)?;
        let actor = match stored.actor {
            Actor::Seat(s) => carcassonne_engine::Actor::Seat(Seat(s)),
            Actor::Server => carcassonne_engine::Actor::Dealer,
        };
        let command = command_of(&event).ok_or_else(|| format!("event {}: not a decision", stored.seq))?;
        let decided = self
            .game
            .decide_at(stored.time_millis, actor, &command)
            .map_err(|e| format!("event {}: {e}", stored.seq))?;
        if decided.first() != Some(&event) {
            return Err(format!(
                "event {}: the seat that acted is not the one it names",
                stored.seq
            ));
        }
        if matches!(event, Event::Drawn(_)) && self.game.automatic().as_ref() != Some(&event) {
            return Err(format!(
                "event {}: the draw does not follow from the seed",
                stored.seq
            ));
        }
        let mut effects = Vec::new();
        self.game.apply_at(&event, stored.time_millis, &mut effects);
        self.version = stored.seq;
        Ok((event, effects))
    }

    /// Folds a stream, up to `until` (a version) if given; `each` sees every
    /// engine event with its effects.
    pub fn fold(
        stored: &[StoredEvent],
        until: Option<u64>,
        mut each: impl FnMut(&StoredEvent, &Event, &[Effect]),
    ) -> Result<Loaded, String> {
        let [first, second, rest @ ..] = stored else {
            return Err("fewer than two events".to_owned());
        };
        let mut loaded = Loaded::start(first, second)?;
        if let Event::Created(setup) = engine_event(second)? {
            each(second, &Event::Created(setup), &[]);
        }
        for stored in rest {
            if until.is_some_and(|u| stored.seq > u) {
                break;
            }
            let (event, effects) = loaded.advance(stored)?;
            each(stored, &event, &effects);
        }
        Ok(loaded)
    }
}

/// The command that produced an event, to re-check stored events.
pub fn command_of(event: &Event) -> Option<carcassonne_engine::Command> {
    use carcassonne_engine::Command;
    Some(match *event {
        Event::Created(_) => return None,
        Event::Drawn(tile) => Command::Draw(tile),
        Event::TilePlaced { pos, rotation } => Command::PlaceTile { pos, rotation },
        Event::FollowerPlaced(place) => Command::PlaceFollower(place),
        Event::FollowerMoved(target) => Command::MoveFromCarcassonne(target),
        Event::Passed => Command::Pass,
        Event::DeployedToCarcassonne { quarter, count } => Command::DeployToCarcassonne { quarter, count },
        Event::TimedOut(_) => Command::TimeOut,
        Event::Resigned(_) => Command::Resign,
        Event::Aborted(_) => Command::Abort,
        Event::Resumed { down_since_ms } => Command::Resume { down_since_ms },
    })
}

/// The seat that acted in a stored event (none for the server).
pub fn seat_of(event: &StoredEvent) -> Option<Seat> {
    match event.actor {
        Actor::Seat(s) => Some(Seat(s)),
        Actor::Server => None,
    }
}
