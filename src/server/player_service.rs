//! PlayerService: registration, organisers, ratings, and each player's own
//! event stream (`player_stream.rs`).

use std::sync::Arc;

use carcassonne_competition::Pool;
use tonic::{Request, Response, Status};

use super::player_stream;
use super::request::optional_token;
use crate::api::status::ApiError;
use crate::games::Games;
use crate::players::seats::Seats;
use crate::players::{Players, parse_name};
use crate::proto;
use crate::ratings::{RatingBook, change_view, rating_view};

pub struct PlayerService {
    pub games: Arc<Games>,
    pub players: Arc<Players>,
    pub seats: Arc<Seats>,
    pub ratings: Arc<RatingBook>,
    pub challenges: Arc<crate::challenges::Challenges>,
    pub stopping: tokio::sync::watch::Receiver<bool>,
}

impl PlayerService {
    fn view(&self, record: &carcassonne_competition::PlayerRecord) -> proto::RegisteredPlayer {
        let (duel, multiplayer) = self.ratings.read(|r| {
            (
                r.rating(Pool::Duel, &record.name),
                r.rating(Pool::Multiplayer, &record.name),
            )
        });
        proto::RegisteredPlayer {
            name: format!("players/{}", record.name),
            organiser: record.organiser,
            duel_rating: duel.map(rating_view),
            multiplayer_rating: multiplayer.map(rating_view),
        }
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))?
}

#[tonic::async_trait]
impl proto::player_service_server::PlayerService for PlayerService {
    async fn register_player(
        &self,
        request: Request<proto::RegisterPlayerRequest>,
    ) -> Result<Response<proto::RegisterPlayerResponse>, Status> {
        let caller = optional_token(&request)?;
        let name = request.into_inner().name;
        let players = self.players.clone();
        let (record, key) = blocking(move || players.register(caller.as_deref(), &name)).await?;
        Ok(Response::new(proto::RegisterPlayerResponse {
            player: Some(self.view(&record)),
            api_key: key,
        }))
    }

    async fn get_player(
        &self,
        request: Request<proto::GetPlayerRequest>,
    ) -> Result<Response<proto::GetPlayerResponse>, Status> {
        let name = parse_name("name", &request.get_ref().name)?;
        let record = self.players.get(&name)?;
        Ok(Response::new(proto::GetPlayerResponse {
            player: Some(self.view(&record)),
        }))
    }

    async fn set_organiser(
        &self,
        request: Request<proto::SetOrganiserRequest>,
    ) -> Result<Response<proto::SetOrganiserResponse>, Status> {
        let caller = optional_token(&request)?;
        let r = request.into_inner();
        let players = self.players.clone();
        let record = blocking(move || players.set_organiser(caller.as_deref(), &r.name, r.organiser)).await?;
        Ok(Response::new(proto::SetOrganiserResponse {
            player: Some(self.view(&record)),
        }))
    }

    type WatchPlayerStream = player_stream::PlayerStream;

    async fn watch_player(
        &self,
        request: Request<proto::WatchPlayerRequest>,
    ) -> Result<Response<Self::WatchPlayerStream>, Status> {
        let caller = optional_token(&request)?;
        let player = self.players.caller(caller.as_deref())?;
        let r = request.into_inner();
        let stream = player_stream::start(
            self.games.clone(),
            self.seats.clone(),
            self.challenges.clone(),
            player,
            r,
            self.stopping.clone(),
        )?;
        Ok(Response::new(stream))
    }

    async fn get_leaderboard(
        &self,
        request: Request<proto::GetLeaderboardRequest>,
    ) -> Result<Response<proto::GetLeaderboardResponse>, Status> {
        let r = request.into_inner();
        let pool = match proto::RatingPool::try_from(r.pool) {
            Ok(proto::RatingPool::Duel) => Pool::Duel,
            Ok(proto::RatingPool::Multiplayer) => Pool::Multiplayer,
            _ => {
                return Err(ApiError::InvalidArgument {
                    field: "pool".to_owned(),
                    message: "DUEL or MULTIPLAYER".to_owned(),
                }
                .into());
            }
        };
        let limit = match r.limit {
            0 => 100,
            n @ 1..=1000 => n as usize,
            n => {
                return Err(ApiError::InvalidArgument {
                    field: "limit".to_owned(),
                    message: format!("at most 1000, not {n}"),
                }
                .into());
            }
        };
        let entries = self.ratings.read(|r| {
            r.leaderboard(pool)
                .into_iter()
                .take(limit)
                .enumerate()
                .map(|(i, (name, value))| proto::LeaderboardEntry {
                    rank: i as u32 + 1,
                    player: format!("players/{name}"),
                    rating: Some(rating_view(value)),
                })
                .collect()
        });
        Ok(Response::new(proto::GetLeaderboardResponse { entries }))
    }

    async fn get_rating_history(
        &self,
        request: Request<proto::GetRatingHistoryRequest>,
    ) -> Result<Response<proto::GetRatingHistoryResponse>, Status> {
        let name = parse_name("name", &request.get_ref().name)?;
        self.players.get(&name)?;
        let changes = self.ratings.read(|r| {
            r.history(&name)
                .into_iter()
                .map(|change| change_view(&change))
                .collect()
        });
        Ok(Response::new(proto::GetRatingHistoryResponse { changes }))
    }
}
