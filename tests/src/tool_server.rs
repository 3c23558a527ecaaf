//! `drive-mcp http` started for a test app, on a port of its own, for the tool server's tests
//! and its benchmark.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::{APP_ID, TestApp, bin};

/// `drive-mcp http` on a port of its own; stopped when dropped.
pub struct HttpToolServer {
    _child: Child,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpToolServer {
    pub async fn start(app: &TestApp) -> HttpToolServer {
        HttpToolServer::start_through(&app.url).await
    }

    /// One that reaches the drive at `drive_url` (another way in than its site URL).
    pub async fn start_through(drive_url: &str) -> HttpToolServer {
        let mut child = Command::new(bin("drive-mcp"))
            .args([
                "http",
                "--listen",
                "127.0.0.1:0",
                "--url",
                drive_url,
                "--app",
                APP_ID,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start drive-mcp http");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.expect("read drive-mcp's stderr") {
                if let Some(url) = line.strip_prefix("drive-mcp: serving MCP at ") {
                    return url.to_string();
                }
            }
            panic!("drive-mcp http ended before serving");
        })
        .await
        .expect("drive-mcp http did not start within 30 s");
        // Its log goes on being read, so the pipe never fills.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        HttpToolServer { _child: child, url }
    }
}
