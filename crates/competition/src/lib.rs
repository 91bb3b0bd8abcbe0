//! Registered players, tournaments and ratings of Carcassonne, as pure
//! folds of events: no IO, no async, no clock, no global randomness. The
//! server stores the events and keeps the folds; this crate decides and
//! folds.
//!
//! Three folds, one shape: events are what was decided, `apply` folds one
//! in and cannot fail (an event its `decide` would never produce changes
//! nothing), decisions check a command against the state and return the
//! events it produces without changing anything, and the same events
//! always fold to the same state.
//!
//! | fold | events | schema |
//! |---|---|---|
//! | [`Registry`]: registered players | [`RegistryEvent`] | [`REGISTRY_SCHEMA`] = 200 |
//! | [`Tournament`]: one tournament | [`TournamentEvent`] | [`TOURNAMENT_SCHEMA`] = 201 |
//! | [`Ratings`]: every rated game | [`RatingEvent`] | [`RATINGS_SCHEMA`] = 202 |
//! | [`Challenge`]: one offer of a game | [`ChallengeEvent`] | [`CHALLENGE_SCHEMA`] = 203 |
//!
//! Every event type encodes as JSON (`encode`, `decode`): enums externally
//! tagged with snake_case names (`{"withdrawn":{"player":"Ada"}}`, unit
//! variants as strings: `"finished"`), names as strings, 32-byte seeds as
//! 64 lower-case hex digits, [`Points`] as integers of sixtieths. An
//! encoding, once released, never changes.
//!
//! # Players
//!
//! A [`PlayerName`] is 1 to 32 characters of `[A-Za-z0-9_-]`, compared
//! case-sensitively; the registry refuses a name equal to a registered one
//! but for case, so "Ada" and "ada" never both exist. A player holds a key
//! the server gave them; the registry stores only its SHA-256 (one key
//! hash, one player) and finds the player from it. Organisers are promoted
//! and demoted.
//!
//! # Challenges
//!
//! No game seats a registered player who did not agree to it: a
//! [`Challenge`] offers a game's seats, each named for a registered
//! player, open to any (a seek) or a built-in bot's, and the game starts
//! once every player's seat is taken (the `challenge` module says how).
//!
//! # Tournaments
//!
//! A [`Spec`] fixes a tournament at its creation ([`Spec::check`] names
//! the field of each error): a name (1 to 100 characters), 2 to 256
//! distinct participants, the format, the table size k (2 to 5), the
//! table points (k whole points by place, best first, never increasing,
//! at most 1000 each; without them, `[1, 0]` for duels and `5, 3, 2, 1, 0`
//! cut to the table size otherwise, `Spec::default_table_points`), the
//! games per match (1 to 10), duplicate bags,
//! whether it is rated, and the games' rule options and time control
//! (opaque here). A Swiss plays 1 to n-1 rounds; a round robin with
//! tables of 3 or more needs at least k participants and at most
//! [`MAX_ROUND_ROBIN_TABLES`] tables.
//!
//! Participants may include **house bots**, built-in bots the server
//! plays: each is named `{kind} bot {n}` ([`PlayerName::house_bot`], such
//! as "greedy bot 1"; the spaces keep it apart from every registered
//! name) and listed in [`Spec::house_bots`] with its level, which this
//! crate keeps as given. Pairings, points, standings and the lot treat
//! them as any participant.
//!
//! The tournament's 32-byte seed is sealed: [`Tournament::seed_commitment`]
//! (its SHA-256, hex) is published at the start, the seed itself only at
//! the end; no `Debug` in this crate prints a seed. The seed gives every
//! game its seed and the lot, so with the events anyone can recompute
//! every pairing ([`Tournament::pairing_for_next_round`], [`pair`]).
//!
//! ## Rounds
//!
//! [`TournamentCommand::Advance`] does nothing while a game of the current
//! round has no result. Otherwise it pairs the next round
//! ([`TournamentEvent::RoundPaired`]), or finishes the tournament
//! ([`TournamentEvent::Finished`]) when the format has no more rounds (a
//! Swiss after its `rounds`, a round robin after its schedule) or fewer
//! than two players are active. A round without a game (byes only, or
//! every table emptied by withdrawals) is complete at once, so the same
//! decision pairs the next one too. A withdrawn player is never paired
//! again; their games already paired wait for a result like any other
//! (the server forfeits them).
//!
//! ## Games
//!
//! Each table plays `games_per_match` games. Game g (0-based) at table t
//! (1-based) of round r (1-based) is [`game_id`] `{tournament}-r{r}t{t}g{g}`
//! (at most 51 bytes of printable ASCII for a tournament id of 24), seats
//! the table's order rotated left by g (with two players the first seat
//! alternates), and is dealt with [`game_seed`]: SHA-256 over
//! `"carcassonne/tournament-game-seed/1"`, the tournament seed, r (u32
//! big-endian), t (u32 big-endian, 0 with duplicate bags so that every
//! table of a round deals its game g alike) and g (one byte). Game ids
//! and seeds are frozen.
//!
//! ## Points
//!
//! Points are exact: [`Points`] counts sixtieths of a point (60 is the
//! least common multiple of 1 to 5), shown with at most two decimals
//! ("2", "1.5", "0.33"). In a played game a seat's place is 1 + the
//! number of seats ranked better (ranks as the engine gives them, 1 the
//! best, equal ranks tied); tied seats occupy as many places and share
//! those places' points equally: two tied first at `[5, 3, 2, 1]` get
//! (5 + 3) / 2 = 4 each ([`table_points`]). A table of m < k players uses
//! the first m table points. A match scores the sum of its games; a bye
//! scores the first place's points for each game of the match; an aborted
//! game scores nothing for anyone.
//!
//! ## Standings and tie-breaks
//!
//! [`Tournament::standings`] lists every participant (withdrawn ones
//! marked) with a distinct rank, ordered by, in turn:
//!
//! 1. **points**, the most first;
//! 2. **Buchholz**: the sum, over every table the player sat at (one per
//!    round, however many games its match had), of the current points of
//!    each other player at that table; a bye adds nothing;
//! 3. **firsts**: games placed first, shared firsts included;
//! 4. **game score**: the sum of the player's scores in ranked games;
//! 5. **the lot**: players equal on all of these are ordered by the lot.
//!
//! The **lot** ([`lot_order`]) orders the participants by SHA-256 over
//! `"carcassonne/tournament-lot/1"`, the tournament seed and the name's
//! bytes, ascending; it is fixed for the whole tournament.
//!
//! # Pairing `pairing/1`
//!
//! [`pair`] is a pure function of the spec, the seed, the round number and
//! what the tournament knows before the round ([`PairingInput`]): the
//! active players in standings order, how many tables each pair of
//! players has shared in earlier rounds, and how many byes each player
//! had. It never changes; another algorithm gets another version
//! ([`PAIRING_VERSION`], stored in `Created`). A table's players are
//! listed in its seat order for game 0.
//!
//! ## Round robin in duels
//!
//! The circle method (Berger tables) on the participants in lot order
//! (indices 0 to n-1): with m = n rounded up to even, index m-1 stays
//! fixed and the others turn. In round q + 1 (q = 0 to m-2) ring slot i
//! (0 to m-2) holds index (q + i) mod (m-1); the first table is slot 0
//! against the fixed index (slot 0 seated first when q is even, the fixed
//! index when q is odd), then for i = 1 to m/2 - 1 slot i against slot
//! m-1-i (slot i first when q is even). With n odd the fixed index is no
//! one: meeting it is the round's bye. So n-1 rounds (n even) or n rounds
//! with one bye each (n odd). A scheduled game against a withdrawn player
//! becomes a bye for the opponent.
//!
//! ## Round robin in tables of 3 to 5
//!
//! Every k-subset of the lot indices plays once. The subsets are listed
//! in lexicographic order; each round takes, scanning that list, every
//! subset not played yet that shares no player with those already taken
//! for the round. Players not seated in a round sit it out (no points, no
//! bye). Withdrawn players leave their later tables (which keep their
//! order); a table left with fewer than two players is dropped.
//!
//! ## Swiss
//!
//! The active players P, best first (the standings; in round 1 the lot).
//!
//! 1. **Bye.** With tables of 2 and an odd number of players, the
//!    lowest-ranked player who has had no bye (if all have, the
//!    lowest-ranked) has the bye and is not seated.
//! 2. **Table sizes.** The m players seated sit at t = ceil(m/k) tables:
//!    m mod t tables of floor(m/t) + 1 players and the others of
//!    floor(m/t) (never fewer than 2).
//! 3. **Candidate order.** A pairing is a sequence of tables: each opened
//!    by the best-ranked player not yet seated, of the larger size first
//!    (if one is left), then of the smaller; its other players are chosen
//!    from those not yet seated, compared as increasing lists of
//!    standings positions (lexicographic order). The table lists its
//!    players in standings order. Pairings compare by their first table,
//!    then the next. So the top player meets the next-ranked players it
//!    can (Monrad), and the full tables come first when possible.
//! 4. **Cost.** A pairing's repeat cost is the sum, over every two
//!    players at the same table, of the tables they have shared before.
//! 5. **Choice.** (a) In duels, when rounds remain after this one: the
//!    first repeat-free pairing after which the remaining rounds can all
//!    be paired repeat-free (the look-ahead below); (b) otherwise, or if
//!    there is none: the first pairing of the least cost, so a
//!    repeat-free pairing is found whenever one exists.
//!
//! The search behind (b) is a depth-first search in candidate order with
//! a bound on the cost, starting at the cost of the first pairing in
//! candidate order (costs ignored). Each complete pairing found within
//! the bound becomes the best; the search stops at cost 0, else the bound
//! drops to its cost minus one and the search goes on. When it ends, the
//! best is the first pairing of the least cost. Step by step:
//!
//! - `search(left, big, spent)` pairs the players `left` (`big` of the
//!   larger tables among the tables left) after tables costing `spent`;
//!   its allowance is bound - spent. With nobody left, the pairing is
//!   complete. Otherwise: if a search of the same `left` and `big` found
//!   nothing with an allowance at least this one, nothing is found now.
//!   With an allowance of 0, if a player in `left` has fewer players in
//!   `left` they have not met (themselves included) than the smallest
//!   table size left, nothing is found. Otherwise the best-ranked player in `left` opens a
//!   table of each size left (larger first), filled by `fill`, while the
//!   bound still admits `spent`. A search that found nothing records its
//!   allowance for its `left` and `big`.
//! - `fill(table, from, spent)`: a full table goes on to
//!   `search(left - table, big after it, spent)`. Otherwise each
//!   candidate from position `from` on among those left (in standings
//!   order, while enough remain to fill the table) whose meetings with
//!   the table so far keep the cost within the bound joins, and `fill`
//!   goes on after it.
//! - Each call of `search` or `fill` is a step; after [`SEARCH_LIMIT`]
//!   steps the search ends and takes the best pairing found so far (the
//!   least cost is then not proven, which needs large, tightly
//!   constrained rounds: tables of 5 after several rounds).
//!
//! The **look-ahead** (duels only) runs the same search with a bound of
//! 0 over this round's pairings in candidate order, and takes the first
//! whose remaining rounds L can all be paired repeat-free: with a bye
//! this round, byes count as meetings with a dummy player added to the
//! players (so no one has a second bye while someone has had none, but
//! which player has a later bye is free); `completable(meetings, L)` is
//! true if L = 0 or if Δ + (L - 1)(s - 1) < t, where Δ is the most
//! players any one of them has met, s the largest table size and t the
//! number of tables (Hajnal and Szemerédi: players whose meetings have a
//! maximum degree below t can always be split into t tables of sizes
//! differing by at most one without a repeat); false if the same meetings
//! were found not completable in L rounds before; and otherwise true if
//! some repeat-free pairing of everyone (in candidate order) leaves
//! meetings completable in L - 1 rounds. Every search call of the
//! look-ahead, its own candidates' included, shares [`LOOKAHEAD_LIMIT`]
//! steps; once they are spent, the look-ahead gives up and the choice is
//! (b).
//!
//! # Ratings
//!
//! [`Ratings`] folds [`RatingEvent::Rated`] games (players in seat order,
//! their ranks) into two pools, with skillratings' maths and defaults:
//! [`Pool::Duel`] (2 players) by Glicko-2, each game a rating period of
//! its own; [`Pool::Multiplayer`] (3 to 5 players) by Weng-Lin, each
//! player a team of one placed by its rank, ties allowed. New players
//! start at the library's defaults (1500 ± 350; 25 ± 25/3). A game whose
//! players and ranks differ in number, lists a player twice, has a rank
//! 0, fewer than 2 or more than 5 players, or an id already rated is
//! ignored. Folding the same events gives bit-identical ratings.
//!
//! # Example
//!
//! ```
//! use carcassonne_competition::*;
//!
//! let players: Vec<PlayerName> = ["Ada", "Brun", "Cy", "Dot"]
//!     .iter()
//!     .map(|name| PlayerName::new(*name).unwrap())
//!     .collect();
//! let spec = Spec {
//!     name: "Spring cup".into(),
//!     organiser: None,
//!     participants: players,
//!     house_bots: Default::default(),
//!     format: Format::Swiss { rounds: 3 },
//!     table_size: 2,
//!     table_points: Spec::default_table_points(2),
//!     games_per_match: 2,
//!     duplicate_bags: false,
//!     rated: true,
//!     games: serde_json::json!({}),
//! };
//! let created = Tournament::create(spec, [7; 32]).unwrap();
//! let mut cup = Tournament::from_event("spring", &created).unwrap();
//! for event in cup.decide(&TournamentCommand::Advance).unwrap() {
//!     cup.apply(&event);
//! }
//! assert_eq!(cup.round(), 1);
//! let game = cup.pending_games().next().unwrap().id;
//! let result = GameResult::Ranked { ranks: vec![1, 2], scores: vec![40, 31] };
//! for event in cup.decide(&TournamentCommand::RecordResult { game, result }).unwrap() {
//!     cup.apply(&event);
//! }
//! assert_eq!(cup.standings()[0].points.to_string(), "1");
//! ```

mod challenge;
mod codec;
mod name;
mod pairing;
mod players;
mod points;
mod ratings;
mod tournament;

#[cfg(test)]
mod tests;

pub use challenge::{
    Challenge, ChallengeCommand, ChallengeError, ChallengeEvent, ChallengeSpec, ChallengeStatus,
    MAX_CHALLENGE_SEATS, MIN_CHALLENGE_SEATS, SeatOffer, SpecError,
};
pub use codec::{
    CHALLENGE_SCHEMA, DecodeError, RATINGS_SCHEMA, REGISTRY_SCHEMA, TOURNAMENT_SCHEMA, from_hex, to_hex,
};
pub use name::{MAX_HOUSE_BOT_KIND_LEN, MAX_HOUSE_BOT_NUMBER, MAX_NAME_LEN, NameError, PlayerName};
pub use pairing::{
    LOOKAHEAD_LIMIT, LOT_DOMAIN, PAIRING_VERSION, Pairing, PairingInput, PairingPlan, SEARCH_LIMIT,
    lot_order, pair,
};
pub use players::{PlayerRecord, Registry, RegistryError, RegistryEvent};
pub use points::{Points, table_points};
pub use ratings::{Pool, Rating, RatingChange, RatingEvent, Ratings};
pub use tournament::*;
