//! Envelopes written by format 1 keep decoding, forever.
//!
//! `tests/fixtures/envelopes-v1.bin` holds envelopes as the format-1 encoder
//! wrote them, each framed by its length (u32 LE): a chain of four events
//! of one game and the first event of another. The test decodes them and
//! checks every field and every chain link. While format 1 is the current
//! format it also checks that the encoder still writes exactly these bytes;
//! when a format 2 comes, that half goes and the decoding half stays.
//!
//! To write the file (only ever once, for a new format's fixture):
//! `CARCASSONNE_WRITE_FIXTURES=1 cargo test -p carcassonne-store --test it fixtures`.

use std::path::PathBuf;

use carcassonne_store::envelope::{self, CURRENT_FORMAT};
use carcassonne_store::*;

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/envelopes-v1.bin")
}

/// The events the fixture holds, hashes left zero.
fn expected_events() -> Vec<StoredEvent> {
    let game = GameId::new("0b6f4a1e-9c7d-4e7b-8a51-3f2d7c9e1a22").unwrap();
    let other = GameId::new("fixture-other").unwrap();
    let event = |game: &GameId, seq, position, time_millis, actor, request: &str, schema, payload: &[u8]| {
        StoredEvent {
            game: game.clone(),
            seq,
            position,
            time_millis,
            actor,
            request_id: RequestId::new(request).unwrap(),
            schema,
            payload: payload.to_vec(),
            prev_hash: Hash::ZERO,
            hash: Hash::ZERO,
        }
    };
    vec![
        event(
            &game,
            1,
            1,
            1_700_000_000_000,
            Actor::Server,
            "create-1",
            1,
            b"\x01created: 2 players",
        ),
        event(
            &game,
            2,
            2,
            1_700_000_000_000,
            Actor::Server,
            "create-1",
            1,
            b"\x02draw D",
        ),
        event(&other, 1, 3, 1_700_000_000_500, Actor::Seat(0), "", 1, b""),
        event(
            &game,
            3,
            4,
            1_700_000_001_234,
            Actor::Seat(1),
            "move-0007",
            1,
            &[3, 0, 255, 128, 7],
        ),
        event(
            &game,
            4,
            5,
            1_700_000_002_000,
            Actor::Seat(255),
            "x".repeat(128).as_str(),
            65535,
            &[0xAB; 300],
        ),
    ]
}

/// Encodes the expected events with chained hashes, as format 1 does.
fn encode_all() -> Vec<Vec<u8>> {
    let mut last_hash = std::collections::HashMap::new();
    expected_events()
        .into_iter()
        .map(|mut event| {
            event.prev_hash = *last_hash.get(&event.game).unwrap_or(&Hash::ZERO);
            let (bytes, hash) = envelope::encode(&event);
            last_hash.insert(event.game.clone(), hash);
            bytes
        })
        .collect()
}

fn read_fixture() -> Vec<Vec<u8>> {
    let bytes = std::fs::read(fixture_path()).expect("the fixture file: see the module docs");
    let mut envelopes = Vec::new();
    let mut rest = bytes.as_slice();
    while let Some((len, tail)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        envelopes.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    envelopes
}

#[test]
fn format_1_records_decode_forever() {
    if std::env::var_os("CARCASSONNE_WRITE_FIXTURES").is_some() && !fixture_path().exists() {
        let mut file = Vec::new();
        for envelope in encode_all() {
            file.extend_from_slice(&(envelope.len() as u32).to_le_bytes());
            file.extend_from_slice(&envelope);
        }
        std::fs::write(fixture_path(), file).unwrap();
    }
    let envelopes = read_fixture();
    let expected = expected_events();
    assert_eq!(envelopes.len(), expected.len());
    let mut last_hash = std::collections::HashMap::new();
    for (bytes, wanted) in envelopes.iter().zip(&expected) {
        assert_eq!(bytes[0], 1, "format version byte");
        let event = envelope::decode(bytes).unwrap();
        let prev_hash = *last_hash.get(&event.game).unwrap_or(&Hash::ZERO);
        assert_eq!(
            event.prev_hash, prev_hash,
            "chain link of {} {}",
            event.game, event.seq
        );
        assert_eq!(
            StoredEvent {
                prev_hash: Hash::ZERO,
                hash: Hash::ZERO,
                ..event.clone()
            },
            *wanted
        );
        last_hash.insert(event.game.clone(), event.hash);
    }
    // The hash of the game's fourth event, written down: the hash input is the
    // stored bytes and must never change meaning.
    assert_eq!(
        envelope::decode(&envelopes[4]).unwrap().hash.to_string(),
        FOURTH_EVENT_HASH
    );
    if CURRENT_FORMAT == 1 {
        assert_eq!(encode_all(), envelopes, "the format-1 encoder changed its bytes");
    }
}

const FOURTH_EVENT_HASH: &str = "64bec3fdd64b44bdd7d3f51e38154198937ce39676d0fea0ccd2731b316e5e4e";
