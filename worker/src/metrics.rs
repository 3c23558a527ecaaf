//! A worker's Prometheus metrics at `GET /metrics` on `DRIVE_WORKER_METRICS_LISTEN` (off when
//! unset): the jobs it is running, the jobs it saw to their end by type and state with the
//! seconds they took, the jobs queued in the whole farm (from the database, the queue's source
//! of truth), the messages waiting in Redis (the queue's depth), and the store calls it made
//! that failed.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use drive_core::db::jobs::JobRow;

use crate::farm::Farm;

/// A job type and the state it ended in.
type Outcome = (&'static str, &'static str);

#[derive(Default)]
pub struct WorkerMetrics {
    running: Arc<AtomicI64>,
    /// Jobs and seconds, by outcome.
    ended: Mutex<BTreeMap<Outcome, (u64, f64)>>,
}

/// Counts a job as running for as long as it is held.
pub struct Running(Arc<AtomicI64>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl WorkerMetrics {
    pub fn running(&self) -> Running {
        self.running.fetch_add(1, Ordering::Relaxed);
        Running(self.running.clone())
    }

    /// A job this worker ran has ended.
    pub fn ended(&self, job: &JobRow) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        let entry = ended
            .entry((job.job_type.as_str(), job.state.as_str()))
            .or_default();
        entry.0 += 1;
        entry.1 += job.seconds.unwrap_or(0.0);
    }

    /// The worker's own series, in the text format.
    pub fn render(&self, queued: i64, messages: Option<i64>) -> String {
        let mut out = String::new();
        out.push_str("# HELP drive_worker_jobs_running Jobs this worker is running.\n");
        out.push_str("# TYPE drive_worker_jobs_running gauge\n");
        let _ = writeln!(
            out,
            "drive_worker_jobs_running {}",
            self.running.load(Ordering::Relaxed)
        );
        out.push_str(
            "# HELP drive_jobs_queued Jobs waiting in the farm's queue.\n# TYPE drive_jobs_queued gauge\n",
        );
        let _ = writeln!(out, "drive_jobs_queued {queued}");
        if let Some(messages) = messages {
            out.push_str(
                "# HELP drive_queue_messages Messages waiting in Redis for a worker (the queue's depth).\n# TYPE drive_queue_messages gauge\n",
            );
            let _ = writeln!(out, "drive_queue_messages {messages}");
        }
        out.push_str(
            "# HELP drive_store_errors_total Calls to the object store this worker made that failed.\n# TYPE drive_store_errors_total counter\n",
        );
        let _ = writeln!(
            out,
            "drive_store_errors_total {}",
            drive_core::storage::failures()
        );
        let ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        out.push_str("# HELP drive_worker_jobs_ended_total Jobs this worker saw end, by type and state.\n");
        out.push_str("# TYPE drive_worker_jobs_ended_total counter\n");
        for ((job_type, state), (n, _)) in ended.iter() {
            let _ = writeln!(
                out,
                "drive_worker_jobs_ended_total{{type=\"{job_type}\",state=\"{state}\"}} {n}"
            );
        }
        out.push_str("# HELP drive_worker_job_seconds_total Seconds those jobs took, by type and state.\n");
        out.push_str("# TYPE drive_worker_job_seconds_total counter\n");
        for ((job_type, state), (_, seconds)) in ended.iter() {
            let _ = writeln!(
                out,
                "drive_worker_job_seconds_total{{type=\"{job_type}\",state=\"{state}\"}} {seconds}"
            );
        }
        out
    }
}

pub async fn serve(listener: tokio::net::TcpListener, farm: Arc<Farm>) {
    let app = axum::Router::new()
        .route("/metrics", axum::routing::get(scrape))
        .with_state(farm);
    if let Err(e) = axum::serve(listener, app).await {
        tracing::warn!("the metrics server stopped: {e}");
    }
}

async fn scrape(State(farm): State<Arc<Farm>>) -> axum::response::Response {
    match farm.metrics_text().await {
        Ok(text) => ([("content-type", "text/plain; version=0.0.4")], text).into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the database did not answer: {e}\n"),
        )
            .into_response(),
    }
}
