//! The audit of a tournament's archive (kind `tournament`): NOT YET
//! WRITTEN. This build opens such an archive (its signature and hashes are
//! checked like any other's) and then reports that it cannot audit it.
//!
//! What [`audit`] is to check, once tournaments exist (the layout of their
//! files is theirs to add to `docs/archive-format.md`):
//!
//! - the tournament's own event log, an exported stream like a game's:
//!   its hash chain with `crate::server::audit::check_chain` (any stream's
//!   id), then its events (pairings, results) folded;
//! - every game it lists with [`super::game::audit_game`] (its files under
//!   `games/<id>/`, as `crate::server::audit::game_files` writes them),
//!   whose `AuditedGame` gives each game's scores, ending and ranking;
//! - the pairings, standings and ratings recomputed from those and
//!   compared with the files that state them;
//! - no file that none of these checks reads.

use carcassonne_archive::Archive;

use super::{Checks, Finding};

/// The audit of the tournament `subject`'s archive: for now, the failure
/// that says this build cannot do it.
pub fn audit(_archive: &Archive, _subject: &str, _checks: &mut Checks) -> Result<(), Finding> {
    Err(Finding::file(
        None,
        "tournament archives: not yet supported by this build",
    ))
}
