//! The stored envelope: the bytes of one event on disk, self-checking.
//!
//! # Format 1 (current)
//!
//! All integers little-endian.
//!
//! | bytes | field |
//! | --- | --- |
//! | 1 | envelope format version, `1` |
//! | 32 | hash of the game's previous event (zeros for the first) |
//! | 1 + n | game id: length n (1..=64), then the bytes |
//! | 8 | sequence number in the game |
//! | 8 | global position |
//! | 8 | time, Unix milliseconds |
//! | 2 | actor: kind (0 server, 1 seat), then the seat (0 for the server) |
//! | 1 + m | request id: length m (0..=128), then the bytes |
//! | 2 | payload schema version |
//! | 4 + p | payload: length p, then the bytes |
//! | 32 | hash: SHA-256 of every byte above |
//!
//! The hash covers the previous hash and the whole header, so it both
//! links the chain and checks the envelope: one flipped byte anywhere fails
//! it. It is computed over the bytes *as stored*, never over a re-encoding,
//! so an envelope keeps verifying after the code moves to a newer format.
//!
//! # Evolving the format
//!
//! Envelopes are never rewritten: rewriting would change their hashes and
//! break every chain after them. A new format gets the next version byte,
//! is written for new events only, and a game may hold envelopes of several
//! formats. [`decode`] dispatches on the version byte and upgrades on read:
//! `decode_v1` stays forever and fills the fields a later format adds with
//! their defaults (a new envelope field would say what its default means
//! for old events), returning the current [`StoredEvent`]. The chain needs
//! nothing: each envelope's hash is over its own bytes, whatever their format.
//! `tests/fixtures/envelopes-v1.bin` holds envelopes written by format 1 and a
//! test decodes them on every run.

use sha2::{Digest, Sha256};

use crate::event::{Actor, Hash, StoredEvent};
use crate::ids::{GameId, RequestId};

/// The format [`encode`] writes.
pub const CURRENT_FORMAT: u8 = 1;

const HASH_LEN: usize = 32;

/// The bytes of an envelope beside its ids and payload.
const FIXED_LEN: usize = 1 + HASH_LEN + 1 + 8 + 8 + 8 + 2 + 1 + 2 + 4 + HASH_LEN;

/// Where an envelope of the current format holds its previous event's
/// hash (32 bytes): the PostgreSQL store chains envelopes in the database,
/// patching this and [`position_at`] into envelopes encoded here.
pub(crate) const PREV_HASH_AT: usize = 1;

/// Where an envelope of the current format, of a game whose id is
/// `game_len` bytes long, holds its global position (8 bytes, little-endian).
pub(crate) fn position_at(game_len: usize) -> usize {
    1 + HASH_LEN + 1 + game_len + 8
}

/// The length of the envelope of an event with these id and payload lengths.
pub fn encoded_len(game_len: usize, request_len: usize, payload_len: usize) -> usize {
    FIXED_LEN + game_len + request_len + payload_len
}

/// Encodes an event in the current format, computing its hash. The `hash`
/// field of `event` is ignored; the returned one is the real one.
pub fn encode(event: &StoredEvent) -> (Vec<u8>, Hash) {
    let game = event.game.as_str().as_bytes();
    let request = event.request_id.as_str().as_bytes();
    let mut bytes = Vec::with_capacity(encoded_len(game.len(), request.len(), event.payload.len()));
    bytes.push(CURRENT_FORMAT);
    bytes.extend_from_slice(&event.prev_hash.0);
    // Lengths fit: ids are validated (≤ 64 and ≤ 128 bytes) and appends
    // checked against MAX_APPEND_BYTES before anything is encoded.
    bytes.push(game.len() as u8);
    bytes.extend_from_slice(game);
    bytes.extend_from_slice(&event.seq.to_le_bytes());
    bytes.extend_from_slice(&event.position.to_le_bytes());
    bytes.extend_from_slice(&event.time_millis.to_le_bytes());
    match event.actor {
        Actor::Server => bytes.extend_from_slice(&[0, 0]),
        Actor::Seat(seat) => bytes.extend_from_slice(&[1, seat]),
    }
    bytes.push(request.len() as u8);
    bytes.extend_from_slice(request);
    bytes.extend_from_slice(&event.schema.to_le_bytes());
    bytes.extend_from_slice(&(event.payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&event.payload);
    let hash = Hash(Sha256::digest(&bytes).into());
    bytes.extend_from_slice(&hash.0);
    (bytes, hash)
}

/// Decodes an envelope of any known format, checking its hash. The error is a
/// description for a `Corrupt` error; the caller knows which game and
/// sequence number it was reading.
pub fn decode(bytes: &[u8]) -> Result<StoredEvent, String> {
    match bytes.first() {
        None => Err("empty envelope".into()),
        Some(1) => decode_v1(bytes),
        Some(other) => Err(format!("unknown envelope format {other}")),
    }
}

fn decode_v1(bytes: &[u8]) -> Result<StoredEvent, String> {
    let Some(body_len) = bytes.len().checked_sub(HASH_LEN) else {
        return Err(format!("envelope of {} bytes is too short", bytes.len()));
    };
    let (body, stored_hash) = bytes.split_at(body_len);
    let hash = Hash(Sha256::digest(body).into());
    if hash.0 != stored_hash {
        return Err("hash mismatch: the envelope's bytes were changed".into());
    }
    let mut reader = Reader { bytes: body, at: 1 };
    let prev_hash = Hash(reader.array()?);
    let game_len = usize::from(reader.u8()?);
    let game = GameId::new(reader.text(game_len)?).map_err(|e| e.to_string())?;
    let seq = u64::from_le_bytes(reader.array()?);
    let position = u64::from_le_bytes(reader.array()?);
    let time_millis = u64::from_le_bytes(reader.array()?);
    let actor = match reader.array::<2>()? {
        [0, _] => Actor::Server,
        [1, seat] => Actor::Seat(seat),
        [kind, _] => return Err(format!("unknown actor kind {kind}")),
    };
    let request_len = usize::from(reader.u8()?);
    let request_id = RequestId::new(reader.text(request_len)?).map_err(|e| e.to_string())?;
    let schema = u16::from_le_bytes(reader.array()?);
    let payload_len = u32::from_le_bytes(reader.array()?) as usize;
    let payload = reader.take(payload_len)?.to_vec();
    if reader.at != body.len() {
        return Err(format!("{} bytes after the payload", body.len() - reader.at));
    }
    Ok(StoredEvent {
        game,
        seq,
        position,
        time_millis,
        actor,
        request_id,
        schema,
        payload,
        prev_hash,
        hash,
    })
}

/// A cursor that fails instead of panicking when the envelope is short.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("envelope truncated at byte {}", self.at))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }

    fn text(&mut self, len: usize) -> Result<String, String> {
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "id is not UTF-8".to_string())
    }
}
