//! Requests parsed into validated engine types at the edge. Every error
//! names the field it is about.

use carcassonne_engine::{
    self as engine, Command, Dir, Expansion, Farmers, Half, Place, Pos, Quarter, Rotation, Rules, SmallCity,
    TileKind,
};

use super::status::{ApiError, quote};
use crate::proto;

/// Longest accepted request id, in bytes.
pub const MAX_ID: usize = carcassonne_store::MAX_REQUEST_ID_LEN;
/// Longest accepted game id (the `{id}` of `games/{id}`), in bytes.
pub const MAX_GAME_ID: usize = carcassonne_store::MAX_GAME_ID_LEN;
/// Longest accepted player name, in characters.
pub const MAX_NAME: usize = 64;
/// Coordinates beyond this are refused before the engine sees them.
pub const MAX_COORD: i32 = 10_000;

fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::InvalidArgument {
        field: field.to_owned(),
        message: message.into(),
    }
}

/// `games/{id}` to the id.
pub fn game_name(name: &str) -> Result<String, ApiError> {
    let id = name.strip_prefix("games/").ok_or_else(|| {
        invalid(
            "name",
            format!("expected \"games/{{id}}\", found {}", quote(name)),
        )
    })?;
    check_id("name", id, MAX_GAME_ID)?;
    Ok(id.to_owned())
}

/// Ids are printable ASCII without spaces: safe to log and to quote.
fn check_id(field: &str, id: &str, max: usize) -> Result<(), ApiError> {
    if id.is_empty() || id.len() > max || !id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(invalid(
            field,
            format!("must be 1 to {max} ASCII characters from '!' to '~' (no spaces)"),
        ));
    }
    Ok(())
}

pub fn request_id(id: &str) -> Result<String, ApiError> {
    check_id("request_id", id, MAX_ID)?;
    if id.starts_with(crate::games::SERVER_REQUEST_PREFIX) {
        return Err(invalid(
            "request_id",
            format!(
                "ids beginning with '{}' are the server's own (its timeouts)",
                crate::games::SERVER_REQUEST_PREFIX
            ),
        ));
    }
    Ok(id.to_owned())
}

pub fn players(names: &[String]) -> Result<Vec<String>, ApiError> {
    if !(engine::MIN_PLAYERS..=engine::MAX_PLAYERS).contains(&names.len()) {
        return Err(invalid(
            "players",
            format!("a game has 2 to 5 players (B-2), not {}", names.len()),
        ));
    }
    for (i, name) in names.iter().enumerate() {
        let length = name.chars().count();
        if length == 0 || length > MAX_NAME || name.chars().any(char::is_control) {
            return Err(invalid(
                &format!("players[{i}]"),
                format!("must be 1 to {MAX_NAME} characters, no control characters"),
            ));
        }
    }
    Ok(names.to_vec())
}

pub fn rules(options: Option<&proto::RuleOptions>) -> Result<Rules, ApiError> {
    let mut rules = Rules::default();
    let Some(options) = options else { return Ok(rules) };
    rules.small_city = match proto::SmallCity::try_from(options.small_city) {
        Ok(proto::SmallCity::Unspecified | proto::SmallCity::Halved) => SmallCity::Halved,
        Ok(proto::SmallCity::Normal) => SmallCity::Normal,
        Err(_) => {
            return Err(invalid(
                "rules.small_city",
                format!("unknown value {}", options.small_city),
            ));
        }
    };
    rules.farmers = match proto::FarmerScoring::try_from(options.farmers) {
        Ok(proto::FarmerScoring::Unspecified | proto::FarmerScoring::CityCentric4) => Farmers::CityCentric4,
        Ok(proto::FarmerScoring::FarmCentric3) => Farmers::FarmCentric3,
        Err(_) => {
            return Err(invalid(
                "rules.farmers",
                format!("unknown value {}", options.farmers),
            ));
        }
    };
    for (i, &value) in options.expansions.iter().enumerate() {
        let field = format!("rules.expansions[{i}]");
        let expansion = match proto::Expansion::try_from(value) {
            Ok(proto::Expansion::River) => Expansion::River,
            Ok(proto::Expansion::Count) => Expansion::Count,
            _ => return Err(invalid(&field, format!("unknown expansion {value}"))),
        };
        if rules.has(expansion) {
            return Err(invalid(&field, format!("{} is listed twice", expansion.name())));
        }
        rules = rules.with(expansion);
    }
    Ok(rules)
}

pub fn bag(tiles: &[proto::TileCount]) -> Result<Option<Vec<(TileKind, u16)>>, ApiError> {
    if tiles.is_empty() {
        return Ok(None);
    }
    let mut bag: Vec<(TileKind, u16)> = Vec::new();
    for (i, t) in tiles.iter().enumerate() {
        let field = format!("tiles[{i}]");
        let kind = TileKind::from_name(&t.kind)
            .filter(|k| engine::BASE_COUNTS.iter().any(|(name, _)| *name == k.name()))
            .ok_or_else(|| {
                invalid(
                    &field,
                    format!("{} is not a land tile kind (A to X)", quote(&t.kind)),
                )
            })?;
        if bag.iter().any(|(k, _)| *k == kind) {
            return Err(invalid(&field, format!("{} is listed twice", t.kind)));
        }
        let count = u16::try_from(t.count)
            .ok()
            .filter(|&c| usize::from(c) <= engine::MAX_BAG)
            .ok_or_else(|| invalid(&field, format!("at most {} tiles", engine::MAX_BAG)))?;
        bag.push((kind, count));
    }
    let total: usize = bag.iter().map(|(_, c)| usize::from(*c)).sum();
    if total > engine::MAX_BAG {
        return Err(invalid(
            "tiles",
            format!("a bag holds at most {} tiles, not {total}", engine::MAX_BAG),
        ));
    }
    bag.sort();
    Ok(Some(bag))
}

/// A seed as every message shows one: 64 hex digits (32 bytes), or empty.
pub fn seed(hex: &str) -> Result<Option<engine::Seed>, ApiError> {
    if hex.is_empty() {
        return Ok(None);
    }
    engine::Seed::from_hex(hex)
        .map(Some)
        .ok_or_else(|| invalid("seed", "must be empty or 64 hex digits (32 bytes)"))
}

fn position(field: &str, p: Option<&proto::Position>) -> Result<Pos, ApiError> {
    let p = p.ok_or_else(|| invalid(field, "missing"))?;
    // Not `abs()`: `i32::MIN.abs()` overflows (and wraps to itself in
    // release builds, passing the check).
    let range = -MAX_COORD..=MAX_COORD;
    if !range.contains(&p.x) || !range.contains(&p.y) {
        return Err(invalid(field, format!("coordinates are within ±{MAX_COORD}")));
    }
    Ok(Pos::new(p.x, p.y))
}

fn place(field: &str, value: i32) -> Result<Option<Place>, ApiError> {
    use proto::Place as P;
    let p = P::try_from(value).map_err(|_| invalid(field, format!("unknown place {value}")))?;
    Ok(Some(match p {
        P::Unspecified => return Ok(None),
        P::N => Place::Edge(Dir::N),
        P::E => Place::Edge(Dir::E),
        P::S => Place::Edge(Dir::S),
        P::W => Place::Edge(Dir::W),
        P::Nw => Place::Half(Half::Nw),
        P::Ne => Place::Half(Half::Ne),
        P::En => Place::Half(Half::En),
        P::Es => Place::Half(Half::Es),
        P::Se => Place::Half(Half::Se),
        P::Sw => Place::Half(Half::Sw),
        P::Ws => Place::Half(Half::Ws),
        P::Wn => Place::Half(Half::Wn),
        P::Cloister => Place::Cloister,
    }))
}

fn quarter(field: &str, value: i32) -> Result<Option<Quarter>, ApiError> {
    use proto::Quarter as Q;
    match Q::try_from(value) {
        Ok(Q::Unspecified) => Ok(None),
        Ok(Q::Castle) => Ok(Some(Quarter::Castle)),
        Ok(Q::Blacksmith) => Ok(Some(Quarter::Blacksmith)),
        Ok(Q::Cathedral) => Ok(Some(Quarter::Cathedral)),
        Ok(Q::Market) => Ok(Some(Quarter::Market)),
        Err(_) => Err(invalid(field, format!("unknown quarter {value}"))),
    }
}

fn target(field: &str, t: Option<&proto::Target>) -> Result<engine::Target, ApiError> {
    let t = t.ok_or_else(|| invalid(field, "missing"))?;
    let pos = position(&format!("{field}.position"), t.position.as_ref())?;
    let place = place(&format!("{field}.place"), t.place)?
        .ok_or_else(|| invalid(&format!("{field}.place"), "missing"))?;
    Ok(engine::Target { pos, place })
}

/// An action to the engine command it asks for.
pub fn action(action: Option<&proto::Action>) -> Result<Command, ApiError> {
    use proto::action::Action as A;
    let action = action
        .and_then(|a| a.action.as_ref())
        .ok_or_else(|| invalid("action", "missing"))?;
    Ok(match action {
        A::PlaceTile(p) => {
            let pos = position("action.place_tile.position", p.position.as_ref())?;
            let rotation = Rotation::from_degrees(i64::from(p.rotation)).ok_or_else(|| {
                invalid(
                    "action.place_tile.rotation",
                    format!("expected 0, 90, 180 or 270, found {}", p.rotation),
                )
            })?;
            Command::PlaceTile { pos, rotation }
        }
        A::PlaceFollower(p) => Command::PlaceFollower(place("action.place_follower.place", p.place)?),
        A::MoveFromCarcassonne(m) => {
            Command::MoveFromCarcassonne(target("action.move_from_carcassonne.target", m.target.as_ref())?)
        }
        A::Pass(_) => Command::Pass,
        A::DeployToCarcassonne(d) => Command::DeployToCarcassonne {
            quarter: quarter("action.deploy_to_carcassonne.quarter", d.quarter)?
                .ok_or_else(|| invalid("action.deploy_to_carcassonne.quarter", "missing"))?,
            count: quarter("action.deploy_to_carcassonne.count", d.count)?,
        },
        A::Resign(_) => Command::Resign,
        A::Abort(_) => Command::Abort,
    })
}

/// A time control (T-1): unset is none; zeros are "none" for the main time
/// and the limit per decision; the engine checks the figures.
pub fn time_control(control: Option<&proto::TimeControl>) -> Result<Option<engine::TimeControl>, ApiError> {
    let Some(control) = control else {
        return Ok(None);
    };
    let on_timeout = match proto::TimeoutRule::try_from(control.on_timeout) {
        Ok(proto::TimeoutRule::Unspecified | proto::TimeoutRule::Forfeit) => engine::OnTimeout::Forfeit,
        Ok(proto::TimeoutRule::Auto) => engine::OnTimeout::Auto,
        Err(_) => {
            return Err(invalid(
                "time_control.on_timeout",
                format!("unknown value {}", control.on_timeout),
            ));
        }
    };
    if control.main_ms == 0 && control.increment_ms != 0 {
        return Err(invalid(
            "time_control.increment_ms",
            "an increment needs a main time (main_ms)",
        ));
    }
    let control = engine::TimeControl {
        main: (control.main_ms > 0).then(|| engine::MainTime {
            initial_ms: u64::from(control.main_ms),
            increment_ms: u64::from(control.increment_ms),
        }),
        decision_ms: (control.decision_ms > 0).then_some(u64::from(control.decision_ms)),
        on_timeout,
    };
    control
        .check()
        .map_err(|message| invalid("time_control", format!("T-1: {message}")))?;
    Ok(Some(control))
}

/// The shortest main time and limit per decision a new game (or
/// tournament) may have: a decision takes a client a network round trip or
/// a few (100 to 300 ms between continents) besides its thinking, and a
/// server's bot a quarter of what its clock leaves. The rules allow 1 ms
/// (T-1), and records and other servers' games keep what they have.
pub const MIN_CLOCK_MS: u32 = 1_000;

/// A time control a client asks for (CreateGame, CreateTournament):
/// [`time_control`], and every duration set at least [`MIN_CLOCK_MS`].
pub fn new_time_control(
    control: Option<&proto::TimeControl>,
) -> Result<Option<engine::TimeControl>, ApiError> {
    let checked = time_control(control)?;
    if let Some(control) = control {
        for (field, ms) in [("main_ms", control.main_ms), ("decision_ms", control.decision_ms)] {
            if ms > 0 && ms < MIN_CLOCK_MS {
                return Err(invalid(
                    &format!("time_control.{field}"),
                    format!(
                        "{ms} ms is too short: a game of this server gives at least {MIN_CLOCK_MS} ms \
                         (a decision takes a network round trip or more), or 0 for none"
                    ),
                ));
            }
        }
    }
    Ok(checked)
}

/// A new game's `bot_pace_ms`: 0 to [`MAX_PACE_MS`], and only in a game
/// with bot seats.
///
/// [`MAX_PACE_MS`]: crate::games::bot_seats::MAX_PACE_MS
pub fn bot_pace(pace_ms: u32, bots: &[Option<carcassonne_bots::Level>]) -> Result<u32, ApiError> {
    use crate::games::bot_seats::MAX_PACE_MS;
    if pace_ms > MAX_PACE_MS {
        return Err(invalid(
            "bot_pace_ms",
            format!("at most {MAX_PACE_MS} ms, not {pace_ms}"),
        ));
    }
    if pace_ms > 0 && bots.iter().all(Option::is_none) {
        return Err(invalid(
            "bot_pace_ms",
            "only a game with bot seats (bots) has a pace",
        ));
    }
    Ok(pace_ms)
}

/// A listing's `page_size`: 1 to 100, 20 when 0.
pub fn page_size(requested: u32) -> Result<usize, ApiError> {
    match requested {
        0 => Ok(20),
        n @ 1..=100 => Ok(n as usize),
        n => Err(ApiError::InvalidArgument {
            field: "page_size".to_owned(),
            message: format!("at most 100, not {n}"),
        }),
    }
}

/// The built-in bots of a new game's seats (`CreateGameRequest.bots`):
/// empty, or one entry per seat, a level's name or "" for a client's seat.
pub fn bots(levels: &[String], seats: usize) -> Result<Vec<Option<carcassonne_bots::Level>>, ApiError> {
    if levels.is_empty() {
        return Ok(Vec::new());
    }
    if levels.len() != seats {
        return Err(ApiError::InvalidArgument {
            field: "bots".to_owned(),
            message: format!("one entry per seat: {seats}, not {}", levels.len()),
        });
    }
    levels
        .iter()
        .map(|name| match name.as_str() {
            "" => Ok(None),
            name => {
                carcassonne_bots::Level::from_name(name)
                    .map(Some)
                    .ok_or_else(|| ApiError::UnknownBotLevel {
                        field: "bots",
                        level: name.to_owned(),
                    })
            }
        })
        .collect()
}
