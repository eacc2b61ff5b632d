//! The client half: one connection that sends `requests` PUT lines, waiting
//! for each answer before the next, so every request is served in order.
use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Keys are all the same length ("key-C-NNNN"), so what the cache keeps for
/// them has a known size.
pub async fn run(addr: SocketAddr, client: usize, requests: usize) -> io::Result<()> {
    let stream = TcpStream::connect(addr).await?;
    let (reader, mut writer) = stream.into_split();
    let mut replies = BufReader::new(reader).lines();
    for request in 0..requests {
        let line = format!("PUT key-{}-{:04}\n", client, request);
        writer.write_all(line.as_bytes()).await?;
        let reply = replies.next_line().await?.ok_or_else(|| {
            io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection early")
        })?;
        if !reply.starts_with("OK ") {
            let message = format!("unexpected reply {:?}", reply);
            return Err(io::Error::new(io::ErrorKind::InvalidData, message));
        }
    }
    Ok(())
}
