//! The audit of a tournament's archive (kind `tournament`), offline, from
//! the archive's files alone, in this order (`docs/archive-format.md`):
//!
//! 1. `tournament/events.json`: the tournament stream's hash chain, then
//!    its events decoded and folded by the competition crate, each one
//!    its rules produce at its point ([`log`]);
//! 2. the archive holds the files of every game the log pairs and no file
//!    this audit does not read;
//! 3. every game with the checks of VerifyGame ([`super::game::audit_game`]),
//!    and that it is the tournament's: its opening names the tournament,
//!    rated as it is, its rules and clock the tournament's;
//! 4. every result in the log is the audited game's ranking and scores,
//!    and every seat the server resigned for a withdrawal (`~withdrawn/`)
//!    is a player the log withdraws before that result;
//! 5. every round's pairing is `pairing/1`'s from the events before it,
//!    and every game seats its table and is dealt the seed the
//!    tournament's seed gives it (duplicate bags: alike at every table);
//! 6. `tournament/standings.json` and `tournament/tournament.json` are the
//!    server's views (`crate::tournaments::view`) of the fold;
//! 7. a rated tournament's `ratings/events.json` and `ratings/changes.json`
//!    ([`ratings`]).

mod json;
mod log;
mod ratings;

use std::collections::{BTreeMap, BTreeSet};

use carcassonne_archive::{Archive, MANIFEST};
use carcassonne_competition::{GameResult, ScheduledGame, Tournament};
use carcassonne_store::GameId;

use super::game::{AuditedGame, GamePaths, audit_game, counted};
use super::{At, Checks, Finding};
use crate::tournaments::archive::{EVENTS, RATING_CHANGES, RATING_EVENTS, STANDINGS, TOURNAMENT};
use crate::tournaments::view::{standings_view, tournament_view};
use crate::tournaments::{GameSettings, Held, TOURNAMENT_STREAM_PREFIX};

/// The audit of the tournament `subject`'s archive.
pub fn audit(archive: &Archive, subject: &str, checks: &mut Checks) -> Result<(), Finding> {
    let stream = GameId::new(format!("{TOURNAMENT_STREAM_PREFIX}{subject}")).map_err(|e| {
        Finding::file(
            None,
            format!(
                "{} is not a tournament id: {e}",
                crate::api::status::quote(subject)
            ),
        )
    })?;
    let folded = log::fold(&stream, text(archive, EVENTS)?, checks)?;
    let tournament = &folded.tournament;
    let rated = tournament.spec().rated;
    files_read(archive, tournament, rated)?;
    let n = tournament.games().count();
    checks.pass(
        MANIFEST,
        format!(
            "the files of every game the tournament's log pairs ({}), and no file this audit does \
             not read",
            counted(n, "game")
        ),
    );

    // Every game on its own, then as the tournament's.
    let settings = settings(tournament)?;
    let mut games = BTreeMap::new();
    for scheduled in tournament.games() {
        let audited = audit_game(archive, &scheduled.id, checks)?;
        belongs(&audited, &scheduled, tournament, &settings)?;
        games.insert(scheduled.id.clone(), audited);
    }
    checks.pass(
        EVENTS,
        format!(
            "every game ({}) opened as the tournament's, {}, with its rules and clock",
            counted(n, "game"),
            match (rated, tournament.spec().house_bots.is_empty()) {
                (true, true) => "rated",
                (true, false) => "rated unless it seats a house bot",
                (false, _) => "unrated",
            }
        ),
    );
    results(&folded, &games)?;
    checks.pass(
        EVENTS,
        format!(
            "every result ({}) is its audited game's ranking and scores (or abort)",
            counted(n, "result")
        ),
    );
    let resigned = withdrawals(&folded, &games)?;
    checks.pass(
        EVENTS,
        format!(
            "every seat the server resigned for a withdrawal ({}) is a player the log withdrew \
             before the game's result",
            counted(resigned, "seat")
        ),
    );
    log::pairings(&folded, checks)?;
    seats_and_seeds(tournament, &games)?;
    checks.pass(
        EVENTS,
        if tournament.spec().duplicate_bags {
            "every game seats its table's players (rotated by its index) and is dealt the seed the \
             tournament's seed gives it; duplicate bags: each round's game g dealt alike at every table"
        } else {
            "every game seats its table's players (rotated by its index) and is dealt the seed the \
             tournament's seed gives it"
        },
    );

    // The files that state what the fold gives.
    let held = Held {
        tournament: tournament.clone(),
        version: folded.version,
    };
    json::same(archive, STANDINGS, &standings_view(&held))?;
    checks.pass(
        STANDINGS,
        format!(
            "the standings the fold gives ({} players; points, Buchholz, firsts, game score, lot)",
            tournament.spec().participants.len()
        ),
    );
    let view = tournament_view(&held);
    json::same(archive, TOURNAMENT, &view)?;
    // What the archive states is checked against the log; against what
    // the players were shown only the reader can check it.
    checks.pass(
        TOURNAMENT,
        format!(
            "the tournament the fold gives: every round, table, game and result, the log's seed and \
             its SHA-256 {}: compare it with the seed_sha256 the players were shown while it ran",
            view.seed_sha256
        ),
    );
    if rated {
        ratings::audit(archive, tournament, &games, checks)?;
    }
    Ok(())
}

/// The UTF-8 text of the archive's file `path`.
fn text<'a>(archive: &'a Archive, path: &str) -> Result<&'a str, Finding> {
    let bytes = archive
        .file(path)
        .ok_or_else(|| Finding::file(Some(path), "missing: a tournament's archive holds it"))?;
    std::str::from_utf8(bytes).map_err(|_| Finding::file(Some(path), "not UTF-8 text"))
}

/// Every game the log pairs is in the archive, and every file of the
/// archive is one this audit reads.
fn files_read(archive: &Archive, tournament: &Tournament, rated: bool) -> Result<(), Finding> {
    let mut read: BTreeSet<String> = [EVENTS, TOURNAMENT, STANDINGS].map(str::to_owned).into();
    if rated {
        read.extend([RATING_EVENTS, RATING_CHANGES].map(str::to_owned));
    }
    let mut listed = BTreeSet::new();
    for game in tournament.games() {
        let paths = GamePaths::of(&game.id);
        if !paths.all().iter().any(|p| archive.file(p).is_some()) {
            return Err(Finding::file(
                Some(EVENTS),
                format!(
                    "removed game: the log pairs game {} (round {}, table {}), and the archive holds \
                     none of its files",
                    game.id, game.round, game.table
                ),
            ));
        }
        read.extend(paths.all().map(str::to_owned));
        listed.insert(game.id.clone());
    }
    let Some(unread) = archive.paths().find(|p| !read.contains(*p)) else {
        return Ok(());
    };
    let game = unread
        .strip_prefix("games/")
        .and_then(|rest| rest.split_once('/'))
        .map(|(id, _)| id);
    let why = match game {
        Some(id) if !listed.contains(id) => {
            format!("game {id} is not a game of the tournament's log: this build checks nothing in it")
        }
        _ if unread.starts_with("ratings/") && !rated => {
            "the tournament is not rated: this build checks nothing in it".to_owned()
        }
        _ => "not a file of a tournament's archive: this build checks nothing in it".to_owned(),
    };
    Err(Finding::file(Some(unread), why))
}

/// The rules and the clock of the tournament's games, as its creation
/// states them.
struct Settings {
    rules: carcassonne_engine::Rules,
    time_control: Option<carcassonne_engine::TimeControl>,
}

fn settings(tournament: &Tournament) -> Result<Settings, Finding> {
    let bad = |e: String| Finding {
        file: Some(EVENTS.to_owned()),
        at: Some(At::Event(1)),
        rule: None,
        error: format!("event 1: the games' settings: {e}"),
    };
    let settings: GameSettings =
        serde_json::from_value(tournament.spec().games.clone()).map_err(|e| bad(e.to_string()))?;
    Ok(Settings {
        rules: crate::api::parse::rules(Some(&settings.rules)).map_err(|e| bad(e.to_string()))?,
        time_control: crate::api::parse::time_control(Some(&settings.time_control))
            .map_err(|e| bad(e.to_string()))?,
    })
}

/// The audited game `id` is the tournament's: its opening names the
/// tournament and is rated as it is, and it is played by its rules and
/// clock.
fn belongs(
    game: &AuditedGame,
    scheduled: &ScheduledGame<'_>,
    tournament: &Tournament,
    settings: &Settings,
) -> Result<(), Finding> {
    let paths = GamePaths::of(&scheduled.id);
    let at_opening = |error: String| Finding {
        file: Some(paths.events.clone()),
        at: Some(At::Event(1)),
        rule: None,
        error: format!("event 1: {error}"),
    };
    if game.opened.tournament.as_deref() != Some(tournament.id()) {
        return Err(at_opening(format!(
            "the game's opening names tournament {:?}, not {}",
            game.opened.tournament,
            tournament.id()
        )));
    }
    // A game with a house bot rates nobody, even in a rated tournament.
    let rated = crate::tournaments::rated_game(tournament.spec(), &scheduled.seats);
    if game.opened.rated != rated {
        return Err(at_opening(format!(
            "the game is {}, the tournament {}{}",
            rated_word(game.opened.rated),
            rated_word(tournament.spec().rated),
            if rated != tournament.spec().rated {
                " and the game seats a house bot"
            } else {
                ""
            }
        )));
    }
    if game.record.rules != settings.rules || game.record.time_control != settings.time_control {
        return Err(Finding::file(
            Some(&paths.record),
            "its rules or time control are not the tournament's",
        ));
    }
    Ok(())
}

fn rated_word(rated: bool) -> &'static str {
    if rated { "rated" } else { "unrated" }
}

/// What the audited game says its result is: its ranking and scores, or
/// an abort.
fn result_of(game: &AuditedGame) -> GameResult {
    match game.game.ranking() {
        Some(ranks) => GameResult::Ranked {
            ranks,
            scores: game.game.scores().to_vec(),
        },
        None => GameResult::Aborted,
    }
}

fn describe(result: &GameResult) -> String {
    match result {
        GameResult::Ranked { ranks, scores } => format!("ranks {ranks:?}, scores {scores:?}"),
        GameResult::Aborted => "aborted".to_owned(),
    }
}

/// Every result the log records is its audited game's.
fn results(folded: &log::Folded, games: &BTreeMap<String, AuditedGame>) -> Result<(), Finding> {
    for scheduled in folded.tournament.games() {
        let Some(game) = games.get(&scheduled.id) else {
            continue;
        };
        let seq = folded.result_at.get(&scheduled.id).copied().unwrap_or(0);
        let Some(recorded) = scheduled.result else {
            return Err(Finding::file(
                Some(EVENTS),
                format!("game {} has no result in the log", scheduled.id),
            ));
        };
        let played = result_of(game);
        if *recorded != played {
            return Err(Finding {
                file: Some(EVENTS.to_owned()),
                at: Some(At::Event(seq)),
                rule: None,
                error: format!(
                    "event {seq}: the log records game {} as {}; the audited game ended {}",
                    scheduled.id,
                    describe(recorded),
                    describe(&played)
                ),
            });
        }
    }
    Ok(())
}

/// Every seat the server resigned because its player withdrew (the
/// resignation's request id `~withdrawn/<seat>`) is a player the log
/// withdraws before it records the game's result: the server resigns a
/// seat only once the withdrawal is stored, and the game's result only
/// after it ends. Returns how many seats there were.
fn withdrawals(folded: &log::Folded, games: &BTreeMap<String, AuditedGame>) -> Result<usize, Finding> {
    let mut resigned = 0;
    for scheduled in folded.tournament.games() {
        let Some(game) = games.get(&scheduled.id) else {
            continue;
        };
        let result = folded.result_at.get(&scheduled.id).copied().unwrap_or(0);
        for &(seat, seq) in &game.withdrawn {
            resigned += 1;
            let Some(player) = scheduled.seats.get(usize::from(seat.0)) else {
                return Err(Finding::file(
                    Some(&GamePaths::of(&scheduled.id).events),
                    format!(
                        "event {seq}: the server resigned seat {} for a withdrawal; the game has {} seats",
                        seat.0,
                        scheduled.seats.len()
                    ),
                ));
            };
            let resignation = format!(
                "game {}: the server resigned seat {} ({player}) for a withdrawal (event {seq} of its log)",
                scheduled.id, seat.0
            );
            match folded.withdrawn_at.get(player) {
                Some(&withdrawn) if withdrawn < result => {}
                Some(&withdrawn) => {
                    return Err(Finding {
                        file: Some(EVENTS.to_owned()),
                        at: Some(At::Event(withdrawn)),
                        rule: None,
                        error: format!(
                            "event {withdrawn}: {player} withdrawn after the result of game {} \
                             (event {result}); {resignation}",
                            scheduled.id
                        ),
                    });
                }
                None => {
                    return Err(Finding {
                        file: Some(EVENTS.to_owned()),
                        at: Some(At::Event(result)),
                        rule: None,
                        error: format!(
                            "event {result}: {resignation}, but the log withdraws {player} nowhere"
                        ),
                    });
                }
            }
        }
    }
    Ok(resigned)
}

/// Every game seats its table's players in the order the tournament gives
/// it, and is dealt the seed the tournament's seed gives it; with
/// duplicate bags, game g of a round is dealt alike at every table.
fn seats_and_seeds(tournament: &Tournament, games: &BTreeMap<String, AuditedGame>) -> Result<(), Finding> {
    let mut dealt: BTreeMap<(u32, u8), (String, [u8; 32])> = BTreeMap::new();
    for scheduled in tournament.games() {
        let Some(game) = games.get(&scheduled.id) else {
            continue;
        };
        let paths = GamePaths::of(&scheduled.id);
        let seats: Vec<String> = scheduled.seats.iter().map(ToString::to_string).collect();
        // A house bot's seat is a bot's at its level, any other its
        // registered player's (each list empty when it names nobody).
        let spec = tournament.spec();
        let listed = |per_seat: Vec<Option<String>>| {
            if per_seat.iter().any(Option::is_some) {
                per_seat
            } else {
                Vec::new()
            }
        };
        let accounts = listed(
            scheduled
                .seats
                .iter()
                .map(|p| (!spec.is_house_bot(p)).then(|| p.to_string()))
                .collect(),
        );
        let bots = listed(
            scheduled
                .seats
                .iter()
                .map(|p| spec.house_bots.get(p).cloned())
                .collect(),
        );
        if game.opened.bots != bots {
            return Err(Finding::file(
                Some(&paths.events),
                format!(
                    "event 1: its bot seats are {:?}; the tournament's house bots make them {bots:?}",
                    game.opened.bots
                ),
            ));
        }
        if game.record.players != seats || game.opened.accounts != accounts {
            return Err(Finding::file(
                Some(&paths.record),
                format!(
                    "its seats are {:?}; the tournament's log seats {seats:?} at round {} table {} \
                     game {}",
                    game.record.players, scheduled.round, scheduled.table, scheduled.index
                ),
            ));
        }
        if game.seed.0 != scheduled.seed {
            return Err(Finding::file(
                Some(&paths.seed),
                format!(
                    "not the seed the tournament's seed gives round {} table {} game {}",
                    scheduled.round, scheduled.table, scheduled.index
                ),
            ));
        }
        if tournament.spec().duplicate_bags {
            let key = (scheduled.round, scheduled.index);
            let (first, seed) = dealt
                .entry(key)
                .or_insert_with(|| (scheduled.id.clone(), game.seed.0));
            if *seed != game.seed.0 {
                return Err(Finding::file(
                    Some(&paths.seed),
                    format!(
                        "duplicate bags: not the seed of {first}, game {} of the same round {}",
                        scheduled.index, scheduled.round
                    ),
                ));
            }
        }
    }
    Ok(())
}
