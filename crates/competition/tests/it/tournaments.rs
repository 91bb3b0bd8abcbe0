//! Whole tournaments, given-when-then: created, advanced, played with
//! random results, withdrawn from, finished.

use std::collections::BTreeSet;

use carcassonne_competition::*;

use crate::support::*;

#[test]
fn a_swiss_of_8_in_duels_plays_its_rounds_then_finishes() {
    // Given a Swiss of 8 players in duels over 5 rounds
    let mut rng = Rng::new(10);
    let mut run = Run::new("swiss8", swiss(8, 5, 2), rng.seed());
    assert_eq!((run.tournament.round(), run.tournament.rounds()), (0, 5));
    assert!(
        run.tournament
            .standings()
            .iter()
            .all(|s| s.points == Points::ZERO)
    );

    // When every round is played with random results
    for round in 1..=5 {
        let events = run.advance();
        assert!(
            matches!(&events[..], [TournamentEvent::RoundPaired { round: r, tables, byes }]
            if *r == round && tables.len() == 4 && byes.is_empty())
        );
        assert_eq!(run.tournament.pending_games().count(), 4);
        assert_eq!(run.advance(), vec![], "round {round} is not complete");
        run.play_pending(&mut rng);
    }

    // Then the next advance finishes it, and the standings add up
    assert_eq!(run.advance(), vec![TournamentEvent::Finished]);
    assert!(run.tournament.is_finished());
    assert_eq!(
        run.tournament.decide(&TournamentCommand::Advance),
        Err(TournamentError::Finished)
    );
    let standings = run.tournament.standings();
    check_standings_sorted(&standings);
    let total: Points = standings.iter().map(|s| s.points).sum();
    assert_eq!(total, Points::whole(20), "one point a game");
    assert_eq!(standings.iter().map(|s| s.games).sum::<u32>(), 40);
    assert_eq!(run.refold().standings(), standings);
}

#[test]
fn a_round_robin_in_tables_of_3_with_points_5_3_2_finishes_after_every_table() {
    // Given a round robin of 6 players in tables of 3, points 5-3-2
    let mut rng = Rng::new(11);
    let mut spec = spec(6, Format::RoundRobin, 3);
    spec.table_points = vec![5, 3, 2];
    let mut run = Run::new("rr6", spec, rng.seed());
    // When it is played to the end
    let rounds = run.play_to_end(&mut rng);
    // Then it played its 20 tables in the rounds of its schedule
    assert_eq!(rounds, run.tournament.rounds());
    assert_eq!(run.tournament.games().count(), 20);
    assert_eq!(run.events.last(), Some(&TournamentEvent::Finished));
    let standings = run.tournament.standings();
    check_standings_sorted(&standings);
    assert_eq!(
        standings.iter().map(|s| s.points).sum::<Points>(),
        Points::whole(20 * 10)
    );
    assert!(
        standings.iter().all(|s| s.games == 10),
        "each player sits at C(5,2) = 10 tables"
    );
}

#[test]
fn a_match_of_two_games_alternates_the_first_seat() {
    let mut spec = swiss(4, 3, 2);
    spec.games_per_match = 2;
    let mut run = Run::new("m", spec, [2; 32]);
    run.advance();
    let games: Vec<ScheduledGame> = run.tournament.games().collect();
    assert_eq!(games.len(), 4);
    for pair in games.chunks(2) {
        assert_eq!((pair[0].index, pair[1].index), (0, 1));
        assert_eq!(pair[0].table, pair[1].table);
        assert_eq!(
            pair[1].seats,
            vec![pair[0].seats[1].clone(), pair[0].seats[0].clone()]
        );
        assert_eq!(pair[0].id, game_id("m", 1, pair[0].table, 0));
    }

    // Tables of 3 playing 3 games rotate the seats left each game.
    let mut spec = swiss(3, 2, 3);
    spec.games_per_match = 3;
    spec.table_points = vec![2, 1, 0];
    let mut run = Run::new("r", spec, [3; 32]);
    run.advance();
    let seats: Vec<Vec<PlayerName>> = run.tournament.games().map(|g| g.seats).collect();
    let table = &run.tournament.paired(1).unwrap().tables[0].players;
    let [a, b, c] = [&table[0], &table[1], &table[2]].map(Clone::clone);
    assert_eq!(
        seats,
        vec![
            vec![a.clone(), b.clone(), c.clone()],
            vec![b.clone(), c.clone(), a.clone()],
            vec![c, a, b]
        ]
    );
}

#[test]
fn duplicate_bags_give_every_table_of_a_round_the_same_seed_per_game_index() {
    let mut rng = Rng::new(12);
    let mut spec = swiss(8, 3, 2);
    spec.games_per_match = 2;
    spec.duplicate_bags = true;
    let mut run = Run::new("dup", spec.clone(), rng.seed());
    run.play_to_end(&mut rng);
    let seeds = |run: &Run, round: u32, index: u8| -> BTreeSet<[u8; 32]> {
        run.tournament
            .games()
            .filter(|g| g.round == round && g.index == index)
            .map(|g| g.seed)
            .collect()
    };
    let mut all = BTreeSet::new();
    for round in 1..=3 {
        for index in 0..2 {
            let shared = seeds(&run, round, index);
            assert_eq!(
                shared.len(),
                1,
                "round {round} game {index}: one seed for all tables"
            );
            assert!(
                all.insert(*shared.first().unwrap()),
                "round {round} game {index}: seen before"
            );
        }
    }

    // Without duplicate bags every game has its own seed.
    spec.duplicate_bags = false;
    let mut run = Run::new("own", spec, rng.seed());
    run.play_to_end(&mut rng);
    let own: BTreeSet<[u8; 32]> = run.tournament.games().map(|g| g.seed).collect();
    assert_eq!(own.len(), run.tournament.games().count());
    let game = run.tournament.games().nth(5).unwrap();
    assert_eq!(
        game.seed,
        game_seed(run.tournament.seed(), game.round, game.table, game.index, false)
    );
}

#[test]
fn a_withdrawn_swiss_player_keeps_pending_games_and_is_never_paired_again() {
    // Given a Swiss of 6 in its first round
    let mut rng = Rng::new(13);
    let mut run = Run::new("w", swiss(6, 4, 2), rng.seed());
    run.advance();
    let leaver = run.tournament.paired(1).unwrap().tables[0].players[0].clone();
    let pending_before: Vec<String> = run.tournament.pending_games().map(|g| g.id).collect();

    // When a player withdraws mid-round
    let events = run.execute(TournamentCommand::Withdraw {
        player: leaver.clone(),
    });

    // Then their game still waits for a result (the server forfeits it)
    assert_eq!(
        events,
        vec![TournamentEvent::Withdrawn {
            player: leaver.clone()
        }]
    );
    assert_eq!(
        run.tournament.pending_games().map(|g| g.id).collect::<Vec<_>>(),
        pending_before
    );
    assert_eq!(run.advance(), vec![], "the round is not complete");
    assert_eq!(
        run.tournament.decide(&TournamentCommand::Withdraw {
            player: leaver.clone()
        }),
        Err(TournamentError::AlreadyWithdrawn(leaver.clone()))
    );

    // And they are never paired again, while standing as withdrawn
    run.play_to_end(&mut rng);
    for round in &run.tournament.paired_rounds()[1..] {
        assert!(round.tables.iter().all(|t| !t.players.contains(&leaver)) && !round.byes.contains(&leaver));
        assert_eq!(round.byes.len(), 1, "5 active players: one bye");
    }
    let standings = run.tournament.standings();
    assert!(standings.iter().find(|s| s.player == leaver).unwrap().withdrawn);
    assert_eq!(standings.iter().filter(|s| s.withdrawn).count(), 1);
}

#[test]
fn a_withdrawn_round_robin_opponent_becomes_a_bye() {
    // Given a round robin of 4 in duels after its first round
    let mut rng = Rng::new(14);
    let mut run = Run::new("rrw", spec(4, Format::RoundRobin, 2), rng.seed());
    run.advance();
    run.play_pending(&mut rng);
    let leaver = run.tournament.lot()[0].clone();

    // When a player withdraws
    run.execute(TournamentCommand::Withdraw {
        player: leaver.clone(),
    });
    run.play_to_end(&mut rng);

    // Then each later opponent of theirs has a bye scoring the first place
    let rounds = run.tournament.paired_rounds();
    assert_eq!(rounds.len(), 3);
    for round in &rounds[1..] {
        assert_eq!(round.tables.len(), 1);
        assert_eq!(round.byes.len(), 1);
        assert!(!round.byes.contains(&leaver));
    }
    let standings = run.tournament.standings();
    let games: u32 = standings.iter().map(|s| s.games).sum();
    assert_eq!(
        games,
        4 + 2 + 2,
        "round 1: two games of two; rounds 2 and 3: one game each"
    );
    let bye_points: Points = standings.iter().map(|s| s.points).sum();
    assert_eq!(
        bye_points,
        Points::whole(2 + 1 + 1 + 2),
        "4 games and 2 byes of a point each"
    );
}

#[test]
fn withdrawals_in_a_round_robin_of_tables_of_3_shrink_or_drop_tables() {
    let mut rng = Rng::new(15);
    let mut run = Run::new("rr3", spec(5, Format::RoundRobin, 3), rng.seed());
    run.advance();
    run.play_pending(&mut rng);
    let lot = run.tournament.lot().to_vec();
    for leaver in &lot[..2] {
        run.execute(TournamentCommand::Withdraw {
            player: leaver.clone(),
        });
    }
    // Each advance pairs on to a round with games (or finishes): the
    // rounds whose every table was emptied are paired in the same
    // decision.
    while !run.tournament.is_finished() {
        let events = run.advance();
        let last = events.last().unwrap();
        assert!(
            matches!(last, TournamentEvent::RoundPaired { tables, .. } if !tables.is_empty())
                || last == &TournamentEvent::Finished,
            "{events:?}"
        );
        assert!(
            events[..events.len() - 1]
                .iter()
                .all(|e| matches!(e, TournamentEvent::RoundPaired { tables, .. } if tables.is_empty()))
        );
        run.play_pending(&mut rng);
    }
    let empty = run
        .tournament
        .paired_rounds()
        .iter()
        .filter(|r| r.tables.is_empty())
        .count();
    assert_eq!(empty, 2, "the triples {{0, 1, 3}} and {{0, 1, 4}} of the lot");
    // Every table after round 1 lost the leavers; tables of one were dropped.
    for round in &run.tournament.paired_rounds()[1..] {
        assert!(round.byes.is_empty());
        for table in &round.tables {
            assert!(table.players.len() >= 2);
            assert!(!table.players.iter().any(|p| lot[..2].contains(p)));
        }
    }
    let triples_of_the_other_three = run.tables().iter().flatten().filter(|t| t.len() == 3).count();
    assert_eq!(
        triples_of_the_other_three, 2,
        "round 1's table and the one of the three left"
    );
}

#[test]
fn fewer_than_two_active_players_finish_the_tournament() {
    let mut rng = Rng::new(16);
    let mut run = Run::new("few", swiss(3, 2, 2), rng.seed());
    run.advance();
    run.play_pending(&mut rng);
    for player in &names(3)[..2] {
        run.execute(TournamentCommand::Withdraw {
            player: player.clone(),
        });
    }
    assert_eq!(run.tournament.pairing_for_next_round(), None);
    assert_eq!(run.advance(), vec![TournamentEvent::Finished]);
    assert_eq!(run.tournament.round(), 1);
}

#[test]
fn decisions_refuse_what_does_not_fit_and_change_nothing() {
    fn check(run: &Run, command: TournamentCommand, expected: TournamentError) {
        assert_eq!(run.tournament.decide(&command), Err(expected), "{command:?}");
    }
    let mut run = Run::new("d", swiss(4, 2, 2), [5; 32]);
    let stranger = name("Stranger");
    check(
        &run,
        TournamentCommand::Withdraw {
            player: stranger.clone(),
        },
        TournamentError::NotAParticipant(stranger),
    );
    run.advance();
    let game = run.tournament.pending_games().next().unwrap().id;
    let result = |ranks: Vec<u8>, scores: Vec<u32>| TournamentCommand::RecordResult {
        game: game.clone(),
        result: GameResult::Ranked { ranks, scores },
    };
    check(
        &run,
        TournamentCommand::RecordResult {
            game: "d-r9t1g0".into(),
            result: GameResult::Aborted,
        },
        TournamentError::UnknownGame("d-r9t1g0".into()),
    );
    check(
        &run,
        result(vec![1, 2, 3], vec![3, 2, 1]),
        TournamentError::WrongSeatCount {
            game: game.clone(),
            expected: 2,
            got: 3,
        },
    );
    check(
        &run,
        result(vec![1, 2], vec![3]),
        TournamentError::WrongSeatCount {
            game: game.clone(),
            expected: 2,
            got: 1,
        },
    );
    check(
        &run,
        result(vec![0, 1], vec![3, 4]),
        TournamentError::InvalidRanks { game: game.clone() },
    );
    check(
        &run,
        result(vec![1, 3], vec![4, 3]),
        TournamentError::InvalidRanks { game: game.clone() },
    );
    let before = run.tournament.standings();
    run.record(&game, GameResult::Aborted);
    check(
        &run,
        result(vec![1, 2], vec![4, 3]),
        TournamentError::AlreadyRecorded(game.clone()),
    );
    assert_eq!(
        run.tournament.standings(),
        before,
        "an aborted game scores nothing"
    );
}

#[test]
fn apply_ignores_events_decide_would_never_produce() {
    let mut rng = Rng::new(17);
    let mut run = Run::new("a", swiss(4, 2, 2), rng.seed());
    run.advance();
    let game = run.tournament.pending_games().next().unwrap().id;
    run.record(
        &game,
        GameResult::Ranked {
            ranks: vec![2, 1],
            scores: vec![3, 9],
        },
    );
    let before = run.tournament.standings();
    let mut tournament = run.tournament.clone();
    for event in [
        TournamentEvent::GameEnded {
            game: game.clone(),
            result: GameResult::Ranked {
                ranks: vec![1, 2],
                scores: vec![9, 3],
            },
        },
        TournamentEvent::GameEnded {
            game: "nope".into(),
            result: GameResult::Aborted,
        },
        TournamentEvent::Withdrawn {
            player: name("Stranger"),
        },
        TournamentEvent::RoundPaired {
            round: 5,
            tables: vec![],
            byes: vec![],
        },
        Tournament::create(swiss(6, 2, 2), [0; 32]).unwrap(),
    ] {
        tournament.apply(&event);
    }
    assert_eq!(tournament.standings(), before);
    assert_eq!(tournament.round(), 1);
    assert_eq!(tournament.spec().participants.len(), 4);
}
