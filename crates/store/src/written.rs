//! An append that is written but not yet acknowledged.
//!
//! An append is acknowledged once it is durable. Waiting for that is the
//! slow part (a disk sync, shared by every append of a group commit), so
//! [`EventStore::write`](crate::EventStore::write) returns as soon as the
//! append is written and hands back a [`Written`]: a thread waits with
//! [`Written::wait`], an async task with [`Written::acknowledged`], which
//! holds no thread while the disk syncs. Until then nobody else sees the
//! append: reads and subscriptions stop at the durable position.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::error::Result;
use crate::event::Appended;

/// Where an append's acknowledgement comes from.
pub(crate) trait Acknowledger: Send + Sync {
    /// Blocks until `position` is durable, or durability failed.
    fn wait(&self, position: u64) -> Result<()>;

    /// Ready once `position` is durable, or durability failed; otherwise
    /// wakes `cx` when that changes.
    fn poll(&self, position: u64, cx: &mut Context<'_>) -> Poll<Result<()>>;
}

/// A written append, acknowledged once durable.
#[must_use = "an append is acknowledged only once it is durable: wait for it"]
pub struct Written {
    appended: Appended,
    pending: Option<Arc<dyn Acknowledger>>,
}

impl Written {
    /// An append that is durable already (or a backend without a disk).
    pub(crate) fn durable(appended: Appended) -> Written {
        Written {
            appended,
            pending: None,
        }
    }

    /// An append durable once `acknowledger` says its last position is.
    pub(crate) fn pending(appended: Appended, acknowledger: Arc<dyn Acknowledger>) -> Written {
        Written {
            appended,
            pending: Some(acknowledger),
        }
    }

    /// What was written. Not to be shown to anybody before it is
    /// acknowledged: a crash could still take it back.
    pub fn appended(&self) -> &Appended {
        &self.appended
    }

    /// Blocks the thread until the append is durable.
    pub fn wait(self) -> Result<Appended> {
        if let Some(acknowledger) = &self.pending {
            acknowledger.wait(self.appended.last_position)?;
        }
        Ok(self.appended)
    }

    /// Resolves once the append is durable, holding no thread meanwhile.
    pub fn acknowledged(self) -> Acknowledged {
        Acknowledged(Some(self))
    }
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Written")
            .field("appended", &self.appended)
            .field("pending", &self.pending.is_some())
            .finish()
    }
}

/// The future of [`Written::acknowledged`].
#[must_use = "futures do nothing unless polled"]
pub struct Acknowledged(Option<Written>);

impl Future for Acknowledged {
    type Output = Result<Appended>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(written) = &self.0 else {
            // Polled after it completed: a caller's bug, answered calmly.
            return Poll::Ready(Err(crate::StoreError::Io(std::io::Error::other(
                "an acknowledgement polled after it completed",
            ))));
        };
        if let Some(acknowledger) = &written.pending {
            match acknowledger.poll(written.appended.last_position, cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(error)) => {
                    self.0 = None;
                    return Poll::Ready(Err(error));
                }
                Poll::Ready(Ok(())) => {}
            }
        }
        let appended = written.appended;
        self.0 = None;
        Poll::Ready(Ok(appended))
    }
}
