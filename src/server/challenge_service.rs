//! ChallengeService: registered players offer games and take them up
//! (`crate::challenges`); the only way a game seats a registered player
//! who did not create it.

use std::sync::Arc;

use carcassonne_competition::{ChallengeCommand, ChallengeSpec, ChallengeStatus, PlayerName, SeatOffer};
use tonic::{Request, Response, Status};

use super::request::{naming_request_id, optional_token};
use crate::api::parse;
use crate::api::status::{ApiError, quote};
use crate::challenges::{self, Challenges, DEFAULT_EXPIRY_MS, EXPIRY_MS, GameSettings, Held};
use crate::players::{Players, parse_name};
use crate::proto;

pub struct ChallengeService {
    pub players: Arc<Players>,
    pub challenges: Arc<Challenges>,
    /// The store's clock, for a challenge's status now.
    pub store: Arc<dyn carcassonne_store::EventStore>,
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))?
}

/// `challenges/{id}` to an id.
fn challenge_id(name: &str) -> Result<String, ApiError> {
    let id = name
        .strip_prefix("challenges/")
        .ok_or_else(|| ApiError::InvalidArgument {
            field: "name".to_owned(),
            message: format!("{} is not \"challenges/{{id}}\"", quote(name)),
        })?;
    if id.is_empty() || id.len() > 24 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ApiError::ChallengeNotFound(id.to_owned()));
    }
    Ok(id.to_owned())
}

/// The seats a creation offers, each one of a named player, an open seat
/// or a bot.
fn seat_offers(seats: &[proto::ChallengeSeat]) -> Result<Vec<SeatOffer>, ApiError> {
    seats
        .iter()
        .enumerate()
        .map(|(i, seat)| {
            let field = format!("seats[{i}]");
            match (seat.player.is_empty(), seat.open, seat.bot.is_empty()) {
                (false, false, true) => parse_name(&field, &seat.player).map(SeatOffer::Player),
                (true, true, true) => Ok(SeatOffer::Open),
                (true, false, false) => carcassonne_bots::Level::from_name(&seat.bot)
                    .map(|level| SeatOffer::Bot(level.name()))
                    .ok_or_else(|| ApiError::UnknownBotLevel {
                        field: "seats",
                        level: seat.bot.clone(),
                    }),
                _ => Err(ApiError::InvalidArgument {
                    field,
                    message: "exactly one of player, open and bot".to_owned(),
                }),
            }
        })
        .collect()
}

/// A challenge as the API shows it, at the store's time `now_ms`.
pub fn challenge_view(held: &Held, now_ms: u64) -> Result<proto::Challenge, ApiError> {
    let challenge = &held.challenge;
    let spec = challenge.spec();
    let settings = held.settings()?;
    let status = challenge.status(now_ms);
    let named = |name: &PlayerName| format!("players/{name}");
    Ok(proto::Challenge {
        name: format!("challenges/{}", challenge.id()),
        challenger: named(&spec.challenger),
        seats: spec
            .seats
            .iter()
            .zip(challenge.taken())
            .map(|(offer, taken)| proto::ChallengeSeat {
                player: match (offer, taken) {
                    (SeatOffer::Player(name), _) | (_, Some(name)) => named(name),
                    _ => String::new(),
                },
                open: matches!(offer, SeatOffer::Open),
                bot: match offer {
                    SeatOffer::Bot(level) => level.clone(),
                    _ => String::new(),
                },
                accepted: taken.is_some(),
            })
            .collect(),
        rules: Some(settings.rules),
        time_control: settings.time_control,
        spectator_delay: settings.spectator_delay,
        rated: spec.rated,
        status: match status {
            ChallengeStatus::Open => proto::ChallengeStatus::Open,
            ChallengeStatus::Accepted => proto::ChallengeStatus::Accepted,
            ChallengeStatus::Declined(_) => proto::ChallengeStatus::Declined,
            ChallengeStatus::Cancelled => proto::ChallengeStatus::Cancelled,
            ChallengeStatus::Expired => proto::ChallengeStatus::Expired,
        } as i32,
        create_time_ms: crate::api::view::millis(held.created_ms),
        expire_time_ms: crate::api::view::millis(spec.expires_at_ms),
        game: match status {
            ChallengeStatus::Accepted => format!("games/{}", challenges::game_of(challenge.id())?),
            _ => String::new(),
        },
        declined_by: match &status {
            ChallengeStatus::Declined(player) => named(player),
            _ => String::new(),
        },
    })
}

impl ChallengeService {
    fn view(&self, held: &Held) -> Result<proto::Challenge, ApiError> {
        challenge_view(held, self.store.now_millis())
    }

    /// `command` of the player whose key `request` carries, on challenge
    /// `name`.
    async fn act<T>(
        &self,
        request: &Request<T>,
        name: &str,
        command: ChallengeCommand,
    ) -> Result<proto::Challenge, ApiError> {
        let caller = self.players.caller(optional_token(request)?.as_deref())?;
        let id = challenge_id(name)?;
        let challenges = self.challenges.clone();
        let held = blocking(move || challenges.act(&id, &caller, &command)).await?;
        self.view(&held)
    }
}

#[tonic::async_trait]
impl proto::challenge_service_server::ChallengeService for ChallengeService {
    async fn create_challenge(
        &self,
        request: Request<proto::CreateChallengeRequest>,
    ) -> Result<Response<proto::CreateChallengeResponse>, Status> {
        let challenger = self.players.caller(optional_token(&request)?.as_deref())?;
        let r = request.into_inner();
        let request_id = naming_request_id(&r.request_id, "the challenge")?;
        let expire_ms = match u64::from(r.expire_ms) {
            0 => DEFAULT_EXPIRY_MS,
            ms if EXPIRY_MS.contains(&ms) => ms,
            ms => {
                return Err(ApiError::InvalidArgument {
                    field: "expire_ms".to_owned(),
                    message: format!("{} to {}, not {ms}", EXPIRY_MS.start(), EXPIRY_MS.end()),
                }
                .into());
            }
        };
        // The settings are checked now, as the game will take them.
        parse::rules(r.rules.as_ref())?;
        parse::time_control(r.time_control.as_ref())?;
        let settings = GameSettings {
            rules: r.rules.unwrap_or_default(),
            time_control: r.time_control,
            spectator_delay: r.spectator_delay,
        };
        let spec = ChallengeSpec {
            challenger,
            seats: seat_offers(&r.seats)?,
            rated: r.rated,
            game: serde_json::to_value(&settings)
                .map_err(|e| ApiError::Internal(format!("a challenge's settings: {e}")))?,
            expires_at_ms: 0,
        };
        let challenges = self.challenges.clone();
        let held = blocking(move || challenges.create(&request_id, spec, expire_ms)).await?;
        Ok(Response::new(proto::CreateChallengeResponse {
            challenge: Some(self.view(&held)?),
        }))
    }

    async fn get_challenge(
        &self,
        request: Request<proto::GetChallengeRequest>,
    ) -> Result<Response<proto::GetChallengeResponse>, Status> {
        let id = challenge_id(&request.get_ref().name)?;
        let challenges = self.challenges.clone();
        let held = blocking(move || challenges.get(&id)).await?;
        Ok(Response::new(proto::GetChallengeResponse {
            challenge: Some(self.view(&held)?),
        }))
    }

    async fn list_challenges(
        &self,
        request: Request<proto::ListChallengesRequest>,
    ) -> Result<Response<proto::ListChallengesResponse>, Status> {
        let caller = match optional_token(&request)? {
            Some(key) => Some(self.players.caller(Some(&key))?),
            None => None,
        };
        let listed = self.challenges.list(caller.as_ref());
        Ok(Response::new(proto::ListChallengesResponse {
            challenges: listed
                .iter()
                .map(|held| self.view(held))
                .collect::<Result<_, _>>()?,
        }))
    }

    async fn accept_challenge(
        &self,
        request: Request<proto::AcceptChallengeRequest>,
    ) -> Result<Response<proto::AcceptChallengeResponse>, Status> {
        let seat = match request.get_ref().seat {
            None => None,
            Some(seat) => Some(u8::try_from(seat).map_err(|_| ApiError::InvalidArgument {
                field: "seat".to_owned(),
                message: format!("a seat number, 0 to 4, not {seat}"),
            })?),
        };
        let name = request.get_ref().name.clone();
        let challenge = self
            .act(&request, &name, ChallengeCommand::Accept { seat })
            .await?;
        Ok(Response::new(proto::AcceptChallengeResponse {
            challenge: Some(challenge),
        }))
    }

    async fn decline_challenge(
        &self,
        request: Request<proto::DeclineChallengeRequest>,
    ) -> Result<Response<proto::DeclineChallengeResponse>, Status> {
        let name = request.get_ref().name.clone();
        let challenge = self.act(&request, &name, ChallengeCommand::Decline).await?;
        Ok(Response::new(proto::DeclineChallengeResponse {
            challenge: Some(challenge),
        }))
    }

    async fn cancel_challenge(
        &self,
        request: Request<proto::CancelChallengeRequest>,
    ) -> Result<Response<proto::CancelChallengeResponse>, Status> {
        let name = request.get_ref().name.clone();
        let challenge = self.act(&request, &name, ChallengeCommand::Cancel).await?;
        Ok(Response::new(proto::CancelChallengeResponse {
            challenge: Some(challenge),
        }))
    }
}
