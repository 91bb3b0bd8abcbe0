//! Operations: backups of a running store, compression, and a full disk
//! (on a small tmpfs mounted for the test when run as root).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use carcassonne_store::*;

use crate::support::{config, event, game, request};

/// A tmpfs of `mib` MiB mounted on a temporary directory, unmounted on
/// drop; `None` (with a message) where mounting is not allowed.
pub struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    pub fn mount(mib: u64) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(output) if output.status.success() => Some(SmallDisk { dir }),
            _ => {
                eprintln!("skipped: mounting a {mib} MiB tmpfs needs root (run the tests as root)");
                None
            }
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the disk until a write fails for lack of space; returns the
    /// filler file, whose removal frees the space again.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write as _;
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let chunk = vec![0xAB; 64 << 10];
        loop {
            if let Err(error) = file.write_all(&chunk) {
                assert_eq!(error.raw_os_error(), Some(28), "ENOSPC expected: {error}");
                break;
            }
        }
        // The last pages, one at a time.
        while file.write_all(&[0xAB; 512]).is_ok() {}
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn small_log() -> StoreConfig {
    StoreConfig {
        log_capacity_bytes: 1 << 20,
        reserve_bytes: 1 << 20,
        ..config(Durability::Flush)
    }
}

#[test]
fn a_new_store_on_a_too_small_disk_is_refused_naming_the_space_it_needs() {
    let Some(disk) = SmallDisk::mount(16) else { return };
    let data = disk.path().join("data");
    // The default log alone is 16 MiB.
    let refused = SledStore::open(&data, config(Durability::Flush));
    match refused {
        Err(StoreError::Unavailable(message)) => {
            assert!(
                message.contains("not enough disk space") && message.contains("it needs 22.0 MiB"),
                "{message}"
            );
            assert!(message.contains("16.0 MiB for its write-ahead log"), "{message}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    // A smaller log fits.
    let store = SledStore::open(&data, small_log()).unwrap();
    store
        .append(&game("g"), 0, &request("r"), &[event(b"one")])
        .unwrap();
    store.close().unwrap();
}

#[test]
fn a_full_disk_refuses_appends_keeps_reads_and_takes_appends_again_once_freed() {
    let Some(disk) = SmallDisk::mount(16) else { return };
    let store = SledStore::open(disk.path().join("data"), small_log()).unwrap();
    let g = game("g");
    for seq in 0..20 {
        let id = if seq == 19 {
            request("r-last")
        } else {
            RequestId::none()
        };
        store.append(&g, seq, &id, &[event(&[seq as u8; 100])]).unwrap();
    }
    store.flush().unwrap();
    assert_eq!(store.storage_problem(), None);
    let filler = disk.fill();
    // Past the interval between two looks at the free space.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let refused = store.append(&g, 20, &request("full"), &[event(b"x")]);
    match &refused {
        Err(StoreError::Unavailable(reason)) => assert!(reason.contains("is full"), "{reason}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(!refused.unwrap_err().is_caller_error());
    // A retried request writes nothing: it gets its first answer.
    let retried = store.append(&g, 19, &RequestId::new("r-last").unwrap(), &[event(b"z")]);
    assert_eq!(retried.unwrap().last_seq, 20);
    assert!(store.storage_problem().is_some_and(|p| p.contains("is full")));
    // Reads need no space.
    assert_eq!(store.read_game(&g, 1).unwrap().len(), 20);
    assert_eq!(store.list_games(None, 10).unwrap().games.len(), 1);
    assert!(store.verify_all().unwrap().is_ok());
    // Nothing was half written: once space is freed, the game goes on.
    std::fs::remove_file(filler).unwrap();
    assert_eq!(store.storage_problem(), None);
    store.append(&g, 20, &request("full"), &[event(b"x")]).unwrap();
    store.close().unwrap();
    drop(store);
    let reopened = SledStore::open(disk.path().join("data"), small_log()).unwrap();
    assert_eq!(reopened.read_game(&g, 1).unwrap().len(), 21);
    assert!(reopened.verify_all().unwrap().is_ok());
}

#[test]
fn a_close_whose_final_flush_fails_says_it_was_not_clean() {
    let Some(disk) = SmallDisk::mount(16) else { return };
    // No reserve: sled meets the full disk, at the latest at the close's
    // checkpoint.
    let no_reserve = StoreConfig {
        reserve_bytes: 0,
        log_capacity_bytes: 4 << 20,
        ..small_log()
    };
    let store = SledStore::open(disk.path().join("data"), no_reserve).unwrap();
    store.flush().unwrap();
    let _filler = disk.fill();
    // Durable in the preallocated log, which needs no new space, until
    // sled fails to write them (more than its current segment holds).
    for seq in 0..350 {
        let appended = store.append(&game("g"), seq, &RequestId::none(), &[event(&[7; 3000])]);
        if appended.is_err() {
            break;
        }
    }
    let closed = store.close();
    assert!(
        matches!(&closed, Err(StoreError::Unavailable(reason)) if reason.contains("failed")),
        "{closed:?}"
    );
    // Later appends are refused, not left waiting.
    assert!(matches!(
        store.append(&game("g"), 1, &request("s"), &[event(b"y")]),
        Err(StoreError::Unavailable(_))
    ));
}

#[test]
fn a_closed_store_refuses_appends_instead_of_leaving_them_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path(), config(Durability::Flush)).unwrap();
    store
        .append(&game("g"), 0, &request("r"), &[event(b"a")])
        .unwrap();
    store.close().unwrap();
    match store.append(&game("g"), 1, &request("s"), &[event(b"b")]) {
        Err(StoreError::Unavailable(reason)) => assert!(reason.contains("closed"), "{reason}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

/// Writers append to many games with the default durability while a
/// backup is taken: restored, it verifies and holds every event that was
/// acknowledged before the backup started, byte for byte.
#[test]
fn a_backup_taken_under_load_restores_every_event_acknowledged_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SledStore::open(dir.path(), config(Durability::Flush)).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    // (game, seq) -> payload of every acknowledged event.
    let acknowledged = Arc::new(Mutex::new(BTreeMap::new()));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (store, stop, acknowledged) = (store.clone(), stop.clone(), acknowledged.clone());
            std::thread::spawn(move || {
                let mut seq = [0u64; 8];
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let g = (n % 8) as usize;
                    let id = game(&format!("w{w}-g{g}"));
                    let payload = format!("{w}/{g}/{}", seq[g]).into_bytes();
                    store
                        .append(&id, seq[g], &request(&format!("r{n}")), &[event(&payload)])
                        .unwrap();
                    seq[g] += 1;
                    n += 1;
                    acknowledged
                        .lock()
                        .unwrap()
                        .insert((id.to_string(), seq[g]), payload);
                }
            })
        })
        .collect();
    while acknowledged.lock().unwrap().len() < 300 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let before = acknowledged.lock().unwrap().clone();
    let mut backup = Vec::new();
    let report = store.backup(&mut backup).unwrap();
    // Appends went on during the backup.
    let target = acknowledged.lock().unwrap().len() + 200;
    while acknowledged.lock().unwrap().len() < target {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
    assert!(report.events >= before.len() as u64, "{report:?}");
    assert!(
        report.events < store.last_position(),
        "the store went on during the backup"
    );
    assert_eq!(report.position, report.events);
    assert_eq!(check_backup(&mut backup.as_slice()).unwrap(), report);

    let restored_dir = tempfile::tempdir().unwrap();
    let target_dir = restored_dir.path().join("restored");
    let restored =
        SledStore::restore(&mut backup.as_slice(), &target_dir, config(Durability::Flush)).unwrap();
    assert!(restored.verified.is_ok(), "{:?}", restored.verified);
    assert_eq!(restored.verified.events, report.events);
    let copy = SledStore::open(&target_dir, config(Durability::Flush)).unwrap();
    for ((id, seq), payload) in &before {
        let events = copy.read_game(&game(id), *seq).unwrap();
        assert_eq!(&events[0].payload, payload, "{id} event {seq}");
    }
    // Byte for byte what the original holds up to the backup's position.
    let original = store.read_all(1, report.events as usize).unwrap();
    let restored_events = copy.read_all(1, report.events as usize).unwrap();
    assert_eq!(original, restored_events);
    // The restored store takes appends after them, and its request ids.
    let (id, seq) = before.keys().next().unwrap().clone();
    let first = copy.read_game(&game(&id), seq).unwrap()[0].clone();
    let retried = copy
        .append(&game(&id), 0, &first.request_id, &[event(b"again")])
        .unwrap();
    assert_eq!(retried.first_seq, seq, "a retried request id finds its append");
}

/// `carcassonne-backup/1\n`: what comes before the position in a backup.
const MAGIC_LEN: usize = 21;

#[test]
fn a_cut_or_damaged_backup_is_refused_and_restores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path(), config(Durability::Flush)).unwrap();
    for seq in 0..10 {
        store
            .append(&game("g"), seq, &RequestId::none(), &[event(&[seq as u8; 50])])
            .unwrap();
    }
    let mut backup = Vec::new();
    store.backup(&mut backup).unwrap();
    let cut = &backup[..backup.len() - 30];
    let mut damaged = backup.clone();
    damaged[100] ^= 1;
    for (name, bytes) in [
        ("cut", cut.to_vec()),
        ("damaged", damaged),
        ("not a backup", b"hello".to_vec()),
    ] {
        assert!(
            matches!(
                check_backup(&mut bytes.as_slice()),
                Err(StoreError::InvalidArgument(_))
            ),
            "{name}"
        );
        let target = tempfile::tempdir().unwrap();
        let restored = SledStore::restore(
            &mut bytes.as_slice(),
            &target.path().join("r"),
            StoreConfig::default(),
        );
        assert!(restored.is_err(), "{name}");
        // Nothing a server could open and serve in part, nothing left over.
        let left: Vec<_> = std::fs::read_dir(target.path()).unwrap().collect();
        assert!(left.is_empty(), "{name}: {left:?}");
        // Nor in an empty directory given as the target.
        let empty = target.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(SledStore::restore(&mut bytes.as_slice(), &empty, StoreConfig::default()).is_err());
        assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "{name}");
        std::fs::remove_dir(&empty).unwrap();
        assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0, "{name}");
    }
    // A whole backup restored into an empty directory fills it.
    let target = tempfile::tempdir().unwrap();
    let restored = SledStore::restore(&mut backup.as_slice(), target.path(), StoreConfig::default()).unwrap();
    assert_eq!(restored.verified.events, 10);
    assert_eq!(
        SledStore::open(target.path(), StoreConfig::default())
            .unwrap()
            .last_position(),
        10
    );
    // A header that claims the last position there is: refused, no overflow.
    let mut crafted = backup[..MAGIC_LEN].to_vec();
    crafted.extend(u64::MAX.to_le_bytes());
    crafted.extend(&backup[MAGIC_LEN + 8..]);
    for bytes in [crafted.clone(), crafted[..MAGIC_LEN + 8].to_vec()] {
        let refused = check_backup(&mut bytes.as_slice());
        assert!(
            matches!(&refused, Err(StoreError::InvalidArgument(m)) if m.contains("position")),
            "{refused:?}"
        );
        let target = tempfile::tempdir().unwrap();
        let target = target.path().join("r");
        assert!(SledStore::restore(&mut bytes.as_slice(), &target, StoreConfig::default()).is_err());
        assert!(!target.exists());
    }
    // Nor into a directory that holds something.
    let restored = SledStore::restore(&mut backup.as_slice(), dir.path(), StoreConfig::default());
    assert!(matches!(restored, Err(StoreError::InvalidArgument(m)) if m.contains("not empty")));
}

/// Compression is fixed when a store is created: opening with another
/// setting keeps the store's and says which is in force; restoring a
/// backup with compression is how an existing store gets it.
#[test]
fn compression_is_chosen_at_creation_and_changed_by_a_restore() {
    let compressed = StoreConfig {
        compression: true,
        ..config(Durability::Flush)
    };
    let plain_dir = tempfile::tempdir().unwrap();
    let plain = SledStore::open(plain_dir.path(), config(Durability::Flush)).unwrap();
    assert!(!plain.compression());
    // Repetitive payloads, as game events are.
    for seq in 0..400 {
        plain
            .append(
                &game("g"),
                seq,
                &RequestId::none(),
                &[event(&[(seq % 7) as u8; 400])],
            )
            .unwrap();
    }
    let mut backup = Vec::new();
    plain.backup(&mut backup).unwrap();
    plain.close().unwrap();
    drop(plain);
    let reopened = SledStore::open(plain_dir.path(), compressed.clone()).unwrap();
    assert!(!reopened.compression(), "an existing store keeps its setting");
    let plain_size = reopened.size_on_disk().unwrap();
    drop(reopened);

    let restored_dir = tempfile::tempdir().unwrap();
    let target = restored_dir.path().join("z");
    let restored = SledStore::restore(&mut backup.as_slice(), &target, compressed).unwrap();
    assert!(restored.verified.is_ok() && restored.verified.events == 400);
    let store = SledStore::open(&target, config(Durability::Flush)).unwrap();
    assert!(store.compression(), "restored with compression, it keeps it");
    let compressed_size = store.size_on_disk().unwrap();
    assert!(
        compressed_size * 2 < plain_size,
        "compressed {compressed_size} B, plain {plain_size} B"
    );
}
