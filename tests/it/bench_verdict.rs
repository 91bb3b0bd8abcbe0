//! The benchmarks' verdict (`benches/support/verdict.rs`): never "met"
//! without a sample of the target's size.

#[path = "../../benches/support/verdict.rs"]
mod verdict;

use verdict::{P99_SAMPLE, Target, Verdict};

const REBUILD: Target = Target {
    size: Some((10_000, "games")),
    min_sample: 1,
};

#[test]
fn a_sample_of_the_target_size_is_met_or_missed() {
    assert_eq!(REBUILD.judge(10_000, 10_000, true), Verdict::Met);
    assert_eq!(REBUILD.judge(10_000, 10_000, false), Verdict::Missed);
    assert_eq!(REBUILD.judge(10_000, 10_000, true).to_string(), "met");
    assert_eq!(REBUILD.judge(10_000, 10_000, false).to_string(), "MISSED");
}

#[test]
fn another_size_is_not_judged() {
    let verdict = REBUILD.judge(500, 500, true);
    assert_eq!(
        verdict,
        Verdict::WrongSize {
            size: 500,
            target: 10_000,
            unit: "games"
        }
    );
    assert_eq!(
        verdict.to_string(),
        "not judged: 500 games, the target is for 10000"
    );
    assert!(!verdict.to_string().contains("met"));
}

#[test]
fn no_sample_or_too_few_is_not_judged() {
    let p99 = Target {
        size: Some((1_000, "watchers")),
        min_sample: P99_SAMPLE,
    };
    // An empty sample's p99 reads 0, which is under any target.
    assert_eq!(p99.judge(1_000, 0, true), Verdict::NoSample);
    assert_eq!(p99.judge(1_000, 0, true).to_string(), "not judged: no sample");
    assert_eq!(
        p99.judge(1_000, 99, true),
        Verdict::TooFew {
            sample: 99,
            needed: 100
        }
    );
    assert_eq!(p99.judge(1_000, 100, true), Verdict::Met);
    // The sample comes first: an empty run of the wrong size says so.
    assert_eq!(p99.judge(3, 0, true), Verdict::NoSample);
    let any_size = Target {
        size: None,
        min_sample: 1,
    };
    assert_eq!(any_size.judge(7, 1, true), Verdict::Met);
    assert_eq!(any_size.judge(7, 0, true), Verdict::NoSample);
}
