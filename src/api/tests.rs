//! The boundary's round trips: what `view` shows a player folds back,
//! through `follow`, into the game the server's `Game::public` is.

use carcassonne_engine::{
    Actor, Command, Expansion, Game, MainTime, OnTimeout, Rules, Seed, Setup, TileKind, TimeControl,
};

use super::{follow, view};
use crate::proto;

fn info() -> view::GameInfo {
    view::GameInfo {
        id: "g".to_owned(),
        create_time_ms: 0,
        spectator_delay: 0,
        seed_sha256: String::new(),
        accounts: Vec::new(),
        bots: Vec::new(),
        rated: false,
        tournament: None,
    }
}

#[test]
fn a_game_rebuilt_from_what_its_players_are_shown_is_the_server_s_public_game() {
    let base = Rules::default();
    let kind = |name| TileKind::from_name(name).expect("a kind");
    for seed in 0..12u64 {
        let rules = [
            base,
            base.with(Expansion::River),
            base.with(Expansion::Count),
            base.with(Expansion::River).with(Expansion::Count),
        ][seed as usize % 4];
        let setup = Setup {
            rules,
            players: (0..2 + seed as usize % 3).map(|i| format!("P{i}")).collect(),
            // A bag of one's own now and then.
            tiles: (seed % 3 == 2).then(|| vec![(kind("B"), 3), (kind("D"), 5), (kind("U"), 4)]),
            seed: Some(Seed::from_u64(seed)),
            time_control: (seed % 2 == 1).then_some(TimeControl {
                main: Some(MainTime {
                    initial_ms: 3_000,
                    increment_ms: 100,
                }),
                decision_ms: Some(500),
                on_timeout: if seed % 4 == 1 {
                    OnTimeout::Auto
                } else {
                    OnTimeout::Forfeit
                },
            }),
        };
        let mut at = 1_000_000;
        let mut game = Game::new_at(setup, at);
        let shown = view::game(&info(), 2, &game, crate::games::SeedReveal::unshared());
        let mut public = follow::created(&shown).expect("the creation");
        let mut seq = 2;
        let mut show =
            |public: &mut carcassonne_engine::PublicGame, events: &[carcassonne_engine::Event], at, actor| {
                for event in events {
                    seq += 1;
                    let seat = match event {
                        carcassonne_engine::Event::Drawn(_) => None,
                        _ => actor,
                    };
                    let message: proto::GameEvent = view::event(seq, at as i64, seat, event, &[], "");
                    follow::follow(public, &message)
                        .unwrap_or_else(|e| panic!("seed {seed}: {event:?}: {e}"));
                }
            };
        let mut first = Vec::new();
        game.run_automatic(&mut first, &mut ());
        show(&mut public, &first, at, None);
        let mut decisions = 0;
        while let Some(player) = game.pending().player() {
            decisions += 1;
            let (actor, command) = match (game.deadline(), decisions % 7) {
                (Some(deadline), 0) => {
                    at = deadline;
                    (Actor::Dealer, Command::TimeOut)
                }
                (_, 3) if decisions == 31 => (Actor::Seat(player), Command::Resign),
                _ => {
                    at += 7;
                    let choices = game.legal_commands();
                    (
                        Actor::Seat(player),
                        choices[(decisions * 31 + seed as usize) % choices.len()],
                    )
                }
            };
            let events = game.execute_at(at, actor, &command, &mut ()).expect("legal");
            let seat = match command {
                Command::TimeOut => None,
                _ => Some(player),
            };
            show(&mut public, &events, at, seat);
            assert_eq!(public, game.public(), "seed {seed}: after {command:?}");
        }
    }
}
