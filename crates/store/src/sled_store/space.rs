//! The free space a store leaves on its disk, and what it needs to start.
//!
//! sled meets a full disk badly: a failed write of its log sets an error
//! that every later write of the database returns, and reads that finish
//! a pending split of a page fail with it too. So the store refuses
//! appends while the disk holding it has less than its reserve free
//! ([`StoreConfig::reserve_bytes`](crate::StoreConfig)), before anything
//! reaches sled: what sled already holds in memory (at most its flush
//! interval's appends) still fits, nothing fails, and reads go on. Once
//! space is freed, appends are taken again.
//!
//! The write-ahead log itself never needs new space: it is allocated when
//! the store is created and overwritten in place.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{Result, StoreError};

/// How often an append looks at the free space while there is enough:
/// between two looks, appends write far less than the reserve.
const CHECK_INTERVAL: Duration = Duration::from_millis(10);

/// The free space sled needs to create its files and write its first
/// segments, besides the reserve.
pub(crate) const SLED_START_BYTES: u64 = 2 << 20;

pub(super) struct SpaceGuard {
    dir: PathBuf,
    reserve: u64,
    /// Whether the last look found less than the reserve.
    low: AtomicBool,
    last: Mutex<Look>,
}

struct Look {
    at: Option<Instant>,
    problem: Option<String>,
}

impl SpaceGuard {
    pub(super) fn new(dir: &Path, reserve: u64) -> SpaceGuard {
        SpaceGuard {
            dir: dir.to_owned(),
            reserve,
            low: AtomicBool::new(false),
            last: Mutex::new(Look {
                at: None,
                problem: None,
            }),
        }
    }

    /// Refuses an append while the disk has less than the reserve free.
    /// Looks at the disk at most every [`CHECK_INTERVAL`] while there is
    /// enough, and at every call while there is not.
    pub(super) fn check_append(&self) -> Result<()> {
        match self.problem(CHECK_INTERVAL) {
            Some(problem) => Err(StoreError::Unavailable(problem)),
            None => Ok(()),
        }
    }

    /// Why appends are refused now, if they are: a fresh look.
    pub(super) fn current_problem(&self) -> Option<String> {
        self.problem(Duration::ZERO)
    }

    fn problem(&self, max_age: Duration) -> Option<String> {
        let low = self.low.load(Ordering::Acquire);
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh = last.at.is_some_and(|at| at.elapsed() < max_age);
        if fresh && !low {
            return None;
        }
        let problem = match fs2::available_space(&self.dir) {
            Ok(free) if free >= self.reserve => None,
            Ok(free) => Some(format!(
                "the disk holding {} is full: {} free, less than the {} the store keeps free; \
                 appends are refused until space is freed",
                self.dir.display(),
                mib(free),
                mib(self.reserve)
            )),
            Err(error) => Some(format!(
                "cannot read the free space of the disk holding {} ({error})",
                self.dir.display()
            )),
        };
        last.at = Some(Instant::now());
        last.problem.clone_from(&problem);
        self.low.store(problem.is_some(), Ordering::Release);
        problem
    }
}

/// Refuses to create or open a store in `dir` when its disk lacks the space
/// the store needs to start: what the write-ahead log still has to
/// allocate, what sled needs to create its files, and the reserve.
pub(super) fn check_start(dir: &Path, log_to_allocate: u64, sled_start: u64, reserve: u64) -> Result<()> {
    let free = fs2::available_space(dir)?;
    let needed = log_to_allocate + sled_start + reserve;
    if free >= needed {
        return Ok(());
    }
    Err(StoreError::Unavailable(format!(
        "not enough disk space for the event store in {}: {} free, it needs {} to start \
         ({} for its write-ahead log, {} for sled's files, {} kept free); free some space, \
         or choose a smaller write-ahead log (`serve --wal-mib`)",
        dir.display(),
        mib(free),
        mib(needed),
        mib(log_to_allocate),
        mib(sled_start),
        mib(reserve)
    )))
}

/// Bytes in MiB, for messages.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}
