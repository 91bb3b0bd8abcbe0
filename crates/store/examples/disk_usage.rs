//! Bytes on disk per stored game: games of 75 events of 10 bytes,
//! appended one event per call with a request id, games interleaved as a
//! busy server would, in a temporary directory removed at the end.
//!
//! `cargo run --release -p carcassonne-store --example disk_usage [GAMES] [--compression]`
//!
//! GAMES defaults to 200 (about 20 MB on disk, 7 MB compressed); 10,000
//! games write about 1 GB.
//!
//! `... --example disk_usage [GAMES] --postgres URL` measures the same in
//! a PostgreSQL database instead (which must be empty: a new database):
//! the size of the store's tables, indexes included.

use std::path::Path;
use std::time::Instant;

use carcassonne_store::*;

const EVENTS_PER_GAME: u64 = 75;
const PAYLOAD_LEN: usize = 10;
const DEFAULT_GAMES: u64 = 200;

/// Allocated bytes of every file under `dir` (what `du` reports).
fn allocated_bytes(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let metadata = entry.metadata()?;
        total += if metadata.is_dir() {
            allocated_bytes(&entry.path())?
        } else {
            metadata.blocks() * 512
        };
    }
    Ok(total)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let compression = std::env::args().any(|arg| arg == "--compression");
    let games: u64 = match std::env::args().skip(1).find(|arg| !arg.starts_with("--")) {
        Some(games) => games
            .parse()
            .map_err(|_| format!("GAMES must be a number, not {games:?}"))?,
        None => DEFAULT_GAMES,
    };
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == "--postgres") {
        let url = args.get(at + 1).ok_or("--postgres needs a connection string")?;
        let games: u64 = match args.iter().skip(1).find(|arg| arg.parse::<u64>().is_ok()) {
            Some(games) => games.parse()?,
            None => DEFAULT_GAMES,
        };
        #[cfg(feature = "postgres")]
        return postgres(url, games);
        #[cfg(not(feature = "postgres"))]
        return Err(format!("built without the postgres feature: no {url:?}, no {games} games").into());
    }
    let config = StoreConfig {
        // Durability is not what is measured here: flush once at the end.
        durability: Durability::None,
        compression,
        ..StoreConfig::default()
    };
    let dir = tempfile::tempdir()?;
    let per_game = if compression { 40_000 } else { 110_000 };
    eprintln!(
        "writing {games} games ({} events), about {} MB, into {} (removed at the end); \
         the figure per game is steady from about 200 games",
        games * EVENTS_PER_GAME,
        games * per_game / 1_000_000 + 1,
        dir.path().display()
    );
    let ids: Vec<GameId> = (0..games)
        .map(|n| GameId::new(format!("{n:08x}-5e1f-4c2a-9b7d-{:012x}", n * 7919)))
        .collect::<Result<_, _>>()?;
    let payload_bytes = games * EVENTS_PER_GAME * PAYLOAD_LEN as u64;
    let started = Instant::now();
    {
        let store = SledStore::open(dir.path(), config.clone())?;
        for seq in 0..EVENTS_PER_GAME {
            for id in &ids {
                let request = RequestId::new(format!("req-{seq}"))?;
                let payload = vec![(seq % 251) as u8; PAYLOAD_LEN];
                let event = NewEvent {
                    actor: Actor::Seat((seq % 4) as u8),
                    schema: 1,
                    payload,
                };
                store.append(id, seq, &request, &[event])?;
            }
        }
        store.flush()?;
        report("after writing", dir.path(), &store, games, payload_bytes)?;
    }
    println!(
        "compression {compression}: wrote {} events in {:.1?}",
        games * EVENTS_PER_GAME,
        started.elapsed()
    );
    let store = SledStore::open(dir.path(), StoreConfig::default())?;
    report("after reopening", dir.path(), &store, games, payload_bytes)?;
    Ok(())
}

fn report(
    when: &str,
    dir: &Path,
    store: &SledStore,
    games: u64,
    payload_bytes: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let sled_size = store.size_on_disk()?;
    let allocated = allocated_bytes(dir)?;
    let envelope = envelope::encoded_len(36, 6, PAYLOAD_LEN) as u64;
    println!(
        "{when}: {games} games x {EVENTS_PER_GAME} events x {PAYLOAD_LEN} B = {payload_bytes} B of payload"
    );
    println!(
        "  one envelope (36-byte game id, 6-byte request id): {envelope} B, {:.1}x its payload",
        envelope as f64 / PAYLOAD_LEN as f64
    );
    println!(
        "  sled's size_on_disk: {sled_size} B = {} B per game = {:.1}x the payload",
        sled_size / games,
        sled_size as f64 / payload_bytes as f64
    );
    println!(
        "  allocated on disk:   {allocated} B = {} B per game = {:.1}x the payload",
        allocated / games,
        allocated as f64 / payload_bytes as f64
    );
    Ok(())
}

#[cfg(feature = "postgres")]
fn postgres(url: &str, games: u64) -> Result<(), Box<dyn std::error::Error>> {
    let store = PgStore::open(url, StoreConfig::default())?;
    let before = store.size_on_disk()?;
    let ids: Vec<GameId> = (0..games)
        .map(|n| GameId::new(format!("{n:08x}-5e1f-4c2a-9b7d-{:012x}", n * 7919)))
        .collect::<Result<_, _>>()?;
    let started = Instant::now();
    for seq in 0..EVENTS_PER_GAME {
        for id in &ids {
            let request = RequestId::new(format!("req-{seq}"))?;
            let event = NewEvent {
                actor: Actor::Seat((seq % 4) as u8),
                schema: 1,
                payload: vec![(seq % 251) as u8; PAYLOAD_LEN],
            };
            store.append(id, seq, &request, &[event])?;
        }
    }
    let size = store.size_on_disk()?.saturating_sub(before);
    let payload_bytes = games * EVENTS_PER_GAME * PAYLOAD_LEN as u64;
    println!(
        "PostgreSQL: wrote {} events in {:.1?}; the store's tables grew by {size} B = {} B per game = {:.1}x the payload",
        games * EVENTS_PER_GAME,
        started.elapsed(),
        size / games.max(1),
        size as f64 / payload_bytes.max(1) as f64
    );
    Ok(())
}
