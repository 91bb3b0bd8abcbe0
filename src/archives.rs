//! Signed archives on the command line: `audit` checks one offline, and
//! `public-key` prints the key a server signs with. Their output is part
//! of the interface (`README.md`, `docs/archive-format.md`).

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use carcassonne::audit::{self, AuditFailure, Finding, Passed};
use carcassonne_archive::{Archive, ArchiveError, PublicKey};
use serde_json::json;

use crate::cli::{INVALID, emit};

#[derive(clap::Args)]
pub struct AuditArgs {
    /// The archive (a `.tar` from ExportGameArchive,
    /// `GET /api/games/{id}/archive` or ExportTournamentArchive); `-` reads
    /// standard input.
    archive: String,
    /// The server's public key, 64 hex digits, or a file holding them (as
    /// `carcassonne public-key` prints them): the archive must be signed by
    /// it. Without it, the signature is checked against the key the archive
    /// names, which proves it unchanged but not who signed it.
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
    /// Print one JSON object: `ok`, `kind`, `subject`, `server_key`,
    /// `key_given`, `passed` (each check that held: `file`, `what`) and
    /// `failure` (`file`, `at`, `rule`, `error`, or null).
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct PublicKeyArgs {
    /// The server's data directory, which holds its key (`server.key`).
    #[arg(long, env = "CARCASSONNE_DATA", default_value = "./data")]
    data: PathBuf,
    /// The PostgreSQL store of a server started with `serve --store`: the
    /// key kept in its database.
    #[arg(long, env = "CARCASSONNE_STORE", value_name = "POSTGRES_URL")]
    store: Option<carcassonne::server::PostgresUrl>,
    /// The key file a server was started with (`serve --key-file`).
    #[arg(long, env = "CARCASSONNE_KEY_FILE")]
    key_file: Option<PathBuf>,
}

/// `carcassonne public-key`: the public key of the server's key, which
/// must exist (this makes none).
pub fn public_key(args: &PublicKeyArgs) -> anyhow::Result<ExitCode> {
    use carcassonne::server::key;
    let key = match (&args.key_file, &args.store) {
        (Some(file), _) => key::load_file(file)?,
        (None, Some(url)) => {
            let store =
                carcassonne_store::PgStore::open(url.as_str(), carcassonne_store::StoreConfig::default())
                    .context("opening the PostgreSQL store")?;
            key::load_in(&store)?
        }
        (None, None) => key::load(&args.data)?,
    };
    emit(&format!("{}\n", key.public_key_hex()))?;
    Ok(ExitCode::SUCCESS)
}

/// The key `--key` names: its hex, or a file holding it.
fn expected_key(given: &str) -> anyhow::Result<PublicKey> {
    if let Ok(key) = PublicKey::from_hex(given) {
        return Ok(key);
    }
    let text = std::fs::read_to_string(given).with_context(|| {
        format!("--key: {given:?} is neither a public key (64 hex digits) nor a file one can read")
    })?;
    PublicKey::from_hex(&text).with_context(|| format!("--key: the file {given}"))
}

fn read_archive(path: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
    } else {
        bytes = std::fs::read(path).with_context(|| format!("reading {path}"))?;
    }
    Ok(bytes)
}

/// `carcassonne audit`: opens the archive (signature, expected key, every
/// file's hash), then audits what its files say. Exit 0 when every check
/// held; 1 at the first that did not, named.
pub fn audit(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let expected = args.key.as_deref().map(expected_key).transpose()?;
    let bytes = read_archive(&args.archive)?;
    let archive = match Archive::open(&bytes, expected.as_ref()) {
        Ok(archive) => archive,
        Err(error) => {
            let failure = AuditFailure {
                passed: Vec::new(),
                finding: opening_finding(&error),
            };
            return report(args, None, Err(failure));
        }
    };
    let manifest = archive.manifest();
    let mut passed = vec![
        Passed {
            file: carcassonne_archive::SIGNATURE.to_owned(),
            what: match &expected {
                Some(key) => format!("valid, by the key given with --key, {key}"),
                None => format!(
                    "valid for the key the archive names, {}; only --key proves who signed it",
                    archive.server_key()
                ),
            },
        },
        Passed {
            file: carcassonne_archive::MANIFEST.to_owned(),
            what: format!(
                "{} archive of {}, made at {} ms; {} files, each of its listed size and SHA-256, \
                 and no other",
                manifest.kind,
                manifest.subject,
                manifest.created_at_ms,
                manifest.files.len()
            ),
        },
    ];
    let outcome = match audit::audit_archive(&archive) {
        Ok(report) => {
            passed.extend(report.passed);
            Ok(passed)
        }
        Err(mut failure) => {
            passed.append(&mut failure.passed);
            failure.passed = passed;
            Err(failure)
        }
    };
    report(args, Some(&archive), outcome)
}

/// Why an archive did not open, as an audit's finding.
fn opening_finding(error: &ArchiveError) -> Finding {
    // The error's words begin with its file already.
    let words = error.to_string();
    let error_text = match error.path() {
        Some(path) => words
            .strip_prefix(&format!("{path}: "))
            .map_or(words.clone(), str::to_owned),
        None => words,
    };
    Finding::file(error.path(), error_text)
}

fn report(
    args: &AuditArgs,
    archive: Option<&Archive>,
    outcome: Result<Vec<Passed>, AuditFailure>,
) -> anyhow::Result<ExitCode> {
    let (passed, failure) = match &outcome {
        Ok(passed) => (passed.as_slice(), None),
        Err(failure) => (failure.passed.as_slice(), Some(&failure.finding)),
    };
    if args.json {
        let manifest = archive.map(Archive::manifest);
        let out = json!({
            "ok": failure.is_none(),
            "kind": manifest.map(|m| m.kind.as_str()),
            "subject": manifest.map(|m| m.subject.as_str()),
            "server_key": manifest.map(|m| m.server_key.as_str()),
            "key_given": args.key.is_some(),
            "passed": passed,
            "failure": failure,
        });
        emit(&(serde_json::to_string_pretty(&out)? + "\n"))?;
    } else {
        let mut out = String::new();
        for check in passed {
            out += &format!("ok    {check}\n");
        }
        match failure {
            Some(finding) => out += &format!("FAIL  {finding}\n"),
            None => out += "audit: every check held\n",
        }
        emit(&out)?;
    }
    Ok(if failure.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(INVALID)
    })
}
