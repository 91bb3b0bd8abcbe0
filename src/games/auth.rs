//! Seat tokens: secrets shown once, stored only as SHA-256 hashes,
//! compared in constant time.
//!
//! A game created with a request id of at least [`MIN_RETRIED_ID_LEN`]
//! characters gets tokens derived from that id by the server's
//! [`TokenSecret`]: a retry of the creation, on any server node and at any
//! time, gets the same tokens again, though none is stored. Nothing stored
//! gives them back: the creation's request id is stored only as its hash
//! ([`stored_creation_id`]), so the database, its dumps and the archives
//! hold neither the id nor a token, and the secret alone makes no token.
//! A shorter, guessable id gets random tokens, answered once.

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The shortest request id whose creation a retry answers, tokens
/// included: 16 characters, as a random id has (a UUID has 32 hex digits).
pub const MIN_RETRIED_ID_LEN: usize = 16;

/// The server's secret for seat tokens, the same on every node (derived
/// from the signing key they share). `Debug` shows nothing of it.
#[derive(Clone)]
pub struct TokenSecret([u8; 32]);

impl TokenSecret {
    pub fn new(secret: [u8; 32]) -> TokenSecret {
        TokenSecret(secret)
    }

    /// The token of `seat` in the game created by `request_id`: 32 bytes of
    /// HMAC-SHA256 over both, hex, as long as a random token.
    pub fn seat_token(&self, request_id: &str, seat: usize) -> String {
        let mut mac = <Hmac<Sha256>>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(b"carcassonne seat token\0");
        mac.update(&(seat as u64).to_be_bytes());
        mac.update(request_id.as_bytes());
        hex(&mac.finalize().into_bytes())
    }
}

impl std::fmt::Debug for TokenSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenSecret(..)")
    }
}

/// What the store keeps as a creation's request id: `sha256:` and the
/// id's hash in hex. It still tells a retry (the same id hashes alike),
/// but gives nothing to derive the tokens from.
pub fn stored_creation_id(request_id: &str) -> String {
    format!("sha256:{}", hex(&Sha256::digest(request_id.as_bytes())))
}

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
