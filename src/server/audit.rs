//! Records for audits: exporting a game (its record, and for a finished
//! game its event log with the hash chain and the seed), and verifying what
//! an export gives, independently of the store it came from.

use carcassonne_engine::record::{Record, RecordError};
use carcassonne_engine::{Event, Seed};
use carcassonne_store::{Actor, GameId, Hash, RequestId, StoredEvent};

use super::viewer::Viewer;
use crate::api::status::ApiError;
use crate::games::stored::{Loaded, engine_event};
use crate::games::{Games, auth, store_error};
use crate::proto;

/// The export of a game, as far as the caller may see it.
pub fn export(
    games: &Games,
    id: &GameId,
    token: Option<&str>,
) -> Result<proto::ExportGameResponse, ApiError> {
    // Fresh from the store: the export must hold every durable event.
    let (now, _) = games.history(id, None)?;
    let finished = now.game.is_finished();
    let visible = Viewer::of(token, &now)?.visible(now.version, finished, now.info.spectator_delay);
    let stored = games.store().read_game(id, 1).map_err(store_error)?;
    let events = stored
        .iter()
        .filter(|e| (2..=visible).contains(&e.seq))
        .map(engine_event)
        .collect::<Result<Vec<Event>, String>>()
        .map_err(ApiError::Corrupt)?;
    let record =
        Record::from_events(&events).ok_or_else(|| ApiError::Corrupt("no creation event".to_owned()))?;
    let (log, seed) = match (finished, now.game.setup().seed) {
        (true, Some(seed)) => (stored.iter().map(stored_view).collect(), seed.to_hex()),
        _ => (Vec::new(), String::new()),
    };
    Ok(proto::ExportGameResponse {
        record_json: record.to_json(),
        events: log,
        seed,
    })
}

fn stored_view(e: &StoredEvent) -> proto::StoredEvent {
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
struct Problem {
    at: i64,
    rule: String,
    error: String,
}

impl Problem {
    fn event(seq: i64, error: impl Into<String>) -> Problem {
        Problem {
            at: seq,
            rule: String::new(),
            error: error.into(),
        }
    }
}

/// The check of `carcassonne verify` on a record, and on an event log with
/// its hash chain and seed when one is given.
pub fn verify(request: &proto::VerifyGameRequest) -> proto::VerifyGameResponse {
    let outcome = verify_record(&request.record_json).and_then(|scores| {
        if request.events.is_empty() {
            return Ok(scores);
        }
        let log_scores = verify_log(&request.name, &request.events, &request.seed)?;
        if log_scores != scores {
            return Err(Problem::event(
                0,
                format!("the record scores {scores:?}, but its event log scores {log_scores:?}"),
            ));
        }
        Ok(scores)
    });
    match outcome {
        Ok(scores) => proto::VerifyGameResponse {
            ok: true,
            scores,
            ..Default::default()
        },
        Err(p) => proto::VerifyGameResponse {
            ok: false,
            error: p.error,
            at: p.at,
            rule: p.rule,
            scores: Vec::new(),
        },
    }
}

fn verify_record(json: &str) -> Result<Vec<u32>, Problem> {
    let problem = |e: RecordError| {
        let (at, rule) = match &e {
            RecordError::Rule { turn, rule, .. } => (*turn as i64, rule.as_str().to_owned()),
            RecordError::Turn { turn, .. } => (*turn as i64, String::new()),
            _ => (0, String::new()),
        };
        Problem {
            at,
            rule,
            error: e.to_string(),
        }
    };
    let record = Record::parse(json).map_err(problem)?;
    let replay = record.verify().map_err(problem)?;
    Ok(replay.game.scores().to_vec())
}

fn hash(hex: &str) -> Option<Hash> {
    let bytes = Seed::from_hex(hex)?;
    Some(Hash(bytes.0))
}

/// Checks an event log: every record's hash over its content, the chain
/// from one to the next, the rules (every event replayed), and the draws
/// against the revealed seed. Returns the final scores.
fn verify_log(name: &str, events: &[proto::StoredEvent], seed: &str) -> Result<Vec<u32>, Problem> {
    let id = crate::api::parse::game_name(name)
        .ok()
        .and_then(|id| GameId::new(id).ok())
        .ok_or_else(|| Problem::event(0, format!("name: {name:?} is not a game's name")))?;
    let mut stored = Vec::with_capacity(events.len());
    let mut previous = Hash::ZERO;
    for (i, e) in events.iter().enumerate() {
        let seq = i as i64 + 1;
        let bad = |what: &str| Problem::event(seq, format!("event {seq}: {what}"));
        if e.seq != seq {
            return Err(bad(&format!("numbered {}", e.seq)));
        }
        let event = StoredEvent {
            game: id.clone(),
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
        let (_, computed) = carcassonne_store::record::encode(&event);
        if computed != event.hash {
            return Err(bad("its hash does not match its content: it was changed"));
        }
        previous = event.hash;
        stored.push(event);
    }
    // The rules, and every draw against the seed.
    let [first, second, rest @ ..] = &stored[..] else {
        return Err(Problem::event(0, "an event log has at least two events"));
    };
    let mut loaded = Loaded::start(first, second).map_err(|e| Problem::event(2, e))?;
    for event in rest {
        loaded
            .advance(event)
            .map_err(|e| Problem::event(event.seq as i64, e))?;
    }
    let Some(committed) = loaded.game.setup().seed else {
        return Err(Problem::event(2, "the creation has no seed"));
    };
    if seed != committed.to_hex() {
        return Err(Problem::event(2, "the revealed seed is not the game's seed"));
    }
    if auth::seed_commitment(&committed.0) != loaded.info.seed_sha256 {
        return Err(Problem::event(2, "the seed does not hash to the commitment"));
    }
    if !loaded.game.is_finished() {
        return Err(Problem::event(
            loaded.version as i64,
            "the event log stops before the end of the game",
        ));
    }
    Ok(loaded.game.scores().to_vec())
}
