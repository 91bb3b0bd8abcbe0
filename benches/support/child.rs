//! The server binary as a child process, for what only a process of its
//! own measures: its memory and its CPU time.

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The server binary as a child process, killed when dropped.
pub struct ChildServer {
    child: Child,
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl ChildServer {
    pub fn start() -> ChildServer {
        let dir = tempfile::tempdir().unwrap();
        let (child, addr) = spawn(&dir);
        ChildServer {
            child,
            addr,
            _dir: dir,
        }
    }

    /// SIGKILL, then a new server on the same data directory: how long it
    /// took from the start of the new process to its first line (listening,
    /// once the store is open and the clocks resumed).
    pub fn kill_and_restart(&mut self) -> Duration {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let started = std::time::Instant::now();
        let (child, addr) = spawn(&self._dir);
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
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // The command name may hold spaces: the fields that follow come
        // after its closing parenthesis.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        // utime and stime are the 14th and 15th fields of the line, the
        // 12th and 13th after the name.
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        ticks as f64 * 1000.0 / clock_ticks_per_second()
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

/// `carcassonne serve` on `dir`'s data directory and a free port; returns
/// once it says where it listens.
fn spawn(dir: &tempfile::TempDir) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}
