//! The agent's local default model (`drive-llm`) for a test: the real binary on the model the
//! scripts installed, on a free loopback port, stopped by its PID when the test ends.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::bin;

pub struct LocalModel {
    /// The base the workers are given, like `http://127.0.0.1:41234/v1`.
    pub url: String,
    child: Child,
}

impl LocalModel {
    /// Starts it and waits until the model is loaded and it listens.
    pub async fn start() -> LocalModel {
        let mut child = Command::new(bin("drive-llm"))
            .env("DRIVE_LLM_LISTEN", "127.0.0.1:0")
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start drive-llm");
        let stdout = child.stdout.take().expect("stdout");
        let listening = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(stdout).read_line(&mut line).ok();
            line.trim().strip_prefix("listening on ").map(str::to_string)
        });
        let base = tokio::time::timeout(Duration::from_secs(120), listening)
            .await
            .ok()
            .and_then(|r| r.ok().flatten());
        let Some(base) = base else {
            let _ = child.kill();
            panic!("drive-llm did not start (is the model installed? scripts/test installs it)");
        };
        LocalModel {
            url: format!("{base}/v1"),
            child,
        }
    }
}

impl Drop for LocalModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
