//! Engine state and events as protobuf messages: the one function that
//! builds what the outside may see (design-notes: "the seed is sealed until
//! the end"). Nothing else serializes game state for clients.

use carcassonne_engine::{
    self as engine, Effect, Ending, Event, FeatureKind, Game, OnTimeout, OutReason, Pending, Place, Quarter,
    Rules, Scored, SmallCity,
};

use super::version;
use crate::games::SeedReveal;
use crate::proto;

/// What the server knows of a game beside its rules state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameInfo {
    pub id: String,
    pub create_time_ms: i64,
    pub spectator_delay: u32,
    /// SHA-256 of the seed, hex: the commitment shown from the start.
    pub seed_sha256: String,
    /// Per seat, the registered player it belongs to (empty: all guests).
    pub accounts: Vec<Option<String>>,
    /// Per seat, the level of the built-in bot that plays it (empty: no
    /// bots).
    pub bots: Vec<Option<String>>,
    pub rated: bool,
    pub tournament: Option<String>,
}

/// The game after its stored event `seq` as `view` asks: everything, or
/// all but the board ([`proto::GameView::Basic`]). Every function here takes
/// stored seqs and shows API versions ([`version::of_seq`]).
pub fn game_as(
    info: &GameInfo,
    seq: i64,
    game: &Game,
    reveal: SeedReveal,
    view: proto::GameView,
) -> proto::Game {
    match view {
        proto::GameView::Basic => basic(info, seq, game, reveal),
        proto::GameView::Full | proto::GameView::Unspecified => self::game(info, seq, game, reveal),
    }
}

/// The game without its board: no tiles, followers, bag or city.
fn basic(info: &GameInfo, seq: i64, game: &Game, reveal: SeedReveal) -> proto::Game {
    let finished = game.is_finished();
    let city = game.city();
    let ranking = game.ranking();
    proto::Game {
        name: format!("games/{}", info.id),
        version: version::of_seq_i64(seq),
        status: if finished {
            proto::GameStatus::Finished
        } else {
            proto::GameStatus::Running
        } as i32,
        rules: Some(rules(game.rules())),
        players: game
            .setup()
            .players
            .iter()
            .enumerate()
            .map(|(seat, name)| proto::Player {
                seat: seat as u32,
                name: name.clone(),
                score: game.scores()[seat],
                followers_in_supply: u32::from(game.supply()[seat]),
                followers_in_carcassonne: city
                    .map_or(0, |c| u32::from(c.followers_of(engine::Seat(seat as u8)))),
                time_left_ms: game.time_left(engine::Seat(seat as u8)).map(millis),
                status: seat_status(game.out_reason(engine::Seat(seat as u8))) as i32,
                rank: ranking
                    .as_ref()
                    .and_then(|ranks| ranks.get(seat))
                    .map_or(0, |&rank| u32::from(rank)),
                account: info
                    .accounts
                    .get(seat)
                    .and_then(|a| a.as_deref())
                    .map(|name| format!("players/{name}"))
                    .unwrap_or_default(),
                bot: info
                    .bots
                    .get(seat)
                    .and_then(|b| b.as_deref())
                    .unwrap_or_default()
                    .to_owned(),
            })
            .collect(),
        tiles: Vec::new(),
        followers: Vec::new(),
        pending: Some(pending(game)),
        bag: Vec::new(),
        city: None,
        seed_sha256: info.seed_sha256.clone(),
        // Revealed only at the end (B-3), and not while a game that
        // shares the bag runs.
        seed: reveal.seed(game).map(|seed| seed.to_hex()).unwrap_or_default(),
        winners: game.winners().iter().map(|s| u32::from(s.0)).collect(),
        spectator_delay: info.spectator_delay,
        create_time_ms: info.create_time_ms,
        time_control: game.setup().time_control.map(time_control),
        clock_time_ms: millis(game.time()),
        ending: game.ending().map(ending),
        rated: info.rated,
        tournament: info
            .tournament
            .as_deref()
            .map(|t| format!("tournaments/{t}"))
            .unwrap_or_default(),
    }
}

/// Milliseconds as the API's `int64`; no clock of ours comes near its end.
pub fn millis(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

pub fn time_control(control: engine::TimeControl) -> proto::TimeControl {
    // Every figure is at most 30 days (T-1), well within `u32`.
    let ms = |value: u64| u32::try_from(value).unwrap_or(u32::MAX);
    proto::TimeControl {
        main_ms: control.main.map_or(0, |m| ms(m.initial_ms)),
        increment_ms: control.main.map_or(0, |m| ms(m.increment_ms)),
        decision_ms: control.decision_ms.map_or(0, ms),
        on_timeout: match control.on_timeout {
            OnTimeout::Forfeit => proto::TimeoutRule::Forfeit,
            OnTimeout::Auto => proto::TimeoutRule::Auto,
        } as i32,
    }
}

pub fn ending(ending: Ending) -> proto::Ending {
    let reason = match ending {
        Ending::Normal => proto::EndReason::Normal,
        Ending::OutOfTime(_) => proto::EndReason::OutOfTime,
        Ending::Resigned(_) => proto::EndReason::Resigned,
        Ending::Aborted(_) => proto::EndReason::Aborted,
    };
    proto::Ending {
        reason: reason as i32,
        seat: ending.seat().map_or(0, |s| u32::from(s.0)),
    }
}

fn seat_status(out: Option<OutReason>) -> proto::SeatStatus {
    match out {
        None => proto::SeatStatus::Playing,
        Some(OutReason::OutOfTime) => proto::SeatStatus::OutOfTime,
        Some(OutReason::Resigned) => proto::SeatStatus::Resigned,
    }
}

/// Each seat's main time left, as of the game's last event, in seat
/// order; empty without a main time.
pub fn times_left(game: &Game) -> Vec<i64> {
    (0..game.players() as u8)
        .filter_map(|seat| game.time_left(engine::Seat(seat)).map(millis))
        .collect()
}

/// The whole game after its stored event `seq`, as its viewers may see it.
pub fn game(info: &GameInfo, seq: i64, game: &Game, reveal: SeedReveal) -> proto::Game {
    let city = game.city();
    proto::Game {
        tiles: game
            .tiles()
            .iter()
            .map(|t| proto::BoardTile {
                kind: t.kind.name().to_owned(),
                position: Some(position(t.pos)),
                rotation: u32::from(t.rotation.degrees()),
            })
            .collect(),
        followers: game
            .followers()
            .map(|f| proto::BoardFollower {
                seat: u32::from(f.owner.0),
                target: Some(target(engine::Target {
                    pos: f.at,
                    place: f.place,
                })),
                feature: feature_kind(f.kind) as i32,
            })
            .collect(),
        bag: engine::TileKind::all()
            .filter(|&k| game.in_bag(k) > 0)
            .map(|k| proto::TileCount {
                kind: k.name().to_owned(),
                count: u32::from(game.in_bag(k)),
            })
            .collect(),
        city: city.map(|c| proto::City {
            count: quarter(c.count) as i32,
            followers: Quarter::ALL
                .iter()
                .flat_map(|&q| {
                    (0..game.players()).filter_map(move |seat| {
                        let count = c.quarters[q.index()][seat];
                        (count > 0).then(|| proto::QuarterFollowers {
                            quarter: quarter(q) as i32,
                            seat: seat as u32,
                            count: u32::from(count),
                        })
                    })
                })
                .collect(),
        }),
        ..basic(info, seq, game, reveal)
    }
}

pub fn rules(rules: Rules) -> proto::RuleOptions {
    proto::RuleOptions {
        small_city: match rules.small_city {
            SmallCity::Halved => proto::SmallCity::Halved,
            SmallCity::Normal => proto::SmallCity::Normal,
        } as i32,
        farmers: match rules.farmers {
            engine::Farmers::CityCentric4 => proto::FarmerScoring::CityCentric4,
            engine::Farmers::FarmCentric3 => proto::FarmerScoring::FarmCentric3,
        } as i32,
        expansions: rules
            .expansions()
            .map(|e| match e {
                engine::Expansion::River => proto::Expansion::River,
                engine::Expansion::Count => proto::Expansion::Count,
            } as i32)
            .collect(),
    }
}

/// The decision `game` waits for, whose it is, and its deadline.
pub fn pending(game: &Game) -> proto::PendingDecision {
    use proto::DecisionKind as K;
    let pending = game.pending();
    let (kind, tile, placer) = match pending {
        // The server draws at once, but a game seen at an earlier version
        // (a replay, a delayed spectator) may wait for its draw.
        Pending::Draw { .. } => (K::Draw, String::new(), 0),
        Pending::Finished => (K::Unspecified, String::new(), 0),
        Pending::PlaceTile { tile, .. } => (K::PlaceTile, tile.name().to_owned(), 0),
        Pending::PlaceFollower { .. } => (K::PlaceFollower, String::new(), 0),
        Pending::Redeploy { placer, .. } => (K::Redeploy, String::new(), u32::from(placer.0)),
        Pending::DeployToCarcassonne { .. } => (K::DeployToCarcassonne, String::new(), 0),
        Pending::FinalRound { .. } => (K::FinalRound, String::new(), 0),
    };
    let seat = match pending {
        Pending::Finished => 0,
        Pending::Draw { player } => u32::from(player.0),
        other => other.player().map_or(0, |s| u32::from(s.0)),
    };
    proto::PendingDecision {
        kind: kind as i32,
        seat,
        tile,
        placer,
        deadline_ms: game.deadline().map_or(0, millis),
    }
}

pub fn position(pos: engine::Pos) -> proto::Position {
    proto::Position { x: pos.x, y: pos.y }
}

pub fn target(t: engine::Target) -> proto::Target {
    proto::Target {
        position: Some(position(t.pos)),
        place: place(Some(t.place)) as i32,
    }
}

pub fn place(place: Option<Place>) -> proto::Place {
    use engine::{Dir, Half};
    use proto::Place as P;
    match place {
        None => P::Unspecified,
        Some(Place::Edge(d)) => match d {
            Dir::N => P::N,
            Dir::E => P::E,
            Dir::S => P::S,
            Dir::W => P::W,
        },
        Some(Place::Half(h)) => match h {
            Half::Nw => P::Nw,
            Half::Ne => P::Ne,
            Half::En => P::En,
            Half::Es => P::Es,
            Half::Se => P::Se,
            Half::Sw => P::Sw,
            Half::Ws => P::Ws,
            Half::Wn => P::Wn,
        },
        Some(Place::Cloister) => P::Cloister,
    }
}

pub fn quarter(q: Quarter) -> proto::Quarter {
    match q {
        Quarter::Castle => proto::Quarter::Castle,
        Quarter::Blacksmith => proto::Quarter::Blacksmith,
        Quarter::Cathedral => proto::Quarter::Cathedral,
        Quarter::Market => proto::Quarter::Market,
    }
}

pub fn feature_kind(kind: FeatureKind) -> proto::FeatureKind {
    match kind {
        FeatureKind::Road => proto::FeatureKind::Road,
        FeatureKind::City => proto::FeatureKind::City,
        FeatureKind::Cloister => proto::FeatureKind::Cloister,
        FeatureKind::Field => proto::FeatureKind::Field,
    }
}

pub fn score_change(change: &engine::ScoreChange) -> proto::ScoreChange {
    let seats = change.players.iter().map(|s| u32::from(s.0)).collect();
    match change.scored {
        Scored::Feature(f) => proto::ScoreChange {
            seats,
            points: change.points,
            rule: change.rule.as_str().to_owned(),
            feature: feature_kind(f.kind) as i32,
            at: Some(target(engine::Target {
                pos: f.at,
                place: f.place,
            })),
            tiles: u32::from(f.tiles),
            pennants: u32::from(f.pennants),
        },
        Scored::CityOfCarcassonne => proto::ScoreChange {
            seats,
            points: change.points,
            rule: change.rule.as_str().to_owned(),
            feature: proto::FeatureKind::CityOfCarcassonne as i32,
            at: None,
            tiles: 12,
            pennants: 0,
        },
    }
}

/// Stored event `seq` as everybody may see it, with the effects it caused. `seat` is
/// who acted, or for a draw, the seat that draws (see [`drawer`]); none for
/// the creation. `seed_sha256` stands in for the creation's seed.
pub fn event(
    seq: i64,
    time_ms: i64,
    seat: Option<engine::Seat>,
    event: &Event,
    effects: &[Effect],
    seed_sha256: &str,
) -> proto::GameEvent {
    use proto::game_event::Event as E;
    let body = match event {
        Event::Created(setup) => E::Created(proto::GameCreated {
            rules: Some(rules(setup.rules)),
            players: setup.players.clone(),
            tiles: setup
                .tiles
                .iter()
                .flatten()
                .map(|(k, c)| proto::TileCount {
                    kind: k.name().to_owned(),
                    count: u32::from(*c),
                })
                .collect(),
            seed_sha256: seed_sha256.to_owned(),
        }),
        Event::Drawn(tile) => E::TileDrawn(proto::TileDrawn {
            kind: tile.name().to_owned(),
            seat: seat.map_or(0, |s| u32::from(s.0)),
        }),
        Event::TilePlaced { pos, rotation } => E::TilePlaced(proto::PlaceTile {
            position: Some(position(*pos)),
            rotation: u32::from(rotation.degrees()),
        }),
        Event::FollowerPlaced(p) => E::FollowerPlaced(proto::PlaceFollower {
            place: place(*p) as i32,
        }),
        Event::FollowerMoved(t) => E::FollowerMoved(proto::MoveFromCarcassonne {
            target: Some(target(*t)),
        }),
        Event::Passed => E::Passed(proto::Pass {}),
        Event::DeployedToCarcassonne { quarter: q, count } => {
            E::DeployedToCarcassonne(proto::DeployToCarcassonne {
                quarter: quarter(*q) as i32,
                count: count.map_or(proto::Quarter::Unspecified, quarter) as i32,
            })
        }
        Event::TimedOut(s) => E::TimedOut(proto::TimedOut { seat: u32::from(s.0) }),
        Event::Resigned(_) => E::Resigned(proto::Resign {}),
        Event::Aborted(_) => E::Aborted(proto::Abort {}),
        Event::Resumed { down_since_ms } => E::Resumed(proto::Resumed {
            down_since_ms: millis(*down_since_ms),
        }),
    };
    let acted = match event {
        Event::Created(_) | Event::Drawn(_) | Event::TimedOut(_) | Event::Resumed { .. } => None,
        Event::Resigned(s) | Event::Aborted(s) => Some(u32::from(s.0)),
        _ => seat.map(|s| u32::from(s.0)),
    };
    let out = effects.iter().find_map(|e| match *e {
        Effect::Out { seat, abandoned } => Some((seat, abandoned)),
        _ => None,
    });
    proto::GameEvent {
        version: version::of_seq_i64(seq),
        time_ms,
        event: Some(body),
        seat: acted,
        score_changes: effects
            .iter()
            .filter_map(|e| match e {
                Effect::Scored(change) => Some(score_change(change)),
                _ => None,
            })
            .collect(),
        discarded: effects
            .iter()
            .filter_map(|e| match e {
                Effect::Discarded(tile) => Some(tile.name().to_owned()),
                _ => None,
            })
            .collect(),
        finished: effects.iter().any(|e| matches!(e, Effect::Finished)),
        decided_for_seat: effects
            .iter()
            .filter_map(|e| match e {
                Effect::DecidedFor { command, .. } => action(*command),
                _ => None,
            })
            .collect(),
        seat_out: out.map(|(seat, _)| u32::from(seat.0)),
        abandoned: out
            .and_then(|(_, tile)| tile)
            .map(|tile| tile.name().to_owned())
            .unwrap_or_default(),
    }
}

/// The seat a draw was for, from the game after it: the drawer then places
/// it, or draws again after a discard. `None` when the game ended with it.
pub fn drawer(after: &Game) -> Option<engine::Seat> {
    match after.pending() {
        Pending::PlaceTile { player, .. } | Pending::Draw { player } => Some(player),
        _ => None,
    }
}

/// The seat an event belongs to: who acted, or for a draw, who draws.
pub fn event_seat(event: &Event, actor: Option<engine::Seat>, after: &Game) -> Option<engine::Seat> {
    match event {
        Event::Drawn(_) => drawer(after),
        _ => actor,
    }
}

/// Every legal action of the pending decision.
pub fn actions(game: &Game) -> Vec<proto::Action> {
    game.legal_commands().into_iter().filter_map(action).collect()
}

/// A seat's command as an action; none for the server's own (draws,
/// timeouts, resumptions).
pub fn action(command: engine::Command) -> Option<proto::Action> {
    use proto::action::Action as A;
    let action = match command {
        engine::Command::Draw(_) | engine::Command::TimeOut | engine::Command::Resume { .. } => return None,
        engine::Command::PlaceTile { pos, rotation } => A::PlaceTile(proto::PlaceTile {
            position: Some(position(pos)),
            rotation: u32::from(rotation.degrees()),
        }),
        engine::Command::PlaceFollower(p) => A::PlaceFollower(proto::PlaceFollower {
            place: place(p) as i32,
        }),
        engine::Command::MoveFromCarcassonne(t) => A::MoveFromCarcassonne(proto::MoveFromCarcassonne {
            target: Some(target(t)),
        }),
        engine::Command::Pass => A::Pass(proto::Pass {}),
        engine::Command::DeployToCarcassonne { quarter: q, count } => {
            A::DeployToCarcassonne(proto::DeployToCarcassonne {
                quarter: quarter(q) as i32,
                count: count.map_or(proto::Quarter::Unspecified, quarter) as i32,
            })
        }
        engine::Command::Resign => A::Resign(proto::Resign {}),
        engine::Command::Abort => A::Abort(proto::Abort {}),
    };
    Some(proto::Action { action: Some(action) })
}
