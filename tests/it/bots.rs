//! Registered players in tests: registration through the API, and a bot
//! that plays every game of its player through the player's one stream.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use carcassonne::proto::challenge_service_client::ChallengeServiceClient;
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::player_service_client::PlayerServiceClient;
use carcassonne::proto::tournament_service_client::TournamentServiceClient;
use carcassonne::proto::{self, watch_player_response::Message as P};
use carcassonne::server::ServerConfig;
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;

use crate::support::{TestServer, act, reason, with_token};

/// The admin key of the servers these tests start.
pub const ADMIN_KEY: &str = "admin-key-for-the-tests-0123456789";

/// A server with the admin key, on a store of its own.
pub async fn league_server(
    registration: carcassonne::players::Registration,
) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let server = league_server_on(dir.path(), registration).await;
    (server, dir)
}

/// A server with the admin key on the store in `data`: started again on
/// the store of a stopped one, a restart.
pub async fn league_server_on(
    data: &std::path::Path,
    registration: carcassonne::players::Registration,
) -> TestServer {
    let server = TestServer::start_with(ServerConfig {
        data: data.to_owned(),
        admin_key: Some(ADMIN_KEY.to_owned()),
        registration,
        ..ServerConfig::default()
    })
    .await;
    let _ = server.client().await;
    server
}

pub async fn players_client(server: &TestServer) -> PlayerServiceClient<Channel> {
    PlayerServiceClient::connect(server.url()).await.unwrap()
}

pub async fn challenges_client(server: &TestServer) -> ChallengeServiceClient<Channel> {
    ChallengeServiceClient::connect(server.url()).await.unwrap()
}

/// A challenge to a game of the registered players `names`, in seat
/// order, the first of them the challenger.
pub fn challenge_request(request_id: &str, names: &[&str], rated: bool) -> proto::CreateChallengeRequest {
    proto::CreateChallengeRequest {
        request_id: request_id.to_owned(),
        seats: names
            .iter()
            .map(|name| proto::ChallengeSeat {
                player: format!("players/{name}"),
                ..Default::default()
            })
            .collect(),
        rated,
        ..Default::default()
    }
}

/// The game the players of `request` agree to: the first of `keys` (the
/// challenger's) offers it, each other accepts. Returns the game's name.
pub async fn agreed_game(
    server: &TestServer,
    request: proto::CreateChallengeRequest,
    keys: &[&str],
) -> String {
    let mut challenges = challenges_client(server).await;
    let mut challenge = challenges
        .create_challenge(with_token(request, keys[0]))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    for key in &keys[1..] {
        let accept = proto::AcceptChallengeRequest {
            name: challenge.name.clone(),
            seat: None,
        };
        challenge = challenges
            .accept_challenge(with_token(accept, key))
            .await
            .unwrap()
            .into_inner()
            .challenge
            .unwrap();
    }
    assert_eq!(challenge.status, proto::ChallengeStatus::Accepted as i32);
    challenge.game
}

pub async fn tournaments_client(server: &TestServer) -> TournamentServiceClient<Channel> {
    TournamentServiceClient::connect(server.url()).await.unwrap()
}

/// Registers `name` (with the admin key, which registration always
/// accepts); returns the API key.
pub async fn register(server: &TestServer, name: &str) -> String {
    let mut players = players_client(server).await;
    let request = proto::RegisterPlayerRequest {
        name: name.to_owned(),
    };
    players
        .register_player(with_token(request, ADMIN_KEY))
        .await
        .unwrap()
        .into_inner()
        .api_key
}

/// Registers `name` and makes it an organiser; returns its key.
pub async fn organiser(server: &TestServer, name: &str) -> String {
    let key = register(server, name).await;
    let mut players = players_client(server).await;
    let request = proto::SetOrganiserRequest {
        name: format!("players/{name}"),
        organiser: true,
    };
    players
        .set_organiser(with_token(request, ADMIN_KEY))
        .await
        .unwrap();
    key
}

/// What a bot did.
#[derive(Default)]
pub struct Played {
    /// Actions stored.
    pub actions: AtomicUsize,
    /// Decisions received (each (game, version) once).
    pub decisions: std::sync::Mutex<HashSet<(String, i64)>>,
    /// Games that ended, as the stream told.
    pub ended: std::sync::Mutex<HashSet<String>>,
    /// Rounds that seated the player, as the stream told (tournament, round).
    pub rounds: std::sync::Mutex<Vec<(String, u32)>>,
    /// Set once the bot's stream is open: what happens after it reaches
    /// the bot.
    pub listening: tokio::sync::Notify,
}

/// How a bot behaves.
#[derive(Clone, Copy, Default)]
pub struct Behaviour {
    /// Stops for good (a crash: the connection drops, nothing more is
    /// sent) after this many actions.
    pub crash_after: Option<usize>,
    /// Drops its stream after this many actions and resumes it from the
    /// last position it received.
    pub reconnect_after: Option<usize>,
    /// Which legal action it picks: the `choice`-th, varied by version.
    pub choice: usize,
}

/// Plays every decision of the player whose key is `key`, over the
/// player's one stream, until the task is aborted (or it crashes).
pub async fn run_bot(url: String, key: String, behaviour: Behaviour, played: Arc<Played>) {
    let mut games = GameServiceClient::connect(url.clone()).await.unwrap();
    let mut players = PlayerServiceClient::connect(url).await.unwrap();
    let mut position = 0;
    let mut reconnected = false;
    loop {
        let request = proto::WatchPlayerRequest {
            after_position: position,
            keep_alive_ms: 0,
        };
        let mut stream = players
            .watch_player(with_token(request, &key))
            .await
            .unwrap()
            .into_inner();
        played.listening.notify_one();
        while let Some(message) = stream.next().await {
            let message = message.unwrap();
            if !message.snapshot {
                position = message.position;
            }
            match message.message {
                Some(P::Decision(decision)) => {
                    let legal = decision.legal.unwrap();
                    if !played
                        .decisions
                        .lock()
                        .unwrap()
                        .insert((decision.game.clone(), legal.version))
                    {
                        continue;
                    }
                    if legal.actions.is_empty() {
                        continue;
                    }
                    let done = played.actions.load(Ordering::SeqCst);
                    if behaviour.crash_after.is_some_and(|n| done >= n) {
                        return;
                    }
                    let pick = (behaviour.choice + legal.version as usize) % legal.actions.len();
                    let action = legal.actions[pick].action.unwrap();
                    let request_id =
                        format!("{}-{}", decision.game.trim_start_matches("games/"), legal.version);
                    let answer = games
                        .act(with_token(
                            act(&decision.game, legal.version, &request_id, action),
                            &key,
                        ))
                        .await;
                    match answer {
                        Ok(_) => {
                            played.actions.fetch_add(1, Ordering::SeqCst);
                        }
                        // Another seat's timeout or the end came first.
                        Err(status)
                            if ["OUT_OF_TIME", "STALE_VERSION", "GAME_FINISHED"]
                                .contains(&reason(&status).as_str()) => {}
                        Err(status) => panic!("acting in {}: {status:?}", decision.game),
                    }
                    if !reconnected
                        && behaviour
                            .reconnect_after
                            .is_some_and(|n| played.actions.load(Ordering::SeqCst) >= n)
                    {
                        reconnected = true;
                        break;
                    }
                }
                Some(P::GameEnded(ended)) => {
                    played.ended.lock().unwrap().insert(ended.game.unwrap().name);
                }
                Some(P::RoundPaired(paired)) => {
                    played
                        .rounds
                        .lock()
                        .unwrap()
                        .push((paired.tournament, paired.round));
                }
                _ => {}
            }
        }
    }
}
