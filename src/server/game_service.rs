//! `carcassonne.v1.GameService`: create, read and play games.
//!
//! Each call parses its request into engine types (`api::parse`), runs the
//! blocking store work on `spawn_blocking`, and answers through the one
//! view function (`api::view`). Errors go through the one table
//! (`api::status`).

use std::sync::Arc;

use carcassonne_engine::{Command, Setup};
use carcassonne_store::{GameId, RequestId};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::{Request, Response, Status};
use tracing::Instrument as _;

use super::audience::{self, Audience};
use super::request;
use super::request::{game_id, request_id, token};
use crate::api::status::ApiError;
use crate::api::{parse, version, view};
use crate::games::stored::Loaded;
use crate::games::{Account, Acted, Acting, Games, NewGame, Outcome, SeedReveal, Settled, store_error};
use crate::players::{Players, parse_name};
use crate::proto;

pub struct GameService {
    games: Arc<Games>,
    /// Registered players, whose seats a creation may name.
    players: Arc<Players>,
    /// Bounds the calls that touch the store at once; past it, callers get
    /// RESOURCE_EXHAUSTED rather than a queue that grows without end.
    in_flight: Arc<Semaphore>,
}

impl GameService {
    pub fn new(games: Arc<Games>, players: Arc<Players>, max_in_flight: usize) -> GameService {
        GameService {
            games,
            players,
            in_flight: Arc::new(Semaphore::new(max_in_flight)),
        }
    }

    /// The registered players a creation names, per seat: only the caller
    /// (`key`, the request's bearer token), who agrees by sending it.
    /// Anyone else's seat is theirs only by a challenge they accept.
    fn accounts(
        &self,
        key: Option<&str>,
        accounts: &[String],
        seats: usize,
    ) -> Result<Vec<Option<Account>>, ApiError> {
        if accounts.is_empty() {
            return Ok(Vec::new());
        }
        if accounts.len() != seats {
            return Err(ApiError::InvalidArgument {
                field: "accounts".to_owned(),
                message: format!("one entry per seat: {seats}, not {}", accounts.len()),
            });
        }
        let mut seen = std::collections::HashSet::new();
        accounts
            .iter()
            .map(|text| {
                if text.is_empty() {
                    return Ok(None);
                }
                let name = parse_name("accounts", text)?;
                if key.and_then(|key| self.players.player_of_key(key)).as_ref() != Some(&name) {
                    return Err(ApiError::ConsentRequired(format!("accounts: players/{name}")));
                }
                if !seen.insert(name.clone()) {
                    return Err(ApiError::InvalidArgument {
                        field: "accounts".to_owned(),
                        message: format!("players/{name} holds at most one seat of a game"),
                    });
                }
                self.players.account(&name).map(Some)
            })
            .collect()
    }

    /// A place within the bound of calls that touch the store at once.
    fn permit(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        self.in_flight
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::Exhausted("too many calls in flight; retry shortly".to_owned()))
    }

    /// Runs blocking store work off the async threads, within the bound.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Games) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = self.permit()?;
        let games = self.games.clone();
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            span.in_scope(|| work(&games))
        })
        .await
        .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))?
    }

    /// Decides and writes the action, then waits for the disk without
    /// holding a thread.
    async fn act_durably(
        &self,
        id: GameId,
        token: String,
        expected: u64,
        request_id: RequestId,
        command: Command,
    ) -> Result<Acted, ApiError> {
        let acting = match self.games.cached(&id) {
            // A cached game reads nothing from the disk: deciding and
            // queueing the action for the store's committer takes
            // microseconds, less than a handoff to a blocking thread.
            Some(loaded) => {
                let _permit = self.permit()?;
                self.games
                    .act_on(loaded, &id, &token, expected, &request_id, &command)?
            }
            None => {
                let id = id.clone();
                self.blocking(move |games| games.act(&id, &token, expected, &request_id, &command))
                    .await?
            }
        };
        let (first, last, asked) = match acting {
            Acting::InFlight(written) => match self.games.settle(written).await? {
                Settled::Acted(acted) => return Ok(acted),
                Settled::Retried { first, last, asked } => (first, last, asked),
                Settled::Duplicate => {
                    return Err(ApiError::Internal(
                        "a seat's action settled as the server's".to_owned(),
                    ));
                }
            },
            Acting::Retried { first, asked } => {
                let appended = first.acknowledged().await.map_err(store_error)?;
                (appended.first_seq, appended.last_seq, asked)
            }
            // Too late: refused once the timeout stored instead is durable,
            // so that the seat finds it when it reads the game.
            Acting::Late { timeout, error } => {
                self.games.settle(timeout).await?;
                return Err(error);
            }
        };
        // A retried request: the first answer, rebuilt from the store, if
        // the request is the same.
        self.blocking(move |games| games.answer(&id, first, last, &asked))
            .await
    }
}

fn game_view(loaded: &Loaded, reveal: SeedReveal) -> proto::Game {
    view::game(&loaded.info, loaded.version as i64, &loaded.game, reveal)
}

fn events_view(loaded: &Loaded, outcomes: &[Outcome]) -> Vec<proto::GameEvent> {
    outcomes
        .iter()
        .map(|o| {
            // Draws in one answer are all for the seat that decides next.
            let seat = view::event_seat(&o.event, o.actor, &loaded.game);
            view::event(
                o.seq as i64,
                o.time_millis as i64,
                seat,
                &o.event,
                &o.effects,
                &loaded.info.seed_sha256,
            )
        })
        .collect()
}

/// The game as the caller may see it: now for its players (and everyone
/// once it is over), `spectator_delay` events behind for spectators; and
/// whether its seed may be shown.
fn visible_game(
    games: &Games,
    id: &GameId,
    token: Option<&str>,
) -> Result<(Arc<Loaded>, SeedReveal), ApiError> {
    let now = games.load(id)?;
    let audience = Audience::of(games, id, token, &now)?;
    let reveal = games.seed_reveal(id, &now);
    Ok((audience::visible_game(games, id, audience, now)?, reveal))
}

/// A new game's id: derived from the creation's request id, so that a
/// retried creation finds the game it made instead of making another.
fn new_game_id(request_id: &RequestId) -> Result<GameId, ApiError> {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(request_id.as_str().as_bytes());
    GameId::new(format!("g{}", &crate::games::auth::hex(&digest)[..24]))
        .map_err(|e| ApiError::Internal(format!("derived game id: {e}")))
}

#[tonic::async_trait]
impl proto::game_service_server::GameService for GameService {
    async fn create_game(
        &self,
        request: Request<proto::CreateGameRequest>,
    ) -> Result<Response<proto::CreateGameResponse>, Status> {
        let key = request::optional_token(&request)?;
        let r = request.into_inner();
        let request_id = request_id(&r.request_id)?;
        let setup = Setup {
            rules: parse::rules(r.rules.as_ref())?,
            players: parse::players(&r.players)?,
            tiles: parse::bag(&r.tiles)?,
            seed: parse::seed(&r.seed)?,
            time_control: parse::new_time_control(r.time_control.as_ref())?,
        };
        let accounts = self.accounts(key.as_deref(), &r.accounts, setup.players.len())?;
        let bots = parse::bots(&r.bots, setup.players.len())?;
        // A rated game seats only registered players, and a creation seats
        // only its caller: every other player agrees through a challenge.
        if r.rated {
            return Err(ApiError::ConsentRequired("rated".to_owned()).into());
        }
        let id = new_game_id(&request_id)?;
        let span = tracing::info_span!("create_game", game = %id);
        let new = NewGame {
            setup,
            spectator_delay: r.spectator_delay,
            accounts,
            rated: r.rated,
            tournament: None,
            sealed: false,
            bot_pace_ms: parse::bot_pace(r.bot_pace_ms, &bots)?,
            bots,
        };
        let (permit, games) = (self.permit()?, self.games.clone());
        let created_id = id.clone();
        // A caller that gives up (a deadline) does not stop the creation:
        // its retry finds the game, and the same tokens (`games::auth`).
        let created = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            games.create(&created_id, &request_id, new)
        })
        .instrument(span)
        .await
        .map_err(|e| ApiError::Internal(format!("store task failed: {e}")))??;
        tracing::info!(game = %created.loaded.info.id, "game created");
        let tokens = created
            .tokens
            .into_iter()
            .enumerate()
            .filter_map(|(seat, token)| {
                Some(proto::SeatToken {
                    seat: seat as u32,
                    token: token?,
                })
            })
            .collect();
        // A new game shares its bag with no other: a tournament's games
        // are not made here.
        let reveal = self.games.seed_reveal(&id, &created.loaded);
        Ok(Response::new(proto::CreateGameResponse {
            game: Some(game_view(&created.loaded, reveal)),
            tokens,
        }))
    }

    async fn get_game(
        &self,
        request: Request<proto::GetGameRequest>,
    ) -> Result<Response<proto::GetGameResponse>, Status> {
        let token = request::optional_token(&request)?;
        let id = game_id(&request.get_ref().name)?;
        let span = tracing::info_span!("get_game", game = %id);
        let (loaded, reveal) = self
            .blocking(move |games| visible_game(games, &id, token.as_deref()))
            .instrument(span)
            .await?;
        Ok(Response::new(proto::GetGameResponse {
            game: Some(game_view(&loaded, reveal)),
        }))
    }

    async fn list_games(
        &self,
        request: Request<proto::ListGamesRequest>,
    ) -> Result<Response<proto::ListGamesResponse>, Status> {
        let r = request.into_inner();
        let status = proto::GameStatus::try_from(r.status).map_err(|_| ApiError::InvalidArgument {
            field: "status".to_owned(),
            message: format!("unknown status {}", r.status),
        })?;
        let page_size = crate::api::parse::page_size(r.page_size)?;
        let token = (!r.page_token.is_empty()).then_some(r.page_token);
        let finished = match status {
            proto::GameStatus::Unspecified => None,
            proto::GameStatus::Running => Some(false),
            proto::GameStatus::Finished => Some(true),
        };
        // A listing is a spectator's view: every game as GetGame without a
        // token shows it, and none that it refuses (sealed).
        let (games, next) = self
            .blocking(move |games| {
                let (found, next) = games.list(finished, page_size, token.as_deref())?;
                let mut visible = Vec::with_capacity(found.len());
                for now in found {
                    let id = GameId::new(now.info.id.clone())
                        .map_err(|e| ApiError::Internal(format!("a stored game's id: {e}")))?;
                    if !games.sealed(&id, &now) {
                        let reveal = games.seed_reveal(&id, &now);
                        visible.push((
                            audience::visible_game(games, &id, Audience::Spectator, now)?,
                            reveal,
                        ));
                    }
                }
                Ok((visible, next))
            })
            .await?;
        Ok(Response::new(proto::ListGamesResponse {
            games: games.iter().map(|(l, reveal)| game_view(l, *reveal)).collect(),
            next_page_token: next.unwrap_or_default(),
        }))
    }

    async fn get_legal_actions(
        &self,
        request: Request<proto::GetLegalActionsRequest>,
    ) -> Result<Response<proto::GetLegalActionsResponse>, Status> {
        let token = request::optional_token(&request)?;
        let id = game_id(&request.get_ref().name)?;
        let span = tracing::info_span!("get_legal_actions", game = %id);
        let (loaded, _) = self
            .blocking(move |games| visible_game(games, &id, token.as_deref()))
            .instrument(span)
            .await?;
        Ok(Response::new(proto::GetLegalActionsResponse {
            version: version::of_seq(loaded.version),
            pending: Some(view::pending(&loaded.game)),
            actions: view::actions(&loaded.game),
            time_left_ms: view::times_left(&loaded.game),
            clock_time_ms: view::millis(loaded.game.time()),
        }))
    }

    async fn act(&self, request: Request<proto::ActRequest>) -> Result<Response<proto::ActResponse>, Status> {
        let token = token(&request)?;
        let r = request.into_inner();
        let id = game_id(&r.name)?;
        let request_id = request_id(&r.request_id)?;
        let command = parse::action(r.action.as_ref())?;
        let expected = version::to_seq("expected_version", r.expected_version)?;
        let view = proto::GameView::try_from(r.view).map_err(|_| ApiError::InvalidArgument {
            field: "view".to_owned(),
            message: format!("no game view {}", r.view),
        })?;
        let span = tracing::info_span!("act", game = %id, request = %request_id);
        let Acted { outcomes, loaded } = self
            .act_durably(id.clone(), token, expected, request_id, command)
            .instrument(span)
            .await?;
        let reveal = self.games.seed_reveal(&id, &loaded);
        Ok(Response::new(proto::ActResponse {
            version: version::of_seq(loaded.version),
            events: events_view(&loaded, &outcomes),
            game: Some(view::game_as(
                &loaded.info,
                loaded.version as i64,
                &loaded.game,
                reveal,
                view,
            )),
            legal_actions: view::actions(&loaded.game),
        }))
    }
}
