//! `backup` and `restore`: the operator's copies of the event store;
//! `migrate`: a sled store copied into PostgreSQL.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use carcassonne::server::PostgresUrl;
use carcassonne::server::admin;
use carcassonne_store::{BackupReport, EventStore as _, PgStore, SledStore, StoreConfig, check_backup};

#[derive(clap::Args)]
pub struct BackupArgs {
    /// The data directory of the store (of a running server, or not).
    #[arg(long, env = "CARCASSONNE_DATA", default_value = "./data")]
    data: PathBuf,
    /// The backup file to write (replaced only once the backup is whole).
    #[arg(long)]
    to: PathBuf,
    /// A server's PostgreSQL store: refused, with how to back it up
    /// (PostgreSQL's own tools).
    #[arg(long, env = "CARCASSONNE_STORE", value_name = "POSTGRES_URL")]
    store: Option<PostgresUrl>,
}

#[derive(clap::Args)]
pub struct MigrateArgs {
    /// The sled store's data directory (of a stopped server).
    #[arg(long)]
    from: PathBuf,
    /// The PostgreSQL database to copy into: a connection string
    /// (`postgres://USER@HOST/DB` or `host=... dbname=...`). It must hold
    /// no events; its schema is made if missing.
    #[arg(long, value_name = "POSTGRES_URL")]
    to: PostgresUrl,
}

#[derive(clap::Args)]
pub struct RestoreArgs {
    /// The backup file.
    #[arg(long)]
    from: PathBuf,
    /// The new data directory (missing or empty).
    #[arg(long)]
    data: PathBuf,
    /// Create the restored store compressed (zstd).
    #[arg(long)]
    compression: bool,
}

/// Writes a backup of every event acknowledged when it starts: from the
/// running server's admin socket if a server holds the directory, else
/// from the directory itself.
pub fn backup(args: &BackupArgs) -> anyhow::Result<ExitCode> {
    if args.store.is_some() {
        bail!(
            "backup copies a sled store; a PostgreSQL store is backed up with PostgreSQL's tools: \
             pg_dump --format=custom (a consistent copy of a running database), or base backups \
             with WAL archiving (pg_basebackup) for point-in-time recovery; see the README"
        );
    }
    let partial = partial_path(&args.to);
    let report = write_backup(&args.data, &partial).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    std::fs::rename(&partial, &args.to)
        .with_context(|| format!("renaming {} to {}", partial.display(), args.to.display()))?;
    writeln!(
        crate::stdout::lock(),
        "backed up {} events ({} appends, up to position {}) to {}: {} bytes",
        report.events,
        report.appends,
        report.position,
        args.to.display(),
        report.bytes
    )?;
    Ok(ExitCode::SUCCESS)
}

fn partial_path(to: &Path) -> PathBuf {
    let mut name = to.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    to.with_file_name(name)
}

/// Creates (or empties) the backup file, readable by its owner only: it
/// holds the seed of every running game.
fn create_private(to: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(to)?;
    // One left by an earlier run keeps its mode when opened.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

fn write_backup(data: &Path, to: &Path) -> anyhow::Result<BackupReport> {
    let mut out = BufWriter::new(create_private(to).with_context(|| format!("creating {}", to.display()))?);
    let socket = admin::socket_path(data);
    let report = match UnixStream::connect(&socket) {
        Ok(mut server) => {
            server
                .write_all(format!("{}\n", admin::BACKUP_COMMAND).as_bytes())
                .context("asking the server for a backup")?;
            // What the server sends is checked whole as it is written out.
            let mut copy = Tee {
                from: BufReader::with_capacity(256 << 10, server),
                to: &mut out,
            };
            check_backup(&mut copy)
                .with_context(|| format!("the backup from the server on {} is not whole", data.display()))?
        }
        Err(_) if !data.join("db").exists() => bail!("{} holds no event store", data.display()),
        Err(_) => {
            // No server: the store itself (opening fails if a server holds
            // the directory without a socket).
            // The log as it is: a backup grows nothing.
            let config = StoreConfig {
                log_capacity_bytes: std::fs::metadata(data.join("wal")).map_or(0, |m| m.len()),
                ..StoreConfig::default()
            };
            let store = SledStore::open(data, config).with_context(|| {
                format!(
                    "opening the store in {} (no server answers on {})",
                    data.display(),
                    socket.display()
                )
            })?;
            let report = store.backup(&mut out)?;
            store.close()?;
            report
        }
    };
    let file = out.into_inner().context("writing the backup")?;
    file.sync_all().context("syncing the backup")?;
    Ok(report)
}

/// Copies what is read to `to`.
struct Tee<'a, R> {
    from: R,
    to: &'a mut dyn Write,
}

impl<R: Read> Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.from.read(buf)?;
        self.to.write_all(&buf[..read])?;
        Ok(read)
    }
}

/// Restores a backup into a new directory and verifies every record.
pub fn restore(args: &RestoreArgs) -> anyhow::Result<ExitCode> {
    let file = File::open(&args.from).with_context(|| format!("opening {}", args.from.display()))?;
    let config = StoreConfig {
        compression: args.compression,
        ..StoreConfig::default()
    };
    let restored = SledStore::restore(&mut BufReader::with_capacity(256 << 10, file), &args.data, config)
        .with_context(|| format!("restoring {} into {}", args.from.display(), args.data.display()))?;
    let verified = &restored.verified;
    if !verified.is_ok() {
        for problem in &verified.problems {
            eprintln!("damaged: {problem}");
        }
        for (position, problem) in &verified.index_problems {
            eprintln!("damaged index at position {position}: {problem}");
        }
        return Ok(ExitCode::from(1));
    }
    writeln!(
        crate::stdout::lock(),
        "restored {} events of {} games (up to position {}) into {}; verified",
        verified.events,
        verified.games,
        restored.backup.position,
        args.data.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Copies every stream of a sled store into an empty PostgreSQL database:
/// the source verified whole first (every chain and the global index),
/// then copied in one transaction, every envelope checked again on the
/// way, then the copy verified. A database that holds any event is
/// refused and nothing is written.
pub fn migrate(args: &MigrateArgs) -> anyhow::Result<ExitCode> {
    if !args.from.join("db").exists() {
        bail!("{} holds no event store", args.from.display());
    }
    // The log as it is: a copy grows nothing.
    let config = StoreConfig {
        log_capacity_bytes: std::fs::metadata(args.from.join("wal")).map_or(0, |m| m.len()),
        ..StoreConfig::default()
    };
    let source = SledStore::open(&args.from, config).with_context(|| {
        format!(
            "opening the store in {} (stop the server that runs on it first)",
            args.from.display()
        )
    })?;
    let checked = source.verify_all().context("verifying the source")?;
    if !checked.is_ok() {
        for problem in &checked.problems {
            eprintln!("damaged: {problem}");
        }
        for (position, problem) in &checked.index_problems {
            eprintln!("damaged index at position {position}: {problem}");
        }
        bail!(
            "the store in {} is damaged: nothing was copied (restore a backup first)",
            args.from.display()
        );
    }
    let target =
        PgStore::open(args.to.as_str(), StoreConfig::default()).context("opening the PostgreSQL store")?;
    let copied = target.import_from(&source).context("copying into PostgreSQL")?;
    source.close().context("closing the source store")?;
    let verified = target.verify_all().context("verifying the copy")?;
    if !verified.is_ok() || verified.events != copied.events || verified.games != copied.streams {
        for problem in &verified.problems {
            eprintln!("damaged in the copy: {problem}");
        }
        bail!(
            "the copy does not verify: {} streams and {} events copied, {} and {} verified",
            copied.streams,
            copied.events,
            verified.games,
            verified.events
        );
    }
    writeln!(
        crate::stdout::lock(),
        "copied {} streams, {} events and {} request ids (up to position {}) from {} to PostgreSQL; verified",
        copied.streams,
        copied.events,
        copied.appends,
        copied.last_position,
        args.from.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
