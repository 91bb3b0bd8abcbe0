//! The stable binary encoding of events, schema version 1.
//!
//! Stored games depend on it: an encoding, once released, is never
//! changed; a new one gets a new schema version, and [`decode`] keeps
//! reading every old one.
//!
//! Schema 1, all integers little-endian:
//!
//! | event | bytes |
//! |---|---|
//! | `Created` | `1`, small_city `u8` (1 halved, 0 normal), farmers `u8` (0 city_centric_4, 1 farm_centric_3), expansions `u8` (bit 0 river, bit 1 count), players `u8` then each a string, bag `u8` (0 default, 1 custom: `u16` kinds, each a string and a `u16` count), seed `u8` (0 none, 1 then 32 bytes) |
//! | `Drawn` | `2`, tile kind as a string |
//! | `TilePlaced` | `3`, x `i32`, y `i32`, rotation `u8` (quarter turns) |
//! | `FollowerPlaced` | `4`, place `u8`: 0 none, 1-4 edge N E S W, 5-12 half-edge Nw..Wn, 13 cloister |
//! | `FollowerMoved` | `5`, x `i32`, y `i32`, place `u8` (as above, never 0) |
//! | `Passed` | `6` |
//! | `DeployedToCarcassonne` | `7`, quarter `u8` (0 castle, 1 blacksmith, 2 cathedral, 3 market), count `u8` (0 stays, 1-4 to quarter 0-3) |
//! | `Created` with a time control | `8`, then as `1`, then the time control: main `u8` (0 none, 1 then initial `u64` and increment `u64`, ms), per decision `u8` (0 none, 1 then `u64` ms), on timeout `u8` (0 forfeit, 1 auto) |
//! | `TimedOut` | `9`, seat `u8` |
//! | `Resigned` | `10`, seat `u8` |
//! | `Aborted` | `11`, seat `u8` |
//! | `Resumed` | `12`, down since `u64` (ms since the Unix epoch) |
//!
//! A game without a time control is created with tag `1`, so its bytes are
//! those of every game stored before time controls existed.
//!
//! A string is a `u16` length and UTF-8 bytes. Tile kinds are written by
//! their names in `docs/tiles.md`, which never change.

use crate::clock::{MainTime, OnTimeout, TimeControl};
use crate::geometry::{Dir, Half, Place, Pos, Rotation};
use crate::model::{Event, Quarter, Seat, Setup, Target};
use crate::rules::{Expansion, Farmers, Rules, SmallCity};
use crate::shuffle::Seed;
use crate::tiles::TileKind;

/// The schema version [`encode`] writes.
pub const SCHEMA: u16 = 1;

/// Why stored bytes are not an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("unknown event schema version {0}")]
    UnknownSchema(u16),
    #[error("event truncated at byte {0}")]
    Truncated(usize),
    #[error("unknown event tag {0}")]
    UnknownTag(u8),
    #[error("invalid {what} at byte {at}")]
    Invalid { what: &'static str, at: usize },
    #[error("{0} bytes left over after the event")]
    TrailingBytes(usize),
}

/// Encodes an event in the current schema.
pub fn encode(event: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    match event {
        Event::Created(setup) => {
            out.push(if setup.time_control.is_some() { 8 } else { 1 });
            out.push(u8::from(setup.rules.small_city == SmallCity::Halved));
            out.push(match setup.rules.farmers {
                Farmers::CityCentric4 => 0,
                Farmers::FarmCentric3 => 1,
            });
            let expansions = setup
                .rules
                .expansions()
                .fold(0u8, |acc, e| acc | 1 << expansion_bit(e));
            out.push(expansions);
            out.push(setup.players.len() as u8);
            for name in &setup.players {
                put_str(&mut out, name);
            }
            match &setup.tiles {
                None => out.push(0),
                Some(tiles) => {
                    out.push(1);
                    out.extend((tiles.len() as u16).to_le_bytes());
                    for (kind, count) in tiles {
                        put_str(&mut out, kind.name());
                        out.extend(count.to_le_bytes());
                    }
                }
            }
            match &setup.seed {
                None => out.push(0),
                Some(seed) => {
                    out.push(1);
                    out.extend(seed.0);
                }
            }
            if let Some(control) = &setup.time_control {
                put_time_control(&mut out, control);
            }
        }
        Event::Drawn(tile) => {
            out.push(2);
            put_str(&mut out, tile.name());
        }
        Event::TilePlaced { pos, rotation } => {
            out.push(3);
            out.extend(pos.x.to_le_bytes());
            out.extend(pos.y.to_le_bytes());
            out.push(rotation.index() as u8);
        }
        Event::FollowerPlaced(place) => {
            out.push(4);
            out.push(place.map_or(0, place_code));
        }
        Event::FollowerMoved(target) => {
            out.push(5);
            out.extend(target.pos.x.to_le_bytes());
            out.extend(target.pos.y.to_le_bytes());
            out.push(place_code(target.place));
        }
        Event::Passed => out.push(6),
        Event::DeployedToCarcassonne { quarter, count } => {
            out.push(7);
            out.push(quarter.index() as u8);
            out.push(count.map_or(0, |q| 1 + q.index() as u8));
        }
        Event::TimedOut(seat) => out.extend([9, seat.0]),
        Event::Resigned(seat) => out.extend([10, seat.0]),
        Event::Aborted(seat) => out.extend([11, seat.0]),
        Event::Resumed { down_since_ms } => {
            out.push(12);
            out.extend(down_since_ms.to_le_bytes());
        }
    }
    out
}

fn put_time_control(out: &mut Vec<u8>, control: &TimeControl) {
    match control.main {
        None => out.push(0),
        Some(main) => {
            out.push(1);
            out.extend(main.initial_ms.to_le_bytes());
            out.extend(main.increment_ms.to_le_bytes());
        }
    }
    match control.decision_ms {
        None => out.push(0),
        Some(ms) => {
            out.push(1);
            out.extend(ms.to_le_bytes());
        }
    }
    out.push(match control.on_timeout {
        OnTimeout::Forfeit => 0,
        OnTimeout::Auto => 1,
    });
}

fn place_code(place: Place) -> u8 {
    match place {
        Place::Edge(d) => 1 + d.index() as u8,
        Place::Half(h) => 5 + h.index() as u8,
        Place::Cloister => 13,
    }
}

const fn expansion_bit(e: Expansion) -> u8 {
    match e {
        Expansion::River => 0,
        Expansion::Count => 1,
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    let bytes = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
    out.extend((bytes.len() as u16).to_le_bytes());
    out.extend(bytes);
}

/// Decodes an event written with schema version `schema`.
pub fn decode(schema: u16, bytes: &[u8]) -> Result<Event, DecodeError> {
    if schema != 1 {
        return Err(DecodeError::UnknownSchema(schema));
    }
    let mut r = Reader { bytes, at: 0 };
    let event = match r.u8()? {
        tag @ (1 | 8) => {
            let mut rules = Rules::default();
            rules.small_city = if r.u8()? == 1 {
                SmallCity::Halved
            } else {
                SmallCity::Normal
            };
            rules.farmers = match r.u8()? {
                0 => Farmers::CityCentric4,
                1 => Farmers::FarmCentric3,
                _ => return Err(r.invalid("farmers option")),
            };
            let expansions = r.u8()?;
            for e in Expansion::ALL {
                if expansions & (1 << expansion_bit(e)) != 0 {
                    rules = rules.with(e);
                }
            }
            let players = (0..r.u8()?).map(|_| r.string()).collect::<Result<Vec<_>, _>>()?;
            let tiles = match r.u8()? {
                0 => None,
                1 => {
                    let n = r.u16()?;
                    let mut tiles = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        tiles.push((r.tile()?, r.u16()?));
                    }
                    Some(tiles)
                }
                _ => return Err(r.invalid("bag flag")),
            };
            let seed = match r.u8()? {
                0 => None,
                1 => Some(Seed(r.take(32)?.try_into().map_err(|_| r.invalid("seed"))?)),
                _ => return Err(r.invalid("seed flag")),
            };
            let time_control = if tag == 8 { Some(r.time_control()?) } else { None };
            let setup = Setup {
                rules,
                players,
                tiles,
                seed,
                time_control,
            };
            crate::Game::check_setup(&setup).map_err(|_| r.invalid("setup"))?;
            Event::Created(setup)
        }
        2 => Event::Drawn(r.tile()?),
        3 => {
            let x = r.i32()?;
            let y = r.i32()?;
            let rotation = match r.u8()? {
                q @ 0..=3 => Rotation::from_index(q as usize),
                _ => return Err(r.invalid("rotation")),
            };
            Event::TilePlaced {
                pos: Pos::new(x, y),
                rotation,
            }
        }
        4 => Event::FollowerPlaced(match r.u8()? {
            0 => None,
            code => Some(r.place(code)?),
        }),
        5 => {
            let pos = Pos::new(r.i32()?, r.i32()?);
            let code = r.u8()?;
            Event::FollowerMoved(Target {
                pos,
                place: r.place(code)?,
            })
        }
        6 => Event::Passed,
        7 => {
            let quarter = r.quarter()?;
            let count = match r.u8()? {
                0 => None,
                q @ 1..=4 => Some(Quarter::ALL[q as usize - 1]),
                _ => return Err(r.invalid("count")),
            };
            Event::DeployedToCarcassonne { quarter, count }
        }
        9 => Event::TimedOut(r.seat()?),
        10 => Event::Resigned(r.seat()?),
        11 => Event::Aborted(r.seat()?),
        12 => Event::Resumed {
            down_since_ms: r.u64()?,
        },
        tag => return Err(DecodeError::UnknownTag(tag)),
    };
    match bytes.len() - r.at {
        0 => Ok(event),
        extra => Err(DecodeError::TrailingBytes(extra)),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let slice = self
            .bytes
            .get(self.at..self.at + n)
            .ok_or(DecodeError::Truncated(self.bytes.len()))?;
        self.at += n;
        Ok(slice)
    }

    fn invalid(&self, what: &'static str) -> DecodeError {
        DecodeError::Invalid {
            what,
            at: self.at.saturating_sub(1),
        }
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut bytes = [0; 8];
        bytes.copy_from_slice(b);
        Ok(u64::from_le_bytes(bytes))
    }

    fn seat(&mut self) -> Result<Seat, DecodeError> {
        match self.u8()? {
            seat @ 0..crate::model::MAX_PLAYERS_U8 => Ok(Seat(seat)),
            _ => Err(self.invalid("seat")),
        }
    }

    fn flag(&mut self, what: &'static str) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.invalid(what)),
        }
    }

    fn time_control(&mut self) -> Result<TimeControl, DecodeError> {
        let main = if self.flag("main time flag")? {
            Some(MainTime {
                initial_ms: self.u64()?,
                increment_ms: self.u64()?,
            })
        } else {
            None
        };
        let decision_ms = if self.flag("decision limit flag")? {
            Some(self.u64()?)
        } else {
            None
        };
        let on_timeout = match self.u8()? {
            0 => OnTimeout::Forfeit,
            1 => OnTimeout::Auto,
            _ => return Err(self.invalid("timeout rule")),
        };
        Ok(TimeControl {
            main,
            decision_ms,
            on_timeout,
        })
    }

    fn i32(&mut self) -> Result<i32, DecodeError> {
        let b = self.take(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn place(&self, code: u8) -> Result<Place, DecodeError> {
        match code {
            1..=4 => Ok(Place::Edge(Dir::from_index(code as usize - 1))),
            5..=12 => Ok(Place::Half(Half::from_index(code as usize - 5))),
            13 => Ok(Place::Cloister),
            _ => Err(self.invalid("follower place")),
        }
    }

    fn quarter(&mut self) -> Result<Quarter, DecodeError> {
        let code = self.u8()?;
        Quarter::ALL
            .get(code as usize)
            .copied()
            .ok_or_else(|| self.invalid("quarter"))
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let n = self.u16()? as usize;
        let at = self.at;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::Invalid {
            what: "UTF-8 string",
            at,
        })
    }

    fn tile(&mut self) -> Result<TileKind, DecodeError> {
        let at = self.at;
        let name = self.string()?;
        TileKind::from_name(&name).ok_or(DecodeError::Invalid {
            what: "tile kind",
            at,
        })
    }
}
