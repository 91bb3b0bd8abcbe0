//! The depth-first search over one round's pairings that the Swiss of
//! `pairing/1` runs, and the look-ahead built on it.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use super::set::Set;
use crate::codec::sha256;

/// The tables of a round: `big` tables of `small + 1` players, the rest
/// of `small`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub small: usize,
    pub big: usize,
    pub tables: usize,
}

impl Shape {
    pub fn new(players: usize, table_size: usize) -> Shape {
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
pub(super) struct Meetings {
    sets: Vec<Set>,
    counts: Vec<u32>,
}

impl Meetings {
    pub fn new(players: usize) -> Meetings {
        Meetings {
            sets: vec![Set::default(); players],
            counts: vec![0; players * players],
        }
    }

    pub fn players(&self) -> usize {
        self.sets.len()
    }

    pub fn add(&mut self, a: usize, b: usize, times: u32) {
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

    /// The meetings once `tables` (and a bye, as a meeting with the
    /// dummy) are played, without counts.
    pub fn after(&self, tables: &[Vec<usize>], bye: Option<(usize, usize)>) -> Meetings {
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

    fn digest(&self) -> [u8; 32] {
        let bytes: Vec<u8> = self.sets.iter().flat_map(|set| set.to_bytes()).collect();
        sha256(&[&bytes])
    }
}

/// A budget of search steps (calls of `walk` and `fill`), shared by all
/// the searches that spend it.
pub(super) struct Effort {
    used: Cell<u64>,
    limit: u64,
}

impl Effort {
    pub fn new(limit: u64) -> Effort {
        Effort {
            used: Cell::new(0),
            limit,
        }
    }

    /// Spends a step; false once the budget is spent.
    fn spend(&self) -> bool {
        self.used.set(self.used.get() + 1);
        self.used.get() <= self.limit
    }
}

/// What a subtree of the search held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Walk {
    /// The visitor accepted a pairing: stop everything.
    Stop,
    /// Pairings were found, and the visitor went on.
    Alive,
    /// No pairing within the bound.
    Dead,
    /// The effort ran out first.
    Exhausted,
}

/// What the visitor of a complete pairing says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    Stop,
    /// Go on with the same bound.
    Continue,
    /// Go on, looking only for pairings cheaper than this one.
    Cheaper,
}

/// Sees each complete pairing found and its repeat cost.
pub(super) type Visit<'v> = dyn FnMut(&[Vec<usize>], u32) -> Next + 'v;

/// (players left, big tables left) -> the largest cost known to admit no
/// pairing of them: a failed rest fails whatever came before it.
pub(super) type DeadEnds = HashMap<(Set, usize), u32>;

/// The search over a round's pairings, in candidate order: each table is
/// opened by the best-ranked player left, a larger size first, then its
/// other players in lexicographic order of standings positions. Only
/// pairings costing at most `bound` are offered.
pub(super) struct Walker<'a> {
    pub shape: Shape,
    pub meetings: &'a Meetings,
    pub effort: &'a Effort,
    pub dead: DeadEnds,
    pub bound: u32,
}

impl Walker<'_> {
    /// Offers the pairings of `left` (after tables costing `spent`) to
    /// `visit` in candidate order, until it stops.
    pub fn walk(
        &mut self,
        left: Set,
        big: usize,
        spent: u32,
        tables: &mut Vec<Vec<usize>>,
        visit: &mut Visit,
    ) -> Walk {
        if !self.effort.spend() {
            return Walk::Exhausted;
        }
        let Some(top) = left.first() else {
            return match visit(tables, spent) {
                Next::Stop => Walk::Stop,
                Next::Continue => Walk::Alive,
                Next::Cheaper => {
                    self.bound = spent.saturating_sub(1);
                    Walk::Alive
                }
            };
        };
        let Some(allowed) = self.bound.checked_sub(spent) else {
            return Walk::Dead;
        };
        if self
            .dead
            .get(&(left, big))
            .is_some_and(|&failed| allowed <= failed)
        {
            return Walk::Dead;
        }
        let small = self.shape.small.max(1);
        let small_tables = left.len().saturating_sub(big * (small + 1)) / small;
        let smallest = if small_tables > 0 { small } else { small + 1 };
        if allowed == 0 && !self.everyone_can_sit(left, smallest) {
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
            let seat = Seat {
                rest: &rest,
                size,
                big_after,
                left,
            };
            match self.fill(&seat, 0, spent, &mut vec![top], tables, visit) {
                Walk::Dead => {}
                Walk::Alive => alive = true,
                end => return end,
            }
            if self.bound < spent {
                break; // a cheaper pairing was found: nothing here can beat it
            }
        }
        if alive {
            return Walk::Alive;
        }
        // Nothing found below: the bound did not move.
        let failed = self.dead.entry((left, big)).or_insert(allowed);
        *failed = (*failed).max(allowed);
        Walk::Dead
    }

    /// Completes `table` from `seat.rest[from..]`, then walks on.
    fn fill(
        &mut self,
        seat: &Seat,
        from: usize,
        spent: u32,
        table: &mut Vec<usize>,
        tables: &mut Vec<Vec<usize>>,
        visit: &mut Visit,
    ) -> Walk {
        if !self.effort.spend() {
            return Walk::Exhausted;
        }
        if table.len() == seat.size {
            let mut left = seat.left;
            for &player in table.iter() {
                left.remove(player);
            }
            tables.push(table.clone());
            let walk = self.walk(left, seat.big_after, spent, tables, visit);
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
            if spent.saturating_add(added) > self.bound {
                continue;
            }
            table.push(candidate);
            let walk = self.fill(seat, i + 1, spent + added, table, tables, visit);
            table.pop();
            match walk {
                Walk::Dead => {}
                Walk::Alive => alive = true,
                end => return end,
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
    pub fn greedy_cost(&self, seated: Set) -> u32 {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Yes,
    No,
    GaveUp,
}

/// Whether later rounds of duels can all be paired without a repeat.
pub(super) struct LookAhead<'e> {
    pub effort: &'e Effort,
    /// Meeting graphs (by digest) and round counts known to fail.
    pub failed: HashSet<([u8; 32], u32)>,
}

impl LookAhead<'_> {
    /// Whether `rounds` more rounds of `everyone` in tables of `shape`
    /// can be paired with no repeat after `meetings`.
    pub fn completable(&mut self, shape: Shape, meetings: &Meetings, everyone: Set, rounds: u32) -> Verdict {
        if rounds == 0 || Self::bound_guarantees(shape, meetings, everyone, rounds) {
            return Verdict::Yes;
        }
        let digest = meetings.digest();
        if self.failed.contains(&(digest, rounds)) {
            return Verdict::No;
        }
        let mut verdict = Verdict::No;
        let effort = self.effort;
        let mut walker = Walker {
            shape,
            meetings,
            effort,
            dead: DeadEnds::new(),
            bound: 0,
        };
        let walk = walker.walk(everyone, shape.big, 0, &mut Vec::new(), &mut |tables, _| {
            verdict = self.completable(shape, &meetings.after(tables, None), everyone, rounds - 1);
            if verdict == Verdict::No {
                Next::Continue
            } else {
                Next::Stop
            }
        });
        if walk == Walk::Exhausted {
            verdict = Verdict::GaveUp;
        }
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
