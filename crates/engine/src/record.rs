//! Game records, `carcassonne-record/1` of `record-format.md`: reading
//! (with the JSON path of the first problem), replaying through the rules
//! (with the turn index and rule id of the first illegal turn), and
//! writing a game's events back as a record.
//!
//! This module is the one boundary between records and the engine: the
//! raw JSON shape is parsed into validated types here, and nowhere else.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::game::Game;
use crate::geometry::{Place, Pos, Rotation};
use crate::model::{Actor, Command, Effect, Event, Pending, PlayError, Setup, SetupError};
use crate::rules::{Expansion, Farmers, RuleId, Rules, SmallCity, id};
use crate::tiles::TileKind;

/// The `format` of every record this module reads and writes.
pub const FORMAT: &str = "carcassonne-record/1";

/// A record, parsed and validated in shape (not yet replayed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub rules: Rules,
    pub players: Vec<String>,
    /// A bag of one's own (`tiles`), in catalogue order.
    pub tiles: Option<Vec<(TileKind, u16)>>,
    pub turns: Vec<Turn>,
    /// The scores the record claims, checked by [`Record::verify`].
    pub final_scores: Option<Vec<u32>>,
}

/// One drawn tile and what became of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// The tile fit nowhere (B-T2).
    Discarded { tile: TileKind },
    Placed {
        tile: TileKind,
        pos: Pos,
        rotation: Rotation,
        follower: Option<Place>,
    },
}

impl Turn {
    pub fn tile(&self) -> TileKind {
        match *self {
            Turn::Discarded { tile } | Turn::Placed { tile, .. } => tile,
        }
    }
}

/// Why a record was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Not JSON, or not of the record's shape: the JSON path of the problem.
    #[error("{path}: {message}")]
    Shape { path: String, message: String },
    /// A turn breaks a rule; errors of `final_round` have the index equal
    /// to the number of turns.
    #[error("turn {turn}: {rule}: {message}")]
    Rule {
        turn: usize,
        rule: RuleId,
        message: String,
    },
    /// The turns are legal but break the record's own logic (a discard
    /// that was not one, a decision out of place).
    #[error("turn {turn}: {message}")]
    Turn { turn: usize, message: String },
    #[error("players: {0}")]
    Setup(#[from] SetupError),
    #[error("final_scores: the record claims {claimed:?}, but its turns score {actual:?}")]
    WrongScores { claimed: Vec<u32>, actual: Vec<u32> },
}

impl RecordError {
    fn shape(path: impl Into<String>, message: impl Into<String>) -> RecordError {
        RecordError::Shape {
            path: path.into(),
            message: message.into(),
        }
    }
}

// ---- The raw JSON shape --------------------------------------------------

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecord {
    format: String,
    #[serde(default)]
    rules: RawRules,
    players: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tiles: Option<BTreeMap<String, u16>>,
    turns: Vec<RawTurn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_round: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_scores: Option<Vec<u32>>,
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

#[derive(Debug, Serialize, Deserialize)]
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
    redeploy: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    carcassonne: Option<serde_json::Value>,
}

// ---- Reading -------------------------------------------------------------

impl Record {
    /// Parses a record from JSON text.
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw: RawRecord = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let message = e.inner().to_string();
            RecordError::shape(
                if path == "." || path == "?" {
                    "$".to_owned()
                } else {
                    format!("$.{path}")
                },
                message,
            )
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
        let farmers = Farmers::from_name(&raw.rules.farmers).ok_or_else(|| {
            RecordError::shape(
                "$.rules.farmers",
                format!(
                    "expected \"city_centric_4\" or \"farm_centric_3\", found {:?}",
                    raw.rules.farmers
                ),
            )
        })?;
        let mut rules = Rules::default();
        rules.small_city = if raw.rules.small_city {
            SmallCity::Halved
        } else {
            SmallCity::Normal
        };
        rules.farmers = farmers;
        if raw.rules.river {
            rules = rules.with(Expansion::River);
        }
        if raw.rules.count {
            return Err(RecordError::shape(
                "$.rules.count",
                "The Count of Carcassonne is not supported yet",
            ));
        }
        if raw.final_round.is_some() {
            return Err(RecordError::shape(
                "$.final_round",
                "allowed only with \"count\": true",
            ));
        }
        let tiles = match raw.tiles {
            None => None,
            Some(map) => {
                let mut tiles = Vec::new();
                for (name, count) in map {
                    let path = format!("$.tiles.{name}");
                    let kind = TileKind::from_name(&name)
                        .ok_or_else(|| RecordError::shape(&path, format!("unknown tile kind {name:?}")))?;
                    if !crate::game::is_land(kind) {
                        return Err(RecordError::shape(&path, format!("{name} is not a land tile")));
                    }
                    tiles.push((kind, count));
                }
                tiles.sort();
                Some(tiles)
            }
        };
        let turns = raw
            .turns
            .into_iter()
            .enumerate()
            .map(|(i, t)| parse_turn(i, t))
            .collect::<Result<Vec<_>, _>>()?;
        let record = Record {
            rules,
            players: raw.players,
            tiles,
            turns,
            final_scores: raw.final_scores,
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
        }
    }
}

fn parse_turn(i: usize, raw: RawTurn) -> Result<Turn, RecordError> {
    let path = |field: &str| format!("$.turns[{i}].{field}");
    let tile = TileKind::from_name(&raw.tile)
        .ok_or_else(|| RecordError::shape(path("tile"), format!("unknown tile kind {:?}", raw.tile)))?;
    if raw.redeploy.is_some() {
        return Err(RecordError::shape(
            path("redeploy"),
            "allowed only with \"count\": true",
        ));
    }
    if raw.carcassonne.is_some() {
        return Err(RecordError::shape(
            path("carcassonne"),
            "allowed only with \"count\": true",
        ));
    }
    if raw.discarded == Some(true) {
        for (field, present) in [
            ("x", raw.x.is_some()),
            ("y", raw.y.is_some()),
            ("rotation", raw.rotation.is_some()),
            ("follower", raw.follower.is_some()),
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
    let degrees = raw
        .rotation
        .ok_or_else(|| RecordError::shape(path("rotation"), "missing field"))?;
    let rotation = Rotation::from_degrees(degrees).ok_or_else(|| {
        RecordError::shape(
            path("rotation"),
            format!("expected 0, 90, 180 or 270, found {degrees}"),
        )
    })?;
    let follower = match raw.follower {
        None => None,
        Some(name) => Some(Place::from_name(&name).ok_or_else(|| {
            RecordError::shape(
                path("follower"),
                format!("expected N, E, S, W, a half-edge (Nw, Ne, En, Es, Se, Sw, Ws, Wn) or cloister, found {name:?}"),
            )
        })?),
    };
    Ok(Turn::Placed {
        tile,
        pos: Pos::new(x, y),
        rotation,
        follower,
    })
}

// ---- Replaying -----------------------------------------------------------

/// A record played through the engine.
#[derive(Debug, Clone)]
pub struct Replay {
    pub game: Game,
    pub events: Vec<Event>,
    /// Every effect, with the index of the turn that caused it.
    pub effects: Vec<(usize, Effect)>,
}

impl Record {
    /// Plays every turn through the rules. The first illegal turn is an
    /// error naming its index and rule.
    pub fn replay(&self) -> Result<Replay, RecordError> {
        let setup = self.setup();
        Game::check_setup(&setup)?;
        let mut game = Game::new(setup.clone());
        let mut events = vec![Event::Created(setup)];
        let mut effects = Vec::new();
        let mut tagged = Vec::new();
        for (turn, entry) in self.turns.iter().enumerate() {
            let at = |e| turn_error(turn, e);
            let player = match game.pending() {
                Pending::Draw { player } => player,
                Pending::Finished => {
                    return Err(RecordError::Rule {
                        turn,
                        rule: id::B_E1,
                        message: "the game is over: every tile was drawn".to_owned(),
                    });
                }
                other => {
                    return Err(RecordError::Turn {
                        turn,
                        message: format!("unexpected {}", other.name()),
                    });
                }
            };
            let drawn = game
                .execute(Actor::Dealer, &Command::Draw(entry.tile()), &mut effects)
                .map_err(at)?;
            let discarded = effects.iter().any(|e| matches!(e, Effect::Discarded(_)));
            events.extend(drawn);
            match *entry {
                Turn::Discarded { tile } => {
                    if !discarded {
                        let example = game
                            .legal_placements()
                            .first()
                            .map(|p| format!(" (e.g. at {} rotation {})", p.pos, p.rotation));
                        return Err(RecordError::Rule {
                            turn,
                            rule: id::B_T2,
                            message: format!(
                                "{tile} can be placed{}, so it is not discarded",
                                example.unwrap_or_default()
                            ),
                        });
                    }
                }
                Turn::Placed {
                    tile,
                    pos,
                    rotation,
                    follower,
                } => {
                    if discarded {
                        return Err(RecordError::Rule {
                            turn,
                            rule: id::B_T2,
                            message: format!(
                                "{tile} fits nowhere: it must be discarded, not placed at {pos}"
                            ),
                        });
                    }
                    let actor = Actor::Seat(player);
                    let placed = game
                        .execute(actor, &Command::PlaceTile { pos, rotation }, &mut effects)
                        .map_err(at)?;
                    events.extend(placed);
                    let deployed = game
                        .execute(actor, &Command::PlaceFollower(follower), &mut effects)
                        .map_err(at)?;
                    events.extend(deployed);
                }
            }
            tagged.extend(effects.drain(..).map(|e| (turn, e)));
        }
        Ok(Replay {
            game,
            events,
            effects: tagged,
        })
    }

    /// Replays the record and checks its claimed `final_scores`.
    pub fn verify(&self) -> Result<Replay, RecordError> {
        let replay = self.replay()?;
        if let Some(claimed) = &self.final_scores {
            let actual = replay.game.scores().to_vec();
            if *claimed != actual {
                return Err(RecordError::WrongScores {
                    claimed: claimed.clone(),
                    actual,
                });
            }
        }
        Ok(replay)
    }
}

fn turn_error(turn: usize, error: PlayError) -> RecordError {
    match error {
        PlayError::Rule { rule, message } => RecordError::Rule { turn, rule, message },
        other => RecordError::Turn {
            turn,
            message: other.to_string(),
        },
    }
}

// ---- Writing -------------------------------------------------------------

impl Record {
    /// The record of a game, from its events. Draws that fit nowhere are
    /// written as discards. Claims the game's current scores when it is
    /// finished.
    pub fn from_events(events: &[Event]) -> Option<Record> {
        let Some(Event::Created(setup)) = events.first() else {
            return None;
        };
        let mut game = Game::new(setup.clone());
        let mut turns = Vec::new();
        let mut effects = Vec::new();
        for event in &events[1..] {
            effects.clear();
            game.apply_observed(event, &mut effects);
            match *event {
                Event::Drawn(tile) => {
                    let discarded = effects.iter().any(|e| matches!(e, Effect::Discarded(_)));
                    turns.push(if discarded {
                        Turn::Discarded { tile }
                    } else {
                        Turn::Placed {
                            tile,
                            pos: Pos::ORIGIN,
                            rotation: Rotation::R0,
                            follower: None,
                        }
                    });
                }
                Event::TilePlaced { pos: p, rotation: r } => {
                    if let Some(Turn::Placed { pos, rotation, .. }) = turns.last_mut() {
                        (*pos, *rotation) = (p, r);
                    }
                }
                Event::FollowerPlaced(place) => {
                    if let Some(Turn::Placed { follower, .. }) = turns.last_mut() {
                        *follower = place;
                    }
                }
                Event::Created(_) => {}
            }
        }
        Some(Record {
            rules: setup.rules,
            players: setup.players.clone(),
            tiles: setup.tiles.clone(),
            turns,
            final_scores: game.is_finished().then(|| game.scores().to_vec()),
        })
    }

    /// The record as JSON text: one line per turn, so that diffs and
    /// reviews read turn by turn.
    pub fn to_json(&self) -> String {
        let raw = self.to_raw();
        let mut out = String::from("{\n");
        let _ = writeln!(out, "  \"format\": {},", json(&raw.format));
        let _ = writeln!(out, "  \"rules\": {},", json(&raw.rules));
        let _ = writeln!(out, "  \"players\": {},", json(&raw.players));
        if let Some(tiles) = &raw.tiles {
            // Catalogue order reads better than alphabetical ("R" < "RL").
            let body: Vec<String> = self
                .tiles
                .iter()
                .flatten()
                .map(|(k, c)| format!("{}: {c}", json(&k.name().to_owned())))
                .collect();
            debug_assert_eq!(body.len(), tiles.len());
            let _ = writeln!(out, "  \"tiles\": {{{}}},", body.join(", "));
        }
        out.push_str("  \"turns\": [");
        for (i, turn) in raw.turns.iter().enumerate() {
            out.push_str(if i == 0 { "\n    " } else { ",\n    " });
            out.push_str(&json(turn));
        }
        out.push_str(if raw.turns.is_empty() { "]" } else { "\n  ]" });
        if let Some(scores) = &raw.final_scores {
            let _ = write!(out, ",\n  \"final_scores\": {}", json(scores));
        }
        out.push_str("\n}\n");
        out
    }

    fn to_raw(&self) -> RawRecord {
        RawRecord {
            format: FORMAT.to_owned(),
            rules: RawRules {
                small_city: self.rules.small_city == SmallCity::Halved,
                farmers: self.rules.farmers.name().to_owned(),
                river: self.rules.has(Expansion::River),
                count: self.rules.has(Expansion::Count),
            },
            players: self.players.clone(),
            tiles: self
                .tiles
                .as_ref()
                .map(|t| t.iter().map(|(k, c)| (k.name().to_owned(), *c)).collect()),
            turns: self.turns.iter().map(raw_turn).collect(),
            final_round: None,
            final_scores: self.final_scores.clone(),
        }
    }
}

fn raw_turn(turn: &Turn) -> RawTurn {
    let blank = |tile: TileKind| RawTurn {
        tile: tile.name().to_owned(),
        x: None,
        y: None,
        rotation: None,
        follower: None,
        discarded: None,
        redeploy: None,
        carcassonne: None,
    };
    match *turn {
        Turn::Discarded { tile } => RawTurn {
            discarded: Some(true),
            ..blank(tile)
        },
        Turn::Placed {
            tile,
            pos,
            rotation,
            follower,
        } => RawTurn {
            x: Some(pos.x),
            y: Some(pos.y),
            rotation: Some(i64::from(rotation.degrees())),
            follower: follower.map(|p| p.name().to_owned()),
            ..blank(tile)
        },
    }
}

/// Compact JSON of a plain value; serializing these cannot fail.
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
