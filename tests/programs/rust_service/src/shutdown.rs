//! `until-sigterm`: once the load is served, the service stays up until
//! SIGTERM and then shuts down gracefully, as a service under a supervisor
//! does. tokio's signal handling (signal-hook-registry) calls the handler it
//! replaced, so this is a real program whose SIGTERM the preload's own
//! handler must not turn into a kill (tests/integration/test_rust_service.py).
use std::io::{self, Write};

use tokio::signal::unix::{signal, SignalKind};

/// Says it is ready on stdout, waits for SIGTERM, and says it is shutting down.
pub async fn wait_for_sigterm() -> io::Result<()> {
    let mut terminate = signal(SignalKind::terminate())?;
    println!("ready: waiting for SIGTERM");
    io::stdout().flush()?;
    terminate.recv().await;
    println!("SIGTERM: shutting down gracefully");
    Ok(())
}
