//! `drive-worker`: the job farm's worker.
//!
//! - `drive-worker work` claims jobs from the job rows (by lane and account, the lanes and job
//!   types it is told to take) and supervises each in a child process of its own; it also
//!   queues again the jobs whose worker died and runs the scheduled sweep. Run as many as you
//!   like, on as many machines; SIGTERM drains it.
//! - `drive-worker run-job` is that child: started with no credential, it reads one claimed
//!   job from stdin, runs it (asking its supervisor for whatever needs a key) and exits. It
//!   is not meant to be started by hand.

mod job_process;
mod protocol;
mod supervisor;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "drive-worker", version, about = "Drive's job farm worker")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Take jobs until stopped (SIGTERM or Ctrl-C: running jobs finish or are handed back).
    Work,
    /// Run one claimed job handed over on stdin (the supervisor starts this; not for use by
    /// hand).
    #[command(hide = true)]
    RunJob,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DRIVE_LOG").unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Work => {
            let worked = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(anyhow::Error::from)
                .and_then(|runtime| runtime.block_on(supervisor::farm::work()));
            match worked {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("the worker stopped: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
        // A job's work is blocking from end to end: no runtime.
        Command::RunJob => job_process::run::run_job(),
    }
}
