//! The Swiss pairing of `pairing/1`: the rules are in the crate docs
//! (`Swiss`); this file follows them step by step.

use std::collections::{HashMap, HashSet};

use super::set::Set;
use super::{Pairing, PairingInput};
use crate::codec::sha256;

/// How many complete round pairings one round's look-ahead may examine
/// (this round's candidates and the future rounds tried behind them)
/// before it gives up.
pub const LOOKAHEAD_LIMIT: u32 = 10_000;

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
    // The look-ahead gives byes as meetings with a dummy player, so that
    // no one is given a second bye while someone has had none.
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
            bye,
            dummy,
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

/// The tables of a round: `big` tables of `small + 1` players, the rest
/// of `small`.
#[derive(Debug, Clone, Copy)]
struct Shape {
    small: usize,
    big: usize,
    tables: usize,
}

impl Shape {
    fn new(players: usize, table_size: usize) -> Shape {
        let tables = players.div_ceil(table_size).max(1);
        Shape {
            small: players / tables,
            big: players % tables,
            tables,
        }
    }

    fn largest(&self) -> usize {
        self.small + usize::from(self.big > 0)
    }
}

/// Who met whom: a set per player, and how often (the counts are left
/// empty in the look-ahead, where only "ever met" matters).
#[derive(Debug, Clone)]
struct Meetings {
    sets: Vec<Set>,
    counts: Vec<u32>,
}

impl Meetings {
    fn new(players: usize) -> Meetings {
        Meetings {
            sets: vec![Set::default(); players],
            counts: vec![0; players * players],
        }
    }

    fn add(&mut self, a: usize, b: usize, times: u32) {
        if a == b || times == 0 {
            return;
        }
        self.sets[a].insert(b);
        self.sets[b].insert(a);
        let players = self.sets.len();
        if !self.counts.is_empty() {
            for (x, y) in [(a, b), (b, a)] {
                self.counts[x * players + y] = self.counts[x * players + y].saturating_add(times);
            }
        }
    }

    fn count(&self, a: usize, b: usize) -> u32 {
        match self.counts.get(a * self.sets.len() + b) {
            Some(&times) => times,
            None => u32::from(self.sets[a].contains(b)),
        }
    }

    /// The meetings after `tables` are played, without counts.
    fn after(&self, tables: &[Vec<usize>], bye: Option<(usize, usize)>) -> Meetings {
        let mut next = Meetings {
            sets: self.sets.clone(),
            counts: Vec::new(),
        };
        for table in tables {
            for (i, &a) in table.iter().enumerate() {
                for &b in &table[i + 1..] {
                    next.add(a, b, 1);
                }
            }
        }
        if let Some((player, dummy)) = bye {
            next.add(player, dummy, 1);
        }
        next
    }
}

/// One round to pair.
struct Round {
    shape: Shape,
    seated: Set,
    bye: Option<usize>,
    dummy: Option<usize>,
}

impl Round {
    /// The round's tables: (a) the first repeat-free pairing the remaining
    /// rounds can follow without repeats, else (b) the first repeat-free
    /// one, else (c) the first of the least repeat cost.
    fn choose(&self, meetings: &Meetings, table_size: usize, rounds_left: u32) -> Vec<Vec<usize>> {
        if rounds_left > 0 {
            let everyone = Set::first_n(meetings.sets.len());
            let future = Shape::new(everyone.len(), table_size);
            let bye = self.bye.zip(self.dummy);
            let mut look = LookAhead {
                examined: 0,
                failed: HashSet::new(),
            };
            let mut chosen = None;
            Walker::new(self.shape, meetings).walk(
                self.seated,
                self.shape.big,
                0,
                &mut Vec::new(),
                &mut |tables| {
                    match look.count_and(|look| {
                        look.completable(future, &meetings.after(tables, bye), everyone, rounds_left)
                    }) {
                        Verdict::Yes => chosen = Some(tables.to_vec()),
                        Verdict::No => return false,
                        Verdict::GaveUp => {}
                    }
                    true
                },
            );
            if let Some(tables) = chosen {
                return tables;
            }
        }
        let mut walker = Walker::new(self.shape, meetings);
        let most = walker.greedy_cost(self.seated);
        for budget in 0..=most {
            let mut found = None;
            walker.walk(
                self.seated,
                self.shape.big,
                budget,
                &mut Vec::new(),
                &mut |tables| {
                    found = Some(tables.to_vec());
                    true
                },
            );
            if let Some(tables) = found {
                return tables;
            }
        }
        Vec::new() // unreachable: the greedy pairing costs `most`
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Yes,
    No,
    GaveUp,
}

/// The exact check that later rounds can be paired without repeats.
struct LookAhead {
    examined: u32,
    /// Meeting graphs (by digest) and round counts known to fail.
    failed: HashSet<([u8; 32], u32)>,
}

impl LookAhead {
    /// Counts one examined pairing, then runs `check` unless over the limit.
    fn count_and(&mut self, check: impl FnOnce(&mut LookAhead) -> Verdict) -> Verdict {
        self.examined += 1;
        match self.examined > LOOKAHEAD_LIMIT {
            true => Verdict::GaveUp,
            false => check(self),
        }
    }

    /// Whether `rounds` more rounds of `everyone` in tables of `shape`
    /// can be paired with no repeat after `meetings`.
    fn completable(&mut self, shape: Shape, meetings: &Meetings, everyone: Set, rounds: u32) -> Verdict {
        if rounds == 0 || Self::bound_guarantees(shape, meetings, everyone, rounds) {
            return Verdict::Yes;
        }
        let digest = digest(meetings);
        if self.failed.contains(&(digest, rounds)) {
            return Verdict::No;
        }
        let mut verdict = Verdict::No;
        Walker::new(shape, meetings).walk(everyone, shape.big, 0, &mut Vec::new(), &mut |tables| {
            verdict = self.count_and(|look| {
                look.completable(shape, &meetings.after(tables, None), everyone, rounds - 1)
            });
            verdict != Verdict::No
        });
        if verdict == Verdict::No {
            self.failed.insert((digest, rounds));
        }
        verdict
    }

    /// Hajnal–Szemerédi: players whose meeting graph has maximum degree
    /// below t can always be split into t tables of sizes differing by at
    /// most one with no two players who met at a table. A round raises a
    /// degree by at most the largest table size minus one.
    fn bound_guarantees(shape: Shape, meetings: &Meetings, everyone: Set, rounds: u32) -> bool {
        let degree = everyone
            .iter()
            .map(|p| meetings.sets[p].and(&everyone).len())
            .max()
            .unwrap_or(0);
        let growth = (rounds as usize - 1).saturating_mul(shape.largest().saturating_sub(1));
        degree.saturating_add(growth) < shape.tables
    }
}

fn digest(meetings: &Meetings) -> [u8; 32] {
    let bytes: Vec<u8> = meetings.sets.iter().flat_map(|set| set.to_bytes()).collect();
    sha256(&[&bytes])
}

/// What a subtree of the search held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// The visitor accepted a pairing: stop everything.
    Stop,
    /// Pairings were found, and the visitor declined them all.
    Alive,
    /// No pairing within the budget.
    Dead,
}

/// The depth-first search over a round's pairings, in candidate order:
/// each table opened by the best-ranked player left, larger size first,
/// then its other players in lexicographic order of standings positions.
struct Walker<'a> {
    shape: Shape,
    meetings: &'a Meetings,
    /// (players left, big tables left) -> the largest budget known to
    /// admit no pairing of them: a failed rest fails whatever came before.
    dead: HashMap<(Set, usize), u32>,
}

type Visit<'v> = dyn FnMut(&[Vec<usize>]) -> bool + 'v;

impl<'a> Walker<'a> {
    fn new(shape: Shape, meetings: &'a Meetings) -> Walker<'a> {
        Walker {
            shape,
            meetings,
            dead: HashMap::new(),
        }
    }

    /// Offers every pairing of `left` costing at most `budget` to `visit`
    /// in candidate order, until it returns true.
    fn walk(
        &mut self,
        left: Set,
        big: usize,
        budget: u32,
        tables: &mut Vec<Vec<usize>>,
        visit: &mut Visit,
    ) -> Walk {
        let Some(top) = left.first() else {
            return if visit(tables) { Walk::Stop } else { Walk::Alive };
        };
        if self
            .dead
            .get(&(left, big))
            .is_some_and(|&failed| budget <= failed)
        {
            return Walk::Dead;
        }
        let small = self.shape.small.max(1);
        let small_tables = left.len().saturating_sub(big * (small + 1)) / small;
        let smallest = if small_tables > 0 { small } else { small + 1 };
        if budget == 0 && !self.everyone_can_sit(left, smallest) {
            self.dead.insert((left, big), 0);
            return Walk::Dead;
        }
        let mut rest = left;
        rest.remove(top);
        let rest: Vec<usize> = rest.iter().collect();
        let sizes = [
            (big > 0).then(|| (small + 1, big - 1)),
            (small_tables > 0).then_some((small, big)),
        ];
        let mut alive = false;
        for (size, big_after) in sizes.into_iter().flatten() {
            let mut table = vec![top];
            let seat = Seat {
                rest: &rest,
                size,
                big_after,
                left,
            };
            match self.fill(&seat, 0, 0, budget, &mut table, tables, visit) {
                Walk::Stop => return Walk::Stop,
                Walk::Alive => alive = true,
                Walk::Dead => {}
            }
        }
        if alive {
            return Walk::Alive;
        }
        let failed = self.dead.entry((left, big)).or_insert(budget);
        *failed = (*failed).max(budget);
        Walk::Dead
    }

    /// Completes `table` from `seat.rest[from..]`, then walks on.
    #[allow(clippy::too_many_arguments)]
    fn fill(
        &mut self,
        seat: &Seat,
        from: usize,
        cost: u32,
        budget: u32,
        table: &mut Vec<usize>,
        tables: &mut Vec<Vec<usize>>,
        visit: &mut Visit,
    ) -> Walk {
        if table.len() == seat.size {
            let mut left = seat.left;
            for &player in table.iter() {
                left.remove(player);
            }
            tables.push(table.clone());
            let walk = self.walk(left, seat.big_after, budget - cost, tables, visit);
            tables.pop();
            return walk;
        }
        let needed = seat.size - table.len();
        let mut alive = false;
        for (i, &candidate) in seat.rest.iter().enumerate().skip(from) {
            if seat.rest.len() - i < needed {
                break;
            }
            let added = table
                .iter()
                .map(|&player| self.meetings.count(player, candidate))
                .fold(0u32, u32::saturating_add);
            if cost.saturating_add(added) > budget {
                continue;
            }
            table.push(candidate);
            let walk = self.fill(seat, i + 1, cost + added, budget, table, tables, visit);
            table.pop();
            match walk {
                Walk::Stop => return Walk::Stop,
                Walk::Alive => alive = true,
                Walk::Dead => {}
            }
        }
        if alive { Walk::Alive } else { Walk::Dead }
    }

    /// A quick necessary condition for a repeat-free pairing: everyone
    /// left has enough players left they have not met.
    fn everyone_can_sit(&self, left: Set, smallest_table: usize) -> bool {
        left.iter()
            .all(|p| left.and_not(&self.meetings.sets[p]).len() >= smallest_table)
    }

    /// The repeat cost of the first pairing in candidate order, costs
    /// ignored: players seated in standings order, larger tables first.
    fn greedy_cost(&self, seated: Set) -> u32 {
        let order: Vec<usize> = seated.iter().collect();
        let mut cost = 0u32;
        let mut start = 0;
        for table in 0..self.shape.tables {
            let size = self.shape.small + usize::from(table < self.shape.big);
            let members = &order[start.min(order.len())..(start + size).min(order.len())];
            for (i, &a) in members.iter().enumerate() {
                for &b in &members[i + 1..] {
                    cost = cost.saturating_add(self.meetings.count(a, b));
                }
            }
            start += size;
        }
        cost
    }
}

/// The table being filled: who may still join, its size, and what is
/// left once it is full.
struct Seat<'s> {
    rest: &'s [usize],
    size: usize,
    big_after: usize,
    left: Set,
}
