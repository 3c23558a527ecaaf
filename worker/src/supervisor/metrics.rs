//! A worker's Prometheus metrics at `GET /metrics` on `DRIVE_WORKER_METRICS_LISTEN` (off when
//! unset): its slots busy and free, whether it is draining, how long the jobs it started had
//! waited (by lane), the jobs it is running, the jobs it saw to their end by type and state with
//! the seconds they took, the store calls it made that failed, the local models it loaded; and
//! the whole farm's lanes from the database (`drive_farm_*`, the same series the API serves),
//! which an autoscaler reads.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use drive_core::db::PgPool;
use drive_core::db::jobs::{self, JobRow, LaneGauge};
use drive_core::job::Lane;
use drive_core::metrics::Histogram;

/// A job type and the state it ended in.
type Outcome = (&'static str, &'static str);

/// Upper bounds of the wait buckets, in seconds.
const WAIT_BUCKETS: [f64; 12] = [
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0,
];

#[derive(Default)]
pub struct WorkerMetrics {
    running: Arc<AtomicI64>,
    /// Of the running jobs, those held still (crate::supervisor::pauses), their slots lent.
    held: AtomicI64,
    draining: AtomicBool,
    /// How long the jobs this worker started had waited, by lane.
    waits: Mutex<BTreeMap<Lane, Histogram<{ WAIT_BUCKETS.len() }>>>,
    /// Jobs and seconds, by outcome.
    ended: Mutex<BTreeMap<Outcome, (u64, f64)>>,
    /// Times each local model was loaded ([`crate::supervisor::local_models`]): once a worker.
    model_loads: Mutex<BTreeMap<&'static str, u64>>,
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

    pub fn set_held(&self, held: usize) {
        self.held.store(held as i64, Ordering::Relaxed);
    }

    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// A job of `lane` started for the first time after `seconds` waiting.
    pub fn waited(&self, lane: Lane, seconds: f64) {
        let mut waits = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        waits
            .entry(lane)
            .or_insert_with(|| Histogram::new(&WAIT_BUCKETS))
            .observe(seconds);
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

    /// The local model `name` was loaded.
    pub fn model_loaded(&self, name: &'static str) {
        let mut loads = self.model_loads.lock().unwrap_or_else(|e| e.into_inner());
        *loads.entry(name).or_default() += 1;
    }

    /// Jobs this worker is running: its slots in use (a slot held only while looking for a job
    /// is not).
    pub fn running_now(&self) -> usize {
        self.running.load(Ordering::Relaxed).max(0) as usize
    }

    /// The worker's own series, in the text format, of a worker with `slots`.
    /// This worker's series, for `slots` slots.
    pub fn render(&self, slots: usize) -> String {
        let held = self.held.load(Ordering::Relaxed).max(0);
        let busy = self.running_now().saturating_sub(held as usize).min(slots);
        let free = slots - busy;
        let mut out = String::new();
        let gauges = [
            (
                "drive_worker_jobs_running",
                "Jobs this worker is running.",
                self.running.load(Ordering::Relaxed),
            ),
            (
                "drive_worker_jobs_held",
                "Bulk jobs this worker holds still while a job of another lane runs in their slot.",
                held,
            ),
            (
                "drive_worker_slots_busy",
                "This worker's job slots in use.",
                busy as i64,
            ),
            (
                "drive_worker_slots_free",
                "This worker's job slots free.",
                free as i64,
            ),
            (
                "drive_worker_draining",
                "1 while this worker drains (SIGTERM): it takes no new job.",
                i64::from(self.draining.load(Ordering::Relaxed)),
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}");
        }
        out.push_str(
            "# HELP drive_worker_job_wait_seconds How long the jobs this worker started had waited, by lane.\n# TYPE drive_worker_job_wait_seconds histogram\n",
        );
        let waits = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        for (lane, series) in waits.iter() {
            let labels = format!("lane=\"{}\"", lane.as_str());
            series.write(&mut out, "drive_worker_job_wait_seconds", &labels);
        }
        drop(waits);
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
        drop(ended);
        out.push_str("# HELP drive_worker_model_loads_total Times this worker loaded each local model.\n");
        out.push_str("# TYPE drive_worker_model_loads_total counter\n");
        let loads = self.model_loads.lock().unwrap_or_else(|e| e.into_inner());
        for (model, n) in loads.iter() {
            let _ = writeln!(out, "drive_worker_model_loads_total{{model=\"{model}\"}} {n}");
        }
        out
    }
}

/// Serves `/metrics` on `listener`: this worker's series (`metrics`, of `slots` slots) and the
/// farm's lanes, read from `db` at each scrape.
pub async fn serve(listener: tokio::net::TcpListener, db: PgPool, metrics: Arc<WorkerMetrics>, slots: usize) {
    let app = axum::Router::new()
        .route("/metrics", axum::routing::get(scrape))
        .with_state(Page { db, metrics, slots });
    if let Err(e) = axum::serve(listener, app).await {
        tracing::warn!("the metrics server stopped: {e}");
    }
}

#[derive(Clone)]
struct Page {
    db: PgPool,
    metrics: Arc<WorkerMetrics>,
    slots: usize,
}

async fn scrape(State(page): State<Page>) -> axum::response::Response {
    match jobs::gauges(&page.db).await {
        Ok(gauges) => {
            let mut text = page.metrics.render(page.slots);
            text.push_str(&LaneGauge::render(&gauges));
            ([("content-type", "text/plain; version=0.0.4")], text).into_response()
        }
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the database did not answer: {e}\n"),
        )
            .into_response(),
    }
}
