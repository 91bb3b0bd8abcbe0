//! Signed archives on the command line: `audit` checks one offline, and
//! `public-key` prints the key a server signs with. Their output is part
//! of the interface (`README.md`, `docs/archive-format.md`).

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use carcassonne::audit::{self, Finding, Passed};
use carcassonne_archive::{Archive, ArchiveError, Opening, PublicKey};
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
    /// `key_given`, `passed` (each check that held: `file`, `what`),
    /// `failures` (each check that failed: `file`, `at`, `rule`, `error`)
    /// and `failure` (the first of them, or null).
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
/// file's size and hash), then audits what its files say. Exit 0 when every
/// check held; 1 otherwise. Every check that ran is told, held or not, in
/// order: an archive that does not open has each of its opening checks
/// told (each file's among them), and what its files say is not audited;
/// one that opens is audited up to the first check that fails.
pub fn audit(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let expected = args.key.as_deref().map(expected_key).transpose()?;
    let bytes = read_archive(&args.archive)?;
    let opening = Archive::check(&bytes, expected.as_ref());
    let mut checks = opening_checks(&opening, expected.is_some());
    let archive = match opening.archive {
        Ok(archive) => archive,
        Err(_) => {
            let failed = checks.iter().filter(|check| check.is_err()).count();
            let verdict = format!(
                "audit: {failed} of the archive's {} checks failed; what its files say is not audited",
                checks.len()
            );
            return report(args, None, &checks, &verdict);
        }
    };
    let verdict = match audit::audit_archive(&archive) {
        Ok(report) => {
            checks.extend(report.passed.into_iter().map(Ok));
            "audit: every check held"
        }
        Err(failure) => {
            checks.extend(failure.passed.into_iter().map(Ok));
            checks.push(Err(failure.finding));
            "audit: stopped at the first check that failed"
        }
    };
    report(args, Some(&archive), &checks, verdict)
}

/// The opening's checks, in order, as an audit tells them. When every file
/// held, the manifest's line tells them all.
fn opening_checks(opening: &Opening, key_given: bool) -> Vec<Result<Passed, Finding>> {
    let manifest = match &opening.manifest {
        Ok(manifest) => manifest,
        Err(error) => return vec![Err(opening_finding(error))],
    };
    let mut checks = Vec::with_capacity(opening.files.len() + 2);
    checks.extend(opening.signature.iter().map(|signature| match signature {
        Ok(key) => Ok(Passed {
            file: carcassonne_archive::SIGNATURE.to_owned(),
            what: if key_given {
                format!("valid, by the key given with --key, {key}")
            } else {
                format!("valid for the key the archive names, {key}; only --key proves who signed it")
            },
        }),
        Err(error) => Err(opening_finding(error)),
    }));
    let made = format!(
        "{} archive of {}, made at {} ms; {} files",
        manifest.kind,
        manifest.subject,
        manifest.created_at_ms,
        manifest.files.len()
    );
    let files_held = opening.files.iter().all(Result::is_ok);
    checks.push(Ok(Passed {
        file: carcassonne_archive::MANIFEST.to_owned(),
        what: if files_held {
            format!("{made}, each of its listed size and SHA-256, and no other")
        } else {
            made
        },
    }));
    if !files_held {
        checks.extend(opening.files.iter().map(|file| match file {
            Ok((path, bytes)) => Ok(Passed {
                file: path.clone(),
                what: format!("{bytes} bytes, its listed size and SHA-256"),
            }),
            Err(error) => Err(opening_finding(error)),
        }));
    }
    checks
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

/// Prints each check, `ok` or `FAIL`, in order, then `verdict` (or, with
/// `--json`, one object); the exit code says whether all held.
fn report(
    args: &AuditArgs,
    archive: Option<&Archive>,
    checks: &[Result<Passed, Finding>],
    verdict: &str,
) -> anyhow::Result<ExitCode> {
    let passed: Vec<&Passed> = checks.iter().filter_map(|check| check.as_ref().ok()).collect();
    let failures: Vec<&Finding> = checks.iter().filter_map(|check| check.as_ref().err()).collect();
    if args.json {
        let manifest = archive.map(Archive::manifest);
        let out = json!({
            "ok": failures.is_empty(),
            "kind": manifest.map(|m| m.kind.as_str()),
            "subject": manifest.map(|m| m.subject.as_str()),
            "server_key": manifest.map(|m| m.server_key.as_str()),
            "key_given": args.key.is_some(),
            "passed": passed,
            "failure": failures.first(),
            "failures": failures,
        });
        emit(&(serde_json::to_string_pretty(&out)? + "\n"))?;
    } else {
        let mut out = String::new();
        for check in checks {
            match check {
                Ok(passed) => out += &format!("ok    {passed}\n"),
                Err(finding) => out += &format!("FAIL  {finding}\n"),
            }
        }
        out += verdict;
        out += "\n";
        emit(&out)?;
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(INVALID)
    })
}
