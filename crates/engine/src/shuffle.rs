//! The shuffle: a pure function of a seed (B-3).
//!
//! **Algorithm `shuffle/1`. Stored games and audits depend on it: it never
//! changes. A different algorithm gets a new version beside this one.**
//!
//! 1. The random stream is the ChaCha20 keystream of RFC 8439 with the
//!    32-byte seed as key, an all-zero nonce and the block counter starting
//!    at 0, read as little-endian `u32` words.
//! 2. `below(n)` draws words until one is under
//!    `limit = floor((2^32 - 1) / n) * n` (`(u32::MAX / n) * n`, see
//!    [`rejection_limit`]) and returns it modulo `n` (rejection sampling:
//!    exactly uniform). For a power of two `n` this `limit` is `2^32 - n`,
//!    not `2^32`: the top `n` words are rejected too, and stored games
//!    depend on that.
//! 3. A list is shuffled by Fisher-Yates from its end: for `i` from
//!    `len - 1` down to 1, swap element `i` with element `below(i + 1)`.
//! 4. A bag is laid out in catalogue order (each kind repeated by its
//!    count), shuffled, and drawn from index 0 up. With the River, the river
//!    tiles other than spring and lake are shuffled first, from the same
//!    stream, then the land tiles; the lake is drawn between them.
//!
//! `docs/record-format.md` describes the same steps for auditors.

use std::fmt;

/// The secret a game's draw order follows from. Its `Debug` shows nothing,
/// so that a stray log line cannot leak it; use [`Seed::to_hex`] on purpose.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Seed(pub [u8; 32]);

impl Seed {
    /// A seed from a small number, for tests, benchmarks and examples.
    pub fn from_u64(n: u64) -> Seed {
        let mut bytes = [0; 32];
        bytes[..8].copy_from_slice(&n.to_le_bytes());
        Seed(bytes)
    }

    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn from_hex(hex: &str) -> Option<Seed> {
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let mut bytes = [0; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Seed(bytes))
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(sealed)")
    }
}

/// The ChaCha20 keystream as a source of `u32` words.
pub struct Stream {
    key: [u32; 8],
    counter: u32,
    block: [u32; 16],
    used: usize,
}

impl Stream {
    pub fn new(seed: &Seed) -> Stream {
        let mut key = [0; 8];
        for (word, bytes) in key.iter_mut().zip(seed.0.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        Stream {
            key,
            counter: 0,
            block: [0; 16],
            used: 16,
        }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.used == 16 {
            self.block = chacha20_block(&self.key, self.counter, &[0; 3]);
            self.counter = self.counter.wrapping_add(1);
            self.used = 0;
        }
        self.used += 1;
        self.block[self.used - 1]
    }

    /// Uniform in `0..n`, for `n >= 1`.
    pub fn below(&mut self, n: u32) -> u32 {
        let limit = rejection_limit(n);
        loop {
            let x = self.next_u32();
            if x < limit {
                return x % n;
            }
        }
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// The words `below(n)` accepts are those under this bound, a multiple of
/// `n`. Frozen as computed here (from `u32::MAX`, not `2^32`).
pub(crate) const fn rejection_limit(n: u32) -> u32 {
    (u32::MAX / n) * n
}

fn quarter_round(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

/// The ChaCha20 block function of RFC 8439, section 2.3.
pub(crate) fn chacha20_block(key: &[u32; 8], counter: u32, nonce: &[u32; 3]) -> [u32; 16] {
    let mut initial = [0u32; 16];
    initial[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    initial[4..12].copy_from_slice(key);
    initial[12] = counter;
    initial[13..].copy_from_slice(nonce);
    let mut s = initial;
    for _ in 0..10 {
        quarter_round(&mut s, 0, 4, 8, 12);
        quarter_round(&mut s, 1, 5, 9, 13);
        quarter_round(&mut s, 2, 6, 10, 14);
        quarter_round(&mut s, 3, 7, 11, 15);
        quarter_round(&mut s, 0, 5, 10, 15);
        quarter_round(&mut s, 1, 6, 11, 12);
        quarter_round(&mut s, 2, 7, 8, 13);
        quarter_round(&mut s, 3, 4, 9, 14);
    }
    for (word, init) in s.iter_mut().zip(initial) {
        *word = word.wrapping_add(init);
    }
    s
}
