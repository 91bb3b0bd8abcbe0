//! Round robin schedules of `pairing/1`: which lot indices sit together
//! in each round, fixed at the tournament's creation.

use crate::tournament::spec::MAX_ROUND_ROBIN_TABLES;

/// Rounds, each a list of tables, each a list of lot indices in seat
/// order. With tables of 2 a table of one player is that player's bye.
pub(crate) type Schedule = Vec<Vec<Vec<usize>>>;

pub(crate) fn schedule(players: usize, table_size: usize) -> Schedule {
    if table_size == 2 {
        circle(players)
    } else {
        every_table_once(players, table_size)
    }
}

/// The circle method (Berger tables): with m = n rounded up to even, the
/// last index m-1 stays fixed while the others turn. In round q (0-based)
/// ring slot i holds index (q + i) mod (m-1); slot 0 meets the fixed
/// index, slot i meets slot m-1-i. With n odd the fixed index is no
/// player: meeting it is the bye.
fn circle(n: usize) -> Schedule {
    if n < 2 {
        return Vec::new();
    }
    let m = n + n % 2;
    let fixed = m - 1;
    let ring = |q: usize, slot: usize| (q + slot) % (m - 1);
    (0..m - 1)
        .map(|q| {
            let mut tables = Vec::with_capacity(m / 2);
            // Seat order alternates by round, so first seats are shared.
            let first_table = match (fixed == n, q % 2 == 1) {
                (true, _) => vec![ring(q, 0)],
                (false, true) => vec![fixed, ring(q, 0)],
                (false, false) => vec![ring(q, 0), fixed],
            };
            tables.push(first_table);
            for slot in 1..m / 2 {
                let (a, b) = (ring(q, slot), ring(q, m - 1 - slot));
                tables.push(if q % 2 == 0 { vec![a, b] } else { vec![b, a] });
            }
            tables
        })
        .collect()
}

/// Every k-subset of the n lot indices once. The subsets are listed in
/// lexicographic order; each round takes, scanning that list, every
/// subset not yet played that shares no player with those already taken
/// this round.
fn every_table_once(n: usize, k: usize) -> Schedule {
    let count = (0..k as u64).fold(1u64, |acc, i| {
        acc.saturating_mul((n as u64).saturating_sub(i)) / (i + 1)
    });
    if n < k || count > MAX_ROUND_ROBIN_TABLES {
        return Vec::new();
    }
    let mut unplayed = subsets(n, k);
    let mut rounds = Vec::new();
    while !unplayed.is_empty() {
        let mut busy = vec![false; n];
        let mut round = Vec::new();
        unplayed.retain(|table| {
            if table.iter().any(|&p| busy[p]) {
                return true;
            }
            for &p in table {
                busy[p] = true;
            }
            round.push(table.clone());
            false
        });
        rounds.push(round);
    }
    rounds
}

/// The k-subsets of 0..n in lexicographic order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut all = Vec::new();
    let mut current: Vec<usize> = (0..k).collect();
    loop {
        all.push(current.clone());
        // The rightmost index that can still move right.
        let Some(i) = (0..k).rev().find(|&i| current[i] < n - k + i) else {
            return all;
        };
        current[i] += 1;
        for j in i + 1..k {
            current[j] = current[j - 1] + 1;
        }
    }
}
