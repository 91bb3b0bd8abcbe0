//! A throwaway PostgreSQL cluster for the tests: Debian's postgresql-15,
//! initialised in a temporary directory and started on a free port, once
//! per test binary; each test gets a database of its own.
//!
//! The tests run as root here, and PostgreSQL refuses to: the cluster is
//! made and run as `nobody` (through `runuser`). A shell kept alive by a
//! pipe from this process stops the server and removes the directory when
//! the test binary exits, however it exits.
//!
//! Without the binaries, the PostgreSQL cases are skipped with a note, or
//! fail with a clear message when `CARCASSONNE_PG_TESTS=1` (CI sets it).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

const BIN: &str = "/usr/lib/postgresql/15/bin";
const REQUIRED: &str = "CARCASSONNE_PG_TESTS";

pub struct Cluster {
    port: u16,
    /// The watchdog shell; its stdin closes when this process exits.
    _guard: Mutex<Child>,
}

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
static DATABASES: AtomicU64 = AtomicU64::new(0);

fn required() -> bool {
    match std::env::var(REQUIRED) {
        Err(_) => false,
        Ok(value) if value.is_empty() || value == "0" => false,
        Ok(value) if value == "1" => true,
        Ok(other) => panic!("{REQUIRED} is {other:?}: set it to 1 to require the PostgreSQL tests, or 0"),
    }
}

/// The shared cluster, started on first use; `None` (after a note) when
/// PostgreSQL is not installed and not required.
pub fn cluster() -> Option<&'static Cluster> {
    CLUSTER
        .get_or_init(|| {
            if !Path::new(BIN).join("initdb").exists() {
                assert!(
                    !required(),
                    "{REQUIRED}=1 but PostgreSQL 15 is not installed ({BIN}/initdb is missing): \
                     apt-get install postgresql-15"
                );
                eprintln!("note: {BIN}/initdb is missing: the PostgreSQL store tests are skipped");
                return None;
            }
            Some(start())
        })
        .as_ref()
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn start() -> Cluster {
    let dir = tempfile::Builder::new()
        .prefix("carcassonne-pg-")
        .tempdir()
        .unwrap()
        .keep();
    let data = dir.join("data");
    let root = is_root();
    if root {
        let status = Command::new("chown")
            .args(["nobody:nogroup", dir.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(status.success(), "chown of {} failed", dir.display());
    }
    let port = free_port();
    let script = format!(
        r#"set -e
"{BIN}/initdb" -D "{data}" -U postgres -A trust -E UTF8 --no-locale >"{dir}/initdb.log" 2>&1
"{BIN}/pg_ctl" -D "{data}" -l "{dir}/server.log" -w -t 60 \
  -o "-p {port} -c listen_addresses=127.0.0.1 -k {dir} -c max_connections=400 -c shared_buffers=16MB" start >/dev/null
echo started
read _ || true
"{BIN}/pg_ctl" -D "{data}" -m immediate stop >/dev/null 2>&1 || true
rm -rf "{dir}"
"#,
        data = data.display(),
        dir = dir.display(),
    );
    let mut command = if root {
        let mut command = Command::new("runuser");
        command.args(["-u", "nobody", "--", "sh", "-c", &script]);
        command
    } else {
        let mut command = Command::new("sh");
        command.args(["-c", &script]);
        command
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    if line.trim() != "started" {
        let log = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        panic!(
            "the test PostgreSQL cluster did not start:\n{}\n{}",
            log("initdb.log"),
            log("server.log")
        );
    }
    Cluster {
        port,
        _guard: Mutex::new(child),
    }
}

impl Cluster {
    fn url(&self, database: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname={database}",
            self.port
        )
    }

    /// A new, empty database; its connection string.
    pub fn database(&self) -> String {
        let name = format!("test_{}", DATABASES.fetch_add(1, Ordering::SeqCst));
        let mut admin = postgres::Client::connect(&self.url("postgres"), postgres::NoTls).unwrap();
        admin.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(&name)
    }

    /// A superuser connection to the server, for what tests do behind the
    /// store's back.
    pub fn admin(&self, url: &str) -> postgres::Client {
        postgres::Client::connect(url, postgres::NoTls).unwrap()
    }
}
