//! Games for the benchmarks: created over gRPC, and played by a bot that
//! takes random legal actions as fast as the server answers.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, DecisionKind};
use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;

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
    let mut client = GameServiceClient::new(channel);
    let mut rng = Rng(seed);
    let legal = client
        .get_legal_actions(proto::GetLegalActionsRequest {
            name: game.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let (mut version, mut pending, mut actions) =
        (legal.version, legal.pending.unwrap_or_default(), legal.actions);
    let mut times = ActTimes::new();
    let mut durations = Vec::new();
    for _ in 0..max_actions {
        if pending.kind == DecisionKind::Unspecified as i32 {
            break;
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let action = actions[rng.below(actions.len())];
        let mut request = Request::new(proto::ActRequest {
            name: game.name.clone(),
            expected_version: version,
            request_id: format!("v{version}"),
            action: Some(action),
            view: proto::GameView::Basic as i32,
        });
        request
            .metadata_mut()
            .insert("authorization", game.tokens[pending.seat as usize].clone());
        let sent = Instant::now();
        let answer = client.act(request).await.unwrap().into_inner();
        let returned = Instant::now();
        durations.push((returned - sent).as_micros() as i64);
        for v in version + 1..=answer.version {
            times.insert(v, returned);
        }
        version = answer.version;
        pending = answer.game.and_then(|g| g.pending).unwrap_or_default();
        actions = answer.legal_actions;
    }
    (times, version, durations)
}
