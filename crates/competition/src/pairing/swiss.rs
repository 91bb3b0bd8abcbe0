//! The Swiss pairing of `pairing/1`: the rules are in the crate docs
//! (`Swiss`); this file follows them step by step.

use std::collections::{HashMap, HashSet};

use super::search::{DeadEnds, Effort, LookAhead, Meetings, Next, Shape, Verdict, Walker};
use super::set::Set;
use super::{Pairing, PairingInput};

/// The search steps one round's look-ahead may take in all (the round's
/// candidates and the later rounds tried behind each) before it gives up.
pub const LOOKAHEAD_LIMIT: u64 = 1_000_000;

/// The search steps the search for the least repeat cost may take; past
/// them, the best pairing found so far is taken.
pub const SEARCH_LIMIT: u64 = 1_000_000;

/// Pairs a Swiss round: `input.standings` are the active players, best
/// first; `rounds_left` the rounds still to play after this one.
pub(super) fn pair_swiss(table_size: usize, input: &PairingInput, rounds_left: u32) -> Pairing {
    let players = &input.standings[..input.standings.len().min(super::set::CAPACITY)];
    let n = players.len();
    let index: HashMap<_, _> = players.iter().enumerate().map(|(i, name)| (name, i)).collect();

    let bye = (table_size == 2 && n % 2 == 1).then(|| {
        (0..n)
            .rev()
            .find(|&i| input.byes_of(&players[i]) == 0)
            .unwrap_or(n - 1)
    });
    // The look-ahead counts a bye as a meeting with a dummy player, so
    // that no one gets a second bye while someone has had none.
    let dummy = bye.map(|_| n);
    let mut meetings = Meetings::new(n + usize::from(dummy.is_some()));
    for ((a, b), &times) in &input.meetings {
        if let (Some(&a), Some(&b)) = (index.get(a), index.get(b)) {
            meetings.add(a, b, times);
        }
    }
    if let Some(dummy) = dummy {
        for (i, player) in players.iter().enumerate() {
            meetings.add(i, dummy, input.byes_of(player));
        }
    }

    let mut seated = Set::first_n(n);
    if let Some(bye) = bye {
        seated.remove(bye);
    }
    let tables = if seated.len() < 2 {
        Vec::new()
    } else {
        let round = Round {
            shape: Shape::new(seated.len(), table_size),
            seated,
            bye: bye.zip(dummy),
        };
        round.choose(&meetings, table_size, rounds_left)
    };
    Pairing {
        tables: tables
            .iter()
            .map(|table| table.iter().map(|&i| players[i].clone()).collect())
            .collect(),
        byes: bye.map(|i| players[i].clone()).into_iter().collect(),
    }
}

/// One round to pair.
struct Round {
    shape: Shape,
    seated: Set,
    /// (the bye's player, the dummy)
    bye: Option<(usize, usize)>,
}

impl Round {
    /// The round's tables: (a) in duels, the first repeat-free pairing
    /// after which the remaining rounds can be paired without repeats;
    /// else (b) the first pairing of the least repeat cost (repeat-free
    /// when possible).
    fn choose(&self, meetings: &Meetings, table_size: usize, rounds_left: u32) -> Vec<Vec<usize>> {
        if table_size == 2
            && rounds_left > 0
            && let Some(tables) = self.look_ahead(meetings, rounds_left)
        {
            return tables;
        }
        // Branch and bound: each pairing found lowers the bound below its
        // cost, so the last one found is the first of the least cost.
        let effort = Effort::new(SEARCH_LIMIT);
        let mut walker = self.walker(meetings, &effort, u32::MAX);
        walker.bound = walker.greedy_cost(self.seated);
        let mut best = Vec::new();
        walker.walk(
            self.seated,
            self.shape.big,
            0,
            &mut Vec::new(),
            &mut |tables, cost| {
                best = tables.to_vec();
                if cost == 0 { Next::Stop } else { Next::Cheaper }
            },
        );
        best
    }

    fn look_ahead(&self, meetings: &Meetings, rounds_left: u32) -> Option<Vec<Vec<usize>>> {
        let everyone = Set::first_n(meetings.players());
        let future = Shape::new(everyone.len(), 2);
        let effort = Effort::new(LOOKAHEAD_LIMIT);
        let mut look = LookAhead {
            effort: &effort,
            failed: HashSet::new(),
        };
        let mut chosen = None;
        self.walker(meetings, &effort, 0).walk(
            self.seated,
            self.shape.big,
            0,
            &mut Vec::new(),
            &mut |tables, _| match look.completable(
                future,
                &meetings.after(tables, self.bye),
                everyone,
                rounds_left,
            ) {
                Verdict::Yes => {
                    chosen = Some(tables.to_vec());
                    Next::Stop
                }
                Verdict::No => Next::Continue,
                Verdict::GaveUp => Next::Stop,
            },
        );
        chosen
    }

    fn walker<'a>(&self, meetings: &'a Meetings, effort: &'a Effort, bound: u32) -> Walker<'a> {
        Walker {
            shape: self.shape,
            meetings,
            effort,
            dead: DeadEnds::new(),
            bound,
        }
    }
}
