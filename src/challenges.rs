//! Challenges: each is the stream `@challenge/{id}` in the event store, its
//! state a fold of it through the competition crate. This module makes,
//! accepts, declines and cancels them, and starts a challenge's game once
//! every seat is taken: the one way a game seats registered players other
//! than its creator, so that nobody is seated without agreeing.
//!
//! Every change reads the challenge's stream, decides, and appends at the
//! version it read (another node may have moved it meanwhile: then it
//! reads again). The game's id and creation request derive from the
//! challenge's id, so starting it twice (a retry, two nodes, a restart
//! after a crash in between) creates it once.
//!
//! Open challenges are indexed in memory, for listing and for the limit on
//! each challenger's open challenges; at start the index reads only the
//! streams made within the longest expiry, so its cost does not grow with
//! the challenges of the past.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use carcassonne_competition::{
    CHALLENGE_SCHEMA, Challenge, ChallengeCommand, ChallengeEvent, ChallengeSpec, ChallengeStatus,
    PlayerName, SeatOffer,
};
use carcassonne_engine::Setup;
use carcassonne_store::{Actor, EventStore, GameId, NewEvent, RequestId, StoreError};

use crate::api::parse;
use crate::api::status::ApiError;
use crate::games::{Games, NewGame, create_stream, store_error};
use crate::players::Players;
use crate::proto;

/// The prefix of every challenge's stream id.
pub const CHALLENGE_STREAM_PREFIX: &str = "@challenge/";
/// The most challenges one player may have open at once.
pub const MAX_OPEN_PER_CHALLENGER: usize = 16;
/// How long an offer stands when the challenger does not say.
pub const DEFAULT_EXPIRY_MS: u64 = 60 * 60 * 1000;
/// The shortest and the longest an offer may stand.
pub const EXPIRY_MS: std::ops::RangeInclusive<u64> = 10_000..=7 * 24 * 60 * 60 * 1000;
/// Attempts at a change while other nodes move the challenge meanwhile.
const ATTEMPTS: usize = 8;

/// The settings of a challenge's game, as its spec keeps them (opaque to
/// the competition crate): the API's messages in their canonical JSON.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GameSettings {
    pub rules: proto::RuleOptions,
    pub time_control: Option<proto::TimeControl>,
    pub spectator_delay: u32,
}

/// A challenge as the store holds it: its fold and its stream's version.
#[derive(Debug, Clone)]
pub struct Held {
    pub challenge: Challenge,
    pub version: u64,
    /// When it was made, in Unix milliseconds (its creation's time).
    pub created_ms: u64,
}

impl Held {
    /// The game's settings.
    pub fn settings(&self) -> Result<GameSettings, ApiError> {
        serde_json::from_value(self.challenge.spec().game.clone())
            .map_err(|e| ApiError::Corrupt(format!("challenges/{}: settings: {e}", self.challenge.id())))
    }
}

/// A challenge's stream.
pub fn stream_of(id: &str) -> Result<GameId, ApiError> {
    GameId::new(format!("{CHALLENGE_STREAM_PREFIX}{id}"))
        .map_err(|_| ApiError::ChallengeNotFound(id.to_owned()))
}

/// A new challenge's id: derived from the creation's request id, so that a
/// retry finds the challenge it made.
pub fn new_challenge_id(request_id: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(request_id.as_bytes());
    format!("c{}", &crate::games::auth::hex(&digest)[..16])
}

/// The request id that creates challenge `id`'s game: the server's own
/// (`~`), so no client's creation can make the same game id.
fn game_request(id: &str) -> String {
    format!("~challenge/{id}")
}

/// The game challenge `id` starts.
pub fn game_of(id: &str) -> Result<GameId, ApiError> {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(game_request(id).as_bytes());
    GameId::new(format!("g{}", &crate::games::auth::hex(&digest)[..24]))
        .map_err(|e| ApiError::Internal(format!("a challenge's game id: {e}")))
}

/// Decodes a challenge's stored events into its state.
pub fn fold(id: &str, stored: &[carcassonne_store::StoredEvent]) -> Result<Held, String> {
    let mut events = stored.iter().map(|e| {
        if e.schema != CHALLENGE_SCHEMA {
            return Err(format!("event {}: schema {}", e.seq, e.schema));
        }
        ChallengeEvent::decode(&e.payload).map_err(|error| format!("event {}: {error}", e.seq))
    });
    let created = events.next().ok_or("no events")??;
    let mut challenge = Challenge::from_event(id, &created).ok_or("event 1 is not the creation")?;
    for event in events {
        challenge.apply(&event?);
    }
    Ok(Held {
        challenge,
        version: stored.last().map_or(0, |e| e.seq),
        created_ms: stored.first().map_or(0, |e| e.time_millis),
    })
}

fn to_batch(events: &[ChallengeEvent]) -> Vec<NewEvent> {
    events
        .iter()
        .map(|e| NewEvent {
            actor: Actor::Server,
            schema: CHALLENGE_SCHEMA,
            payload: e.encode(),
        })
        .collect()
}

fn challenge_error(error: carcassonne_competition::ChallengeError) -> ApiError {
    ApiError::Challenge(error)
}

pub struct Challenges {
    store: Arc<dyn EventStore>,
    games: Arc<Games>,
    players: Arc<Players>,
    /// The challenges open when last seen, by id: what listing and the
    /// challengers' limit read. Closed and lapsed ones leave it as they
    /// are met.
    open: Mutex<BTreeMap<String, Held>>,
}

impl Challenges {
    /// The challenges of the store that may still be open (made within the
    /// longest expiry), folded; an accepted one whose game a crash kept
    /// from starting starts now.
    pub fn open(
        store: Arc<dyn EventStore>,
        games: Arc<Games>,
        players: Arc<Players>,
    ) -> Result<Challenges, ApiError> {
        let challenges = Challenges {
            store,
            games,
            players,
            open: Mutex::new(BTreeMap::new()),
        };
        for (id, error) in challenges.refresh_all()? {
            // The recorder's catch-up tries it again; the others go on.
            tracing::warn!(%error, "reading challenge {id} failed");
        }
        Ok(challenges)
    }

    /// [`Challenges::refresh`] for every challenge made within the longest
    /// expiry: at start, and after this node fell behind the store.
    pub fn refresh_all(&self) -> Result<Vec<(String, ApiError)>, ApiError> {
        let since = self.store.now_millis().saturating_sub(*EXPIRY_MS.end());
        let mut failed = Vec::new();
        for (id, summary) in challenge_streams(self.store.as_ref())? {
            if summary.created_millis >= since
                && let Err(error) = self.refresh(&id)
            {
                failed.push((id, error));
            }
        }
        Ok(failed)
    }

    /// Reads challenge `id` from the store and indexes it as it stands
    /// (another node may have changed it); starts its game if it is full.
    pub fn refresh(&self, id: &str) -> Result<Held, ApiError> {
        let held = self.read(id)?;
        self.index(&held);
        if held.challenge.status(self.store.now_millis()) == ChallengeStatus::Accepted {
            self.start(&held)?;
        }
        Ok(held)
    }

    fn read(&self, id: &str) -> Result<Held, ApiError> {
        let stored = match self.store.read_game(&stream_of(id)?, 1) {
            // No such stream: the store says so of a game, the caller asked
            // for a challenge.
            Err(StoreError::NotFound(_)) => return Err(ApiError::ChallengeNotFound(id.to_owned())),
            read => read.map_err(store_error)?,
        };
        if stored.is_empty() {
            return Err(ApiError::ChallengeNotFound(id.to_owned()));
        }
        fold(id, &stored).map_err(|e| ApiError::Corrupt(format!("challenges/{id}: {e}")))
    }

    /// Keeps `held` in the index while it is open, drops it otherwise.
    fn index(&self, held: &Held) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let id = held.challenge.id().to_owned();
        match held.challenge.status(self.store.now_millis()) {
            ChallengeStatus::Open => {
                // Never replace a later version another call indexed.
                if open.get(&id).is_none_or(|known| known.version <= held.version) {
                    open.insert(id, held.clone());
                }
            }
            _ => {
                open.remove(&id);
            }
        }
    }

    /// The open challenges, lapsed ones dropped.
    fn open_now(&self) -> Vec<Held> {
        let now = self.store.now_millis();
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|_, held| held.challenge.status(now) == ChallengeStatus::Open);
        open.values().cloned().collect()
    }

    /// Offers a game; blocking. The challenger's seat is in `spec`.
    pub fn create(
        &self,
        request_id: &RequestId,
        mut spec: ChallengeSpec,
        expire_ms: u64,
    ) -> Result<Held, ApiError> {
        spec.check().map_err(|e| ApiError::InvalidArgument {
            field: e.field().to_owned(),
            message: e.to_string(),
        })?;
        for seat in &spec.seats {
            if let SeatOffer::Player(name) = seat {
                self.players.get(name)?;
            }
        }
        let made = self
            .open_now()
            .iter()
            .filter(|held| held.challenge.spec().challenger == spec.challenger)
            .count();
        if made >= MAX_OPEN_PER_CHALLENGER {
            return Err(ApiError::TooManyChallenges(MAX_OPEN_PER_CHALLENGER));
        }
        spec.expires_at_ms = self.store.now_millis().saturating_add(expire_ms);
        let id = new_challenge_id(request_id.as_str());
        let stream = stream_of(&id)?;
        let batch = to_batch(&[ChallengeEvent::Created { spec }]);
        // A retry with the same request id gets the first append back:
        // the challenge it made.
        create_stream(
            self.store.as_ref(),
            &stream,
            request_id,
            &batch,
            &format!("challenges/{id}"),
        )?;
        let held = self.refresh(&id)?;
        tracing::info!(challenge = %id, "challenge made");
        Ok(held)
    }

    /// A challenge as it stands; an accepted one's game is started if it
    /// was not yet.
    pub fn get(&self, id: &str) -> Result<Held, ApiError> {
        self.refresh(id)
    }

    /// The open challenges `caller` made or is named in, and every one
    /// with an open seat, oldest first.
    pub fn list(&self, caller: Option<&PlayerName>) -> Vec<Held> {
        let mut listed: Vec<Held> = self
            .open_now()
            .into_iter()
            .filter(|held| {
                let challenge = &held.challenge;
                challenge.open_seats().next().is_some() || caller.is_some_and(|c| challenge.involves(c))
            })
            .collect();
        listed.sort_by(|a, b| (a.created_ms, a.challenge.id()).cmp(&(b.created_ms, b.challenge.id())));
        listed
    }

    /// `caller`'s `command` on challenge `id`; blocking. The acceptance
    /// that takes the last seat starts the game.
    pub fn act(&self, id: &str, caller: &PlayerName, command: &ChallengeCommand) -> Result<Held, ApiError> {
        let stream = stream_of(id)?;
        for _ in 0..ATTEMPTS {
            let mut held = self.read(id)?;
            let events = held
                .challenge
                .decide(caller, command, self.store.now_millis())
                .map_err(challenge_error)?;
            let request = RequestId::new(format!("~{}/{caller}/{}", kind(command), held.version + 1))
                .map_err(|e| ApiError::Internal(format!("a challenge's request id: {e}")))?;
            match self
                .store
                .append(&stream, held.version, &request, &to_batch(&events))
            {
                Ok(appended) if appended.first_seq == held.version + 1 => {
                    for event in &events {
                        held.challenge.apply(event);
                    }
                    held.version = appended.last_seq;
                    self.index(&held);
                    tracing::info!(challenge = %id, player = %caller, "challenge {}", kind(command));
                    if held.challenge.status(self.store.now_millis()) == ChallengeStatus::Accepted {
                        self.start(&held)?;
                    }
                    return Ok(held);
                }
                // Another call (or node) moved the challenge first: decide
                // again on what it holds now.
                Ok(_) | Err(StoreError::Conflict { .. }) => continue,
                Err(error) => return Err(store_error(error)),
            }
        }
        Err(ApiError::Exhausted(format!(
            "challenges/{id} changed {ATTEMPTS} times while this call decided; try again"
        )))
    }

    /// Creates the game of a challenge whose seats are all taken, once:
    /// a second call finds it made.
    fn start(&self, held: &Held) -> Result<GameId, ApiError> {
        let id = held.challenge.id();
        let game = game_of(id)?;
        // Started already: its opening is stored (read alone, not the game).
        match self.store.read_game_chunk(&game, 1, 1) {
            Ok(opening) if !opening.is_empty() => return Ok(game),
            Ok(_) | Err(StoreError::NotFound(_)) => {}
            Err(error) => return Err(store_error(error)),
        }
        let settings = held.settings()?;
        let spec = held.challenge.spec();
        let mut names = Vec::with_capacity(spec.seats.len());
        let mut accounts = Vec::with_capacity(spec.seats.len());
        let mut bots = Vec::with_capacity(spec.seats.len());
        let mut bot_numbers: BTreeMap<String, u32> = BTreeMap::new();
        for (offer, taken) in spec.seats.iter().zip(held.challenge.taken()) {
            match (offer, taken) {
                (SeatOffer::Bot(level), _) => {
                    let level = carcassonne_bots::Level::from_name(level)
                        .ok_or_else(|| ApiError::Corrupt(format!("challenges/{id}: bot level {level}")))?;
                    let kind = level.name().split(':').next().unwrap_or_default().to_owned();
                    let n = bot_numbers.entry(kind.clone()).or_default();
                    *n += 1;
                    names.push(format!("{kind} bot {n}"));
                    accounts.push(None);
                    bots.push(Some(level));
                }
                (_, Some(player)) => {
                    names.push(player.to_string());
                    accounts.push(Some(self.players.account(player)?));
                    bots.push(None);
                }
                (_, None) => {
                    return Err(ApiError::Internal(format!(
                        "challenges/{id}: started with a seat free"
                    )));
                }
            }
        }
        let setup = Setup {
            rules: parse::rules(Some(&settings.rules))?,
            players: names,
            tiles: None,
            seed: None,
            time_control: parse::time_control(settings.time_control.as_ref())?,
        };
        let new = NewGame {
            setup,
            spectator_delay: settings.spectator_delay,
            accounts,
            rated: spec.rated,
            tournament: None,
            sealed: false,
            bots,
            // Its players are at the table: the bots play at once.
            bot_pace_ms: 0,
        };
        let request = RequestId::new(game_request(id))
            .map_err(|e| ApiError::Internal(format!("a challenge's game request id: {e}")))?;
        match self.games.create(&game, &request, new) {
            // Another node started it meanwhile.
            Ok(_) | Err(ApiError::AlreadyExists(_) | ApiError::RequestIdReused(_)) => {}
            Err(error) => return Err(error),
        }
        tracing::info!(challenge = %id, game = %game, "challenge accepted: game started");
        Ok(game)
    }
}

/// A command's name, in logs and request ids.
fn kind(command: &ChallengeCommand) -> &'static str {
    match command {
        ChallengeCommand::Accept { .. } => "accepted",
        ChallengeCommand::Decline => "declined",
        ChallengeCommand::Cancel => "cancelled",
    }
}

/// Every challenge's id and stream summary, listed from their prefix on.
fn challenge_streams(
    store: &dyn EventStore,
) -> Result<Vec<(String, carcassonne_store::GameSummary)>, ApiError> {
    carcassonne_store::streams_with_prefix(store, CHALLENGE_STREAM_PREFIX).map_err(store_error)
}
