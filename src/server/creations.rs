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
//! An answer holds every seat's token, and a retry proves nothing but its
//! request id: the id is the secret. So only ids of at least
//! [`MIN_KEPT_ID_LEN`] characters (a random id, such as a UUID) are kept; a
//! shorter, guessable one is answered once, and its retry finds the game
//! (`GAME_ALREADY_CREATED`).
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
/// The shortest request id whose answer is kept for its retries: 16
/// characters, as a random id has (a UUID has 32 hex digits).
pub const MIN_KEPT_ID_LEN: usize = 16;

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
    Wait(watch::Receiver<Option<Answer>>, u64),
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
        if request_id.len() < MIN_KEPT_ID_LEN {
            // Guessable: never answered twice (see the module's comment).
            return tokio::spawn(create)
                .await
                .map_err(|e| ApiError::Internal(format!("creation task: {e}")))?
                .map(Arc::new);
        }
        let mut create = Some(create);
        loop {
            match self.claim(request_id, fingerprint)? {
                Claim::Answered(answer) => return Ok(answer),
                Claim::Wait(mut answer, generation) => {
                    if let Ok(answer) = answer.wait_for(Option::is_some).await
                        && let Some(answer) = answer.as_ref()
                    {
                        return Ok(answer.clone());
                    }
                    // The first call failed (its task may even have ended
                    // without a word, by a panic): forget it, so that this
                    // one tries on its own instead of waiting on it again.
                    self.finish(request_id, generation, None);
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
                State::Running(answer) => Claim::Wait(answer.clone(), entry.generation),
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

    /// Request ids long enough to be kept.
    const A: &str = "a-7c1d9e2f4b6a8c0e";
    const B: &str = "b-7c1d9e2f4b6a8c0e";
    const C: &str = "c-7c1d9e2f4b6a8c0e";

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
        let first = creations.create(A, [1; 32], made("games/a")).await.unwrap();
        // A retry gets the first answer, not a second creation.
        let again = creations.create(A, [1; 32], made("games/other")).await.unwrap();
        assert_eq!(again, first);
        // Other fields under the same id: refused.
        let reused = creations.create(A, [2; 32], made("games/a")).await.unwrap_err();
        assert!(matches!(reused, ApiError::RequestIdReused(_)), "{reused:?}");
        // Past the capacity, the oldest is forgotten.
        creations.create(B, [1; 32], made("games/b")).await.unwrap();
        creations.create(C, [1; 32], made("games/c")).await.unwrap();
        let fresh = creations.create(A, [2; 32], made("games/a2")).await.unwrap();
        assert_eq!(fresh.game.as_ref().unwrap().name, "games/a2");
        // Past the window, every answer is forgotten.
        tokio::time::sleep(Duration::from_millis(250)).await;
        let late = creations.create(C, [3; 32], made("games/c3")).await.unwrap();
        assert_eq!(late.game.as_ref().unwrap().name, "games/c3");
    }

    #[tokio::test]
    async fn a_failed_creation_is_forgotten_so_that_its_retry_tries_again() {
        let creations = Arc::new(Creations::default());
        let failed = creations
            .create(A, [1; 32], async { Err(ApiError::ShuttingDown) })
            .await
            .unwrap_err();
        assert_eq!(failed, ApiError::ShuttingDown);
        let retried = creations
            .create(A, [1; 32], async { Ok(answer("games/a")) })
            .await
            .unwrap();
        assert_eq!(retried.game.as_ref().unwrap().name, "games/a");
    }

    #[tokio::test]
    async fn a_short_request_id_is_never_answered_twice() {
        let creations = Arc::new(Creations::default());
        let short = "my-first-game";
        assert!(short.len() < MIN_KEPT_ID_LEN);
        let first = creations
            .create(short, [1; 32], async { Ok(answer("games/first")) })
            .await
            .unwrap();
        assert_eq!(first.game.as_ref().unwrap().name, "games/first");
        // Its retry is not given the first answer's tokens: it creates, and
        // the store then finds the game already there.
        let retried = creations
            .create(short, [1; 32], async {
                Err(ApiError::AlreadyExists("games/first".to_owned()))
            })
            .await
            .unwrap_err();
        assert!(matches!(retried, ApiError::AlreadyExists(_)), "{retried:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_retry_of_a_creation_whose_task_panicked_tries_again() {
        let creations = Arc::new(Creations::default());
        let panicked = creations
            .create(A, [1; 32], async { panic!("a bug in a creation") })
            .await
            .unwrap_err();
        assert!(matches!(panicked, ApiError::Internal(_)), "{panicked:?}");
        let retry = {
            let creations = creations.clone();
            tokio::spawn(async move {
                creations
                    .create(A, [1; 32], async { Ok(answer("games/a")) })
                    .await
            })
        };
        let retried = tokio::time::timeout(Duration::from_secs(5), retry)
            .await
            .expect("the retry of a panicked creation waits for nothing")
            .unwrap()
            .unwrap();
        assert_eq!(retried.game.as_ref().unwrap().name, "games/a");
    }
}
