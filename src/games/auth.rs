//! Seat tokens: random secrets shown once, stored only as SHA-256 hashes,
//! compared in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A token's stored form.
pub type TokenHash = [u8; 32];

/// A fresh token: 32 random bytes (256 bits) from the operating system, hex.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(hex(&bytes))
}

/// 32 random bytes for a seed nobody chose.
pub fn random_seed() -> Result<[u8; 32], getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes)
}

pub fn hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// The seat whose token this is, comparing every seat in constant time so
/// that timing tells nothing about the tokens.
pub fn seat_of(token: &str, hashes: &[TokenHash]) -> Option<u8> {
    let presented = hash(token);
    let mut found = None;
    for (seat, stored) in hashes.iter().enumerate() {
        if bool::from(stored.ct_eq(&presented)) {
            found = Some(seat as u8);
        }
    }
    found
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of the seed, hex: the commitment a game shows from its start.
pub fn seed_commitment(seed: &[u8; 32]) -> String {
    hex(&Sha256::digest(seed))
}
