//! Records for audits: exporting a game (its record, and for a finished
//! game its event log with the hash chain and the seed, or all of it as a
//! signed archive), and verifying what an export gives, independently of
//! the store it came from.
//!
//! The checks are pieces that VerifyGame and the offline audit of archives
//! (`crate::audit`) share: [`verify_record`], [`check_chain`] (any
//! stream's exported log), [`replay_log`], [`check_commitment`],
//! [`check_revealed_seed`], [`log_record`] and [`same_game`].
//!
//! Each check compares two things obtained apart: a log's seed is checked
//! against a commitment only when the caller brings one (the one it was
//! shown while the game ran), never against the commitment this server
//! would compute from the very seed it exported.

use carcassonne_archive::{ArchiveBuilder, Kind, SigningKey};
use carcassonne_engine::record::{Interruption, Record, RecordError, Replay, TimelineEntry, Turn};
use carcassonne_engine::{Event, Pending, Seed};
use carcassonne_store::{Actor, GameId, Hash, RequestId, StoredEvent};

use super::audience::{self, Audience};
use crate::api::status::ApiError;
use crate::audit::game::GamePaths;
use crate::games::stored::{Loaded, engine_event};
use crate::games::{Games, store_error};
use crate::proto;

/// The export of a game, as far as the caller may see it.
pub fn export(
    games: &Games,
    id: &GameId,
    token: Option<&str>,
) -> Result<proto::ExportGameResponse, ApiError> {
    // Fresh from the store (`current`): the export must hold every
    // durable event.
    let now = games.current(id)?;
    let finished = now.game.is_finished();
    let visible = audience::visible_version(Audience::of(games, id, token, &now)?, &now);
    let stored = games.store().read_game(id, 1).map_err(store_error)?;
    // Event 2 is the creation: its time is the record's `created_at`.
    let events =
        timed_events(stored.iter().filter(|e| (2..=visible).contains(&e.seq))).map_err(ApiError::Corrupt)?;
    let events = if finished {
        &events[..]
    } else {
        complete_turns(&events)?
    };
    let record =
        Record::from_timed_events(events).ok_or_else(|| ApiError::Corrupt("no creation event".to_owned()))?;
    // The log holds the creation, seed and all: both wait for the seed's
    // reveal (not while a game that shares the bag runs).
    let (log, seed) = match games.seed_reveal(id, &now).seed(&now.game) {
        Some(seed) => (stored.iter().map(stored_view).collect(), seed.to_hex()),
        None => (Vec::new(), String::new()),
    };
    Ok(proto::ExportGameResponse {
        record_json: record.to_json(),
        events: log,
        seed,
    })
}

/// The files of a finished game in an archive (`docs/archive-format.md`),
/// under `games/<id>/`: its record and its event log as ExportGame gives
/// them (the log as the canonical proto3 JSON of its `StoredEvent`s), its
/// seed and the commitment the players were shown, each in hex on a line.
/// A game still running is refused: its seed is sealed; so is a finished
/// game whose bag another game of its round still draws from. A
/// tournament's archive holds each of its games' files.
pub fn game_files(games: &Games, id: &GameId) -> Result<Vec<(String, Vec<u8>)>, ApiError> {
    let now = games.current(id)?;
    if !now.game.is_finished() {
        return Err(ApiError::GameNotFinished(id.to_string()));
    }
    if games.seed_reveal(id, &now).seed(&now.game).is_none() {
        return Err(ApiError::Sealed(id.to_string()));
    }
    let export = export(games, id, None)?;
    let mut events = serde_json::to_vec_pretty(&export.events)
        .map_err(|e| ApiError::Internal(format!("the event log as JSON: {e}")))?;
    events.push(b'\n');
    let paths = GamePaths::of(id.as_str());
    Ok(vec![
        (paths.record, export.record_json.into_bytes()),
        (paths.events, events),
        (paths.seed, format!("{}\n", export.seed).into_bytes()),
        (
            paths.seed_sha256,
            format!("{}\n", now.info.seed_sha256).into_bytes(),
        ),
    ])
}

/// A finished game's archive: [`game_files`] with a manifest, made at the
/// store's time and signed by `key`.
pub fn game_archive(games: &Games, id: &GameId, key: &SigningKey) -> Result<Vec<u8>, ApiError> {
    let files = game_files(games, id)?;
    let mut archive = ArchiveBuilder::new(Kind::Game, id.as_str(), games.store().now_millis());
    let failed =
        |e: carcassonne_archive::ArchiveError| ApiError::Internal(format!("the archive of {id}: {e}"));
    for (path, bytes) in files {
        archive.add(path, bytes).map_err(failed)?;
    }
    archive.sign(key).map_err(failed)
}

/// Stored engine events with the times they were stored at.
fn timed_events<'a>(stored: impl Iterator<Item = &'a StoredEvent>) -> Result<Vec<(Event, u64)>, String> {
    stored.map(|e| Ok((engine_event(e)?, e.time_millis))).collect()
}

/// The events of a running game up to the end of its last complete turn:
/// a record has no half turns, so a tile drawn but not yet placed, or a
/// turn whose decisions are still being made, is left out (and with the
/// Count, the last turn while the final round runs: a record whose turns
/// use up the bag is a finished game), and so is every timeout,
/// resignation or resumption stored since. The result verifies as a game
/// in progress, and shows no draw of a turn still being played.
fn complete_turns(events: &[(Event, u64)]) -> Result<&[(Event, u64)], ApiError> {
    let Some((Event::Created(setup), _)) = events.first() else {
        return Err(ApiError::Corrupt("no creation event".to_owned()));
    };
    let mut game = carcassonne_engine::Game::new(setup.clone());
    let mut end = 1;
    for (i, (event, _)) in events.iter().enumerate().skip(1) {
        game.apply(event);
        // Waiting for the next draw: every turn so far is complete.
        if matches!(game.pending(), Pending::Draw { .. }) {
            end = i + 1;
        }
    }
    Ok(&events[..end])
}

pub fn stored_view(e: &StoredEvent) -> proto::StoredEvent {
    proto::StoredEvent {
        seq: e.seq as i64,
        position: e.position as i64,
        time_ms: e.time_millis as i64,
        seat: match e.actor {
            Actor::Seat(s) => Some(u32::from(s)),
            Actor::Server => None,
        },
        request_id: e.request_id.as_str().to_owned(),
        schema: u32::from(e.schema),
        payload: e.payload.clone(),
        prev_hash: e.prev_hash.to_string(),
        hash: e.hash.to_string(),
    }
}

/// A problem found by a verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// For a record, the turn index; for an event log, the sequence number
    /// of the event (0: the log or record as a whole).
    pub at: i64,
    /// The rule id of docs/rules.md it breaks, or empty.
    pub rule: String,
    /// What does not hold, in the words of `carcassonne verify`.
    pub error: String,
    /// The record's turn it is at, when it is at one (VerifyGame says it
    /// in `at`).
    pub turn: Option<u64>,
}

impl Problem {
    pub fn event(seq: i64, error: impl Into<String>) -> Problem {
        Problem {
            at: seq,
            rule: String::new(),
            error: error.into(),
            turn: None,
        }
    }

    /// A problem at a record's turn.
    fn turn(turn: usize, error: impl Into<String>) -> Problem {
        Problem {
            turn: Some(turn as u64),
            ..Problem::event(turn as i64, error)
        }
    }
}

/// The check of `carcassonne verify` on a record, and on an event log with
/// its hash chain and seed, and the commitment when one is given; a
/// record given with a log must be the log's record, turn by turn.
pub fn verify(request: &proto::VerifyGameRequest) -> proto::VerifyGameResponse {
    let commitment = Some(request.seed_sha256.as_str()).filter(|c| !c.is_empty());
    let outcome = verify_record(&request.record_json).and_then(|(record, replay)| {
        if !request.events.is_empty() {
            let log = verify_log(&request.name, &request.events, &request.seed, commitment)?;
            same_game(&record, &log)?;
        }
        Ok(replay)
    });
    match outcome {
        Ok(replay) => proto::VerifyGameResponse {
            ok: true,
            commitment_checked: !request.events.is_empty() && commitment.is_some(),
            scores: replay.game.scores().to_vec(),
            finished: replay.game.is_finished(),
            ending: replay.game.ending().map(crate::api::view::ending),
            ranks: replay
                .game
                .ranking()
                .unwrap_or_default()
                .into_iter()
                .map(u32::from)
                .collect(),
            ..Default::default()
        },
        Err(p) => proto::VerifyGameResponse {
            ok: false,
            error: p.error,
            at: p.at,
            rule: p.rule,
            ..Default::default()
        },
    }
}

/// Compares a record with the record of an event log: the setup and the
/// clocks, then every turn, the final round, the timeline and the result
/// the record claims. The first difference names its turn, or its field.
pub fn same_game(record: &Record, log: &Record) -> Result<(), Problem> {
    if (record.rules, &record.players, &record.tiles) != (log.rules, &log.players, &log.tiles) {
        return Err(Problem::event(
            0,
            "the record's rules, players or bag are not the event log's",
        ));
    }
    if record.time_control != log.time_control {
        return Err(Problem::event(
            0,
            "time_control: the record's time control is not the event log's",
        ));
    }
    if record.created_at != log.created_at {
        return Err(Problem::event(
            0,
            format!(
                "created_at: the record has {}, the event log {}",
                or_none(record.created_at),
                or_none(log.created_at)
            ),
        ));
    }
    let turns = record.turns.len().max(log.turns.len());
    for turn in 0..turns {
        let (ours, theirs) = (record.turns.get(turn), log.turns.get(turn));
        if ours != theirs {
            return Err(Problem::turn(
                turn,
                format!(
                    "turn {turn}: the record has {}, the event log {}",
                    describe(ours),
                    describe(theirs)
                ),
            ));
        }
    }
    if record.final_round != log.final_round {
        return Err(Problem::event(
            turns as i64,
            "the record's final round is not the event log's",
        ));
    }
    let (ours, theirs) = (
        record.timeline.as_deref().unwrap_or_default(),
        log.timeline.as_deref().unwrap_or_default(),
    );
    for i in 0..ours.len().max(theirs.len()) {
        let (a, b) = (ours.get(i), theirs.get(i));
        if a != b {
            return Err(Problem::event(
                0,
                format!(
                    "timeline[{i}]: the record has {}, the event log {}",
                    describe_entry(a),
                    describe_entry(b)
                ),
            ));
        }
    }
    if record.timeline.is_some() != log.timeline.is_some() {
        return Err(Problem::event(
            0,
            "timeline: the record and the event log do not both have one",
        ));
    }
    // A result left out claims nothing; verification checked a claimed one
    // against the record's own turns.
    if let Some(claimed) = &record.result
        && Some(claimed) != log.result.as_ref()
    {
        return Err(Problem::event(
            turns as i64,
            format!(
                "result: the record claims {claimed}, the event log gives {}",
                log.result
                    .as_ref()
                    .map_or_else(|| "a game in progress".to_owned(), ToString::to_string)
            ),
        ));
    }
    Ok(())
}

fn or_none(ms: Option<u64>) -> String {
    ms.map_or_else(|| "none".to_owned(), |ms| format!("{ms} ms"))
}

/// A timeline entry in a few words, for a difference between a record and
/// a log.
fn describe_entry(entry: Option<&TimelineEntry>) -> String {
    let Some(entry) = entry else {
        return "no such entry".to_owned();
    };
    match entry.interruption {
        None => format!("a decision at {} ms", entry.at),
        Some(Interruption::Resume { down_since_ms }) => {
            format!("a resumption at {} ms (down since {down_since_ms} ms)", entry.at)
        }
        Some(interruption) => format!("{interruption} at {} ms", entry.at),
    }
}

/// A turn in a few words, for a difference between a record and a log.
fn describe(turn: Option<&Turn>) -> String {
    match turn {
        None => "no such turn".to_owned(),
        Some(Turn::Discarded { tile }) => format!("{tile} discarded"),
        Some(Turn::Abandoned { tile }) => format!("{tile} abandoned"),
        Some(Turn::Placed(p)) => {
            let follower = p.follower.map(|f| format!(", follower {f}")).unwrap_or_default();
            let count = if p.redeploy.is_empty() && p.carcassonne.is_none() {
                ""
            } else {
                ", with moves of the Count"
            };
            format!("{} at {} rotation {}{follower}{count}", p.tile, p.pos, p.rotation)
        }
    }
}

/// A record parsed and replayed through the rules, each decision at its
/// timeline's time, its claimed scores and result checked.
pub fn verify_record(json: &str) -> Result<(Record, Replay), Problem> {
    let problem = |e: RecordError| {
        let (turn, rule) = match &e {
            RecordError::Rule { turn, rule, .. } => (Some(*turn as u64), rule.as_str().to_owned()),
            RecordError::Turn { turn, .. } => (Some(*turn as u64), String::new()),
            _ => (None, String::new()),
        };
        Problem {
            at: turn.map_or(0, |t| t as i64),
            rule,
            error: e.to_string(),
            turn,
        }
    };
    let record = Record::parse(json).map_err(problem)?;
    let replay = record.verify().map_err(problem)?;
    Ok((record, replay))
}

fn hash(hex: &str) -> Option<Hash> {
    let bytes = Seed::from_hex(hex)?;
    Some(Hash(bytes.0))
}

/// Checks an event log: every record's hash over its content, the chain
/// from one to the next, the rules (every event replayed), the draws
/// against the revealed seed, and, when given, the seed against
/// `commitment`, the one the players were shown (without it, a log forged
/// with another seed and recomputed hashes checks out: the answer says
/// the commitment was not checked). Returns the log's record.
fn verify_log(
    name: &str,
    events: &[proto::StoredEvent],
    seed: &str,
    commitment: Option<&str>,
) -> Result<Record, Problem> {
    let id = crate::api::parse::game_name(name)
        .ok()
        .and_then(|id| GameId::new(id).ok())
        .ok_or_else(|| {
            Problem::event(
                0,
                format!("name: {} is not a game's name", crate::api::status::quote(name)),
            )
        })?;
    let stored = check_chain(&id, events)?;
    let loaded = replay_log(&stored)?;
    if let Some(commitment) = commitment {
        check_commitment(&loaded, commitment)?;
    }
    check_revealed_seed(&loaded, seed)?;
    log_record(&loaded, &stored)
}

/// Checks the exported log of the stream `stream` (a game's, or any other
/// stream of the store: the chain knows no games): events numbered 1, 2,
/// 3, ... each with its hash over its content (the stream's id included)
/// and the previous event's hash, from zeros. Returns the events as
/// stored, checked.
pub fn check_chain(stream: &GameId, events: &[proto::StoredEvent]) -> Result<Vec<StoredEvent>, Problem> {
    let mut stored = Vec::with_capacity(events.len());
    let mut previous = Hash::ZERO;
    for (i, e) in events.iter().enumerate() {
        let seq = i as i64 + 1;
        let bad = |what: &str| Problem::event(seq, format!("event {seq}: {what}"));
        if e.seq != seq {
            return Err(bad(&format!("numbered {}", e.seq)));
        }
        let event = StoredEvent {
            game: stream.clone(),
            seq: seq as u64,
            position: u64::try_from(e.position).map_err(|_| bad("negative position"))?,
            time_millis: u64::try_from(e.time_ms).map_err(|_| bad("negative time"))?,
            actor: match e.seat {
                Some(s) => Actor::Seat(u8::try_from(s).map_err(|_| bad("no such seat"))?),
                None => Actor::Server,
            },
            request_id: RequestId::new(e.request_id.clone()).map_err(|_| bad("bad request id"))?,
            schema: u16::try_from(e.schema).map_err(|_| bad("unknown schema"))?,
            payload: e.payload.clone(),
            prev_hash: hash(&e.prev_hash).ok_or_else(|| bad("prev_hash is not 64 hex digits"))?,
            hash: hash(&e.hash).ok_or_else(|| bad("hash is not 64 hex digits"))?,
        };
        if event.prev_hash != previous {
            return Err(bad(
                "its prev_hash is not the previous event's hash: the chain is broken",
            ));
        }
        let (_, computed) = carcassonne_store::envelope::encode(&event);
        if computed != event.hash {
            return Err(bad("its hash does not match its content: it was changed"));
        }
        previous = event.hash;
        stored.push(event);
    }
    Ok(stored)
}

/// A game's checked log replayed: the server's opening and the creation,
/// then every event decided again at its stored time (so a timeout before
/// its deadline, or an action after it, breaks T-4 or T-5) and every draw
/// against the order of the creation's seed.
pub fn replay_log(stored: &[StoredEvent]) -> Result<Loaded, Problem> {
    let [first, second, rest @ ..] = stored else {
        return Err(Problem::event(0, "an event log has at least two events"));
    };
    let mut loaded = Loaded::start(first, second).map_err(|e| Problem::event(2, e))?;
    for event in rest {
        loaded
            .advance(event)
            .map_err(|e| Problem::event(event.seq as i64, e))?;
    }
    Ok(loaded)
}

/// The creation's seed hashes to `commitment` (hex).
pub fn check_commitment(loaded: &Loaded, commitment: &str) -> Result<(), Problem> {
    if loaded.game.setup().seed.is_none() {
        return Err(Problem::event(2, "the creation has no seed"));
    }
    if !loaded.info.seed_sha256.eq_ignore_ascii_case(commitment) {
        return Err(Problem::event(
            2,
            "the creation's seed does not hash to the commitment the players were shown",
        ));
    }
    Ok(())
}

/// `seed` (hex) is the creation's seed.
pub fn check_revealed_seed(loaded: &Loaded, seed: &str) -> Result<(), Problem> {
    let Some(committed) = loaded.game.setup().seed else {
        return Err(Problem::event(2, "the creation has no seed"));
    };
    if seed != committed.to_hex() {
        return Err(Problem::event(2, "the revealed seed is not the game's seed"));
    }
    Ok(())
}

/// The record of a replayed log, which must reach the end of its game.
pub fn log_record(loaded: &Loaded, stored: &[StoredEvent]) -> Result<Record, Problem> {
    if !loaded.game.is_finished() {
        return Err(Problem::event(
            loaded.version as i64,
            "the event log stops before the end of the game",
        ));
    }
    let events = timed_events(stored.iter().skip(1)).map_err(|e| Problem::event(0, e))?;
    Record::from_timed_events(&events).ok_or_else(|| Problem::event(2, "event 2 is not the creation"))
}
