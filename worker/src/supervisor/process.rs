//! The job processes a worker starts: each `drive-worker run-job`, started confined by
//! [`drive_confine::command`] (an empty environment, its memory and file sizes limited, narrowed
//! before it runs anything).
//! One is kept started ahead (the spare), waiting for a job, so a job does not wait for a
//! process.

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

use crate::protocol::{EXIT_RETRY, Start};

pub struct JobProcesses {
    memory_limit: u64,
    disk_limit: u64,
    /// A process started ahead, waiting on stdin for the next job this worker claims.
    spare: Mutex<Option<Child>>,
}

impl JobProcesses {
    pub fn new(memory_limit: u64, disk_limit: u64) -> JobProcesses {
        JobProcesses {
            memory_limit,
            disk_limit,
            spare: Mutex::new(None),
        }
    }

    /// The process that runs the job: the spare, or a new one when there is none or it died.
    pub async fn start(&self, start: &Start) -> Result<Child> {
        let id = start.job.id;
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut child) = spare {
            match hand_over(&mut child, start).await {
                Ok(()) => return Ok(child),
                Err(e) => tracing::warn!(job.id = %id, "the spare job process was gone ({e}); starting one"),
            }
        }
        let mut child = self.spawn()?;
        // Should the job not go through, the process has ended: its exit status says why.
        let _ = hand_over(&mut child, start).await;
        Ok(child)
    }

    /// Starts a spare job process unless a live one is waiting.
    pub fn refill_spare(&self) {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        if spare
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
        {
            return;
        }
        *spare = self
            .spawn()
            .inspect_err(|e| tracing::warn!("starting a spare job process failed: {e:#}"))
            .ok();
    }

    fn spawn(&self) -> Result<Child> {
        let limits = drive_confine::Limits {
            memory: self.memory_limit,
            file_size: self.disk_limit,
            // The supervisor watches the job's time limit (wall time, across attempts).
            cpu_seconds: None,
        };
        let mut command = Command::from(drive_confine::command(std::env::current_exe()?, limits));
        command
            .arg("run-job")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        command.spawn().context("starting the job's process")
    }
}

/// Writes the job's start to a job process's stdin, where its answers follow.
async fn hand_over(child: &mut Child, start: &Start) -> std::io::Result<()> {
    let stdin = child
        .stdin
        .as_mut()
        .ok_or_else(|| std::io::Error::other("its stdin was taken"))?;
    let mut line = serde_json::to_string(start).map_err(std::io::Error::other)?;
    line.push('\n');
    stdin.write_all(line.as_bytes()).await?;
    stdin.flush().await
}

pub async fn kill(child: &mut Child) {
    let _ = child.kill().await;
}

/// How long a job's process may take to exit once it has ended its job.
const LAST_WORDS: Duration = Duration::from_secs(10);

/// Waits for a process that has ended its job to exit, and kills it past [`LAST_WORDS`].
pub async fn last_words(child: &mut Child) -> std::io::Result<ExitStatus> {
    match tokio::time::timeout(LAST_WORDS, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            kill(child).await;
            child.wait().await
        }
    }
}

/// Why a job's process ended without ending the job, in words for the job's `error`.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (_, Some(libc::SIGKILL)) => "the job's process was killed (out of memory?)".to_string(),
        (_, Some(libc::SIGXFSZ)) => "the job wrote a file larger than its disk limit".to_string(),
        (_, Some(libc::SIGABRT)) => {
            "the job's process aborted (it may have run out of its memory limit)".to_string()
        }
        (_, Some(signal)) => format!("the job's process crashed (signal {signal})"),
        (Some(EXIT_RETRY), _) => "the job failed on the server side too many times".to_string(),
        (code, _) => format!("the job's process failed (exit code {code:?})"),
    }
}
