use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::net::TcpStream;
use tokio_stream::StreamExt as _;

use super::Timeouts;
use super::accept::{ACCEPT_BACKOFF, Acceptor, Incoming, Throttled, connection_cap};

/// A listener whose every accept fails as at the open-file limit
/// (EMFILE), counting the attempts; after `fail` of them it waits forever
/// (so that a loop without a pause ends, to be counted).
struct OutOfFiles {
    attempts: usize,
    fail: usize,
}

impl Acceptor for OutOfFiles {
    fn poll_accept(&mut self, _: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        if self.attempts == self.fail {
            return Poll::Pending;
        }
        self.attempts += 1;
        Poll::Ready(Err(io::Error::from_raw_os_error(24)))
    }
}

const TIMEOUTS: Timeouts = Timeouts {
    first_request: Duration::from_secs(10),
    idle: Duration::from_secs(60),
};

#[tokio::test]
async fn out_of_descriptors_accepting_pauses_between_attempts_instead_of_spinning() {
    // Given a listener at the open-file limit
    let mut incoming = Incoming::new(
        OutOfFiles {
            attempts: 0,
            fail: 10_000,
        },
        16,
        TIMEOUTS,
    );
    // When the server accepts for half a second
    let half = Duration::from_millis(500);
    let accepted = tokio::time::timeout(half, incoming.next()).await;
    // Then it tried about once per pause, not thousands of times
    assert!(accepted.is_err(), "nothing was accepted");
    let most = (half.as_millis() / ACCEPT_BACKOFF.as_millis()) as usize + 2;
    let attempts = incoming_attempts(&incoming);
    assert!(
        (1..=most).contains(&attempts),
        "{attempts} attempts in a second, at most {most} expected"
    );
}

fn incoming_attempts(incoming: &Incoming<OutOfFiles>) -> usize {
    incoming.acceptor().attempts
}

#[test]
fn a_failure_that_repeats_is_reported_once_per_interval_with_its_count() {
    // Given a report at most every 10 s
    let mut reports = Throttled::new(Duration::from_secs(10));
    let start = tokio::time::Instant::now();
    // When 1,000 failures come in the first second
    let first: Vec<u64> = (0..1000u64)
        .filter_map(|ms| reports.note_at(start + Duration::from_millis(ms)))
        .collect();
    // Then only the first is reported
    assert_eq!(first, vec![1]);
    // And once 10 s have passed, the next one reports all those since
    let later = start + Duration::from_secs(10);
    assert_eq!(reports.note_at(later), Some(1000));
    assert_eq!(reports.note_at(later + Duration::from_secs(1)), None);
}

#[test]
fn the_connection_cap_stays_below_the_open_file_limit() {
    let check = |configured, open_files, reserved, expected| {
        assert_eq!(
            connection_cap(configured, open_files, reserved),
            expected,
            "{configured} configured, limit {open_files:?}, {reserved} reserved"
        );
    };
    // Room for all that is configured
    check(10_000, Some(1_048_576), 0, 10_000);
    // The limit leaves less: 256 descriptors kept for the rest
    check(10_000, Some(4096), 0, 3840);
    // And PostgreSQL's connections
    check(10_000, Some(4096), 100, 3740);
    // A tiny limit: half of it
    check(10_000, Some(300), 0, 150);
    // An unknown limit: as configured
    check(500, None, 0, 500);
}
