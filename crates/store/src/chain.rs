//! The hash chain: building the envelopes of an append, and checking stored
//! envelopes one after another. Shared by every backend so that they chain
//! and check exactly alike.

use crate::envelope;
use crate::error::{Result, StoreError};
use crate::event::{Hash, NewEvent, StoredEvent};
use crate::ids::{GameId, RequestId};

/// The most events one append may carry (one command's events).
pub const MAX_EVENTS_PER_APPEND: usize = 16;

/// The most bytes the envelopes of one append may take, envelopes, hashes
/// and payloads together. Events are small (tens of bytes, a game's
/// creation a few hundred). The bound keeps a full sled leaf (17 entries)
/// far below sled's blob threshold (a quarter of its 512 KiB segment):
/// sled writes larger pages to separate blob files that it never fsyncs.
pub const MAX_APPEND_BYTES: usize = 4096;

/// Where a game's chain stands: its last sequence number and hash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Head {
    pub last_seq: u64,
    pub last_hash: Hash,
}

impl Head {
    pub(crate) const EMPTY: Head = Head {
        last_seq: 0,
        last_hash: Hash::ZERO,
    };
}

/// Rejects an append the store will not take, before anything is locked.
pub(crate) fn check_batch(game: &GameId, request_id: &RequestId, events: &[NewEvent]) -> Result<()> {
    if events.is_empty() {
        return Err(StoreError::InvalidArgument(
            "an append needs at least one event".into(),
        ));
    }
    if events.len() > MAX_EVENTS_PER_APPEND {
        return Err(StoreError::InvalidArgument(format!(
            "{} events in one append, at most {MAX_EVENTS_PER_APPEND}",
            events.len()
        )));
    }
    let bytes: usize = events
        .iter()
        .map(|event| {
            envelope::encoded_len(
                game.as_str().len(),
                request_id.as_str().len(),
                event.payload.len(),
            )
        })
        .sum();
    if bytes > MAX_APPEND_BYTES {
        return Err(StoreError::InvalidArgument(format!(
            "the append's envelopes would take {bytes} bytes, at most {MAX_APPEND_BYTES}"
        )));
    }
    Ok(())
}

/// The events of one append, chained onto `head`, with their encoded
/// envelopes.
pub(crate) fn build(
    game: &GameId,
    request_id: &RequestId,
    head: Head,
    first_position: u64,
    time_millis: u64,
    events: &[NewEvent],
) -> Vec<(StoredEvent, Vec<u8>)> {
    let mut prev_hash = head.last_hash;
    let mut built = Vec::with_capacity(events.len());
    for (offset, new) in (0u64..).zip(events) {
        let mut event = StoredEvent {
            game: game.clone(),
            seq: head.last_seq + 1 + offset,
            position: first_position + offset,
            time_millis,
            actor: new.actor,
            request_id: request_id.clone(),
            schema: new.schema,
            payload: new.payload.clone(),
            prev_hash,
            hash: Hash::ZERO,
        };
        let (bytes, hash) = envelope::encode(&event);
        event.hash = hash;
        prev_hash = hash;
        built.push((event, bytes));
    }
    built
}

/// Checks a game's envelopes in sequence order: each decodes with a good
/// hash, belongs where its key put it, and links to the one before.
pub(crate) struct ChainCheck {
    game: String,
    next_seq: u64,
    /// The hash the next envelope must name as its previous one; `None` when
    /// the check starts mid-game and has not seen the previous envelope.
    prev_hash: Option<Hash>,
    last_position: u64,
}

impl ChainCheck {
    /// A check starting at `from_seq` (1 = the game's first event).
    pub(crate) fn new(game: &str, from_seq: u64) -> Self {
        let from_seq = from_seq.max(1);
        ChainCheck {
            game: game.to_owned(),
            next_seq: from_seq,
            prev_hash: (from_seq == 1).then_some(Hash::ZERO),
            last_position: 0,
        }
    }

    /// The sequence number the next envelope must have.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Checks the envelope stored under sequence number `key_seq` and
    /// returns its event.
    pub(crate) fn next(&mut self, key_seq: u64, bytes: &[u8]) -> Result<StoredEvent> {
        let corrupt = |seq, detail: String| StoreError::corrupt(&self.game, seq, detail);
        if key_seq != self.next_seq {
            return Err(corrupt(
                self.next_seq,
                format!("event missing: the next stored one is {key_seq}"),
            ));
        }
        let event = envelope::decode(bytes).map_err(|detail| corrupt(key_seq, detail))?;
        if event.game.as_str() != self.game || event.seq != key_seq {
            return Err(corrupt(
                key_seq,
                format!(
                    "envelope of game {:?} event {} stored in the wrong place",
                    event.game.as_str(),
                    event.seq
                ),
            ));
        }
        if self
            .prev_hash
            .is_some_and(|prev_hash| event.prev_hash != prev_hash)
        {
            return Err(corrupt(
                key_seq,
                "chain broken: its previous hash is not the previous event's hash".into(),
            ));
        }
        if event.position <= self.last_position {
            return Err(corrupt(
                key_seq,
                format!(
                    "global position {} not after the previous event's {}",
                    event.position, self.last_position
                ),
            ));
        }
        self.next_seq += 1;
        self.prev_hash = Some(event.hash);
        self.last_position = event.position;
        Ok(event)
    }
}
