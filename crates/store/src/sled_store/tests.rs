//! Unit tests of the sled backend's own parts: the index layout, the
//! writer's game cache, and stores written by layout 1.

use crate::chain::{self, Head};
use crate::*;

use super::games::GameCache;
use super::layout::{self, IndexEntry};

fn game(id: &str) -> GameId {
    GameId::new(id).unwrap()
}

/// sled under a store just dropped: its background threads release the
/// file lock a moment later.
fn open_raw(path: &std::path::Path) -> sled::Db {
    for _ in 0..100 {
        if let Ok(db) = sled::Config::new().path(path).open() {
            return db;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    sled::Config::new().path(path).open().unwrap()
}

fn entry(id: &str, first_seq: u64, count: u16) -> IndexEntry {
    IndexEntry {
        game: game(id),
        first_seq,
        count,
    }
}

#[test]
fn index_items_round_trip_and_layout_1_items_still_read() {
    let entries = vec![
        entry("g-1", 1, 3),
        entry(&"x".repeat(MAX_GAME_ID_LEN), 7, 1),
        entry("g-1", 4, 16),
    ];
    let item = layout::index_item(&entries);
    assert_eq!(layout::parse_index_item(&item), Some(entries.clone()));
    assert_eq!(layout::item_events(&entries), 20);
    // Layout 1: one append, no version byte.
    let old = layout::append_entry(&entries[0]);
    assert_eq!(old[0], 0, "a first seq below 2^56 starts with a 0 byte");
    assert_eq!(layout::parse_index_item(&old), Some(vec![entries[0].clone()]));
    // Malformed items are refused, not misread.
    for cut in 1..item.len() {
        let parsed = layout::parse_index_item(&item[..cut]);
        assert!(
            parsed.is_none()
                || parsed
                    .as_ref()
                    .is_some_and(|p| entries.starts_with(p) && p.len() < 3),
            "cut at {cut}: {parsed:?}"
        );
    }
    assert_eq!(layout::parse_index_item(&[]), None);
    assert_eq!(layout::parse_index_item(&[2]), None, "an item of no appends");
    assert_eq!(layout::parse_index_item(&[9, 0, 0]), None, "an unknown version");
    let mut zero_count = layout::index_item(&[entry("g-1", 1, 1)]);
    zero_count[10] = 0;
    assert_eq!(layout::parse_index_item(&zero_count), None);
}

#[test]
fn the_game_cache_never_forgets_a_game_with_appends_not_yet_durable() {
    let db = sled::Config::new().temporary(true).open().unwrap();
    let mut cache = GameCache::new(8);
    for n in 0..8u64 {
        let state = cache.get(&db, 0, &game(&format!("g-{n}"))).unwrap();
        // Appends queued, not durable: positions 100 + n.
        state.last_position = 100 + n;
    }
    // Full: a ninth game while nothing is durable forgets nobody.
    cache.get(&db, 50, &game("g-new")).unwrap().last_position = 200;
    assert_eq!(cache.len(), 9);
    // Once g-0 and g-1 are durable, only they can go (an eighth: one).
    cache.get(&db, 101, &game("g-newer")).unwrap();
    assert_eq!(cache.len(), 9);
    let forgotten: Vec<u64> = (0..8)
        .filter(|n| !cache.contains(&game(&format!("g-{n}"))))
        .collect();
    assert!(forgotten == [0] || forgotten == [1], "{forgotten:?}");
    assert!(cache.contains(&game("g-new")));
}

/// Writes a store as layout 1 did: one index item per append, before its
/// envelopes, and the version key 1. Its last append is cut (an index item
/// without envelopes), as a crash between the two inserts left it.
fn write_layout_1_store(path: &std::path::Path) -> Vec<StoredEvent> {
    let db = sled::Config::new().path(path).open().unwrap();
    db.insert(layout::LAYOUT_KEY, layout::LAYOUT_VERSION_1).unwrap();
    let mut heads = std::collections::HashMap::new();
    let mut position = 1;
    let mut stored = Vec::new();
    for (n, name) in ["old-a", "old-b", "old-a", "old-a", "old-b"]
        .into_iter()
        .enumerate()
    {
        let id = game(name);
        let head: &mut Head = heads.entry(name).or_default();
        let events: Vec<NewEvent> = (0..=n % 2)
            .map(|k| NewEvent {
                actor: Actor::Server,
                schema: 1,
                payload: format!("{name} {n} {k}").into_bytes(),
            })
            .collect();
        let request = RequestId::new(format!("request-{n}")).unwrap();
        let built = chain::build(&id, &request, *head, position, 1_000 + n as u64, &events);
        let first_seq = head.last_seq + 1;
        let item = IndexEntry {
            game: id.clone(),
            first_seq,
            count: built.len() as u16,
        };
        db.insert(layout::position_key(position), layout::append_entry(&item))
            .unwrap();
        db.insert(
            layout::events_key(name, first_seq),
            layout::join_envelopes(built.iter().map(|(_, bytes)| bytes.as_slice())),
        )
        .unwrap();
        position += built.len() as u64;
        let last = &built.last().unwrap().0;
        *head = Head {
            last_seq: last.seq,
            last_hash: last.hash,
        };
        stored.extend(built.into_iter().map(|(event, _)| event));
    }
    let cut = IndexEntry {
        game: game("old-b"),
        first_seq: heads["old-b"].last_seq + 1,
        count: 1,
    };
    db.insert(layout::position_key(position), layout::append_entry(&cut))
        .unwrap();
    db.flush().unwrap();
    stored
}

#[test]
fn a_store_of_layout_1_opens_reads_verifies_and_takes_appends() {
    let dir = tempfile::tempdir().unwrap();
    let old_events = write_layout_1_store(dir.path());
    let store = SledStore::open(dir.path(), StoreConfig::default()).unwrap();
    // The cut append is gone; everything else reads back exactly.
    assert_eq!(store.last_position(), old_events.len() as u64);
    assert_eq!(store.read_all(1, 100).unwrap(), old_events);
    assert_eq!(store.read_all(3, 2).unwrap(), old_events[2..4].to_vec());
    let report = store.verify_all().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.events, old_events.len() as u64);
    // A retry of an old request is known; new appends chain on.
    let a = game("old-a");
    let last_a = store.game(&a).unwrap().unwrap().last_seq;
    let new = NewEvent {
        actor: Actor::Seat(0),
        schema: 1,
        payload: b"new".to_vec(),
    };
    let retried = store
        .append(
            &a,
            0,
            &RequestId::new("request-0").unwrap(),
            std::slice::from_ref(&new),
        )
        .unwrap();
    assert_eq!((retried.first_seq, retried.first_position), (1, 1));
    store
        .append(
            &a,
            last_a,
            &RequestId::new("new-1").unwrap(),
            std::slice::from_ref(&new),
        )
        .unwrap();
    drop(store);
    let store = SledStore::open(dir.path(), StoreConfig::default()).unwrap();
    let all = store.read_all(1, 100).unwrap();
    assert_eq!(all.len(), old_events.len() + 1);
    assert_eq!(all.last().unwrap().payload, b"new");
    assert!(store.verify_all().unwrap().is_ok());
    drop(store);
    let db = open_raw(dir.path());
    assert_eq!(
        db.get(layout::LAYOUT_KEY).unwrap().as_deref(),
        Some(layout::LAYOUT_VERSION)
    );
}

/// Layout 2 puts a group into sled after its log entries are synced, as
/// plain inserts: a crash can leave an append's envelopes without their
/// index item. Opening replays the log over them and completes it.
#[test]
fn records_a_crash_left_without_their_index_item_are_completed_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let id = game("g-cut");
    let new = |payload: &[u8]| NewEvent {
        actor: Actor::Seat(1),
        schema: 1,
        payload: payload.to_vec(),
    };
    let head = {
        let store = SledStore::open(dir.path(), StoreConfig::default()).unwrap();
        store
            .append(&id, 0, &RequestId::none(), &[new(b"one"), new(b"two")])
            .unwrap();
        let last = store.read_game(&id, 2).unwrap().remove(0);
        Head {
            last_seq: last.seq,
            last_hash: last.hash,
        }
    };
    // The third event: synced in the log, its envelopes alone in sled.
    let request = RequestId::new("cut-3").unwrap();
    let built = chain::build(&id, &request, head, 3, 5, &[new(b"three")]);
    let envelopes = layout::join_envelopes(built.iter().map(|(_, bytes)| bytes.as_slice()));
    let entry = layout::append_entry(&entry("g-cut", 3, 1));
    let mut log = Vec::new();
    super::wal::encode(&mut log, 3, &entry, &envelopes);
    let wal = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join(super::wal::FILE_NAME))
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&wal, &log, 0).unwrap();
    {
        let db = open_raw(dir.path());
        db.insert(layout::events_key("g-cut", 3), envelopes).unwrap();
        db.flush().unwrap();
    }
    let store = SledStore::open(dir.path(), StoreConfig::default()).unwrap();
    assert_eq!(store.last_position(), 3);
    let all = store.read_all(1, 10).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[2], built[0].0);
    assert!(store.verify_all().unwrap().is_ok());
    // The retry of the replayed append is known.
    let retried = store.append(&id, 0, &request, &[new(b"three")]).unwrap();
    assert_eq!(retried.first_position, 3);
}

/// A layout-2 index item whose envelopes are all missing cannot come from a
/// crash (envelopes go in first): it is damage, reported, and not repaired
/// away as a layout-1 cut append would be.
#[test]
fn an_index_item_of_layout_2_without_its_records_is_refused_not_removed() {
    let dir = tempfile::tempdir().unwrap();
    let id = game("g-damaged");
    {
        let store = SledStore::open(dir.path(), StoreConfig::default()).unwrap();
        let event = NewEvent {
            actor: Actor::Server,
            schema: 1,
            payload: b"x".to_vec(),
        };
        store
            .append(&id, 0, &RequestId::none(), std::slice::from_ref(&event))
            .unwrap();
    }
    {
        let db = open_raw(dir.path());
        db.remove(layout::events_key("g-damaged", 1)).unwrap();
        db.flush().unwrap();
    }
    let error = SledStore::open(dir.path(), StoreConfig::default()).unwrap_err();
    assert!(
        matches!(error, StoreError::CorruptIndex { position: 1, .. }),
        "{error}"
    );
    let db = open_raw(dir.path());
    assert!(
        db.get(layout::position_key(1)).unwrap().is_some(),
        "the evidence stays"
    );
}

/// A backup copies appends as stored, whatever the layout of their index:
/// a store of layout 1 restores to the same events.
#[test]
fn a_store_of_layout_1_backs_up_and_restores_to_the_same_events() {
    let dir = tempfile::tempdir().unwrap();
    let old_events = write_layout_1_store(dir.path());
    let store = SledStore::open(dir.path(), StoreConfig::default()).unwrap();
    let mut backup = Vec::new();
    let report = store.backup(&mut backup).unwrap();
    assert_eq!(report.events, old_events.len() as u64);
    let target = tempfile::tempdir().unwrap();
    let restored = SledStore::restore(
        &mut backup.as_slice(),
        &target.path().join("r"),
        StoreConfig::default(),
    )
    .unwrap();
    assert!(restored.verified.is_ok(), "{:?}", restored.verified);
    let copy = SledStore::open(target.path().join("r"), StoreConfig::default()).unwrap();
    assert_eq!(copy.read_all(1, 100).unwrap(), old_events);
}
