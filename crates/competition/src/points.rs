//! Exact tournament points, and the points of one table's game.

use std::fmt;
use std::iter::Sum;
use std::ops::Add;

use serde::{Deserialize, Serialize};

/// Tournament points in sixtieths of a point.
///
/// 60 is the least common multiple of 1 to 5, so points shared equally by
/// up to five tied players stay exact. Serialised as the integer of
/// sixtieths; displayed as a decimal with at most two decimals ("2", "1.5",
/// "0.33"). Sums saturate instead of overflowing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Points(pub u32);

impl Points {
    /// Sixtieths per point.
    pub const UNIT: u32 = 60;
    pub const ZERO: Points = Points(0);

    pub const fn whole(points: u32) -> Points {
        Points(points.saturating_mul(Self::UNIT))
    }

    pub const fn sixtieths(self) -> u32 {
        self.0
    }
}

impl Add for Points {
    type Output = Points;

    fn add(self, other: Points) -> Points {
        Points(self.0.saturating_add(other.0))
    }
}

impl Sum for Points {
    fn sum<I: Iterator<Item = Points>>(iter: I) -> Points {
        iter.fold(Points::ZERO, Add::add)
    }
}

impl fmt::Display for Points {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Hundredths, rounded half up; a non-whole value never rounds to a
        // whole one (1/60 is 1.67 hundredths).
        let hundredths = (u64::from(self.0) * 100 + u64::from(Self::UNIT) / 2) / u64::from(Self::UNIT);
        let (whole, cents) = (hundredths / 100, hundredths % 100);
        if self.0.is_multiple_of(Self::UNIT) {
            write!(f, "{}", self.0 / Self::UNIT)
        } else if cents % 10 == 0 {
            write!(f, "{whole}.{}", cents / 10)
        } else {
            write!(f, "{whole}.{cents:02}")
        }
    }
}

/// Each seat's points for one game at a table, from the game's ranks.
///
/// `points_by_place` are the tournament's table points (whole points by
/// place, best first); a table of m seats uses the first m of them (a
/// missing entry counts 0). A seat's place is 1 + the number of seats with
/// a better (smaller) rank; the seats tied at a rank occupy as many places
/// from there and share those places' points equally.
pub fn table_points(points_by_place: &[u32], ranks: &[u8]) -> Vec<Points> {
    ranks
        .iter()
        .map(|&rank| {
            let better = ranks.iter().filter(|&&r| r < rank).count();
            let tied = ranks.iter().filter(|&&r| r == rank).count();
            let shared: u32 = (better..better + tied)
                .map(|place| points_by_place.get(place).copied().unwrap_or(0))
                .fold(0, u32::saturating_add);
            // tied <= 5 divides 60 for every valid table; larger tables
            // (never paired) round down rather than fail.
            Points(shared.saturating_mul(Points::UNIT) / tied as u32)
        })
        .collect()
}
