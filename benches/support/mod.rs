//! What the benchmark binaries share: settings from the environment, a
//! small generator for choices, connections to a server, and the verdict
//! on a target.

// Each bench uses some of these.
#[allow(dead_code)]
pub mod child;
#[allow(dead_code)]
pub mod games;
#[allow(dead_code)]
pub mod stats;
#[allow(dead_code)]
pub mod verdict;

use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

/// A setting from the environment variable `name`, or `default`.
pub fn env<T: FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a valid value")),
        Err(_) => default,
    }
}

/// The store durability named by the environment variable `name`
/// (`flush`, `written` or `none`; `flush` if unset).
#[allow(dead_code)]
pub fn durability(name: &str) -> carcassonne_store::Durability {
    use carcassonne_store::Durability;
    match env(name, "flush".to_owned()).as_str() {
        "flush" => Durability::Flush,
        "written" => Durability::Written,
        "none" => Durability::None,
        other => panic!("{name}={other:?}: expected flush, written or none"),
    }
}

/// The runtime the benches run in: `threads` workers, and as few blocking
/// threads as the server binary allows itself.
pub fn runtime(threads: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(carcassonne::server::BLOCKING_THREADS)
        .worker_threads(threads)
        .enable_all()
        .build()
        .unwrap()
}

/// splitmix64: enough randomness to choose actions, with no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A game seed as the API takes it: 64 hex digits.
    pub fn seed(&mut self) -> String {
        (0..4)
            .flat_map(|_| self.next().to_le_bytes())
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// `connections` separate connections to the server at `addr`, retried
/// while it starts.
pub async fn connect(addr: SocketAddr, connections: usize) -> Vec<Channel> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .tcp_nodelay(true);
    let mut channels = Vec::with_capacity(connections);
    for _ in 0..connections {
        // Each `connect` opens a connection of its own.
        let mut attempts = 0;
        let channel = loop {
            match endpoint.connect().await {
                Ok(channel) => break channel,
                Err(_) if attempts < 50 => {
                    attempts += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(error) => panic!("the server at {addr} does not answer: {error}"),
            }
        };
        channels.push(channel);
    }
    channels
}

// The allocator the `carcassonne` binary ships with, so that the in-process
// server is measured as it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
