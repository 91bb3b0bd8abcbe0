//! The server binary as a child process, for what only a process of its
//! own measures (its memory and its CPU time), and for several server
//! nodes on one PostgreSQL database.

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The server binary as a child process, killed when dropped.
pub struct ChildServer {
    child: Child,
    pub addr: SocketAddr,
    args: Vec<String>,
    dir: tempfile::TempDir,
}

impl ChildServer {
    /// `serve` on the sled store in a temporary directory.
    pub fn start() -> ChildServer {
        ChildServer::start_with(&[])
    }

    /// `serve` with `args` besides its address and data directory:
    /// `["--store", url]` makes it a node on that PostgreSQL database.
    pub fn start_with(args: &[&str]) -> ChildServer {
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
        let (child, addr) = spawn(&dir, &args);
        ChildServer {
            child,
            addr,
            args,
            dir,
        }
    }

    /// Its data directory (the sled store, the key).
    pub fn data_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("data")
    }

    /// SIGKILL, then a new server on the same data directory: how long it
    /// took from the start of the new process to its first line (listening,
    /// once the store is open and the clocks resumed).
    pub fn kill_and_restart(&mut self) -> Duration {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let started = std::time::Instant::now();
        let (child, addr) = spawn(&self.dir, &self.args);
        let took = started.elapsed();
        (self.child, self.addr) = (child, addr);
        took
    }

    /// VmRSS in bytes.
    pub fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        let kib: u64 = line
            .trim_start_matches("VmRSS:")
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .unwrap();
        kib * 1024
    }

    /// The CPU time the process has used, user and system, in
    /// milliseconds (`/proc/<pid>/stat`, in clock ticks).
    pub fn cpu_millis(&self) -> f64 {
        let fields = stat_fields(self.child.id()).unwrap();
        // utime and stime are the 14th and 15th fields of the line, the
        // 12th and 13th after the name.
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        ticks_millis(ticks)
    }

    /// VmRSS once it has stopped moving (the server's tasks have settled).
    pub async fn settled_rss(&self) -> u64 {
        let mut last = self.rss();
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = self.rss();
            if now == last {
                return now;
            }
            last = now;
        }
        last
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fields of `/proc/<pid>/stat` after the command name (the first
/// is the state, field 3 of proc(5)); `None` once the process is gone.
pub fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: the fields that follow come after
    // its closing parenthesis.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split(' ').map(str::to_owned).collect())
}

/// Clock ticks (of `/proc`) as milliseconds.
pub fn ticks_millis(ticks: u64) -> f64 {
    static PER_SECOND: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    ticks as f64 * 1000.0 / *PER_SECOND.get_or_init(clock_ticks_per_second)
}

/// The kernel's clock ticks per second, as `getconf CLK_TCK` says (100 on
/// every usual Linux).
fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

/// `carcassonne serve` on `dir`'s data directory, a free port and `args`;
/// returns once it says where it listens. Its log goes to `server.log`
/// in `dir`.
fn spawn(dir: &tempfile::TempDir, args: &[String]) -> (Child, SocketAddr) {
    let log_path = dir.path().join("server.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_carcassonne"));
    // The server's defaults, not the caller's settings: an exported
    // CARCASSONNE_STORE would put the sled baseline on PostgreSQL.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CARCASSONNE_") {
            command.env_remove(name);
        }
    }
    let mut child = command
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| {
            panic!(
                "the server did not start (first line {line:?}); its log:\n{}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            )
        })
        .parse()
        .unwrap();
    (child, addr)
}
