//! Rebuilding stored games: read + decode + fold of 10,000 finished games
//! from the sled store (target: under 3 seconds), with a baseline in the
//! same run: folding the same events already in memory.
//!
//! The games are stored, the store is closed and opened again (and, with
//! `REBUILD_DROP_CACHES=1` as root, the kernel's page cache dropped: all
//! of the machine's, hence not by default), so that the timed rebuild
//! reads the store as a restarted server does; a second, warm rebuild is
//! printed for comparison. The target is judged only on 10,000 games.
//!
//! `cargo bench --bench rebuild`; `REBUILD_GAMES` sets the number of games.

// A benchmark: a failed setup step should stop it loudly.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Instant;

use carcassonne::games::auth;
use carcassonne::games::stored::{Loaded, Opened, new_event};
use carcassonne_engine::{Actor, Event, Game, Rules, Seed, Setup};
use carcassonne_store::{Durability, EventStore, GameId, NewEvent, RequestId, SledStore, StoreConfig};

// Its own copy of the shared verdict: the rest of `support` is for the
// gRPC benches (and the p99 sample size unused here).
#[allow(dead_code)]
#[path = "support/verdict.rs"]
mod verdict;

/// Under 3 seconds for 10,000 games.
const TARGET_SECONDS: f64 = 3.0;
const TARGET: verdict::Target = verdict::Target {
    size: Some((10_000, "games")),
    min_sample: 1,
};

/// A finished random 2-player game's stream, as the server stores it.
fn game_stream(seed: u64) -> Vec<NewEvent> {
    let setup = Setup {
        rules: Rules::default(),
        players: vec!["A".into(), "B".into()],
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    };
    let mut game = Game::new(setup.clone());
    let mut events = vec![Event::Created(setup)];
    game.run_automatic(&mut events, &mut ());
    let mut state = seed | 1;
    let mut stream = vec![
        Opened {
            token_hashes: vec![auth::hash("a"), auth::hash("b")],
            spectator_delay: 0,
            ..Opened::default()
        }
        .to_new_event(),
    ];
    stream.extend(events.iter().map(|e| new_event(None, e)));
    while let Some(player) = game.pending().player() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let choices = game.legal_commands();
        let command = choices[(state % choices.len() as u64) as usize];
        for event in game.execute(Actor::Seat(player), &command, &mut ()).unwrap() {
            let actor = if matches!(event, Event::Drawn(_)) {
                None
            } else {
                Some(player)
            };
            stream.push(new_event(actor, &event));
        }
    }
    stream
}

fn main() {
    let games: u64 = match std::env::var("REBUILD_GAMES") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("REBUILD_GAMES={text:?} is not a number")),
        Err(_) => 10_000,
    };
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::with_durability(Durability::None);
    let store: Arc<dyn EventStore> = Arc::new(SledStore::open(dir.path(), config.clone()).unwrap());
    let ids: Vec<GameId> = (0..games)
        .map(|i| GameId::new(format!("g{i:06}")).unwrap())
        .collect();
    let started = Instant::now();
    let mut payload_bytes = 0usize;
    let mut events = 0usize;
    for (i, id) in ids.iter().enumerate() {
        let stream = game_stream(i as u64 + 1);
        payload_bytes += stream.iter().map(|e| e.payload.len()).sum::<usize>();
        events += stream.len();
        let mut seq = 0;
        for chunk in stream.chunks(carcassonne_store::MAX_EVENTS_PER_APPEND) {
            store.append(id, seq, &RequestId::none(), chunk).unwrap();
            seq += chunk.len() as u64;
        }
    }
    println!(
        "stored {games} finished games ({events} events) in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Cold: closed (its checkpoint written), the page cache dropped if we
    // may, and opened again.
    drop(store);
    let drop_caches = std::env::var("REBUILD_DROP_CACHES").is_ok_and(|v| v.trim() == "1");
    println!(
        "page cache: {}",
        if drop_caches {
            drop_page_cache()
        } else {
            "kept (REBUILD_DROP_CACHES=1, as root, drops it)".to_owned()
        }
    );
    let store: Arc<dyn EventStore> = Arc::new(SledStore::open(dir.path(), config).unwrap());

    // Read + decode + fold, from the store as it opened.
    let (rebuild, finished) = rebuild_all(store.as_ref(), &ids);
    let (warm, _) = rebuild_all(store.as_ref(), &ids);

    // Baseline: the same games folded from events already in memory.
    let stored: Vec<_> = ids.iter().map(|id| store.read_game(id, 1).unwrap()).collect();
    let started = Instant::now();
    for stream in &stored {
        std::hint::black_box(Loaded::fold(stream, None, |_, _, _| {}).unwrap());
    }
    let fold_only = started.elapsed().as_secs_f64();
    assert_eq!(finished as u64, games, "every stored game rebuilds as finished");
    println!(
        "baseline, fold from memory (decode + check + apply): {fold_only:.2} s, {:.0} events/s",
        events as f64 / fold_only
    );
    println!(
        "rebuild, warm store (read + decode + fold):         {warm:.2} s, {:.0} events/s",
        events as f64 / warm
    );
    println!(
        "rebuild, reopened store (read + decode + fold):     {rebuild:.2} s, {:.0} events/s ({:.1}x the baseline); \
         target < {TARGET_SECONDS} s for 10000 games: {}",
        events as f64 / rebuild,
        rebuild / fold_only,
        TARGET.judge(games, finished, rebuild < TARGET_SECONDS)
    );
    drop(store);
    let disk: u64 = walk(dir.path());
    println!(
        "disk: {} bytes per game, {:.0}x the {} payload bytes per game",
        disk / games,
        disk as f64 / payload_bytes as f64,
        payload_bytes as u64 / games
    );
}

/// Reads and folds every game; the seconds it took and how many came out
/// finished.
fn rebuild_all(store: &dyn EventStore, ids: &[GameId]) -> (f64, usize) {
    let started = Instant::now();
    let mut finished = 0;
    for id in ids {
        let stream = store.read_game(id, 1).unwrap();
        let loaded = Loaded::fold(&stream, None, |_, _, _| {}).unwrap();
        finished += usize::from(loaded.game.is_finished());
    }
    (started.elapsed().as_secs_f64(), finished)
}

/// Asks the kernel to drop its clean page cache (root only); says what
/// happened, for the report.
fn drop_page_cache() -> String {
    // `sync` first, so that the store's pages are clean and can go.
    let synced = std::process::Command::new("sync")
        .status()
        .is_ok_and(|s| s.success());
    match std::fs::write("/proc/sys/vm/drop_caches", "3\n") {
        Ok(()) if synced => "dropped (sync, then /proc/sys/vm/drop_caches)".to_owned(),
        Ok(()) => "dropped without a sync (clean pages only)".to_owned(),
        Err(error) => format!("kept ({error}): the store is reopened, but its files may be cached"),
    }
}

fn walk(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}
