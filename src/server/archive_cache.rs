//! Signed archives of finished games and tournaments, built once and kept.
//!
//! An archive is asked for by anyone, without a key, and building one
//! reads, folds and hashes every event of its subject (a 120-game
//! tournament: 10 MB, more than half a second of a core). Its subject no
//! longer changes once finished, so the first build is the archive
//! (its manifest keeps that build's time): every later download is the
//! same bytes, shared, never copied whole per download.
//!
//! What it may cost is bounded:
//! - memory: the archives kept add up to at most the cache's capacity,
//!   the least recently asked for going first (an archive larger than the
//!   whole capacity is served, not kept);
//! - work: one build per subject at a time (callers that come meanwhile
//!   wait for it and take its bytes), and one build at a time for the
//!   whole cache, on a blocking thread, so that a flood of downloads of
//!   many subjects takes one core at most, never the games' time;
//! - a caller that goes away leaves its build to finish and be kept;
//! - sending: downloads share a bandwidth (bytes a second, over all of a
//!   cache's downloads), so that clients reading as fast as loopback
//!   allows cannot keep the cores copying archives; alone, a download of
//!   a large tournament's still takes a fraction of a second.
//!
//! A build that fails (the subject is still running, sealed, not found)
//! keeps nothing: the next caller tries again.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use tokio::sync::Semaphore;

use crate::api::status::ApiError;

#[cfg(test)]
mod tests;

/// The kept archives, by subject, least recently asked for first out.
pub struct ArchiveCache {
    kept: Mutex<Kept>,
    /// The build running for each subject: whoever holds its lock builds.
    building: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// One build at a time, whatever its subject.
    builds: Arc<Semaphore>,
    capacity: usize,
    /// The bandwidth its downloads share, in KiB.
    sending: governor::DefaultDirectRateLimiter,
    /// The most bytes of an archive in one message.
    chunk: usize,
}

/// `bytes` in KiB, the unit of the downloads' bandwidth (at least 1).
fn kib(bytes: usize) -> NonZeroU32 {
    NonZeroU32::new(u32::try_from(bytes.div_ceil(1024)).unwrap_or(u32::MAX)).unwrap_or(NonZeroU32::MIN)
}

struct Kept {
    archives: lru::LruCache<String, Bytes>,
    bytes: usize,
}

impl ArchiveCache {
    /// A cache that keeps archives of up to `capacity` bytes in all, and
    /// sends them in messages of at most `chunk` bytes, at most
    /// `bytes_per_second` over all its downloads.
    pub fn new(capacity: usize, chunk: usize, bytes_per_second: usize) -> Arc<ArchiveCache> {
        // A chunk at once at most: a download waits for each chunk.
        let quota = governor::Quota::per_second(kib(bytes_per_second)).allow_burst(kib(chunk));
        Arc::new(ArchiveCache {
            kept: Mutex::new(Kept {
                archives: lru::LruCache::unbounded(),
                bytes: 0,
            }),
            building: Mutex::new(HashMap::new()),
            builds: Arc::new(Semaphore::new(1)),
            capacity,
            sending: governor::RateLimiter::direct(quota),
            chunk: chunk.max(1),
        })
    }

    /// `bytes` as a stream of messages of at most a chunk each, each
    /// copied only as the client reads it and sent within the downloads'
    /// bandwidth: a download holds the shared bytes and one chunk, never a
    /// copy of the whole.
    pub fn download<T: Send + 'static>(
        self: &Arc<Self>,
        bytes: Bytes,
        message: impl Fn(Vec<u8>) -> T + Send + Sync + 'static,
    ) -> impl tokio_stream::Stream<Item = Result<T, tonic::Status>> + Send + 'static {
        use tokio_stream::StreamExt as _;
        let cache = self.clone();
        let message = Arc::new(message);
        let starts = (0..bytes.len()).step_by(self.chunk);
        tokio_stream::iter(starts).then(move |start| {
            let (cache, bytes, message) = (cache.clone(), bytes.clone(), message.clone());
            async move {
                let end = (start + cache.chunk).min(bytes.len());
                cache.send(end - start).await;
                Ok(message(bytes[start..end].to_vec()))
            }
        })
    }

    /// Waits until `bytes` more fit the downloads' bandwidth.
    async fn send(&self, bytes: usize) {
        use governor::clock::Clock as _;
        loop {
            match self.sending.check_n(kib(bytes)) {
                Ok(Ok(())) => return,
                Ok(Err(not_until)) => {
                    let wait = not_until.wait_time_from(governor::clock::DefaultClock::default().now());
                    tokio::time::sleep(wait).await;
                }
                // Never: a chunk is at most the burst.
                Err(_) => return,
            }
        }
    }

    /// The archive of `subject`: kept, or built by `build` (blocking, on a
    /// thread of its own) once, whoever else asks meanwhile.
    pub async fn get_or_build(
        self: &Arc<Self>,
        subject: &str,
        build: impl FnOnce() -> Result<Vec<u8>, ApiError> + Send + 'static,
    ) -> Result<Bytes, ApiError> {
        if let Some(bytes) = self.kept(subject) {
            return Ok(bytes);
        }
        let flight = self.flight(subject);
        let building = flight.clone().lock_owned().await;
        if let Some(bytes) = self.kept(subject) {
            return Ok(bytes);
        }
        let permit = self
            .builds
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| ApiError::Internal(format!("the archive builds' semaphore: {e}")))?;
        let cache = self.clone();
        let subject = subject.to_owned();
        // The build, its keeping and the end of its flight run to the end
        // even if the caller goes away: callers waiting meanwhile find it.
        tokio::task::spawn_blocking(move || {
            let built = build().map(Bytes::from);
            if let Ok(bytes) = &built {
                cache.keep(&subject, bytes.clone());
            }
            drop(permit);
            cache.land(&subject, &flight);
            drop(building);
            built
        })
        .await
        .map_err(|e| ApiError::Internal(format!("an archive's build failed: {e}")))?
    }

    fn kept(&self, subject: &str) -> Option<Bytes> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.archives.get(subject).cloned()
    }

    fn keep(&self, subject: &str, bytes: Bytes) {
        if bytes.len() > self.capacity {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.bytes += bytes.len();
        if let Some(old) = kept.archives.put(subject.to_owned(), bytes) {
            kept.bytes -= old.len();
        }
        while kept.bytes > self.capacity {
            match kept.archives.pop_lru() {
                Some((_, evicted)) => kept.bytes -= evicted.len(),
                None => break,
            }
        }
    }

    /// The lock of `subject`'s build, made if none runs.
    fn flight(&self, subject: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        building.entry(subject.to_owned()).or_default().clone()
    }

    /// A build is over: its subject's lock is forgotten (callers holding
    /// it still find the archive kept, or build again).
    fn land(&self, subject: &str, flight: &Arc<tokio::sync::Mutex<()>>) {
        let mut building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        if building
            .get(subject)
            .is_some_and(|current| Arc::ptr_eq(current, flight))
        {
            building.remove(subject);
        }
    }

    /// The bytes kept now, for tests.
    #[cfg(test)]
    pub(crate) fn kept_bytes(&self) -> usize {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner).bytes
    }
}
