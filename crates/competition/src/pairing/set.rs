//! A set of up to 256 player indices, as four words: the search's memo
//! keys and its "who is left" are these.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(super) struct Set([u64; 4]);

/// The most indices a [`Set`] holds.
pub(super) const CAPACITY: usize = 256;

impl Set {
    pub(super) fn first_n(n: usize) -> Set {
        let mut set = Set::default();
        for index in 0..n.min(CAPACITY) {
            set.insert(index);
        }
        set
    }

    pub(super) fn contains(&self, index: usize) -> bool {
        index < CAPACITY && self.0[index / 64] & (1 << (index % 64)) != 0
    }

    pub(super) fn insert(&mut self, index: usize) {
        if index < CAPACITY {
            self.0[index / 64] |= 1 << (index % 64);
        }
    }

    pub(super) fn remove(&mut self, index: usize) {
        if index < CAPACITY {
            self.0[index / 64] &= !(1 << (index % 64));
        }
    }

    pub(super) fn len(&self) -> usize {
        self.0.iter().map(|word| word.count_ones() as usize).sum()
    }

    /// The smallest index in the set.
    pub(super) fn first(&self) -> Option<usize> {
        self.0
            .iter()
            .enumerate()
            .find(|(_, word)| **word != 0)
            .map(|(i, word)| i * 64 + word.trailing_zeros() as usize)
    }

    pub(super) fn and_not(&self, other: &Set) -> Set {
        Set(std::array::from_fn(|i| self.0[i] & !other.0[i]))
    }

    pub(super) fn and(&self, other: &Set) -> Set {
        Set(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }

    pub(super) fn to_bytes(self) -> [u8; 32] {
        let mut bytes = [0u8; 32];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(self.0) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// The indices in increasing order.
    pub(super) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                let bit = bits.trailing_zeros() as usize;
                (bits != 0).then(|| {
                    bits &= bits - 1;
                    i * 64 + bit
                })
            })
        })
    }
}
