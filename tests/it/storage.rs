//! The binary's storage as an operator meets it: a disk too small to
//! start, a disk that fills while serving (a small tmpfs mounted for the
//! test when run as root, skipped with a message otherwise), and backups
//! of a running server.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use carcassonne::proto;
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::watch_service_client::WatchServiceClient;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::support::{
    act, create_request, game, legal, new_game, play, reason, replay, replay_request, serve, watch,
    watch_request, with_token,
};

/// A tmpfs of `mib` MiB on a temporary directory, unmounted on drop;
/// `None`, with a message, where mounting is not allowed.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(mib: u64) -> Option<SmallDisk> {
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

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file until the disk is full.
    fn fill(&self) -> PathBuf {
        use std::io::Write as _;
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        while file.write_all(&[0xAB; 64 << 10]).is_ok() {}
        while file.write_all(&[0xAB; 512]).is_ok() {}
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// `carcassonne backup` of the store at `data` to the file `to`.
fn backup(data: &Path, to: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["backup", "--data"])
        .arg(data)
        .arg("--to")
        .arg(to)
        .output()
        .unwrap()
}

async fn health(addr: &str) -> ServingStatus {
    let channel = tonic::transport::Channel::from_shared(addr.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = HealthClient::new(channel);
    let answer = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    ServingStatus::try_from(answer.status).unwrap()
}

#[test]
fn serve_on_a_disk_too_small_for_the_store_fails_naming_the_space_it_needs() {
    let Some(disk) = SmallDisk::mount(16) else { return };
    let (status, log) = serve(&disk.path().join("data"), &disk.path().join("log"), &[])
        .err()
        .unwrap();
    assert!(!status.success());
    assert!(
        log.contains("not enough disk space") && log.contains("it needs 22.0 MiB to start"),
        "{log}"
    );
    assert!(log.contains("write-ahead log"), "{log}");
    // A smaller write-ahead log fits.
    let served = serve(
        &disk.path().join("data"),
        &disk.path().join("log"),
        &["--wal-mib", "1"],
    )
    .unwrap();
    let (status, log) = served.terminate();
    assert_eq!(status.code(), Some(0), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_as_storage_unavailable_and_keeps_every_read() {
    let Some(disk) = SmallDisk::mount(16) else { return };
    let served = serve(
        &disk.path().join("data"),
        &disk.path().join("log"),
        &["--wal-mib", "1"],
    )
    .unwrap();
    let mut client = GameServiceClient::connect(served.addr.clone()).await.unwrap();
    let mut watcher = WatchServiceClient::connect(served.addr.clone()).await.unwrap();
    let (name, tokens) = new_game(&mut client, "before", 7).await;
    let version = play(&mut client, &name, &tokens, 6).await;
    assert_eq!(health(&served.addr).await, ServingStatus::Serving);

    // sled's own flusher (every 500 ms) has written what it holds: the
    // disk is filled by another program, at once.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let filler = disk.fill();
    tokio::time::sleep(Duration::from_millis(50)).await;
    // Writes: UNAVAILABLE, naming the storage.
    let legal_now = legal(&mut client, &name).await;
    let acted = client
        .act(with_token(
            act(
                &name,
                legal_now.version,
                "full",
                legal_now.actions[0].action.unwrap(),
            ),
            &tokens[legal_now.pending.unwrap().seat as usize],
        ))
        .await
        .unwrap_err();
    assert_eq!(acted.code(), Code::Unavailable, "{acted:?}");
    assert_eq!(reason(&acted), "STORAGE_UNAVAILABLE");
    assert!(
        acted.message().contains("storage unavailable"),
        "{}",
        acted.message()
    );
    let created = client
        .create_game(create_request("after", 2, &[], 8))
        .await
        .unwrap_err();
    assert_eq!(created.code(), Code::Unavailable, "{created:?}");
    assert_eq!(reason(&created), "STORAGE_UNAVAILABLE");

    // Health says so.
    let deadline = Instant::now() + Duration::from_secs(5);
    while health(&served.addr).await != ServingStatus::NotServing {
        assert!(Instant::now() < deadline, "health still SERVING with a full disk");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Reads need no space.
    assert_eq!(game(&mut client, &name).await.version, version);
    let listed = client
        .list_games(proto::ListGamesRequest {
            page_size: 10,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.games.len(), 1);
    let mut watching = watch(&mut watcher, watch_request(&name, None)).await;
    assert!(watching.message().await.unwrap().is_some(), "a snapshot");
    assert!(
        !replay(&mut watcher, replay_request(&name, Some(1), None))
            .await
            .is_empty()
    );
    let exported = watcher
        .export_game(proto::ExportGameRequest { name: name.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(!exported.record_json.is_empty());

    // Space again: writes and health come back.
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while health(&served.addr).await != ServingStatus::Serving {
        assert!(
            Instant::now() < deadline,
            "health NOT_SERVING after space was freed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    play(&mut client, &name, &tokens, 1).await;

    // Full again at the stop: the exit code says it.
    let _filler = disk.fill();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (status, log) = served.terminate();
    assert!(!status.success(), "exit 0 with its storage unavailable: {log}");
    assert!(log.contains("not cleanly") && log.contains("storage"), "{log}");
}

/// A backup taken by `carcassonne backup` while the server serves and
/// games are played holds every action acknowledged before it started;
/// `carcassonne restore` makes a store that verifies and a server that
/// serves those games.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_of_a_running_server_under_load_restores_every_acknowledged_action() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = serve(&data, &dir.path().join("log"), &[]).unwrap();
    let mut client = GameServiceClient::connect(served.addr.clone()).await.unwrap();
    let mut games = Vec::new();
    for i in 0..4 {
        let (name, tokens) = new_game(&mut client, &format!("g{i}"), i).await;
        let version = play(&mut client, &name, &tokens, 4).await;
        games.push((name, tokens, version));
    }
    // Load: every game goes on while the backup is taken.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load: Vec<_> = games
        .iter()
        .map(|(name, tokens, _)| {
            let (mut client, name, tokens, stop) =
                (client.clone(), name.clone(), tokens.clone(), stop.clone());
            tokio::spawn(async move {
                let mut step = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && step < 60 {
                    play(&mut client, &name, &tokens, 1).await;
                    step += 1;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut acknowledged = Vec::new();
    for (name, _, _) in &games {
        acknowledged.push((name.clone(), game(&mut client, name).await.version));
    }
    let backup_file = dir.path().join("games.backup");
    let backup = tokio::task::spawn_blocking({
        let (data, backup_file) = (data.clone(), backup_file.clone());
        move || backup(&data, &backup_file)
    })
    .await
    .unwrap();
    assert!(
        backup.status.success(),
        "{}",
        String::from_utf8_lossy(&backup.stderr)
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for task in load {
        task.await.unwrap();
    }
    assert_eq!(mode(&backup_file), 0o600, "the backup holds the seeds");
    assert_eq!(mode(&data.join("admin.sock")), 0o600);
    let (status, log) = served.terminate();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("backup written"), "{log}");

    let restored = dir.path().join("restored");
    let restore = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["restore", "--from"])
        .arg(&backup_file)
        .arg("--data")
        .arg(&restored)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&restore.stdout);
    assert!(
        restore.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&restore.stderr)
    );
    assert!(said.contains("games") && said.contains("verified"), "{said}");

    let served = serve(&restored, &dir.path().join("log2"), &[]).unwrap();
    let mut client = GameServiceClient::connect(served.addr.clone()).await.unwrap();
    for (name, version) in acknowledged {
        let game = game(&mut client, &name).await;
        assert!(game.version >= version, "{name}: {} < {version}", game.version);
    }
    let (status, log) = served.terminate();
    assert_eq!(status.code(), Some(0), "{log}");
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_backup_of_a_stopped_store_and_of_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = serve(&data, &dir.path().join("log"), &[]).unwrap();
    assert_eq!(served.terminate().0.code(), Some(0));
    let to = dir.path().join("b");
    // A partial file an earlier run left, readable by others.
    let partial = dir.path().join("b.partial");
    std::fs::write(&partial, b"left over").unwrap();
    std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o644)).unwrap();
    let stopped = backup(&data, &to);
    assert!(
        stopped.status.success(),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    assert!(String::from_utf8_lossy(&stopped.stdout).contains("backed up 0 events"));
    // It holds the seeds of running games: its owner's only.
    assert_eq!(mode(&to), 0o600);
    assert!(!partial.exists());
    std::fs::remove_file(&to).unwrap();
    assert!(backup(&data, &to).status.success());
    assert_eq!(mode(&to), 0o600, "a new file");
    let missing = backup(&dir.path().join("nothing"), &to);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("holds no event store"));
}

/// A server that closes the admin socket at once (here a fake one): the
/// backup fails, says so and exits non-zero, whether its request or its
/// reading met the closed socket (a broken pipe is quiet only on standard
/// output).
#[test]
fn a_backup_whose_server_closes_the_socket_fails_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(data.join("admin.sock")).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            drop(stream);
        }
    });
    let to = dir.path().join("b");
    for attempt in 0..20 {
        let backup = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
            .args(["backup", "--data"])
            .arg(&data)
            .arg("--to")
            .arg(&to)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&backup.stderr);
        assert!(!backup.status.success(), "attempt {attempt}: {said}");
        assert!(
            said.contains("asking the server for a backup") || said.contains("is not whole"),
            "attempt {attempt}: {said}"
        );
        assert!(!to.exists() && !dir.path().join("b.partial").exists());
    }
}

/// `serve --compression` makes a compressed store; a store keeps what it
/// was created with, and the server says so when the flag differs.
#[test]
fn serve_compression_makes_a_compressed_store_which_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = serve(&data, &dir.path().join("log"), &["--compression"]).unwrap();
    assert_eq!(served.terminate().0.code(), Some(0));
    let store = carcassonne_store::SledStore::open(&data, carcassonne_store::StoreConfig::default()).unwrap();
    assert!(store.compression());
    drop(store);
    let served = serve(&data, &dir.path().join("log"), &[]).unwrap();
    let (status, log) = served.terminate();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("keeps the compression it was created with"), "{log}");
    // Plain stays plain.
    let plain = dir.path().join("plain");
    assert_eq!(
        serve(&plain, &dir.path().join("log"), &[])
            .unwrap()
            .terminate()
            .0
            .code(),
        Some(0)
    );
    let (status, log) = serve(&plain, &dir.path().join("log"), &["--compression"])
        .unwrap()
        .terminate();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("compression") && log.contains("false"), "{log}");
    let store =
        carcassonne_store::SledStore::open(&plain, carcassonne_store::StoreConfig::default()).unwrap();
    assert!(!store.compression());
}
