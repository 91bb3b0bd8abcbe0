//! Pairing `pairing/1` against a brute-force reading of its rules, and
//! its properties over whole tournaments.

use std::collections::{BTreeMap, BTreeSet};

use carcassonne_competition::*;

use crate::support::*;

// ---- A brute-force reading of the Swiss rules ---------------------------------

/// Standings positions; `dummy` (when there is a bye) is the position
/// after the last player.
type Partition = Vec<Vec<usize>>;

/// Every partition of `players` into `big` tables of `small + 1` and the
/// rest of `small`, in candidate order: each table opened by the first
/// player left, larger size first, then its members lexicographically.
fn partitions(players: &[usize], small: usize, big: usize) -> Vec<Partition> {
    let Some((&top, rest)) = players.split_first() else {
        return vec![Vec::new()];
    };
    let small_tables = (players.len() - big * (small + 1)) / small;
    let mut out = Vec::new();
    for (size, big_after) in [
        (big > 0).then(|| (small + 1, big - 1)),
        (small_tables > 0).then_some((small, big)),
    ]
    .into_iter()
    .flatten()
    {
        for mates in combinations(rest, size - 1) {
            let left: Vec<usize> = rest.iter().copied().filter(|p| !mates.contains(p)).collect();
            for tail in partitions(&left, small, big_after) {
                let mut partition = vec![[vec![top], mates.clone()].concat()];
                partition.extend(tail);
                out.push(partition);
            }
        }
    }
    out
}

fn combinations(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        for tail in combinations(&items[i + 1..], k - 1) {
            out.push([vec![first], tail].concat());
        }
    }
    out
}

/// (small, big) for m players in tables of k.
fn shape(m: usize, k: usize) -> (usize, usize) {
    let tables = m.div_ceil(k);
    (m / tables, m % tables)
}

/// Meeting counts by position, the dummy included.
struct Met(Vec<Vec<u32>>);

impl Met {
    fn cost(&self, partition: &Partition) -> u32 {
        let mut cost = 0;
        for table in partition {
            for (i, &a) in table.iter().enumerate() {
                for &b in &table[i + 1..] {
                    cost += self.0[a][b];
                }
            }
        }
        cost
    }

    fn after(&self, partition: &Partition) -> Met {
        let mut next = self.0.clone();
        for table in partition {
            for (i, &a) in table.iter().enumerate() {
                for &b in &table[i + 1..] {
                    next[a][b] += 1;
                    next[b][a] += 1;
                }
            }
        }
        Met(next)
    }

    /// Whether `rounds` rounds of everyone can follow without a repeat.
    fn completable(&self, k: usize, rounds: u32) -> bool {
        if rounds == 0 {
            return true;
        }
        let everyone: Vec<usize> = (0..self.0.len()).collect();
        let (small, big) = shape(everyone.len(), k);
        partitions(&everyone, small, big)
            .iter()
            .any(|p| self.cost(p) == 0 && self.after(p).completable(k, rounds - 1))
    }
}

/// The pairing the rules of `pairing/1` give, found by brute force:
/// (bye, tables by position).
fn brute_force(input: &PairingInput, k: usize, rounds_left: u32) -> (Option<usize>, Partition) {
    let n = input.standings.len();
    let bye = (k == 2 && n % 2 == 1).then(|| {
        (0..n)
            .rev()
            .find(|&i| input.byes_of(&input.standings[i]) == 0)
            .unwrap_or(n - 1)
    });
    let size = n + usize::from(bye.is_some());
    let mut met = vec![vec![0; size]; size];
    for (a, row) in met.iter_mut().enumerate() {
        for (b, times) in row.iter_mut().enumerate() {
            let player = |i: usize| input.standings.get(i);
            *times = match (player(a), player(b)) {
                (Some(x), Some(y)) if a != b => input.met(x, y),
                // The dummy (position n) met everyone who had a bye.
                (Some(x), None) | (None, Some(x)) => input.byes_of(x),
                _ => 0,
            };
        }
    }
    let met = Met(met);
    let seated: Vec<usize> = (0..n).filter(|&p| Some(p) != bye).collect();
    if seated.len() < 2 {
        return (bye, Vec::new());
    }
    let (small, big) = shape(seated.len(), k);
    let candidates = partitions(&seated, small, big);
    let least = candidates.iter().map(|p| met.cost(p)).min().unwrap();
    let first_of_least = candidates.iter().find(|p| met.cost(p) == least).unwrap().clone();
    if least > 0 || rounds_left == 0 {
        return (bye, first_of_least);
    }
    let completable = candidates.iter().find(|p| {
        let mut after = met.after(p);
        if let Some(b) = bye {
            after.0[b][n] += 1;
            after.0[n][b] += 1;
        }
        met.cost(p) == 0 && after.completable(k, rounds_left)
    });
    (bye, completable.cloned().unwrap_or(first_of_least))
}

/// A random history: `n` active players of `n + withdrawn` participants,
/// in a random standings order, with random meetings and byes.
fn random_case(rng: &mut Rng, n: usize, withdrawn: usize) -> (Vec<PlayerName>, PairingInput) {
    let participants = names(n + withdrawn);
    let mut active = participants.clone();
    for i in (1..active.len()).rev() {
        active.swap(i, rng.below(i + 1));
    }
    active.truncate(n);
    let mut input = PairingInput {
        standings: active,
        ..PairingInput::default()
    };
    let density = rng.below(70);
    for (i, a) in participants.iter().enumerate() {
        for b in &participants[i + 1..] {
            if rng.chance(density) {
                for _ in 0..1 + rng.below(2) {
                    input.add_meeting(a, b);
                }
            }
        }
        if rng.chance(30) {
            input.byes.insert(a.clone(), 1);
        }
    }
    (participants, input)
}

#[test]
fn swiss_pairings_are_those_a_brute_force_search_of_the_rules_finds() {
    let mut rng = Rng::new(1);
    let mut repeat_free = 0;
    let mut forced_repeats = 0;
    for case in 0..1500 {
        let k = 2 + rng.below(3);
        let n = 2 + rng.below(7);
        let withdrawn = rng.below(3);
        let (participants, input) = random_case(&mut rng, n, withdrawn);
        let rounds = participants.len() as u32 - 1;
        // The look-ahead's brute force is exponential: small cases only.
        let round = if n <= 6 {
            1 + rng.below(rounds as usize) as u32
        } else {
            rounds
        };
        let mut spec = swiss(participants.len(), rounds, k as u8);
        spec.participants = participants;
        let pairing = pair(&spec, &input, &rng.seed(), round);

        let (bye, tables) = brute_force(&input, k, rounds - round);
        let at = |positions: &Vec<usize>| -> Vec<PlayerName> {
            positions.iter().map(|&p| input.standings[p].clone()).collect()
        };
        let expected = Pairing {
            tables: tables.iter().map(at).collect(),
            byes: bye.map(|b| at(&vec![b])).unwrap_or_default(),
        };
        assert_eq!(
            pairing, expected,
            "case {case}: n = {n}, k = {k}, round {round} of {rounds}, {input:?}"
        );
        let cost: u32 = tables
            .iter()
            .flat_map(|t| {
                t.iter()
                    .flat_map(move |&a| t.iter().filter(move |&&b| a < b).map(move |&b| (a, b)))
            })
            .map(|(a, b)| input.met(&input.standings[a], &input.standings[b]))
            .sum();
        if cost == 0 {
            repeat_free += 1
        } else {
            forced_repeats += 1
        }
    }
    // Both branches of the rules were exercised.
    assert!(
        repeat_free > 300 && forced_repeats > 300,
        "{repeat_free} repeat-free, {forced_repeats} forced"
    );
}

// ---- Properties over whole tournaments -----------------------------------------

/// Checks one round: every active player seated once or given the bye,
/// no withdrawn player anywhere, tables of the documented sizes.
fn check_round(round: &PairedRound, active: &BTreeSet<PlayerName>, k: usize, swiss: bool) {
    let mut seen = BTreeSet::new();
    for player in round.tables.iter().flat_map(|t| &t.players).chain(&round.byes) {
        assert!(
            active.contains(player),
            "round {}: {player} is not active",
            round.round
        );
        assert!(
            seen.insert(player.clone()),
            "round {}: {player} seated twice",
            round.round
        );
    }
    if swiss {
        assert_eq!(&seen, active, "round {}: someone sits out", round.round);
        let sizes: BTreeSet<usize> = round.tables.iter().map(|t| t.players.len()).collect();
        assert!(
            sizes.iter().all(|&s| (2..=k).contains(&s)),
            "round {}: {sizes:?}",
            round.round
        );
        assert!(sizes.len() <= 2 && sizes.first().unwrap() + 1 >= *sizes.last().unwrap());
        assert_eq!(round.tables.len(), (active.len() - round.byes.len()).div_ceil(k));
        assert_eq!(round.byes.len(), usize::from(k == 2 && active.len() % 2 == 1));
    }
}

#[test]
fn swiss_seats_every_active_player_once_and_never_a_withdrawn_one() {
    let mut rng = Rng::new(2);
    for case in 0..40 {
        let k = 2 + rng.below(4);
        let n = 5 + rng.below(26);
        let rounds = 1 + rng.below(6.min(n - 1)) as u32;
        let mut run = Run::new("t", swiss(n, rounds, k as u8), rng.seed());
        while !run.tournament.is_finished() {
            if rng.chance(15) {
                let player = names(n)[rng.below(n)].clone();
                if !run.tournament.withdrawn().contains(&player) {
                    run.execute(TournamentCommand::Withdraw { player });
                }
            }
            let before: BTreeSet<PlayerName> = run.tournament.active().cloned().collect();
            let events = run.advance();
            if let Some(TournamentEvent::RoundPaired { round, .. }) = events.first() {
                check_round(run.tournament.paired(*round).unwrap(), &before, k, true);
            }
            run.play_pending(&mut rng);
        }
        assert!(run.tournament.round() <= rounds, "case {case}");
    }
}

#[test]
fn every_round_is_the_pairing_an_auditor_recomputes_from_the_events_before_it() {
    let mut rng = Rng::new(3);
    for (spec, withdrawals) in [
        (swiss(9, 5, 2), true),
        (swiss(14, 4, 3), true),
        (swiss(17, 6, 4), false),
        (spec(7, Format::RoundRobin, 2), true),
        (spec(6, Format::RoundRobin, 3), true),
    ] {
        let n = spec.participants.len();
        let mut run = Run::new("audit", spec, rng.seed());
        while !run.tournament.is_finished() {
            if withdrawals && rng.chance(10) {
                let player = names(n)[rng.below(n)].clone();
                if !run.tournament.withdrawn().contains(&player) {
                    run.execute(TournamentCommand::Withdraw { player });
                }
            }
            run.advance();
            run.play_pending(&mut rng);
        }
        for (at, event) in run.events.iter().enumerate() {
            let TournamentEvent::RoundPaired { tables, byes, .. } = event else {
                continue;
            };
            // Two independent folds of the same prefix, each with its own
            // hash maps, pair the same.
            let (first, second) = (fold("audit", &run.events[..at]), fold("audit", &run.events[..at]));
            let expected = first.pairing_for_next_round().unwrap();
            assert_eq!(second.pairing_for_next_round().unwrap(), expected);
            let players: Vec<Vec<PlayerName>> = tables.iter().map(|t| t.players.clone()).collect();
            assert_eq!((&players, byes), (&expected.tables, &expected.byes), "event {at}");
            // The free function agrees with the tournament's plan.
            let input = first.pairing_input();
            assert_eq!(
                pair(first.spec(), &input, first.seed(), first.round() + 1),
                expected
            );
        }
    }
}

#[test]
fn an_8_player_swiss_of_7_rounds_in_duels_meets_everyone_exactly_once() {
    let mut rng = Rng::new(4);
    for seed in 0..30 {
        let mut run = Run::new("eight", swiss(8, 7, 2), rng.seed());
        assert_eq!(run.play_to_end(&mut rng), 7, "seed {seed}");
        let mut met: BTreeMap<(PlayerName, PlayerName), u32> = BTreeMap::new();
        for table in run.tables().into_iter().flatten() {
            let (a, b) = (table[0].clone(), table[1].clone());
            *met.entry(if a < b { (a, b) } else { (b, a) }).or_default() += 1;
        }
        assert_eq!(met.len(), 28, "seed {seed}: {met:?}");
        assert!(met.values().all(|&times| times == 1), "seed {seed}: {met:?}");
    }
}

#[test]
fn a_64_player_swiss_of_7_rounds_pairs_without_a_repeat() {
    let mut rng = Rng::new(5);
    for table_size in [2, 4] {
        let mut run = Run::new("big", swiss(64, 7, table_size), rng.seed());
        assert_eq!(run.play_to_end(&mut rng), 7);
        let mut pairs = BTreeSet::new();
        for table in run.tables().into_iter().flatten() {
            for (i, a) in table.iter().enumerate() {
                for b in &table[i + 1..] {
                    assert!(
                        pairs.insert((a.clone().min(b.clone()), a.clone().max(b.clone()))),
                        "{a} and {b} again"
                    );
                }
            }
        }
    }
}

#[test]
fn the_first_swiss_round_follows_the_lot_and_the_bye_goes_to_the_lowest_without_one() {
    let seed = [9; 32];
    let mut run = Run::new("lot", swiss(5, 4, 2), seed);
    run.advance();
    let lot = lot_order(&names(5), &seed);
    let round = run.tournament.paired(1).unwrap();
    let tables: Vec<Vec<PlayerName>> = round.tables.iter().map(|t| t.players.clone()).collect();
    assert_eq!(tables, vec![lot[0..2].to_vec(), lot[2..4].to_vec()]);
    assert_eq!(round.byes, vec![lot[4].clone()]);
    assert_eq!(run.tournament.lot(), &lot[..]);

    // The bye never goes twice to anyone in 4 rounds of 5.
    let mut rng = Rng::new(6);
    run.play_to_end(&mut rng);
    let byes: Vec<&PlayerName> = run
        .tournament
        .paired_rounds()
        .iter()
        .flat_map(|r| &r.byes)
        .collect();
    assert_eq!(byes.len(), 4);
    assert_eq!(byes.iter().collect::<BTreeSet<_>>().len(), 4, "{byes:?}");
}
