//! The offline audit of signed archives (`carcassonne audit`): no server,
//! no store, only an archive's bytes.
//!
//! [`carcassonne_archive::Archive::open`] checks the tar, the signature
//! and every file's hash against the manifest; then [`audit_archive`]
//! checks what the files say, by the archive's `kind`: a game's with the
//! very checks of VerifyGame (`server::audit`: the record replayed, the
//! event log's hash chain, the rules and the draws at the stored times,
//! the seed against its commitment, the record against the log), a
//! tournament's with those of each of its games and of what the games add
//! up to: results, pairings, standings, ratings ([`tournament::audit`]).
//! Every check that holds
//! is a [`Passed`] line; the first that does not is the [`Finding`] of
//! the [`AuditFailure`], naming its file, and its event or turn.

pub mod game;
pub mod tournament;

use carcassonne_archive::{Archive, Kind};
use serde::Serialize;

/// A check that held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Passed {
    /// The file it is about (or `signature` for the archive's own).
    pub file: String,
    /// What held, for people.
    pub what: String,
}

impl std::fmt::Display for Passed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.what)
    }
}

/// Where in a file a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum At {
    /// An event of a log, by its sequence number in the stored log.
    Event(u64),
    /// A turn of a record, by its index.
    Turn(u64),
}

/// The first thing that does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The archive's file it is in, if it is in one.
    pub file: Option<String>,
    /// Where in the file.
    pub at: Option<At>,
    /// The rule id of docs/rules.md it breaks, if any.
    pub rule: Option<String>,
    /// What does not hold, for people.
    pub error: String,
}

impl Finding {
    /// A problem with a whole file (or the archive, without a file).
    pub fn file(file: Option<&str>, error: impl Into<String>) -> Finding {
        Finding {
            file: file.map(str::to_owned),
            at: None,
            rule: None,
            error: error.into(),
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        f.write_str(&self.error)
    }
}

/// Every check of an archive held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditReport {
    pub kind: Kind,
    pub subject: String,
    /// Each check, in the order they ran.
    pub passed: Vec<Passed>,
}

/// A check of an archive did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditFailure {
    /// The checks that held before it, in order.
    pub passed: Vec<Passed>,
    /// The first that did not.
    pub finding: Finding,
}

/// The checks so far, and how to fail after them.
#[derive(Debug, Default)]
pub struct Checks {
    passed: Vec<Passed>,
}

impl Checks {
    /// Records a check that held.
    pub fn pass(&mut self, file: &str, what: impl Into<String>) {
        self.passed.push(Passed {
            file: file.to_owned(),
            what: what.into(),
        });
    }

    fn fail(self, finding: Finding) -> AuditFailure {
        AuditFailure {
            passed: self.passed,
            finding,
        }
    }
}

/// Checks what an opened archive's files say: every game in it exactly as
/// VerifyGame does, and for a tournament what its files add up to. The
/// archive's signature and hashes were checked when it was opened.
pub fn audit_archive(archive: &Archive) -> Result<AuditReport, AuditFailure> {
    let manifest = archive.manifest();
    let mut checks = Checks::default();
    let outcome = match manifest.kind {
        Kind::Game => game::audit(archive, &manifest.subject, &mut checks),
        Kind::Tournament => tournament::audit(archive, &manifest.subject, &mut checks),
    };
    match outcome {
        Ok(()) => Ok(AuditReport {
            kind: manifest.kind,
            subject: manifest.subject.clone(),
            passed: checks.passed,
        }),
        Err(finding) => Err(checks.fail(finding)),
    }
}
