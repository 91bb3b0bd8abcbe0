//! Unit tests of the archive cache: one build however many ask, a memory
//! bound, nothing kept of a failed build.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::ArchiveCache;
use crate::api::status::ApiError;

/// A build of `size` bytes that takes a while and counts itself.
fn build(
    builds: &Arc<AtomicUsize>,
    size: usize,
) -> impl FnOnce() -> Result<Vec<u8>, ApiError> + Send + 'static {
    let builds = builds.clone();
    move || {
        let n = builds.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(20));
        Ok(vec![n as u8; size])
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_callers_at_once_get_the_bytes_of_one_build() {
    let cache = ArchiveCache::new(1 << 20, 1 << 20, 1 << 30);
    let builds = Arc::new(AtomicUsize::new(0));
    let callers: Vec<_> = (0..40)
        .map(|_| {
            let (cache, build) = (cache.clone(), build(&builds, 1000));
            tokio::spawn(async move { cache.get_or_build("t1", build).await.unwrap() })
        })
        .collect();
    for caller in callers {
        assert_eq!(caller.await.unwrap(), vec![0u8; 1000]);
    }
    assert_eq!(builds.load(Ordering::SeqCst), 1);
    // And later callers too.
    cache.get_or_build("t1", build(&builds, 1000)).await.unwrap();
    assert_eq!(builds.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_archives_kept_stay_within_the_capacity_the_least_recent_going_first() {
    let cache = ArchiveCache::new(250, 1 << 20, 1 << 30);
    let builds = Arc::new(AtomicUsize::new(0));
    for subject in ["a", "b"] {
        cache.get_or_build(subject, build(&builds, 100)).await.unwrap();
    }
    // "a" asked for again: "b" is now the least recent.
    cache.get_or_build("a", build(&builds, 100)).await.unwrap();
    cache.get_or_build("c", build(&builds, 100)).await.unwrap();
    assert_eq!(cache.kept_bytes(), 200);
    assert_eq!(builds.load(Ordering::SeqCst), 3);
    cache.get_or_build("a", build(&builds, 100)).await.unwrap();
    assert_eq!(builds.load(Ordering::SeqCst), 3, "a is kept");
    cache.get_or_build("b", build(&builds, 100)).await.unwrap();
    assert_eq!(builds.load(Ordering::SeqCst), 4, "b was not");
    // Larger than the whole capacity: served, not kept.
    let huge = cache.get_or_build("huge", build(&builds, 1000)).await.unwrap();
    assert_eq!(huge.len(), 1000);
    assert!(cache.kept_bytes() <= 250);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_build_keeps_nothing_and_a_caller_gone_leaves_its_build_kept() {
    let cache = ArchiveCache::new(1 << 20, 1 << 20, 1 << 30);
    let refused = cache
        .get_or_build("running", || Err(ApiError::TournamentState("running".to_owned())))
        .await;
    assert!(matches!(refused, Err(ApiError::TournamentState(_))));
    let builds = Arc::new(AtomicUsize::new(0));
    cache.get_or_build("running", build(&builds, 10)).await.unwrap();
    assert_eq!(builds.load(Ordering::SeqCst), 1);

    // A caller that gives up mid-build: the build goes on and is kept.
    let gone = {
        let (cache, build) = (cache.clone(), build(&builds, 10));
        tokio::spawn(async move { cache.get_or_build("left", build).await })
    };
    tokio::time::sleep(Duration::from_millis(5)).await;
    gone.abort();
    tokio::time::sleep(Duration::from_millis(50)).await;
    cache.get_or_build("left", build(&builds, 10)).await.unwrap();
    assert_eq!(builds.load(Ordering::SeqCst), 2);
}

/// Downloads share the cache's bandwidth: however fast the client reads,
/// the bytes leave no faster than it allows (a lower bound on the time,
/// which no machine's speed can break), in chunks of at most its size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_leave_within_the_bandwidth_in_chunks() {
    use tokio_stream::StreamExt as _;
    let cache = ArchiveCache::new(1 << 20, 10 << 10, 100 << 10);
    let bytes = bytes::Bytes::from((0..50 << 10).map(|i| i as u8).collect::<Vec<u8>>());
    let started = std::time::Instant::now();
    // Two downloads at once share the bandwidth: 100 KiB in all.
    let downloads: Vec<_> = (0..2)
        .map(|_| {
            let stream = cache.download(bytes.clone(), |chunk| chunk);
            tokio::spawn(async move { stream.collect::<Vec<_>>().await })
        })
        .collect();
    for download in downloads {
        let chunks = download.await.unwrap();
        assert_eq!(chunks.len(), 5);
        let mut joined = Vec::new();
        for chunk in chunks {
            let chunk = chunk.unwrap();
            assert!(chunk.len() <= 10 << 10);
            joined.extend(chunk);
        }
        assert!(joined == bytes.to_vec());
    }
    // 100 KiB at 100 KiB/s, the first 10 KiB at once: at least 0.9 s.
    assert!(
        started.elapsed() >= Duration::from_millis(850),
        "{:?}",
        started.elapsed()
    );
}
