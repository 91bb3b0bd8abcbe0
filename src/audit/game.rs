//! A game in an archive: where its files are ([`GamePaths`]), and their
//! audit ([`audit_game`]) with the checks of VerifyGame, one line each.

use carcassonne_archive::Archive;
use carcassonne_engine::record::Record;
use carcassonne_engine::{Ending, Game, Seat, Seed};
use carcassonne_store::GameId;

use super::{At, Checks, Finding};
use crate::games::stored::Opened;
use crate::proto;
use crate::server::audit::{self as checks, Problem};

/// The files of the game `id` in an archive, under `games/<id>/`
/// (`docs/archive-format.md`): the one place that names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GamePaths {
    /// The record, as ExportGame gives it (`carcassonne-record/1`).
    pub record: String,
    /// The event log with its hash chain: a JSON array of `StoredEvent`s
    /// in canonical proto3 JSON.
    pub events: String,
    /// The seed, 64 hex digits and a newline.
    pub seed: String,
    /// The commitment the players were shown (the seed's SHA-256), 64 hex
    /// digits and a newline.
    pub seed_sha256: String,
}

impl GamePaths {
    pub fn of(id: &str) -> GamePaths {
        GamePaths {
            record: format!("games/{id}/record.json"),
            events: format!("games/{id}/events.json"),
            seed: format!("games/{id}/seed"),
            seed_sha256: format!("games/{id}/seed_sha256"),
        }
    }

    /// Every path, in the order of an archive.
    pub fn all(&self) -> [&str; 4] {
        [&self.record, &self.events, &self.seed, &self.seed_sha256]
    }
}

/// A game whose every check held.
#[derive(Debug, Clone)]
pub struct AuditedGame {
    /// Its record (the event log's, which the record equals).
    pub record: Record,
    /// The event log's game at its end: scores, ending and ranking.
    pub game: Game,
    /// The server's opening of the game: its seats' players, whether it
    /// is rated, its tournament.
    pub opened: Opened,
    /// The creation's seed, which the revealed one and the commitment
    /// match.
    pub seed: Seed,
    /// The seats the server resigned because their player withdrew from
    /// the game's tournament (request id `~withdrawn/<seat>`), each with
    /// the sequence number of its first event in the log.
    pub withdrawn: Vec<(Seat, u64)>,
}

/// The audit of an archive of kind `game`: the game `subject`, and no file
/// but its own.
pub fn audit(archive: &Archive, subject: &str, checks: &mut Checks) -> Result<(), Finding> {
    audit_game(archive, subject, checks)?;
    let paths = GamePaths::of(subject);
    if let Some(other) = archive.paths().find(|p| !paths.all().contains(p)) {
        return Err(Finding::file(
            Some(other),
            format!("not a file of the archive of game {subject}: this build checks nothing in it"),
        ));
    }
    Ok(())
}

/// Audits the files of the game `id` in `archive` with the checks of
/// VerifyGame, each a line of `checks`, in this order: the record replayed
/// through the rules (its timeline's times, timeouts included, and its
/// claimed scores and result); the event log's hash chain; the log
/// replayed (every event decided again at its stored time, every draw
/// against the creation's seed); the creation's commitment against
/// `seed_sha256`; the revealed `seed` against the creation's; the log
/// complete and the record equal to it, turn by turn.
pub fn audit_game(archive: &Archive, id: &str, checks: &mut Checks) -> Result<AuditedGame, Finding> {
    let paths = GamePaths::of(id);
    let stream =
        GameId::new(id).map_err(|e| Finding::file(None, format!("{} is not a game id: {e}", quoted(id))))?;
    let text = |path: &str| -> Result<&str, Finding> {
        let bytes = archive.file(path).ok_or_else(|| {
            Finding::file(
                Some(path),
                "missing: a game's archive holds its record.json, events.json, seed and seed_sha256",
            )
        })?;
        std::str::from_utf8(bytes).map_err(|_| Finding::file(Some(path), "not UTF-8 text"))
    };
    let record_json = text(&paths.record)?;
    let events_json = text(&paths.events)?;
    let seed = hex_line(&paths.seed, text(&paths.seed)?)?;
    let commitment = hex_line(&paths.seed_sha256, text(&paths.seed_sha256)?)?;

    // The record on its own, as `carcassonne verify` checks it.
    let (record, replay) =
        checks::verify_record(record_json).map_err(|p| record_finding(&paths.record, p))?;
    checks.pass(
        &paths.record,
        format!(
            "{}, every one legal at its time; {}, scores {:?}",
            counted(record.turns.len(), "turn"),
            state(&replay.game),
            replay.game.scores()
        ),
    );

    // The event log: its chain, then its events under the rules.
    let events: Vec<proto::StoredEvent> = serde_json::from_str(events_json)
        .map_err(|e| Finding::file(Some(&paths.events), format!("not an event log: {e}")))?;
    let stored = checks::check_chain(&stream, &events).map_err(|p| log_finding(&paths.events, p))?;
    checks.pass(
        &paths.events,
        format!(
            "{}, each hash over its content, chained from the first to the last",
            counted(stored.len(), "event")
        ),
    );
    let loaded = checks::replay_log(&stored).map_err(|p| log_finding(&paths.events, p))?;
    checks.pass(
        &paths.events,
        "every event decided again under the rules at its stored time (clocks and timeouts \
         included); every draw in the order of the creation's seed",
    );

    // The seed: committed at the creation, revealed at the end.
    checks::check_commitment(&loaded, commitment).map_err(|p| log_finding(&paths.seed_sha256, p))?;
    checks.pass(
        &paths.seed_sha256,
        format!(
            "{commitment}: the commitment of the creation's seed; compare it with the seed_sha256 \
             the players were shown"
        ),
    );
    checks::check_revealed_seed(&loaded, seed).map_err(|p| log_finding(&paths.seed, p))?;
    checks.pass(&paths.seed, "the creation's seed: it hashes to the commitment");
    let Some(seed) = loaded.game.setup().seed else {
        return Err(Finding::file(Some(&paths.events), "the creation has no seed"));
    };

    // The log's record, and the record against it.
    let log = checks::log_record(&loaded, &stored).map_err(|p| log_finding(&paths.events, p))?;
    checks::same_game(&record, &log).map_err(|p| record_finding(&paths.record, p))?;
    checks.pass(
        &paths.record,
        "the event log's record, turn by turn: setup, clocks, timeline and result",
    );
    let mut withdrawn: Vec<(Seat, u64)> = Vec::new();
    for event in &stored {
        if let Some(seat) = crate::games::withdrawal_seat(event.request_id.as_str())
            && !withdrawn.iter().any(|(s, _)| *s == seat)
        {
            withdrawn.push((seat, event.seq));
        }
    }
    Ok(AuditedGame {
        record,
        seed,
        withdrawn,
        opened: loaded.opened,
        game: loaded.game,
    })
}

/// A line of 64 hex digits (a newline after them, or not).
fn hex_line<'a>(path: &str, text: &'a str) -> Result<&'a str, Finding> {
    let line = text.strip_suffix('\n').unwrap_or(text);
    if line.len() == 64 && line.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(line)
    } else {
        Err(Finding::file(Some(path), "not 64 hex digits and a newline"))
    }
}

/// `1 turn`, `2 turns`.
pub(crate) fn counted(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn quoted(id: &str) -> String {
    crate::api::status::quote(id)
}

/// A problem in a record: at its turn, when it has one.
fn record_finding(path: &str, p: Problem) -> Finding {
    Finding {
        file: Some(path.to_owned()),
        at: p.turn.map(At::Turn),
        rule: (!p.rule.is_empty()).then_some(p.rule),
        error: p.error,
    }
}

/// A problem in an event log: at its event, when it has one.
pub(crate) fn log_finding(path: &str, p: Problem) -> Finding {
    Finding {
        file: Some(path.to_owned()),
        at: u64::try_from(p.at).ok().filter(|&seq| seq > 0).map(At::Event),
        rule: (!p.rule.is_empty()).then_some(p.rule),
        error: p.error,
    }
}

/// How the game stands at its end, in a few words.
fn state(game: &Game) -> String {
    match game.ending() {
        None => "in progress".to_owned(),
        Some(Ending::Normal) => "finished".to_owned(),
        Some(Ending::OutOfTime(seat)) => format!("finished (seat {} ran out of time)", seat.0),
        Some(Ending::Resigned(seat)) => format!("finished (seat {} resigned)", seat.0),
        Some(Ending::Aborted(seat)) => format!("finished (aborted by seat {})", seat.0),
    }
}
