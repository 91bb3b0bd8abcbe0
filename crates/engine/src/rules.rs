//! Rule options (chosen at creation) and rule ids (named by errors and
//! score causes), both as in `docs/rules.md`.

use std::fmt;

/// A rule of `docs/rules.md`, by its id (`B-T1`, `R-4`, `C-6`, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(&'static str);

impl RuleId {
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.0)
    }
}

impl fmt::Debug for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// The rule ids, one constant each: exactly the rules `docs/rules.md`
/// defines (a test checks both ways).
pub mod id {
    use super::RuleId;

    macro_rules! ids {
        ($($name:ident = $text:literal),* $(,)?) => {
            $(pub const $name: RuleId = RuleId($text);)*
            /// Every id above, for tests that check coverage.
            pub const ALL: &[RuleId] = &[$($name),*];
        };
    }

    ids! {
        B_1 = "B-1", B_2 = "B-2", B_3 = "B-3",
        B_T1 = "B-T1", B_T2 = "B-T2", B_T3 = "B-T3", B_T4 = "B-T4", B_T5 = "B-T5",
        B_E1 = "B-E1",
        B_X1 = "B-X1", B_X2 = "B-X2", B_X3 = "B-X3", B_X4 = "B-X4", B_X5 = "B-X5",
        B_S1 = "B-S1", B_S2 = "B-S2", B_S3 = "B-S3", B_S4 = "B-S4", B_S5 = "B-S5", B_S6 = "B-S6",
        B_F1 = "B-F1", B_F2 = "B-F2", B_F3 = "B-F3", B_F4 = "B-F4",
        B_FS1 = "B-FS1", B_FS2 = "B-FS2",
        R_1 = "R-1", R_2 = "R-2", R_3 = "R-3", R_4 = "R-4", R_5 = "R-5", R_6 = "R-6",
        C_1 = "C-1", C_2 = "C-2", C_3 = "C-3", C_4 = "C-4", C_5 = "C-5", C_6 = "C-6", C_7 = "C-7",
        C_8 = "C-8", C_9 = "C-9", C_10 = "C-10", C_11 = "C-11", C_12 = "C-12", C_13 = "C-13",
        CD_1 = "CD-1", CD_2 = "CD-2", CD_3 = "CD-3", CD_4 = "CD-4", CD_5 = "CD-5", CD_6 = "CD-6",
        CD_7 = "CD-7", CD_8 = "CD-8", CD_9 = "CD-9", CD_10 = "CD-10", CD_11 = "CD-11",
        T_1 = "T-1", T_2 = "T-2", T_3 = "T-3", T_4 = "T-4", T_5 = "T-5", T_6 = "T-6",
        T_7 = "T-7", T_8 = "T-8", T_9 = "T-9", T_10 = "T-10", T_11 = "T-11",
    }
}

/// How a completed city of exactly two tiles scores (B-S4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmallCity {
    /// 1 per tile and 1 per pennant (the sources, the default).
    Halved,
    /// Like any other city.
    Normal,
}

/// How farmers score at the end (B-F3, B-F4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Farmers {
    /// B-F3: per completed city, 4 points to the farmer majority of all the
    /// fields that border it.
    CityCentric4,
    /// B-F4: per field, 3 points to its majority per completed city it
    /// borders.
    FarmCentric3,
}

impl Farmers {
    pub const fn name(self) -> &'static str {
        match self {
            Farmers::CityCentric4 => "city_centric_4",
            Farmers::FarmCentric3 => "farm_centric_3",
        }
    }

    pub fn from_name(name: &str) -> Option<Farmers> {
        [Farmers::CityCentric4, Farmers::FarmCentric3]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// An expansion: a module that brings tiles, setup and rules of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Expansion {
    River,
    Count,
}

impl Expansion {
    pub const ALL: [Expansion; 2] = [Expansion::River, Expansion::Count];

    /// The key of the expansion in a record's `rules`.
    pub const fn name(self) -> &'static str {
        match self {
            Expansion::River => "river",
            Expansion::Count => "count",
        }
    }
}

/// The rule options of a game, fixed at creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rules {
    pub small_city: SmallCity,
    pub farmers: Farmers,
    /// Bit `e as u8` set: expansion `e` is in play.
    expansions: u8,
}

impl Default for Rules {
    /// The "classic" rule set of the sources (`docs/rules.md`).
    fn default() -> Rules {
        Rules {
            small_city: SmallCity::Halved,
            farmers: Farmers::CityCentric4,
            expansions: 0,
        }
    }
}

impl Rules {
    pub fn with(mut self, expansion: Expansion) -> Rules {
        self.expansions |= 1 << expansion as u8;
        self
    }

    pub fn has(&self, expansion: Expansion) -> bool {
        self.expansions & (1 << expansion as u8) != 0
    }

    pub fn expansions(&self) -> impl Iterator<Item = Expansion> + '_ {
        Expansion::ALL.into_iter().filter(|e| self.has(*e))
    }
}
