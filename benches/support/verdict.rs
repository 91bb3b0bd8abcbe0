//! Whether a benchmark met its target, said only on evidence: a figure
//! measured on no sample, on too few measurements for what it claims (a
//! p99 of 10 latencies is their maximum), or at another size than the
//! target is stated for, is "not judged", never "met".
//!
//! Plain std, so that the integration tests (`tests/it/bench_verdict.rs`)
//! include and test this file as it is.

use std::fmt;

/// What a target is stated for.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The size of the run the target is stated for (10,000 games, 1,000
    /// watchers, ...) and its unit; `None`: any size.
    pub size: Option<(u64, &'static str)>,
    /// The fewest measurements the figure needs.
    pub min_sample: usize,
}

/// The fewest measurements a 99th percentile needs to be more than the
/// sample's maximum.
pub const P99_SAMPLE: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Met,
    Missed,
    /// Nothing was measured.
    NoSample,
    /// Fewer measurements than the figure needs.
    TooFew {
        sample: usize,
        needed: usize,
    },
    /// Measured at another size than the target's.
    WrongSize {
        size: u64,
        target: u64,
        unit: &'static str,
    },
}

impl Target {
    /// The verdict on a run of `size` (in the target's unit) that took
    /// `sample` measurements and whose figure `met` the target or not.
    pub fn judge(&self, size: u64, sample: usize, met: bool) -> Verdict {
        if sample == 0 {
            return Verdict::NoSample;
        }
        if sample < self.min_sample {
            return Verdict::TooFew {
                sample,
                needed: self.min_sample,
            };
        }
        if let Some((target, unit)) = self.size
            && size != target
        {
            return Verdict::WrongSize { size, target, unit };
        }
        if met { Verdict::Met } else { Verdict::Missed }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Met => f.write_str("met"),
            Verdict::Missed => f.write_str("MISSED"),
            Verdict::NoSample => f.write_str("not judged: no sample"),
            Verdict::TooFew { sample, needed } => {
                write!(f, "not judged: {sample} measurements, {needed} needed")
            }
            Verdict::WrongSize { size, target, unit } => {
                write!(f, "not judged: {size} {unit}, the target is for {target}")
            }
        }
    }
}
