//! A small tokio service whose allocations the memrec tests know in advance
//! (tests/integration/test_rust_service.py): a loopback TCP server and its
//! in-process clients, a cache that only grows and is leaked at exit on
//! purpose, per-request String churn, one Box per connection and one Arc.
//! The counts are exact whatever order the worker threads run in.
//! `rust_service until-sigterm` then stays up until SIGTERM (shutdown.rs).
mod cache;
mod client;
mod server;
mod shutdown;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;

pub const CONNECTIONS: usize = 4;
pub const REQUESTS_PER_CONNECTION: usize = 500;
const WORKER_THREADS: usize = 2;

/// Counters every connection handler shares.
pub struct Stats {
    pub served: AtomicU64,
}

/// The one Arc the tests look for by name: allocated once, freed at exit.
#[inline(never)]
fn new_stats() -> Arc<Stats> {
    Arc::new(Stats { served: AtomicU64::new(0) })
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .enable_io()
        .build()
        .expect("rust_service: cannot start the tokio runtime");
    let stats = new_stats();
    let cache = cache::new_cache();
    let until_sigterm = std::env::args().nth(1).as_deref() == Some("until-sigterm");
    let result = runtime.block_on(async {
        serve_and_load(Arc::clone(&stats), Arc::clone(&cache)).await?;
        if until_sigterm {
            shutdown::wait_for_sigterm().await?;
        }
        Ok::<(), io::Error>(())
    });
    // Joins the worker threads, so every handler's clone of `cache` is gone.
    drop(runtime);
    if let Err(error) = result {
        eprintln!("rust_service: {}", error);
        std::process::exit(1);
    }
    let entries = cache.lock().expect("cache lock poisoned").len();
    println!(
        "served {} requests, cache {} entries",
        stats.served.load(Ordering::Relaxed),
        entries
    );
    // The leak under test: a cache nobody evicts, still allocated at exit.
    std::mem::forget(cache);
}

/// Starts the server on an ephemeral loopback port, runs every client to the
/// end, then waits for the server to see each connection close.
async fn serve_and_load(stats: Arc<Stats>, cache: cache::Cache) -> io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let server = tokio::spawn(server::serve(listener, CONNECTIONS, cache, stats));
    let clients: Vec<_> = (0..CONNECTIONS)
        .map(|id| tokio::spawn(client::run(addr, id, REQUESTS_PER_CONNECTION)))
        .collect();
    for client in clients {
        client.await??;
    }
    server.await?
}
