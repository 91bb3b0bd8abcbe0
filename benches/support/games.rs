//! Games for the benchmarks: created over gRPC, and played by a bot that
//! takes random legal actions as fast as the server answers.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, DecisionKind};
use tokio::sync::Semaphore;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

use super::Rng;

/// When each Act returned, by the versions of the events it produced.
pub type ActTimes = HashMap<i64, Instant>;

/// A created game: its name, version and seat tokens.
pub struct Created {
    pub name: String,
    pub version: i64,
    pub tokens: Vec<MetadataValue<tonic::metadata::Ascii>>,
}

pub async fn create_game(
    channel: Channel,
    request_id: String,
    seed: u64,
    time_control: Option<proto::TimeControl>,
) -> Created {
    let mut client = GameServiceClient::new(channel);
    let created = client
        .create_game(proto::CreateGameRequest {
            request_id,
            players: vec!["Bot 0".to_owned(), "Bot 1".to_owned()],
            rules: None,
            seed: Rng(seed).seed(),
            tiles: Vec::new(),
            spectator_delay: 0,
            time_control,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let game = created.game.unwrap();
    Created {
        name: game.name,
        version: game.version,
        tokens: created
            .tokens
            .iter()
            .map(|t| format!("Bearer {}", t.token).parse().unwrap())
            .collect(),
    }
}

/// Plays `game` with random legal actions until it ends or `max_actions`
/// were taken, pausing between actions; returns when each Act returned,
/// by event version, the final version and every Act's latency in
/// microseconds.
pub async fn play(
    channel: Channel,
    game: &Created,
    max_actions: usize,
    pause: Duration,
    seed: u64,
) -> (ActTimes, i64, Vec<i64>) {
    let mut times = ActTimes::new();
    let mut durations = Vec::new();
    let bot = Bot {
        max_actions,
        pause,
        ..Bot::new(Route::one(channel), seed)
    };
    let played = bot
        .play(game, |acted| {
            durations.push((acted.returned - acted.sent).as_micros() as i64);
            for v in acted.first..=acted.last {
                times.insert(v, acted.returned);
            }
        })
        .await
        .unwrap();
    (times, played.version, durations)
}

/// Where a bot's calls go: call k of a game (GetLegalActions or Act) to
/// `channels[k % channels.len()]`, so that several channels to several
/// server nodes share each game; one channel takes them all.
#[derive(Clone)]
pub struct Route {
    pub channels: Vec<Channel>,
    /// One is held by each call while it is in flight (a bounded pool of
    /// calls shared by many bots); `None`: no bound.
    pub permits: Option<Arc<Semaphore>>,
}

impl Route {
    pub fn one(channel: Channel) -> Route {
        Route {
            channels: vec![channel],
            permits: None,
        }
    }
}

/// One acknowledged Act: when it was sent (after waiting for a permit)
/// and when it returned, and the versions of the events it produced.
pub struct Acted {
    pub sent: Instant,
    pub returned: Instant,
    pub first: i64,
    pub last: i64,
}

/// How a bot's game stopped.
pub struct Played {
    pub version: i64,
    pub finished: bool,
    /// Acts refused as stale (ABORTED), each followed by GetLegalActions.
    pub stale: u64,
}

/// A bot that plays a game through a route.
pub struct Bot {
    pub route: Route,
    pub max_actions: usize,
    /// Between a game's actions.
    pub pause: Duration,
    /// No call starts after it.
    pub until: Option<Instant>,
    pub seed: u64,
}

impl Bot {
    /// Plays flat out to the game's end.
    pub fn new(route: Route, seed: u64) -> Bot {
        Bot {
            route,
            max_actions: usize::MAX,
            pause: Duration::ZERO,
            until: None,
            seed,
        }
    }

    /// Plays `game` with random legal actions until it ends, `max_actions`
    /// were taken or `until` passed, telling `acted` of each Act answered.
    /// A stale version (ABORTED) fetches the legal actions again; any other
    /// failure is returned.
    pub async fn play(&self, game: &Created, mut acted: impl FnMut(Acted)) -> Result<Played, Status> {
        let clients: Vec<_> = self
            .route
            .channels
            .iter()
            .cloned()
            .map(GameServiceClient::new)
            .collect();
        let mut calls = 0usize;
        let mut next_client = || {
            calls += 1;
            clients[(calls - 1) % clients.len()].clone()
        };
        let mut rng = Rng(self.seed);
        let mut played = Played {
            version: game.version,
            finished: false,
            stale: 0,
        };
        // The decision to answer: from GetLegalActions at the start and
        // after a stale version, else from the previous Act's answer.
        let mut next: Option<(i64, proto::PendingDecision, Vec<proto::Action>)> = None;
        let mut actions_taken = 0;
        while actions_taken < self.max_actions && self.until.is_none_or(|until| Instant::now() < until) {
            let (version, pending, actions) = match next.take() {
                Some(decision) => decision,
                None => {
                    let mut client = next_client();
                    let _permit = self.permit().await;
                    let request = proto::GetLegalActionsRequest {
                        name: game.name.clone(),
                    };
                    let legal = client.get_legal_actions(request).await?.into_inner();
                    (legal.version, legal.pending.unwrap_or_default(), legal.actions)
                }
            };
            played.version = version;
            if pending.kind == DecisionKind::Unspecified as i32 {
                played.finished = true;
                break;
            }
            if !self.pause.is_zero() {
                tokio::time::sleep(self.pause).await;
            }
            let action = actions[rng.below(actions.len())];
            let mut request = Request::new(proto::ActRequest {
                name: game.name.clone(),
                expected_version: version,
                request_id: format!("v{version}"),
                action: Some(action),
                // A random bot needs the pending decision and the legal
                // actions, not the board.
                view: proto::GameView::Basic as i32,
            });
            request
                .metadata_mut()
                .insert("authorization", game.tokens[pending.seat as usize].clone());
            let mut client = next_client();
            let permit = self.permit().await;
            let sent = Instant::now();
            let result = client.act(request).await;
            let returned = Instant::now();
            drop(permit);
            actions_taken += 1;
            match result {
                Ok(answer) => {
                    let answer = answer.into_inner();
                    acted(Acted {
                        sent,
                        returned,
                        first: version + 1,
                        last: answer.version,
                    });
                    let pending = answer.game.and_then(|g| g.pending).unwrap_or_default();
                    next = Some((answer.version, pending, answer.legal_actions));
                }
                Err(status) if status.code() == Code::Aborted => played.stale += 1,
                Err(status) => return Err(status),
            }
        }
        Ok(played)
    }

    async fn permit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        match &self.route.permits {
            Some(permits) => Some(permits.clone().acquire_owned().await.unwrap()),
            None => None,
        }
    }
}
