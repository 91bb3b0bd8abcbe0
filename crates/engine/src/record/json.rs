//! The JSON shape of a record: parsed into validated types (with the JSON
//! path of the first problem), and written back one turn (and one timeline
//! entry) per line.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{
    Deploy, FORMAT, FinalMove, Interruption, Outcome, Placed, Record, RecordError, Redeploy, TimelineEntry,
    Turn,
};
use crate::clock::{MainTime, OnTimeout, TimeControl};
use crate::game::{Game, is_land};
use crate::geometry::{Place, Pos, Rotation};
use crate::model::{Ending, MAX_BAG, MAX_COORDINATE, MAX_PLAYERS, Quarter, Seat, Setup, Target};
use crate::rules::{Expansion, Farmers, Rules, SmallCity};
use crate::tiles::TileKind;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecord {
    format: String,
    #[serde(default)]
    rules: RawRules,
    players: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tiles: Option<BTreeMap<String, u16>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_control: Option<RawTimeControl>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created_at: Option<u64>,
    turns: Vec<RawTurn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_round: Option<Vec<RawFinalMove>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeline: Option<Vec<RawEntry>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_scores: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<RawResult>,
}

/// Durations in ms; an absent or zero `main_ms` or `decision_ms` is none.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimeControl {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    main_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    increment_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    decision_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    on_timeout: Option<String>,
}

/// A decision (`at` alone) or one interruption at `at`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resign: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    abort: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resume: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResult {
    ending: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seat: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ranks: Option<Vec<u8>>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    #[serde(default = "yes")]
    small_city: bool,
    #[serde(default = "default_farmers")]
    farmers: String,
    #[serde(default)]
    river: bool,
    #[serde(default)]
    count: bool,
}

fn yes() -> bool {
    true
}

fn default_farmers() -> String {
    Farmers::CityCentric4.name().to_owned()
}

impl Default for RawRules {
    fn default() -> RawRules {
        RawRules {
            small_city: true,
            farmers: default_farmers(),
            river: false,
            count: false,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTurn {
    tile: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    y: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rotation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    follower: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    discarded: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    abandoned: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redeploy: Option<Vec<RawRedeploy>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    carcassonne: Option<RawCarcassonne>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    x: i32,
    y: i32,
    at: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRedeploy {
    player: u8,
    to: RawTarget,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCarcassonne {
    quarter: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFinalMove {
    player: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    to: Option<RawTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pass: Option<bool>,
}

// ---- Reading -------------------------------------------------------------

impl Record {
    /// Parses a record from JSON text.
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw: RawRecord = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." || path == "?" {
                "$".to_owned()
            } else {
                format!("$.{path}")
            };
            RecordError::shape(path, e.inner().to_string())
        })?;
        Record::from_raw(raw)
    }

    fn from_raw(raw: RawRecord) -> Result<Record, RecordError> {
        if raw.format != FORMAT {
            return Err(RecordError::shape(
                "$.format",
                format!("expected \"{FORMAT}\", found {:?}", raw.format),
            ));
        }
        let rules = parse_rules(&raw.rules)?;
        let players = raw.players.len();
        let seat = |path: String, player: u8| {
            if (player as usize) < players.min(MAX_PLAYERS) {
                Ok(Seat(player))
            } else {
                Err(RecordError::shape(path, format!("no player has seat {player}")))
            }
        };
        let count = rules.has(Expansion::Count);
        let tiles = raw.tiles.map(parse_bag).transpose()?;
        let mut turns = Vec::with_capacity(raw.turns.len());
        for (i, t) in raw.turns.into_iter().enumerate() {
            turns.push(parse_turn(i, t, count, &seat)?);
        }
        let final_round = match raw.final_round {
            None => None,
            Some(_) if !count => {
                return Err(RecordError::shape(
                    "$.final_round",
                    "allowed only with \"count\": true",
                ));
            }
            Some(moves) => Some(
                moves
                    .into_iter()
                    .enumerate()
                    .map(|(i, m)| parse_final_move(i, m, &seat))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let time_control = raw.time_control.map(parse_time_control).transpose()?;
        if time_control.is_some() && raw.timeline.is_none() {
            return Err(RecordError::shape("$.timeline", "required with a time_control"));
        }
        if raw.timeline.is_some() && raw.created_at.is_none() {
            return Err(RecordError::shape("$.created_at", "required with a timeline"));
        }
        let timeline = raw
            .timeline
            .map(|entries| {
                entries
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| parse_entry(i, e, &seat))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let result = raw.result.map(|r| parse_result(r, &seat)).transpose()?;
        let record = Record {
            rules,
            players: raw.players,
            tiles,
            turns,
            final_round,
            final_scores: raw.final_scores,
            time_control,
            created_at: raw.created_at,
            timeline,
            result,
        };
        Game::check_setup(&record.setup())?;
        Ok(record)
    }

    /// The setup of the game this record plays: draws come from the record.
    pub fn setup(&self) -> Setup {
        Setup {
            rules: self.rules,
            players: self.players.clone(),
            tiles: self.tiles.clone(),
            seed: None,
            time_control: self.time_control,
        }
    }
}

/// The figures themselves are checked with the setup (T-1).
fn parse_time_control(raw: RawTimeControl) -> Result<TimeControl, RecordError> {
    let present = |ms: Option<u64>| ms.filter(|&ms| ms > 0);
    let increment_ms = raw.increment_ms.unwrap_or(0);
    let main = match present(raw.main_ms) {
        Some(initial_ms) => Some(MainTime {
            initial_ms,
            increment_ms,
        }),
        None if increment_ms > 0 => {
            return Err(RecordError::shape(
                "$.time_control.increment_ms",
                "an increment needs a main time (main_ms)",
            ));
        }
        None => None,
    };
    let on_timeout = match raw.on_timeout.as_deref() {
        None => OnTimeout::default(),
        Some(name) => OnTimeout::from_name(name).ok_or_else(|| {
            RecordError::shape(
                "$.time_control.on_timeout",
                format!("expected \"forfeit\" or \"auto\", found {name:?}"),
            )
        })?,
    };
    Ok(TimeControl {
        main,
        decision_ms: present(raw.decision_ms),
        on_timeout,
    })
}

fn parse_entry(i: usize, raw: RawEntry, seat: &SeatCheck) -> Result<TimelineEntry, RecordError> {
    let path = |field: &str| format!("$.timeline[{i}].{field}");
    let mut interruptions = Vec::with_capacity(1);
    if let Some(s) = raw.timeout {
        interruptions.push(Interruption::Timeout(seat(path("timeout"), s)?));
    }
    if let Some(s) = raw.resign {
        interruptions.push(Interruption::Resign(seat(path("resign"), s)?));
    }
    if let Some(s) = raw.abort {
        interruptions.push(Interruption::Abort(seat(path("abort"), s)?));
    }
    if let Some(down_since_ms) = raw.resume {
        interruptions.push(Interruption::Resume { down_since_ms });
    }
    if interruptions.len() > 1 {
        return Err(RecordError::shape(
            format!("$.timeline[{i}]"),
            "expected at most one of \"timeout\", \"resign\", \"abort\" and \"resume\"",
        ));
    }
    Ok(TimelineEntry {
        at: raw.at,
        interruption: interruptions.pop(),
    })
}

fn parse_result(raw: RawResult, seat: &SeatCheck) -> Result<Outcome, RecordError> {
    let named_seat = || {
        raw.seat
            .ok_or_else(|| RecordError::shape("$.result.seat", "missing field"))
            .and_then(|s| seat("$.result.seat".to_owned(), s))
    };
    let ending = match raw.ending.as_str() {
        "normal" if raw.seat.is_some() => {
            return Err(RecordError::shape(
                "$.result.seat",
                "a normal ending names no seat",
            ));
        }
        "normal" => Ending::Normal,
        "out_of_time" => Ending::OutOfTime(named_seat()?),
        "resigned" => Ending::Resigned(named_seat()?),
        "aborted" => Ending::Aborted(named_seat()?),
        other => {
            return Err(RecordError::shape(
                "$.result.ending",
                format!("expected \"normal\", \"out_of_time\", \"resigned\" or \"aborted\", found {other:?}"),
            ));
        }
    };
    let ranks = match (ending, raw.ranks) {
        (Ending::Aborted(_), Some(_)) => {
            return Err(RecordError::shape(
                "$.result.ranks",
                "an aborted game has no ranking",
            ));
        }
        (Ending::Aborted(_), None) => None,
        (_, None) => return Err(RecordError::shape("$.result.ranks", "missing field")),
        (_, ranks) => ranks,
    };
    Ok(Outcome { ending, ranks })
}

fn parse_rules(raw: &RawRules) -> Result<Rules, RecordError> {
    let farmers = Farmers::from_name(&raw.farmers).ok_or_else(|| {
        RecordError::shape(
            "$.rules.farmers",
            format!(
                "expected \"city_centric_4\" or \"farm_centric_3\", found {:?}",
                raw.farmers
            ),
        )
    })?;
    let mut rules = Rules::default();
    rules.small_city = if raw.small_city {
        SmallCity::Halved
    } else {
        SmallCity::Normal
    };
    rules.farmers = farmers;
    if raw.river {
        rules = rules.with(Expansion::River);
    }
    if raw.count {
        rules = rules.with(Expansion::Count);
    }
    Ok(rules)
}

fn parse_bag(map: BTreeMap<String, u16>) -> Result<Vec<(TileKind, u16)>, RecordError> {
    let mut tiles = Vec::new();
    for (name, count) in map {
        let path = format!("$.tiles.{name}");
        let kind = TileKind::from_name(&name)
            .ok_or_else(|| RecordError::shape(&path, format!("unknown tile kind {name:?}")))?;
        if !is_land(kind) {
            return Err(RecordError::shape(&path, format!("{name} is not a land tile")));
        }
        tiles.push((kind, count));
    }
    let total: usize = tiles.iter().map(|&(_, count)| usize::from(count)).sum();
    if total > MAX_BAG {
        return Err(RecordError::shape(
            "$.tiles",
            format!("a bag holds at most {MAX_BAG} tiles, not {total}"),
        ));
    }
    tiles.sort();
    Ok(tiles)
}

/// A position within the limits of records ([`MAX_COORDINATE`]), so that
/// no arithmetic on it can overflow; `path` names its `x`/`y` fields.
fn parse_pos(path: impl Fn(&str) -> String, x: i32, y: i32) -> Result<Pos, RecordError> {
    for (field, value) in [("x", x), ("y", y)] {
        if !(-MAX_COORDINATE..=MAX_COORDINATE).contains(&value) {
            return Err(RecordError::shape(
                path(field),
                format!("coordinates lie within -{MAX_COORDINATE}..={MAX_COORDINATE}, not {value}"),
            ));
        }
    }
    Ok(Pos::new(x, y))
}

fn parse_place(path: String, name: &str) -> Result<Place, RecordError> {
    Place::from_name(name).ok_or_else(|| {
        RecordError::shape(
            path,
            format!("expected N, E, S, W, a half-edge (Nw, Ne, En, Es, Se, Sw, Ws, Wn) or cloister, found {name:?}"),
        )
    })
}

fn parse_target(path: String, raw: &RawTarget) -> Result<Target, RecordError> {
    let pos = parse_pos(|field| format!("{path}.{field}"), raw.x, raw.y)?;
    let place = parse_place(format!("{path}.at"), &raw.at)?;
    Ok(Target { pos, place })
}

fn parse_quarter(path: String, name: &str) -> Result<Quarter, RecordError> {
    Quarter::from_name(name).ok_or_else(|| {
        RecordError::shape(
            path,
            format!("expected castle, blacksmith, cathedral or market, found {name:?}"),
        )
    })
}

type SeatCheck<'a> = dyn Fn(String, u8) -> Result<Seat, RecordError> + 'a;

fn parse_turn(i: usize, raw: RawTurn, count: bool, seat: &SeatCheck) -> Result<Turn, RecordError> {
    let path = |field: &str| format!("$.turns[{i}].{field}");
    let tile = TileKind::from_name(&raw.tile)
        .ok_or_else(|| RecordError::shape(path("tile"), format!("unknown tile kind {:?}", raw.tile)))?;
    for (field, present) in [
        ("redeploy", raw.redeploy.is_some()),
        ("carcassonne", raw.carcassonne.is_some()),
    ] {
        if present && !count {
            return Err(RecordError::shape(
                path(field),
                "allowed only with \"count\": true",
            ));
        }
    }
    if raw.abandoned == Some(true) {
        for (field, present) in [
            ("x", raw.x.is_some()),
            ("y", raw.y.is_some()),
            ("rotation", raw.rotation.is_some()),
            ("follower", raw.follower.is_some()),
            ("discarded", raw.discarded.is_some()),
            ("redeploy", raw.redeploy.is_some()),
            ("carcassonne", raw.carcassonne.is_some()),
        ] {
            if present {
                return Err(RecordError::shape(
                    path(field),
                    "an abandoned tile has no placement",
                ));
            }
        }
        return Ok(Turn::Abandoned { tile });
    }
    if raw.discarded == Some(true) {
        for (field, present) in [
            ("x", raw.x.is_some()),
            ("y", raw.y.is_some()),
            ("rotation", raw.rotation.is_some()),
            ("follower", raw.follower.is_some()),
            ("abandoned", raw.abandoned.is_some()),
            ("redeploy", raw.redeploy.is_some()),
            ("carcassonne", raw.carcassonne.is_some()),
        ] {
            if present {
                return Err(RecordError::shape(
                    path(field),
                    "a discarded tile has no placement",
                ));
            }
        }
        return Ok(Turn::Discarded { tile });
    }
    let x = raw
        .x
        .ok_or_else(|| RecordError::shape(path("x"), "missing field"))?;
    let y = raw
        .y
        .ok_or_else(|| RecordError::shape(path("y"), "missing field"))?;
    let pos = parse_pos(path, x, y)?;
    let degrees = raw
        .rotation
        .ok_or_else(|| RecordError::shape(path("rotation"), "missing field"))?;
    let rotation = Rotation::from_degrees(degrees).ok_or_else(|| {
        RecordError::shape(
            path("rotation"),
            format!("expected 0, 90, 180 or 270, found {degrees}"),
        )
    })?;
    let follower = raw
        .follower
        .map(|name| parse_place(path("follower"), &name))
        .transpose()?;
    let mut placed = Placed::new(tile, pos, rotation, follower);
    for (j, r) in raw.redeploy.into_iter().flatten().enumerate() {
        let at = path(&format!("redeploy[{j}]"));
        placed.redeploy.push(Redeploy {
            player: seat(format!("{at}.player"), r.player)?,
            to: parse_target(format!("{at}.to"), &r.to)?,
        });
    }
    if let Some(c) = raw.carcassonne {
        let quarter = parse_quarter(path("carcassonne.quarter"), &c.quarter)?;
        let count = c
            .count
            .map(|q| parse_quarter(path("carcassonne.count"), &q))
            .transpose()?;
        placed.carcassonne = Some(Deploy { quarter, count });
    }
    Ok(Turn::Placed(placed))
}

fn parse_final_move(i: usize, raw: RawFinalMove, seat: &SeatCheck) -> Result<FinalMove, RecordError> {
    let path = format!("$.final_round[{i}]");
    let player = seat(format!("{path}.player"), raw.player)?;
    match (raw.to, raw.pass) {
        (Some(to), None | Some(false)) => Ok(FinalMove::Move {
            player,
            to: parse_target(format!("{path}.to"), &to)?,
        }),
        (None, Some(true)) => Ok(FinalMove::Pass { player }),
        _ => Err(RecordError::shape(
            path,
            "expected either \"to\" or \"pass\": true",
        )),
    }
}

// ---- Writing -------------------------------------------------------------

/// Compact JSON of a plain value; serializing these cannot fail.
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn raw_target(t: Target) -> RawTarget {
    RawTarget {
        x: t.pos.x,
        y: t.pos.y,
        at: t.place.name().to_owned(),
    }
}

impl Record {
    /// The record as JSON text: one line per turn, so that diffs and
    /// reviews read turn by turn.
    pub fn to_json(&self) -> String {
        let rules = RawRules {
            small_city: self.rules.small_city == SmallCity::Halved,
            farmers: self.rules.farmers.name().to_owned(),
            river: self.rules.has(Expansion::River),
            count: self.rules.has(Expansion::Count),
        };
        let mut out = String::from("{\n");
        let _ = writeln!(out, "  \"format\": {},", json(FORMAT));
        let _ = writeln!(out, "  \"rules\": {},", json(&rules));
        let _ = writeln!(out, "  \"players\": {},", json(&self.players));
        if let Some(tiles) = &self.tiles {
            // Catalogue order reads better than alphabetical.
            let body: Vec<String> = tiles
                .iter()
                .map(|(k, c)| format!("{}: {c}", json(k.name())))
                .collect();
            let _ = writeln!(out, "  \"tiles\": {{{}}},", body.join(", "));
        }
        if let Some(control) = &self.time_control {
            let _ = writeln!(out, "  \"time_control\": {},", json(&raw_time_control(control)));
        }
        if let Some(created_at) = self.created_at {
            let _ = writeln!(out, "  \"created_at\": {created_at},");
        }
        out.push_str("  \"turns\": [");
        write_lines(&mut out, self.turns.iter().map(|t| json(&raw_turn(t))));
        if let Some(moves) = &self.final_round {
            out.push_str(",\n  \"final_round\": [");
            write_lines(&mut out, moves.iter().map(|m| json(&raw_final_move(m))));
        }
        if let Some(timeline) = &self.timeline {
            out.push_str(",\n  \"timeline\": [");
            write_lines(&mut out, timeline.iter().map(|e| json(&raw_entry(e))));
        }
        if let Some(scores) = &self.final_scores {
            let _ = write!(out, ",\n  \"final_scores\": {}", json(scores));
        }
        if let Some(result) = &self.result {
            let _ = write!(out, ",\n  \"result\": {}", json(&raw_result(result)));
        }
        out.push_str("\n}\n");
        out
    }
}

fn raw_time_control(control: &TimeControl) -> RawTimeControl {
    RawTimeControl {
        main_ms: control.main.map(|m| m.initial_ms),
        increment_ms: control.main.map(|m| m.increment_ms),
        decision_ms: control.decision_ms,
        on_timeout: Some(control.on_timeout.name().to_owned()),
    }
}

fn raw_entry(entry: &TimelineEntry) -> RawEntry {
    let mut raw = RawEntry {
        at: entry.at,
        ..RawEntry::default()
    };
    match entry.interruption {
        None => {}
        Some(Interruption::Timeout(seat)) => raw.timeout = Some(seat.0),
        Some(Interruption::Resign(seat)) => raw.resign = Some(seat.0),
        Some(Interruption::Abort(seat)) => raw.abort = Some(seat.0),
        Some(Interruption::Resume { down_since_ms }) => raw.resume = Some(down_since_ms),
    }
    raw
}

fn raw_result(outcome: &Outcome) -> RawResult {
    RawResult {
        ending: outcome.ending.name().to_owned(),
        seat: outcome.ending.seat().map(|s| s.0),
        ranks: outcome.ranks.clone(),
    }
}

fn write_lines(out: &mut String, lines: impl Iterator<Item = String>) {
    let mut empty = true;
    for (i, line) in lines.enumerate() {
        out.push_str(if i == 0 { "\n    " } else { ",\n    " });
        out.push_str(&line);
        empty = false;
    }
    out.push_str(if empty { "]" } else { "\n  ]" });
}

fn raw_turn(turn: &Turn) -> RawTurn {
    match turn {
        Turn::Discarded { tile } => RawTurn {
            tile: tile.name().to_owned(),
            discarded: Some(true),
            ..RawTurn::default()
        },
        Turn::Abandoned { tile } => RawTurn {
            tile: tile.name().to_owned(),
            abandoned: Some(true),
            ..RawTurn::default()
        },
        Turn::Placed(p) => RawTurn {
            tile: p.tile.name().to_owned(),
            x: Some(p.pos.x),
            y: Some(p.pos.y),
            rotation: Some(i64::from(p.rotation.degrees())),
            follower: p.follower.map(|f| f.name().to_owned()),
            discarded: None,
            abandoned: None,
            redeploy: (!p.redeploy.is_empty()).then(|| {
                p.redeploy
                    .iter()
                    .map(|r| RawRedeploy {
                        player: r.player.0,
                        to: raw_target(r.to),
                    })
                    .collect()
            }),
            carcassonne: p.carcassonne.map(|d| RawCarcassonne {
                quarter: d.quarter.name().to_owned(),
                count: d.count.map(|q| q.name().to_owned()),
            }),
        },
    }
}

fn raw_final_move(m: &FinalMove) -> RawFinalMove {
    match *m {
        FinalMove::Move { player, to } => RawFinalMove {
            player: player.0,
            to: Some(raw_target(to)),
            pass: None,
        },
        FinalMove::Pass { player } => RawFinalMove {
            player: player.0,
            to: None,
            pass: Some(true),
        },
    }
}
