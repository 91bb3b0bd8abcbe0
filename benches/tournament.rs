//! A whole Swiss tournament, measured: `TOURNAMENT_PLAYERS` registered
//! bots [64] play `TOURNAMENT_ROUNDS` rounds [7] of duels on the whole
//! server in-process (loopback gRPC, the sled store durable as in
//! production), each bot over its one WatchPlayer stream, acting at once
//! with a random legal action.
//!
//! Reported:
//! - the pairing of each round: `Tournament::pairing_for_next_round` on
//!   the tournament folded from its stored events up to that round, the
//!   median of `TOURNAMENT_PAIRING_RUNS` [21] runs (the pure function, as
//!   the server runs it);
//! - each round's turnaround, from the stored times (ms): from the end of
//!   the round's last game to the next round's pairing stored, and to its
//!   last game created (every result, the pairing and the games are
//!   durable appends); baseline in the same run: the median time between
//!   two actions of one game (a bot's whole round trip);
//! - the finished tournament's signed archive: its export (the gRPC call,
//!   all chunks) and its offline audit (`carcassonne audit`: every game,
//!   the pairings, standings and ratings recomputed), per game, against
//!   the baseline of `carcassonne verify` on each game's record (replay
//!   and checks of one record).
//!
//! `cargo bench --bench tournament`. `TOURNAMENT_THREADS` [the number of
//! cores] sets the runtime's workers.

// A bench: a failure should stop it loudly.
#![allow(clippy::unwrap_used)]

// Shared with the other benches, which use the rest of it.
#[allow(dead_code)]
mod support;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::player_service_client::PlayerServiceClient;
use carcassonne::proto::tournament_service_client::TournamentServiceClient;
use carcassonne::proto::{self, watch_player_response::Message as P};
use carcassonne::server::{ServerConfig, serve};
use carcassonne_competition::TournamentEvent;
use carcassonne_store::{EventStore, GameId, SledStore, StoreConfig, StoredEvent};
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;

use support::stats::median;
use support::{Rng, connect, env};

const ADMIN_KEY: &str = "the-tournament-bench-admin-key-000";

fn with_key<T>(message: T, key: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    request
}

/// Plays every decision of the player with `key` from its stream, until
/// aborted.
async fn bot(channel: Channel, key: String, seed: u64) {
    let mut games = GameServiceClient::new(channel.clone());
    let mut players = PlayerServiceClient::new(channel);
    let mut rng = Rng(seed);
    let mut done: HashSet<(String, i64)> = HashSet::new();
    let mut stream = players
        .watch_player(with_key(proto::WatchPlayerRequest::default(), &key))
        .await
        .unwrap()
        .into_inner();
    while let Some(Ok(message)) = stream.next().await {
        let Some(P::Decision(decision)) = message.message else {
            continue;
        };
        let legal = decision.legal.unwrap();
        if legal.actions.is_empty() || !done.insert((decision.game.clone(), legal.version)) {
            continue;
        }
        let action = legal.actions[rng.below(legal.actions.len())].action.unwrap();
        let request = proto::ActRequest {
            name: decision.game.clone(),
            expected_version: legal.version,
            request_id: format!("{}-{}", decision.game.trim_start_matches("games/"), legal.version),
            action: Some(proto::Action { action: Some(action) }),
            view: 0,
        };
        // A stale version or the game's end: the stream says what next.
        let _ = games.act(with_key(request, &key)).await;
    }
}

struct Settings {
    players: usize,
    rounds: u32,
    pairing_runs: usize,
    threads: usize,
}

fn main() {
    let settings = Settings {
        players: env("TOURNAMENT_PLAYERS", 64),
        rounds: env("TOURNAMENT_ROUNDS", 7),
        pairing_runs: env("TOURNAMENT_PAIRING_RUNS", 21),
        threads: env(
            "TOURNAMENT_THREADS",
            std::thread::available_parallelism().map_or(2, |n| n.get()),
        ),
    };
    let runtime = support::runtime(settings.threads);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (name, archive, played_for) = runtime.block_on(play(&settings, &data));
    let stored = read_store(&data, &name);
    report_pairings(&settings, &name, &stored.tournament);
    report_turnaround(&stored);
    report_archive(&archive, &stored, played_for);
}

/// Runs the tournament to its end; returns its name, its archive and how
/// long it took.
async fn play(settings: &Settings, data: &std::path::Path) -> (String, Vec<u8>, Duration) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServerConfig {
        data: data.to_owned(),
        admin_key: Some(ADMIN_KEY.to_owned()),
        ..ServerConfig::default()
    };
    let server = tokio::spawn(serve(config, listener, async {
        let _ = stopped.await;
    }));
    let channels = connect(addr, 4).await;
    let mut players = PlayerServiceClient::new(channels[0].clone());
    let mut register = async |name: String| {
        players
            .register_player(with_key(proto::RegisterPlayerRequest { name }, ADMIN_KEY))
            .await
            .unwrap()
            .into_inner()
            .api_key
    };
    let organiser = register("Organiser".to_owned()).await;
    let mut names = Vec::new();
    let mut bots = Vec::new();
    for i in 0..settings.players {
        let name = format!("Bot{i:03}");
        let key = register(name.clone()).await;
        names.push(format!("players/{name}"));
        bots.push(tokio::spawn(bot(
            channels[i % channels.len()].clone(),
            key,
            i as u64 + 1,
        )));
    }
    players
        .set_organiser(with_key(
            proto::SetOrganiserRequest {
                name: "players/Organiser".to_owned(),
                organiser: true,
            },
            ADMIN_KEY,
        ))
        .await
        .unwrap();
    // Every bot's stream open before the first round is paired.
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!(
        "tournament: {} players, Swiss, {} rounds of duels, {} tokio threads on {} cores",
        settings.players,
        settings.rounds,
        settings.threads,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    let mut tournaments = TournamentServiceClient::new(channels[0].clone());
    let started = Instant::now();
    let created = tournaments
        .create_tournament(with_key(
            proto::CreateTournamentRequest {
                request_id: "tournament-bench-0001".to_owned(),
                title: "Bench open".to_owned(),
                participants: names,
                format: proto::TournamentFormat::Swiss as i32,
                rounds: settings.rounds,
                table_size: 2,
                rated: true,
                rules: Some(proto::RuleOptions::default()),
                time_control: Some(proto::TimeControl {
                    decision_ms: 600_000,
                    on_timeout: proto::TimeoutRule::Forfeit as i32,
                    ..Default::default()
                }),
                ..Default::default()
            },
            &organiser,
        ))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let mut watch = tournaments
        .watch_tournament(proto::WatchTournamentRequest {
            name: created.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut round = 0;
    while let Some(message) = watch.next().await {
        let message = message.unwrap();
        let tournament = message.tournament.unwrap();
        if tournament.current_round != round {
            round = tournament.current_round;
            println!(
                "  round {round} paired at {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        if tournament.status == proto::TournamentStatus::Finished as i32 {
            break;
        }
    }
    let played_for = started.elapsed();
    println!("  finished at {:.1} s", played_for.as_secs_f64());
    for bot in bots {
        bot.abort();
    }
    // The archive waits for the last ratings to be stored: the server says
    // "ask again" (TOURNAMENT_STATE) until then.
    let ratings_started = Instant::now();
    loop {
        let asked = tournaments
            .export_tournament_archive(proto::ExportTournamentArchiveRequest {
                name: created.name.clone(),
            })
            .await;
        match asked {
            Err(status) if status.code() == tonic::Code::FailedPrecondition => {
                assert!(ratings_started.elapsed() < Duration::from_secs(60), "{status:?}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            asked => break drop(asked.unwrap()),
        }
    }
    println!(
        "  ratings stored {:.0} ms after the tournament finished",
        ratings_started.elapsed().as_secs_f64() * 1000.0
    );
    let export_started = Instant::now();
    let mut chunks = tournaments
        .export_tournament_archive(proto::ExportTournamentArchiveRequest {
            name: created.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut archive = Vec::new();
    while let Some(chunk) = chunks.next().await {
        archive.extend(chunk.unwrap().chunk);
    }
    let exported_in = export_started.elapsed();
    println!(
        "  archive exported in {:.1} ms ({} KiB)",
        exported_in.as_secs_f64() * 1e3,
        archive.len() / 1024
    );
    drop(channels);
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let id = created.name.trim_start_matches("tournaments/").to_owned();
    (id, archive, exported_in)
}

/// What the store holds of the tournament once the server stopped.
struct Stored {
    tournament: Vec<StoredEvent>,
    /// Per game id, its stored events.
    games: BTreeMap<String, Vec<StoredEvent>>,
}

fn read_store(data: &std::path::Path, id: &str) -> Stored {
    let store = SledStore::open(data, StoreConfig::default()).unwrap();
    let stream = GameId::new(format!("@tournament/{id}")).unwrap();
    let tournament = store.read_game(&stream, 1).unwrap();
    let held = carcassonne::tournaments::fold(id, &tournament).unwrap();
    let games = held
        .tournament
        .games()
        .map(|g| {
            let events = store.read_game(&GameId::new(g.id.clone()).unwrap(), 1).unwrap();
            (g.id.clone(), events)
        })
        .collect();
    Stored { tournament, games }
}

fn report_pairings(settings: &Settings, id: &str, stored: &[StoredEvent]) {
    println!();
    println!(
        "pairing/1 per round (median of {} runs, µs):",
        settings.pairing_runs
    );
    for (index, event) in stored.iter().enumerate() {
        let Ok(TournamentEvent::RoundPaired { round, .. }) = TournamentEvent::decode(&event.payload) else {
            continue;
        };
        let before = carcassonne::tournaments::fold(id, &stored[..index]).unwrap();
        let mut runs: Vec<f64> = (0..settings.pairing_runs)
            .map(|_| {
                let start = Instant::now();
                let pairing = before.tournament.pairing_for_next_round();
                let took = start.elapsed().as_secs_f64() * 1e6;
                assert!(pairing.is_some());
                took
            })
            .collect();
        println!("  round {round}: {:.0}", median(&mut runs));
    }
}

fn report_turnaround(stored: &Stored) {
    let rounds: Vec<(u32, u64)> = stored
        .tournament
        .iter()
        .filter_map(|e| match TournamentEvent::decode(&e.payload) {
            Ok(TournamentEvent::RoundPaired { round, .. }) => Some((round, e.time_millis)),
            Ok(TournamentEvent::Finished) => Some((u32::MAX, e.time_millis)),
            _ => None,
        })
        .collect();
    let round_of = |game: &str| -> u32 {
        let after = game.rsplit_once("-r").unwrap().1;
        after.split('t').next().unwrap().parse().unwrap()
    };
    println!();
    println!("turnaround (stored times, ms): last game's end -> next round paired -> its games created");
    let mut gaps = Vec::new();
    let mut paired_after = Vec::new();
    for window in rounds.windows(2) {
        let ((round, _), (next, paired_at)) = (window[0], window[1]);
        let ended = stored
            .games
            .iter()
            .filter(|(id, _)| round_of(id) == round)
            .map(|(_, events)| events.last().unwrap().time_millis)
            .max()
            .unwrap();
        let created = stored
            .games
            .iter()
            .filter(|(id, _)| round_of(id) == next)
            .map(|(_, events)| events[1].time_millis)
            .max();
        let paired = paired_at.saturating_sub(ended);
        match created {
            Some(created) => println!(
                "  round {round} -> {next}: paired {paired} ms, games created {} ms",
                created.saturating_sub(ended)
            ),
            None => println!("  round {round} -> the end: finished {paired} ms"),
        }
        paired_after.push(paired as f64);
    }
    for events in stored.games.values() {
        for pair in events[2..].windows(2) {
            if pair[1].actor != carcassonne_store::Actor::Server {
                gaps.push(pair[1].time_millis.saturating_sub(pair[0].time_millis) as f64);
            }
        }
    }
    let turnaround = median(&mut paired_after);
    let action = median(&mut gaps);
    println!(
        "  median: next round paired {turnaround:.0} ms after the last game's end; \
         baseline, median time between two actions of a game: {action:.1} ms"
    );
}

fn report_archive(archive: &[u8], stored: &Stored, exported_in: Duration) {
    let games = stored.games.len();
    let runs = 5;
    let mut audits: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let opened = carcassonne_archive::Archive::open(archive, None).unwrap();
            let report = carcassonne::audit::audit_archive(&opened);
            let took = start.elapsed().as_secs_f64();
            if let Err(failure) = report {
                panic!("the audit failed: {}", failure.finding);
            }
            took
        })
        .collect();
    let records: Vec<String> = {
        let opened = carcassonne_archive::Archive::open(archive, None).unwrap();
        stored
            .games
            .keys()
            .map(|id| {
                String::from_utf8(opened.file(&format!("games/{id}/record.json")).unwrap().to_vec()).unwrap()
            })
            .collect()
    };
    let mut verifies: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            for text in &records {
                let record = carcassonne_engine::record::Record::parse(text).unwrap();
                record.verify().unwrap();
            }
            start.elapsed().as_secs_f64()
        })
        .collect();
    let audit = median(&mut audits) / games as f64 * 1e3;
    let verify = median(&mut verifies) / games as f64 * 1e3;
    println!();
    println!("the signed archive of {games} games, per game (median of {runs} runs):");
    println!(
        "  export {:.2} ms, audit {audit:.2} ms; baseline `carcassonne verify` of its record {verify:.2} ms \
         (audit/verify {:.1}x)",
        exported_in.as_secs_f64() / games as f64 * 1e3,
        audit / verify
    );
}
