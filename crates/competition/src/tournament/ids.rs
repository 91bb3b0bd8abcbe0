//! Game ids and game seeds of a tournament. Both are frozen: stored
//! tournaments and their audits depend on them.

use crate::codec::sha256;

/// The domain string of [`game_seed`].
pub const GAME_SEED_DOMAIN: &str = "carcassonne/tournament-game-seed/1";

/// The id of game `index` (0-based) at table `table` (1-based) of round
/// `round` (1-based): `{tournament_id}-r{round}t{table}g{index}`.
///
/// For a tournament id of at most 24 ASCII characters it is printable
/// ASCII of at most 24 + 27 = 51 bytes.
pub fn game_id(tournament_id: &str, round: u32, table: u32, index: u8) -> String {
    format!("{tournament_id}-r{round}t{table}g{index}")
}

/// The seed of a tournament's game: SHA-256 over the bytes of
/// [`GAME_SEED_DOMAIN`], the tournament's 32-byte seed, `round` (u32
/// big-endian), `table` (u32 big-endian; 0 with duplicate bags, so every
/// table of a round plays its game `index` with the same seed) and `index`
/// (one byte).
pub fn game_seed(seed: &[u8; 32], round: u32, table: u32, index: u8, duplicate_bags: bool) -> [u8; 32] {
    let table = if duplicate_bags { 0 } else { table };
    sha256(&[
        GAME_SEED_DOMAIN.as_bytes(),
        seed,
        &round.to_be_bytes(),
        &table.to_be_bytes(),
        &[index],
    ])
}

/// The commitment published at a tournament's creation: the SHA-256 of
/// its seed, in lower-case hex. Revealing the seed at the end lets anyone
/// check it against the commitment, then recompute every game seed, the
/// lot and every pairing.
pub fn seed_commitment(seed: &[u8; 32]) -> String {
    crate::codec::to_hex(&sha256(&[seed]))
}
