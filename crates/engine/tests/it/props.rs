//! Property tests over many seeded random games.
