//! Random appends (with conflicts and retried request ids) against a model
//! of a `Vec` per game: every store (memory, sled, PostgreSQL) must answer
//! exactly as the model does, and hold exactly what it holds, across a
//! reopen too.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use carcassonne_store::*;

use crate::support::{Backend, Rng, each_backend, slow_tests};

const GAMES: [&str; 4] = ["game-a", "game-b", "b", "game-a-2"];

#[derive(Clone, Debug, PartialEq)]
struct ModelEvent {
    game: String,
    seq: u64,
    position: u64,
    time_millis: u64,
    actor: Actor,
    request: String,
    schema: u16,
    payload: Vec<u8>,
}

#[derive(Default)]
struct Model {
    games: BTreeMap<String, Vec<ModelEvent>>,
    global: Vec<ModelEvent>,
    requests: HashMap<(String, String), Appended>,
}

impl Model {
    fn last_seq(&self, game: &str) -> u64 {
        self.games.get(game).map_or(0, |events| events.len() as u64)
    }

    fn append(
        &mut self,
        game: &str,
        expected: u64,
        request: &str,
        time_millis: u64,
        events: &[NewEvent],
    ) -> Result<Appended, (u64, u64)> {
        if let Some(original) = self.requests.get(&(game.to_owned(), request.to_owned())) {
            return Ok(*original);
        }
        let actual = self.last_seq(game);
        if actual != expected {
            return Err((expected, actual));
        }
        let first_position = self.global.len() as u64 + 1;
        let stream = self.games.entry(game.to_owned()).or_default();
        for (offset, new) in (0u64..).zip(events) {
            let event = ModelEvent {
                game: game.to_owned(),
                seq: actual + 1 + offset,
                position: first_position + offset,
                time_millis,
                actor: new.actor,
                request: request.to_owned(),
                schema: new.schema,
                payload: new.payload.clone(),
            };
            stream.push(event.clone());
            self.global.push(event);
        }
        let appended = Appended {
            first_seq: actual + 1,
            last_seq: actual + events.len() as u64,
            first_position,
            last_position: first_position + events.len() as u64 - 1,
            time_millis,
        };
        if !request.is_empty() {
            self.requests
                .insert((game.to_owned(), request.to_owned()), appended);
        }
        Ok(appended)
    }
}

fn as_model(event: &StoredEvent) -> ModelEvent {
    ModelEvent {
        game: event.game.to_string(),
        seq: event.seq,
        position: event.position,
        time_millis: event.time_millis,
        actor: event.actor,
        request: event.request_id.to_string(),
        schema: event.schema,
        payload: event.payload.clone(),
    }
}

/// One random append, run against the store and the model. Half of them
/// are written without waiting for their acknowledgement, which is kept in
/// `queued`: later appends and retries meet them still on their way.
fn step(
    rng: &mut Rng,
    store: &dyn EventStore,
    model: &mut Model,
    clock: &ManualClock,
    op: u64,
    queued: &mut Vec<Written>,
) {
    let game = GAMES[rng.below(GAMES.len() as u64) as usize];
    let last = model.last_seq(game);
    let expected = match rng.below(100) {
        0..75 => last,
        75..90 => rng.below(last + 1),
        _ => last + 1 + rng.below(3),
    };
    let previous: Vec<&(String, String)> = model.requests.keys().collect();
    let request = match rng.below(100) {
        0..70 => format!("req-{op}"),
        70..90 if !previous.is_empty() => {
            let (_, request) = previous[rng.below(previous.len() as u64) as usize];
            request.clone()
        }
        _ => String::new(),
    };
    let events: Vec<NewEvent> = (0..1 + rng.below(3))
        .map(|_| NewEvent {
            actor: match rng.below(6) {
                0 => Actor::Server,
                seat => Actor::Seat(seat as u8 - 1),
            },
            schema: 1 + rng.below(2) as u16,
            payload: (0..rng.below(20)).map(|_| rng.next() as u8).collect(),
        })
        .collect();
    clock.advance(rng.below(1000));
    let wanted = model.append(game, expected, &request, clock.now_millis(), &events);
    let (id, request) = (
        GameId::new(game).unwrap(),
        RequestId::new(request.as_str()).unwrap(),
    );
    let got = if rng.below(2) == 0 {
        store.write(&id, expected, &request, &events).map(|written| {
            let appended = *written.appended();
            queued.push(written);
            appended
        })
    } else {
        store.append(&id, expected, &request, &events)
    };
    match (&wanted, &got) {
        (Ok(wanted), Ok(got)) => assert_eq!(wanted, got, "op {op}"),
        (
            Err((expected, actual)),
            Err(StoreError::Conflict {
                game: g,
                expected: e,
                actual: a,
            }),
        ) => {
            assert_eq!((game, expected, actual), (g.as_str(), e, a), "op {op}")
        }
        _ => panic!("op {op}: model says {wanted:?}, store says {got:?}"),
    }
}

/// Everything the store shows equals the model, once what was queued is
/// acknowledged.
fn compare(rng: &mut Rng, store: &dyn EventStore, model: &Model, queued: &mut Vec<Written>) {
    for written in queued.drain(..) {
        written.wait().unwrap();
    }
    for game in GAMES {
        let id = GameId::new(game).unwrap();
        match model.games.get(game) {
            None => {
                assert!(matches!(store.read_game(&id, 1), Err(StoreError::NotFound(_))));
                assert_eq!(store.game(&id).unwrap(), None);
            }
            Some(events) => {
                let from = rng.below(events.len() as u64 + 2);
                let read: Vec<ModelEvent> =
                    store.read_game(&id, from).unwrap().iter().map(as_model).collect();
                assert_eq!(
                    read,
                    events[from.max(1) as usize - 1..].to_vec(),
                    "{game} from {from}"
                );
                let summary = store.game(&id).unwrap().unwrap();
                assert_eq!(summary.last_seq, events.len() as u64);
                assert_eq!(summary.created_millis, events[0].time_millis);
                let report = store.verify_game(&id).unwrap();
                assert!(report.is_ok(), "{report:?}");
                assert_eq!(report.events, events.len() as u64);
            }
        }
    }
    // The global order, in pages of random sizes.
    let mut read = Vec::new();
    let mut from = 1;
    loop {
        let page = store.read_all(from, 1 + rng.below(7) as usize).unwrap();
        let Some(last) = page.last() else { break };
        from = last.position + 1;
        read.extend(page.iter().map(as_model));
    }
    assert_eq!(read, model.global);
    assert_eq!(store.last_position(), model.global.len() as u64);
    // Listing, two games a page.
    let mut listed = Vec::new();
    let mut token = None;
    loop {
        let page = store.list_games(token.as_deref(), 2).unwrap();
        assert!(page.damaged.is_empty());
        listed.extend(page.games.iter().map(|g| (g.game.to_string(), g.last_seq)));
        match page.next_page_token {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    let wanted: Vec<(String, u64)> = model
        .games
        .iter()
        .map(|(g, e)| (g.clone(), e.len() as u64))
        .collect();
    assert_eq!(listed, wanted);
    let report = store.verify_all().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.events, model.global.len() as u64);
}

fn seeds() -> (u64, u64) {
    if slow_tests() { (40, 600) } else { (6, 150) }
}

/// Every backend, across reopens (the memory store's "reopen" gives back
/// the same store): the same answers and contents as the model.
#[test]
fn every_store_behaves_like_the_model_across_reopens() {
    let (seeds, ops) = seeds();
    each_backend(|backend| {
        // The memory store is cheap: more seeds.
        let seeds = match backend {
            Backend::Memory => seeds * 3,
            _ => seeds,
        };
        for seed in 0..seeds {
            let mut rng = Rng::new(1000 + seed);
            let clock = Arc::new(ManualClock::new(1_000));
            let config = StoreConfig {
                // The first and last seeds run durable: the same answers
                // through group commit.
                durability: match seed {
                    0 => Durability::Written,
                    _ if seed == seeds - 1 => Durability::Flush,
                    _ => Durability::None,
                },
                clock: clock.clone(),
                // The first seed compresses.
                compression: seed == 0,
                // A tiny cache: games are forgotten and reloaded from sled.
                game_cache_capacity: 2,
                ..StoreConfig::default()
            };
            let place = backend.place();
            let mut model = Model::default();
            let mut queued = Vec::new();
            let mut op = 0;
            for _reopen in 0..3 {
                let store = place.open(config.clone());
                compare(&mut rng, &*store, &model, &mut queued);
                for _ in 0..ops / 3 {
                    step(&mut rng, &*store, &mut model, &clock, op, &mut queued);
                    op += 1;
                }
                compare(&mut rng, &*store, &model, &mut queued);
                if let Some(sled) = place.sled() {
                    sled.flush().unwrap();
                }
            }
        }
    });
}
