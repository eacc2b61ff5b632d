//! The server half: accepts a known number of connections and answers each
//! `PUT <key>` line with one `OK …` line, caching every key it is sent.
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use crate::cache::{cache_insert, Cache};
use crate::Stats;

/// Per-connection state, boxed in new_session (one Box per connection).
pub struct Session {
    id: usize,
    requests: u64,
}

/// Serves exactly `connections` clients, then returns once all have closed.
pub async fn serve(
    listener: TcpListener,
    connections: usize,
    cache: Cache,
    stats: Arc<Stats>,
) -> io::Result<()> {
    let mut handlers = Vec::with_capacity(connections);
    for id in 0..connections {
        let (stream, _) = listener.accept().await?;
        let session = new_session(id);
        let handler = handle_connection(stream, session, Arc::clone(&cache), Arc::clone(&stats));
        handlers.push(tokio::spawn(handler));
    }
    for handler in handlers {
        handler.await??;
    }
    Ok(())
}

#[inline(never)]
fn new_session(id: usize) -> Box<Session> {
    Box::new(Session { id, requests: 0 })
}

async fn handle_connection(
    stream: TcpStream,
    mut session: Box<Session>,
    cache: Cache,
    stats: Arc<Stats>,
) -> io::Result<()> {
    let (reader, mut writer) = stream.into_split();
    let mut lines = BufReader::new(reader).lines();
    while let Some(line) = lines.next_line().await? {
        let key = parse_key(&line).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("bad request {:?}", line))
        })?;
        let fill = b'a' + session.id as u8;
        let entries = cache_insert(&cache, key, fill);
        session.requests += 1;
        stats.served.fetch_add(1, Ordering::Relaxed);
        let response = build_response(&session, &line, entries);
        writer.write_all(response.as_bytes()).await?;
    }
    Ok(())
}

/// The key of a `PUT <key>` line, as an owned String the cache keeps.
#[inline(never)]
fn parse_key(line: &str) -> Option<String> {
    line.strip_prefix("PUT ").map(str::to_string)
}

/// Per-request churn: a handful of short-lived Strings and a Vec, all freed
/// before the next request.
#[inline(never)]
fn build_response(session: &Session, request: &str, entries: usize) -> String {
    let words: Vec<String> = request.split(' ').map(str::to_lowercase).collect();
    let fields = vec![
        "OK".to_string(),
        words.last().cloned().unwrap_or_default(),
        format!("session={}/{}", session.id, session.requests),
        entries.to_string(),
    ];
    let mut response = fields.join(" ");
    response.push('\n');
    response
}
