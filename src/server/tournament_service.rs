//! TournamentService: organisers create tournaments and withdraw players;
//! anyone reads them, their standings and their archive.

use std::pin::Pin;
use std::sync::Arc;

use carcassonne_competition::{Format, Spec};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::request::{naming_request_id, optional_token};
use crate::api::status::ApiError;
use crate::players::{Players, parse_name};
use crate::proto;
use crate::tournaments::view::{standings_view, tournament_view, watch_view};
use crate::tournaments::{GameSettings, Tournaments};

type Responses<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

pub struct TournamentService {
    pub players: Arc<Players>,
    pub tournaments: Arc<Tournaments>,
    /// The server's key, which signs archives.
    pub key: Arc<carcassonne_archive::SigningKey>,
    pub stopping: tokio::sync::watch::Receiver<bool>,
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))?
}

/// `tournaments/{id}` to an id.
pub fn tournament_id(name: &str) -> Result<String, ApiError> {
    let id = name
        .strip_prefix("tournaments/")
        .ok_or_else(|| ApiError::InvalidArgument {
            field: "name".to_owned(),
            message: format!(
                "{} is not \"tournaments/{{id}}\"",
                crate::api::status::quote(name)
            ),
        })?;
    if id.is_empty() || id.len() > 24 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ApiError::TournamentNotFound(id.to_owned()));
    }
    Ok(id.to_owned())
}

/// A new tournament's id: derived from the creation's request id, so that a
/// retried creation finds the tournament it made.
fn new_tournament_id(request_id: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(request_id.as_bytes());
    format!("t{}", &crate::games::auth::hex(&digest)[..16])
}

/// The house bots a creation asks for, a level each, with their names:
/// "{kind} bot {n}", numbered by kind (the level's name up to any ':') in
/// the order given.
fn house_bots(
    levels: &[String],
) -> Result<Vec<(carcassonne_competition::PlayerName, carcassonne_bots::Level)>, ApiError> {
    if levels.len() > carcassonne_competition::MAX_PARTICIPANTS {
        return Err(ApiError::InvalidArgument {
            field: "house_bots".to_owned(),
            message: format!(
                "at most {} participants, house bots included",
                carcassonne_competition::MAX_PARTICIPANTS
            ),
        });
    }
    let mut counts: std::collections::BTreeMap<String, u32> = std::collections::BTreeMap::new();
    levels
        .iter()
        .map(|name| {
            let level =
                carcassonne_bots::Level::from_name(name).ok_or_else(|| ApiError::UnknownBotLevel {
                    field: "house_bots",
                    level: name.to_owned(),
                })?;
            let level_name = level.name();
            let kind = level_name.split(':').next().unwrap_or_default().to_owned();
            let n = counts.entry(kind.clone()).or_insert(0);
            *n += 1;
            let player = carcassonne_competition::PlayerName::house_bot(&kind, *n)
                .map_err(|e| ApiError::Internal(format!("a house bot's name: {e}")))?;
            Ok((player, level))
        })
        .collect()
}

/// The spec a creation asks for, checked field by field.
fn spec_of(
    r: &proto::CreateTournamentRequest,
    organiser: carcassonne_competition::PlayerName,
) -> Result<Spec, ApiError> {
    let invalid = |field: &str, message: String| ApiError::InvalidArgument {
        field: field.to_owned(),
        message,
    };
    let mut participants = r
        .participants
        .iter()
        .map(|p| parse_name("participants", p))
        .collect::<Result<Vec<_>, _>>()?;
    let house_bots = house_bots(&r.house_bots)?;
    participants.extend(house_bots.iter().map(|(name, _)| name.clone()));
    let format = match proto::TournamentFormat::try_from(r.format) {
        Ok(proto::TournamentFormat::RoundRobin) => Format::RoundRobin,
        Ok(proto::TournamentFormat::Swiss) => Format::Swiss { rounds: r.rounds },
        _ => return Err(invalid("format", "ROUND_ROBIN or SWISS".to_owned())),
    };
    let table_size = match r.table_size {
        0 => 2,
        n @ 2..=5 => n as u8,
        n => return Err(invalid("table_size", format!("2 to 5, not {n}"))),
    };
    let table_points = if r.table_points.is_empty() {
        Spec::default_table_points(table_size)
    } else {
        r.table_points.clone()
    };
    let games_per_match = match r.games_per_match {
        0 => 1,
        n @ 1..=10 => n as u8,
        n => return Err(invalid("games_per_match", format!("1 to 10, not {n}"))),
    };
    let Some(time_control) = r.time_control else {
        return Err(invalid(
            "time_control",
            "required: every game of a tournament has a clock".to_owned(),
        ));
    };
    // Checked now, as the games will check them.
    crate::api::parse::rules(r.rules.as_ref())?;
    if crate::api::parse::new_time_control(Some(&time_control))?.is_none() {
        return Err(invalid(
            "time_control",
            "required: every game of a tournament has a clock".to_owned(),
        ));
    }
    let settings = GameSettings {
        rules: r.rules.clone().unwrap_or_default(),
        time_control,
    };
    let games =
        serde_json::to_value(&settings).map_err(|e| ApiError::Internal(format!("game settings: {e}")))?;
    Ok(Spec {
        name: r.title.clone(),
        organiser: Some(organiser),
        participants,
        house_bots: house_bots
            .into_iter()
            .map(|(name, level)| (name, level.name()))
            .collect(),
        format,
        table_size,
        table_points,
        games_per_match,
        duplicate_bags: r.duplicate_bags,
        rated: r.rated,
        games,
    })
}

#[tonic::async_trait]
impl proto::tournament_service_server::TournamentService for TournamentService {
    async fn create_tournament(
        &self,
        request: Request<proto::CreateTournamentRequest>,
    ) -> Result<Response<proto::CreateTournamentResponse>, Status> {
        let organiser = self.players.organiser(optional_token(&request)?.as_deref())?;
        let r = request.into_inner();
        let request = naming_request_id(&r.request_id, "the tournament")?;
        let spec = spec_of(&r, organiser)?;
        let id = new_tournament_id(request.as_str());
        let tournaments = self.tournaments.clone();
        let held = blocking(move || {
            tournaments.create(&id, &request, spec)?;
            // Opens the first round's games.
            tournaments.drive(&id)?;
            tournaments.get(&id)
        })
        .await?;
        Ok(Response::new(proto::CreateTournamentResponse {
            tournament: Some(tournament_view(&held)),
        }))
    }

    async fn get_tournament(
        &self,
        request: Request<proto::GetTournamentRequest>,
    ) -> Result<Response<proto::GetTournamentResponse>, Status> {
        let id = tournament_id(&request.get_ref().name)?;
        let held = self.tournaments.get(&id)?;
        Ok(Response::new(proto::GetTournamentResponse {
            tournament: Some(tournament_view(&held)),
        }))
    }

    async fn list_tournaments(
        &self,
        request: Request<proto::ListTournamentsRequest>,
    ) -> Result<Response<proto::ListTournamentsResponse>, Status> {
        let r = request.into_inner();
        let page_size = crate::api::parse::page_size(r.page_size)?;
        let after = r.page_token;
        let ids: Vec<String> = self
            .tournaments
            .ids()
            .into_iter()
            .filter(|id| *id > after)
            .collect();
        let page: Vec<_> = ids.iter().take(page_size).collect();
        let next = if ids.len() > page_size {
            page.last().map(|id| id.to_string()).unwrap_or_default()
        } else {
            String::new()
        };
        let tournaments = page
            .iter()
            .map(|id| self.tournaments.get(id).map(|held| tournament_view(&held)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Response::new(proto::ListTournamentsResponse {
            tournaments,
            next_page_token: next,
        }))
    }

    async fn get_standings(
        &self,
        request: Request<proto::GetStandingsRequest>,
    ) -> Result<Response<proto::GetStandingsResponse>, Status> {
        let id = tournament_id(&request.get_ref().name)?;
        let held = self.tournaments.get(&id)?;
        Ok(Response::new(proto::GetStandingsResponse {
            standings: Some(standings_view(&held)),
        }))
    }

    type WatchTournamentStream = Responses<proto::WatchTournamentResponse>;

    async fn watch_tournament(
        &self,
        request: Request<proto::WatchTournamentRequest>,
    ) -> Result<Response<Self::WatchTournamentStream>, Status> {
        let id = tournament_id(&request.get_ref().name)?;
        // Subscribed before the first read, so no change falls between.
        let mut changes = self.tournaments.changes();
        self.tournaments.get(&id)?;
        let (tx, rx) = mpsc::channel(16);
        let tournaments = self.tournaments.clone();
        let mut stopping = self.stopping.clone();
        tokio::spawn(async move {
            let mut shown = None;
            loop {
                let held = match tournaments.get(&id) {
                    Ok(held) => held,
                    Err(error) => {
                        let _ = tx.send(Err(error.into())).await;
                        return;
                    }
                };
                if shown != Some(held.version) {
                    shown = Some(held.version);
                    if tx.send(Ok(watch_view(&held))).await.is_err() {
                        return;
                    }
                }
                if held.tournament.is_finished() {
                    return;
                }
                let changed = tokio::select! {
                    changed = changes.recv() => changed,
                    _ = stopping.changed() => return,
                };
                match changed {
                    Ok(changed) if changed != id => {}
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn withdraw_player(
        &self,
        request: Request<proto::WithdrawPlayerRequest>,
    ) -> Result<Response<proto::WithdrawPlayerResponse>, Status> {
        let caller = self.players.caller(optional_token(&request)?.as_deref())?;
        let r = request.into_inner();
        let id = tournament_id(&r.name)?;
        let player = crate::players::parse_participant("player", &r.player)?;
        let tournaments = self.tournaments.clone();
        // The player's running games resign; their ends drive the rest.
        let (held, resignations) = blocking(move || {
            let held = tournaments.withdraw(&id, &caller, &player)?;
            Ok((held, tournaments.drive(&id)?))
        })
        .await?;
        crate::tournaments::settle_in_background(self.tournaments.games(), resignations);
        Ok(Response::new(proto::WithdrawPlayerResponse {
            tournament: Some(tournament_view(&held)),
        }))
    }

    type ExportTournamentArchiveStream = Responses<proto::ExportTournamentArchiveResponse>;

    async fn export_tournament_archive(
        &self,
        request: Request<proto::ExportTournamentArchiveRequest>,
    ) -> Result<Response<Self::ExportTournamentArchiveStream>, Status> {
        let id = tournament_id(&request.get_ref().name)?;
        let archive = self.tournaments.archive(&id, self.key.clone()).await?;
        let chunks = (self.tournaments.archives())
            .download(archive, |chunk| proto::ExportTournamentArchiveResponse { chunk });
        Ok(Response::new(Box::pin(chunks)))
    }
}
