//! A server's signing key and the public key that checks its signatures.
//!
//! The key file is text, one item a line (lines beginning with `#` and
//! empty lines are skipped):
//!
//! ```text
//! # The signing key of a Carcassonne server (Ed25519). Secret: keep this file private.
//! format carcassonne-key/1
//! ed25519-secret <64 hex digits: the 32 secret bytes>
//! ed25519-public <64 hex digits: the public key>
//! ```
//!
//! The public key is derived from the secret; it is written beside it so
//! that a damaged file (a changed digit makes another valid key) is found
//! out when it is read, and so that a person can read it without tools.

use std::fmt;

use ed25519_dalek::Signer as _;

use crate::{hex, unhex};

/// The first line of a key file after its comment.
const KEY_FORMAT: &str = "carcassonne-key/1";

/// Why a key could not be read. No message quotes the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// A public key that is not 64 hex digits of an Ed25519 point.
    #[error("not an Ed25519 public key: {0}")]
    BadPublicKey(String),
    /// A key file that is not one (or is damaged). Names the line, never
    /// quotes it.
    #[error("not a key file of this format ({KEY_FORMAT}): {0}")]
    Malformed(String),
    /// The file's public key is not its secret's: it was changed or
    /// damaged.
    #[error("its public key does not belong to its secret key")]
    Mismatch,
}

/// An Ed25519 public key: the server key an archive names, or the one an
/// auditor expects. Written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

impl PublicKey {
    /// A public key from its 64 hex digits (either case, surrounding
    /// whitespace ignored).
    pub fn from_hex(text: &str) -> Result<PublicKey, KeyError> {
        let text = text.trim();
        let bytes = unhex::<32>(text).ok_or_else(|| {
            KeyError::BadPublicKey(format!(
                "expected 64 hex digits, found {} characters",
                text.chars().count()
            ))
        })?;
        ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| KeyError::BadPublicKey("64 hex digits, but no point of the curve".to_owned()))
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// Whether `signature` is this key's over `message` (strict Ed25519
    /// verification: no malleable or small-order signatures).
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        let signature = ed25519_dalek::Signature::from_bytes(signature);
        self.0.verify_strict(message, &signature).is_ok()
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_hex())
    }
}

impl std::str::FromStr for PublicKey {
    type Err = KeyError;
    fn from_str(text: &str) -> Result<PublicKey, KeyError> {
        PublicKey::from_hex(text)
    }
}

/// A server's Ed25519 signing key. Its `Debug` shows the public key only,
/// it has no `Display`, and its secret is wiped from memory when dropped;
/// the secret leaves it only through [`SigningKey::to_file_text`].
#[derive(Clone)]
pub struct SigningKey(ed25519_dalek::SigningKey);

impl SigningKey {
    /// The key of 32 secret bytes; for a new key, 32 bytes from the
    /// operating system's random source.
    pub fn from_secret_bytes(secret: [u8; 32]) -> SigningKey {
        SigningKey(ed25519_dalek::SigningKey::from_bytes(&secret))
    }

    /// The public key, which checks this key's signatures.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The public key as 64 lowercase hex digits.
    pub fn public_key_hex(&self) -> String {
        self.public_key().to_hex()
    }

    /// A secret for another purpose, derived from this key's secret by
    /// HMAC-SHA256 over `purpose`: it tells nothing of the key, and every
    /// holder of the key derives the same one.
    pub fn derive_secret(&self, purpose: &str) -> [u8; 32] {
        use hmac::{KeyInit as _, Mac as _};
        let mut mac = <hmac::Hmac<sha2::Sha256>>::new_from_slice(self.0.as_bytes())
            .expect("HMAC takes keys of any length");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// The signature of `message`.
    pub(crate) fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }

    /// The key file's text (see the module's documentation): it holds the
    /// secret, so it belongs in a file only its owner may read.
    pub fn to_file_text(&self) -> String {
        format!(
            "# The signing key of a Carcassonne server (Ed25519). Secret: keep this file private.\n\
             format {KEY_FORMAT}\n\
             ed25519-secret {}\n\
             ed25519-public {}\n",
            hex(self.0.as_bytes()),
            self.public_key_hex()
        )
    }

    /// The key of a key file's text; the file's public key must be its
    /// secret's.
    pub fn from_file_text(text: &str) -> Result<SigningKey, KeyError> {
        let mut format = None;
        let mut secret = None;
        let mut public = None;
        for (i, line) in text.lines().enumerate() {
            let number = i + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, value) = line
                .split_once(' ')
                .ok_or_else(|| KeyError::Malformed(format!("line {number} is no \"name value\" pair")))?;
            let slot = match name {
                "format" => &mut format,
                "ed25519-secret" => &mut secret,
                "ed25519-public" => &mut public,
                _ => return Err(KeyError::Malformed(format!("line {number}: an unknown item"))),
            };
            if slot.replace(value.trim()).is_some() {
                return Err(KeyError::Malformed(format!(
                    "line {number}: {name} a second time"
                )));
            }
        }
        match format {
            Some(KEY_FORMAT) => {}
            Some(_) => return Err(KeyError::Malformed("another format".to_owned())),
            None => return Err(KeyError::Malformed("no format line".to_owned())),
        }
        let secret = secret.ok_or_else(|| KeyError::Malformed("no ed25519-secret line".to_owned()))?;
        let public = public.ok_or_else(|| KeyError::Malformed("no ed25519-public line".to_owned()))?;
        let secret = unhex::<32>(secret)
            .ok_or_else(|| KeyError::Malformed("ed25519-secret is not 64 hex digits".to_owned()))?;
        let key = SigningKey::from_secret_bytes(secret);
        let public = PublicKey::from_hex(public).map_err(|_| KeyError::Mismatch)?;
        if public != key.public_key() {
            return Err(KeyError::Mismatch);
        }
        Ok(key)
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningKey(public {})", self.public_key_hex())
    }
}
