//! The stdio transport with one addition to the SDK's: a line that is not JSON at all gets a
//! JSON-RPC parse error (-32700) instead of silence, so a client never waits on it. Lines that
//! are JSON go to the SDK unchanged (it answers invalid requests itself). One task owns stdout
//! and writes whole lines only, so the two sources never interleave.

use rmcp::{ServerHandler, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::ServeError;

/// Room for one burst of messages between the pumps and the SDK.
const PIPE_BYTES: usize = 1 << 16;

/// The answer to a line that does not parse as JSON.
fn parse_error(why: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {why}")},
    })
    .to_string()
}

/// Serves `server` on the process's stdin and stdout until the client closes stdin.
pub(crate) async fn serve<S: ServerHandler>(server: S) -> Result<(), ServeError> {
    serve_on(server, tokio::io::stdin(), tokio::io::stdout()).await
}

async fn serve_on<S: ServerHandler>(
    server: S,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    mut output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
) -> Result<(), ServeError> {
    let (to_server, server_reads) = tokio::io::duplex(PIPE_BYTES);
    let (server_writes, from_server) = tokio::io::duplex(PIPE_BYTES);
    let (errors_tx, mut errors_rx) = mpsc::unbounded_channel::<String>();

    let reader = tokio::spawn(async move {
        let mut to_server = to_server;
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(text) {
                tracing::info!(error = %e, "MCP client sent a line that is not JSON");
                let _ = errors_tx.send(parse_error(&e.to_string()));
                continue;
            }
            if to_server.write_all(text).await.is_err() || to_server.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
        // Dropping the pipe tells the SDK the client is gone.
    });

    let writer = tokio::spawn(async move {
        let mut from_server = BufReader::new(from_server);
        let mut line = Vec::new();
        let mut errors_open = true;
        loop {
            tokio::select! {
                read = from_server.read_until(b'\n', &mut line) => {
                    match read {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                                break;
                            }
                            line.clear();
                        }
                    }
                }
                error = errors_rx.recv(), if errors_open => match error {
                    Some(text) => {
                        let framed = format!("{text}\n");
                        if output.write_all(framed.as_bytes()).await.is_err() || output.flush().await.is_err() {
                            break;
                        }
                    }
                    None => errors_open = false,
                },
            }
        }
    });

    let running = server.serve((server_reads, server_writes)).await?;
    let reason = running.waiting().await?;
    tracing::debug!(?reason, "MCP client went away");
    reader.abort();
    // The SDK dropped its end of the pipe: the writer drains what is left and stops.
    let _ = writer.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_are_json_rpc() {
        let v: serde_json::Value = serde_json::from_str(&parse_error("x")).unwrap();
        assert_eq!(v["error"]["code"], -32700);
        assert!(v["id"].is_null());
    }
}
