//! Recent CreateGame answers, so that an identical retry gets the first
//! answer, seat tokens included.
//!
//! Tokens are never stored (only their hashes are), so a retry can only be
//! answered from memory: each answer is kept for [`WINDOW`], for at most
//! [`CAPACITY`] creations, and is lost on a restart. After that a retry
//! answers ALREADY_EXISTS (`GAME_ALREADY_CREATED`), as the store finds the
//! game. A request with the same id and other fields is not a retry:
//! ALREADY_EXISTS (`REQUEST_ID_REUSED`).
//!
//! A creation runs in a task of its own, so that a caller that gives up
//! (a deadline) does not lose the answer its retry will ask for; a retry
//! that comes while the first call is still running waits for its answer.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::Digest as _;
use tokio::sync::watch;

use crate::api::status::ApiError;
use crate::proto;

/// How long an answer is kept for its retries.
pub const WINDOW: Duration = Duration::from_secs(10 * 60);
/// The most answers kept; the oldest goes first.
pub const CAPACITY: usize = 1024;

type Answer = Arc<proto::CreateGameResponse>;

/// What a request hashes to: two requests are the same creation when every
/// field is the same.
pub fn fingerprint(request: &proto::CreateGameRequest) -> [u8; 32] {
    sha2::Sha256::digest(prost::Message::encode_to_vec(request)).into()
}

enum State {
    /// The first call runs; its answer comes through the channel (`None`
    /// until then; the sender dropped if it failed).
    Running(watch::Receiver<Option<Answer>>),
    Done {
        answer: Answer,
        at: Instant,
    },
}

struct Entry {
    fingerprint: [u8; 32],
    /// Tells this entry from a later one of the same request id.
    generation: u64,
    state: State,
}

#[derive(Default)]
struct Recent {
    entries: HashMap<String, Entry>,
    /// Finished entries, oldest first, with their generation.
    order: VecDeque<(String, u64)>,
    next_generation: u64,
}

enum Claim {
    Answered(Answer),
    Wait(watch::Receiver<Option<Answer>>),
    First(watch::Sender<Option<Answer>>, u64),
}

pub struct Creations {
    recent: Mutex<Recent>,
    window: Duration,
    capacity: usize,
}

impl Default for Creations {
    fn default() -> Creations {
        Creations::new(WINDOW, CAPACITY)
    }
}

impl Creations {
    pub fn new(window: Duration, capacity: usize) -> Creations {
        Creations {
            recent: Mutex::new(Recent::default()),
            window,
            capacity: capacity.max(1),
        }
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, Recent> {
        // A panic while holding the lock leaves the map consistent (every
        // change is one insert or remove), so a poisoned lock is still good.
        self.recent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The first answer to `request_id` with this `fingerprint`, or the
    /// answer of `create`, run once in a task of its own.
    pub async fn create<F>(
        self: &Arc<Self>,
        request_id: &str,
        fingerprint: [u8; 32],
        create: F,
    ) -> Result<Answer, ApiError>
    where
        F: Future<Output = Result<proto::CreateGameResponse, ApiError>> + Send + 'static,
    {
        let mut create = Some(create);
        loop {
            match self.claim(request_id, fingerprint)? {
                Claim::Answered(answer) => return Ok(answer),
                Claim::Wait(mut answer) => {
                    if let Ok(answer) = answer.wait_for(Option::is_some).await
                        && let Some(answer) = answer.as_ref()
                    {
                        return Ok(answer.clone());
                    }
                    // The first call failed: this one tries on its own.
                }
                Claim::First(sender, generation) => {
                    let Some(create) = create.take() else {
                        return Err(ApiError::Internal("a creation claimed twice".to_owned()));
                    };
                    let creations = self.clone();
                    let id = request_id.to_owned();
                    let task = tokio::spawn(async move {
                        let result = create.await.map(Arc::new);
                        creations.finish(&id, generation, result.as_ref().ok());
                        if let Ok(answer) = &result {
                            sender.send_replace(Some(answer.clone()));
                        }
                        result
                    });
                    return task
                        .await
                        .map_err(|e| ApiError::Internal(format!("creation task: {e}")))?;
                }
            }
        }
    }

    fn claim(&self, request_id: &str, fingerprint: [u8; 32]) -> Result<Claim, ApiError> {
        let mut recent = self.recent();
        self.expire(&mut recent, Instant::now());
        if let Some(entry) = recent.entries.get(request_id) {
            if entry.fingerprint != fingerprint {
                return Err(ApiError::RequestIdReused(request_id.to_owned()));
            }
            return Ok(match &entry.state {
                State::Done { answer, .. } => Claim::Answered(answer.clone()),
                State::Running(answer) => Claim::Wait(answer.clone()),
            });
        }
        let (sender, receiver) = watch::channel(None);
        let generation = recent.next_generation;
        recent.next_generation += 1;
        recent.entries.insert(
            request_id.to_owned(),
            Entry {
                fingerprint,
                generation,
                state: State::Running(receiver),
            },
        );
        Ok(Claim::First(sender, generation))
    }

    /// Keeps a successful answer for its retries; forgets a failed call, so
    /// that its retry tries again.
    fn finish(&self, request_id: &str, generation: u64, answer: Option<&Answer>) {
        let mut recent = self.recent();
        let ours = recent
            .entries
            .get(request_id)
            .is_some_and(|e| e.generation == generation);
        if !ours {
            return;
        }
        match answer {
            Some(answer) => {
                if let Some(entry) = recent.entries.get_mut(request_id) {
                    entry.state = State::Done {
                        answer: answer.clone(),
                        at: Instant::now(),
                    };
                }
                recent.order.push_back((request_id.to_owned(), generation));
                while recent.order.len() > self.capacity {
                    Self::forget_oldest(&mut recent);
                }
            }
            None => {
                recent.entries.remove(request_id);
            }
        }
    }

    fn expire(&self, recent: &mut Recent, now: Instant) {
        while let Some((id, generation)) = recent.order.front() {
            let expired = match recent.entries.get(id) {
                Some(Entry {
                    generation: g,
                    state: State::Done { at, .. },
                    ..
                }) if g == generation => now.duration_since(*at) >= self.window,
                // Stale: replaced or gone.
                _ => true,
            };
            if !expired {
                break;
            }
            Self::forget_oldest(recent);
        }
    }

    fn forget_oldest(recent: &mut Recent) {
        if let Some((id, generation)) = recent.order.pop_front()
            && recent
                .entries
                .get(&id)
                .is_some_and(|e| e.generation == generation)
        {
            recent.entries.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(name: &str) -> proto::CreateGameResponse {
        proto::CreateGameResponse {
            game: Some(proto::Game {
                name: name.to_owned(),
                ..Default::default()
            }),
            tokens: Vec::new(),
        }
    }

    #[tokio::test]
    async fn answers_are_kept_for_the_window_and_the_capacity_only() {
        let creations = Arc::new(Creations::new(Duration::from_millis(200), 2));
        let made = |name: &'static str| async move { Ok(answer(name)) };
        let first = creations.create("a", [1; 32], made("games/a")).await.unwrap();
        // A retry gets the first answer, not a second creation.
        let again = creations.create("a", [1; 32], made("games/other")).await.unwrap();
        assert_eq!(again, first);
        // Other fields under the same id: refused.
        let reused = creations.create("a", [2; 32], made("games/a")).await.unwrap_err();
        assert!(matches!(reused, ApiError::RequestIdReused(_)), "{reused:?}");
        // Past the capacity, the oldest is forgotten.
        creations.create("b", [1; 32], made("games/b")).await.unwrap();
        creations.create("c", [1; 32], made("games/c")).await.unwrap();
        let fresh = creations.create("a", [2; 32], made("games/a2")).await.unwrap();
        assert_eq!(fresh.game.as_ref().unwrap().name, "games/a2");
        // Past the window, every answer is forgotten.
        tokio::time::sleep(Duration::from_millis(250)).await;
        let late = creations.create("c", [3; 32], made("games/c3")).await.unwrap();
        assert_eq!(late.game.as_ref().unwrap().name, "games/c3");
    }

    #[tokio::test]
    async fn a_failed_creation_is_forgotten_so_that_its_retry_tries_again() {
        let creations = Arc::new(Creations::default());
        let failed = creations
            .create("a", [1; 32], async { Err(ApiError::ShuttingDown) })
            .await
            .unwrap_err();
        assert_eq!(failed, ApiError::ShuttingDown);
        let retried = creations
            .create("a", [1; 32], async { Ok(answer("games/a")) })
            .await
            .unwrap();
        assert_eq!(retried.game.as_ref().unwrap().name, "games/a");
    }
}
